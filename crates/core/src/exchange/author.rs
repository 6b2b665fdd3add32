//! Producer helpers: author real realm, sidecar, message and control events, signed and
//! sealed exactly as PROFILE §6–§8 say. Pure: the time is an argument and nonces come from
//! the caller's RNG.
//!
//! Controls compute their own `basis_event_ids` (maximal heads of the exchange facts the
//! author has seen, an [`ExchangeView`]) and `response_event_ids` (the validated responses
//! that basis covers), and carry an `after` ref to every basis id. A basis has at most
//! [`MAX_CONTROL_BASIS`] ids (each needs an `after` ref, PROFILE §3, §8.2): with more
//! concurrent exchange heads than that, the helper keeps the heads that cover the request
//! first, then the rest in canonical order, up to the bound — only what that basis covers
//! folds, so a controller can always end an exchange.
//!
//! A sidecar is created with its controller's private strand attached
//! ([`create_private_sidecar`]); requests name the sidecar's current context and carry an
//! `after` ref to the attach that makes it current (PROFILE §6, §8.1).

use ed25519_dalek::SigningKey;
use rand_core::CryptoRngCore;

use crate::actors::observe::{GRANT_CONTENT_TYPE, GRANT_KIND, REVOKE_CONTENT_TYPE, REVOKE_KIND};
use crate::actors::{
    check_data, redact, DataFault, DataModel, Grant, Pncp, PncpKind, Revoke, Salt, Withheld,
};
use crate::canonical::{Json, Object};
use crate::did::{ActorId, DidCoreId};
use crate::encrypted::{
    AadContext, EncryptedEnvelope, Sealing, SidecarKey, CONTROL_CONTENT_TYPE, MESSAGE_CONTENT_TYPE,
    NONCE_LEN,
};
use crate::envelope::{
    ScopeRef, CONTEXT_ATTACH, EXCHANGE_CONTROL, MESSAGE_CREATE, REALM_CREATE, SIDECAR_CREATE,
    STRAND_CREATE,
};
use crate::error::{schema, Code, Rejection};
use crate::event::{Event, EventBuilder, Unverified, Verified};
use crate::id::{EventId, EventKind, RealmId, SidecarId, StrandId};
use crate::keyring::Keyring;
pub use crate::limits::MAX_CONTROL_BASIS;
use crate::proof::Verifier;
use crate::time::Timestamp;

use super::causality::Causality;
use super::classify::{ContextAttach, SidecarInfo};
use super::plaintext::{
    Action, Binding, ControlPlaintext, ExchangeId, MessagePlaintext, RequestContext, Role,
    SealedMessage, TerminalKind,
};
use super::report::Projection;

/// `ak.realm.create` by `actor`.
pub fn create_realm(
    key: &SigningKey,
    actor: ActorId,
    at: Timestamp,
) -> Result<Event<Unverified>, Rejection> {
    EventBuilder::new(REALM_CREATE, ScopeRef::RealmGenesis, actor, at).sign(key)
}

/// `ak.sidecar.create` in `realm_id` by `actor` (who becomes its controller).
pub fn create_sidecar(
    key: &SigningKey,
    actor: ActorId,
    realm_id: RealmId,
    at: Timestamp,
) -> Result<Event<Unverified>, Rejection> {
    EventBuilder::new(SIDECAR_CREATE, ScopeRef::Realm { realm_id }, actor, at).sign(key)
}

/// `ak.strand.create` in `realm_id` by `actor`; the payload is `{}`.
pub fn create_strand(
    key: &SigningKey,
    actor: ActorId,
    realm_id: RealmId,
    at: Timestamp,
) -> Result<Event<Unverified>, Rejection> {
    EventBuilder::new(STRAND_CREATE, ScopeRef::Realm { realm_id }, actor, at).sign(key)
}

