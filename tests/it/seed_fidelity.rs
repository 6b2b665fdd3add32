//! Seed fidelity (PROFILE v1.1, issue #11): the four points where v1 departed from seed 004,
//! each checked end to end through a real ledger.
//!
//! 1. Actors are complete ActorIds: `{P, S2}` neither controls nor requests in the sidecar of
//!    `{P, S1}`, and may create its own.
//! 2. Private strands: a control names the sidecar's current context and follows its attach
//!    (admission); a request names it too (fold); attaches follow their rules.
//! 3. A control's basis is made of maximal heads of exchange facts.
//! 4. Id lists have no bound but the event size; the authoring helper bounds a basis at 128.
//!
//! The events are built with the envelope builder and plain payloads wherever the rule under
//! test is about the wire, so each scenario reads as the bytes a peer would send.

use akledger_testkit as common;

use akledger::ed25519_dalek::SigningKey;
use akledger::exchange::{
    create_realm, create_sidecar, Act, Action, Binding, ControlPlaintext, ExchangeView,
    RequestContext, Role, TerminalKind, TrackRef,
};
use akledger::{
    ActorId, Appended, Code, Config, DidCoreId, Durability, Event, EventBuilder, EventId,
    ExchangeId, Json, Keyring, Ledger, Object, RealmId, ScopeRef, SidecarAuthor, SidecarId,
    SidecarInfo, SidecarKey, Status, StrandId, Timestamp, Unverified,
};
use rand_core::OsRng;

use common::{key, service};

const SIDECAR_KEY: [u8; 32] = [7; 32];

/// Milliseconds after the fixtures' base time.
fn t(ms: u64) -> Timestamp {
    Timestamp::from_millis(common::t0().millis() + ms).expect("time")
}

/// The account of `key`'s principal at `station`.
fn station(key: &SigningKey, station: &str) -> ActorId {
    ActorId::Account {
        principal_id: DidCoreId::for_key(&key.verifying_key()),
        station_id: DidCoreId::parse(&format!("ak:did_core:web:{station}")).expect("station"),
    }
}

/// A realm, the sidecar of account `{P, S1}`, its private strand and the version-1 attach.
struct Seed {
    _dir: tempfile::TempDir,
    ledger: Ledger,
    key: SigningKey,
    s1: ActorId,
    s2: ActorId,
    realm: RealmId,
    sidecar: SidecarId,
    sidecar_create: EventId,
    strand: StrandId,
    attach: EventId,
}

impl Seed {
    fn new() -> Self {
        let key = key(1);
        let (s1, s2) = (station(&key, "s1.example"), station(&key, "s2.example"));
        let realm_event = create_realm(&key, s1.clone(), t(0)).expect("realm");
        let realm: RealmId = realm_event.id().retype();
        let sidecar_event = create_sidecar(&key, s1.clone(), realm, t(1)).expect("sidecar");
        let sidecar: SidecarId = sidecar_event.id().retype();
        let strand_event = strand_create(&key, &s1, realm, t(2));
        let strand: StrandId = strand_event.id().retype();
        let attach = attach_event(&key, &s1, realm, sidecar, strand, 1, None, t(3));
        let mut keyring = Keyring::new();
        keyring.add_sidecar_key(sidecar, 1, SidecarKey::from_bytes(SIDECAR_KEY));
        let dir = tempfile::tempdir().expect("dir");
        let ledger = Ledger::open_with(
            Config::new(dir.path())
                .durability(Durability::Buffered)
                .keyring(keyring),
        )
        .expect("ledger");
        let seed = Seed {
            _dir: dir,
            ledger,
            key,
            s1,
            s2,
            realm,
            sidecar,
            sidecar_create: sidecar_event.id(),
            strand,
            attach: attach.id(),
        };
        for e in [&realm_event, &sidecar_event, &strand_event, &attach] {
            seed.admit(e);
        }
        seed
    }

