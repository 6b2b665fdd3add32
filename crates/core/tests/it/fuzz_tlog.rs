//! The fuzz targets `note` and `tlog_proof` (PROFILE §13). `check_note` and
//! `check_tlog_proof` are shared with the cargo-fuzz targets (`fuzz/fuzz_targets/note.rs`,
//! `fuzz/fuzz_targets/tlog_proof.rs`); their corpora and regressions are replayed here on
//! stable, and the property tests of `tlog_oracle` run them on random bytes.
// Each fuzz target includes both checks and uses one.
#![allow(dead_code)]

use akledger_core::ed25519_dalek::SigningKey;
use akledger_core::limits::MAX_NOTE_SIGNATURES;
use akledger_core::tlog::{
    append_hashes, consistency_proof, inclusion_proof, leaf_hash, tree_hash, verify_consistency,
    verify_inclusion, Checkpoint, ConsistencyProof, Cosigner, Hash, InclusionProof, Note,
    NoteSigner, VerifierKey,
};

/// Go's `sumdb/note` example key (public): the seeds hold the note it signed.
const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

/// A log key of the fixed set: its checkpoints in the seeds verify.
pub fn log_signer() -> NoteSigner {
    NoteSigner::new("example.com/log", SigningKey::from_bytes(&[3; 32])).unwrap()
}

/// A witness of the fixed set: its cosignatures in the seeds verify.
pub fn witness() -> Cosigner {
    Cosigner::new("witness.example/w1", SigningKey::from_bytes(&[4; 32])).unwrap()
}

/// The keys arbitrary notes are verified against.
fn known_keys() -> Vec<VerifierKey> {
    vec![
        log_signer().verifier_key().clone(),
        witness().verifier_key().clone(),
        VerifierKey::parse(PETER_VKEY).unwrap(),
    ]
}

/// `note`: arbitrary bytes as a signed note, a checkpoint body and a verifier key. Nothing
/// panics; what parses writes back to the same bytes; what verifies names a known key; a
/// verified checkpoint's note opens with the log key exactly when it verifies with it.
pub fn check_note(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(key) = VerifierKey::parse(text) {
            assert_eq!(
                key.to_string(),
                text,
                "a verifier key writes back as parsed"
            );
        }
        if let Ok(checkpoint) = Checkpoint::parse(text) {
            assert_eq!(
                checkpoint.to_text(),
                text,
                "a checkpoint writes back as parsed"
            );
        }
    }
    let keys = known_keys();
    let opened = Checkpoint::open(data, &keys[0]);
    let Ok(note) = Note::parse(data) else {
        assert!(opened.is_err(), "a note that does not parse cannot open");
        return;
    };
    assert_eq!(note.to_bytes(), data, "a note writes back as parsed");
    assert!(!note.signatures().is_empty() && note.signatures().len() <= MAX_NOTE_SIGNATURES);
    if let Ok(verified) = note.verify(&keys) {
        assert!(!verified.is_empty());
        for v in &verified {
            assert!(keys
                .iter()
                .any(|k| k.name() == v.name && k.key_id() == v.key_id && k.kind() == v.kind));
        }
    }
    if let Ok(checkpoint) = opened {
        assert!(note.verify(&keys[..1]).is_ok());
        assert_eq!(checkpoint.origin(), "example.com/log");
        assert_eq!(checkpoint.to_text(), note.text());
    }
}

/// Reads numbers and hashes off the input, zeros once it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        let n = self.0.len().min(N);
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn hash(&mut self) -> Hash {
        Hash(self.take())
    }
}

/// Most leaves of the tree `check_tlog_proof` builds from its input.
pub const FUZZ_TREE_LEAVES: u64 = 300;

