//! Proof verification with no hash reader: what an auditor's program runs. RFC 9162
//! §2.1.3.2 (inclusion) and §2.1.4.2 (consistency), step by step, over untrusted sizes and
//! hashes: every failure is a `proof_invalid` error, never a panic.
//!
//! A proof binds a leaf (or an old root) to a root; it does not bind the size. The size is
//! bound to the root by whoever signed them together (a checkpoint, PROFILE §13), so check
//! the root and size of a verified checkpoint, not ones the proof's sender chose.

use super::error::{invalid_proof, TlogError};
use super::hash::{empty_root, node_hash, Hash};

/// Verifies that `leaf` (a [`super::leaf_hash`]) is leaf number `index` of the tree of
/// `size` leaves whose root is `root`, by the inclusion path `proof` (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), TlogError> {
    // 1. leaf_index must be below tree_size.
    if index >= size {
        return Err(invalid_proof(format!(
            "leaf {index} is not in a tree of {size} leaves"
        )));
    }
    // 2. fn = leaf_index, sn = tree_size - 1; 3. r = hash.
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    // 4. For each p in the path:
    for p in proof {
        // a. A path longer than the tree is high fails.
        if s == 0 {
            return Err(wrong_length());
        }
        // b. A right child (or the last node of its level) takes its sibling on the left.
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            // ii. Up past the levels where the node has no sibling.
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        // c. One level up.
        f >>= 1;
        s >>= 1;
    }
    // 5. The path must reach the top, and there the root.
    if s != 0 {
        return Err(wrong_length());
    }
    if r != *root {
        return Err(invalid_proof(
            "the inclusion proof does not lead to the tree's root",
        ));
    }
    Ok(())
}

/// Verifies that the tree of `new_size` leaves with root `new_root` extends the tree of
/// `old_size` leaves with root `old_root`, by the consistency path `proof` (RFC 9162
/// §2.1.4.2).
///
/// The RFC's algorithm is for 0 < `old_size` < `new_size`. The other cases: an old size
/// above the new one fails; equal sizes need the empty proof (`SUBPROOF(m, D[m], true)`) and
/// equal roots; an old size of 0 needs the empty proof and the empty tree's hash as the old
/// root (the empty tree is a prefix of every tree, and nothing more can be proved of it).
pub fn verify_consistency(
    old_size: u64,
    new_size: u64,
    proof: &[Hash],
    old_root: &Hash,
    new_root: &Hash,
) -> Result<(), TlogError> {
    if old_size > new_size {
        return Err(invalid_proof(format!(
            "no tree of {new_size} leaves extends one of {old_size}"
        )));
    }
    if old_size == 0 || old_size == new_size {
        if !proof.is_empty() {
            return Err(wrong_length());
        }
        if old_size == 0 && *old_root != empty_root() {
            return Err(invalid_proof("the old root is not the empty tree's hash"));
        }
        if old_size == new_size && old_root != new_root {
            return Err(invalid_proof("trees of the same size have different roots"));
        }
        return Ok(());
    }
    // 1. The empty path fails.
    let Some((first_of_proof, rest_of_proof)) = proof.split_first() else {
        return Err(wrong_length());
    };
    // 2. When first is a power of two, its root starts the path.
    let (start, rest) = if old_size.is_power_of_two() {
        (old_root, proof)
    } else {
        (first_of_proof, rest_of_proof)
    };
    // 3. fn = first - 1, sn = second - 1; 4. skip the levels where fn is a right child.
    let (mut f, mut s) = (old_size - 1, new_size - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    // 5. fr = sr = the first value.
    let (mut fr, mut sr) = (*start, *start);
    // 6. For each subsequent value c:
    for c in rest {
        // a. A path longer than the new tree is high fails.
        if s == 0 {
            return Err(wrong_length());
        }
        // b. A sibling on the left belongs to both trees.
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            // A sibling on the right belongs to the new tree only.
            sr = node_hash(&sr, c);
        }
        // c. One level up.
        f >>= 1;
        s >>= 1;
    }
    // 7. The path must reach the top; fr must be the old root and sr the new one.
    if s != 0 {
        return Err(wrong_length());
    }
    if fr != *old_root {
        return Err(invalid_proof(
            "the consistency proof does not lead to the old root",
        ));
    }
    if sr != *new_root {
        return Err(invalid_proof(
            "the consistency proof does not lead to the new root",
        ));
    }
    Ok(())
}

fn wrong_length() -> TlogError {
    invalid_proof("the proof has the wrong number of hashes for the tree sizes")
}
