//! Unit tests of the verifiable log's pure part; the known answers from independent sources
//! and the comparison with a naive RFC 9162 are in the crate's `tests/it/`.

mod json;
mod notes;
mod tiles;
mod tree;

use akledger_core::tlog::*;

/// The leaf hashes of entries 0, 1, 2, … (each its index, big-endian).
fn leaves(n: u64) -> Vec<Hash> {
    (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect()
}

/// The stored hashes of a log of `leaves`, appended one at a time.
fn stored_of(leaves: &[Hash]) -> Vec<Hash> {
    let mut stored = Vec::new();
    for (n, leaf) in leaves.iter().enumerate() {
        let new = append_hashes(n as u64, *leaf, &stored).unwrap();
        stored.extend(new);
    }
    stored
}

/// MTH of `leaves` (RFC 9162 §2.1.1), recursively.
fn mth(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = largest_power_below(n);
            node_hash(&mth(&leaves[..k]), &mth(&leaves[k..]))
        }
    }
}

/// The largest power of two smaller than `n` ≥ 2.
fn largest_power_below(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}
