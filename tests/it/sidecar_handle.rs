//! The bound sidecar handle: every action authors, timestamps and appends in one call and
//! folds as asked; every action the fold would not apply is refused with the fold's reason
//! and writes nothing — and, appended anyway through `unchecked()`, the ledger's own fold
//! lists it with that same reason.

use akledger::prelude::*;
use akledger::Code;

struct Setup {
    _dir: tempfile::TempDir,
    ledger: Ledger,
    sidecar: SidecarId,
    controller: SigningKey,
    agents: Vec<SigningKey>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path()).unwrap();
        let controller = SigningKey::from_bytes(&[7; 32]);
        let me = ActorId::service_for_key(&controller.verifying_key());
        let realm = create_realm(&controller, me.clone(), Timestamp::now()).unwrap();
        ledger.append(realm.bytes()).unwrap();
        let at = Timestamp::now_after([realm.created_at()]);
        let private =
            create_private_sidecar(&controller, me, realm.id().retype(), None, at).unwrap();
        for event in private.events() {
            assert!(matches!(
                ledger.append(event.bytes()).unwrap(),
                Appended::Admitted(_)
            ));
        }
        let sidecar = private.info.sidecar_id;
        ledger
            .add_sidecar_key(sidecar, 1, SidecarKey::generate(&mut OsRng))
            .unwrap();
        let agents = (1..=3u8)
            .map(|i| SigningKey::from_bytes(&[i; 32]))
            .collect();
        Setup {
            _dir: dir,
            ledger,
            sidecar,
            controller,
            agents,
        }
    }

    fn handle(&self, key: &SigningKey) -> SidecarHandle<'_> {
        let author = self
            .ledger
            .sidecar_author(key.clone(), self.sidecar, 1)
            .unwrap();
        self.ledger.sidecar(&author)
    }

    fn boss(&self) -> SidecarHandle<'_> {
        self.handle(&self.controller)
    }

    fn agent(&self, i: usize) -> SidecarHandle<'_> {
        self.handle(&self.agents[i])
    }

    fn did(&self, i: usize) -> DidCoreId {
        DidCoreId::for_key(&self.agents[i].verifying_key())
    }

    /// Opens `name` addressed to agents `to` (the first coordinates).
    fn open(&self, name: &str, to: &[usize]) -> ExchangeId {
        let exchange = exchange(name);
        let agents = to.iter().map(|i| self.did(*i)).collect();
        let coordinator = (to.len() > 1).then(|| self.did(to[0]));
        let context = self
            .boss()
            .request_context("orders", name, agents, coordinator)
            .unwrap();
        self.boss()
            .request(&exchange, context, Json::from("do it"))
            .unwrap();
        exchange
    }

    fn projection(&self, exchange: &ExchangeId) -> Projection {
        self.ledger
            .exchange(&self.sidecar, exchange)
            .unwrap()
            .unwrap()
    }

    /// `action` is refused with `reason` (and `code`) and writes nothing; appended anyway,
    /// the ledger's fold lists it with the same reason.
    fn refused(
        &self,
        action: impl Fn(bool) -> Result<EventId, Error>,
        reason: Reason,
        code: Option<Code>,
    ) {
        let before = self.ledger.len();
        match action(true) {
            Err(Error::WouldNotFold {
                reason: r, code: c, ..
            }) => assert_eq!((r, c), (reason, code)),
            other => panic!("expected a refusal with {reason}, got {other:?}"),
        }
        assert_eq!(self.ledger.len(), before, "a refusal writes nothing");
        match code {
            Some(code) => match action(false) {
                Err(Error::Rejected(r)) => assert_eq!(r.code(), code),
                other => panic!("admission should refuse it with {code}: {other:?}"),
            },
            None => {
                let id = action(false).unwrap();
                let fold = self.ledger.exchanges(&self.sidecar).unwrap();
                let listed = fold.not_folded.iter().find(|n| n.event_id == id);
                assert_eq!(listed.map(|n| n.reason), Some(reason));
            }
        }
    }
}

fn exchange(name: &str) -> ExchangeId {
    format!("exchange-{name:0>16}").parse().unwrap()
}

