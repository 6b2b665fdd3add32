//! The bound sidecar handle: one author in one sidecar, authoring, timestamping and
//! appending each exchange action in one call (PROFILE §8).
//!
//! A [`SidecarHandle`] reads the sidecar and the exchange's projection from the ledger at
//! each call, so requests name the current context and controls close over everything
//! folded so far (basis = maximal heads, responses = the validated ones it covers). Times
//! are [`Timestamp::now_after`] the event's causal parents; nonces come from the operating
//! system. This is the IO shell: the authoring itself is [`SidecarAuthor`]'s, pure.
//!
//! Checked (the default), an action is folded in advance with the candidate event on top
//! of the admitted graph ([`crate::exchange::preview()`]); when the fold would not apply it
//! (a close on a terminal exchange, a response by an agent the request does not address, a
//! control by someone other than the controller, …) the call returns
//! [`Error::WouldNotFold`] with the fold's reason, and nothing is written.
//! [`SidecarHandle::unchecked`] appends anyway, for tests of what the fold does with such
//! events. The check and the append are two steps: a concurrent writer (another control of
//! the same exchange, say) can still come between them, and the event then folds as the
//! fold decides over everything admitted — the projection, not the check, is the truth.

use ed25519_dalek::SigningKey;
use rand_core::OsRng;

use crate::actors::{ActorModel, Disclosure, Grant, PncpKind, Withheld};
use crate::canonical::Json;
use crate::canonical::Object;
use crate::did::{ActorId, DidCoreId};
use crate::error::Error;
use crate::event::{Event, Unverified};
use crate::exchange::preview::admission_code;
use crate::exchange::{
    Act, Binding, ExchangeId, ExchangeView, PncpDraft, Preview, Projection, Reason, RequestContext,
    Role, SidecarAuthor, SidecarInfo, TrackRef,
};
use crate::id::{EventId, SidecarId};
use crate::time::Timestamp;

use super::{Appended, Ledger};

mod pncp_internal;

/// One author bound to one sidecar of a ledger; made by [`Ledger::sidecar`].
///
/// # Examples
///
/// ```
/// use akledger::exchange::{create_private_sidecar, create_realm, ExchangeId};
/// use akledger::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let ledger = Ledger::open(dir.path())?;
/// let controller_key = SigningKey::generate(&mut OsRng);
/// let agent_key = SigningKey::generate(&mut OsRng);
/// let controller = ActorId::service_for_key(&controller_key.verifying_key());
/// let agent = DidCoreId::for_key(&agent_key.verifying_key());
///
/// // A realm and a sidecar with the controller's private strand, and the sidecar's key.
/// let realm = create_realm(&controller_key, controller.clone(), Timestamp::now())?;
/// ledger.append(realm.bytes())?;
/// let private = create_private_sidecar(
///     &controller_key, controller, realm.id().retype(), None, Timestamp::now_after([realm.created_at()]),
/// )?;
/// for event in private.events() {
///     ledger.append(event.bytes())?;
/// }
/// let sidecar = private.info.sidecar_id;
/// ledger.add_sidecar_key(sidecar, 1, SidecarKey::generate(&mut OsRng))?;
///
/// // The controller asks the agent; the agent answers; the controller closes.
/// let boss = ledger.sidecar(&ledger.sidecar_author(controller_key, sidecar, 1)?);
/// let exchange: ExchangeId = "exchange-0001-ship-order".parse()?;
/// let context = boss.request_context("orders", "order-1", vec![agent.clone()], None)?;
/// boss.request(&exchange, context, Json::from("ship it?"))?;
/// let worker = ledger.sidecar(&ledger.sidecar_author(agent_key, sidecar, 1)?);
/// worker.respond(&exchange, Json::from("shipped"), true)?;
/// boss.close(&exchange)?;
/// assert_eq!(ledger.exchange(&sidecar, &exchange)?.ok_or("none")?.status, Status::Complete);
///
/// // A second close would not fold: refused, nothing written.
/// assert!(matches!(boss.close(&exchange), Err(Error::WouldNotFold { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SidecarHandle<'l> {
    ledger: &'l Ledger,
    author: SidecarAuthor,
    checked: bool,
}