    /// An attach of this sidecar to `strand` by `actor`.
    fn attach_as(
        &self,
        actor: &ActorId,
        strand: StrandId,
        version: i64,
        predecessor: Option<EventId>,
        at: Timestamp,
    ) -> Event<Unverified> {
        attach_event(
            &self.key,
            actor,
            self.realm,
            self.sidecar,
            strand,
            version,
            predecessor,
            at,
        )
    }

    fn info(&self) -> SidecarInfo {
        let create = self
            .ledger
            .get(&self.sidecar_create)
            .expect("read")
            .expect("sidecar create");
        SidecarInfo::of_create(&create).expect("a sidecar create")
    }

    /// An author in the sidecar acting as `actor`, signing with `key`.
    fn author(&self, key: &SigningKey, actor: &ActorId) -> SidecarAuthor {
        SidecarAuthor::new(
            key.clone(),
            actor.clone(),
            self.info(),
            SidecarKey::from_bytes(SIDECAR_KEY),
            1,
        )
    }

    fn append(&self, e: &Event<Unverified>) -> Appended {
        self.ledger.append(e.bytes()).expect("append")
    }

    fn admit(&self, e: &Event<Unverified>) -> EventId {
        assert_eq!(self.append(e), Appended::Admitted(e.id()), "{}", e.kind());
        e.id()
    }

    fn rejects(&self, e: &Event<Unverified>, code: Code) {
        match self.append(e) {
            Appended::Rejected { rejection, .. } => {
                assert_eq!(rejection.code(), code, "{}", rejection.message());
            }
            other => panic!("expected {code}, got {other:?}"),
        }
    }

    /// A request binding for exchange `x` naming `strand`, by `actor`, after `after`.
    fn request(
        &self,
        actor: &ActorId,
        x: &ExchangeId,
        strand: StrandId,
        agents: &[&SigningKey],
        after: &[EventId],
        at: Timestamp,
    ) -> Event<Unverified> {
        let track = TrackRef {
            realm_id: self.realm,
            strand_id: strand,
            track_name: "main".into(),
        };
        let agents = agents
            .iter()
            .map(|k| DidCoreId::for_key(&k.verifying_key()))
            .collect();
        let ctx = RequestContext::new(track, "k1", agents, None).expect("context");
        let binding = Binding {
            exchange_id: x.clone(),
            role: Role::Request(ctx),
        };
        self.author(&self.key, actor)
            .message(Some(binding), Json::str("please"), after, at, &mut OsRng)
            .expect("request")
    }

    /// A close of `x` with `basis` and `responses`, naming `strand`, after `after`.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &self,
        actor: &ActorId,
        x: &ExchangeId,
        request: EventId,
        (basis, responses): (Vec<EventId>, Vec<EventId>),
        strand: StrandId,
        after: &[EventId],
        at: Timestamp,
    ) -> Event<Unverified> {
        let plaintext = ControlPlaintext {
            exchange_id: x.clone(),
            request_event_id: request,
            basis_event_ids: sorted(basis),
            action: Action::Terminal {
                kind: TerminalKind::Close,
                response_event_ids: sorted(responses),
            },
        };
        self.author(&self.key, actor)
            .control_raw(strand, &plaintext.to_json(), after, at, &mut OsRng)
            .expect("control")
    }

    /// The not-folded reason of `id` in the sidecar, if it is listed.
    fn reason(&self, id: EventId) -> Option<String> {
        let fold = self.ledger.exchanges(&self.sidecar).expect("fold");
        fold.not_folded
            .iter()
            .find(|n| n.event_id == id)
            .map(|n| n.reason.as_str().to_owned())
    }

    fn status(&self, x: &ExchangeId) -> Option<Status> {
        self.ledger
            .exchange(&self.sidecar, x)
            .expect("exchange")
            .map(|p| p.status)
    }
}

fn sorted(mut ids: Vec<EventId>) -> Vec<EventId> {
    ids.sort();
    ids
}

