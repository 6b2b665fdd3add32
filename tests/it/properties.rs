//! Property tests of the pure core: build → bytes → parse round-trips, single-byte
//! corruption is always rejected, hostile input never panics, and the canonical writer and
//! parser are inverse.

use akledger_testkit as common;

use akledger::canonical::{parse_canonical, to_canonical};
use akledger::limits::MAX_SAFE_INTEGER;
use akledger::{
    DigestSuite, Event, EventBuilder, EventId, Json, Keyring, Object, ScopeRef, SemanticRef,
    Timestamp, Unverified, Verifier,
};
use proptest::collection::vec;
use proptest::prelude::*;
use unicode_normalization::UnicodeNormalization;

/// Any Unicode string, made NFC and stripped of U+FEFF (canonical JSON rejects both).
fn nfc_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z_\\\\\"\\x00-\\x1f]{0,12}",
        "\\PC{0,8}",
    ]
    .prop_map(|s| s.replace('\u{feff}', "").nfc().collect())
}

fn object_of(members: Vec<(String, Json)>) -> Object {
    let mut obj = Object::new();
    for (k, v) in members {
        obj.insert(k, v);
    }
    obj
}

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).prop_map(Json::Int),
        prop_oneof![Just(MAX_SAFE_INTEGER), Just(-MAX_SAFE_INTEGER), Just(0)].prop_map(Json::Int),
        nfc_string().prop_map(Json::Str),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Json::Array),
            vec((nfc_string(), inner), 0..6).prop_map(|m| Json::Object(object_of(m))),
        ]
    })
}

fn payload() -> impl Strategy<Value = Object> {
    vec((nfc_string(), json()), 0..6).prop_map(object_of)
}

fn suite() -> impl Strategy<Value = DigestSuite> {
    prop_oneof![Just(DigestSuite::Sha256), Just(DigestSuite::Blake3)]
}

fn event_id() -> impl Strategy<Value = EventId> {
    (suite(), any::<[u8; 32]>()).prop_map(|(s, d)| EventId::from_digest(s, &d))
}

fn semantic_ref() -> impl Strategy<Value = SemanticRef> {
    prop_oneof![
        (
            event_id(),
            prop_oneof![Just("after"), Just("parent_event")],
            any::<bool>()
        )
            .prop_map(|(id, role, critical)| SemanticRef {
                id: id.to_string(),
                role: role.into(),
                critical,
            }),
        (
            nfc_string(),
            prop_oneof![Just("cites"), Just("mentions"), Just("x_1")]
        )
            .prop_map(|(id, role)| SemanticRef {
                id: format!("urn:x:{id}"),
                role: role.into(),
                critical: false,
            }),
    ]
}

const KINDS: [&str; 6] = [
    "ak.realm.create",
    "ak.sidecar.create",
    "ak.message.create",
    "ak.note.create",
    "ak.task.status_update",
    "ak.a1.b_2.c3",
];

/// Everything needed to author one random valid event.
#[derive(Debug, Clone)]
struct Spec {
    kind: &'static str,
    sidecar_scope: bool,
    realm: EventId,
    sidecar: EventId,
    refs: Vec<SemanticRef>,
    payload: Object,
    millis: u64,
    seed: u8,
    account: bool,
    suite: DigestSuite,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (0..KINDS.len(), any::<bool>(), event_id(), event_id()),
        vec(semantic_ref(), 0..=5),
        payload(),
        (
            0..=253_402_300_799_999u64,
            any::<u8>(),
            any::<bool>(),
            suite(),
        ),
    )
        .prop_map(
            |(
                (k, sidecar_scope, realm, sidecar),
                refs,
                payload,
                (millis, seed, account, suite),
            )| {
                Spec {
                    kind: KINDS[k],
                    sidecar_scope,
                    realm,
                    sidecar,
                    refs,
                    payload,
                    millis,
                    seed,
                    account,
                    suite,
                }
            },
        )
}

fn build(s: &Spec) -> Event<Unverified> {
    let key = common::key(s.seed);
    let actor = if s.account {
        common::account(&key)
    } else {
        common::service(&key)
    };
    let realm_id = s.realm.retype();
    let (scope, payload) = match s.kind {
        "ak.realm.create" => (ScopeRef::RealmGenesis, s.payload.clone()),
        "ak.sidecar.create" => (ScopeRef::Realm { realm_id }, Object::new()),
        "ak.message.create" => (ScopeRef::Realm { realm_id }, s.payload.clone()),
        _ if s.sidecar_scope => (
            ScopeRef::Sidecar {
                realm_id,
                sidecar_id: s.sidecar.retype(),
            },
            s.payload.clone(),
        ),
        _ => (ScopeRef::Realm { realm_id }, s.payload.clone()),
    };
    let created_at = Timestamp::from_millis(s.millis).expect("in range");
    let mut b = EventBuilder::new(s.kind, scope, actor, created_at)
        .payload(payload.into())
        .suite(s.suite);
    let mut seen = std::collections::HashSet::new();
    for r in &s.refs {
        if seen.insert((r.id.clone(), r.role.clone())) {
            b = b.reference(r.clone());
        }
    }
    b.sign(&key).unwrap_or_else(|e| panic!("{e} for {s:?}"))
}

