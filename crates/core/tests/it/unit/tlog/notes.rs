//! Note keys, notes, checkpoints and cosignatures: syntax, bounds and the verification rule.

use ed25519_dalek::SigningKey;

use super::*;
use akledger_core::error::Code;
use akledger_core::limits::{MAX_NOTE_BYTES, MAX_NOTE_SIGNATURES};

fn signer(name: &str, seed: u8) -> NoteSigner {
    NoteSigner::new(name, SigningKey::from_bytes(&[seed; 32])).unwrap()
}

fn cosigner(name: &str, seed: u8) -> Cosigner {
    Cosigner::new(name, SigningKey::from_bytes(&[seed; 32])).unwrap()
}

fn checkpoint(size: u64) -> Checkpoint {
    Checkpoint::new("example.com/log", size, leaf_hash(&size.to_be_bytes())).unwrap()
}

#[test]
fn key_names() {
    for good in ["a", "example.com/log", "akledger/abc_-", "ünïcode"] {
        assert!(is_valid_key_name(good), "{good}");
    }
    for bad in [
        "",
        "a+b",
        "a b",
        "a\tb",
        "a\u{a0}b",
        "a\u{2003}b",
        "a\u{1}b",
        "a\nb",
    ] {
        assert!(!is_valid_key_name(bad), "{bad:?}");
    }
    assert!(NoteSigner::new("a b", SigningKey::from_bytes(&[1; 32])).is_err());
}

#[test]
fn verifier_keys_round_trip_and_refuse_variants() {
    let s = signer("example.com/log", 1);
    let text = s.verifier_key().to_string();
    let parsed = VerifierKey::parse(&text).unwrap();
    assert_eq!(&parsed, s.verifier_key());
    assert_eq!(parsed.kind(), KeyKind::Ed25519);
    assert_eq!(format!("{parsed:?}"), format!("VerifierKey({text})"));
    assert_eq!(text.parse::<VerifierKey>().unwrap(), parsed);
    let c = cosigner("witness.example/w1", 2);
    let ctext = c.verifier_key().to_string();
    assert_eq!(
        VerifierKey::parse(&ctext).unwrap().kind(),
        KeyKind::CosignatureV1
    );
    // The same name and key under the other type has another ID.
    assert_ne!(
        c.verifier_key().key_id(),
        key_id(
            "witness.example/w1",
            ED25519_TYPE,
            c.verifier_key().public_key().as_bytes()
        )
    );
    let (name, rest) = text.split_once('+').unwrap();
    let (_, key64) = rest.split_once('+').unwrap();
    // Upper-case hex, a wrong ID, a missing part.
    let upper = format!("{name}+{:08X}+{key64}", parsed.key_id());
    if upper != text {
        assert!(VerifierKey::parse(&upper).is_err());
    }
    assert!(VerifierKey::parse(&format!("{name}+00000000+{key64}")).is_err());
    assert!(VerifierKey::parse(&format!("{name}+{key64}")).is_err());
    assert!(VerifierKey::parse("").is_err());
    let err = VerifierKey::parse("x+y+z").unwrap_err();
    assert_eq!(err.code(), Code::CheckpointInvalid);
}

#[test]
fn a_signed_note_parses_back_to_its_bytes_and_verifies() {
    let s = signer("example.com/log", 1);
    let text = "line one\n\nline three after a blank line\n";
    let note = s.sign(text).unwrap();
    let parsed = Note::parse(note.as_bytes()).unwrap();
    assert_eq!(parsed.text(), text);
    assert_eq!(parsed.to_bytes(), note.as_bytes());
    let verified = parsed.verify(&[s.verifier_key().clone()]).unwrap();
    assert_eq!(verified.len(), 1);
    assert_eq!(verified[0].name, "example.com/log");
    assert_eq!(verified[0].time, None);
    assert!(note.ends_with('\n'));
    assert!(note.contains("\n\n\u{2014} example.com/log "));
}

