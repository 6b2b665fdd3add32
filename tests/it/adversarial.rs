//! Adversarial input at the ledger: every hostile event is rejected with its PROFILE §10
//! code AND leaves the ledger exactly as it was — no log bytes written, nothing admitted,
//! nothing pending. (`tests/rejections.rs` covers the same rules at the parse level; here
//! the point is that the ledger writes nothing.)
//!
//! Not repeated here: 10 000 pending events waiting for one missing parent and released
//! in one cascade is `ten_thousand_pending_released_in_one_cascade` in `tests/ledger.rs`.

use akledger_testkit as common;

use akledger::canonical::{Json, Object};
use akledger::exchange::{Act, ExchangeView, RequestContext, TrackRef};
use akledger::{
    Appended, Code, Config, Durability, EventBuilder, ExchangeId, Keyring, Ledger, MemoryGraph,
    Reason, ScopeRef, SidecarAuthor, SidecarKey, Verifier,
};
use common::*;
use tempfile::TempDir;

const SIDECAR_KEY: [u8; 32] = [9; 32];

struct Fixture {
    w: World,
    dir: TempDir,
    ledger: Ledger,
}

fn keyring(w: &World) -> Keyring {
    let mut k = Keyring::new();
    k.add_sidecar_key(w.sidecar_id(), 0, SidecarKey::from_bytes(SIDECAR_KEY));
    k
}

