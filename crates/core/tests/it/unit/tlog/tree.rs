//! Hashes, the stored-hash layout, the frontier, roots and proofs from stored hashes, and
//! the verifiers' edge cases.

use super::*;
use akledger_core::limits::MAX_TREE_SIZE;

#[test]
fn hash_spellings_are_strict() {
    let h = leaf_hash(b"x");
    assert_eq!(Hash::from_base64(&h.to_base64()), Some(h));
    assert_eq!(format!("{h}"), h.to_base64());
    assert_eq!(format!("{h:?}"), format!("Hash({})", h.to_hex()));
    assert_eq!(h.to_hex().len(), 64);
    let text = h.to_base64();
    // Missing padding, one character too many, the URL-safe alphabet.
    assert_eq!(Hash::from_base64(text.trim_end_matches('=')), None);
    assert_eq!(Hash::from_base64(&format!("{text}=")), None);
    let url = Hash([0xfb; 32])
        .to_base64()
        .replace('+', "-")
        .replace('/', "_");
    assert_eq!(Hash::from_base64(&url), None);
    // The 43rd character carries 4 bits of data and 2 that must be zero.
    let mut non_canonical = Hash([0; 32]).to_base64().into_bytes();
    non_canonical[42] = b'B';
    assert_eq!(
        Hash::from_base64(std::str::from_utf8(&non_canonical).unwrap()),
        None
    );
    assert_eq!(Hash::from_slice(&[1; 31]), None);
    assert_eq!(Hash::from_slice(&[1; 32]), Some(Hash([1; 32])));
}

#[test]
fn stored_layout_holds_every_complete_subtree_where_the_index_says() {
    let leaves = leaves(300);
    let mut stored = Vec::new();
    for (n, leaf) in leaves.iter().enumerate() {
        let n = n as u64;
        assert_eq!(stored.len() as u64, stored_hash_count(n));
        assert_eq!(stored.len() as u64, stored_hash_index(0, n));
        let new = append_hashes(n, *leaf, &stored).unwrap();
        assert_eq!(new.len() as u32, 1 + n.trailing_ones());
        stored.extend(new);
    }
    assert_eq!(stored.len() as u64, stored_hash_count(300));
    for level in 0..9u32 {
        let width = 1usize << level;
        for k in 0..300 / width {
            let at = stored_hash_index(level, k as u64);
            assert_eq!(
                stored[at as usize],
                mth(&leaves[k * width..(k + 1) * width]),
                "node ({level}, {k})"
            );
            assert_eq!(split_stored_hash_index(at), (level, k as u64));
        }
    }
    for index in 0..stored.len() as u64 {
        let (level, k) = split_stored_hash_index(index);
        assert_eq!(stored_hash_index(level, k), index);
    }
}

#[test]
fn frontier_roots_match_stored_roots_and_can_be_rebuilt() {
    let leaves = leaves(200);
    let stored = stored_of(&leaves);
    let mut frontier = Frontier::new();
    assert_eq!(frontier.root(), empty_root());
    assert_eq!(tree_hash(0, &stored).unwrap(), empty_root());
    for (n, leaf) in leaves.iter().enumerate() {
        frontier.push(*leaf);
        let size = n as u64 + 1;
        assert_eq!(frontier.size(), size);
        assert_eq!(frontier.roots().len() as u32, size.count_ones());
        let root = tree_hash(size, &stored).unwrap();
        assert_eq!(frontier.root(), root);
        assert_eq!(Frontier::read(size, &stored).unwrap(), frontier);
    }
    let again = Frontier::from_roots(frontier.size(), frontier.roots().to_vec()).unwrap();
    assert_eq!(again, frontier);
    assert_eq!(Frontier::from_roots(3, vec![leaves[0]]), None);
}