/// `ak.sidecar.context.attach` of `sidecar` to `strand_id` at `version`; `predecessor` is the
/// attach with version − 1 (required above version 1, PROFILE §6). The author must be the
/// sidecar's controller.
pub fn attach_context(
    key: &SigningKey,
    actor: ActorId,
    sidecar: &SidecarInfo,
    strand_id: StrandId,
    predecessor: Option<(EventId, u64)>,
    at: Timestamp,
) -> Result<Event<Unverified>, Rejection> {
    let version = match predecessor {
        None => 1,
        Some((_, v)) => v
            .checked_add(1)
            .ok_or_else(|| schema("attach version overflow"))?,
    };
    let mut payload = Object::new()
        .with("sidecar_id", sidecar.sidecar_id.to_string().into())
        .with("source_context_ref", strand_ref(strand_id))
        .with(
            "version",
            Json::Int(i64::try_from(version).unwrap_or(i64::MAX)),
        );
    if let Some((pred, _)) = predecessor {
        payload.insert("predecessor_event_ref", pred.to_string().into());
    }
    let scope = ScopeRef::Sidecar {
        realm_id: sidecar.realm_id,
        sidecar_id: sidecar.sidecar_id,
    };
    EventBuilder::new(CONTEXT_ATTACH, scope, actor, at)
        .payload(payload.into())
        .sign(key)
}

/// A sidecar with its controller's private strand attached: three events, in causal order.
#[derive(Clone, Debug)]
pub struct PrivateSidecar {
    /// `ak.sidecar.create`.
    pub sidecar: Event<Unverified>,
    /// `ak.strand.create`: the controller's private strand.
    pub strand: Event<Unverified>,
    /// `ak.sidecar.context.attach`, version 1.
    pub attach: Event<Unverified>,
    /// The sidecar as the fold and the authors see it, the attach included.
    pub info: SidecarInfo,
}

impl PrivateSidecar {
    /// The three events, in causal order.
    pub fn events(&self) -> [&Event<Unverified>; 3] {
        [&self.sidecar, &self.strand, &self.attach]
    }

    /// The strand created with the sidecar (attached unless another one was given).
    pub fn strand_id(&self) -> StrandId {
        self.strand.id().retype()
    }

    /// The strand the version-1 attach binds the sidecar to.
    pub fn attach_strand(&self) -> StrandId {
        self.info
            .attaches
            .first()
            .map_or_else(|| self.strand_id(), |a| a.strand_id)
    }
}

/// `ak.sidecar.create` in `realm_id` by `actor`, plus the controller's private strand
/// (`ak.strand.create`, or `strand` when given: a strand already created in the realm) and
/// the version-1 attach binding the sidecar to it (PROFILE §6).
pub fn create_private_sidecar(
    key: &SigningKey,
    actor: ActorId,
    realm_id: RealmId,
    strand: Option<StrandId>,
    at: Timestamp,
) -> Result<PrivateSidecar, Rejection> {
    let sidecar = create_sidecar(key, actor.clone(), realm_id, at)?;
    let new_strand = create_strand(key, actor.clone(), realm_id, at)?;
    let strand_id = strand.unwrap_or_else(|| new_strand.id().retype());
    let mut info = SidecarInfo::new(sidecar.id().retype(), realm_id, actor.clone());
    let attach = attach_context(key, actor, &info, strand_id, None, at)?;
    info.attaches.push(ContextAttach {
        event_id: attach.id(),
        strand_id,
        version: 1,
    });
    Ok(PrivateSidecar {
        sidecar,
        strand: new_strand,
        attach,
        info,
    })
}

/// What a control author has seen of an exchange.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExchangeView {
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// Its canonical request.
    pub request_event_id: EventId,
    /// The request's strand (the control's outer context).
    pub strand_id: StrandId,
    /// Exchange facts seen: the request, folded messages, applied controls.
    pub facts: Vec<EventId>,
    /// The validated responses among them.
    pub validated_responses: Vec<EventId>,
}

impl ExchangeView {
    /// Everything a projection says was folded.
    pub fn of(projection: &Projection) -> Self {
        ExchangeView {
            exchange_id: projection.exchange_id.clone(),
            request_event_id: projection.request_event_id,
            strand_id: projection.strand_id,
            facts: projection.folded_event_ids.clone(),
            validated_responses: projection.user_facing_response_event_ids.clone(),
        }
    }
}

