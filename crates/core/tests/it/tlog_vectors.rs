//! Known answers for the verifiable log (PROFILE §13) from independent sources; each block
//! names its source. The values are copied from those sources, not computed here.

use akledger_core::ed25519_dalek::SigningKey;
use akledger_core::tlog::{
    self, cosignature_message, hash_tiles, Checkpoint, Hash, KeyKind, Note, NoteSigner, Tile,
    TileKind, VerifierKey,
};
use akledger_core::Code;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

fn h(hex: &str) -> Hash {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    Hash::from_slice(&bytes).unwrap()
}

fn b(base64: &str) -> Hash {
    Hash::from_base64(base64).unwrap()
}

/// Parses Go's private note key text `PRIVATE+KEY+<name>+<hash>+<base64(0x01 ‖ seed)>`
/// (the format of golang.org/x/mod/sumdb/note), checking its key ID: tests only.
fn signer_of_private_key(text: &str) -> NoteSigner {
    let rest = text
        .strip_prefix("PRIVATE+KEY+")
        .expect("private key prefix");
    let mut parts = rest.splitn(3, '+');
    let (name, id, key) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let raw = STANDARD.decode(key).unwrap();
    assert_eq!(raw[0], 0x01, "Ed25519");
    let seed: [u8; 32] = raw[1..].try_into().unwrap();
    let signer = NoteSigner::new(name, SigningKey::from_bytes(&seed)).unwrap();
    assert_eq!(format!("{:08x}", signer.key_id()), id);
    signer
}

// --- RFC 9162 §2.1.1: the empty tree's hash is SHA-256 of the empty string. The value is
// the one in transparency-dev/merkle `testonly/constants.go` (EmptyRootHash) and in Go's
// golang.org/x/mod/sumdb/tlog (emptyHash).

#[test]
fn empty_tree_hash() {
    assert_eq!(
        tlog::empty_root(),
        h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
    assert_eq!(tlog::tree_hash(0, &Vec::new()).unwrap(), tlog::empty_root());
}

// --- RFC 6962 reference vectors as published by github.com/transparency-dev/merkle,
// `testonly/constants.go`: LeafInputs, NodeHashes (level, index) and RootHashes by size.

const LEAF_INPUTS: [&str; 8] = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

const NODE_HASHES: [&[&str]; 4] = [
    &[
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
        "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
    ],
    &[
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    ],
    &[
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ],
    &["5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"],
];

const ROOT_HASHES: [&str; 9] = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// The stored hashes of the eight reference leaves.
fn reference_log() -> Vec<Hash> {
    let mut stored = Vec::new();
    for (n, input) in LEAF_INPUTS.iter().enumerate() {
        let entry: Vec<u8> = (0..input.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&input[i..i + 2], 16).unwrap())
            .collect();
        let new = tlog::append_hashes(n as u64, tlog::leaf_hash(&entry), &stored).unwrap();
        stored.extend(new);
    }
    stored
}

#[test]
fn reference_roots_and_subtree_hashes() {
    let stored = reference_log();
    let mut frontier = tlog::Frontier::new();
    for (size, root) in ROOT_HASHES.iter().enumerate() {
        assert_eq!(
            tlog::tree_hash(size as u64, &stored).unwrap(),
            h(root),
            "size {size}"
        );
        assert_eq!(frontier.root(), h(root), "frontier at size {size}");
        if let Some(leaf) = NODE_HASHES[0].get(size) {
            frontier.push(h(leaf));
        }
    }
    for (level, row) in NODE_HASHES.iter().enumerate() {
        for (index, node) in row.iter().enumerate() {
            let at = tlog::stored_hash_index(level as u32, index as u64) as usize;
            assert_eq!(stored[at], h(node), "node ({level}, {index})");
        }
    }
}