fn xid(n: u32) -> ExchangeId {
    ExchangeId::parse(&format!("seed-fidelity-exchange-{n:04}")).expect("exchange id")
}

fn strand_create(
    key: &SigningKey,
    actor: &ActorId,
    realm: RealmId,
    at: Timestamp,
) -> Event<Unverified> {
    EventBuilder::new(
        "ak.strand.create",
        ScopeRef::Realm { realm_id: realm },
        actor.clone(),
        at,
    )
    .payload(Object::new().with("title", "private".into()).into())
    .sign(key)
    .expect("strand")
}

#[allow(clippy::too_many_arguments)]
fn attach_event(
    key: &SigningKey,
    actor: &ActorId,
    realm: RealmId,
    sidecar: SidecarId,
    strand: StrandId,
    version: i64,
    predecessor: Option<EventId>,
    at: Timestamp,
) -> Event<Unverified> {
    let mut payload = Object::new()
        .with("sidecar_id", sidecar.to_string().into())
        .with("source_context_ref", common::strand_ref(strand))
        .with("version", Json::Int(version));
    if let Some(p) = predecessor {
        payload.insert("predecessor_event_ref", p.to_string().into());
    }
    let scope = ScopeRef::Sidecar {
        realm_id: realm,
        sidecar_id: sidecar,
    };
    EventBuilder::new("ak.sidecar.context.attach", scope, actor.clone(), at)
        .payload(payload.into())
        .sign(key)
        .expect("attach")
}

// ------------------------------------------------------------------ 1. complete ActorId

#[test]
fn another_station_of_the_controller_principal_cannot_author_controls() {
    let s = Seed::new();
    let x = xid(1);
    let agent = key(2);
    let request = s.admit(&s.request(&s.s1, &x, s.strand, &[&agent], &[s.attach], t(10)));
    let by_s2 = s.close(
        &s.s2,
        &x,
        request,
        (vec![request], vec![]),
        s.strand,
        &[request],
        t(11),
    );
    s.rejects(&by_s2, Code::SidecarExchangeControlForbidden);
    let by_s1 = s.close(
        &s.s1,
        &x,
        request,
        (vec![request], vec![]),
        s.strand,
        &[request],
        t(11),
    );
    s.admit(&by_s1);
    assert_eq!(s.status(&x), Some(Status::Failed));
}

#[test]
fn another_station_of_the_controller_principal_creates_its_own_sidecar() {
    let s = Seed::new();
    let own = create_sidecar(&s.key, s.s2.clone(), s.realm, t(5)).expect("sidecar");
    s.admit(&own);
    // The singleton still holds per complete actor.
    let again = EventBuilder::new(
        "ak.sidecar.create",
        ScopeRef::Realm { realm_id: s.realm },
        s.s2.clone(),
        t(6),
    )
    .after([own.id()])
    .sign(&s.key)
    .expect("second sidecar");
    s.rejects(&again, Code::SidecarSingletonConflict);
}

#[test]
fn a_request_by_another_station_of_the_controller_principal_never_folds() {
    let s = Seed::new();
    let x = xid(2);
    let request = s.admit(&s.request(&s.s2, &x, s.strand, &[&key(2)], &[s.attach], t(10)));
    assert_eq!(s.status(&x), None);
    assert_eq!(
        s.reason(request).as_deref(),
        Some("request_not_by_controller")
    );
}

// ------------------------------------------------------------------ 2. private strands