fn on(handle: SidecarHandle<'_>, checked: bool) -> SidecarHandle<'_> {
    if checked {
        handle
    } else {
        handle.unchecked()
    }
}

#[test]
fn request_respond_close_completes() {
    let s = Setup::new();
    let x = s.open("close", &[0]);
    assert_eq!(s.projection(&x).status, Status::Delivered);
    let response = s.agent(0).respond(&x, Json::from("done"), false).unwrap();
    let p = s.projection(&x);
    assert_eq!(p.status, Status::Responding);
    assert_eq!(p.user_facing_response_event_ids, vec![response]);
    let close = s.boss().close(&x).unwrap();
    let p = s.projection(&x);
    assert_eq!(p.status, Status::Complete);
    assert_eq!(p.terminal_event_id, Some(close));
    // The control's time is not before its parents' (the response's).
    let (close_at, response_at) = (
        s.ledger.get(&close).unwrap().unwrap().created_at(),
        s.ledger.get(&response).unwrap().unwrap().created_at(),
    );
    assert!(close_at >= response_at);
}

#[test]
fn cancel_and_fail_end_empty_exchanges_failed() {
    let s = Setup::new();
    let cancelled = s.open("cancel", &[0]);
    s.boss().cancel(&cancelled).unwrap();
    let p = s.projection(&cancelled);
    assert_eq!(p.status, Status::Failed);
    assert_eq!(
        p.failure_reason_code.as_deref(),
        Some("controller_cancelled")
    );

    let failed = s.open("fail", &[0]);
    s.boss().fail(&failed, "out_of_stock").unwrap();
    let p = s.projection(&failed);
    assert_eq!(p.status, Status::Failed);
    assert_eq!(p.failure_reason_code.as_deref(), Some("out_of_stock"));
}

#[test]
fn reassign_moves_the_coordinator_and_the_new_one_completes() {
    let s = Setup::new();
    let x = s.open("reassign", &[0, 1]);
    assert_eq!(s.projection(&x).coordinator_agent_id, s.did(0));
    let reassign = s.boss().reassign(&x, s.did(1)).unwrap();
    let p = s.projection(&x);
    assert_eq!(p.coordinator_agent_id, s.did(1));
    assert_eq!(p.coordinator_assignment_event_id, reassign);
    s.agent(1)
        .respond(&x, Json::from("mine now"), true)
        .unwrap();
    assert_eq!(s.projection(&x).status, Status::Responding);
    s.boss().close(&x).unwrap();
    assert_eq!(s.projection(&x).status, Status::Complete);
}

#[test]
fn a_control_on_a_terminal_exchange_is_refused() {
    let s = Setup::new();
    let x = s.open("terminal", &[0]);
    s.boss().close(&x).unwrap();
    s.refused(
        |c| on(s.boss(), c).close(&x),
        Reason::ControlAfterTerminal,
        None,
    );
    // (A fresh exchange: the close appended anyway above is a second valid control
    // concurrent with any new one, which the fold would then rank by digest.)
    let y = s.open("terminal-failed", &[0]);
    s.boss().fail(&y, "gave_up").unwrap();
    s.refused(
        |c| on(s.boss(), c).cancel(&y),
        Reason::ControlAfterTerminal,
        None,
    );
}

#[test]
fn a_response_by_an_agent_not_addressed_is_refused() {
    let s = Setup::new();
    let x = s.open("not-addressed", &[0]);
    s.refused(
        |c| on(s.agent(2), c).respond(&x, Json::from("me too"), false),
        Reason::NotAddressed,
        None,
    );
}

#[test]
fn a_response_by_the_controller_is_refused() {
    let s = Setup::new();
    let x = s.open("by-controller", &[0]);
    s.refused(
        |c| on(s.boss(), c).respond(&x, Json::from("self"), false),
        Reason::AuthorIsController,
        None,
    );
}

#[test]
fn a_control_by_a_non_controller_is_refused_with_the_admission_code() {
    let s = Setup::new();
    let x = s.open("forbidden", &[0]);
    s.refused(
        |c| on(s.agent(0), c).close(&x),
        Reason::ControlNotByController,
        Some(Code::SidecarExchangeControlForbidden),
    );
}

#[test]
fn a_request_by_a_non_controller_and_a_second_request_are_refused() {
    let s = Setup::new();
    let x = s.open("requests", &[0]);
    let context = || {
        s.boss()
            .request_context("orders", "again", vec![s.did(0)], None)
            .unwrap()
    };
    s.refused(
        |c| on(s.agent(0), c).request(&exchange("by-agent"), context(), Json::from("?")),
        Reason::RequestNotByController,
        None,
    );
    // A second request: refused as a retry. Appended anyway, the fold ranks the two
    // concurrent requests by digest and lists one of them as the retry.
    let first = s.projection(&x).request_event_id;
    assert!(matches!(
        s.boss().request(&x, context(), Json::from("again")),
        Err(Error::WouldNotFold {
            reason: Reason::RetryRequest,
            code: None,
            ..
        })
    ));
    let second = s
        .boss()
        .unchecked()
        .request(&x, context(), Json::from("again"))
        .unwrap();
    let fold = s.ledger.exchanges(&s.sidecar).unwrap();
    let retries: Vec<EventId> = fold
        .not_folded
        .iter()
        .filter(|n| n.reason == Reason::RetryRequest)
        .map(|n| n.event_id)
        .collect();
    let canonical = s.projection(&x).request_event_id;
    assert_eq!(retries.len(), 1);
    assert!(retries == [first] && canonical == second || retries == [second] && canonical == first);
}

#[test]
fn a_reassignment_to_an_agent_not_addressed_is_refused() {
    let s = Setup::new();
    let x = s.open("reassign-out", &[0, 1]);
    s.refused(
        |c| on(s.boss(), c).reassign(&x, s.did(2)),
        Reason::CoordinatorNotAddressed,
        None,
    );
}

#[test]
fn acting_on_an_exchange_without_a_request_is_refused() {
    let s = Setup::new();
    let before = s.ledger.len();
    for result in [
        s.agent(0)
            .respond(&exchange("nothing"), Json::from("?"), false),
        s.boss().close(&exchange("nothing")),
    ] {
        assert!(matches!(
            result,
            Err(Error::WouldNotFold {
                reason: Reason::UnknownRequest,
                code: None,
                ..
            })
        ));
    }
    assert_eq!(s.ledger.len(), before);
    // An unknown sidecar is a typed error too (a head is the sidecar's attach, no sidecar).
    assert!(matches!(
        s.ledger
            .sidecar_author(s.controller.clone(), s.ledger.heads()[0].retype(), 1),
        Err(Error::UnknownSidecar(_))
    ));
}