/// `tlog_proof`: arbitrary bytes as proof JSON and as verifier inputs, then as the shape of
/// a real tree. Nothing panics; JSON that parses writes back to an equal proof; honest
/// proofs verify, and a mutated proof verifies exactly when it is the honest proof of what
/// it is checked for.
pub fn check_tlog_proof(data: &[u8]) {
    if let Ok(p) = InclusionProof::from_json(data) {
        assert_eq!(InclusionProof::from_json(&p.to_json()), Ok(p));
    }
    if let Ok(p) = ConsistencyProof::from_json(data) {
        assert_eq!(ConsistencyProof::from_json(&p.to_json()), Ok(p));
    }

    let mut input = Input(data);
    let (index, size, old, new) = (input.u64(), input.u64(), input.u64(), input.u64());
    let (a, b) = (input.hash(), input.hash());
    let hashes: Vec<Hash> = input
        .0
        .chunks(32)
        .take(200)
        .map(|c| Input(c).hash())
        .collect();
    for (i, s, m, n) in [
        (index, size, old, new),
        (index % 300, size % 300, old % 300, new % 300),
    ] {
        if verify_inclusion(&a, i, s, &hashes, &b).is_ok() {
            assert!(i < s && hashes.len() <= 64);
        }
        if verify_consistency(m, n, &hashes, &a, &b).is_ok() {
            assert!(m <= n && hashes.len() <= 65);
        }
    }

    let size = 1 + u64::from(u16::from_le_bytes([
        data.first().copied().unwrap_or(0),
        data.get(1).copied().unwrap_or(0),
    ])) % FUZZ_TREE_LEAVES;
    let leaves: Vec<Hash> = (0..size).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let mut stored = Vec::new();
    for (n, leaf) in leaves.iter().enumerate() {
        let new = append_hashes(n as u64, *leaf, &stored).unwrap();
        stored.extend(new);
    }
    check_proofs_of(&leaves, &stored, index % size, size, old % (size + 1), new);
}

/// The honest inclusion proof of `index` and consistency proof from `old`, in the tree of
/// `size` of the `stored` hashes of `leaves`, verify; each mutation (a flipped bit, a hash
/// dropped or added, another index, another size with that size's root) verifies exactly when
/// it is itself the honest proof of what it is checked for. `pick` chooses the bits.
pub fn check_proofs_of(
    leaves: &[Hash],
    stored: &[Hash],
    index: u64,
    size: u64,
    old: u64,
    pick: u64,
) {
    let max = leaves.len() as u64;
    let root_of = |n: u64| tree_hash(n, stored).unwrap();
    let root = root_of(size);
    let leaf = leaves[index as usize];
    let proof = inclusion_proof(index, size, stored).unwrap();
    verify_inclusion(&leaf, index, size, &proof, &root).unwrap();
    for mutated in mutations(&proof, pick) {
        assert!(verify_inclusion(&leaf, index, size, &mutated, &root).is_err());
    }
    if size > 1 {
        let other = (index + 1 + pick % (size - 1)) % size;
        assert!(verify_inclusion(&leaf, other, size, &proof, &root).is_err());
    }
    for s in [size - 1, size + 1] {
        if s > index && s <= max {
            let honest = inclusion_proof(index, s, stored).unwrap() == proof;
            let ok = verify_inclusion(&leaf, index, s, &proof, &root_of(s)).is_ok();
            assert_eq!(
                ok, honest,
                "inclusion of {index} checked for size {s}, not {size}"
            );
        }
    }

    let old_root = root_of(old);
    let proof = consistency_proof(old, size, stored).unwrap();
    verify_consistency(old, size, &proof, &old_root, &root).unwrap();
    for mutated in mutations(&proof, pick) {
        assert!(verify_consistency(old, size, &mutated, &old_root, &root).is_err());
    }
    for (m, n) in [
        (old.wrapping_sub(1), size),
        (old + 1, size),
        (old, size - 1),
        (old, size + 1),
    ] {
        if m <= n && n <= max {
            let honest = consistency_proof(m, n, stored).unwrap() == proof;
            let ok = verify_consistency(m, n, &proof, &root_of(m), &root_of(n)).is_ok();
            assert_eq!(ok, honest, "consistency {old}->{size} checked as {m}->{n}");
        }
    }
}

/// A proof with one bit flipped, with a hash dropped, and with a hash added.
fn mutations(proof: &[Hash], pick: u64) -> Vec<Vec<Hash>> {
    let mut out = Vec::new();
    if !proof.is_empty() {
        let at = (pick % proof.len() as u64) as usize;
        let mut flipped = proof.to_vec();
        flipped[at].0[(pick >> 8) as usize % 32] ^= 1 << (pick % 8);
        out.push(flipped);
        let mut dropped = proof.to_vec();
        dropped.remove(at);
        out.push(dropped);
    }
    let mut added = proof.to_vec();
    added.insert(
        (pick as usize) % (proof.len() + 1),
        leaf_hash(&pick.to_le_bytes()),
    );
    out.push(added);
    out
}

#[cfg(test)]
mod replay {
    use super::*;

    #[test]
    fn note() {
        let n = akledger_testkit_core::replay_corpus("note", check_note);
        assert!(n > 0, "no corpus for note");
    }