// transparency-dev/merkle `testdata/inclusion/<n>/happy-path.json`: leafIdx, treeSize, root,
// leafHash and proof.
const INCLUSION: [(u64, u64, &str, &str, &[&str]); 5] = [
    (
        0,
        1,
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        &[],
    ),
    (
        0,
        8,
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        &[
            "lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=",
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=",
        ],
    ),
    (
        5,
        8,
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        "QnGia+DYqE8L1UyMMC58s6O10fpngKQLzOKHNHfatlg=",
        &[
            "vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms=",
            "yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=",
            "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
        ],
    ),
    (
        2,
        3,
        "rra8/idLcKFPsGel5VeCZNsPqbUa9eC6FZFY8yngbnc=",
        "ApjRIpBtz8EIkstTpzmS/FufST6kybrbJ7eRtBJ6f+c=",
        &["+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU="],
    ),
    (
        1,
        5,
        "Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ=",
        "lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=",
        &[
            "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms=",
        ],
    ),
];

// transparency-dev/merkle `testdata/consistency/<n>/happy-path.json`: size1, size2, root1,
// root2 and proof.
const CONSISTENCY: [(u64, u64, &str, &str, &[&str]); 5] = [
    (
        1,
        1,
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        &[],
    ),
    (
        1,
        8,
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        &[
            "lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=",
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "a0eq8p7jwq+a+Im8H7klTavTEXfxYjLdaqsDXKOb9uQ=",
        ],
    ),
    (
        6,
        8,
        "duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=",
        "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
        &[
            "DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=",
            "yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=",
            "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
        ],
    ),
    (
        2,
        5,
        "+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU=",
        "Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ=",
        &[
            "Xwg/ChozygdqlSeYMlgNs+DvRYS9/x9UyKNg9Q3jAx4=",
            "vBoGQ7EuTS18d5GPROD095qDi2z57FtcKD4fTYhZnms=",
        ],
    ),
    (
        6,
        7,
        "duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=",
        "3bib5AOAnjJXUNPSY814kpwpQreUKjS3fhIslZSnTIw=",
        &[
            "DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=",
            "sIaT7C5yFZcTBkHoIR5+7cy0wmQTlj7ubB4u0W/7Gl8=",
            "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
        ],
    ),
];

#[test]
fn reference_inclusion_proofs() {
    let stored = reference_log();
    for (index, size, root, leaf, proof) in INCLUSION {
        let proof: Vec<Hash> = proof.iter().map(|p| b(p)).collect();
        let (root, leaf) = (b(root), b(leaf));
        assert_eq!(tlog::inclusion_proof(index, size, &stored).unwrap(), proof);
        tlog::verify_inclusion(&leaf, index, size, &proof, &root).unwrap();
        // The same file's wantErr neighbours: index ± 1, size doubled or halved, a missing
        // or an extra hash, another leaf.
        for (i, s) in [
            (index + 1, size),
            (index ^ 2, size),
            (index, size * 2),
            (index, size / 2),
        ] {
            if (i, s) != (index, size) {
                assert!(tlog::verify_inclusion(&leaf, i, s, &proof, &root).is_err());
            }
        }
        let mut extra = proof.clone();
        extra.push(leaf);
        assert!(tlog::verify_inclusion(&leaf, index, size, &extra, &root).is_err());
        if let Some((_, shorter)) = proof.split_last() {
            assert!(tlog::verify_inclusion(&leaf, index, size, shorter, &root).is_err());
        }
    }
    // `testdata/inclusion/single-entry/matching-root-and-leaf.json`: index 0 of a tree of one,
    // root = leaf, empty proof; `additional/0/*`: nothing is in a tree of size 0.
    let single = b("DTrtAjFI/9KiWfvQzcf7PPl1ZYdg03dbgq9vkKrMLfw=");
    tlog::verify_inclusion(&single, 0, 1, &[], &single).unwrap();
    let empty = tlog::empty_root();
    let err = tlog::verify_inclusion(&empty, 0, 0, &[], &empty).unwrap_err();
    assert_eq!(err.code(), Code::ProofInvalid);
}

