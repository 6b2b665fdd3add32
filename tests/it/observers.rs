//! Observation grants and observer feeds (PROFILE §14.4): only the controller grants; a
//! feed shows the exchanges its grant applies to and nothing else (no other exchange, no
//! other kind, no event that does not cover the grant, no redacted value); a revoke stops
//! it for later exchanges; the same events give the same feed in any arrival order.

use std::time::Duration;

use akledger::actors::{EntityId, Filter, Grant, ObserverItem, PncpKind};
use akledger::prelude::*;
use akledger::Code;

use super::sidecar_handle::{data, publish_travel_model, Setup};

const PASSPORT: &str = "P-OBSERVED-5521";
const CARD: &str = "CARD-OBSERVED-7730";

/// The controller's grant of `filter` (see [`grant`]), admitted.
fn granted(s: &Setup, filter: Filter) -> EventId {
    s.boss().grant_observation(&grant(s, filter)).unwrap()
}

fn grant(s: &Setup, filter: Filter) -> Grant {
    Grant {
        obs_id: "watch-travel".into(),
        observer: ActorId::Service {
            service_id: s.did(2),
        },
        subject: "travel".into(),
        action: "book".into(),
        requester: None,
        fulfiller: None,
        filter,
    }
}

/// A travel/book exchange `name` to agent 0, answered with a (redacted) card.
fn travel(s: &Setup, name: &str) -> (ExchangeId, EventId, EventId) {
    let (x, request) = s.skill_request(
        name,
        0,
        &format!(r#"{{"destination":"Oslo","passport":"{PASSPORT}"}}"#),
    );
    let response = s
        .agent(0)
        .respond_skill(
            &x,
            "travel",
            "book",
            data(&format!(r#"{{"ticket":"T-9","card":"{CARD}"}}"#)),
            Json::from("booked"),
            true,
        )
        .unwrap();
    (x, request, response)
}

fn ids(items: &[ObserverItem]) -> Vec<EventId> {
    items.iter().map(|i| i.event_id).collect()
}

#[test]
fn a_feed_shows_the_granted_exchanges_in_the_filtered_kind_and_no_redacted_value() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    // Requested before the grant: its request does not cover it.
    let (_, before, before_response) = travel(&s, "before");
    let responses = granted(&s, Filter::Pncp(Some(PncpKind::Response)));
    let changes = granted(&s, Filter::Skill);
    let (x, request, response) = travel(&s, "during");
    // A plain request (no PNCP) names no skill: never observed.
    let plain = s.open("plain", &[0]);

    let feed = s.ledger.observer_feed(&responses).unwrap();
    assert_eq!(ids(&feed), vec![response]);
    let item = &feed[0];
    assert_eq!(
        (item.exchange_id.clone(), item.kind.as_str()),
        (x.clone(), "Response")
    );
    assert_eq!(item.author, s.did(0));
    let sealed = item.data.as_ref().unwrap();
    assert_eq!(sealed.get("ticket"), Some(&Json::from("T-9")));
    let card = sealed.get("card").unwrap();
    assert!(s
        .ledger
        .disclosure(&response, "card")
        .unwrap()
        .unwrap()
        .opens(&x, card));

    let feed = s.ledger.observer_feed(&changes).unwrap();
    assert_eq!(ids(&feed), vec![request, response]);
    assert_eq!(feed[0].kind, "Request");
    assert!(feed.iter().all(|i| i.exchange_id == x));
    for id in [before, before_response] {
        assert!(!ids(&feed).contains(&id));
    }
    assert!(feed.iter().all(|i| i.exchange_id != plain));

    // No item, as JSON, holds a redacted value.
    for grant in [responses, changes] {
        for item in s.ledger.observer_feed(&grant).unwrap() {
            let text = item.to_json().to_string();
            assert!(!text.contains(PASSPORT) && !text.contains(CARD), "{text}");
        }
    }
}

#[test]
fn a_revoke_stops_the_grant_for_exchanges_requested_after_it() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let grant_id = granted(&s, Filter::Skill);
    let (x, request, response) = travel(&s, "kept");
    let revoke = s.boss().revoke_observation(grant_id).unwrap();
    assert!(s.ledger.covers(&[revoke], &grant_id).unwrap());
    let (_, later, _) = travel(&s, "after");
    let feed = s.ledger.observer_feed(&grant_id).unwrap();
    assert_eq!(ids(&feed), vec![request, response]);
    assert!(feed.iter().all(|i| i.exchange_id == x));
    assert!(s.ledger.covers(&[later], &revoke).unwrap());
}

#[test]
fn entity_conditions_match_the_coordinator_as_seen_from_the_request() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let mut wrong = grant(&s, Filter::Skill);
    wrong.fulfiller = Some(EntityId::new(s.did(0), 2).unwrap());
    let mut right = grant(&s, Filter::Skill);
    right.fulfiller = Some(EntityId::new(s.did(0), 1).unwrap());
    right.obs_id = "right".into();
    let wrong = s.boss().grant_observation(&wrong).unwrap();
    let right = s.boss().grant_observation(&right).unwrap();
    let (_, request, response) = travel(&s, "entity");
    assert!(s.ledger.observer_feed(&wrong).unwrap().is_empty());
    assert_eq!(
        ids(&s.ledger.observer_feed(&right).unwrap()),
        vec![request, response]
    );
}

