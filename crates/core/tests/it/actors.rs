//! Seed 000 in the core (PROFILE §14): commitments against known answers computed by
//! Python's json and the blake3 package (`tests/data/redaction_vectors.py`), entity ids,
//! actor models checked against the seed's definitions, and PNCP data checked and
//! redacted against an action's models.

use akledger_core::actors::{
    check_data, commitment, placeholder, placeholder_commitment, redact, ActorModel, DataFault,
    Disclosure, EntityId, Pncp, PncpKind, Salt, SkillLock,
};
use akledger_core::canonical::{parse_value, to_canonical};
use akledger_core::ed25519_dalek::SigningKey;
use akledger_core::{Code, DidCoreId, EventId, ExchangeId, Json};

fn json(text: &str) -> Json {
    parse_value(text.as_bytes()).unwrap()
}

fn did(seed: u8) -> DidCoreId {
    DidCoreId::for_key(&SigningKey::from_bytes(&[seed; 32]).verifying_key())
}

#[test]
fn commitments_match_an_independent_canonical_json_and_blake3() {
    let text = include_str!("../data/redaction_vectors.json");
    let vectors: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
    assert_eq!(vectors.len(), 4);
    for v in vectors {
        let exchange = ExchangeId::parse(v["exchange_id"].as_str().unwrap()).unwrap();
        let field = v["field"].as_str().unwrap();
        let salt = Salt::parse(v["salt"].as_str().unwrap()).unwrap();
        let value = Json::try_from(&v["value"]).unwrap();
        let expected = v["commitment"].as_str().unwrap();
        assert_eq!(
            commitment(&exchange, field, &salt, &value),
            expected,
            "{field}"
        );
        // The preimage is the independent tool's canonical JSON, byte for byte.
        let preimage = json(v["preimage"].as_str().unwrap());
        assert_eq!(
            to_canonical(&preimage),
            v["preimage"].as_str().unwrap().as_bytes()
        );
        // A disclosure opens its placeholder, and nothing else does.
        let sealed = placeholder(expected);
        assert_eq!(placeholder_commitment(&sealed), Some(expected));
        let disclosure = Disclosure {
            event_id: EventId::parse("ak:event:AqxYhBYiMNBPpu4gBVk_1XnvOa10ryRn0nMY1xcv2Rsj")
                .unwrap(),
            field: field.to_owned(),
            salt,
            value: value.clone(),
        };
        assert!(disclosure.opens(&exchange, &sealed));
        assert_eq!(
            Disclosure::from_json(&disclosure.to_json()).unwrap(),
            disclosure
        );
        let other = ExchangeId::parse("exchange-99999999-99999999").unwrap();
        assert!(!disclosure.opens(&other, &sealed), "bound to its exchange");
        let lie = Disclosure {
            value: Json::str("something else"),
            ..disclosure.clone()
        };
        assert!(!lie.opens(&exchange, &sealed));
        let renamed = Disclosure {
            field: format!("{field}2"),
            ..disclosure
        };
        assert!(!renamed.opens(&exchange, &sealed), "bound to its field");
    }
}

#[test]
fn placeholders_of_any_other_shape_are_raw_values() {
    let c = "blake3:872486958c35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894";
    for text in [
        r#""blake3:872486958c35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894""#,
        r#"{"ak_redacted":{"alg":"sha256-salted-v1","commitment":"blake3:872486958c35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894"}}"#,
        r#"{"ak_redacted":{"alg":"blake3-salted-v1","commitment":"blake3:872486958C35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894"}}"#,
        r#"{"ak_redacted":{"alg":"blake3-salted-v1","commitment":"blake3:8724"}}"#,
        r#"{"ak_redacted":{"alg":"blake3-salted-v1","commitment":"blake3:872486958c35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894","x":1}}"#,
        r#"{"ak_redacted":{"alg":"blake3-salted-v1","commitment":"blake3:872486958c35b0fc084bac9ce3353b80efd4008920865c530e031e6f56653894"},"x":1}"#,
    ] {
        assert_eq!(placeholder_commitment(&json(text)), None, "{text}");
    }
    assert_eq!(placeholder_commitment(&placeholder(c)), Some(c));
    assert!(Salt::parse("AAEC").is_err(), "not 32 bytes");
    assert!(Salt::parse(&"A".repeat(43)).is_ok());
    assert!(
        Salt::parse(&format!("{}=", "A".repeat(43))).is_err(),
        "padded"
    );
}