#[test]
fn reference_consistency_proofs() {
    let stored = reference_log();
    for (old, new, old_root, new_root, proof) in CONSISTENCY {
        let proof: Vec<Hash> = proof.iter().map(|p| b(p)).collect();
        let (old_root, new_root) = (b(old_root), b(new_root));
        assert_eq!(tlog::consistency_proof(old, new, &stored).unwrap(), proof);
        tlog::verify_consistency(old, new, &proof, &old_root, &new_root).unwrap();
        // Swapped roots, a truncated proof (`testdata/consistency/<n>/*.json`).
        if old != new {
            assert!(tlog::verify_consistency(old, new, &proof, &new_root, &old_root).is_err());
            let (_, shorter) = proof.split_last().unwrap();
            assert!(tlog::verify_consistency(old, new, shorter, &old_root, &new_root).is_err());
        }
    }
    // `testdata/consistency/additional/*.json` that fit 32-byte roots: an old size above the
    // new one; equal sizes or an empty old tree with a non-empty proof.
    let empty = tlog::empty_root();
    let one = b("bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=");
    assert!(tlog::verify_consistency(2, 1, &[], &one, &one).is_err());
    assert!(tlog::verify_consistency(1, 0, &[], &one, &empty).is_err());
    assert!(tlog::verify_consistency(0, 1, &[empty], &empty, &empty).is_err());
    assert!(tlog::verify_consistency(1, 1, &[empty], &empty, &empty).is_err());
    assert!(tlog::verify_consistency(0, 0, &[empty], &empty, &empty).is_err());
    assert!(tlog::verify_consistency(1, 1, &[], &one, &empty).is_err());
    assert!(tlog::verify_consistency(1, 1, &[], &one, &one).is_ok());
    // Where this engine differs on purpose: transparency-dev refuses every proof from size 0
    // ("size1-is-zero-and-size2-is-not-zero"); PROFILE §13 allows m = 0, and the empty tree
    // is a prefix of every tree, so the empty proof from the empty root holds.
    assert!(tlog::verify_consistency(0, 1, &[], &empty, &one).is_ok());
}

// --- Go's golang.org/x/mod/sumdb/note: the package documentation's example and
// `note_test.go` (TestNewVerifier, TestSign, TestOpen), copied byte for byte.

const PETER_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const ENOCH_VKEY: &str = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
pub(crate) const TEXT: &str = "If you think cryptography is the answer to your problem,\n\
                    then you don't know what your problem is.\n";
pub(crate) const PETER_SIG: &str = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
pub(crate) const ENOCH_SIG: &str = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

#[test]
fn go_note_signer_reproduces_the_documented_signature() {
    let signer = signer_of_private_key(PETER_SKEY);
    assert_eq!(signer.name(), "PeterNeumann");
    assert_eq!(signer.key_id(), 0xc74f20a3);
    assert_eq!(signer.verifier_key().to_string(), PETER_VKEY);
    let note = signer.sign(TEXT).unwrap();
    assert_eq!(note, format!("{TEXT}\n{PETER_SIG}"));
}