#[test]
fn only_the_controller_grants_and_nothing_is_written_otherwise() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let before = s.ledger.len();
    match s.agent(0).grant_observation(&grant(&s, Filter::Skill)) {
        Err(Error::Rejected(r)) => assert_eq!(r.code(), Code::SidecarExchangeControlForbidden),
        other => panic!("an agent's grant: {other:?}"),
    }
    assert_eq!(s.ledger.len(), before);
    // The author refuses too; made by an author told the agent controls the sidecar, and
    // appended anyway, admission refuses it with the same code.
    let mut info = s.ledger.sidecar_info(&s.sidecar).unwrap().unwrap();
    let agent = ActorId::service_for_key(&s.agents[0].verifying_key());
    let author = SidecarAuthor::new(
        s.agents[0].clone(),
        agent.clone(),
        info.clone(),
        s.sidecar_key.clone(),
        1,
    );
    let g = grant(&s, Filter::Skill);
    let at = Timestamp::now();
    assert!(author.grant_observation(&g, &[], at, &mut OsRng).is_err());
    info.controller = agent.clone();
    let forged = SidecarAuthor::new(s.agents[0].clone(), agent, info, s.sidecar_key.clone(), 1)
        .grant_observation(&g, &[s.sidecar.retype()], at, &mut OsRng)
        .unwrap();
    match s.ledger.append(forged.bytes()).unwrap() {
        Appended::Rejected { rejection, .. } => {
            assert_eq!(rejection.code(), Code::SidecarExchangeControlForbidden)
        }
        other => panic!("a grant by an agent: {other:?}"),
    }
    // Not a grant: a feed of it is refused, and of an unknown id too.
    for not_a_grant in [s.sidecar.retype(), exchange_event(&s)] {
        assert!(matches!(
            s.ledger.observer_feed(&not_a_grant),
            Err(Error::NotFound(_))
        ));
    }
}

/// Some admitted event that is not a grant: the sidecar's latest attach.
fn exchange_event(s: &Setup) -> EventId {
    let info = s.ledger.sidecar_info(&s.sidecar).unwrap().unwrap();
    info.latest_attach().unwrap().event_id
}

#[test]
fn a_live_feed_hands_out_each_new_item_once() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let grant_id = granted(&s, Filter::Pncp(None));
    let (_, first, _) = travel(&s, "first");
    let mut feed = s.ledger.observe(&grant_id).unwrap();
    let now = feed.drain().unwrap();
    assert_eq!(now.len(), 2, "{now:?}");
    assert_eq!(now[0].event_id, first);
    let (_, second, second_response) = travel(&s, "second");
    let next: Vec<EventId> = std::iter::from_fn(|| {
        feed.next_timeout(Duration::from_secs(10))
            .unwrap()
            .map(|i| i.event_id)
    })
    .take(2)
    .collect();
    assert_eq!(next, vec![second, second_response]);
    assert!(feed.drain().unwrap().is_empty());
}

#[test]
fn the_feed_does_not_depend_on_arrival_order() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let grant_id = granted(&s, Filter::Skill);
    let pncp = granted(&s, Filter::Pncp(None));
    for name in ["a", "b", "c"] {
        travel(&s, name);
    }
    s.boss().revoke_observation(grant_id).unwrap();
    travel(&s, "d");
    let want: Vec<Vec<ObserverItem>> = [grant_id, pncp]
        .iter()
        .map(|g| s.ledger.observer_feed(g).unwrap())
        .collect();
    assert_eq!(want[0].len(), 6);
    assert_eq!(want[1].len(), 8);
    let events: Vec<Vec<u8>> = s
        .ledger
        .iter()
        .map(|e| e.unwrap().bytes().to_vec())
        .collect();
    let mut rng = akledger::workload::SplitMix::new(31);
    for round in 0..6 {
        let mut order = events.clone();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path()).unwrap();
        ledger
            .add_sidecar_key(s.sidecar, 1, s.sidecar_key.clone())
            .unwrap();
        for bytes in &order {
            ledger.append(bytes).unwrap();
        }
        assert_eq!(ledger.len(), events.len(), "round {round}");
        for (g, want) in [grant_id, pncp].iter().zip(&want) {
            assert_eq!(&ledger.observer_feed(g).unwrap(), want, "round {round}");
        }
    }
}

