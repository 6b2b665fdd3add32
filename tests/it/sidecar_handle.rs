//! The bound sidecar handle: every action authors, timestamps and appends in one call and
//! folds as asked; every action the fold would not apply is refused with the fold's reason
//! and writes nothing — and, appended anyway through `unchecked()`, the ledger's own fold
//! lists it with that same reason.

use akledger::prelude::*;
use akledger::Code;

pub(crate) struct Setup {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) ledger: Ledger,
    pub(crate) sidecar: SidecarId,
    pub(crate) sidecar_key: SidecarKey,
    pub(crate) controller: SigningKey,
    pub(crate) agents: Vec<SigningKey>,
}

impl Setup {
    pub(crate) fn new() -> Setup {
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
        let sidecar_key = SidecarKey::generate(&mut OsRng);
        ledger
            .add_sidecar_key(sidecar, 1, sidecar_key.clone())
            .unwrap();
        let agents = (1..=3u8)
            .map(|i| SigningKey::from_bytes(&[i; 32]))
            .collect();
        Setup {
            _dir: dir,
            ledger,
            sidecar,
            sidecar_key,
            controller,
            agents,
        }
    }

    pub(crate) fn handle(&self, key: &SigningKey) -> SidecarHandle<'_> {
        let author = self
            .ledger
            .sidecar_author(key.clone(), self.sidecar, 1)
            .unwrap();
        self.ledger.sidecar(&author)
    }

    pub(crate) fn boss(&self) -> SidecarHandle<'_> {
        self.handle(&self.controller)
    }

    pub(crate) fn agent(&self, i: usize) -> SidecarHandle<'_> {
        self.handle(&self.agents[i])
    }

    pub(crate) fn did(&self, i: usize) -> DidCoreId {
        DidCoreId::for_key(&self.agents[i].verifying_key())
    }

    /// Why the ledger's fold lists `id` as not folded, if it does.
    pub(crate) fn not_folded_reason(&self, id: EventId) -> Option<Reason> {
        let fold = self.ledger.exchanges(&self.sidecar).unwrap();
        fold.not_folded
            .iter()
            .find(|n| n.event_id == id)
            .map(|n| n.reason)
    }

    /// Opens `name` with a travel/book request to agent `i` carrying `text` as its data.
    pub(crate) fn skill_request(&self, name: &str, i: usize, text: &str) -> (ExchangeId, EventId) {
        let context = self
            .boss()
            .request_context("orders", name, vec![self.did(i)], None)
            .unwrap();
        let request = self
            .boss()
            .request_skill(
                &exchange(name),
                context,
                "travel",
                "book",
                data(text),
                Json::Null,
            )
            .unwrap();
        (exchange(name), request)
    }

    /// Opens `name` addressed to agents `to` (the first coordinates).
    pub(crate) fn open(&self, name: &str, to: &[usize]) -> ExchangeId {
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

    pub(crate) fn projection(&self, exchange: &ExchangeId) -> Projection {
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

pub(crate) fn exchange(name: &str) -> ExchangeId {
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

/// Agent `i`'s model: travel/book, its passport (input) and card (output) redacted; the
/// requester may ask for an `eta`, and the fulfiller for a `visa` (its number redacted).
pub(crate) fn publish_travel_model(s: &Setup, i: usize) -> EventId {
    let did = s.did(i);
    let text = format!(
        r#"{{"id":"{did}#1","skills":{{"skills":[{{"subject":"travel","actions":[{{"action":"book",
        "input":[{{"name":"destination","optional":false,"redacted":false}},{{"name":"passport","optional":false,"redacted":true}}],
        "output":[{{"name":"ticket","optional":false,"redacted":false}},{{"name":"card","optional":true,"redacted":true}}],
        "requesterQuestions":[{{"id":"eta","name":"when?","question":null,"answer":{{"name":"eta","optional":false,"redacted":false}}}}],
        "fulfillerQuestions":[{{"id":"visa","name":"visa?","question":["country"],"answer":[{{"name":"visa_number","optional":false,"redacted":true}}]}}]}}]}}]}}}}"#
    );
    let model = akledger::canonical::parse_value(text.as_bytes()).unwrap();
    let key = &s.agents[i];
    let actor = ActorId::service_for_key(&key.verifying_key());
    let realm = s.ledger.realms()[0];
    let event =
        akledger::actors::publish_model(key, actor, realm, &model, None, Timestamp::now()).unwrap();
    assert!(matches!(
        s.ledger.append(event.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    event.id()
}

/// Every sidecar message's plaintext, decrypted with the sidecar's key.
pub(crate) fn plaintexts(s: &Setup) -> Vec<Vec<u8>> {
    s.ledger
        .iter()
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let akledger::Body::SidecarMessage { encrypted } = e.body() else {
                return None;
            };
            let ctx = akledger::encrypted::AadContext {
                scope: e.scope(),
                event_kind: e.kind(),
                sender: e.actor(),
            };
            Some(encrypted.open(&s.sidecar_key, &ctx).unwrap())
        })
        .collect()
}

