//! Conformance against published Arkret data (not our own vectors): the files under
//! `tests/data/arkret/` are copied byte for byte from the public `arkret-org/arkret-spec`
//! repository (source paths and commits in that directory's README).
//!
//! - `content-bound-event-id-fixture.json`: every case is accounted for. Cases with data
//!   (preimage, digest, id bytes, derived ids) are recomputed; mutation cases are applied to
//!   ids and to whole signed events and must fail with the fixture's error code. The few
//!   cases about protocol parts this engine does not implement are listed, with the reason,
//!   in [`NOT_APPLICABLE`] — an unknown new case fails the test.
//! - `canonical-json-digest-kat-fixture.json`: our canonical writer reproduces every
//!   transcript byte for byte, and the domain-prefixed sha256 digests match.
//! - `agent-sidecar-exchange-control.schema.json`: checked by
//!   `tests/data/vectors/check_control_schema.py` (Python `jsonschema`) over every control
//!   plaintext the helpers author; its committed report is read here, with one named test
//!   per `allOf` rule of the schema.

use akledger_testkit as common;

use akledger::canonical::{parse_canonical, parse_value, to_canonical};
use akledger::id::{RealmKind, StrandKind};
use akledger::{Code, DigestSuite, EventId, Keyring, RealmId, StrandId, Verifier};
use base64::Engine as _;
use serde_json::Value;

const EVENT_ID: &str = include_str!("../data/arkret/content-bound-event-id-fixture.json");
const KAT: &str = include_str!("../data/arkret/canonical-json-digest-kat-fixture.json");
const SCHEMA_REPORT: &str = include_str!("../data/vectors/control_schema_report.json");
const PLAINTEXTS: &str = include_str!("../data/vectors/control_plaintexts.json");

/// Cases of the event-id fixture about protocol parts outside this profile, and why.
const NOT_APPLICABLE: [(&str, &str); 3] = [
    (
        "agent_provision_and_genesis_in_one_batch_rejected",
        "agent provisioning (ak.agent.provision) is not part of this profile",
    ),
    (
        "genesis_without_accepted_provision_declaration_rejected",
        "agent provisioning (ak.agent.provision) is not part of this profile",
    ),
    (
        "two_provisions_declaring_one_realm_id_rejected",
        "agent provisioning (ak.agent.provision) is not part of this profile",
    ),
];

fn cases(text: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(text).expect("published fixture is JSON");
    doc["cases"].as_array().expect("cases").clone()
}

fn s<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: {key} missing", case["name"]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn token(id: &str) -> &str {
    id.rsplit(':').next().expect("token")
}