#[test]
fn go_note_verifier_accepts_the_documented_note_and_refuses_tampering() {
    let peter = VerifierKey::parse(PETER_VKEY).unwrap();
    let enoch = VerifierKey::parse(ENOCH_VKEY).unwrap();
    assert_eq!((peter.name(), peter.key_id()), ("PeterNeumann", 0xc74f20a3));
    assert_eq!(peter.kind(), KeyKind::Ed25519);
    assert_eq!(peter.to_string(), PETER_VKEY);

    let msg = format!("{TEXT}\n{PETER_SIG}");
    let note = Note::parse(msg.as_bytes()).unwrap();
    assert_eq!(note.text(), TEXT);
    let verified = note.verify(std::slice::from_ref(&peter)).unwrap();
    assert_eq!(
        (verified[0].name.as_str(), verified[0].key_id),
        ("PeterNeumann", 0xc74f20a3)
    );

    // Two signatures: Peter's verified and Enoch's skipped, or both verified.
    let both = format!("{TEXT}\n{PETER_SIG}{ENOCH_SIG}");
    let note = Note::parse(both.as_bytes()).unwrap();
    assert_eq!(note.verify(std::slice::from_ref(&peter)).unwrap().len(), 1);
    assert_eq!(
        note.verify(std::slice::from_ref(&enoch)).unwrap()[0].name,
        "EnochRoot"
    );
    assert_eq!(note.verify(&[peter.clone(), enoch]).unwrap().len(), 2);
    assert!(note.verify(&[]).is_err());

    // A tampered text, a tampered signature (TestOpen's "ABCD" insertion, and one flipped
    // character), a signature by Peter's name with another key ID.
    let tampered_text = msg.replace("answer", "Answer");
    assert!(Note::parse(tampered_text.as_bytes())
        .unwrap()
        .verify(std::slice::from_ref(&peter))
        .is_err());
    let inserted = format!("{TEXT}\n{}ABCD{}", &PETER_SIG[..60], &PETER_SIG[60..]);
    let err = Note::parse(inserted.as_bytes())
        .unwrap()
        .verify(std::slice::from_ref(&peter))
        .unwrap_err();
    assert_eq!(err.code(), Code::CheckpointInvalid);
    let flipped = msg.replace("x08go/ZJkuBS9UG", "x08go/ZJkuBS9UH");
    assert!(Note::parse(flipped.as_bytes())
        .unwrap()
        .verify(std::slice::from_ref(&peter))
        .is_err());
    let other_id = msg.replace("x08g", "xxxx");
    assert!(Note::parse(other_id.as_bytes())
        .unwrap()
        .verify(std::slice::from_ref(&peter))
        .is_err());

    // TestOpen's malformed messages and 101 signatures.
    for bad in [
        TEXT.to_string(),
        format!("{TEXT}\n"),
        format!("{TEXT}\n{}", &PETER_SIG[..PETER_SIG.len() - 1]),
        format!("\x01{TEXT}\n{PETER_SIG}"),
        format!("{TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="),
        format!("{TEXT}\n{PETER_SIG}Unexpected line.\n"),
        format!("{TEXT}\n{}", PETER_SIG.repeat(101)),
    ] {
        assert!(Note::parse(bad.as_bytes()).is_err(), "{bad:?}");
    }
    let invalid_utf8 = [b"\xff".as_slice(), msg.as_bytes()].concat();
    assert!(Note::parse(&invalid_utf8).is_err());
    assert_eq!(
        Note::parse(format!("{TEXT}\n{}", PETER_SIG.repeat(100)).as_bytes())
            .unwrap()
            .verify(&[peter])
            .unwrap()
            .len(),
        100
    );
}

#[test]
fn go_verifier_key_manglings_are_refused() {
    // TestNewVerifier: every proper substring and every single-byte increment fails, and
    // the two keys with adjusted hashes (a key of the wrong length, an unknown algorithm).
    let key = PETER_VKEY.as_bytes();
    for i in 0..=key.len() {
        for j in i + 1..=key.len() {
            if (i, j) != (0, key.len()) {
                let part = std::str::from_utf8(&key[i..j]).unwrap();
                assert!(VerifierKey::parse(part).is_err(), "{part}");
            }
        }
    }
    for i in 0..key.len() {
        let mut k = key.to_vec();
        k[i] += 1;
        assert!(VerifierKey::parse(std::str::from_utf8(&k).unwrap()).is_err());
    }
    assert!(VerifierKey::parse(
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=="
    )
    .is_err());
    assert!(VerifierKey::parse(
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    )
    .is_err());
}

// --- C2SP signed-note.md, "Example": a verifier key and the note it verifies.