/// Whether any file under `dir` but `except` holds `needle`.
pub(crate) fn found_under(
    dir: &std::path::Path,
    except: &str,
    needle: &[u8],
) -> Vec<std::path::PathBuf> {
    akledger_testkit::files(dir)
        .into_iter()
        .filter(|(path, bytes)| {
            !path.ends_with(except) && bytes.windows(needle.len()).any(|w| w == needle)
        })
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn a_skill_request_and_response_keep_redacted_values_off_the_ledger() {
    let s = Setup::new();
    let model = publish_travel_model(&s, 0);
    let (travel, request) = s.skill_request(
        "travel1",
        0,
        r#"{"destination":"Lyon","passport":"P-SECRET-4417"}"#,
    );
    let response = s
        .agent(0)
        .respond_skill(
            &travel,
            "travel",
            "book",
            data(r#"{"ticket":"T-1","card":"CARD-SECRET-9981"}"#),
            Json::from("booked"),
            true,
        )
        .unwrap();
    let p = s.projection(&travel);
    assert_eq!(p.request_event_id, request);
    assert_eq!(p.user_facing_response_event_ids, vec![response]);
    // The request relies on the model: it has an `after` ref to it.
    assert!(s.ledger.covers(&[request], &model).unwrap());
    // Each redacted value is a commitment in the sealed data, and its disclosure opens it.
    for (event, field, secret) in [
        (request, "passport", "P-SECRET-4417"),
        (response, "card", "CARD-SECRET-9981"),
    ] {
        let d = s.ledger.disclosure(&event, field).unwrap().unwrap();
        assert_eq!(d.value, Json::from(secret));
        let plain = plaintexts(&s)
            .into_iter()
            .map(|b| akledger::exchange::MessagePlaintext::parse(&b).unwrap())
            .find(|m| {
                m.pncp
                    .as_ref()
                    .is_some_and(|p| p.data.as_ref().is_some_and(|d| d.get(field).is_some()))
            })
            .unwrap();
        let sealed = plain
            .pncp
            .unwrap()
            .data
            .unwrap()
            .get(field)
            .unwrap()
            .clone();
        assert!(d.opens(&travel, &sealed), "{field}");
        // Nowhere in any decrypted event, and nowhere under the ledger directory but the
        // disclosure store.
        assert!(plaintexts(&s)
            .iter()
            .all(|b| !b.windows(secret.len()).any(|w| w == secret.as_bytes())));
        let dir = s._dir.path();
        assert_eq!(
            found_under(dir, "disclosures.jsonl", secret.as_bytes()),
            Vec::<std::path::PathBuf>::new()
        );
        let store = std::fs::read(dir.join("disclosures.jsonl")).unwrap();
        assert!(
            store.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the disclosure store holds it"
        );
    }
    let store = s._dir.path().join("disclosures.jsonl");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&store).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // An agent whose model does not offer the skill: refused, nothing written.
    let before = (s.ledger.len(), std::fs::read(&store).unwrap());
    let context = s
        .boss()
        .request_context("orders", "travel2", vec![s.did(1)], None)
        .unwrap();
    match s.boss().request_skill(
        &exchange("travel2"),
        context,
        "travel",
        "book",
        data(r#"{"destination":"Oslo","passport":"P-OTHER"}"#),
        Json::Null,
    ) {
        Err(Error::WouldNotFold { reason, .. }) => assert_eq!(reason, Reason::SkillNotOffered),
        other => panic!("{other:?}"),
    }
    assert_eq!((s.ledger.len(), std::fs::read(&store).unwrap()), before);
}

/// PNCP messages authored elsewhere (not through the handle's checks) meet the fold's own
/// §14.2 rules: a skill an addressed agent does not offer, a raw value in a redacted field,
/// a response missing a required field; well-formed ones fold.
#[test]
fn the_fold_applies_the_pncp_rules_to_messages_authored_elsewhere() {
    use akledger::actors::PncpKind;
    use akledger::exchange::{Binding, PncpDraft, Role};
    let s = Setup::new();
    let model = publish_travel_model(&s, 0);
    let boss = s
        .ledger
        .sidecar_author(s.controller.clone(), s.sidecar, 1)
        .unwrap();
    let attach = boss.sidecar().latest_attach().unwrap().event_id;
    // A request sealed as given: no redaction by the author (model: None).
    let request = |name: &str, action: &str, text: &str| {
        let context = s
            .boss()
            .request_context("orders", name, vec![s.did(0)], None)
            .unwrap();
        let draft = PncpDraft {
            kind: PncpKind::Request,
            subject: "travel".into(),
            action: action.into(),
            question_id: None,
            data: data(text),
            model: None,
            after: vec![model],
        };
        let binding = Binding {
            exchange_id: exchange(name),
            role: Role::Request(context),
        };
        let at = s.ledger.now_after(&[attach, model]).unwrap();
        let (event, _) = boss
            .pncp_message(binding, Json::Null, draft, &[attach], at, &mut OsRng)
            .unwrap();
        assert!(matches!(
            s.ledger.append(event.bytes()).unwrap(),
            Appended::Admitted(_)
        ));
        event.id()
    };
    let unoffered = request("fly1", "fly", r#"{"destination":"Oslo"}"#);
    let raw = request(
        "raw1",
        "book",
        r#"{"destination":"Oslo","passport":"P-RAW"}"#,
    );
    let good = s
        .boss()
        .request_skill(
            &exchange("good1"),
            s.boss()
                .request_context("orders", "good1", vec![s.did(0)], None)
                .unwrap(),
            "travel",
            "book",
            data(r#"{"destination":"Oslo","passport":"P-1"}"#),
            Json::Null,
        )
        .unwrap();
    // A response without its required `ticket`, appended anyway.
    let short = s
        .agent(0)
        .unchecked()
        .respond_skill(
            &exchange("good1"),
            "travel",
            "book",
            data(r#"{"card":"C-1"}"#),
            Json::Null,
            true,
        )
        .unwrap();
    let reason = |id: EventId| s.not_folded_reason(id);
    assert_eq!(reason(unoffered), Some(Reason::SkillNotOffered));
    assert_eq!(reason(raw), Some(Reason::RedactionViolation));
    assert_eq!(reason(short), Some(Reason::PncpDataInvalid));
    assert_eq!(reason(good), None);
    assert_eq!(s.projection(&exchange("good1")).request_event_id, good);
    // Checked, the handle refuses the short response with the same reason.
    match s.agent(0).respond_skill(
        &exchange("good1"),
        "travel",
        "book",
        data(r#"{"card":"C-2"}"#),
        Json::Null,
        true,
    ) {
        Err(Error::WouldNotFold { reason, .. }) => assert_eq!(reason, Reason::PncpDataInvalid),
        other => panic!("{other:?}"),
    }
    // The same answers from a fresh fold of the reopened ledger (the check compares them).
    assert!(s.ledger.check().unwrap().is_clean());
}

/// A PNCP data object from JSON text.
pub(crate) fn data(text: &str) -> akledger::Object {
    akledger::canonical::parse_value(text.as_bytes())
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

/// §14.2 answers: an agent's answer folds with an `after` ref to the requester's question
/// of the same `question_id`; without one it is `pncp_answer_without_question`, and with a
/// `question_id` the action does not declare it is `pncp_data_invalid`.
#[test]
fn an_answer_needs_its_question() {
    use akledger::actors::PncpKind;
    use akledger::exchange::{Binding, PncpDraft, Role};
    let s = Setup::new();
    let model = publish_travel_model(&s, 0);
    let (x, request) = s.skill_request("qa1", 0, r#"{"destination":"Oslo","passport":"P-1"}"#);
    let internal = |key: &SigningKey, kind, question: &str, text: &str, after: Vec<EventId>| {
        let author = s.ledger.sidecar_author(key.clone(), s.sidecar, 1).unwrap();
        let draft = PncpDraft {
            kind,
            subject: "travel".into(),
            action: "book".into(),
            question_id: Some(question.into()),
            data: data(text),
            model: None,
            after: vec![model],
        };
        let binding = Binding {
            exchange_id: x.clone(),
            role: Role::Internal {
                request_event_id: request,
            },
        };
        let mut refs = vec![request];
        refs.extend(after);
        let at = s.ledger.now_after(&refs).unwrap();
        let (event, _) = author
            .pncp_message(binding, Json::Null, draft, &refs, at, &mut OsRng)
            .unwrap();
        assert!(matches!(
            s.ledger.append(event.bytes()).unwrap(),
            Appended::Admitted(_)
        ));
        event.id()
    };
    // The requester (the controller) asks; its question is an exchange fact that never
    // folds as participation.
    let asked = internal(&s.controller, PncpKind::Question, "eta", "{}", vec![]);
    let answered = internal(
        &s.agents[0],
        PncpKind::Answer,
        "eta",
        r#"{"eta":"5 min"}"#,
        vec![asked],
    );
    let unasked = internal(
        &s.agents[0],
        PncpKind::Answer,
        "eta",
        r#"{"eta":"soon"}"#,
        vec![],
    );
    let undeclared = internal(
        &s.agents[0],
        PncpKind::Answer,
        "nope",
        r#"{"eta":"x"}"#,
        vec![asked],
    );
    let reason = |id: EventId| s.not_folded_reason(id);
    assert_eq!(reason(asked), Some(Reason::AuthorIsController));
    assert_eq!(reason(answered), None);
    assert_eq!(reason(unasked), Some(Reason::PncpAnswerWithoutQuestion));
    assert_eq!(reason(undeclared), Some(Reason::PncpDataInvalid));
    assert!(s.projection(&x).participating_agent_ids.contains(&s.did(0)));
    assert!(s.ledger.check().unwrap().is_clean());
}

/// Seed 000's skill locks: the controller's own model locks travel/book to agent 0's
/// version 1, so a request for it to agent 1 (which offers it too) does not honour the
/// lock: refused with `skill_lock_violated`, nothing written, not even a disclosure; made
/// anyway, the fold lists it with that reason. A request to agent 0 folds.
#[test]
fn requests_honour_the_requesters_skill_lock() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    publish_travel_model(&s, 1);
    let boss = ActorId::service_for_key(&s.controller.verifying_key());
    let me = boss.principal().clone();
    let text = format!(
        r#"{{"id":"{me}#1","skills":{{"skills":[],"lock":{{"travel":{{"subject":"travel","action":"book","actor":"{}#1","version":null}}}}}}}}"#,
        s.did(0)
    );
    let model = akledger::canonical::parse_value(text.as_bytes()).unwrap();
    let realm = s.ledger.realms()[0];
    let event =
        akledger::actors::publish_model(&s.controller, boss, realm, &model, None, Timestamp::now())
            .unwrap();
    assert!(matches!(
        s.ledger.append(event.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    let store = s._dir.path().join(akledger::layout::DISCLOSURES);
    let request = |name: &str, agent: usize, checked: bool| {
        let context = s
            .boss()
            .request_context("orders", name, vec![s.did(agent)], None)
            .unwrap();
        on(s.boss(), checked).request_skill(
            &exchange(name),
            context,
            "travel",
            "book",
            data(r#"{"destination":"Oslo","passport":"P-LOCKED"}"#),
            Json::Null,
        )
    };
    let (before, kept) = (s.ledger.len(), std::fs::read(&store).ok());
    match request("locked1", 1, true) {
        Err(Error::WouldNotFold { reason, .. }) => assert_eq!(reason, Reason::SkillLockViolated),
        other => panic!("a request to an agent the lock leaves out: {other:?}"),
    }
    assert_eq!(s.ledger.len(), before);
    assert_eq!(std::fs::read(&store).ok(), kept, "no disclosure kept");
    let anyway = request("locked2", 1, false).unwrap();
    assert_eq!(s.not_folded_reason(anyway), Some(Reason::SkillLockViolated));
    let honoured = request("locked3", 0, true).unwrap();
    assert_eq!(
        s.projection(&exchange("locked3")).request_event_id,
        honoured
    );
    assert!(s.ledger.covers(&[honoured], &event.id()).unwrap());
}
