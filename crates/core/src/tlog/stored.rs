//! The stored-hash layout: every complete subtree's hash, in the order a log appends them,
//! and [`HashReader`], how the engine hands them back (from memory, or from tile files).
//!
//! The hash of the complete subtree at level `L` (2^L leaves) with index `K` (covering
//! leaves `K·2^L .. (K+1)·2^L`) is stored once, right after the leaf that completes it: leaf
//! `n`'s hash is followed by the hashes of the subtrees leaf `n` completes, smallest first.
//! This is the layout of Go's `golang.org/x/mod/sumdb/tlog` (after Crosby and Wallach), so
//! the engine's files are indexed the way that ecosystem indexes them. In closed form:
//! a tree of `n` leaves stores `2n − popcount(n)` hashes, and the node `(L, K)` is at
//! [`stored_hash_index`]`(L, K) = 2m − popcount(m) + L` with `m = (K+1)·2^L − 1`, the last
//! leaf under it.
//!
//! Appending leaf `n` stores `1 + trailing_ones(n)` hashes ([`append_hashes`]): on average
//! two, reading as many earlier hashes as it stores minus one.

use std::fmt;

use super::error::TreeError;
use super::hash::{node_hash, Hash};
use crate::limits::MAX_TREE_SIZE;

/// Where stored hashes come from: the engine backs it with memory or tile files.
///
/// Indexes are [`stored_hash_index`] positions. The functions of [`crate::tlog`] ask once
/// per call, with indexes in increasing order and without repeats; roots, proofs and appends
/// need at most about 2·log2(size) of them, a tile 256.
pub trait HashReader {
    /// The reader's failure.
    type Error;

    /// The hashes stored at `indexes`, one per index, in the order asked. Returning another
    /// number of hashes is reported as [`TreeError::WrongCount`].
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, Self::Error>;
}

/// A stored hash that a slice reader does not hold.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct NotStored {
    /// The stored-hash index asked for.
    pub index: u64,
}

impl fmt::Display for NotStored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no hash is stored at index {}", self.index)
    }
}

impl std::error::Error for NotStored {}

/// All stored hashes in memory, position `i` holding stored index `i`.
impl HashReader for [Hash] {
    type Error = NotStored;

    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, NotStored> {
        indexes
            .iter()
            .map(|&index| {
                usize::try_from(index)
                    .ok()
                    .and_then(|i| self.get(i))
                    .copied()
                    .ok_or(NotStored { index })
            })
            .collect()
    }
}

impl HashReader for Vec<Hash> {
    type Error = NotStored;

    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, NotStored> {
        self.as_slice().read_hashes(indexes)
    }
}

/// Where leaf `n`'s hash is stored: `2n − popcount(n)`, the count of hashes stored for the
/// `n` leaves before it.
const fn leaf_position(n: u64) -> u64 {
    n.wrapping_mul(2).wrapping_sub(n.count_ones() as u64)
}

/// The stored-hash index of the complete subtree at `level` with index `n`.
///
/// Meaningful for nodes of trees up to [`MAX_TREE_SIZE`] leaves (`level` < 63 and
/// `(n + 1)·2^level` ≤ 2^62); beyond that the result is unspecified (but never a panic).
pub const fn stored_hash_index(level: u32, n: u64) -> u64 {
    // The last leaf under the node; the node is stored `level` places after that leaf.
    let last = n.wrapping_add(1).wrapping_shl(level).wrapping_sub(1);
    leaf_position(last).wrapping_add(level as u64)
}

/// The node `(level, n)` stored at `index`: the inverse of [`stored_hash_index`].
///
/// Meaningful for indexes of trees up to [`MAX_TREE_SIZE`] leaves (below 2^63).
pub fn split_stored_hash_index(index: u64) -> (u32, u64) {
    // The leaf stored at or just before `index`: leaf_position(n) ≤ 2n, so index / 2 is no
    // further than it, and each leaf adds 1 + trailing_ones(n) ≥ 1 positions, at most 64
    // steps short.
    let mut n = index / 2;
    while n < u64::MAX / 2 && leaf_position(n + 1) <= index {
        n += 1;
    }
    let level = u32::try_from(index.saturating_sub(leaf_position(n))).unwrap_or(u32::MAX);
    (level, n.checked_shr(level).unwrap_or(0))
}

/// How many hashes a tree of `size` leaves stores: one per complete subtree,
/// `2·size − popcount(size)`.
pub const fn stored_hash_count(size: u64) -> u64 {
    leaf_position(size)
}

/// The hashes to store when leaf `n` (0-based: the tree grows from `n` to `n + 1` leaves)
/// with hash `leaf` is appended: the leaf's hash, then the hash of each complete subtree
/// it completes, smallest first, to be stored from [`stored_hash_index`]`(0, n)` on.
///
/// Reads `trailing_ones(n)` earlier hashes (the left siblings on the way up) in one call:
/// O(1) amortised over a run of appends.
pub fn append_hashes<R: HashReader + ?Sized>(
    n: u64,
    leaf: Hash,
    reader: &R,
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    if n >= MAX_TREE_SIZE {
        return Err(TreeError::Misuse(format!(
            "a tree of {n} leaves is over the largest supported, {MAX_TREE_SIZE}"
        )));
    }
    let completes = n.trailing_ones();
    // The left sibling at level i is the subtree just before n's ancestor there; listed from
    // the highest level down, that is increasing stored order.
    let indexes: Vec<u64> = (0..completes)
        .rev()
        .map(|level| stored_hash_index(level, (n >> level) - 1))
        .collect();
    let siblings = read_exactly(reader, &indexes)?;
    let mut out = Vec::with_capacity(indexes.len() + 1);
    out.push(leaf);
    let mut h = leaf;
    for left in siblings.iter().rev() {
        h = node_hash(left, &h);
        out.push(h);
    }
    Ok(out)
}

/// Reads `indexes` and checks that the reader answered each.
pub(crate) fn read_exactly<R: HashReader + ?Sized>(
    reader: &R,
    indexes: &[u64],
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    if indexes.is_empty() {
        return Ok(Vec::new());
    }
    let hashes = reader.read_hashes(indexes).map_err(TreeError::Read)?;
    if hashes.len() != indexes.len() {
        return Err(TreeError::WrongCount {
            asked: indexes.len(),
            got: hashes.len(),
        });
    }
    Ok(hashes)
}
