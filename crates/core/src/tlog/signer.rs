//! [`NoteSigner`]: a named Ed25519 key that signs note texts (signature type `0x01`), as a
//! ledger signs its checkpoints (PROFILE §13). Ed25519 signing is deterministic (RFC 8032),
//! so it belongs in the pure core: the same key and text give the same line everywhere.

use std::fmt;

use ed25519_dalek::{Signer as _, SigningKey};

use super::error::TlogError;
use super::keys::{KeyKind, VerifierKey};
use super::note::{check_text, Note, NoteSignature};

/// A note signing key with its name. `Debug` shows the name and key ID, never the key.
#[derive(Clone)]
pub struct NoteSigner {
    public: VerifierKey,
    key: SigningKey,
}

impl NoteSigner {
    /// The signer `name` with `key`. The name must be a valid key name (for a ledger's
    /// checkpoint key, the ledger's origin).
    pub fn new(name: &str, key: SigningKey) -> Result<Self, TlogError> {
        Ok(NoteSigner {
            public: VerifierKey::new(name, KeyKind::Ed25519, key.verifying_key())?,
            key,
        })
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        self.public.name()
    }

    /// The key ID.
    pub fn key_id(&self) -> u32 {
        self.public.key_id()
    }

    /// The public half, for verifiers.
    pub fn verifier_key(&self) -> &VerifierKey {
        &self.public
    }

    /// The signature of `text` (which must end with a newline and hold no control character
    /// but newline), as a note signature line.
    pub fn sign_text(&self, text: &str) -> Result<NoteSignature, TlogError> {
        check_text(text)?;
        let signature = self.key.sign(text.as_bytes());
        NoteSignature::new(self.name(), self.key_id(), signature.to_bytes().to_vec())
    }

    /// The signed note of `text`: the text, a blank line and this key's signature line.
    pub fn sign(&self, text: &str) -> Result<String, TlogError> {
        Ok(Note::new(text, vec![self.sign_text(text)?])?.to_text())
    }
}

impl fmt::Debug for NoteSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoteSigner({}+{:08x})", self.name(), self.key_id())
    }
}