#[test]
fn a_control_must_name_the_current_context_and_follow_its_attach() {
    let s = Seed::new();
    let x = xid(3);
    let request = s.admit(&s.request(&s.s1, &x, s.strand, &[&key(2)], &[s.attach], t(10)));
    let plan = (vec![request], vec![]);
    // The sidecar's own token used as a strand (what v1 authored): no such context.
    let token: StrandId = s.sidecar.retype();
    let wrong = s.close(&s.s1, &x, request, plan.clone(), token, &[request], t(11));
    s.rejects(&wrong, Code::SidecarExchangeControlForbidden);
    // The right strand, but the control does not follow the attach.
    let unanchored = s.close(
        &s.s1,
        &x,
        request,
        plan.clone(),
        s.strand,
        &[s.sidecar_create],
        t(11),
    );
    s.rejects(&unanchored, Code::SidecarExchangeControlForbidden);
    let ok = s.close(&s.s1, &x, request, plan, s.strand, &[request], t(11));
    s.admit(&ok);
    assert_eq!(s.status(&x), Some(Status::Failed));
}

#[test]
fn a_request_must_name_the_current_context() {
    let s = Seed::new();
    let token: StrandId = s.sidecar.retype();
    let x = xid(4);
    let elsewhere = s.admit(&s.request(&s.s1, &x, token, &[&key(2)], &[s.attach], t(10)));
    assert_eq!(
        s.reason(elsewhere).as_deref(),
        Some("request_context_not_current")
    );
    // Not following the attach: no context at all as seen from the request.
    let y = xid(5);
    let blind = s.admit(&s.request(&s.s1, &y, s.strand, &[&key(2)], &[], t(10)));
    assert_eq!(
        s.reason(blind).as_deref(),
        Some("request_context_not_current")
    );
    assert_eq!((s.status(&x), s.status(&y)), (None, None));
}

#[test]
fn reattaching_moves_the_current_context() {
    let s = Seed::new();
    let second = strand_create(&s.key, &s.s1, s.realm, t(4));
    let second_id: StrandId = second.id().retype();
    s.admit(&second);
    let v2 = s.attach_as(&s.s1, second_id, 2, Some(s.attach), t(5));
    s.admit(&v2);
    let x = xid(6);
    // As seen from an event after v2, the current context is the second strand.
    let old = s.admit(&s.request(&s.s1, &x, s.strand, &[&key(2)], &[v2.id()], t(10)));
    assert_eq!(
        s.reason(old).as_deref(),
        Some("request_context_not_current")
    );
    let y = xid(7);
    let new = s.admit(&s.request(&s.s1, &y, second_id, &[&key(2)], &[v2.id()], t(10)));
    assert_eq!(s.status(&y), Some(Status::Delivered));
    let stale = s.close(&s.s1, &y, new, (vec![new], vec![]), s.strand, &[new], t(11));
    s.rejects(&stale, Code::SidecarExchangeControlForbidden);
}

#[test]
fn attach_rules() {
    let s = Seed::new();
    // Only the controller (complete actor) attaches.
    let by_s2 = s.attach_as(&s.s2, s.strand, 2, Some(s.attach), t(5));
    s.rejects(&by_s2, Code::SidecarExchangeControlForbidden);
    // The strand must be an ak.strand.create of the realm.
    let not_a_strand = s.attach_as(&s.s1, s.realm.retype(), 2, Some(s.attach), t(5));
    s.rejects(&not_a_strand, Code::SchemaViolation);
    // Versions chain: v3 cannot follow v1.
    let skip = s.attach_as(&s.s1, s.strand, 3, Some(s.attach), t(5));
    s.rejects(&skip, Code::SchemaViolation);
    // Malformed payloads (the builder refuses to sign them, so they are mutated from a
    // valid v2 and re-signed): v2 without predecessor, v1 with one, version 0, an unknown
    // member, another sidecar's id.
    let valid = s.attach_as(&s.s1, s.strand, 2, Some(s.attach), t(5));
    let with_payload = |f: &dyn Fn(&mut Object)| {
        common::mutate(&valid, &s.key, |o| {
            let mut payload = o
                .get("payload")
                .and_then(Json::as_object)
                .cloned()
                .expect("payload");
            f(&mut payload);
            common::set(o, "payload", payload.into());
        })
    };
    for bytes in [
        with_payload(&|p| {
            p.remove("predecessor_event_ref");
        }),
        with_payload(&|p| common::set(p, "version", Json::Int(1))),
        with_payload(&|p| {
            p.remove("predecessor_event_ref");
            common::set(p, "version", Json::Int(0));
        }),
        with_payload(&|p| common::set(p, "note", "x".into())),
        with_payload(&|p| {
            common::set(
                p,
                "sidecar_id",
                s.realm
                    .retype::<akledger::id::SidecarKind>()
                    .to_string()
                    .into(),
            )
        }),
    ] {
        match s.ledger.append(&bytes).expect("append") {
            Appended::Rejected { rejection, .. } => {
                assert_eq!(
                    rejection.code(),
                    Code::SchemaViolation,
                    "{}",
                    rejection.message()
                );
            }
            other => panic!("expected schema_violation, got {other:?}"),
        }
    }
    let v2 = s.attach_as(&s.s1, s.strand, 2, Some(s.attach), t(5));
    s.admit(&v2);
}