/// A control action to author.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Act {
    /// `close`.
    Close,
    /// `cancel`.
    Cancel,
    /// `fail` with a reason code.
    Fail(String),
    /// `reassign_coordinator` from `expected` to `new`.
    Reassign {
        /// The coordinator the author believes is current.
        expected: DidCoreId,
        /// The new coordinator.
        new: DidCoreId,
    },
}

/// One producer writing into one sidecar: signing key, actor, sidecar key and epoch.
#[derive(Clone, Debug)]
pub struct SidecarAuthor {
    key: SigningKey,
    /// The key's verification method, named in every proof: worked out once.
    method: String,
    actor: ActorId,
    sidecar: SidecarInfo,
    sidecar_key: SidecarKey,
    epoch: u64,
}

impl SidecarAuthor {
    /// An author sealing with `sidecar_key` at `epoch`.
    pub fn new(
        key: SigningKey,
        actor: ActorId,
        sidecar: SidecarInfo,
        sidecar_key: SidecarKey,
        epoch: u64,
    ) -> Self {
        SidecarAuthor {
            method: crate::did::verification_method(&key.verifying_key()),
            key,
            actor,
            sidecar,
            sidecar_key,
            epoch,
        }
    }

    /// An author sealing with the keyring's key for the sidecar at `epoch`.
    pub fn from_keyring(
        key: SigningKey,
        actor: ActorId,
        sidecar: SidecarInfo,
        keyring: &Keyring,
        epoch: u64,
    ) -> Option<Self> {
        let sidecar_key = keyring.sidecar_key(&sidecar.sidecar_id, epoch)?.clone();
        Some(Self::new(key, actor, sidecar, sidecar_key, epoch))
    }

    /// The sidecar as this author last saw it.
    pub fn sidecar(&self) -> &SidecarInfo {
        &self.sidecar
    }

    /// The same author, seeing the sidecar as `sidecar` (newer attaches, say).
    pub fn with_sidecar(mut self, sidecar: SidecarInfo) -> Self {
        self.sidecar = sidecar;
        self
    }

    /// The author's actor.
    pub fn actor(&self) -> &ActorId {
        &self.actor
    }

    /// The author's principal.
    pub fn principal(&self) -> &DidCoreId {
        self.actor.principal()
    }

    /// A `request` message opening `exchange_id`.
    pub fn request(
        &self,
        exchange_id: &ExchangeId,
        context: RequestContext,
        body: Json,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        // The request names the sidecar's current context and follows the attach making it
        // current (PROFILE §8.1): the latest attach this author knows.
        let attach = self
            .sidecar
            .latest_attach()
            .ok_or_else(|| schema("the sidecar has no attached strand to request in"))?;
        if attach.strand_id != context.source_track_ref().strand_id {
            return Err(schema(format!(
                "a request must name the sidecar's current context {}",
                attach.strand_id
            )));
        }
        let after = [attach.event_id];
        let binding = Binding {
            exchange_id: exchange_id.clone(),
            role: Role::Request(context),
        };
        self.message(Some(binding), body, &after, at, rng)
    }

    /// A `user_facing_response` to `request_event_id`; `completes` names the coordinator
    /// assignment it completes under (`completes_exchange: true`).
    pub fn respond(
        &self,
        exchange_id: &ExchangeId,
        request_event_id: EventId,
        completes: Option<EventId>,
        body: Json,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let role = Role::Response {
            request_event_id,
            completes,
        };
        self.bound(exchange_id, role, request_event_id, body, at, rng)
    }

    /// An `internal` message about `request_event_id`.
    pub fn internal(
        &self,
        exchange_id: &ExchangeId,
        request_event_id: EventId,
        body: Json,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let role = Role::Internal { request_event_id };
        self.bound(exchange_id, role, request_event_id, body, at, rng)
    }

