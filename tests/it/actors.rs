//! Actor models in the ledger (PROFILE §14.1): the version chain admitted in any arrival
//! order, one event per entity id (`actor_version_conflict`), a predecessor that must be the
//! version before, the author bound to the entity's did, and the current model as seen from
//! an event answered causally, the same after a reopen and a rebuilt index.

use std::path::Path;

use akledger_testkit as common;

use akledger::actors::{publish_model, EntityId};
use akledger::ed25519_dalek::SigningKey;
use akledger::exchange::create_realm;
use akledger::{
    ActorId, Appended, Code, Config, DidCoreId, Event, EventBuilder, EventId, Json, Ledger,
    RealmId, ScopeRef, Timestamp, Unverified,
};

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(akledger::workload::EPOCH_MILLIS + ms).unwrap()
}

struct Actor {
    key: SigningKey,
    actor: ActorId,
}

impl Actor {
    fn new(seed: u8) -> Actor {
        let key = SigningKey::from_bytes(&[seed; 32]);
        let actor = ActorId::service_for_key(&key.verifying_key());
        Actor { key, actor }
    }

    fn did(&self) -> &DidCoreId {
        self.actor.principal()
    }

    /// Version `version` of this actor's model, offering `travel/<action>`.
    fn model(&self, version: u64, action: &str) -> Json {
        let text = format!(
            r#"{{"id":"{}#{version}","skills":{{"skills":[{{"subject":"travel","actions":[{{"action":"{action}","input":[{{"name":"passport","optional":false,"redacted":true}}]}}]}}]}}}}"#,
            self.did()
        );
        akledger::canonical::parse_value(text.as_bytes()).unwrap()
    }

    fn publish(
        &self,
        realm: RealmId,
        version: u64,
        action: &str,
        predecessor: Option<EventId>,
    ) -> Event<Unverified> {
        let model = self.model(version, action);
        publish_model(
            &self.key,
            self.actor.clone(),
            realm,
            &model,
            predecessor,
            at(version * 10),
        )
        .unwrap()
    }
}

fn append(ledger: &Ledger, event: &Event<Unverified>) -> Appended {
    ledger.append(event.bytes()).unwrap()
}

fn rejected_with(ledger: &Ledger, event: &Event<Unverified>, code: Code) {
    let len = ledger.len();
    match append(ledger, event) {
        Appended::Rejected { rejection, .. } => assert_eq!(rejection.code(), code, "{rejection}"),
        other => panic!("expected {code}, got {other:?}"),
    }
    assert_eq!(ledger.len(), len);
}

/// A realm, an actor's versions 1..=3, and a note that covers version 1 only.
struct Chain {
    realm: Event<Unverified>,
    versions: Vec<Event<Unverified>>,
    note: Event<Unverified>,
}

fn chain(a: &Actor) -> Chain {
    let realm = create_realm(&a.key, a.actor.clone(), at(0)).unwrap();
    let realm_id: RealmId = realm.id().retype();
    let v1 = a.publish(realm_id, 1, "quote", None);
    let v2 = a.publish(realm_id, 2, "book", Some(v1.id()));
    let v3 = a.publish(realm_id, 3, "cancel", Some(v2.id()));
    let note = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm { realm_id },
        a.actor.clone(),
        at(15),
    )
    .after([v1.id()])
    .sign(&a.key)
    .unwrap();
    Chain {
        realm,
        versions: vec![v1, v2, v3],
        note,
    }
}

