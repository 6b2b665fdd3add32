//! Witness cosignatures (C2SP `tlog-cosignature`, Ed25519 `cosignature/v1`, signature type
//! `0x04`): a cosigner's statement that, at a time, a checkpoint was the largest consistent
//! tree it had seen of that log.
//!
//! The signed message is `cosignature/v1\ntime <POSIX seconds>\n` followed by the
//! checkpoint's body; the signature line carries the key ID, the time as 8 big-endian bytes
//! and the 64-byte signature. The core reads no clock: the caller passes the time.

use std::fmt;

use ed25519_dalek::{Signer as _, SigningKey};

use super::checkpoint::Checkpoint;
use super::error::{invalid_checkpoint, TlogError};
use super::keys::{KeyKind, VerifierKey};
use super::note::NoteSignature;

/// The first line of the signed message.
pub const COSIGNATURE_V1_HEADER: &str = "cosignature/v1";

/// The latest time a cosignature may carry: 2^63 − 1 seconds (C2SP).
const MAX_TIME: u64 = i64::MAX as u64;

/// The message a `cosignature/v1` signs: the header line, the time line, then the checkpoint
/// body `checkpoint_text` (its note text, final newline included).
pub fn cosignature_message(checkpoint_text: &str, time: u64) -> String {
    format!("{COSIGNATURE_V1_HEADER}\ntime {time}\n{checkpoint_text}")
}

/// A witness's cosigning key with its name. `Debug` shows the name and key ID only.
#[derive(Clone)]
pub struct Cosigner {
    public: VerifierKey,
    key: SigningKey,
}

impl Cosigner {
    /// The cosigner `name` with `key`.
    pub fn new(name: &str, key: SigningKey) -> Result<Self, TlogError> {
        Ok(Cosigner {
            public: VerifierKey::new(name, KeyKind::CosignatureV1, key.verifying_key())?,
            key,
        })
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        self.public.name()
    }

    /// The key ID (over the name, `0x04` and the public key).
    pub fn key_id(&self) -> u32 {
        self.public.key_id()
    }

    /// The public half, for verifiers.
    pub fn verifier_key(&self) -> &VerifierKey {
        &self.public
    }

    /// The cosignature of `checkpoint` at `time` (POSIX seconds, at most 2^63 − 1), as a
    /// note signature line to add to the checkpoint's note.
    pub fn cosign(&self, checkpoint: &Checkpoint, time: u64) -> Result<NoteSignature, TlogError> {
        if time > MAX_TIME {
            return Err(invalid_checkpoint(
                "a cosignature's time is at most 2^63 - 1 seconds",
            ));
        }
        let message = cosignature_message(&checkpoint.to_text(), time);
        let signature = self.key.sign(message.as_bytes());
        let mut bytes = Vec::with_capacity(8 + 64);
        bytes.extend_from_slice(&time.to_be_bytes());
        bytes.extend_from_slice(&signature.to_bytes());
        NoteSignature::new(self.name(), self.key_id(), bytes)
    }
}

impl fmt::Debug for Cosigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cosigner({}+{:08x})", self.name(), self.key_id())
    }
}

/// The time of a cosignature (`signature`: the bytes after the key ID) by `key` over the note
/// text `text`, when it verifies.
pub(crate) fn verify_cosignature(key: &VerifierKey, text: &str, signature: &[u8]) -> Option<u64> {
    let (time, sig) = signature.split_first_chunk::<8>()?;
    let time = u64::from_be_bytes(*time);
    if time > MAX_TIME || sig.len() != 64 {
        return None;
    }
    key.verifies(cosignature_message(text, time).as_bytes(), sig)
        .then_some(time)
}
