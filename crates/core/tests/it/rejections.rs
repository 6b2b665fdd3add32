//! Negative vectors: every rejection the pure core can produce, each asserting its exact
//! PROFILE §10 code. Mutated events are re-hashed and re-signed (`common::reseal`) unless
//! the test is about the id or the proof, so each case breaks exactly one rule.

use akledger_testkit_core as common;

use std::collections::BTreeSet;

use akledger_core::limits::MAX_EVENT_BYTES;
use akledger_core::{
    ActorId, Code, DidCoreId, DigestSuite, Event, EventId, Json, Keyring, Object, SemanticRef,
    Verifier,
};
use common::*;

fn verifier() -> Verifier {
    Verifier::new(Keyring::new())
}

/// One negative vector: a name, the bytes, the code they must be rejected with.
struct Case {
    name: String,
    bytes: Vec<u8>,
    code: Code,
}

fn case(name: impl Into<String>, bytes: Vec<u8>, code: Code) -> Case {
    Case {
        name: name.into(),
        bytes,
        code,
    }
}

/// Exactly `n` (≥ 1) nested arrays: `[[…[]…]]`.
fn arrays(n: usize) -> Json {
    (1..n).fold(Json::Array(Vec::new()), |inner, _| Json::Array(vec![inner]))
}

fn ref_json(id: &str, role: &str, critical: bool) -> Json {
    SemanticRef {
        id: id.into(),
        role: role.into(),
        critical,
    }
    .to_json()
}

/// An in-place edit of an object.
type Edit<'a> = Box<dyn Fn(&mut Object) + 'a>;