    #[test]
    fn tlog_proof() {
        let n = akledger_testkit_core::replay_corpus("tlog_proof", check_tlog_proof);
        assert!(n > 0, "no corpus for tlog_proof");
    }

    /// Regenerates the seed corpora `fuzz/corpus/note` and `fuzz/corpus/tlog_proof` (run by
    /// hand: `cargo test -p akledger-core --test it -- --ignored write_tlog_seed_corpus`).
    #[test]
    #[ignore]
    fn write_tlog_seed_corpus() {
        use crate::tlog_vectors::{ENOCH_SIG, PETER_SIG, SOFA_NOTE, TEXT};
        use akledger_core::id::{DigestSuite, EventId};

        let root = akledger_testkit_core::workspace_root().join("fuzz/corpus");
        let put = |target: &str, name: &str, bytes: &[u8]| {
            let dir = root.join(target);
            std::fs::create_dir_all(&dir).expect("corpus dir");
            std::fs::write(dir.join(name), bytes).expect("write seed");
        };

        // note: Go's and C2SP's examples, a checkpoint of the fixed log cosigned by the fixed
        // witness, and malformed notes.
        put(
            "note",
            "go-peter",
            format!("{TEXT}\n{PETER_SIG}").as_bytes(),
        );
        put(
            "note",
            "go-peter-enoch",
            format!("{TEXT}\n{PETER_SIG}{ENOCH_SIG}").as_bytes(),
        );
        put("note", "c2sp-cosigned-checkpoint", SOFA_NOTE.as_bytes());
        put("note", "peter-vkey", PETER_VKEY.as_bytes());
        let log = log_signer();
        let leaves: Vec<Hash> = (0..5u64).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let mut stored = Vec::new();
        for (n, leaf) in leaves.iter().enumerate() {
            let new = append_hashes(n as u64, *leaf, &stored).unwrap();
            stored.extend(new);
        }
        let checkpoint =
            Checkpoint::new("example.com/log", 5, tree_hash(5, &stored).unwrap()).unwrap();
        let signed = checkpoint.sign(&log).unwrap();
        put("note", "checkpoint", signed.as_bytes());
        put("note", "checkpoint-body", checkpoint.to_text().as_bytes());
        let mut sigs = Note::parse(signed.as_bytes())
            .unwrap()
            .signatures()
            .to_vec();
        sigs.push(witness().cosign(&checkpoint, 1_700_000_000).unwrap());
        let cosigned = Note::new(&checkpoint.to_text(), sigs).unwrap();
        assert_eq!(cosigned.verify(&known_keys()).unwrap().len(), 2);
        put("note", "checkpoint-cosigned", &cosigned.to_bytes());
        put(
            "note",
            "no-blank-line",
            signed.replace("\n\n", "\n").as_bytes(),
        );
        put(
            "note",
            "tampered-size",
            signed.replacen("\n5\n", "\n6\n", 1).as_bytes(),
        );
        put(
            "note",
            "too-many-signatures",
            format!("{TEXT}\n{}", PETER_SIG.repeat(101)).as_bytes(),
        );

        // tlog_proof: tree shapes and mutation picks, and the two JSON forms.
        for (name, bytes) in [
            ("size-1", vec![0u8; 8]),
            (
                "size-7-index-3",
                vec![6, 0, 3, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 9],
            ),
            (
                "size-256",
                vec![255, 0, 200, 0, 0, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, 77],
            ),
            (
                "size-300",
                vec![
                    43, 1, 17, 1, 0, 0, 0, 0, 31, 1, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3,
                ],
            ),
            ("max-sizes", [[0xff; 32].as_slice(), &[0x11; 96]].concat()),
        ] {
            put("tlog_proof", name, &bytes);
        }
        let id = EventId::of_preimage(DigestSuite::Blake3, b"seed");
        let path = inclusion_proof(2, 5, &stored).unwrap();
        let inclusion = InclusionProof::new("example.com/log", 5, 2, id, path).unwrap();
        put("tlog_proof", "inclusion.json", &inclusion.to_json());
        let path = consistency_proof(3, 5, &stored).unwrap();
        let consistency = ConsistencyProof::new("example.com/log", 3, 5, path).unwrap();
        put("tlog_proof", "consistency.json", &consistency.to_json());
        let unknown =
            String::from_utf8(consistency.to_json())
                .unwrap()
                .replacen('{', "{\"extra\":1,", 1);
        put("tlog_proof", "unknown-member.json", unknown.as_bytes());
    }
}