impl Ledger {
    /// `author` bound to this ledger: see [`SidecarHandle`].
    pub fn sidecar(&self, author: &SidecarAuthor) -> SidecarHandle<'_> {
        SidecarHandle {
            ledger: self,
            author: author.clone(),
            checked: true,
        }
    }

    /// An author in `sidecar` signing with `key` as the service of its own
    /// `ak:did_core:key:` principal, sealing with this ledger's key for the sidecar at
    /// `epoch`. [`Error::UnknownSidecar`] when the sidecar is not admitted; caller misuse
    /// when the keyring has no such key.
    pub fn sidecar_author(
        &self,
        key: SigningKey,
        sidecar: SidecarId,
        epoch: u64,
    ) -> Result<SidecarAuthor, Error> {
        let info = self.current_sidecar(sidecar)?;
        let actor = ActorId::service_for_key(&key.verifying_key());
        SidecarAuthor::from_keyring(key, actor, info, &self.verifier.keyring(), epoch).ok_or_else(
            || {
                Error::Misuse(format!(
                    "no key for {sidecar} at epoch {epoch} in the keyring"
                ))
            },
        )
    }

    /// The admitted sidecar, with its attaches.
    fn current_sidecar(&self, sidecar: SidecarId) -> Result<SidecarInfo, Error> {
        self.sidecar_info(&sidecar)?
            .ok_or(Error::UnknownSidecar(sidecar))
    }
}