#[test]
fn c2sp_signed_note_example() {
    let key =
        VerifierKey::parse("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
            .unwrap();
    let note = "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
    let parsed = Note::parse(note.as_bytes()).unwrap();
    assert_eq!(parsed.text(), "This is an example message.\n");
    assert_eq!(
        parsed.verify(std::slice::from_ref(&key)).unwrap()[0].name,
        "example.com/foo"
    );
    let tampered = note.replace("example message", "example massage");
    assert!(Note::parse(tampered.as_bytes())
        .unwrap()
        .verify(&[key])
        .is_err());

    // The document's opening note (no key published): its text holds a blank line and
    // non-ASCII letters, and is separated from the signature by the last blank line.
    let poem = "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n\n— quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n";
    let parsed = Note::parse(poem.as_bytes()).unwrap();
    assert!(parsed.text().ends_with(":\n\ned è subito sera.\n"));
    assert_eq!(parsed.signatures()[0].name(), "quasimodo.example/salvatore");
    assert_eq!(parsed.signatures()[0].signature().len(), 64);
    assert_eq!(parsed.to_bytes(), poem.as_bytes());
}

// --- C2SP tlog-checkpoint.md and tlog-cosignature.md: the example checkpoint with the
// log's signature and a witness's cosignature, and the cosigned message it shows.

pub(crate) const SOFA_NOTE: &str = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n";

#[test]
fn c2sp_checkpoint_and_cosignature_examples() {
    let note = Note::parse(SOFA_NOTE.as_bytes()).unwrap();
    assert_eq!(note.to_bytes(), SOFA_NOTE.as_bytes());
    let checkpoint = Checkpoint::parse(note.text()).unwrap();
    assert_eq!(checkpoint.origin(), "example.com/behind-the-sofa");
    assert_eq!(checkpoint.size(), 20852163);
    assert_eq!(
        checkpoint.root().to_base64(),
        "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="
    );
    assert_eq!(checkpoint.to_text(), note.text());
    let [log, witness] = note.signatures() else {
        panic!("two signatures")
    };
    assert_eq!(log.signature().len(), 64);
    // The cosignature: key ID, then the timestamp 1679315147 (the one in the document's
    // signed-message example) in 8 big-endian bytes, then 64 signature bytes.
    assert_eq!(witness.name(), "witness.example.com/w1");
    assert_eq!(witness.signature().len(), 8 + 64);
    let time = u64::from_be_bytes(witness.signature()[..8].try_into().unwrap());
    assert_eq!(time, 1679315147);
    assert_eq!(
        cosignature_message(note.text(), time),
        "cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    );
}

// --- C2SP tlog-tiles.md: the index path example and the two tile-set examples.

#[test]
fn c2sp_tile_examples() {
    let tile = |level, index, width| Tile {
        kind: TileKind::Hashes { level },
        index,
        width,
    };
    assert_eq!(tile(0, 1_234_067, 256).path(), "tile/0/x001/x234/067");
    let bundle = Tile {
        kind: TileKind::Entries,
        index: 1_234_067,
        width: 7,
    };
    assert_eq!(bundle.path(), "tile/entries/x001/x234/067.p/7");

    // "A tree of size 70,000 will be represented by 273 full level 0 tiles, one partial level
    // 0 tile of width 112, one full level 1 tile, one partial level 1 tile of width 17, and
    // one partial level 2 tile of width 1."
    let tiles: Vec<Tile> = hash_tiles(70_000).collect();
    let mut expected: Vec<Tile> = (0..273).map(|n| tile(0, n, 256)).collect();
    expected.extend([
        tile(0, 273, 112),
        tile(1, 0, 256),
        tile(1, 1, 17),
        tile(2, 0, 1),
    ]);
    assert_eq!(tiles, expected);
    assert_eq!(tile(1, 1, 17).path(), "tile/1/001.p/17");

    // "A tree of size 256 will be represented by a full level 0 tile and a partial level 1
    // tile of width 1."
    assert_eq!(
        hash_tiles(256).collect::<Vec<_>>(),
        [tile(0, 0, 256), tile(1, 0, 1)]
    );
}
