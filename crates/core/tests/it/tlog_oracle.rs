//! The tree, its proofs and their verification against a naive RFC 9162 written from the
//! RFC's text (MTH §2.1.1, PATH §2.1.3.1, PROOF and SUBPROOF §2.1.4.1), hashing with `sha2`
//! directly: roots for every size up to 600, every proof of the small trees, random proofs
//! in trees of up to 4096 leaves with their mutations, and arbitrary bytes through the
//! parsers and verifiers.

use std::sync::OnceLock;

use akledger_core::tlog::{
    append_hashes, consistency_proof, inclusion_proof, tree_hash, verify_consistency,
    verify_inclusion, Frontier, Hash,
};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

use crate::fuzz_tlog;

/// Leaves of the largest tree the properties look at.
const MAX: u64 = 4096;

fn sha(parts: &[&[u8]]) -> Hash {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    Hash(h.finalize().into())
}

/// The entries: entry i is i in 8 big-endian bytes.
fn entries(n: u64) -> Vec<[u8; 8]> {
    (0..n).map(u64::to_be_bytes).collect()
}

/// "the largest power of two smaller than n" (n > 1).
fn k_of(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// MTH(D_n).
fn mth(d: &[[u8; 8]]) -> Hash {
    match d {
        [] => sha(&[]),
        [one] => sha(&[&[0x00], one]),
        _ => {
            let k = k_of(d.len());
            sha(&[&[0x01], &mth(&d[..k]).0, &mth(&d[k..]).0])
        }
    }
}

/// PATH(m, D_n).
fn path(m: usize, d: &[[u8; 8]]) -> Vec<Hash> {
    if d.len() == 1 {
        return vec![];
    }
    let k = k_of(d.len());
    if m < k {
        let mut p = path(m, &d[..k]);
        p.push(mth(&d[k..]));
        p
    } else {
        let mut p = path(m - k, &d[k..]);
        p.push(mth(&d[..k]));
        p
    }
}

/// PROOF(m, D_n) = SUBPROOF(m, D_n, true).
fn proof(m: usize, d: &[[u8; 8]]) -> Vec<Hash> {
    subproof(m, d, true)
}

fn subproof(m: usize, d: &[[u8; 8]], b: bool) -> Vec<Hash> {
    let n = d.len();
    if m == n {
        return if b { vec![] } else { vec![mth(d)] };
    }
    let k = k_of(n);
    if m <= k {
        let mut p = subproof(m, &d[..k], b);
        p.push(mth(&d[k..]));
        p
    } else {
        let mut p = subproof(m - k, &d[k..], false);
        p.push(mth(&d[..k]));
        p
    }
}

/// The entries, leaf hashes and stored hashes of a log.
type Log = (Vec<[u8; 8]>, Vec<Hash>, Vec<Hash>);

/// The largest tree's log, built once.
fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let entries = entries(MAX);
        let leaves: Vec<Hash> = entries
            .iter()
            .map(|e| mth(std::slice::from_ref(e)))
            .collect();
        let mut stored = Vec::new();
        for (n, leaf) in leaves.iter().enumerate() {
            let new = append_hashes(n as u64, *leaf, &stored).unwrap();
            stored.extend(new);
        }
        (entries, leaves, stored)
    })
}

#[test]
fn roots_of_every_size_up_to_600_match_the_rfc() {
    let (entries, leaves, stored) = log();
    let mut frontier = Frontier::new();
    assert_eq!(tree_hash(0, stored).unwrap(), mth(&[]));
    for n in 1..=600usize {
        frontier.push(leaves[n - 1]);
        let expected = mth(&entries[..n]);
        assert_eq!(tree_hash(n as u64, stored).unwrap(), expected, "size {n}");
        assert_eq!(frontier.root(), expected, "frontier at size {n}");
    }
}

#[test]
fn every_proof_of_the_small_trees_matches_the_rfc() {
    let (entries, leaves, stored) = log();
    for n in 1..=48usize {
        let d = &entries[..n];
        let root = mth(d);
        for (m, leaf) in leaves.iter().enumerate().take(n) {
            let p = inclusion_proof(m as u64, n as u64, stored).unwrap();
            assert_eq!(p, path(m, d), "PATH({m}, D[{n}])");
            verify_inclusion(leaf, m as u64, n as u64, &p, &root).unwrap();
        }
        for m in 1..=n {
            let p = consistency_proof(m as u64, n as u64, stored).unwrap();
            assert_eq!(p, proof(m, d), "PROOF({m}, D[{n}])");
            verify_consistency(m as u64, n as u64, &p, &mth(&d[..m]), &root).unwrap();
        }
    }
}

fn sized() -> impl Strategy<Value = (u64, u64, u64, u64)> {
    (1..=MAX).prop_flat_map(|n| (Just(n), 0..n, 0..=n, any::<u64>()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_proofs_match_the_rfc_and_mutations_fail((size, index, old, pick) in sized()) {
        let (entries, leaves, stored) = log();
        let d = &entries[..size as usize];
        let p = inclusion_proof(index, size, stored).unwrap();
        prop_assert_eq!(&p, &path(index as usize, d));
        if old > 0 {
            let c = consistency_proof(old, size, stored).unwrap();
            prop_assert_eq!(&c, &proof(old as usize, d));
        }
        fuzz_tlog::check_proofs_of(leaves, stored, index, size, old, pick);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        fuzz_tlog::check_note(&data);
        fuzz_tlog::check_tlog_proof(&data);
    }

    #[test]
    fn arbitrary_proofs_of_small_trees_never_panic(
        index in 0u64..70, size in 0u64..70, old in 0u64..70, new in 0u64..70,
        hashes in proptest::collection::vec(any::<[u8; 32]>(), 0..10),
        a in any::<[u8; 32]>(), b in any::<[u8; 32]>(),
    ) {
        let hashes: Vec<Hash> = hashes.into_iter().map(Hash).collect();
        let _ = verify_inclusion(&Hash(a), index, size, &hashes, &Hash(b));
        let _ = verify_consistency(old, new, &hashes, &Hash(a), &Hash(b));
    }
}