fn verifier() -> Verifier {
    Verifier::new(Keyring::new())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn built_events_round_trip_and_verify(s in spec()) {
        let built = build(&s);
        let bytes = built.bytes().to_vec();
        let parsed = Event::from_bytes(&bytes, &verifier())
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
        prop_assert_eq!(parsed.id(), built.id());
        prop_assert_eq!(parsed.id().suite(), s.suite);
        prop_assert_eq!(parsed.bytes(), &bytes[..]);
        prop_assert_eq!(parsed.envelope(), built.envelope());
        prop_assert_eq!(parsed.created_at().millis(), s.millis);
        let value = parse_canonical(&bytes).expect("canonical");
        prop_assert_eq!(to_canonical(&value), bytes.clone());
        // The id is the suite digest of the preimage, recomputed independently of parse().
        let pre = to_canonical(&Json::Object(common::preimage_of(&built)));
        prop_assert_eq!(EventId::of_preimage(s.suite, &pre), built.id());
        // Signing is deterministic.
        let again = build(&s);
        prop_assert_eq!(again.bytes(), &bytes[..]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_single_byte_flip_is_rejected(s in spec(), pos in any::<prop::sample::Index>(), mask in 1u8..=255) {
        let built = build(&s);
        let mut bytes = built.bytes().to_vec();
        let at = pos.index(bytes.len());
        bytes[at] ^= mask;
        let result = Event::from_bytes(&bytes, &verifier());
        prop_assert!(result.is_err(), "flip of byte {} by {:#04x} accepted: {}",
            at, mask, String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..600)) {
        let _ = Event::parse(&bytes);
        let _ = parse_canonical(&bytes);
    }

    #[test]
    fn random_json_never_panics(v in json()) {
        let bytes = to_canonical(&v);
        let _ = Event::parse(&bytes);
    }

    #[test]
    fn envelope_shaped_json_never_panics(
        s in spec(),
        drops in vec(any::<prop::sample::Index>(), 0..3),
        replace in vec((any::<prop::sample::Index>(), json()), 0..3),
    ) {
        // Start from a real event and damage members (at any depth of the top level),
        // reaching the envelope, ref, proof and payload readers with odd shapes.
        let built = build(&s);
        let mut obj = common::object_of(built.bytes());
        for d in drops {
            let keys: Vec<String> = obj.keys().map(str::to_owned).collect();
            if !keys.is_empty() {
                obj.remove(&keys[d.index(keys.len())]);
            }
        }
        for (i, v) in replace {
            let keys: Vec<String> = obj.keys().map(str::to_owned).collect();
            if !keys.is_empty() {
                let k = keys[i.index(keys.len())].clone();
                common::set(&mut obj, &k, v);
            }
        }
        let bytes = to_canonical(&Json::Object(obj));
        if let Ok(e) = Event::parse(&bytes) {
            let _ = e.verify(&verifier());
        }
    }

    #[test]
    fn canonical_writer_and_parser_are_inverse(v in json()) {
        let bytes = to_canonical(&v);
        let back = parse_canonical(&bytes).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&bytes)));
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(to_canonical(&back), bytes);
    }

    #[test]
    fn canonical_bytes_agree_with_serde_json(v in json()) {
        // serde_json reads canonical text back to the same value (a second parser).
        let bytes = to_canonical(&v);
        let theirs: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        prop_assert_eq!(to_serde(&v), theirs);
    }
}

fn to_serde(v: &Json) -> serde_json::Value {
    match v {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => (*b).into(),
        Json::Int(i) => (*i).into(),
        Json::Str(s) => s.as_str().into(),
        Json::Array(a) => a.iter().map(to_serde).collect(),
        Json::Object(o) => o.iter().map(|(k, v)| (k.to_owned(), to_serde(v))).collect(),
    }
}

#[test]
fn every_position_of_the_fixtures_rejects_bit_flips() {
    // Deterministic complement of the random flips: every byte, several masks.
    let w = common::World::new();
    let v = verifier();
    for event in [w.realm.clone(), w.note(), w.message(), w.control()] {
        let bytes = event.bytes();
        for at in 0..bytes.len() {
            for mask in [0x01u8, 0x02, 0x04, 0x08, 0x20, 0x80] {
                let mut b = bytes.to_vec();
                b[at] ^= mask;
                assert!(
                    Event::from_bytes(&b, &v).is_err(),
                    "flip at {at} by {mask:#04x} accepted"
                );
            }
        }
    }
}
