//! Known-answer vectors computed by an independent tool (`tests/data/vectors/make_vectors.py`:
//! Python hashlib, blake3, cryptography). The crate must agree on every digest, id and
//! signed byte.

use akledger_testkit_core as common;

use akledger_core::canonical::{parse_canonical, to_canonical};
use akledger_core::{
    ActorId, DigestSuite, Event, EventBuilder, EventId, Json, Keyring, Object, ScopeRef,
    SemanticRef, Timestamp, Verifier,
};
use common::{account, key};

const IDS: &str = include_str!("../data/ids.json");
const SIGNED: &str = include_str!("../data/signed_event.json");

fn field<'a>(v: &'a serde_json::Value, name: &str) -> &'a str {
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("vector field {name} missing"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn preimage_digests_and_ids_match_the_independent_tool() {
    let vectors: serde_json::Value = serde_json::from_str(IDS).expect("ids.json");
    let vectors = vectors.as_array().expect("array of vectors");
    assert!(vectors.len() >= 4);
    for v in vectors {
        let name = field(v, "name");
        let preimage = field(v, "preimage").as_bytes();
        for (suite, digest_key, id_key) in [
            (DigestSuite::Sha256, "sha256", "id_sha256"),
            (DigestSuite::Blake3, "blake3", "id_blake3"),
        ] {
            assert_eq!(hex(&suite.digest(preimage)), field(v, digest_key), "{name}");
            let id = EventId::of_preimage(suite, preimage);
            assert_eq!(id.to_string(), field(v, id_key), "{name} {digest_key}");
            assert_eq!(id.to_string().len(), 53);
            assert_eq!(EventId::parse(field(v, id_key)), Ok(id), "{name}");
            assert_eq!(
                id.digest_text(),
                format!("{digest_key}:{}", field(v, digest_key))
            );
        }
        let parsed = parse_canonical(preimage).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_canonical(&parsed), preimage, "{name}");
    }
}

#[test]
fn control_character_vector_really_exercises_escapes_and_utf16_order() {
    let vectors: serde_json::Value = serde_json::from_str(IDS).expect("ids.json");
    let v = vectors
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|v| v["name"] == "non_ascii_and_control_escapes")
        })
        .expect("unicode vector");
    let pre = field(v, "preimage");
    for needle in [
        r"\t", r"\n", r#"\""#, r"\\", r"\b", r"\f", r"\r", r"\u0001", r"\u001f",
    ] {
        assert!(pre.contains(needle), "{needle}");
    }
    assert!(pre.contains('\u{7f}') && pre.contains("東京"));
    let emoji = pre.find("\"😀\"").expect("emoji key");
    let private_use = pre.find("\"\u{e000}\"").expect("U+E000 key");
    assert!(emoji < private_use, "keys must sort by UTF-16 code units");
}

/// Rebuilds the committed signed events with `EventBuilder` from the same inputs.
fn rebuild(name: &str, realm_id_source: Option<EventId>) -> Event<akledger_core::Unverified> {
    let k = key(1);
    match name {
        "realm_create_sha256" => EventBuilder::new(
            "ak.realm.create",
            ScopeRef::RealmGenesis,
            ActorId::service_for_key(&k.verifying_key()),
            Timestamp::parse("2026-11-29T12:00:00.000Z").expect("time"),
        )
        .payload(Object::new().with("name", "Vector realm".into()).into())
        .suite(DigestSuite::Sha256)
        .sign(&k)
        .expect("sign realm"),
        "note_blake3" => {
            let realm_event = realm_id_source.expect("realm id");
            EventBuilder::new(
                "ak.note.create",
                ScopeRef::Realm {
                    realm_id: realm_event.retype(),
                },
                account(&k),
                Timestamp::parse("2026-11-29T12:00:01.250Z").expect("time"),
            )
            .payload(
                Object::new()
                    .with("text", "Grüße — 東京 \u{7}".into())
                    .into(),
            )
            .after([realm_event])
            .reference(SemanticRef {
                id: "urn:example:doc:1".into(),
                role: "cites".into(),
                critical: false,
            })
            .suite(DigestSuite::Blake3)
            .sign(&k)
            .expect("sign note")
        }
        other => panic!("unknown signed vector {other}"),
    }
}

#[test]
fn signed_events_verify_and_event_builder_reproduces_them() {
    let doc: serde_json::Value = serde_json::from_str(SIGNED).expect("signed_event.json");
    let k = key(1);
    assert_eq!(
        hex(k.verifying_key().as_bytes()),
        field(&doc, "public_key_hex")
    );
    assert_eq!(hex(&[1u8; 32]), field(&doc, "seed_hex"));
    assert_eq!(
        akledger_core::did::verification_method(&k.verifying_key()),
        field(&doc, "verification_method")
    );
    let verifier = Verifier::new(Keyring::new());
    let mut previous: Option<EventId> = None;
    let events = doc["events"].as_array().expect("events");
    assert_eq!(events.len(), 2);
    for v in events {
        let name = field(v, "name");
        let bytes = field(v, "event").as_bytes();
        let event = Event::from_bytes(bytes, &verifier).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(event.id().to_string(), field(v, "event_id"), "{name}");
        assert_eq!(event.id().suite().name(), field(v, "suite"));
        assert_eq!(event.bytes(), bytes);
        let again = rebuild(name, previous);
        assert_eq!(
            String::from_utf8_lossy(again.bytes()),
            field(v, "event"),
            "{name}: EventBuilder output differs from the independent vector"
        );
        assert_eq!(again.id(), event.id());
        previous = Some(event.id());
    }
}

#[test]
fn signed_event_proof_fields_match_profile_section_4() {
    let doc: serde_json::Value = serde_json::from_str(SIGNED).expect("signed_event.json");
    for v in doc["events"].as_array().expect("events") {
        let event = Event::parse(field(v, "event").as_bytes()).expect("parse");
        let proof = event.proof();
        assert_eq!(proof.event_digest, event.id().digest_text());
        assert_eq!(proof.created_at, event.created_at());
        assert_eq!(
            proof.verification_method,
            field(&doc, "verification_method")
        );
        assert!(proof.jws.starts_with("eyJhbGciOiJFZDI1NTE5In0.."));
        let obj = common::object_of(event.bytes());
        let Some(Json::Object(p)) = obj.get("producer_proof") else {
            panic!("proof object")
        };
        assert_eq!(p.get("kind"), Some(&Json::str("detached_jws")));
    }
}