fn expect_views(ledger: &Ledger, a: &Actor, c: &Chain) {
    let did = a.did();
    let ids: Vec<EventId> = c.versions.iter().map(|e| e.id()).collect();
    assert_eq!(
        ledger.actor_models(did),
        vec![(1, ids[0]), (2, ids[1]), (3, ids[2])]
    );
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            ledger.current_model_event(did, id).unwrap(),
            Some(*id),
            "v{}",
            i + 1
        );
    }
    // The note covers version 1 only: that is the model as seen from it.
    assert_eq!(
        ledger.current_model_event(did, &c.note.id()).unwrap(),
        Some(ids[0])
    );
    assert!(ledger.offers(did, "travel", "quote", &c.note.id()).unwrap());
    assert!(!ledger.offers(did, "travel", "book", &c.note.id()).unwrap());
    assert!(ledger.offers(did, "travel", "cancel", &ids[2]).unwrap());
    // The realm covers no model at all.
    assert_eq!(
        ledger.current_model_event(did, &c.realm.id()).unwrap(),
        None
    );
    let (id, model) = ledger.current_model(did, &ids[1]).unwrap().unwrap();
    assert_eq!(id, ids[1]);
    assert_eq!(model.entity, EntityId::new(did.clone(), 2).unwrap());
    assert!(
        model
            .action("travel", "book")
            .unwrap()
            .input
            .as_ref()
            .unwrap()
            .fields[0]
            .redacted
    );
    let stranger = Actor::new(99);
    assert_eq!(
        ledger.current_model_event(stranger.did(), &ids[2]).unwrap(),
        None
    );
}

#[test]
fn a_version_chain_is_admitted_in_any_order_and_read_causally() {
    let a = Actor::new(7);
    let c = chain(&a);
    let mut arrivals: Vec<&Event<Unverified>> = vec![&c.note];
    arrivals.extend(c.versions.iter().rev());
    arrivals.push(&c.realm);
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path()).unwrap();
    for e in &arrivals {
        append(&ledger, e);
    }
    assert_eq!(
        ledger.len(),
        5,
        "everything waited for its predecessors, then was admitted"
    );
    expect_views(&ledger, &a, &c);
    assert!(ledger.check().unwrap().is_clean());
    ledger.close().unwrap();
    // Reopened from the snapshot, and with the index and snapshot gone (rebuilt from the log).
    let ledger = Ledger::open(dir.path()).unwrap();
    expect_views(&ledger, &a, &c);
    drop(ledger);
    remove(dir.path(), "index");
    remove(dir.path(), "snapshot");
    let ledger = Ledger::open(dir.path()).unwrap();
    assert!(ledger.open_report().rebuilt.is_some());
    expect_views(&ledger, &a, &c);
    assert!(ledger.check().unwrap().is_clean());
}

