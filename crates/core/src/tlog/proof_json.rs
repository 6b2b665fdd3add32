//! The JSON forms of proofs (PROFILE §13): an event's inclusion proof
//! `{"origin","tree_size","leaf_index","event_id","hashes"}` and a consistency proof
//! `{"origin","old_size","new_size","hashes"}`, hashes in standard base64.
//!
//! Parsing is strict: JSON by the value rules of §2 (no duplicate members, integers within
//! ±(2^53 − 1)), exactly these members, the right types, non-negative sizes, every hash 32
//! bytes of padded standard base64, at most [`MAX_PROOF_HASHES`] of them. Any failure is
//! `proof_invalid`. Writing is canonical JSON (§2).

use super::checkpoint::Checkpoint;
use super::error::{invalid_proof, TlogError};
use super::hash::{leaf_hash, Hash};
use super::verify::{verify_consistency, verify_inclusion};
use crate::canonical::{parse_value, to_canonical, Json, Object};
use crate::id::EventId;
use crate::limits::{MAX_PROOF_HASHES, MAX_SAFE_INTEGER};

/// The proof that an event is in a ledger's tree of a size.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InclusionProof {
    origin: String,
    tree_size: u64,
    leaf_index: u64,
    event_id: EventId,
    hashes: Vec<Hash>,
}

impl InclusionProof {
    /// The proof that `event_id` is event number `leaf_index` of the tree of `tree_size`
    /// events of the log `origin`, by the inclusion path `hashes`. Sizes must fit JSON's
    /// integers (at most 2^53 − 1), the origin must be non-empty, and the path at most
    /// [`MAX_PROOF_HASHES`] long.
    pub fn new(
        origin: &str,
        tree_size: u64,
        leaf_index: u64,
        event_id: EventId,
        hashes: Vec<Hash>,
    ) -> Result<Self, TlogError> {
        check_shape(origin, &[tree_size, leaf_index], &hashes)?;
        Ok(InclusionProof {
            origin: origin.to_owned(),
            tree_size,
            leaf_index,
            event_id,
            hashes,
        })
    }

    /// Parses the JSON form.
    pub fn from_json(bytes: &[u8]) -> Result<Self, TlogError> {
        let obj = read_object(
            bytes,
            &["event_id", "hashes", "leaf_index", "origin", "tree_size"],
        )?;
        let event_id = EventId::parse(string(&obj, "event_id")?)
            .map_err(|e| invalid_proof(format!("event_id: {}", e.message())))?;
        InclusionProof::new(
            string(&obj, "origin")?,
            size(&obj, "tree_size")?,
            size(&obj, "leaf_index")?,
            event_id,
            hashes(&obj)?,
        )
    }

    /// The canonical JSON form.
    pub fn to_json(&self) -> Vec<u8> {
        let doc = Object::new()
            .with("origin", self.origin.as_str().into())
            .with("tree_size", int(self.tree_size))
            .with("leaf_index", int(self.leaf_index))
            .with("event_id", self.event_id.to_string().into())
            .with("hashes", hashes_json(&self.hashes));
        to_canonical(&doc.into())
    }

    /// The log's origin.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The tree's size.
    pub fn tree_size(&self) -> u64 {
        self.tree_size
    }

    /// The event's number in the log.
    pub fn leaf_index(&self) -> u64 {
        self.leaf_index
    }

    /// The event.
    pub fn event_id(&self) -> &EventId {
        &self.event_id
    }

    /// The inclusion path.
    pub fn hashes(&self) -> &[Hash] {
        &self.hashes
    }

    /// Verifies the proof against `root`, the root of the tree of [`Self::tree_size`] events
    /// (the leaf is the hash of the event's 33-byte binary id).
    pub fn verify(&self, root: &Hash) -> Result<(), TlogError> {
        verify_inclusion(
            &leaf_hash(self.event_id.bytes()),
            self.leaf_index,
            self.tree_size,
            &self.hashes,
            root,
        )
    }

    /// Verifies the proof against a verified checkpoint: same origin, same size, its root.
    pub fn verify_against(&self, checkpoint: &Checkpoint) -> Result<(), TlogError> {
        if checkpoint.origin() != self.origin || checkpoint.size() != self.tree_size {
            return Err(invalid_proof(
                "the proof is not for the checkpoint's log and size",
            ));
        }
        self.verify(checkpoint.root())
    }
}

/// The proof that a log's tree of one size extends its tree of a smaller size.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ConsistencyProof {
    origin: String,
    old_size: u64,
    new_size: u64,
    hashes: Vec<Hash>,
}

impl ConsistencyProof {
    /// The proof that the tree of `new_size` events of the log `origin` extends its tree of
    /// `old_size`, by the consistency path `hashes` (the same bounds as
    /// [`InclusionProof::new`]).
    pub fn new(
        origin: &str,
        old_size: u64,
        new_size: u64,
        hashes: Vec<Hash>,
    ) -> Result<Self, TlogError> {
        check_shape(origin, &[old_size, new_size], &hashes)?;
        Ok(ConsistencyProof {
            origin: origin.to_owned(),
            old_size,
            new_size,
            hashes,
        })
    }