#[test]
fn entity_ids_are_a_did_core_id_and_a_plain_decimal_version() {
    let d = did(1);
    let e = EntityId::parse(&format!("{d}#12")).unwrap();
    assert_eq!((e.did(), e.version()), (&d, 12));
    assert_eq!(e.to_string(), format!("{d}#12"));
    for bad in [
        format!("{d}"),
        format!("{d}#"),
        format!("{d}#0"),
        format!("{d}#012"),
        format!("{d}#+1"),
        format!("{d}#1.0"),
        format!("{d}#9007199254740992"),
        "nobody#1".to_string(),
    ] {
        let err = EntityId::parse(&bad).unwrap_err();
        assert_eq!(err.code(), Code::SchemaViolation, "{bad}");
    }
    assert!(EntityId::parse(&format!("{d}#9007199254740991")).is_ok());
}

/// A model with every definition of seed 000 in use: a subject with an action whose input
/// and output models use each SkillDataModel form, questions both ways, labels, a skill
/// set, a lock, an observance lock and upgrades.
fn full_model(entity: &EntityId) -> Json {
    json(&format!(
        r#"{{
 "id": "{entity}", "description": null, "x-extra": {{"kept": true}},
 "skills": {{
  "skills": [{{"subject": "travel", "actions": [{{
    "action": "book",
    "input": [{{"name": "destination", "optional": false, "redacted": false}},
              {{"name": "passport", "optional": false, "redacted": true}},
              {{"name": "note", "optional": true, "redacted": false, "x": 1}}],
    "output": {{"ticket": "ticket", "card": {{"name": "card", "optional": true, "redacted": true}}}},
    "requesterQuestions": [{{"id": "q1", "name": "status?", "question": "ask", "answer": {{"name": "eta", "optional": false, "redacted": false}}}}],
    "fulfillerQuestions": [{{"id": "q2", "name": "dob", "description": null, "question": null,
                             "answer": {{"name": "dob", "optional": false, "redacted": true}}}}],
    "requesterLabels": {{"adult": {{"label": "adult", "constraints": []}}}},
    "inputForm": {{"anything": ["goes"]}}
  }}]}}],
  "skillsets": [{{"id": "{entity}", "skills": [{{"subject": "mail", "actions": [{{"action": "send"}}]}}]}}],
  "canLock": false,
  "lock": {{"l1": {{"subject": "pay", "action": "charge", "version": null, "actor": "{entity}"}}}},
  "observanceLock": {{"o1": {{
     "key": {{"obsId": "o1", "subject": "travel", "action": "book", "filter": {{"kind": "Pncp", "pncp": "Response"}}}},
     "lock": {{"obsId": "o1", "requester": null, "fulfiller": "{entity}", "subject": "travel", "action": "book", "filter": {{"kind": "Skill"}}}}}}}},
  "upgrades": {{"1": "2"}}
 }}
}}"#
    ))
}

