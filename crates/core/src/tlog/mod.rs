//! The verifiable log (PROFILE §13), its pure part: the RFC 9162 tree over a ledger's event
//! ids in admission order, checkpoints signed as C2SP notes, inclusion and consistency
//! proofs, and the names and bytes of C2SP `tlog-tiles`. No IO: the engine stores hashes and
//! writes files; an auditor's program verifies with this module alone.
//!
//! - `hash.rs`: [`Hash`](struct@Hash), [`leaf_hash`], [`node_hash`], [`empty_root`]
//!   (RFC 9162 §2.1.1);
//! - `stored.rs`: the stored-hash layout, [`HashReader`], [`append_hashes`];
//! - `frontier.rs`: [`Frontier`], the right edge in memory, for roots without a reader;
//! - `tree.rs`: [`tree_hash`], [`inclusion_proof`], [`consistency_proof`] from stored
//!   hashes (§2.1.3.1, §2.1.4.1);
//! - `verify.rs`: [`verify_inclusion`], [`verify_consistency`] (§2.1.3.2, §2.1.4.2);
//! - `keys.rs`, `note.rs`, `signer.rs`: C2SP `signed-note` keys, notes and signing;
//! - `checkpoint.rs`: C2SP `tlog-checkpoint`; `cosignature.rs`: `tlog-cosignature` v1;
//! - `tiles.rs`: C2SP `tlog-tiles` paths, tile sets, tile bytes and entry bundles;
//! - `proof_json.rs`: the proofs' JSON forms;
//! - `error.rs`: [`TlogError`] (the §13 codes) and [`TreeError`].
//!
//! ```
//! use akledger_core::tlog::{self, Checkpoint, Frontier, NoteSigner};
//!
//! // The stored hashes of a three-entry log, appended one leaf at a time.
//! let mut stored = Vec::new();
//! let mut frontier = Frontier::new();
//! for (n, entry) in [b"a", b"b", b"c"].iter().enumerate() {
//!     let leaf = tlog::leaf_hash(*entry);
//!     stored.extend(tlog::append_hashes(n as u64, leaf, &stored)?);
//!     frontier.push(leaf);
//! }
//! let root = tlog::tree_hash(3, &stored)?;
//! assert_eq!(root, frontier.root());
//!
//! // An auditor checks that "b" is entry 1, with the proof and the signed root only.
//! let proof = tlog::inclusion_proof(1, 3, &stored)?;
//! assert!(tlog::verify_inclusion(&tlog::leaf_hash(b"b"), 1, 3, &proof, &root).is_ok());
//!
//! // The log signs a checkpoint with a key named after its origin.
//! let key = akledger_core::ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
//! let signer = NoteSigner::new("example.com/log", key)?;
//! let note = Checkpoint::new("example.com/log", 3, root)?.sign(&signer)?;
//! let opened = Checkpoint::open(note.as_bytes(), signer.verifier_key())?;
//! assert_eq!((opened.size(), *opened.root()), (3, root));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod checkpoint;
mod cosignature;
mod error;
mod frontier;
mod hash;
mod keys;
mod note;
mod proof_json;
mod signer;
mod stored;
mod tiles;
mod tree;
mod verify;

pub use checkpoint::Checkpoint;
pub use cosignature::{cosignature_message, Cosigner, COSIGNATURE_V1_HEADER};
pub use error::{TlogError, TreeError};
pub use frontier::Frontier;
pub use hash::{empty_root, leaf_hash, node_hash, Hash, HASH_SIZE};
pub use keys::{
    is_valid_key_name, key_id, KeyKind, VerifierKey, COSIGNATURE_V1_TYPE, ED25519_TYPE,
};
pub use note::{Note, NoteSignature, VerifiedSignature, SIGNATURE_PREFIX};
pub use proof_json::{ConsistencyProof, InclusionProof};
pub use signer::NoteSigner;
pub use stored::{
    append_hashes, split_stored_hash_index, stored_hash_count, stored_hash_index, HashReader,
    NotStored,
};
pub use tiles::{
    changed_tiles, decode_entry_bundle, encode_entry_bundle, entry_bundles, hash_tiles, read_tile,
    Tile, TileKind, TILE_HEIGHT, TILE_WIDTH,
};
pub use tree::{consistency_proof, inclusion_proof, tree_hash};
pub use verify::{verify_consistency, verify_inclusion};