impl SidecarHandle<'_> {
    /// The same handle, appending what the fold would not apply instead of refusing it (for
    /// tests). Admission still refuses what it refuses.
    pub fn unchecked(mut self) -> Self {
        self.checked = false;
        self
    }

    /// The sidecar.
    pub fn sidecar_id(&self) -> SidecarId {
        self.author.sidecar_id()
    }

    /// A request context on the sidecar's current context (its latest attach, PROFILE §6)
    /// under `track_name`, addressed to `agents` (`coordinator` required with several).
    pub fn request_context(
        &self,
        track_name: &str,
        client_order_key: &str,
        agents: Vec<DidCoreId>,
        coordinator: Option<DidCoreId>,
    ) -> Result<RequestContext, Error> {
        let info = self.ledger.current_sidecar(self.sidecar_id())?;
        let strand_id = latest_attach(&info)?.strand_id;
        let track = TrackRef {
            realm_id: info.realm_id,
            strand_id,
            track_name: track_name.to_string(),
        };
        Ok(RequestContext::new(
            track,
            client_order_key,
            agents,
            coordinator,
        )?)
    }

    /// Opens `exchange` with a request (the controller only) and returns its id.
    ///
    /// Checked, a request on an exchange that already has a canonical request is refused
    /// as a retry ([`Reason::RetryRequest`]): the fold would pick one of the two concurrent
    /// requests by digest (§8.1), and if it picked the new one, messages answering the
    /// first would stop folding.
    pub fn request(
        &self,
        exchange: &ExchangeId,
        context: RequestContext,
        body: Json,
    ) -> Result<EventId, Error> {
        if self.checked
            && self
                .ledger
                .exchange(&self.sidecar_id(), exchange)?
                .is_some()
        {
            return Err(Error::WouldNotFold {
                action: "request",
                exchange_id: exchange.clone(),
                reason: Reason::RetryRequest,
                code: None,
            });
        }
        let author = self.fresh_author()?;
        let attach = latest_attach(author.sidecar())?.event_id;
        let at = self
            .ledger
            .now_after(&[self.sidecar_id().retype(), attach])?;
        let event = author.request(exchange, context, body, at, &mut OsRng)?;
        self.submit("request", exchange, &event)
    }

    /// Opens `exchange` with a PNCP request for `subject`/`action` (PROFILE §14.2) carrying
    /// `data`. Every addressed agent's current model must offer the skill (else
    /// [`Reason::SkillNotOffered`], and nothing is written); the request gets an `after`
    /// ref to each of those models. The redacted fields of the coordinator's input model
    /// are committed to before sealing, and their values kept in the ledger's disclosure
    /// store (§14.3), durably, before the request is appended.
    pub fn request_skill(
        &self,
        exchange: &ExchangeId,
        context: RequestContext,
        subject: &str,
        action: &str,
        data: Object,
        body: Json,
    ) -> Result<EventId, Error> {
        // Each addressed agent's model, read once; the coordinator is one of them.
        let mut models = Vec::new();
        let mut coordinator = None;
        for agent in context.addressed() {
            let (id, model) = self.offering(exchange, "request", agent, subject, action)?;
            if agent == context.coordinator() {
                coordinator = Some(model);
            }
            models.push(id);
        }
        let input = coordinator
            .as_ref()
            .and_then(|m| m.action(subject, action))
            .and_then(|a| a.input.as_ref());
        // Every grant and revoke of the sidecar: a grant applies to the exchanges whose
        // request covers it, and a revoke stops it for those whose request covers it
        // (PROFILE §14.4), so the request names them all.
        let observations: Vec<EventId> = self
            .ledger
            .observations(&self.sidecar_id())?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        // Covering the maximal ones covers the rest (a revoke covers its grant).
        models.extend(self.ledger.heads_of(&observations)?);
        // The requester's own model, whose skill locks the request honours.
        let requester = self.author.principal().clone();
        models.extend(
            self.ledger
                .actor_models(&requester)
                .last()
                .map(|(_, id)| *id),
        );
        let draft = PncpDraft {
            kind: PncpKind::Request,
            subject: subject.to_owned(),
            action: action.to_owned(),
            question_id: None,
            data,
            model: input,
            after: models,
        };
        let author = self.fresh_author()?;
        let attach = latest_attach(author.sidecar())?.event_id;
        let mut parents = vec![self.sidecar_id().retype(), attach];
        parents.extend(&draft.after);
        let at = self.ledger.now_after(&parents)?;
        let binding = Binding {
            exchange_id: exchange.clone(),
            role: Role::Request(context),
        };
        let (event, withheld) =
            author.pncp_message(binding, body, draft, &[attach], at, &mut OsRng)?;
        self.submit_with_disclosures("request", exchange, &event, withheld)
    }

    /// Answers `exchange`'s canonical request with a PNCP `Response` (PROFILE §14.2)
    /// carrying `data`: the redacted fields of this author's own output model (its current
    /// model must offer the request's skill) are committed to, and their values kept in the
    /// disclosure store, before the response is appended. `completes` as in
    /// [`SidecarHandle::respond`].
    pub fn respond_skill(
        &self,
        exchange: &ExchangeId,
        subject: &str,
        action: &str,
        data: Object,
        body: Json,
        completes: bool,
    ) -> Result<EventId, Error> {
        let p = self.projection("respond", exchange)?;
        let me = self.author.principal().clone();
        let (model_event, model) = self.offering(exchange, "respond", &me, subject, action)?;
        let output = model
            .action(subject, action)
            .and_then(|a| a.output.as_ref());
        let draft = PncpDraft {
            kind: PncpKind::Response,
            subject: subject.to_owned(),
            action: action.to_owned(),
            question_id: None,
            data,
            model: output,
            after: vec![model_event],
        };
        let at = self.ledger.now_after(&[
            p.request_event_id,
            self.sidecar_id().retype(),
            model_event,
        ])?;
        let binding = Binding {
            exchange_id: exchange.clone(),
            role: Role::Response {
                request_event_id: p.request_event_id,
                completes: completes.then_some(p.coordinator_assignment_event_id),
            },
        };
        let (event, withheld) = self.author.pncp_message(
            binding,
            body,
            draft,
            &[p.request_event_id],
            at,
            &mut OsRng,
        )?;
        self.submit_with_disclosures("respond", exchange, &event, withheld)
    }

    /// `agent`'s latest admitted model, when it offers `subject`/`action`; else
    /// [`Reason::SkillNotOffered`].
    fn offering(
        &self,
        exchange: &ExchangeId,
        action_name: &'static str,
        agent: &DidCoreId,
        subject: &str,
        action: &str,
    ) -> Result<(EventId, ActorModel), Error> {
        self.ledger
            .latest_model(agent)?
            .filter(|(_, model)| model.offers(subject, action))
            .ok_or_else(|| Error::WouldNotFold {
                action: action_name,
                exchange_id: exchange.clone(),
                reason: Reason::SkillNotOffered,
                code: None,
            })
    }

    /// Grants an observer the exchanges of one skill (PROFILE §14.4); only the sidecar's
    /// controller may. Exchanges requested from now on through this handle are observed
    /// when they match (their requests get an `after` ref to the grant).
    pub fn grant_observation(&self, grant: &Grant) -> Result<EventId, Error> {
        let author = self.fresh_author()?;
        let sidecar = self.sidecar_id().retype();
        let at = self.ledger.now_after(&[sidecar])?;
        let event = author.grant_observation(grant, &[sidecar], at, &mut OsRng)?;
        self.append_observation(&event)
    }

    /// Ends the grant `grant_event_id`: exchanges requested from now on are not observed
    /// under it (PROFILE §14.4); only the sidecar's controller may.
    pub fn revoke_observation(&self, grant_event_id: EventId) -> Result<EventId, Error> {
        let author = self.fresh_author()?;
        let at = self.ledger.now_after(&[grant_event_id])?;
        let event = author.revoke_observation(grant_event_id, &[], at, &mut OsRng)?;
        self.append_observation(&event)
    }

    fn append_observation(&self, event: &Event<Unverified>) -> Result<EventId, Error> {
        admitted(self.ledger.append(event.bytes())?, |id| {
            format!("{id} is pending: the grant it revokes is not admitted")
        })
    }

    /// Keeps the disclosures of `event`'s withheld values (durably), then submits it.
    fn submit_with_disclosures(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        event: &Event<Unverified>,
        withheld: Vec<Withheld>,
    ) -> Result<EventId, Error> {
        // Checked first: a refused message leaves no disclosure behind either.
        self.check(action, exchange, event)?;
        self.keep_and_append(action, exchange, event, withheld)
    }

    /// Keeps the disclosures of `event`'s withheld values (durably), then appends it.
    fn keep_and_append(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        event: &Event<Unverified>,
        withheld: Vec<Withheld>,
    ) -> Result<EventId, Error> {
        let disclosures: Vec<Disclosure> = withheld
            .into_iter()
            .map(|w| Disclosure {
                event_id: event.id(),
                field: w.field,
                salt: w.salt,
                value: w.value,
            })
            .collect();
        self.ledger.keep_disclosures(&disclosures)?;
        self.append(action, exchange, event)
    }

    /// Answers `exchange`'s canonical request with a user-facing response; `completes`
    /// marks it as completing the exchange under the current coordinator assignment.
    pub fn respond(
        &self,
        exchange: &ExchangeId,
        body: Json,
        completes: bool,
    ) -> Result<EventId, Error> {
        let p = self.projection("respond", exchange)?;
        let at = self
            .ledger
            .now_after(&[p.request_event_id, self.sidecar_id().retype()])?;
        let completes = completes.then_some(p.coordinator_assignment_event_id);
        let event = self.author.respond(
            exchange,
            p.request_event_id,
            completes,
            body,
            at,
            &mut OsRng,
        )?;
        self.submit("respond", exchange, &event)
    }

    /// Closes `exchange` over everything folded so far: `complete` with responses,
    /// `failed` (`controller_closed_empty`) without.
    pub fn close(&self, exchange: &ExchangeId) -> Result<EventId, Error> {
        self.control("close", exchange, |_| Act::Close)
    }

    /// Cancels `exchange`: `complete` with responses, else `failed`
    /// (`controller_cancelled`).
    pub fn cancel(&self, exchange: &ExchangeId) -> Result<EventId, Error> {
        self.control("cancel", exchange, |_| Act::Cancel)
    }

    /// Fails `exchange` with `code` (`^[a-z][a-z0-9_]{0,63}$`): `complete` with
    /// responses, else `failed` with the code.
    pub fn fail(&self, exchange: &ExchangeId, code: &str) -> Result<EventId, Error> {
        self.control("fail", exchange, |_| Act::Fail(code.to_string()))
    }

    /// Hands `exchange` from its current coordinator to `to`, an addressed agent.
    pub fn reassign(&self, exchange: &ExchangeId, to: DidCoreId) -> Result<EventId, Error> {
        self.control("reassign", exchange, |p| Act::Reassign {
            expected: p.coordinator_agent_id.clone(),
            new: to,
        })
    }

    /// A control of `act` over everything the ledger has folded for `exchange`.
    fn control(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        act: impl FnOnce(&Projection) -> Act,
    ) -> Result<EventId, Error> {
        let p = self.projection(action, exchange)?;
        // The basis is among the checkpoint heads, whose times bound every fact's.
        let mut parents = p.checkpoint_heads.clone();
        parents.push(self.sidecar_id().retype());
        let at: Timestamp = self.ledger.now_after(&parents)?;
        let view = ExchangeView::of(&p);
        let event = self
            .author
            .control(&view, act(&p), self.ledger, at, &mut OsRng)?;
        self.submit(action, exchange, &event)
    }

    /// The exchange's projection; an exchange without a canonical request folds nothing,
    /// so acting on it is refused as the fold would ([`Reason::UnknownRequest`]).
    fn projection(&self, action: &'static str, exchange: &ExchangeId) -> Result<Projection, Error> {
        self.ledger
            .exchange(&self.sidecar_id(), exchange)?
            .ok_or_else(|| Error::WouldNotFold {
                action,
                exchange_id: exchange.clone(),
                reason: Reason::UnknownRequest,
                code: None,
            })
    }

    /// The author, seeing the sidecar as the ledger has it now.
    fn fresh_author(&self) -> Result<SidecarAuthor, Error> {
        let info = self.ledger.current_sidecar(self.sidecar_id())?;
        Ok(self.author.clone().with_sidecar(info))
    }

    /// Checks `event` with the fold (when checked) and appends it.
    fn submit(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        event: &Event<Unverified>,
    ) -> Result<EventId, Error> {
        self.check(action, exchange, event)?;
        self.append(action, exchange, event)
    }

    /// When checked, refuses `event` if the fold would not apply it.
    fn check(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        event: &Event<Unverified>,
    ) -> Result<(), Error> {
        if self.checked {
            let verified = event.clone().verify(self.ledger.verifier())?;
            match self.ledger.preview(&self.sidecar_id(), &verified)? {
                Preview::Folds(_) => {}
                Preview::NotFolded(reason) => {
                    return Err(Error::WouldNotFold {
                        action,
                        exchange_id: exchange.clone(),
                        reason,
                        code: admission_code(reason),
                    })
                }
                Preview::NotExchangeEvent => {
                    return Err(Error::Misuse(format!(
                        "{action} on exchange {exchange}: the event is no exchange event of {}",
                        self.sidecar_id()
                    )))
                }
            }
        }
        Ok(())
    }

    /// Appends `event`, already checked.
    fn append(
        &self,
        action: &'static str,
        exchange: &ExchangeId,
        event: &Event<Unverified>,
    ) -> Result<EventId, Error> {
        admitted(self.ledger.append(event.bytes())?, |id| {
            format!("{action} on exchange {exchange}: {id} is pending (a parent is not admitted)")
        })
    }
}

/// The id of an event the handle appended, or why it was not admitted (`pending` says
/// why a pending one is a caller's mistake).
fn admitted(outcome: Appended, pending: impl FnOnce(EventId) -> String) -> Result<EventId, Error> {
    match outcome {
        Appended::Admitted(id) | Appended::Duplicate(id) => Ok(id),
        Appended::Rejected { rejection, .. } => Err(Error::Rejected(rejection)),
        Appended::Pending { id, .. } => Err(Error::Misuse(pending(id))),
    }
}

/// The sidecar's current context: its latest attach.
fn latest_attach(info: &SidecarInfo) -> Result<&crate::exchange::ContextAttach, Error> {
    info.latest_attach().ok_or_else(|| {
        Error::Misuse(format!(
            "{} has no attached strand to request in",
            info.sidecar_id
        ))
    })
}
