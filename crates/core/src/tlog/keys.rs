//! Note keys (C2SP `signed-note`, `tlog-cosignature`): key names, key IDs, and
//! [`VerifierKey`], a public key with its name in the verifier-key text
//! `<name>+<8 hex digits of the key ID>+<base64(type ‖ public key)>`.
//!
//! Two Ed25519 signature types: `0x01`, the plain note signature a log signs its checkpoints
//! with (PROFILE §13), and `0x04`, the timestamped `cosignature/v1` of a witness. The key ID
//! is the first four bytes of SHA-256(name ‖ 0x0A ‖ type ‖ public key), big-endian.
//!
//! A key text or name that does not hold is `checkpoint_invalid`: the key an audit is given
//! cannot check the checkpoint.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};

use super::error::{invalid_checkpoint, TlogError};

/// Signature type of a plain Ed25519 note signature (C2SP `signed-note`).
pub const ED25519_TYPE: u8 = 0x01;

/// Signature type of an Ed25519 `cosignature/v1` (C2SP `tlog-cosignature`).
pub const COSIGNATURE_V1_TYPE: u8 = 0x04;

/// What a note key signs: the note text itself, or a timestamped cosignature of it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum KeyKind {
    /// Ed25519 over the note text (type `0x01`): a log's checkpoint key.
    Ed25519,
    /// Ed25519 `cosignature/v1` (type `0x04`): a witness's key.
    CosignatureV1,
}

impl KeyKind {
    /// The signature type byte.
    pub const fn type_byte(self) -> u8 {
        match self {
            KeyKind::Ed25519 => ED25519_TYPE,
            KeyKind::CosignatureV1 => COSIGNATURE_V1_TYPE,
        }
    }

    fn from_type_byte(byte: u8) -> Option<Self> {
        match byte {
            ED25519_TYPE => Some(KeyKind::Ed25519),
            COSIGNATURE_V1_TYPE => Some(KeyKind::CosignatureV1),
            _ => None,
        }
    }
}

/// Whether `name` may name a note key: non-empty, without `+`, white space (Unicode's
/// White_Space, as C2SP's "Unicode spaces") or control characters (which a note may not
/// hold). A `&str` is valid UTF-8 already.
pub fn is_valid_key_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c == '+' || c.is_whitespace() || c.is_control())
}

/// The key ID of a key: the first four bytes of SHA-256(name ‖ 0x0A ‖ type ‖ public key),
/// big-endian.
pub fn key_id(name: &str, type_byte: u8, public_key: &[u8]) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([b'\n', type_byte]);
    h.update(public_key);
    let [a, b, c, d, ..]: [u8; 32] = h.finalize().into();
    u32::from_be_bytes([a, b, c, d])
}

/// A named public note key of one [`KeyKind`], as in a verifier-key text.
#[derive(Clone, PartialEq, Eq)]
pub struct VerifierKey {
    name: String,
    id: u32,
    kind: KeyKind,
    key: VerifyingKey,
}

impl VerifierKey {
    /// The verifier key of `key` under `name`, for signatures of `kind`.
    pub fn new(name: &str, kind: KeyKind, key: VerifyingKey) -> Result<Self, TlogError> {
        if !is_valid_key_name(name) {
            return Err(invalid_checkpoint(format!(
                "{name:?} is not a key name (non-empty, no '+', spaces or control characters)"
            )));
        }
        Ok(VerifierKey {
            name: name.to_owned(),
            id: key_id(name, kind.type_byte(), key.as_bytes()),
            kind,
            key,
        })
    }

    /// Parses the verifier-key text `<name>+<8 lowercase hex digits>+<base64(type ‖ key)>`:
    /// a valid name, the key ID the name and key imply, a known type and a valid Ed25519
    /// public key.
    pub fn parse(text: &str) -> Result<Self, TlogError> {
        let bad = || invalid_checkpoint("malformed verifier key");
        let mut parts = text.splitn(3, '+');
        let (Some(name), Some(id_hex), Some(key64)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if !is_valid_key_name(name)
            || id_hex.len() != 8
            || !id_hex
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(bad());
        }
        let id = u32::from_str_radix(id_hex, 16).map_err(|_| bad())?;
        let raw = STANDARD.decode(key64).map_err(|_| bad())?;
        let Some((&type_byte, public)) = raw.split_first() else {
            return Err(bad());
        };
        if id != key_id(name, type_byte, public) {
            return Err(invalid_checkpoint(
                "the verifier key's ID does not match its name and key",
            ));
        }
        let kind = KeyKind::from_type_byte(type_byte)
            .ok_or_else(|| invalid_checkpoint("the verifier key has an unknown signature type"))?;
        let key = <[u8; 32]>::try_from(public)
            .ok()
            .and_then(|k| VerifyingKey::from_bytes(&k).ok())
            .ok_or_else(|| invalid_checkpoint("the verifier key is not an Ed25519 public key"))?;
        Ok(VerifierKey {
            name: name.to_owned(),
            id,
            kind,
            key,
        })
    }

    /// The key's name (for a log's checkpoint key, the log's origin).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn key_id(&self) -> u32 {
        self.id
    }

    /// What the key signs.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The Ed25519 public key.
    pub fn public_key(&self) -> &VerifyingKey {
        &self.key
    }

    /// Whether `signature` (the 64 bytes after the key ID and any timestamp) signs `message`.
    /// Strict RFC 8032 verification: canonical encodings, no small-order keys.
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(sig) = Signature::from_slice(signature) else {
            return false;
        };
        self.key.verify_strict(message, &sig).is_ok()
    }
}

impl fmt::Display for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut raw = Vec::with_capacity(33);
        raw.push(self.kind.type_byte());
        raw.extend_from_slice(self.key.as_bytes());
        write!(f, "{}+{:08x}+{}", self.name, self.id, STANDARD.encode(raw))
    }
}

/// The verifier-key text (public material only).
impl fmt::Debug for VerifierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifierKey({self})")
    }
}

impl FromStr for VerifierKey {
    type Err = TlogError;

    fn from_str(text: &str) -> Result<Self, TlogError> {
        VerifierKey::parse(text)
    }
}