#[test]
fn unknown_signers_are_skipped_but_one_known_signature_is_needed() {
    let (a, b) = (signer("a.example", 1), signer("b.example", 2));
    let text = "hello\n";
    let note = Note::new(
        text,
        vec![a.sign_text(text).unwrap(), b.sign_text(text).unwrap()],
    )
    .unwrap();
    assert_eq!(
        note.verify(&[b.verifier_key().clone()]).unwrap()[0].name,
        "b.example"
    );
    let none = note.verify(&[]).unwrap_err();
    assert_eq!(none.code(), Code::CheckpointInvalid);
    // A known key whose signature fails rejects the note, even when another verifies.
    let forged = NoteSignature::new("b.example", b.key_id(), vec![0; 64]).unwrap();
    let bad = Note::new(text, vec![a.sign_text(text).unwrap(), forged]).unwrap();
    let err = bad
        .verify(&[a.verifier_key().clone(), b.verifier_key().clone()])
        .unwrap_err();
    assert_eq!(err.message(), "the signature by b.example does not verify");
    // Same name, other ID; same ID, other name: both unknown, skipped.
    let other_id = NoteSignature::new("a.example", a.key_id() ^ 1, vec![0; 64]).unwrap();
    let other_name = NoteSignature::new("c.example", a.key_id(), vec![0; 64]).unwrap();
    let note = Note::new(text, vec![other_id, other_name, a.sign_text(text).unwrap()]).unwrap();
    assert_eq!(note.verify(&[a.verifier_key().clone()]).unwrap().len(), 1);
}

#[test]
fn note_syntax_is_checked() {
    let s = signer("a.example", 1);
    let good = s.sign("text\n").unwrap();
    let line = good.strip_prefix("text\n\n").unwrap();
    let bad: Vec<Vec<u8>> = vec![
        b"text\n".to_vec(),
        b"text\n\n".to_vec(),
        format!("text\n\n{}", line.trim_end()).into_bytes(),
        format!("\x01text\n\n{line}").into_bytes(),
        format!("te\rxt\n\n{line}").into_bytes(),
        [b"\xfftext\n\n".as_slice(), line.as_bytes()].concat(),
        format!("text\n\n{line}trailing\n").into_bytes(),
        format!("text\n\n{}", line.replace("\u{2014} ", "- ")).into_bytes(),
        format!("text\n\n{}", line.replacen(' ', "", 2)).into_bytes(),
        format!("text\n\n{}", line.replace("a.example ", "a.example  ")).into_bytes(),
        "text\n\n\u{2014} a.example AAAAAA==\n".into(),
        "text\n\n\u{2014} a.example \n".into(),
        "text\n\n\u{2014}  AAAAAAA=\n".into(),
    ];
    for b in &bad {
        let err = Note::parse(b).unwrap_err();
        assert_eq!(
            err.code(),
            Code::CheckpointInvalid,
            "{:?}",
            String::from_utf8_lossy(b)
        );
    }
    assert!(Note::parse(good.as_bytes()).is_ok());
    assert!(s.sign("no newline").is_err());
    assert!(s.sign("tab\there\n").is_err());
    assert!(Note::new("text\n", vec![]).is_err());
}

#[test]
fn note_bounds() {
    let s = signer("a.example", 1);
    let line = s.sign_text("t\n").unwrap();
    let many = |n: usize| {
        let mut note = String::from("t\n\n");
        for _ in 0..n {
            note.push_str(&line.line());
        }
        note
    };
    let at = Note::parse(many(MAX_NOTE_SIGNATURES).as_bytes()).unwrap();
    assert_eq!(
        at.verify(&[s.verifier_key().clone()]).unwrap().len(),
        MAX_NOTE_SIGNATURES
    );
    assert!(Note::parse(many(MAX_NOTE_SIGNATURES + 1).as_bytes()).is_err());
    assert!(Note::new("t\n", vec![line.clone(); MAX_NOTE_SIGNATURES + 1]).is_err());
    let long = format!("{}\n", "x".repeat(MAX_NOTE_BYTES));
    assert!(s.sign(&long).is_err());
    let mut huge = long.into_bytes();
    huge.extend_from_slice(b"\n");
    huge.extend_from_slice(line.line().as_bytes());
    assert!(Note::parse(&huge).is_err());
}