fn id_text(raw: &[u8]) -> String {
    format!(
        "ak:event:{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    )
}

fn code_of(name: &str) -> Code {
    Code::parse(name).unwrap_or_else(|| panic!("{name} is not a PROFILE §10 code"))
}

/// A signed sha256-suite event of ours, its bytes, and its id text.
fn sha256_event() -> (Vec<u8>, String) {
    let w = common::World::new();
    let e = w
        .builder("ak.note.create", w.realm_scope())
        .after([w.realm.id()])
        .suite(DigestSuite::Sha256)
        .sign(&w.key)
        .expect("note");
    (e.bytes().to_vec(), e.id().to_string())
}

/// The code a whole event gets when its `event_id` text is replaced by `id`.
fn event_with_id(bytes: &[u8], own: &str, id: &str) -> Code {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8");
    assert!(text.contains(own));
    let mutated = text.replacen(own, id, 1);
    common::rejection(mutated.as_bytes(), &Verifier::new(Keyring::new()))
}

/// Preimage → digest → id → derived object id, as the fixture states them.
fn check_derivation(case: &Value) {
    let name = s(case, "name");
    let preimage = s(case, "digest_preimage_canonical_bytes_utf8").as_bytes();
    // The published preimage is canonical JSON by our reader too.
    let parsed = parse_canonical(preimage).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(to_canonical(&parsed), preimage, "{name}");
    assert_eq!(case["suite_wire_code"], 1, "{name}");
    let id = EventId::of_preimage(DigestSuite::Sha256, preimage);
    assert_eq!(id.digest_text(), s(case, "event_digest"), "{name}");
    assert_eq!(hex(id.bytes()), s(case, "event_id_bytes_hex"), "{name}");
    assert_eq!(id.to_string(), s(case, "derived_event_id"), "{name}");
    assert_eq!(
        EventId::parse(s(case, "derived_event_id")),
        Ok(id),
        "{name}"
    );
    if case.get("derived_realm_id").is_some() {
        let realm: RealmId = id.retype();
        assert_eq!(realm.to_string(), s(case, "derived_realm_id"), "{name}");
    }
    if case.get("derived_object_id").is_some() {
        let strand: StrandId = id.retype();
        assert_eq!(strand.to_string(), s(case, "derived_object_id"), "{name}");
        assert_eq!(
            akledger::id::Id::<StrandKind>::parse(s(case, "derived_object_id")),
            Ok(strand)
        );
    }
}

fn check_case(case: &Value) {
    let name = s(case, "name");
    let expected = &case["expected"];
    match name {
        "principal_control_realm_id_is_event_derived_and_nonzero_nibble_rejected" => {
            let form = &case["rejected_form"];
            let bad = s(form, "realm_id");
            assert_eq!(
                &token(bad)[..1],
                "E",
                "header 0x11 spelled as the fixture says"
            );
            let err = akledger::id::Id::<RealmKind>::parse(bad).expect_err(name);
            // `realm_id_not_event_derived` is a reason; its §10 code is schema_violation.
            assert_eq!(err.code(), Code::SchemaViolation, "{name}");
            assert_eq!(case["accepted_form"]["retype_is_byte_identical"], true);
        }
        "realm_genesis_id_is_derived_and_self_certifying"
        | "agent_provision_forward_declaration_is_constructible"
        | "strand_object_id_is_retyped_event_id" => check_derivation(case),
        "agent_provision_declares_the_frozen_genesis_realm_id" => {
            check_derivation(case);
            // The declared realm id is a well-formed event-derived realm id.
            RealmId::parse(s(case, "declared_principal_control_realm_id")).expect(name);
        }
        "one_event_derives_distinct_report_and_queue_item_typed_ids" => {
            let event = s(case, "derived_event_id");
            EventId::parse(event).expect(name);
            let ids = case["derived_object_ids"].as_array().expect(name);
            for id in ids {
                assert_eq!(token(id.as_str().expect(name)), token(event), "{name}");
            }
            let mut unique: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
            unique.dedup();
            assert_eq!(unique.len(), ids.len(), "{name}: full typed ids are unique");
        }
        "closed_single_genesis_kinds_retype_the_event_id" => {
            let event = s(case, "derived_event_id");
            EventId::parse(event).expect(name);
            let map = case["event_kind_to_object_id"].as_object().expect(name);
            assert!(!map.is_empty());
            for id in map.values() {
                assert_eq!(token(id.as_str().expect(name)), token(event), "{name}");
            }
        }
        "create_payload_carrying_object_id_rejected" => {
            // Realm and strand create payloads are opaque here (PROFILE §6), so an object id
            // in them is never read; the sidecar create's payload is closed (`{}`), so one
            // carrying its object id is refused with the published code.
            let w = common::World::new();
            let bytes = common::mutate(&w.sidecar, &w.key, |o| {
                let object = akledger::Object::new().with("id", w.sidecar_id().to_string().into());
                o.remove("payload");
                o.insert(
                    "payload",
                    akledger::Object::new().with("object", object.into()).into(),
                );
            });
            let code = common::rejection(&bytes, &Verifier::new(Keyring::new()));
            assert_eq!(code, code_of(s(expected, "error")), "{name}");
        }
        "realm_genesis_carrying_realm_id_rejected" => {
            let w = common::World::new();
            let bytes = common::mutate(&w.realm, &w.key, |o| {
                o.insert("realm_id", w.realm_id().to_string().into());
            });
            let code = common::rejection(&bytes, &Verifier::new(Keyring::new()));
            assert_eq!(code, code_of(s(expected, "error")), "{name}");
        }
        "carried_event_id_not_matching_recomputation_rejected" => {
            let (bytes, own) = sha256_event();
            let mut raw = EventId::parse(&own).expect("own id").bytes().to_vec();
            raw[32] ^= 0x01;
            let code = event_with_id(&bytes, &own, &id_text(&raw));
            assert_eq!(code, code_of(s(expected, "error")), "{name}");
        }
        "blake3_suite_code_is_part_of_identity" => {
            let id = EventId::parse(s(case, "derived_event_id")).expect(name);
            assert_eq!(id.suite(), DigestSuite::Blake3);
            assert_eq!(hex(id.bytes()), s(case, "event_id_bytes_hex"));
            assert_eq!(id.digest_text(), s(case, "event_digest"));
            let raw = unhex(s(case, "event_id_bytes_hex"));
            assert_eq!(
                EventId::from_bytes(&raw.try_into().expect("33 bytes")).expect(name),
                id
            );
        }
        "same_full_digest_different_suite_is_different_id" => {
            let a = EventId::parse(s(case, "sha256_event_id")).expect(name);
            let b = EventId::parse(s(case, "blake3_event_id")).expect(name);
            assert_eq!(a.digest(), b.digest());
            assert_ne!(a, b);
            assert_eq!(
                (a.suite(), b.suite()),
                (DigestSuite::Sha256, DigestSuite::Blake3)
            );
        }
        "full_digest_single_bit_difference_changes_event_id" => {
            let a = EventId::parse(s(case, "first_event_id")).expect(name);
            let b = EventId::parse(s(case, "second_event_id")).expect(name);
            assert_ne!(a, b);
            let bits: u32 = a
                .digest()
                .iter()
                .zip(b.digest())
                .map(|(x, y)| (x ^ y).count_ones())
                .sum();
            assert_eq!(bits, 1, "{name}");
        }
        "suite_code_mismatch_rejected"
        | "invalid_zero_suite_code_rejected"
        | "nonzero_event_reserved_nibble_rejected"
        | "reserved_suite_code_rejected"
        | "unknown_suite_code_rejected" => {
            let header = match name {
                "suite_code_mismatch_rejected" => 0x02,
                "invalid_zero_suite_code_rejected" => 0x00,
                "nonzero_event_reserved_nibble_rejected" => 0x11,
                "reserved_suite_code_rejected" => 0x03,
                _ => 0x04,
            };
            let want = code_of(s(expected, "error"));
            let (bytes, own) = sha256_event();
            let mut raw = EventId::parse(&own).expect("own id").bytes().to_vec();
            raw[0] = header;
            let mutated = id_text(&raw);
            assert_eq!(event_with_id(&bytes, &own, &mutated), want, "{name}");
            if header != 0x02 {
                // The id alone is refused with the same code.
                assert_eq!(EventId::parse(&mutated).map_err(|e| e.code()), Err(want));
            }
        }
        "padding_rejected" | "wrong_decoded_length_rejected" => {
            let want = code_of(s(expected, "error"));
            let (bytes, own) = sha256_event();
            let raw = EventId::parse(&own).expect("own id").bytes().to_vec();
            let mutated = if name == "padding_rejected" {
                // 33 bytes need no padding; appending it makes a 45-character token.
                format!("{}=", id_text(&raw))
            } else {
                id_text(&raw[..32])
            };
            assert_eq!(EventId::parse(&mutated).map_err(|e| e.code()), Err(want));
            assert_eq!(event_with_id(&bytes, &own, &mutated), want, "{name}");
        }
        "same_event_id_different_canonical_bytes_is_hash_collision" => {
            // A real collision cannot be built; the engine-visible rule is the same: one id
            // with other canonical bytes is never a duplicate (here: `duplicate_conflict`,
            // the second copy is refused and the first stays; PROFILE §10).
            assert_eq!(expected["duplicate"], false);
            EventId::parse(s(case, "event_id")).expect(name);
            same_id_other_bytes_is_not_a_duplicate();
        }
        other => {
            let skipped = NOT_APPLICABLE.iter().find(|(n, _)| *n == other);
            assert!(skipped.is_some(), "unhandled published case {other}");
        }
    }
}

/// One envelope signed by two keys authorized for one principal: same id, other bytes.
fn same_id_other_bytes_is_not_a_duplicate() {
    use akledger::{ActorId, Appended, Config, DidCoreId, EventBuilder, Ledger, ScopeRef};
    let principal = DidCoreId::parse("ak:did_core:web:example.org").expect("principal");
    let (k1, k2) = (common::key(41), common::key(42));
    let keyring = common::keyring_authorizing(&principal, &[&k1, &k2]);
    let dir = tempfile::tempdir().expect("dir");
    let ledger = Ledger::open_with(Config::new(dir.path()).keyring(keyring)).expect("ledger");
    let actor = ActorId::Service {
        service_id: principal,
    };
    let make = |k| {
        EventBuilder::new(
            "ak.realm.create",
            ScopeRef::RealmGenesis,
            actor.clone(),
            common::t0(),
        )
        .sign(k)
        .expect("realm")
    };
    let (a, b) = (make(&k1), make(&k2));
    assert_eq!(a.id(), b.id());
    assert_ne!(a.bytes(), b.bytes());
    assert_eq!(
        ledger.append(a.bytes()).expect("a"),
        Appended::Admitted(a.id())
    );
    assert_eq!(
        ledger.append(b.bytes()).expect("b").code(),
        Some(Code::DuplicateConflict)
    );
}

#[test]
fn every_published_event_id_case_passes() {
    let cases = cases(EVENT_ID);
    assert_eq!(cases.len(), 24, "the fixture as copied has 24 cases");
    for case in &cases {
        check_case(case);
    }
    for (name, _) in NOT_APPLICABLE {
        assert!(
            cases.iter().any(|c| c["name"] == name),
            "{name} is listed as not applicable but is not in the fixture"
        );
    }
}

#[test]
fn published_layout_is_ours() {
    let doc: Value = serde_json::from_str(EVENT_ID).expect("json");
    let layout = &doc["layout"];
    let id = EventId::of_preimage(DigestSuite::Blake3, b"layout");
    assert_eq!(layout["decoded_length_bytes"], id.bytes().len());
    assert_eq!(layout["digest_length_bytes"], id.digest().len());
    assert_eq!(layout["typed_event_id_length"], id.to_string().len());
    assert_eq!(
        layout["base64url_suffix_length"],
        token(&id.to_string()).len()
    );
}

#[test]
fn published_canonical_json_kat_passes() {
    let cases = cases(KAT);
    assert_eq!(cases.len(), 3);
    for case in &cases {
        let name = s(case, "name");
        // The transcript as a JSON value in the fixture's own (non-canonical) spelling.
        let loose = serde_json::to_vec(&case["transcript"]).expect("transcript");
        let value = parse_value(&loose).unwrap_or_else(|e| panic!("{name}: {e}"));
        let canonical = to_canonical(&value);
        assert_eq!(
            String::from_utf8(canonical.clone()).expect("utf-8"),
            s(case, "canonical_transcript_utf8"),
            "{name}"
        );
        assert_eq!(
            parse_canonical(&canonical).map(|v| to_canonical(&v)),
            Ok(canonical.clone())
        );
        let mut input = unhex(s(case, "prefix_bytes_hex"));
        assert_eq!(
            input,
            format!("{}.v1\n", s(case, "domain").trim_end_matches(".v1")).into_bytes()
        );
        input.extend_from_slice(&canonical);
        assert_eq!(hex(&input), s(case, "digest_input_hex"), "{name}");
        let digest = DigestSuite::Sha256.digest(&input);
        assert_eq!(
            format!("sha256:{}", hex(&digest)),
            s(case, "expected_digest"),
            "{name}"
        );
    }
}

fn report() -> Value {
    serde_json::from_str(SCHEMA_REPORT).expect("report")
}

/// Every control plaintext the authoring helpers write (the sample sidecar's, regenerated
/// here and compared with the committed input of the Python check) was found valid by
/// `jsonschema` against the published schema, and reads back through our own reader.
#[test]
fn every_authored_control_plaintext_is_valid_under_the_published_schema() {
    let fresh = akledger::workload::control_plaintext_samples().expect("samples");
    let recorded: Value = serde_json::from_str(PLAINTEXTS).expect("plaintexts");
    let recorded = recorded.as_array().expect("array");
    assert_eq!(
        recorded.len(),
        fresh.len(),
        "control_plaintexts.json is stale"
    );
    for ((action, bytes), item) in fresh.iter().zip(recorded) {
        assert_eq!(item["action"], action.as_str());
        assert_eq!(
            item["plaintext"].as_str().map(str::as_bytes),
            Some(bytes.as_slice())
        );
    }
    let report = report();
    let authored = report["authored"].as_array().expect("authored");
    assert_eq!(authored.len(), fresh.len());
    let mut actions: Vec<&str> = Vec::new();
    for ((action, bytes), item) in fresh.iter().zip(authored) {
        assert_eq!(item["valid"], true, "{}", item["name"]);
        assert_eq!(
            item["plaintext"].as_str().map(str::as_bytes),
            Some(bytes.as_slice())
        );
        let parsed = akledger::exchange::ControlPlaintext::parse(bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", item["name"]));
        assert_eq!(parsed.to_json().to_bytes(), *bytes, "{}", item["name"]);
        actions.push(action);
    }
    actions.sort_unstable();
    actions.dedup();
    assert_eq!(actions, ["cancel", "close", "fail", "reassign_coordinator"]);
}

/// The report's negatives for one `allOf` rule: each failed under that rule alone, and our
/// reader refuses it too.
fn negatives_of(rule: &str) -> Vec<String> {
    let report = report();
    let mut names = Vec::new();
    for item in report["negative"].as_array().expect("negative") {
        if item["all_of_rule"] != rule {
            continue;
        }
        let name = item["name"].as_str().expect("name").to_owned();
        assert_eq!(item["valid"], false, "{name}");
        assert_eq!(item["failing"], serde_json::json!([rule]), "{name}");
        let text = item["plaintext"].as_str().expect("plaintext");
        let err = akledger::exchange::ControlPlaintext::parse(text.as_bytes()).expect_err(&name);
        assert_eq!(err.code(), Code::SchemaViolation, "{name}");
        names.push(name);
    }
    names.sort();
    names
}

/// allOf[0]: close, cancel and fail need `response_event_ids` and carry no coordinator.
#[test]
fn schema_rule_all_of_0_terminal_actions_need_responses_and_no_coordinator() {
    assert_eq!(
        negatives_of("allOf[0]"),
        [
            "terminal_with_coordinator_agent_id",
            "terminal_without_response_event_ids"
        ]
    );
}

/// allOf[1]: `failure_reason_code` is present exactly for `fail`.
#[test]
fn schema_rule_all_of_1_failure_reason_code_iff_fail() {
    assert_eq!(
        negatives_of("allOf[1]"),
        [
            "close_with_failure_reason_code",
            "fail_without_failure_reason_code"
        ]
    );
}

/// allOf[2]: `reassign_coordinator` needs both coordinator members and no responses.
#[test]
fn schema_rule_all_of_2_reassign_needs_both_coordinators_and_no_responses() {
    assert_eq!(
        negatives_of("allOf[2]"),
        [
            "reassign_with_response_event_ids",
            "reassign_without_expected_coordinator"
        ]
    );
}