    /// Parses the JSON form.
    pub fn from_json(bytes: &[u8]) -> Result<Self, TlogError> {
        let obj = read_object(bytes, &["hashes", "new_size", "old_size", "origin"])?;
        ConsistencyProof::new(
            string(&obj, "origin")?,
            size(&obj, "old_size")?,
            size(&obj, "new_size")?,
            hashes(&obj)?,
        )
    }

    /// The canonical JSON form.
    pub fn to_json(&self) -> Vec<u8> {
        let doc = Object::new()
            .with("origin", self.origin.as_str().into())
            .with("old_size", int(self.old_size))
            .with("new_size", int(self.new_size))
            .with("hashes", hashes_json(&self.hashes));
        to_canonical(&doc.into())
    }

    /// The log's origin.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The older tree's size.
    pub fn old_size(&self) -> u64 {
        self.old_size
    }

    /// The newer tree's size.
    pub fn new_size(&self) -> u64 {
        self.new_size
    }

    /// The consistency path.
    pub fn hashes(&self) -> &[Hash] {
        &self.hashes
    }

    /// Verifies the proof against the two trees' roots.
    pub fn verify(&self, old_root: &Hash, new_root: &Hash) -> Result<(), TlogError> {
        verify_consistency(
            self.old_size,
            self.new_size,
            &self.hashes,
            old_root,
            new_root,
        )
    }

    /// Verifies the proof between two verified checkpoints of its log, of its two sizes.
    pub fn verify_between(&self, old: &Checkpoint, new: &Checkpoint) -> Result<(), TlogError> {
        if old.origin() != self.origin
            || new.origin() != self.origin
            || old.size() != self.old_size
            || new.size() != self.new_size
        {
            return Err(invalid_proof(
                "the proof is not for the checkpoints' log and sizes",
            ));
        }
        self.verify(old.root(), new.root())
    }
}

/// Checks what the JSON form can carry.
fn check_shape(origin: &str, sizes: &[u64], hashes: &[Hash]) -> Result<(), TlogError> {
    if origin.is_empty() {
        return Err(invalid_proof("a proof's origin cannot be empty"));
    }
    if sizes.iter().any(|&s| s > MAX_SAFE_INTEGER.unsigned_abs()) {
        return Err(invalid_proof(format!(
            "a proof's sizes are at most {MAX_SAFE_INTEGER} (PROFILE §2)"
        )));
    }
    if hashes.len() > MAX_PROOF_HASHES {
        return Err(too_many_hashes());
    }
    Ok(())
}

/// The object in `bytes`, with exactly the members `names` (in UTF-16 order, as the object
/// keeps them).
fn read_object(bytes: &[u8], names: &[&str]) -> Result<Object, TlogError> {
    let value = parse_value(bytes).map_err(|e| invalid_proof(e.message().to_owned()))?;
    let Json::Object(obj) = value else {
        return Err(invalid_proof("a proof is a JSON object"));
    };
    if !obj.keys().eq(names.iter().copied()) {
        return Err(invalid_proof(format!(
            "a proof has exactly the members {}",
            names.join(", ")
        )));
    }
    Ok(obj)
}

fn string<'a>(obj: &'a Object, name: &str) -> Result<&'a str, TlogError> {
    obj.get(name)
        .and_then(Json::as_str)
        .ok_or_else(|| invalid_proof(format!("{name} must be a string")))
}

fn size(obj: &Object, name: &str) -> Result<u64, TlogError> {
    obj.get(name)
        .and_then(Json::as_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| invalid_proof(format!("{name} must be a non-negative integer")))
}

fn hashes(obj: &Object) -> Result<Vec<Hash>, TlogError> {
    let items = obj
        .get("hashes")
        .and_then(Json::as_array)
        .ok_or_else(|| invalid_proof("hashes must be an array"))?;
    if items.len() > MAX_PROOF_HASHES {
        return Err(too_many_hashes());
    }
    items
        .iter()
        .map(|item| {
            item.as_str().and_then(Hash::from_base64).ok_or_else(|| {
                invalid_proof("each of hashes must be 32 bytes in padded standard base64")
            })
        })
        .collect()
}

fn int(n: u64) -> Json {
    // `new` keeps sizes within JSON's integers.
    Json::Int(i64::try_from(n).unwrap_or(MAX_SAFE_INTEGER))
}

fn hashes_json(hashes: &[Hash]) -> Json {
    Json::Array(hashes.iter().map(|h| h.to_base64().into()).collect())
}

fn too_many_hashes() -> TlogError {
    invalid_proof(format!("a proof has at most {MAX_PROOF_HASHES} hashes"))
}