#[test]
fn checkpoint_bodies() {
    let c = checkpoint(20852163);
    let text = c.to_text();
    assert_eq!(Checkpoint::parse(&text).unwrap(), c);
    let with = c
        .clone()
        .with_extensions(vec!["ext one".into(), "ext two".into()])
        .unwrap();
    let wtext = with.to_text();
    assert!(wtext.ends_with("ext one\next two\n"));
    assert_eq!(
        Checkpoint::parse(&wtext).unwrap().extensions(),
        ["ext one", "ext two"]
    );
    let root = c.root().to_base64();
    for bad in [
        format!("o\n1\n{root}"),
        "o\n1\n".to_string(),
        format!("\n1\n{root}\n"),
        format!("o\n01\n{root}\n"),
        format!("o\n-1\n{root}\n"),
        format!("o\n+1\n{root}\n"),
        format!("o\n1 \n{root}\n"),
        format!("o\n18446744073709551616\n{root}\n"),
        format!("o\n1\n{}\n", &root[..43]),
        format!("o\n1\n{}\n", root.replace('=', "")),
        format!("o\n1\n{root}\n\n"),
        format!("o\n1\n{root}\next\n\n"),
        format!("o\n1\n{root}\ne\rt\n"),
    ] {
        assert!(Checkpoint::parse(&bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        Checkpoint::parse(&format!("o\n0\n{root}\n"))
            .unwrap()
            .size(),
        0
    );
    let max = Checkpoint::parse(&format!("o\n18446744073709551615\n{root}\n")).unwrap();
    assert_eq!(max.size(), u64::MAX);
    assert!(Checkpoint::new("", 1, empty_root()).is_err());
    assert!(Checkpoint::new("a\nb", 1, empty_root()).is_err());
    assert!(c.with_extensions(vec![String::new()]).is_err());
}

#[test]
fn checkpoints_are_signed_by_their_origin_and_opened_with_its_key() {
    let s = signer("example.com/log", 1);
    let c = checkpoint(5);
    let note = c.sign(&s).unwrap();
    assert_eq!(
        Checkpoint::open(note.as_bytes(), s.verifier_key()).unwrap(),
        c
    );
    // Another origin's key cannot sign it, another key cannot open it.
    assert!(c.sign(&signer("example.com/other", 1)).is_err());
    let other = signer("example.com/log", 2);
    let err = Checkpoint::open(note.as_bytes(), other.verifier_key()).unwrap_err();
    assert_eq!(err.code(), Code::CheckpointInvalid);
    // A note by a key whose name is not the checkpoint's origin.
    let misnamed = signer("example.com/elsewhere", 1);
    let note = misnamed.sign(&c.to_text()).unwrap();
    assert!(Checkpoint::open(note.as_bytes(), misnamed.verifier_key()).is_err());
    // A cosigner's key is not a log key.
    let w = cosigner("example.com/log", 3);
    assert!(Checkpoint::open(note.as_bytes(), w.verifier_key()).is_err());
    // Tampered size.
    let note = c.sign(&s).unwrap().replacen("\n5\n", "\n6\n", 1);
    assert!(Checkpoint::open(note.as_bytes(), s.verifier_key()).is_err());
}

#[test]
fn check_log_reports_mismatches() {
    let c = checkpoint(5);
    assert!(c.check_log(5, c.root()).is_ok());
    assert!(c.check_log(9, c.root()).is_ok());
    let short = c.check_log(4, c.root()).unwrap_err();
    assert_eq!(short.code(), Code::CheckpointMismatch);
    let other = c.check_log(5, &empty_root()).unwrap_err();
    assert_eq!(other.code(), Code::CheckpointMismatch);
}

#[test]
fn cosignatures_verify_with_their_time() {
    let log = signer("example.com/log", 1);
    let w = cosigner("witness.example/w1", 2);
    let c = checkpoint(7);
    let note = Note::parse(c.sign(&log).unwrap().as_bytes()).unwrap();
    let mut sigs = note.signatures().to_vec();
    let cosig = w.cosign(&c, 1_679_315_147).unwrap();
    assert_eq!(cosig.signature().len(), 72);
    assert_eq!(cosig.signature()[..8], 1_679_315_147u64.to_be_bytes());
    sigs.push(cosig.clone());
    let cosigned = Note::new(note.text(), sigs).unwrap();
    let verified = cosigned
        .verify(&[log.verifier_key().clone(), w.verifier_key().clone()])
        .unwrap();
    assert_eq!(verified.len(), 2);
    assert_eq!(verified[1].kind, KeyKind::CosignatureV1);
    assert_eq!(verified[1].time, Some(1_679_315_147));
    // The log's own key still opens it; the cosignature is skipped.
    let bytes = cosigned.to_bytes();
    assert_eq!(Checkpoint::open(&bytes, log.verifier_key()).unwrap(), c);
    // Another time, or a time past 2^63 - 1, does not verify.
    let mut moved = cosig.signature().to_vec();
    moved[7] ^= 1;
    let moved = NoteSignature::new(w.name(), w.key_id(), moved).unwrap();
    let note = Note::new(note.text(), vec![moved]).unwrap();
    assert!(note.verify(&[w.verifier_key().clone()]).is_err());
    assert!(w.cosign(&c, 1 << 63).is_err());
    assert!(w.cosign(&c, (1 << 63) - 1).is_ok());
    assert_eq!(
        cosignature_message(&c.to_text(), 12),
        format!("cosignature/v1\ntime 12\n{}", c.to_text())
    );
    assert!(format!("{w:?}").starts_with("Cosigner(witness.example/w1+"));
    assert!(format!("{log:?}").starts_with("NoteSigner(example.com/log+"));
}