#[test]
fn a_model_using_every_definition_of_seed_000_is_read_whole() {
    let e = EntityId::parse(&format!("{}#3", did(2))).unwrap();
    let model = ActorModel::parse(&full_model(&e), &e).unwrap();
    assert!(model.offers("travel", "book"));
    assert!(model.offers("mail", "send"), "through a skill set");
    assert!(!model.offers("travel", "send"));
    assert!(!model.can_lock);
    let book = model.action("travel", "book").unwrap();
    let input = book.input.as_ref().unwrap();
    let names: Vec<(&str, bool, bool)> = input
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.optional, f.redacted))
        .collect();
    assert_eq!(
        names,
        [
            ("destination", false, false),
            ("passport", false, true),
            ("note", true, false)
        ]
    );
    let output = book.output.as_ref().unwrap();
    assert_eq!(output.redacted().count(), 1);
    assert_eq!(book.requester_questions[0].id, "q1");
    assert!(book.fulfiller_questions[0].answer.as_ref().unwrap().fields[0].redacted);
    let lock = model.lock_for("pay", "charge").unwrap();
    assert_eq!(lock.actor.as_deref(), Some(e.to_string().as_str()));
    // Defaults: a model of nothing but its id offers nothing and may lock.
    let bare = ActorModel::parse(&json(&format!(r#"{{"id":"{e}"}}"#)), &e).unwrap();
    assert!(bare.can_lock && bare.subjects.is_empty() && bare.locks.is_empty());
}

#[test]
fn each_broken_definition_is_a_schema_violation_naming_where() {
    let e = EntityId::parse(&format!("{}#3", did(2))).unwrap();
    let good = full_model(&e);
    let text = String::from_utf8(to_canonical(&good)).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            text.replacen(&format!(r#""id":"{e}""#), r#""id":"x""#, 1),
            "model.id",
        ),
        (
            text.replace(r#"}],"subject":"travel"}"#, "}]}"),
            "skills.skills[0].subject",
        ),
        (
            text.replace(r#""canLock":false"#, r#""canLock":"no""#),
            "canLock",
        ),
        (
            text.replace(r#""redacted":true"#, r#""redacted":"yes""#),
            "redacted",
        ),
        (
            text.replace(
                r#""optional":false,"redacted":false"#,
                r#""redacted":false"#,
            ),
            "optional",
        ),
        (
            text.replace(r#""pncp":"Response""#, r#""pncp":"Request""#),
            "filter.pncp",
        ),
        (
            text.replace(r#"{"kind":"Skill"}"#, r#"{"kind":"Other"}"#),
            "filter.kind",
        ),
        (
            text.replace(r#""constraints":[]"#, r#""constraints":{}"#),
            "constraints",
        ),
        (
            text.replace(r#""upgrades":{"1":"2"}"#, r#""upgrades":{"1":2}"#),
            "upgrades",
        ),
        (
            text.replace(r#""id":"q1","#, ""),
            "requesterQuestions[0].id",
        ),
        (text.replace(r#""action":"charge","#, ""), "lock.l1.action"),
        (
            text.replace(r#""obsId":"o1","requester""#, r#""requester""#),
            "lock.obsId",
        ),
        (
            text.replace(r#""ticket":"ticket""#, r#""ticket":"card""#),
            "two fields",
        ),
    ];
    for (broken, needle) in cases {
        assert_ne!(broken, text, "the case {needle} changed nothing");
        let err = ActorModel::parse(&json(&broken), &e).unwrap_err();
        assert_eq!(err.code(), Code::SchemaViolation, "{needle}");
        assert!(
            err.message().contains(needle),
            "{needle}: {}",
            err.message()
        );
    }
}

#[test]
fn pncp_members_are_closed_and_kinds_pair_with_roles() {
    let p = Pncp::from_json(&json(
        r#"{"kind":"Question","subject":"travel","action":"book","question_id":"q1","data":{"eta":"5"}}"#,
    ))
    .unwrap();
    assert_eq!(p.kind, PncpKind::Question);
    assert_eq!(Pncp::from_json(&p.to_json()).unwrap(), p);
    let roles: Vec<&str> = PncpKind::ALL.iter().map(|k| k.role()).collect();
    assert_eq!(
        roles,
        [
            "request",
            "internal",
            "internal",
            "internal",
            "internal",
            "user_facing_response",
            "internal"
        ]
    );
    for bad in [
        r#"{"kind":"Ask","subject":"s","action":"a"}"#,
        r#"{"kind":"Request","subject":"s"}"#,
        r#"{"kind":"Request","subject":"s","action":"a","extra":1}"#,
        r#"{"kind":"Request","subject":"s","action":"a","data":[1]}"#,
        r#"{"kind":"Request","subject":"s","action":"a","question_id":7}"#,
    ] {
        assert_eq!(
            Pncp::from_json(&json(bad)).unwrap_err().code(),
            Code::SchemaViolation,
            "{bad}"
        );
    }
}

#[test]
fn data_is_checked_and_redacted_against_the_action_model() {
    let e = EntityId::parse(&format!("{}#3", did(2))).unwrap();
    let model = ActorModel::parse(&full_model(&e), &e).unwrap();
    let input = model
        .action("travel", "book")
        .unwrap()
        .input
        .as_ref()
        .unwrap();
    let exchange = ExchangeId::parse("exchange-00000001-00000000").unwrap();
    let raw = json(r#"{"destination":"Lyon","passport":"X1234567","extra":true}"#);
    let raw = raw.as_object().unwrap();
    assert_eq!(
        check_data(Some(raw), Some(input)),
        Err(DataFault::RawRedacted("passport".into()))
    );
    let mut n = 0u8;
    let (sealed, withheld) = redact(raw, Some(input), &exchange, || {
        n += 1;
        Salt([n; 32])
    });
    assert_eq!(check_data(Some(&sealed), Some(input)), Ok(()));
    assert_eq!(withheld.len(), 1);
    assert_eq!(withheld[0].field, "passport");
    assert_eq!(withheld[0].value, Json::str("X1234567"));
    assert_eq!(sealed.get("destination"), raw.get("destination"));
    assert_eq!(
        sealed.get("extra"),
        raw.get("extra"),
        "unnamed fields are kept"
    );
    let sealed_bytes = to_canonical(&Json::Object(sealed.clone()));
    assert!(!String::from_utf8_lossy(&sealed_bytes).contains("X1234567"));
    let c = placeholder_commitment(sealed.get("passport").unwrap()).unwrap();
    assert_eq!(
        c,
        commitment(
            &exchange,
            "passport",
            &Salt([1; 32]),
            &Json::str("X1234567")
        )
    );
    // Redacting again changes nothing: the placeholder is kept, no salt is drawn.
    let (again, none) = redact(&sealed, Some(input), &exchange, || unreachable!());
    assert_eq!((again, none.len()), (sealed, 0));
    // A required field missing; optional ones may be.
    let partial = json(r#"{"passport":"X"}"#);
    let (partial, _) = redact(partial.as_object().unwrap(), Some(input), &exchange, || {
        Salt([9; 32])
    });
    assert_eq!(
        check_data(Some(&partial), Some(input)),
        Err(DataFault::Missing("destination".into()))
    );
    assert_eq!(check_data(None, None), Ok(()));
}

#[test]
fn a_pncp_member_rides_beside_a_binding_whose_role_its_kind_goes_with() {
    use akledger_core::exchange::{Binding, MessageError, MessagePlaintext, Role};
    let exchange = ExchangeId::parse("exchange-00000001-00000000").unwrap();
    let request = EventId::parse("ak:event:AqxYhBYiMNBPpu4gBVk_1XnvOa10ryRn0nMY1xcv2Rsj").unwrap();
    let internal = Binding {
        exchange_id: exchange.clone(),
        role: Role::Internal {
            request_event_id: request,
        },
    };
    let response = Binding {
        exchange_id: exchange.clone(),
        role: Role::Response {
            request_event_id: request,
            completes: None,
        },
    };
    let pncp = |kind: &str| {
        Pncp::from_json(&json(&format!(
            r#"{{"kind":"{kind}","subject":"travel","action":"book"}}"#
        )))
        .unwrap()
    };
    let text = |binding: Option<&Binding>, p: Option<Pncp>| {
        MessagePlaintext {
            body: Json::Null,
            binding: binding.cloned(),
            pncp: p,
        }
        .to_json()
        .to_bytes()
    };
    for kind in ["Question", "Answer", "Status", "Cancel", "Error"] {
        let bytes = text(Some(&internal), Some(pncp(kind)));
        let read = MessagePlaintext::parse(&bytes).unwrap();
        assert_eq!(read.pncp, Some(pncp(kind)), "{kind}");
        let wrong = text(Some(&response), Some(pncp(kind)));
        assert_eq!(
            MessagePlaintext::parse(&wrong),
            Err(MessageError::Binding(Some(exchange.clone()))),
            "{kind} as a response"
        );
    }
    assert!(MessagePlaintext::parse(&text(Some(&response), Some(pncp("Response")))).is_ok());
    assert_eq!(
        MessagePlaintext::parse(&text(Some(&internal), Some(pncp("Request")))),
        Err(MessageError::Binding(Some(exchange.clone())))
    );
    assert_eq!(
        MessagePlaintext::parse(&text(None, Some(pncp("Status")))),
        Err(MessageError::Binding(None)),
        "a pncp member needs a binding"
    );
    // A pncp member that does not read makes the binding invalid too.
    let mut bad = MessagePlaintext::parse(&text(Some(&internal), None))
        .unwrap()
        .to_json();
    if let Json::Object(o) = &mut bad {
        o.insert(
            "pncp",
            json(r#"{"kind":"Shout","subject":"s","action":"a"}"#),
        );
    }
    assert_eq!(
        MessagePlaintext::parse(&bad.to_bytes()),
        Err(MessageError::Binding(Some(exchange)))
    );
}

/// Seed 000's SkillSetLock as the fold applies it (`SkillLock::admits`): an `actor` lock
/// admits that entity (or, given as a did, any of its versions) only; a `version` lock
/// admits agents that offer the skill in the skill set of that id only.
#[test]
fn skill_locks_admit_the_locked_actor_and_skill_set_only() {
    let entity = EntityId::new(did(1), 1).unwrap();
    let agent = ActorModel::parse(&full_model(&entity), &entity).unwrap();
    let other_entity = EntityId::new(did(2), 3).unwrap();
    let other = ActorModel::parse(&full_model(&other_entity), &other_entity).unwrap();
    let lock = |version: Option<String>, actor: Option<String>| SkillLock {
        key: "l".into(),
        subject: "mail".into(),
        action: "send".into(),
        version,
        actor,
    };
    assert!(lock(None, None).admits(&agent));
    assert!(lock(None, Some(entity.to_string())).admits(&agent));
    assert!(lock(None, Some(did(1).to_string())).admits(&agent));
    assert!(!lock(None, Some(entity.to_string())).admits(&other));
    assert!(!lock(None, Some(EntityId::new(did(1), 2).unwrap().to_string())).admits(&agent));
    // mail/send is offered in the skill set whose id is the model's own entity id.
    assert!(lock(Some(entity.to_string()), None).admits(&agent));
    assert!(!lock(Some(other_entity.to_string()), None).admits(&agent));
    assert!(lock(Some(other_entity.to_string()), None).admits(&other));
    // travel/book is offered, but in no skill set.
    let book = SkillLock {
        subject: "travel".into(),
        action: "book".into(),
        ..lock(Some(entity.to_string()), None)
    };
    assert!(!book.admits(&agent));
}