fn remove(dir: &Path, name: &str) {
    let path = dir.join(name);
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn a_second_event_for_an_entity_id_is_a_version_conflict_and_the_chain_is_checked() {
    let a = Actor::new(8);
    let c = chain(&a);
    let realm_id: RealmId = c.realm.id().retype();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_with(Config::new(dir.path())).unwrap();
    for e in [&c.realm, &c.versions[0], &c.versions[1]] {
        assert!(matches!(append(&ledger, e), Appended::Admitted(_)));
    }
    // Another version 1 (other content), and another version 2 on the same predecessor.
    rejected_with(
        &ledger,
        &a.publish(realm_id, 1, "other", None),
        Code::ActorVersionConflict,
    );
    let rival = a.publish(realm_id, 2, "rival", Some(c.versions[0].id()));
    rejected_with(&ledger, &rival, Code::ActorVersionConflict);
    // A predecessor that is not the version before: version 3 on version 1, and on the realm.
    let skip = a.publish(realm_id, 3, "skip", Some(c.versions[0].id()));
    rejected_with(&ledger, &skip, Code::SchemaViolation);
    let odd = a.publish(realm_id, 3, "odd", Some(c.realm.id()));
    rejected_with(&ledger, &odd, Code::SchemaViolation);
    // Resending the admitted version is a duplicate, not a conflict.
    assert!(matches!(
        append(&ledger, &c.versions[1]),
        Appended::Duplicate(_)
    ));
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn malformed_actor_models_are_schema_violations() {
    let a = Actor::new(9);
    let other = Actor::new(10);
    let realm = create_realm(&a.key, a.actor.clone(), at(0)).unwrap();
    let realm_id: RealmId = realm.id().retype();
    let v1 = a.publish(realm_id, 1, "x", None);
    let payload = |entity: &str, model: Json, extra: Option<(&str, Json)>| {
        let mut o = akledger::Object::new()
            .with("schema", Json::str("ak.schema.actor_model.v1"))
            .with("entity_id", Json::str(entity))
            .with("model", model);
        if let Some((k, v)) = extra {
            o.insert(k, v);
        }
        Json::Object(o)
    };
    let with_payload = |p: Json| common::mutate(&v1, &a.key, |pre| common::set(pre, "payload", p));
    let entity = format!("{}#1", a.did());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            common::mutate(&v1, &other.key, |pre| {
                common::set(pre, "actor_id", other.actor.to_json())
            }),
            "authored by that did_core_id",
        ),
        (
            with_payload(payload(&format!("{}#2", a.did()), a.model(2, "x"), None)),
            "needs predecessor_event_ref",
        ),
        (
            with_payload(payload(
                &entity,
                a.model(1, "x"),
                Some(("predecessor_event_ref", Json::str(realm.id().to_string()))),
            )),
            "version 1 has no predecessor_event_ref",
        ),
        (
            with_payload(payload(
                &entity,
                a.model(1, "x"),
                Some(("extra", Json::Int(1))),
            )),
            "unknown member",
        ),
        (
            with_payload(payload(&entity, a.model(2, "x"), None)),
            "must equal the event's entity_id",
        ),
        (
            with_payload(payload(&format!("{}#01", a.did()), a.model(1, "x"), None)),
            "leading zeros",
        ),
        (
            with_payload(payload(&entity, Json::str("a model"), None)),
            "model must be an object",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path()).unwrap();
    append(&ledger, &realm);
    for (bytes, needle) in cases {
        let err = Event::parse(&bytes).unwrap_err();
        assert_eq!(err.code(), Code::SchemaViolation, "{needle}");
        assert!(
            err.message().contains(needle),
            "{needle}: {}",
            err.message()
        );
        match ledger.append(&bytes).unwrap() {
            Appended::Rejected { rejection, .. } => {
                assert_eq!(rejection.code(), Code::SchemaViolation)
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    assert_eq!(ledger.len(), 1);
    // The authoring helper refuses what admission would.
    let broken = akledger::canonical::parse_value(br#"{"id":"nobody#1"}"#).unwrap();
    assert!(publish_model(&a.key, a.actor.clone(), realm_id, &broken, None, at(1)).is_err());
}

use proptest::strategy::Just;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

    /// The current model as seen from an event is order-independent, like the fold: any
    /// arrival order of the realm, three versions and a note after each version gives every
    /// note the version it follows, and every version itself.
    #[test]
    fn the_current_model_does_not_depend_on_arrival_order(
        order in proptest::strategy::Strategy::prop_shuffle(Just((0..7usize).collect::<Vec<_>>()))
    ) {
        let a = Actor::new(11);
        let c = chain(&a);
        let realm_id: RealmId = c.realm.id().retype();
        let notes: Vec<Event<Unverified>> = c
            .versions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                EventBuilder::new(
                    "ak.note.create",
                    ScopeRef::Realm { realm_id },
                    a.actor.clone(),
                    at(100 + i as u64),
                )
                .after([v.id()])
                .sign(&a.key)
                .unwrap()
            })
            .collect();
        let all: Vec<&Event<Unverified>> = std::iter::once(&c.realm)
            .chain(&c.versions)
            .chain(&notes)
            .collect();
        let ledger = Ledger::open_with(Config::in_memory()).unwrap();
        for i in &order {
            append(&ledger, all[*i]);
        }
        proptest::prop_assert_eq!(ledger.len(), 7);
        for (v, note) in c.versions.iter().zip(&notes) {
            proptest::prop_assert_eq!(ledger.current_model_event(a.did(), &note.id()).unwrap(), Some(v.id()));
            proptest::prop_assert_eq!(ledger.current_model_event(a.did(), &v.id()).unwrap(), Some(v.id()));
        }
    }
}