#[test]
fn an_attach_waits_for_its_strand_create_and_its_predecessor() {
    let s = Seed::new();
    let later = strand_create(&s.key, &s.s1, s.realm, t(4));
    let v2 = s.attach_as(&s.s1, later.id().retype(), 2, Some(s.attach), t(5));
    let v3 = s.attach_as(&s.s1, s.strand, 3, Some(v2.id()), t(6));
    // No refs name them: the edges are implied by the payload (PROFILE §5).
    assert!(v2.envelope().refs.is_empty() && v3.envelope().refs.is_empty());
    match s.append(&v3) {
        Appended::Pending { missing, .. } => assert_eq!(missing, vec![v2.id()]),
        other => panic!("expected pending, got {other:?}"),
    }
    match s.append(&v2) {
        Appended::Pending { missing, .. } => assert_eq!(missing, vec![later.id()]),
        other => panic!("expected pending, got {other:?}"),
    }
    s.admit(&later);
    assert!(s.ledger.pending().is_empty());
    assert!(s.ledger.get(&v3.id()).expect("read").is_some());
    assert!(s.ledger.check().expect("check").is_clean());
}

// ------------------------------------------------------------------ 3. maximal heads

#[test]
fn a_basis_must_be_maximal_heads_of_exchange_facts() {
    let s = Seed::new();
    let x = xid(8);
    let agent = key(2);
    let request = s.admit(&s.request(&s.s1, &x, s.strand, &[&agent], &[s.attach], t(10)));
    let response = s.admit(
        &s.author(&agent, &service(&agent))
            .respond(&x, request, None, Json::str("done"), t(11), &mut OsRng)
            .expect("response"),
    );
    let plan = |basis: Vec<EventId>| (basis, vec![response]);
    let pair = s.close(
        &s.s1,
        &x,
        request,
        plan(vec![request, response]),
        s.strand,
        &[request, response],
        t(12),
    );
    s.admit(&pair);
    assert_eq!(
        s.reason(pair.id()).as_deref(),
        Some("control_basis_not_maximal")
    );
    let plain = s.admit(
        &s.author(&s.key, &s.s1)
            .message(None, Json::str("unrelated"), &[response], t(12), &mut OsRng)
            .expect("plain"),
    );
    let unrelated = s.close(
        &s.s1,
        &x,
        request,
        plan(vec![plain]),
        s.strand,
        &[plain],
        t(13),
    );
    s.admit(&unrelated);
    assert_eq!(
        s.reason(unrelated.id()).as_deref(),
        Some("control_basis_not_exchange_fact")
    );
    assert_eq!(s.status(&x), Some(Status::Responding));
    let good = s.close(
        &s.s1,
        &x,
        request,
        plan(vec![response]),
        s.strand,
        &[response],
        t(13),
    );
    s.admit(&good);
    assert_eq!(s.status(&x), Some(Status::Complete));
}

// ------------------------------------------------------------------ 4. no id-list cap