#[test]
fn impossible_requests_are_the_callers_mistake() {
    let stored = stored_of(&leaves(5));
    let misuse = |r: Result<Vec<Hash>, TreeError<NotStored>>| {
        assert!(matches!(r, Err(TreeError::Misuse(_))), "{r:?}");
    };
    misuse(inclusion_proof(5, 5, &stored));
    misuse(inclusion_proof(0, 0, &stored));
    misuse(consistency_proof(6, 5, &stored));
    misuse(consistency_proof(1, MAX_TREE_SIZE + 1, &stored));
    misuse(append_hashes(MAX_TREE_SIZE, empty_root(), &stored));
    assert!(matches!(
        tree_hash(u64::MAX, &stored),
        Err(TreeError::Misuse(_))
    ));
    assert_eq!(consistency_proof(0, 5, &stored).unwrap(), vec![]);
    assert_eq!(consistency_proof(5, 5, &stored).unwrap(), vec![]);
    // A tree larger than what is stored: the reader says which hash it lacks.
    assert_eq!(
        tree_hash(6, &stored),
        Err(TreeError::Read(NotStored {
            index: stored_hash_index(1, 2)
        }))
    );
    let err = tree_hash(6, &stored).unwrap_err();
    assert_eq!(err.fault(), akledger_core::error::Fault::Io);
    assert!(err.to_string().contains("no hash is stored at index"));
}

/// A reader that drops the last hash it is asked for.
struct Short(Vec<Hash>);

impl HashReader for Short {
    type Error = NotStored;
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, NotStored> {
        let mut out = self.0.read_hashes(indexes)?;
        out.pop();
        Ok(out)
    }
}

#[test]
fn a_short_answer_from_the_reader_is_an_error_not_a_wrong_hash() {
    let short = Short(stored_of(&leaves(8)));
    assert_eq!(
        tree_hash(7, &short),
        Err(TreeError::WrongCount { asked: 3, got: 2 })
    );
    assert!(matches!(
        inclusion_proof(3, 8, &short),
        Err(TreeError::WrongCount { .. })
    ));
    assert!(matches!(
        append_hashes(7, leaf_hash(b"x"), &short),
        Err(TreeError::WrongCount { asked: 3, got: 2 })
    ));
}

#[test]
fn proofs_from_stored_hashes_verify_and_name_their_errors() {
    let leaves = leaves(40);
    let stored = stored_of(&leaves);
    for size in 1..=40u64 {
        let root = tree_hash(size, &stored).unwrap();
        for index in 0..size {
            let proof = inclusion_proof(index, size, &stored).unwrap();
            verify_inclusion(&leaves[index as usize], index, size, &proof, &root).unwrap();
        }
        for old in 0..=size {
            let old_root = tree_hash(old, &stored).unwrap();
            let proof = consistency_proof(old, size, &stored).unwrap();
            verify_consistency(old, size, &proof, &old_root, &root).unwrap();
        }
    }
    let root = tree_hash(7, &stored).unwrap();
    let err = verify_inclusion(&leaves[0], 7, 7, &[], &root).unwrap_err();
    assert_eq!(err.code(), akledger_core::error::Code::ProofInvalid);
    assert_eq!(
        err.to_string(),
        "proof_invalid: leaf 7 is not in a tree of 7 leaves"
    );
}

#[test]
fn consistency_edge_cases() {
    let stored = stored_of(&leaves(4));
    let r = |n| tree_hash(n, &stored).unwrap();
    let empty = empty_root();
    // Equal sizes: the empty proof and equal roots.
    assert!(verify_consistency(3, 3, &[], &r(3), &r(3)).is_ok());
    assert!(verify_consistency(3, 3, &[], &r(3), &r(4)).is_err());
    assert!(verify_consistency(3, 3, &[r(1)], &r(3), &r(3)).is_err());
    // From the empty tree: the empty proof, and the old root is the empty tree's.
    assert!(verify_consistency(0, 0, &[], &empty, &empty).is_ok());
    assert!(verify_consistency(0, 4, &[], &empty, &r(4)).is_ok());
    assert!(verify_consistency(0, 4, &[], &r(1), &r(4)).is_err());
    assert!(verify_consistency(0, 4, &[empty], &empty, &r(4)).is_err());
    assert!(verify_consistency(0, 0, &[], &r(1), &r(1)).is_err());
    // An old size above the new one, and the empty proof between different sizes.
    assert!(verify_consistency(4, 3, &[], &r(4), &r(3)).is_err());
    assert!(verify_consistency(2, 4, &[], &r(2), &r(4)).is_err());
    // Extreme sizes never panic.
    assert!(verify_consistency(u64::MAX - 1, u64::MAX, &[empty; 70], &empty, &empty).is_err());
    assert!(verify_inclusion(&empty, u64::MAX - 1, u64::MAX, &[empty; 70], &empty).is_err());
    assert!(verify_inclusion(&empty, 0, u64::MAX, &[empty; 64], &empty).is_err());
}