/// Every negative vector of the core.
fn cases(w: &World) -> Vec<Case> {
    let note = w.note();
    let k = &w.key;
    let mut out = Vec::new();
    let token = |id: EventId| id.to_string()["ak:event:".len()..].to_owned();
    let set_id = |id: String| mutate_raw(&note, |o| set(o, "event_id", id.into()));

    // §1 ids and the content address.
    out.push(case(
        "id of other bytes",
        set_id(w.realm.id().to_string()),
        Code::EventIdDigestMismatch,
    ));
    out.push(case(
        "payload changed, id kept",
        mutate_raw(&note, |o| {
            set(
                o,
                "payload",
                Object::new().with("text", "hellO".into()).into(),
            )
        }),
        Code::EventIdDigestMismatch,
    ));
    out.push(case(
        "sha256 id over a blake3-signed event's bytes, wrong suite digest",
        set_id(EventId::from_digest(DigestSuite::Sha256, &note.id().digest()).to_string()),
        Code::EventIdDigestMismatch,
    ));
    for header in [0x11u8, 0x12, 0x22, 0xF2] {
        out.push(case(
            format!("header 0x{header:02x} (high nibble set)"),
            set_id(id_with_header(header, 7)),
            Code::SchemaViolation,
        ));
    }
    for suite in [0x00u8, 0x03, 0x0F] {
        out.push(case(
            format!("suite 0x{suite:x}"),
            set_id(id_with_header(suite, 7)),
            Code::UnsupportedDigestAlgorithm,
        ));
    }
    let t = token(note.id());
    out.push(case(
        "padding after the token",
        set_id(format!("ak:event:{t}=")),
        Code::SchemaViolation,
    ));
    out.push(case(
        "padding inside 44 chars",
        set_id(format!("ak:event:{}=", &t[..43])),
        Code::SchemaViolation,
    ));
    out.push(case(
        "32-byte token",
        set_id({
            use base64::Engine as _;
            let raw = note.id().digest();
            format!(
                "ak:event:{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "standard base64 alphabet",
        set_id(format!("ak:event:{}+", &t[..43])),
        Code::SchemaViolation,
    ));
    out.push(case(
        "realm prefix as event id",
        set_id(format!("ak:realm:{t}")),
        Code::SchemaViolation,
    ));

    // §3 the closed envelope.
    out.push(case(
        "unknown top-level field",
        mutate(&note, k, |o| {
            o.insert("extra", Json::Int(1));
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "empty semantic_refs",
        mutate(&note, k, |o| set(o, "semantic_refs", Json::Array(vec![]))),
        Code::SchemaViolation,
    ));
    out.push(case(
        "duplicate semantic ref (id, role)",
        mutate(&note, k, |o| {
            let r = ref_json(&w.realm.id().to_string(), "after", true);
            set(o, "semantic_refs", Json::Array(vec![r.clone(), r]));
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "129 semantic_refs",
        mutate(&note, k, |o| {
            let refs = (0..129)
                .map(|i| ref_json(&format!("urn:x:{i}"), "cites", false))
                .collect();
            set(o, "semantic_refs", Json::Array(refs));
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "causal ref that is not an event id",
        mutate(&note, k, |o| {
            set(
                o,
                "semantic_refs",
                Json::Array(vec![ref_json("urn:x:1", "after", true)]),
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "critical unknown ref role",
        mutate(&note, k, |o| {
            set(
                o,
                "semantic_refs",
                Json::Array(vec![ref_json("urn:x:1", "cites", true)]),
            )
        }),
        Code::UnsupportedFeature,
    ));
    out.push(case(
        "payload not an object",
        mutate(&note, k, |o| set(o, "payload", Json::Array(vec![]))),
        Code::SchemaViolation,
    ));
    out.push(case(
        "kind with uppercase",
        mutate(&note, k, |o| set(o, "kind", "ak.Note.create".into())),
        Code::SchemaViolation,
    ));
    out.push(case(
        "realm_id mismatching scope",
        mutate(&note, k, |o| {
            set(
                o,
                "realm_id",
                note.id()
                    .retype::<akledger_core::id::RealmKind>()
                    .to_string()
                    .into(),
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "missing realm_id",
        mutate(&note, k, |o| {
            o.remove("realm_id");
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "ak.realm.create with realm_id",
        mutate(&w.realm, k, |o| {
            set(o, "realm_id", w.realm_id().to_string().into())
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "realm_genesis scope on another kind",
        mutate(&w.realm, k, |o| {
            set(o, "kind", "ak.note.create".into());
            set(o, "realm_id", w.realm_id().to_string().into());
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "actor with unknown member",
        mutate(&note, k, |o| {
            let mut actor = service(k).to_json().as_object().cloned().expect("actor");
            actor.insert("extra", Json::Null);
            set(o, "actor_id", actor.into());
        }),
        Code::SchemaViolation,
    ));

    // §2 canonical JSON, on otherwise valid events.
    let base = note.bytes();
    out.push(case(
        "duplicate key",
        splice(
            base,
            r#""text":"hello""#,
            r#""text":"hello","text":"hello""#,
        ),
        Code::SchemaViolation,
    ));
    for float in ["1.5", "1.0", "1e3", "-0"] {
        out.push(case(
            format!("number {float}"),
            splice(base, r#""text":"hello""#, &format!(r#""text":{float}"#)),
            Code::SchemaViolation,
        ));
    }
    for big in [1i64 << 53, -(1i64 << 53)] {
        out.push(case(
            format!("integer {big}"),
            mutate(&note, k, |o| {
                set(o, "payload", Object::new().with("n", Json::Int(big)).into())
            }),
            Code::SchemaViolation,
        ));
    }
    out.push(case(
        "non-NFC string",
        mutate(&note, k, |o| {
            set(
                o,
                "payload",
                Object::new().with("text", "e\u{301}".into()).into(),
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "non-NFC key",
        mutate(&note, k, |o| {
            set(
                o,
                "payload",
                Object::new().with("A\u{30a}", Json::Null).into(),
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "leading BOM",
        [b"\xEF\xBB\xBF".as_slice(), base].concat(),
        Code::SchemaViolation,
    ));
    out.push(case(
        "BOM inside a string",
        mutate(&note, k, |o| {
            set(
                o,
                "payload",
                Object::new().with("text", "a\u{feff}b".into()).into(),
            )
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "whitespace",
        splice(base, r#""text":"hello""#, r#""text": "hello""#),
        Code::SchemaViolation,
    ));
    out.push(case(
        "uppercase \\u escape",
        splice(base, r#""text":"hello""#, r#""text":"\u001F""#),
        Code::SchemaViolation,
    ));
    out.push(case(
        "depth 65",
        mutate(&note, k, |o| {
            // event = depth 1, payload = 2, 63 arrays = 3..=65
            set(o, "payload", Object::new().with("x", arrays(63)).into())
        }),
        Code::SchemaViolation,
    ));
    out.push(case("not an object", b"[]".to_vec(), Code::SchemaViolation));
    out.push(case("empty input", Vec::new(), Code::SchemaViolation));

    // §1 timestamps, in the envelope and in the proof.
    for bad in [
        "2026-11-29T12:00:00Z",
        "2026-11-29T12:00:00.00Z",
        "2026-11-29T12:00:00.0000Z",
        "2026-11-29T12:00:00.000+00:00",
        "2026-11-29 12:00:00.000Z",
        "2026-11-29t12:00:00.000Z",
        "2026-11-29T12:00:00.000z",
        "2026-02-29T12:00:00.000Z",
        "2026-11-31T12:00:00.000Z",
        "2026-11-29T24:00:00.000Z",
        "1969-12-31T23:59:59.999Z",
        "2026-11-29T12:00:00.000",
    ] {
        out.push(case(
            format!("created_at {bad}"),
            mutate(&note, k, |o| set(o, "created_at", bad.into())),
            Code::SchemaViolation,
        ));
    }
    out.push(case(
        "proof created_at malformed",
        mutate_proof(&note, |p| {
            set(p, "created_at", "2026-11-29T12:00:00Z".into())
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "proof with unknown member",
        mutate_proof(&note, |p| {
            p.insert("alg", "Ed25519".into());
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "proof kind not detached_jws",
        mutate_proof(&note, |p| set(p, "kind", "jws".into())),
        Code::SchemaViolation,
    ));

    // §4 producer proof.
    let other_jws = w.realm.proof().jws.clone();
    out.push(case(
        "JWS over other bytes",
        mutate_proof(&note, |p| set(p, "jws", other_jws.as_str().into())),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "JWS signature bit flipped",
        mutate_proof(&note, |p| {
            let jws = p.get("jws").and_then(Json::as_str).expect("jws");
            let last = jws.len() - 2;
            let flipped = if &jws[last..last + 1] == "A" {
                "B"
            } else {
                "A"
            };
            let jws = format!("{}{flipped}{}", &jws[..last], &jws[last + 1..]);
            set(p, "jws", jws.into());
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "JWS with another header",
        mutate_proof(&note, |p| {
            let jws = p.get("jws").and_then(Json::as_str).expect("jws");
            let (_, sig) = jws.split_once("..").expect("detached");
            set(p, "jws", format!("eyJhbGciOiJFUzI1NiJ9..{sig}").into());
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "JWS with attached payload",
        mutate_proof(&note, |p| {
            let jws = p.get("jws").and_then(Json::as_str).expect("jws");
            set(p, "jws", jws.replacen("..", ".e30.", 1).into());
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "signed with key B for key A's principal, no keyring",
        mutate(&note, &key(2), |_| {}),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "proof created_at differs from the envelope's",
        mutate_proof(&note, |p| {
            set(p, "created_at", "2026-11-29T12:00:00.001Z".into())
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "proof event_digest in the other suite",
        mutate_proof(&note, |p| {
            let pre = akledger_core::canonical::to_canonical(&Json::Object(preimage_of(&note)));
            let sha = DigestSuite::Sha256.digest_text(&DigestSuite::Sha256.digest(&pre));
            set(p, "event_digest", sha.into());
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "proof event_digest of other bytes",
        mutate_proof(&note, |p| {
            set(p, "event_digest", w.realm.id().digest_text().into())
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "verification_method not a did:key",
        mutate_proof(&note, |p| {
            set(p, "verification_method", "did:web:example.org#key-1".into())
        }),
        Code::SignatureInvalid,
    ));
    out.push(case(
        "verification_method fragment of another key",
        mutate_proof(&note, |p| {
            let a = akledger_core::did::multibase_of(&key(1).verifying_key());
            let b = akledger_core::did::multibase_of(&key(2).verifying_key());
            set(p, "verification_method", format!("did:key:{a}#{b}").into());
        }),
        Code::SignatureInvalid,
    ));

    // §6 kind-specific payloads.
    out.push(case(
        "ak.sidecar.create with a non-empty payload",
        mutate(&w.sidecar, k, |o| {
            set(o, "payload", Object::new().with("name", "x".into()).into())
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "ak.sidecar.create in sidecar scope",
        mutate(&w.sidecar, k, |o| {
            set(o, "scope_ref", w.sidecar_scope().to_json())
        }),
        Code::SchemaViolation,
    ));
    out.push(case(
        "sidecar message without encrypted_payload",
        mutate(&w.message(), k, |o| set(o, "payload", Object::new().into())),
        Code::SchemaViolation,
    ));
    let control = w.control();
    let control_payload = |f: &dyn Fn(&mut Object)| {
        mutate(&control, k, |o| {
            let mut p = w.control_payload();
            f(&mut p);
            set(o, "payload", p.into());
        })
    };
    let forbidden: Vec<(&str, Edit)> = vec![
        ("control: empty payload", Box::new(|p| *p = Object::new())),
        (
            "control: missing source_context_ref",
            Box::new(|p| {
                p.remove("source_context_ref");
            }),
        ),
        (
            "control: unknown outer member",
            Box::new(|p| {
                p.insert("exchange_id", "x".repeat(22).into());
            }),
        ),
        (
            "control: sidecar_id of another sidecar",
            Box::new(|p| {
                set(
                    p,
                    "sidecar_id",
                    note.id()
                        .retype::<akledger_core::id::SidecarKind>()
                        .to_string()
                        .into(),
                )
            }),
        ),
        (
            "control: sidecar_id not an id",
            Box::new(|p| set(p, "sidecar_id", Json::Int(1))),
        ),
        (
            "control: source_context_ref kind not strand",
            Box::new(|p| {
                let strand = w
                    .realm
                    .id()
                    .retype::<akledger_core::id::StrandKind>()
                    .to_string();
                let ctx = Object::new()
                    .with("kind", "track".into())
                    .with("strand_id", strand.into());
                set(p, "source_context_ref", ctx.into());
            }),
        ),
        (
            "control: strand_id not a strand id",
            Box::new(|p| {
                let ctx = Object::new()
                    .with("kind", "strand".into())
                    .with("strand_id", w.realm_id().to_string().into());
                set(p, "source_context_ref", ctx.into());
            }),
        ),
        (
            "control: malformed encrypted_payload",
            Box::new(|p| set(p, "encrypted_payload", Object::new().into())),
        ),
    ];
    for (name, f) in forbidden {
        out.push(case(
            name,
            control_payload(&*f),
            Code::SidecarExchangeControlForbidden,
        ));
    }
    out.push(case(
        "control: realm scope",
        mutate(&control, k, |o| {
            set(o, "scope_ref", w.realm_scope().to_json())
        }),
        Code::SidecarExchangeControlForbidden,
    ));
    out
}

#[test]
fn every_negative_vector_is_rejected_with_its_exact_code() {
    let w = World::new();
    let v = verifier();
    let mut failures = Vec::new();
    for c in cases(&w) {
        let got = Event::from_bytes(&c.bytes, &v).map(|e| e.id());
        match got {
            Err(e) if e.code() == c.code => {}
            other => failures.push(format!("{}: expected {}, got {other:?}", c.name, c.code)),
        }
        if std::env::var_os("AK_SHOW_REJECTIONS").is_some() {
            let why = Event::from_bytes(&c.bytes, &v).map(|e| e.id());
            println!("{}: {:?}", c.name, why.map_err(|e| e.to_string()));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_table_covers_every_code_the_core_can_produce() {
    let w = World::new();
    let codes: BTreeSet<Code> = cases(&w).iter().map(|c| c.code).collect();
    let core = BTreeSet::from([
        Code::SchemaViolation,
        Code::EventIdDigestMismatch,
        Code::UnsupportedDigestAlgorithm,
        Code::SignatureInvalid,
        Code::SidecarExchangeControlForbidden,
        Code::UnsupportedFeature,
        Code::PayloadTooLarge,
    ]);
    // payload_too_large is asserted in its own test (it needs a 1 MiB event).
    let mut expected = core.clone();
    expected.remove(&Code::PayloadTooLarge);
    assert_eq!(codes, expected);
}

#[test]
fn the_unmutated_fixtures_are_accepted() {
    let w = World::new();
    let v = verifier();
    for e in [
        w.realm.clone(),
        w.sidecar.clone(),
        w.note(),
        w.message(),
        w.control(),
    ] {
        let id = e.id();
        let ok = Event::from_bytes(e.bytes(), &v).unwrap_or_else(|err| panic!("{id}: {err}"));
        assert_eq!(ok.id(), id);
        // Resealing without a change reproduces the bytes: the helper itself is faithful.
        assert_eq!(mutate(&e, &w.key, |_| {}), e.bytes());
    }
}

#[test]
fn signature_checks_are_not_parse_checks() {
    // The proof-level cases pass `parse` (id and structure are fine) and fail only `verify`.
    let w = World::new();
    let note = w.note();
    for bytes in [
        mutate(&note, &key(2), |_| {}),
        mutate_proof(&note, |p| {
            set(p, "created_at", "2026-11-29T12:00:00.001Z".into())
        }),
    ] {
        let parsed = Event::parse(&bytes).expect("parses");
        assert_eq!(
            parsed
                .verify(&verifier())
                .map(|e| e.id())
                .unwrap_err()
                .code(),
            Code::SignatureInvalid
        );
    }
}

#[test]
fn the_keyring_cannot_widen_a_self_certifying_principal() {
    let w = World::new();
    let a = key(1);
    let b = key(2);
    for event in [w.note(), w.realm.clone()] {
        // B signs for A's `ak:did_core:key:` principal: nothing can authorize that (§4, §11).
        let by_b = mutate(&event, &b, |_| {});
        assert_eq!(rejection(&by_b, &verifier()), Code::SignatureInvalid);
        let mut ring = Keyring::new();
        let refused = ring
            .authorize(DidCoreId::for_key(&a.verifying_key()), b.verifying_key())
            .expect_err("a key principal is self-certifying");
        assert_eq!(refused.code(), Code::SchemaViolation);
        assert_eq!(
            rejection(&by_b, &Verifier::new(ring)),
            Code::SignatureInvalid
        );
    }
    // Nor can a keyring file.
    let file = format!(
        r#"{{"principals":{{"{}":["{}"]}}}}"#,
        DidCoreId::for_key(&a.verifying_key()),
        akledger_core::did::did_key(&b.verifying_key())
    );
    let refused = Keyring::from_json_bytes(file.as_bytes()).expect_err("refused");
    assert_eq!(refused.code(), Code::SchemaViolation);
}

#[test]
fn another_key_is_accepted_when_the_keyring_authorizes_it() {
    let w = World::new();
    let b = key(2);
    let web = DidCoreId::parse("ak:did_core:web:example.org").expect("principal");
    let service = ActorId::Service {
        service_id: web.clone(),
    };
    let by_b = mutate(&w.note(), &b, |o| set(o, "actor_id", service.to_json()));
    assert_eq!(rejection(&by_b, &verifier()), Code::SignatureInvalid);
    let mut ring = Keyring::new();
    ring.authorize(web, b.verifying_key())
        .expect("web principal");
    assert!(Event::from_bytes(&by_b, &Verifier::new(ring)).is_ok());
    // Authorizing B for some other principal does not help.
    let mut elsewhere = Keyring::new();
    elsewhere
        .authorize(
            DidCoreId::parse("ak:did_core:web:other.example").expect("principal"),
            b.verifying_key(),
        )
        .expect("web principal");
    assert_eq!(
        rejection(&by_b, &Verifier::new(elsewhere)),
        Code::SignatureInvalid
    );
}

#[test]
fn account_actor_with_a_foreign_key_needs_the_keyring() {
    let w = World::new();
    let b = key(2);
    let web = DidCoreId::parse("ak:did_core:web:example.org").expect("principal");
    let actor = ActorId::Account {
        principal_id: web.clone(),
        station_id: DidCoreId::parse("ak:did_core:web:station.example").expect("station"),
    };
    let bytes = mutate(&w.note(), &b, |o| set(o, "actor_id", actor.to_json()));
    assert_eq!(rejection(&bytes, &verifier()), Code::SignatureInvalid);
    let mut ring = Keyring::new();
    ring.authorize(web, b.verifying_key())
        .expect("web principal");
    assert!(Event::from_bytes(&bytes, &Verifier::new(ring)).is_ok());
}

#[test]
fn non_critical_unknown_role_is_accepted_and_kept() {
    let w = World::new();
    let bytes = mutate(&w.note(), &w.key, |o| {
        set(
            o,
            "semantic_refs",
            Json::Array(vec![
                ref_json(&w.realm.id().to_string(), "after", true),
                ref_json("urn:example:x", "cites", false),
            ]),
        )
    });
    let e = Event::from_bytes(&bytes, &verifier()).expect("accepted");
    assert_eq!(e.envelope().refs.len(), 2);
    assert_eq!(e.envelope().causal_refs(), vec![w.realm.id()]);
}

#[test]
fn size_limit_is_exactly_one_mebibyte() {
    let w = World::new();
    let note = w.note();
    let padded = |n: usize| {
        mutate(&note, &w.key, |o| {
            set(
                o,
                "payload",
                Object::new().with("pad", "a".repeat(n).into()).into(),
            )
        })
    };
    let base = padded(0).len();
    let at_limit = padded(MAX_EVENT_BYTES - base);
    assert_eq!(at_limit.len(), MAX_EVENT_BYTES);
    assert!(Event::from_bytes(&at_limit, &verifier()).is_ok());
    let over = padded(MAX_EVENT_BYTES - base + 1);
    assert_eq!(rejection(&over, &verifier()), Code::PayloadTooLarge);
    let far_over = padded(2 * MAX_EVENT_BYTES);
    assert_eq!(rejection(&far_over, &verifier()), Code::PayloadTooLarge);
}

#[test]
fn depth_64_is_accepted() {
    let w = World::new();
    let bytes = mutate(&w.note(), &w.key, |o| {
        set(o, "payload", Object::new().with("x", arrays(62)).into())
    });
    assert!(Event::from_bytes(&bytes, &verifier()).is_ok());
}

#[test]
fn largest_safe_integers_are_accepted() {
    let w = World::new();
    let max = akledger_core::limits::MAX_SAFE_INTEGER;
    let bytes = mutate(&w.note(), &w.key, |o| {
        let p = Object::new()
            .with("max", Json::Int(max))
            .with("min", Json::Int(-max));
        set(o, "payload", p.into());
    });
    assert!(Event::from_bytes(&bytes, &verifier()).is_ok());
}

#[test]
fn control_in_realm_genesis_scope_is_a_schema_violation() {
    // realm_genesis belongs to ak.realm.create alone (§3); the kind/scope check runs before
    // the control-specific one, so this is schema_violation, not the control code.
    let w = World::new();
    let bytes = mutate(&w.control(), &w.key, |o| {
        set(
            o,
            "scope_ref",
            akledger_core::ScopeRef::RealmGenesis.to_json(),
        );
        set(o, "realm_id", w.realm_id().to_string().into());
    });
    assert_eq!(rejection(&bytes, &verifier()), Code::SchemaViolation);
}

/// `EventBuilder::sign_verified` leaves out only the equation of the signature it made: it
/// gives the event `sign` then `verify` give, and refuses, with verify's code, an actor
/// whose principal the key is not authorized for.
#[test]
fn signing_verified_runs_every_check_but_the_fresh_signature() {
    let w = World::new();
    let note = |actor: ActorId| {
        akledger_core::EventBuilder::new("ak.note.create", w.realm_scope(), actor, t0())
            .payload(Object::new().with("text", "hello".into()).into())
            .after([w.realm.id()])
    };
    let own = note(w.actor.clone())
        .sign_verified(&w.key, &verifier())
        .expect("own key");
    let verified = Event::from_bytes(w.note().bytes(), &verifier()).expect("verify");
    assert_eq!(own.bytes(), verified.bytes());

    let b = key(2);
    let web = DidCoreId::parse("ak:did_core:web:example.org").expect("principal");
    let service = ActorId::Service {
        service_id: web.clone(),
    };
    let refused = note(service.clone())
        .sign_verified(&b, &verifier())
        .expect_err("not authorized");
    assert_eq!(refused.code(), Code::SignatureInvalid);
    let mut ring = Keyring::new();
    ring.authorize(web, b.verifying_key())
        .expect("web principal");
    let authorized = Verifier::new(ring);
    let by_b = note(service)
        .sign_verified(&b, &authorized)
        .expect("authorized");
    // Verified against one keyring, checked again against another.
    assert!(by_b.check_authorized(&authorized).is_ok());
    assert_eq!(
        by_b.check_authorized(&verifier())
            .expect_err("not in this keyring")
            .code(),
        Code::SignatureInvalid
    );
}