/// A response that seals a raw value in a redacted field does not fold
/// (`redaction_violation`): a PNCP feed lists it without data, a change feed leaves it out,
/// and neither shows the value.
#[test]
fn a_message_that_leaks_a_redacted_value_is_listed_without_its_data() {
    use akledger::exchange::{Binding, PncpDraft, Role};
    let s = Setup::new();
    let model = publish_travel_model(&s, 0);
    let messages = granted(&s, Filter::Pncp(None));
    let changes = granted(&s, Filter::Skill);
    let (x, request) = s.skill_request(
        "leak",
        0,
        &format!(r#"{{"destination":"Oslo","passport":"{PASSPORT}"}}"#),
    );
    // Sealed as given (no model, so no redaction) by the agent.
    let agent = s
        .ledger
        .sidecar_author(s.agents[0].clone(), s.sidecar, 1)
        .unwrap();
    let draft = PncpDraft {
        kind: PncpKind::Response,
        subject: "travel".into(),
        action: "book".into(),
        question_id: None,
        data: data(&format!(r#"{{"ticket":"T-9","card":"{CARD}"}}"#)),
        model: None,
        after: vec![model],
    };
    let binding = Binding {
        exchange_id: x.clone(),
        role: Role::Response {
            request_event_id: request,
            completes: None,
        },
    };
    let at = s.ledger.now_after(&[request]).unwrap();
    let (leak, _) = agent
        .pncp_message(binding, Json::Null, draft, &[request], at, &mut OsRng)
        .unwrap();
    assert!(matches!(
        s.ledger.append(leak.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    let listed = s.ledger.observer_feed(&messages).unwrap();
    assert_eq!(ids(&listed), vec![request, leak.id()]);
    assert_eq!(listed[1].data, None);
    assert!(listed[0].data.is_some());
    assert_eq!(
        ids(&s.ledger.observer_feed(&changes).unwrap()),
        vec![request]
    );
    for grant in [messages, changes] {
        for item in s.ledger.observer_feed(&grant).unwrap() {
            assert!(!item.to_json().to_string().contains(CARD));
        }
    }
}

/// The generator's seed-000 sidecar (`SidecarSpec::skills`): every event is admitted,
/// every PNCP message folds or is listed for a reason that is not a §14 rule, the observer
/// sees responses only, and every withheld value is absent from the events yet opens its
/// commitment.
#[test]
fn a_generated_sidecar_with_skills_is_admitted_whole_and_observed() {
    use akledger::workload::{sidecar_workload, SidecarSpec};
    let spec = SidecarSpec {
        exchanges: 60,
        agents: 3,
        forgeries: false,
        skills: true,
    };
    let w = sidecar_workload(3, spec).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_with(Config::new(dir.path()).keyring(w.keyring.clone())).unwrap();
    let bytes: Vec<&[u8]> = w.events.iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&bytes).unwrap();
    assert_eq!(ledger.len(), w.events.len());
    let fold = ledger.exchanges(&w.sidecar).unwrap();
    assert_eq!(fold.projections.len(), 60);
    for n in &fold.not_folded {
        assert!(
            !matches!(
                n.reason,
                Reason::SkillNotOffered
                    | Reason::PncpDataInvalid
                    | Reason::RedactionViolation
                    | Reason::PncpAnswerWithoutQuestion
            ),
            "{n:?}"
        );
    }
    let (grant, _) = w.observation.clone().unwrap();
    let feed = ledger.observer_feed(&grant).unwrap();
    let responses: usize = fold
        .projections
        .iter()
        .map(|p| p.user_facing_response_event_ids.len())
        .sum();
    assert!(responses > 0);
    assert_eq!(feed.len(), responses);
    assert!(feed.iter().all(|i| i.kind == "Response"));
    assert!(w.disclosures.len() >= 60 + responses);
    for d in &w.disclosures {
        assert!(ledger.verify_disclosure(d).unwrap(), "{d:?}");
        let value = d.value.as_str().unwrap().as_bytes();
        assert!(bytes
            .iter()
            .all(|b| !b.windows(value.len()).any(|w| w == value)));
    }
}