    /// A PNCP message (PROFILE §14.2) on `binding`, its data redacted before sealing
    /// (§14.3): each redacted field of `draft.model` that holds a value is replaced by a
    /// salted commitment (salts from `rng`), and the values withheld are returned with the
    /// event, for the author's disclosure store. `after` are the message's own `after`
    /// refs; `draft.after` (the actor models it relies on) are added. Refuses a kind that
    /// does not go with the binding's role, and never seals a raw value in a redacted field.
    pub fn pncp_message(
        &self,
        binding: Binding,
        body: Json,
        draft: PncpDraft<'_>,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<(Event<Unverified>, Vec<Withheld>), Rejection> {
        if binding.role.name() != draft.kind.role() {
            return Err(schema(format!(
                "a PNCP {} goes with role {}, not {}",
                draft.kind,
                draft.kind.role(),
                binding.role.name()
            )));
        }
        let (data, withheld) = redact(&draft.data, draft.model, &binding.exchange_id, || {
            let mut salt = [0u8; 32];
            rng.fill_bytes(&mut salt);
            Salt(salt)
        });
        if let Err(DataFault::RawRedacted(field)) = check_data(Some(&data), draft.model) {
            return Err(schema(format!(
                "refusing to seal the raw value of the redacted field {field:?}"
            )));
        }
        let pncp = Pncp {
            kind: draft.kind,
            subject: draft.subject,
            action: draft.action,
            question_id: draft.question_id,
            data: (!data.is_empty()).then_some(data),
        };
        let plaintext = MessagePlaintext {
            body,
            binding: Some(binding),
            pncp: Some(pncp),
        }
        .into_json();
        let mut refs: Vec<EventId> = after.to_vec();
        refs.extend(draft.after.iter().filter(|id| !after.contains(id)));
        let event = self.message_raw(&plaintext, &refs, at, rng)?;
        Ok((event, withheld))
    }

    fn bound(
        &self,
        exchange_id: &ExchangeId,
        role: Role,
        request_event_id: EventId,
        body: Json,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let binding = Binding {
            exchange_id: exchange_id.clone(),
            role,
        };
        self.message(Some(binding), body, &[request_event_id], at, rng)
    }

    /// A sidecar message with any (or no) binding and `after` refs to `after`.
    pub fn message(
        &self,
        binding: Option<Binding>,
        body: Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        self.message_unsigned(binding, body, after, at, rng)
            .sign_as(&self.key, self.method.clone())
    }

