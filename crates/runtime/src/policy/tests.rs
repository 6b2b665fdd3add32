//! The policy against hand-built projections.

use super::*;
use akledger::did::DidCoreId;
use akledger::id::EventId;

fn id(n: u8) -> EventId {
    let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[n; 32]);
    let actor = akledger::did::ActorId::service_for_key(&key.verifying_key());
    let at = Timestamp::from_millis(1_000).unwrap();
    akledger::event::EventBuilder::new(
        "ak.realm.create",
        akledger::envelope::ScopeRef::RealmGenesis,
        actor,
        at,
    )
    .sign(&key)
    .unwrap()
    .id()
}

fn agent(n: u8) -> DidCoreId {
    DidCoreId::parse(&format!("ak:did_core:key:agent{n}")).unwrap()
}

fn open(status: Status, coordinator: u8, addressed: &[u8]) -> OpenExchange {
    let request = id(1);
    OpenExchange {
        projection: Projection {
            exchange_id: ExchangeId::parse("exchange-000000000000001").unwrap(),
            sidecar_id: id(2).retype(),
            strand_id: id(3).retype(),
            request_event_id: request,
            addressed_agent_ids: addressed.iter().map(|&a| agent(a)).collect(),
            coordinator_agent_id: agent(coordinator),
            coordinator_assignment_event_id: request,
            participating_agent_ids: Vec::new(),
            user_facing_response_event_ids: Vec::new(),
            status,
            failure_reason_code: None,
            terminal_event_id: None,
            folded_event_ids: vec![request],
            checkpoint_heads: vec![request],
        },
        opened_at: Timestamp::from_millis(10_000).unwrap(),
        completing: Vec::new(),
    }
}

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(ms).unwrap()
}

fn acts(x: &OpenExchange, now: u64, gone: &[u8], policy: &Policy) -> Vec<Act> {
    let gone: BTreeSet<DidCoreId> = gone.iter().map(|&a| agent(a)).collect();
    decide(std::slice::from_ref(x), at(now), &gone, policy)
        .into_iter()
        .map(|d| d.act)
        .collect()
}

#[test]
fn closes_on_the_current_coordinators_completing_response_only() {
    let mut x = open(Status::Responding, 1, &[1, 2]);
    let policy = Policy::default();
    // A completing response by someone else, or under another assignment: nothing.
    x.completing = vec![
        Completing {
            author: agent(2),
            assignment: x.projection.coordinator_assignment_event_id,
        },
        Completing {
            author: agent(1),
            assignment: id(9),
        },
    ];
    assert_eq!(acts(&x, 20_000, &[], &policy), vec![]);
    x.completing.push(Completing {
        author: agent(1),
        assignment: x.projection.coordinator_assignment_event_id,
    });
    assert_eq!(acts(&x, 20_000, &[], &policy), vec![Act::Close]);
}

#[test]
fn fails_with_the_configured_code_at_the_timeout_and_not_before() {
    let x = open(Status::Delivered, 1, &[1]);
    let policy = Policy {
        timeout_ms: Some(5_000),
        timeout_code: "too_slow".into(),
    };
    assert_eq!(acts(&x, 14_999, &[], &policy), vec![]);
    assert_eq!(
        acts(&x, 15_000, &[], &policy),
        vec![Act::Fail("too_slow".into())]
    );
    assert_eq!(acts(&x, 15_000, &[], &Policy::default()), vec![]);
}

#[test]
fn reassigns_from_a_gone_coordinator_as_compare_and_set() {
    let x = open(Status::Delivered, 1, &[1, 2, 3]);
    let policy = Policy::default();
    assert_eq!(
        acts(&x, 11_000, &[1, 2], &policy),
        vec![Act::Reassign {
            expected: agent(1),
            new: agent(3)
        }]
    );
    assert_eq!(acts(&x, 11_000, &[2], &policy), vec![]);
    assert_eq!(
        acts(&x, 11_000, &[1, 2, 3], &policy),
        vec![Act::Fail(COORDINATOR_GONE.into())]
    );
}

#[test]
fn terminal_exchanges_get_nothing_and_close_beats_the_rest() {
    let policy = Policy {
        timeout_ms: Some(1),
        timeout_code: "t".into(),
    };
    for status in [Status::Complete, Status::Failed] {
        assert_eq!(acts(&open(status, 1, &[1]), 99_000, &[1], &policy), vec![]);
    }
    let mut x = open(Status::Responding, 1, &[1, 2]);
    x.completing = vec![Completing {
        author: agent(1),
        assignment: x.projection.coordinator_assignment_event_id,
    }];
    assert_eq!(acts(&x, 99_000, &[1], &policy), vec![Act::Close]);
}
