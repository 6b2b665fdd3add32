//! Ingress cost per event size: the full pipeline (`Event::from_bytes`: size check, canonical
//! parse and re-serialization, envelope, digest, Ed25519 verify) against the bare Ed25519
//! verification of the same signing input (the floor), and parsing alone.
//!
//! `cargo bench --bench verify -- --noplot`

use akledger::did::key_of_did_key;
use akledger::proof::{binding_bytes, JWS_HEADER_B64};
use akledger::{ActorId, Event, EventBuilder, Keyring, Object, ScopeRef, Timestamp, Verifier};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ed25519_dalek::{Signature, SigningKey};

/// A signed realm-scoped event whose payload is one string member of `size` bytes.
fn event(size: usize) -> Vec<u8> {
    let key = SigningKey::from_bytes(&[1; 32]);
    let actor = ActorId::service_for_key(&key.verifying_key());
    let at = Timestamp::parse("2026-11-29T12:00:00.000Z").expect("time");
    let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, actor.clone(), at)
        .sign(&key)
        .expect("realm");
    let text: String = "abcdefghij".chars().cycle().take(size).collect();
    EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm {
            realm_id: realm.id().retype(),
        },
        actor,
        at,
    )
    .payload(Object::new().with("text", text.into()).into())
    .after([realm.id()])
    .sign(&key)
    .expect("note")
    .bytes()
    .to_vec()
}

fn bench(c: &mut Criterion) {
    let verifier = Verifier::new(Keyring::new());
    for (label, size) in [("256B", 256), ("1KiB", 1024), ("16KiB", 16 * 1024)] {
        let bytes = event(size);
        let parsed = Event::parse(&bytes).expect("parse");
        let proof = parsed.proof();
        let binding = binding_bytes(
            &proof.event_digest,
            parsed.actor(),
            &proof.verification_method,
            &parsed.created_at().to_string(),
        );
        let input = format!("{JWS_HEADER_B64}.{}", URL_SAFE_NO_PAD.encode(&binding)).into_bytes();
        let key = key_of_did_key(&proof.verification_method).expect("key");
        let sig_b64 = proof.jws.split_once("..").expect("detached jws").1;
        let sig: [u8; 64] = URL_SAFE_NO_PAD
            .decode(sig_b64)
            .expect("b64")
            .try_into()
            .expect("64 bytes");
        let sig = Signature::from_bytes(&sig);
        key.verify_strict(&input, &sig).expect("floor verifies");
        Event::from_bytes(&bytes, &verifier).expect("pipeline verifies");

        let mut g = c.benchmark_group(format!("verify/{label}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(BenchmarkId::new("pipeline", bytes.len()), |b| {
            b.iter(|| Event::from_bytes(black_box(&bytes), &verifier).expect("ok"))
        });
        g.bench_function(BenchmarkId::new("ed25519_verify", bytes.len()), |b| {
            b.iter(|| {
                key.verify_strict(black_box(&input), black_box(&sig))
                    .expect("ok")
            })
        });
        g.bench_function(BenchmarkId::new("parse_only", bytes.len()), |b| {
            b.iter(|| Event::parse(black_box(&bytes)).expect("ok"))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