/// A ledger holding the world's realm, sidecar and a note.
fn fixture() -> Fixture {
    let w = World::new();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_with(
        Config::new(dir.path())
            .durability(Durability::Buffered)
            .keyring(keyring(&w)),
    )
    .unwrap();
    for e in w.genesis() {
        assert!(matches!(
            ledger.append(e.bytes()).unwrap(),
            Appended::Admitted(_)
        ));
    }
    assert!(matches!(
        ledger.append(w.note().bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    Fixture { w, dir, ledger }
}

fn log_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

impl Fixture {
    /// Appends `bytes`; asserts the rejection code and that nothing was written.
    fn rejects(&self, bytes: &[u8], code: Code) {
        let size = log_bytes(self.dir.path());
        let (len, pending, heads) = (
            self.ledger.len(),
            self.ledger.pending(),
            self.ledger.heads(),
        );
        let got = self.ledger.append(bytes).unwrap();
        assert!(
            matches!(got, Appended::Rejected { .. }),
            "expected a rejection ({code:?}), got {got:?}"
        );
        assert_eq!(got.code(), Some(code), "{got:?}");
        assert_eq!(log_bytes(self.dir.path()), size, "log bytes were written");
        assert_eq!(self.ledger.len(), len, "something was admitted");
        assert_eq!(self.ledger.pending(), pending, "something is pending");
        assert_eq!(self.ledger.heads(), heads);
    }
}

fn note_text(f: &Fixture, text: Json) -> Vec<u8> {
    mutate(&f.w.note(), &f.w.key, |o| {
        set(o, "payload", Object::new().with("text", text).into())
    })
}

#[test]
fn truncated_event() {
    let f = fixture();
    let note = f.w.note();
    for cut in [1, 10, note.bytes().len() / 2] {
        f.rejects(
            &note.bytes()[..note.bytes().len() - cut],
            Code::SchemaViolation,
        );
    }
}

#[test]
fn one_mebibyte_plus_one() {
    let f = fixture();
    let base = note_text(&f, "".into()).len();
    let filler = akledger::limits::MAX_EVENT_BYTES + 1 - base;
    let big = note_text(&f, "x".repeat(filler).into());
    assert_eq!(big.len(), akledger::limits::MAX_EVENT_BYTES + 1);
    f.rejects(&big, Code::PayloadTooLarge);
}

#[test]
fn depth_65() {
    let f = fixture();
    // The event object is depth 1 and the payload depth 2: 63 arrays make 65.
    let deep = format!("{}{}", "[".repeat(63), "]".repeat(63));
    let bytes = splice(f.w.note().bytes(), "\"hello\"", &deep);
    f.rejects(&bytes, Code::SchemaViolation);
}

#[test]
fn integer_two_to_the_53_and_floats() {
    let f = fixture();
    for spelling in ["9007199254740992", "-9007199254740992", "1.5", "1e3", "-0"] {
        let bytes = splice(f.w.note().bytes(), "\"hello\"", spelling);
        f.rejects(&bytes, Code::SchemaViolation);
    }
}

#[test]
fn duplicate_keys() {
    let f = fixture();
    let bytes = splice(
        f.w.note().bytes(),
        "\"text\":\"hello\"",
        "\"text\":\"hello\",\"text\":\"hello\"",
    );
    f.rejects(&bytes, Code::SchemaViolation);
}

#[test]
fn byte_order_mark() {
    let f = fixture();
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(f.w.note().bytes());
    f.rejects(&bytes, Code::SchemaViolation);
    let inside = splice(f.w.note().bytes(), "hello", "hel\u{feff}lo");
    f.rejects(&inside, Code::SchemaViolation);
}

#[test]
fn non_nfc_string_even_when_correctly_signed() {
    let f = fixture();
    let bytes = note_text(&f, "e\u{301}".into());
    f.rejects(&bytes, Code::SchemaViolation);
}

#[test]
fn lone_surrogate_escapes() {
    let f = fixture();
    for s in ["\\ud800", "\\udfff", "a\\ud83dz"] {
        let bytes = splice(f.w.note().bytes(), "hello", s);
        f.rejects(&bytes, Code::SchemaViolation);
    }
}

#[test]
fn overlong_or_padded_id_token() {
    let f = fixture();
    let note = f.w.note();
    let id = note.id().to_string();
    for bad in [
        format!("{id}A"),
        format!("{id}="),
        format!("{}=", &id[..id.len() - 1]),
    ] {
        let bytes = mutate_raw(&note, |o| set(o, "event_id", bad.as_str().into()));
        f.rejects(&bytes, Code::SchemaViolation);
    }
}

#[test]
fn ciphertext_with_bad_base64() {
    let f = fixture();
    let message = f.w.message();
    for bad in ["!!!!", "AAAA=", "AAAA AAAA"] {
        let bytes = mutate(&message, &f.w.key, |o| {
            let mut payload = o.remove("payload").unwrap().as_object().cloned().unwrap();
            let mut enc = payload
                .remove("encrypted_payload")
                .unwrap()
                .as_object()
                .cloned()
                .unwrap();
            set(&mut enc, "ciphertext", bad.into());
            payload.insert("encrypted_payload", enc.into());
            o.insert("payload", payload.into());
        });
        f.rejects(&bytes, Code::SchemaViolation);
    }
}

#[test]
fn unsupported_digest_suite() {
    let f = fixture();
    let note = f.w.note();
    for header in [0x00, 0x03, 0x0f] {
        let bytes = mutate_raw(&note, |o| {
            set(o, "event_id", id_with_header(header, 7).into())
        });
        f.rejects(&bytes, Code::UnsupportedDigestAlgorithm);
    }
    // A header whose high nibble is set is not a suite header at all (the engine's reading).
    let bytes = mutate_raw(&note, |o| {
        set(o, "event_id", id_with_header(0x12, 7).into())
    });
    f.rejects(&bytes, Code::SchemaViolation);
}

#[test]
fn event_id_of_another_event() {
    let f = fixture();
    let other = f.w.realm.id().to_string();
    let bytes = mutate_raw(&f.w.note(), |o| set(o, "event_id", other.as_str().into()));
    f.rejects(&bytes, Code::EventIdDigestMismatch);
}

#[test]
fn proof_copied_from_another_event() {
    let f = fixture();
    let theirs = object_of(f.w.sidecar.bytes())
        .get("producer_proof")
        .cloned()
        .unwrap();
    let bytes = mutate_raw(&f.w.note(), |o| set(o, "producer_proof", theirs));
    f.rejects(&bytes, Code::SignatureInvalid);
}

#[test]
fn controller_key_signing_for_an_agent_actor() {
    let f = fixture();
    let agent = service(&key(2));
    let bytes = mutate(&f.w.note(), &f.w.key, |o| {
        set(o, "actor_id", agent.to_json())
    });
    f.rejects(&bytes, Code::SignatureInvalid);
}

#[test]
fn agent_signing_a_control() {
    let f = fixture();
    let agent_key = key(2);
    let control = f.w.control();
    let bytes = mutate(&control, &agent_key, |o| {
        set(o, "actor_id", service(&agent_key).to_json())
    });
    // Well formed and correctly signed by the agent: only the controller rule refuses it.
    assert!(akledger::Event::from_bytes(&bytes, &Verifier::new(Keyring::new())).is_ok());
    f.rejects(&bytes, Code::SidecarExchangeControlForbidden);
}

/// A second world's sidecar (controller key 3) in the same ledger and realm.
fn second_sidecar(f: &Fixture) -> akledger::Event<akledger::Unverified> {
    let k3 = key(3);
    let s = EventBuilder::new("ak.sidecar.create", f.w.realm_scope(), service(&k3), t0())
        .after([f.w.realm.id()])
        .sign(&k3)
        .unwrap();
    assert!(matches!(
        f.ledger.append(s.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    s
}

#[test]
fn control_replayed_into_another_sidecar_is_forbidden() {
    let f = fixture();
    let other = second_sidecar(&f);
    let sidecar_b: akledger::SidecarId = other.id().retype();
    // Sets the outer payload's `sidecar_id` to sidecar B.
    let name_b = |o: &mut Object| {
        let mut payload = o.remove("payload").unwrap().as_object().cloned().unwrap();
        set(&mut payload, "sidecar_id", sidecar_b.to_string().into());
        o.insert("payload", payload.into());
    };
    // The controller's valid control, re-pointed at sidecar B by its outer sidecar_id
    // while its scope still says A: the payload does not belong to its scope.
    let bytes = mutate(&f.w.control(), &f.w.key, |o| {
        name_b(o);
    });
    f.rejects(&bytes, Code::SidecarExchangeControlForbidden);
    // The same control with scope and payload both naming B, but authored by A's
    // controller, who does not control B.
    let scope_b = ScopeRef::Sidecar {
        realm_id: f.w.realm_id(),
        sidecar_id: other.id().retype(),
    };
    let bytes = mutate(&f.w.control(), &f.w.key, |o| {
        set(o, "scope_ref", scope_b.to_json());
        name_b(o);
        set(
            o,
            "semantic_refs",
            Json::Array(vec![akledger::SemanticRef::after(other.id()).to_json()]),
        );
    });
    f.rejects(&bytes, Code::SidecarExchangeControlForbidden);
}

#[test]
fn control_whose_sidecar_lives_in_another_realm_is_forbidden() {
    let f = fixture();
    let realm2 = EventBuilder::new(
        "ak.realm.create",
        ScopeRef::RealmGenesis,
        f.w.actor.clone(),
        t0(),
    )
    .payload(Object::new().with("name", "other".into()).into())
    .sign(&f.w.key)
    .unwrap();
    assert!(matches!(
        f.ledger.append(realm2.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    let wrong = ScopeRef::Sidecar {
        realm_id: realm2.id().retype(),
        sidecar_id: f.w.sidecar_id(),
    };
    let bytes = mutate(&f.w.control(), &f.w.key, |o| {
        set(o, "scope_ref", wrong.to_json());
        set(
            o,
            "realm_id",
            realm2
                .id()
                .retype::<akledger::id::RealmKind>()
                .to_string()
                .into(),
        );
    });
    f.rejects(&bytes, Code::SidecarExchangeControlForbidden);
}

#[test]
fn control_naming_the_request_of_another_exchange_is_admitted_but_not_folded() {
    let f = fixture();
    let mut rng = rand_core::OsRng;
    let info = f.w.info();
    let author = |k: akledger::ed25519_dalek::SigningKey| {
        let actor = service(&k);
        SidecarAuthor::new(
            k,
            actor,
            info.clone(),
            SidecarKey::from_bytes(SIDECAR_KEY),
            0,
        )
    };
    let controller = author(f.w.key.clone());
    let agent = service(&key(2)).principal().clone();
    let strand = f.w.strand_id();
    let track = TrackRef {
        realm_id: f.w.realm_id(),
        strand_id: strand,
        track_name: "main".into(),
    };
    let ctx = || RequestContext::new(track.clone(), "k1", vec![agent.clone()], None).unwrap();
    let x = ExchangeId::parse("exchange-xxxxxxxxxxxxxxxxxxxx").unwrap();
    let y = ExchangeId::parse("exchange-yyyyyyyyyyyyyyyyyyyy").unwrap();
    let t = at("2026-11-29T12:00:01.000Z");
    let req_x = controller
        .request(&x, ctx(), Json::Null, t, &mut rng)
        .unwrap();
    let req_y = controller
        .request(&y, ctx(), Json::Null, t, &mut rng)
        .unwrap();
    for e in [&req_x, &req_y] {
        assert!(matches!(
            f.ledger.append(e.bytes()).unwrap(),
            Appended::Admitted(_)
        ));
    }
    // A close for exchange x that names y's request.
    let view = ExchangeView {
        exchange_id: x.clone(),
        request_event_id: req_y.id(),
        strand_id: strand,
        facts: vec![req_y.id()],
        validated_responses: vec![],
    };
    let graph = MemoryGraph::new();
    let control = controller
        .control(
            &view,
            Act::Close,
            &graph,
            at("2026-11-29T12:00:02.000Z"),
            &mut rng,
        )
        .unwrap();
    assert_eq!(
        f.ledger.append(control.bytes()).unwrap(),
        Appended::Admitted(control.id())
    );
    let fold = f.ledger.exchanges(&f.w.sidecar_id()).unwrap();
    let entry = fold
        .not_folded
        .iter()
        .find(|n| n.event_id == control.id())
        .expect("the control is listed as not folded");
    assert_eq!(entry.reason, Reason::ControlWrongRequest);
    let px = fold
        .projections
        .iter()
        .find(|p| p.exchange_id == x)
        .unwrap();
    assert_eq!(px.status, akledger::Status::Delivered, "x is not closed");
    assert!(px.terminal_event_id.is_none());
}
