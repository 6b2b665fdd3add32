//! Signature validity is the ZIP-215 rule (PROFILE v1.1 §4), and a batch gives the answers
//! single verification gives. Known answers: the 196 small-order / non-canonical cases Zcash
//! publishes for ZIP 215 (`tests/data/zip215/`, all valid), plus cases ZIP 215 rejects.

use akledger_testkit as common;

use akledger::canonical::to_canonical;
use akledger::did::verification_method;
use akledger::ed25519_dalek::{Signature, Signer, VerifyingKey};
use akledger::proof::{verify_batch, SignatureCheck, JWS_HEADER_B64};
use akledger::workload::realm_dag;
use akledger::{
    ActorId, Code, Config, Durability, Event, EventId, Json, Keyring, Ledger, Object, Verifier,
};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand_core::OsRng;

use common::{key, mutate_proof, preimage_of, set, World};

/// The message every ZIP-215 case signs.
const MSG: &[u8] = b"Zcash";

/// The group order ℓ, little-endian: `S = ℓ` satisfies the equation for the published cases
/// (`[8][ℓ]B = 0`) but is not canonical, so ZIP 215 rejects it.
const ELL: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

fn unhex<const N: usize>(text: &str) -> [u8; N] {
    assert_eq!(text.len(), 2 * N, "{text}");
    let mut out = [0; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

/// A public key `A` and a signature `R || S`.
type Case = ([u8; 32], [u8; 64]);

/// The published cases.
fn cases() -> Vec<Case> {
    let text = include_str!("../data/zip215/small_order_cases.txt");
    let cases: Vec<_> = text
        .lines()
        .map(|line| {
            let (a, sig) = line.split_once(' ').expect("two fields");
            (unhex::<32>(a), unhex::<64>(sig))
        })
        .collect();
    assert_eq!(cases.len(), 196);
    cases
}

fn check(case: &Case) -> SignatureCheck {
    SignatureCheck::new(case.0, case.1, MSG)
}

/// The case with `S` replaced by ℓ.
fn with_s_ell(case: &Case) -> Case {
    let mut sig = case.1;
    sig[32..].copy_from_slice(&ELL);
    (case.0, sig)
}

/// The smallest `y` encoding that is not a curve point (`R` that does not decode).
fn undecodable() -> [u8; 32] {
    (2u8..)
        .map(|y| {
            let mut r = [0; 32];
            r[0] = y;
            r
        })
        .find(|r| VerifyingKey::from_bytes(r).is_err())
        .expect("some y is off the curve")
}

#[test]
fn every_published_case_verifies_alone() {
    for (n, case) in cases().iter().enumerate() {
        assert!(
            check(case).verify().is_ok(),
            "case {n} must be valid under ZIP 215"
        );
    }
}

#[test]
fn every_published_case_verifies_in_one_batch() {
    let checks: Vec<_> = cases().iter().map(check).collect();
    let verdicts = verify_batch(&checks, OsRng);
    assert_eq!(verdicts.len(), 196);
    assert!(verdicts.iter().all(Result::is_ok));
}

/// v1.1 changed the rule: the cofactorless `verify_strict` of v1 refused small-order keys and
/// `R`s, so these cases are where ledgers of the two versions differ.
#[test]
fn the_v1_strict_rule_refused_what_zip215_accepts() {
    let strict_accepts = cases()
        .iter()
        .filter(|(a, sig)| {
            VerifyingKey::from_bytes(a)
                .is_ok_and(|k| k.verify_strict(MSG, &Signature::from_bytes(sig)).is_ok())
        })
        .count();
    assert_eq!(strict_accepts, 0);
}

#[test]
fn non_canonical_s_is_rejected_alone_and_in_a_batch() {
    for case in cases().iter().take(14) {
        let bad = with_s_ell(case);
        assert!(check(&bad).verify().is_err());
        assert!(verify_batch(&[check(&bad)], OsRng)[0].is_err());
    }
}

/// Honest RFC 8032 signatures, a wrong message, a flipped signature bit, a non-canonical `S`,
/// an undecodable `R`, mixed with the published cases: a failed batch falls back and every
/// answer equals the single answer.
#[test]
fn a_mixed_batch_finds_exactly_the_culprits() {
    let signer = key(9);
    let public = signer.verifying_key().to_bytes();
    let honest = |msg: &[u8]| (public, signer.sign(msg).to_bytes());
    // (case, message, valid)
    let mut items: Vec<(Case, &[u8], bool)> = Vec::new();
    for (n, case) in cases().into_iter().enumerate() {
        items.push((case, MSG, true));
        match n % 49 {
            0 => items.push((honest(b"an honest message"), b"an honest message", true)),
            7 => items.push((honest(b"signed this"), b"but checked that", false)),
            14 => {
                let (a, mut sig) = honest(b"flipped");
                sig[40] ^= 1;
                items.push(((a, sig), b"flipped", false));
            }
            21 => items.push((with_s_ell(&case), MSG, false)),
            28 => {
                let mut sig = case.1;
                sig[..32].copy_from_slice(&undecodable());
                items.push(((case.0, sig), MSG, false));
            }
            _ => {}
        }
    }
    let checks: Vec<_> = items
        .iter()
        .map(|((a, sig), msg, _)| SignatureCheck::new(*a, *sig, msg))
        .collect();
    let batch = verify_batch(&checks, OsRng);
    let bad = items.iter().filter(|i| !i.2).count();
    assert!(bad >= 4, "the batch must hold culprits");
    for ((item, verdict), single) in items.iter().zip(&batch).zip(&checks) {
        assert_eq!(verdict.is_ok(), item.2);
        assert_eq!(verdict.is_ok(), single.clone().verify().is_ok());
        if let Err(r) = verdict {
            assert_eq!(r.code(), Code::SignatureInvalid);
        }
    }
    // The valid ones alone pass as one batch.
    let good: Vec<_> = checks
        .iter()
        .zip(&items)
        .filter(|(_, i)| i.2)
        .map(|(c, _)| c.clone())
        .collect();
    assert!(verify_batch(&good, OsRng).iter().all(Result::is_ok));
}

/// An event whose actor is a small-order key, "signed" by `R` = identity and `S` = 0: valid
/// under ZIP 215 for any message. PROFILE v1.1 §4 accepts it; the test pins that the event
/// layer uses the same rule as the curve layer, alone and batched.
#[test]
fn an_event_by_a_small_order_key_verifies_alone_and_batched() {
    let world = World::new();
    let small = VerifyingKey::from_bytes(&unhex::<32>(
        "0100000000000000000000000000000000000000000000000000000000000000",
    ))
    .expect("decodes");
    let mut pre = preimage_of(&world.realm);
    set(
        &mut pre,
        "actor_id",
        ActorId::service_for_key(&small).to_json(),
    );
    let id = EventId::of_preimage(
        world.realm.id().suite(),
        &to_canonical(&Json::Object(pre.clone())),
    );
    let created_at = pre.get("created_at").cloned().expect("created_at");
    let mut sig = [0u8; 64];
    sig[0] = 1;
    let proof = Object::new()
        .with("kind", "detached_jws".into())
        .with("verification_method", verification_method(&small).into())
        .with("event_digest", id.digest_text().into())
        .with("created_at", created_at)
        .with(
            "jws",
            format!("{JWS_HEADER_B64}..{}", URL_SAFE_NO_PAD.encode(sig)).into(),
        );
    let mut obj = pre;
    obj.insert("event_id", id.to_string().into());
    obj.insert("producer_proof", proof.into());
    let bytes = to_canonical(&Json::Object(obj));
    let verifier = Verifier::new(Keyring::new());
    let parsed = Event::parse(&bytes).expect("parses");
    assert!(parsed.clone().verify(&verifier).is_ok());
    let batched = Event::verify_batch([Ok(parsed)], &verifier, OsRng);
    assert!(batched[0].is_ok());
}

/// A ledger batch of generated events with some signatures broken: exactly those are
/// rejected `signature_invalid`, the rest admitted, in order.
#[test]
fn a_ledger_batch_rejects_only_the_forged_events() {
    let events = realm_dag(5, 300, 4, 64).expect("workload");
    let mut bytes: Vec<Vec<u8>> = Vec::new();
    let mut forged = Vec::new();
    for (n, event) in events.iter().enumerate() {
        if n > 0 && n % 37 == 0 {
            forged.push(n);
            bytes.push(mutate_proof(event, |proof| {
                let jws = proof
                    .get("jws")
                    .and_then(Json::as_str)
                    .expect("jws")
                    .to_owned();
                // Another valid-looking signature: the last character's bits change.
                let last = if jws.ends_with('A') { "Q" } else { "A" };
                let jws = format!("{}{last}", &jws[..jws.len() - 1]);
                set(proof, "jws", jws.into());
            }));
        } else {
            bytes.push(event.bytes().to_vec());
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open_with(
        Config::new(dir.path())
            .durability(Durability::Buffered)
            .verify_threads(2),
    )
    .expect("open");
    let out = ledger.append_batch(&bytes).expect("append");
    for (n, outcome) in out.iter().enumerate() {
        if forged.contains(&n) {
            assert_eq!(outcome.code(), Some(Code::SignatureInvalid), "event {n}");
        } else {
            // Admitted, or pending on a forged (hence absent) dependency.
            assert!(
                matches!(outcome.code(), None | Some(Code::DependencyMissing)),
                "event {n}: {outcome:?}"
            );
        }
    }
    assert!(forged.len() >= 8);
}
