//! The tree's hashing (RFC 9162 §2.1.1 with SHA-256, PROFILE §13): leaf and interior-node
//! hashes with their one-byte domain prefixes, the empty tree's hash, and [`Hash`](struct@Hash), the
//! 32-byte value with its standard-base64 spelling (the one checkpoints and proofs use).

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// Bytes in a [`Hash`](struct@Hash).
pub const HASH_SIZE: usize = 32;

/// Length of a hash in standard base64 with padding.
const BASE64_LEN: usize = 44;

/// A SHA-256 hash of the tree: a leaf, an interior node, or a root.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Hash(pub [u8; HASH_SIZE]);

impl Hash {
    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; HASH_SIZE] {
        &self.0
    }

    /// The hash in `bytes`, when they are exactly 32.
    pub fn from_slice(bytes: &[u8]) -> Option<Hash> {
        <[u8; HASH_SIZE]>::try_from(bytes).ok().map(Hash)
    }

    /// Standard base64 with padding (RFC 4648 §4): 44 characters.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }

    /// Parses standard base64 with padding; anything but the exact 44-character spelling of
    /// 32 bytes (other alphabets, missing padding, non-zero trailing bits) is `None`.
    pub fn from_base64(text: &str) -> Option<Hash> {
        if text.len() != BASE64_LEN {
            return None;
        }
        let mut out = [0u8; HASH_SIZE];
        match STANDARD.decode_slice(text, &mut out) {
            Ok(HASH_SIZE) => Some(Hash(out)),
            _ => None,
        }
    }

    /// Lowercase hex: 64 digits.
    pub fn to_hex(&self) -> String {
        crate::id::hex(&self.0)
    }
}

impl From<[u8; HASH_SIZE]> for Hash {
    fn from(bytes: [u8; HASH_SIZE]) -> Self {
        Hash(bytes)
    }
}

/// Hex, so test failures and logs compare at a glance with published vectors.
impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

/// Standard base64, the spelling of checkpoints and proofs.
impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base64())
    }
}

/// The hash of a leaf: SHA-256(0x00 ‖ entry). A ledger's entries are 33-byte binary event
/// ids (PROFILE §13).
pub fn leaf_hash(entry: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0x00]);
    h.update(entry);
    Hash(h.finalize().into())
}

/// The hash of an interior node: SHA-256(0x01 ‖ left ‖ right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([0x01]);
    h.update(left.0);
    h.update(right.0);
    Hash(h.finalize().into())
}

/// The hash of the empty tree: SHA-256 of the empty string.
pub fn empty_root() -> Hash {
    Hash(Sha256::digest(b"").into())
}
