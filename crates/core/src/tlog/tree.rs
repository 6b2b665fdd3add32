//! Roots and audit paths from stored hashes: [`tree_hash`], [`inclusion_proof`] (RFC 9162
//! §2.1.3.1, `PATH`) and [`consistency_proof`] (§2.1.4.1, `PROOF` and `SUBPROOF`).
//!
//! Each follows the RFC's recursion top-down and writes down, instead of hashes, the leaf
//! ranges whose Merkle Tree Hashes the path needs. Every such range splits into at most 64
//! perfect subtrees, whose hashes are stored; at most one range of a path is not itself
//! perfect. So a call reads O(log n) stored hashes, in one [`HashReader`] call.

use super::error::TreeError;
use super::hash::{empty_root, node_hash, Hash};
use super::stored::{read_exactly, stored_hash_index, HashReader};
use crate::limits::MAX_TREE_SIZE;

/// The root of the tree of `size` leaves (`MTH(D[0:size])`).
pub fn tree_hash<R: HashReader + ?Sized>(
    size: u64,
    reader: &R,
) -> Result<Hash, TreeError<R::Error>> {
    check_size(size)?;
    if size == 0 {
        return Ok(empty_root());
    }
    let hashes = range_hashes(&[(0, size)], reader)?;
    Ok(hashes.first().copied().unwrap_or_else(empty_root))
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves: RFC 9162 `PATH(index,
/// D[0:size])`, the sibling hashes from the leaf up to the root.
pub fn inclusion_proof<R: HashReader + ?Sized>(
    index: u64,
    size: u64,
    reader: &R,
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    check_size(size)?;
    if index >= size {
        return Err(TreeError::Misuse(format!(
            "leaf {index} is not in a tree of {size} leaves"
        )));
    }
    // PATH(m, D[lo:hi]) = PATH(m, D[lo:lo+k]) : MTH(D[lo+k:hi]) when m < k, else
    // PATH(m - k, D[lo+k:hi]) : MTH(D[lo:lo+k]); the empty path for one leaf.
    let (mut lo, mut hi) = (0, size);
    let mut siblings = Vec::new();
    while hi - lo > 1 {
        let k = split(hi - lo);
        if index < lo + k {
            siblings.push((lo + k, hi));
            hi = lo + k;
        } else {
            siblings.push((lo, lo + k));
            lo += k;
        }
    }
    siblings.reverse();
    range_hashes(&siblings, reader)
}

/// The consistency proof from the tree of `old_size` leaves to the tree of `new_size`: RFC
/// 9162 `PROOF(old_size, D[0:new_size])`.
///
/// For `old_size == new_size` it is empty (`SUBPROOF(m, D[m], true)`). For `old_size == 0`,
/// where the RFC defines no proof, it is empty too: the empty tree is a prefix of every tree,
/// and [`super::verify_consistency`] checks only that the old root is the empty tree's.
pub fn consistency_proof<R: HashReader + ?Sized>(
    old_size: u64,
    new_size: u64,
    reader: &R,
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    check_size(new_size)?;
    if old_size > new_size {
        return Err(TreeError::Misuse(format!(
            "no consistency proof from {old_size} leaves to fewer, {new_size}"
        )));
    }
    if old_size == new_size || old_size == 0 {
        return Ok(Vec::new());
    }
    // SUBPROOF(m, D[lo:hi], b): for m = hi - lo, {} when b, else {MTH(D[lo:hi])}; otherwise
    // with k the split, SUBPROOF(m, D[lo:lo+k], b) : MTH(D[lo+k:hi]) when m ≤ k, else
    // SUBPROOF(m - k, D[lo+k:hi], false) : MTH(D[lo:lo+k]). Here m is old_size - lo.
    let (mut lo, mut hi, mut whole) = (0, new_size, true);
    let mut nodes = Vec::new();
    loop {
        let m = old_size - lo;
        if m == hi - lo {
            if !whole {
                nodes.push((lo, hi));
            }
            break;
        }
        let k = split(hi - lo);
        if m <= k {
            nodes.push((lo + k, hi));
            hi = lo + k;
        } else {
            nodes.push((lo, lo + k));
            lo += k;
            whole = false;
        }
    }
    nodes.reverse();
    range_hashes(&nodes, reader)
}

/// The hashes of the perfect subtrees `[lo, hi)` splits into, left to right (the roots a
/// [`super::Frontier`] keeps when `lo` is 0).
pub(crate) fn perfect_subtree_hashes<R: HashReader + ?Sized>(
    lo: u64,
    hi: u64,
    reader: &R,
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    check_size(hi)?;
    let mut indexes = Vec::new();
    perfect_subtrees(lo, hi, &mut indexes);
    read_exactly(reader, &indexes)
}

/// Refuses trees the stored-hash layout does not address.
fn check_size<E>(size: u64) -> Result<(), TreeError<E>> {
    if size > MAX_TREE_SIZE {
        return Err(TreeError::Misuse(format!(
            "a tree of {size} leaves is over the largest supported, {MAX_TREE_SIZE}"
        )));
    }
    Ok(())
}

/// RFC 9162's split of `n` ≥ 2 leaves: the largest power of two smaller than `n`.
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// Appends the stored-hash indexes of the perfect subtrees `[lo, hi)` splits into, left to
/// right. Each is the largest aligned power of two that fits, which for the ranges RFC
/// 9162's recursion produces is exactly how `MTH` splits them.
fn perfect_subtrees(lo: u64, hi: u64, out: &mut Vec<u64>) {
    let mut lo = lo;
    while lo < hi {
        let level = (63 - (hi - lo).leading_zeros()).min(lo.trailing_zeros());
        out.push(stored_hash_index(level, lo >> level));
        lo += 1 << level;
    }
}

/// The Merkle Tree Hash of each range, reading every stored hash they need in one call
/// (indexes sorted and without repeats).
fn range_hashes<R: HashReader + ?Sized>(
    ranges: &[(u64, u64)],
    reader: &R,
) -> Result<Vec<Hash>, TreeError<R::Error>> {
    let mut per_range = Vec::with_capacity(ranges.len());
    let mut wanted = Vec::new();
    for &(lo, hi) in ranges {
        let mut indexes = Vec::new();
        perfect_subtrees(lo, hi, &mut indexes);
        wanted.extend_from_slice(&indexes);
        per_range.push(indexes);
    }
    wanted.sort_unstable();
    wanted.dedup();
    let read = read_exactly(reader, &wanted)?;
    let lookup = |index: &u64| {
        wanted
            .binary_search(index)
            .ok()
            .and_then(|i| read.get(i))
            .copied()
    };
    let mut out = Vec::with_capacity(ranges.len());
    for indexes in &per_range {
        // MTH of the range: its perfect subtrees folded from the right.
        let mut hashes = indexes.iter().rev().filter_map(lookup);
        let Some(last) = hashes.next() else {
            return Err(TreeError::Misuse("an empty range has no hash".into()));
        };
        out.push(hashes.fold(last, |right, left| node_hash(&left, &right)));
    }
    Ok(out)
}