/// 4,100 chained responses: the close naming them all is readable and valid.
#[test]
fn a_close_over_4100_responses_folds() {
    let s = Seed::new();
    let x = xid(9);
    let agent = key(2);
    let author = s.author(&agent, &service(&agent));
    let request = s.admit(&s.request(&s.s1, &x, s.strand, &[&agent], &[s.attach], t(10)));
    let mut responses = Vec::with_capacity(4100);
    let mut previous = request;
    let mut events = Vec::with_capacity(4100);
    for n in 0..4100u64 {
        let binding = Binding {
            exchange_id: x.clone(),
            role: Role::Response {
                request_event_id: request,
                completes: None,
            },
        };
        let mut after = vec![request, previous];
        after.dedup();
        let e = author
            .message(
                Some(binding),
                Json::Int(n as i64),
                &after,
                t(11 + n),
                &mut OsRng,
            )
            .expect("response");
        previous = e.id();
        responses.push(e.id());
        events.push(e);
    }
    for chunk in events.chunks(1000) {
        let outcomes = s
            .ledger
            .append_batch(&chunk.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .expect("append");
        assert!(outcomes.iter().all(|o| matches!(o, Appended::Admitted(_))));
    }
    let close = s.close(
        &s.s1,
        &x,
        request,
        (vec![previous], responses.clone()),
        s.strand,
        &[previous],
        t(5000),
    );
    s.admit(&close);
    let p = s
        .ledger
        .exchange(&s.sidecar, &x)
        .expect("fold")
        .expect("projection");
    assert_eq!(p.status, Status::Complete);
    assert_eq!(p.user_facing_response_event_ids.len(), 4100);
    assert_eq!(p.terminal_event_id, Some(close.id()));
    // The plaintext alone reads back too.
    let plaintext = ControlPlaintext {
        exchange_id: x.clone(),
        request_event_id: request,
        basis_event_ids: vec![previous],
        action: Action::Terminal {
            kind: TerminalKind::Close,
            response_event_ids: sorted(responses),
        },
    };
    assert!(ControlPlaintext::from_json(&plaintext.to_json()).is_ok());
}

/// 130 concurrent responses: the helper closes over 128 of them instead of failing.
#[test]
fn the_control_helper_closes_over_at_most_128_heads() {
    let s = Seed::new();
    let x = xid(10);
    let agent = key(2);
    let author = s.author(&agent, &service(&agent));
    let request = s.admit(&s.request(&s.s1, &x, s.strand, &[&agent], &[s.attach], t(10)));
    let responses: Vec<Event<Unverified>> = (0..130)
        .map(|n| {
            author
                .respond(&x, request, None, Json::Int(n), t(11), &mut OsRng)
                .expect("response")
        })
        .collect();
    s.ledger
        .append_batch(&responses.iter().map(|e| e.bytes()).collect::<Vec<_>>())
        .expect("append");
    let p = s
        .ledger
        .exchange(&s.sidecar, &x)
        .expect("fold")
        .expect("projection");
    assert_eq!(p.user_facing_response_event_ids.len(), 130);
    let boss = s.author(&s.key, &s.s1);
    let close = boss
        .control(
            &ExchangeView::of(&p),
            Act::Close,
            &s.ledger,
            t(12),
            &mut OsRng,
        )
        .expect("a close over a bounded basis");
    assert_eq!(close.envelope().refs.len(), 128);
    s.admit(&close);
    let p = s
        .ledger
        .exchange(&s.sidecar, &x)
        .expect("fold")
        .expect("projection");
    assert_eq!(p.status, Status::Complete);
    assert_eq!(p.user_facing_response_event_ids.len(), 128);
    let late = s.ledger.exchanges(&s.sidecar).expect("fold").not_folded;
    assert_eq!(
        late.iter()
            .filter(|n| n.reason.as_str() == "after_terminal")
            .count(),
        2
    );
}