    /// [`SidecarAuthor::message`] sealed and not yet signed: sign it with
    /// [`SidecarAuthor::sign_verified`], on any thread (a producer with many events to make
    /// signs them in parallel).
    pub fn message_unsigned(
        &self,
        binding: Option<Binding>,
        body: Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> EventBuilder {
        let message = SealedMessage {
            binding: binding.clone(),
        };
        let plaintext = MessagePlaintext {
            body,
            binding,
            pncp: None,
        }
        .into_json();
        self.sealed_message(&plaintext, Some(message), after, at, rng)
    }

    /// Signs `builder` with this author's key ([`EventBuilder::sign_verified`]): verified
    /// against `verifier` without solving the fresh signature's equation again.
    pub fn sign_verified(
        &self,
        builder: EventBuilder,
        verifier: &Verifier,
    ) -> Result<Event<Verified>, Rejection> {
        builder.sign_verified_as(&self.key, self.method.clone(), verifier)
    }

    /// [`SidecarAuthor::sign_verified`] of many builders, signed together: the same events
    /// for less (the signatures' nonce points are encoded with one field inversion for all).
    pub fn sign_verified_many(
        &self,
        builders: Vec<EventBuilder>,
        verifier: &Verifier,
    ) -> Result<Vec<Event<Verified>>, Rejection> {
        EventBuilder::sign_verified_many_as(builders, &self.key, &self.method, verifier)
    }

    /// A sidecar message sealing any JSON plaintext.
    pub fn message_raw(
        &self,
        plaintext: &Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        self.sealed_message(plaintext, None, after, at, rng)
            .sign_as(&self.key, self.method.clone())
    }

    /// A sidecar message event sealing `plaintext`, unsigned; `message` is what the fold
    /// reads of the plaintext, when the caller knows it.
    fn sealed_message(
        &self,
        plaintext: &Json,
        message: Option<SealedMessage>,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> EventBuilder {
        let plaintext = plaintext.to_bytes();
        let sealed = self.seal_bytes(MESSAGE_CREATE, MESSAGE_CONTENT_TYPE, &plaintext, rng);
        let payload = Object::new().with("encrypted_payload", sealed.to_json());
        let sealing = Sealing::of(sealed, &self.sidecar_key, plaintext).message(message);
        self.builder(MESSAGE_CREATE, payload.into(), after, at)
            .sealed(Some(sealing))
    }

    /// A control of `act` over what `view` has seen: basis = maximal heads of the seen
    /// facts (at most [`MAX_CONTROL_BASIS`] of them, see the module doc), responses = the
    /// seen validated responses that basis covers.
    pub fn control(
        &self,
        view: &ExchangeView,
        act: Act,
        causality: &impl Causality,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let basis = bounded_basis(causality.heads_of(&view.facts), view, causality);
        let mut response_event_ids = causality.covered_among(&basis, &view.validated_responses);
        response_event_ids.sort();
        let terminal = |kind| Action::Terminal {
            kind,
            response_event_ids,
        };
        let action = match act {
            Act::Close => terminal(TerminalKind::Close),
            Act::Cancel => terminal(TerminalKind::Cancel),
            Act::Fail(code) => terminal(TerminalKind::Fail(code)),
            Act::Reassign { expected, new } => Action::Reassign { expected, new },
        };
        let plaintext = ControlPlaintext {
            exchange_id: view.exchange_id.clone(),
            request_event_id: view.request_event_id,
            basis_event_ids: basis.clone(),
            action,
        }
        .to_json();
        // Nothing invalid is authored: the plaintext must read back.
        ControlPlaintext::from_json(&plaintext)?;
        self.control_raw(view.strand_id, &plaintext, &basis, at, rng)
    }

    /// A control event sealing any JSON plaintext, in the context of `strand_id`.
    pub fn control_raw(
        &self,
        strand_id: StrandId,
        plaintext: &Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let sealed = self.seal(EXCHANGE_CONTROL, CONTROL_CONTENT_TYPE, plaintext, rng);
        let payload = Object::new()
            .with("sidecar_id", self.sidecar.sidecar_id.to_string().into())
            .with("source_context_ref", strand_ref(strand_id))
            .with("encrypted_payload", sealed.to_json());
        self.sign(EXCHANGE_CONTROL, payload.into(), after, at)
    }

    /// An `ak.observation.grant` sealing `grant` (PROFILE §14.4). Only the sidecar's
    /// controller may grant: anyone else is refused here as admission would refuse them.
    pub fn grant_observation(
        &self,
        grant: &Grant,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let plaintext = grant.to_json();
        // Nothing invalid is authored: the plaintext must read back.
        Grant::from_json(&plaintext)?;
        self.observation(GRANT_KIND, GRANT_CONTENT_TYPE, &plaintext, after, at, rng)
    }

    /// An `ak.observation.revoke` of the grant `grant_event_id`, with an `after` ref to it
    /// besides `after` (PROFILE §14.4); the controller only, as for grants.
    pub fn revoke_observation(
        &self,
        grant_event_id: EventId,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let plaintext = Revoke { grant_event_id }.to_json();
        let mut refs = after.to_vec();
        if !refs.contains(&grant_event_id) {
            refs.push(grant_event_id);
        }
        self.observation(REVOKE_KIND, REVOKE_CONTENT_TYPE, &plaintext, &refs, at, rng)
    }

    fn observation(
        &self,
        kind: &str,
        content_type: &str,
        plaintext: &Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        if self.actor != self.sidecar.controller {
            return Err(Rejection::new(
                Code::SidecarExchangeControlForbidden,
                format!("only the sidecar's controller may author {kind}"),
            ));
        }
        let sealed = self.seal(kind, content_type, plaintext, rng);
        let payload = Object::new()
            .with("sidecar_id", self.sidecar.sidecar_id.to_string().into())
            .with("encrypted_payload", sealed.to_json());
        self.sign(kind, payload.into(), after, at)
    }

    /// The sidecar this author writes into.
    pub fn sidecar_id(&self) -> SidecarId {
        self.sidecar.sidecar_id
    }

    fn scope(&self) -> ScopeRef {
        ScopeRef::Sidecar {
            realm_id: self.sidecar.realm_id,
            sidecar_id: self.sidecar.sidecar_id,
        }
    }

    fn seal(
        &self,
        kind: &str,
        content_type: &str,
        plaintext: &Json,
        rng: &mut impl CryptoRngCore,
    ) -> EncryptedEnvelope {
        self.seal_bytes(kind, content_type, &plaintext.to_bytes(), rng)
    }

    fn seal_bytes(
        &self,
        kind: &str,
        content_type: &str,
        plaintext: &[u8],
        rng: &mut impl CryptoRngCore,
    ) -> EncryptedEnvelope {
        let scope = self.scope();
        let ctx = AadContext {
            scope: &scope,
            event_kind: kind,
            sender: &self.actor,
        };
        let mut nonce = [0u8; NONCE_LEN];
        rng.fill_bytes(&mut nonce);
        let group_state_ref = self.sidecar.sidecar_id.retype::<EventKind>().to_string();
        EncryptedEnvelope::seal(
            &self.sidecar_key,
            nonce,
            content_type,
            self.epoch,
            &group_state_ref,
            &ctx,
            plaintext,
        )
    }

    fn sign(
        &self,
        kind: &str,
        payload: Json,
        after: &[EventId],
        at: Timestamp,
    ) -> Result<Event<Unverified>, Rejection> {
        self.builder(kind, payload, after, at)
            .sign_as(&self.key, self.method.clone())
    }

    /// An unsigned event of `kind` with this author's scope and actor, a payload the author
    /// made (its sealed part and the ids beside it) and `after` refs: made whole here, so
    /// signing builds the event from these parts instead of reading its bytes back.
    fn builder(&self, kind: &str, payload: Json, after: &[EventId], at: Timestamp) -> EventBuilder {
        EventBuilder::new(kind, self.scope(), self.actor.clone(), at)
            .payload(payload)
            .after(after.iter().copied())
            .made_here()
    }
}

/// `{"kind":"strand","strand_id"}`: a `source_context_ref` (PROFILE §6).
fn strand_ref(strand_id: StrandId) -> Json {
    Object::new()
        .with("kind", "strand".into())
        .with("strand_id", strand_id.to_string().into())
        .into()
}

/// At most [`MAX_CONTROL_BASIS`] of `heads` (canonical order in, canonical order out): the
/// heads covering the request first, then the others, each group in canonical order.
fn bounded_basis(
    heads: Vec<EventId>,
    view: &ExchangeView,
    causality: &impl Causality,
) -> Vec<EventId> {
    if heads.len() <= MAX_CONTROL_BASIS {
        return heads;
    }
    let (covering, others): (Vec<EventId>, Vec<EventId>) = heads
        .into_iter()
        .partition(|h| causality.covers(&[*h], &view.request_event_id));
    let mut basis: Vec<EventId> = covering
        .into_iter()
        .chain(others)
        .take(MAX_CONTROL_BASIS)
        .collect();
    basis.sort();
    basis
}

/// What a PNCP message says, before sealing ([`SidecarAuthor::pncp_message`]).
#[derive(Clone, Debug)]
pub struct PncpDraft<'m> {
    /// The kind.
    pub kind: PncpKind,
    /// The skill's subject.
    pub subject: String,
    /// The skill's action.
    pub action: String,
    /// For a question or an answer, the question's id.
    pub question_id: Option<String>,
    /// The data, with raw values: redacted fields are committed to before sealing.
    pub data: Object,
    /// The data model the data follows (PROFILE §14.2), whose `redacted` fields are kept
    /// off the ledger; `None` when the action declares none.
    pub model: Option<&'m DataModel>,
    /// The actor-model events whose rules the message relies on: it gets an `after` ref to
    /// each, so that "as seen from the message" names them (§14.2).
    pub after: Vec<EventId>,
}
