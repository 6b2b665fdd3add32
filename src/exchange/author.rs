//! Producer helpers: author real realm, sidecar, message and control events, signed and
//! sealed exactly as PROFILE §6–§8 say. Pure: the time is an argument and nonces come from
//! the caller's RNG.
//!
//! Controls compute their own `basis_event_ids` (maximal heads of the exchange facts the
//! author has seen, an [`ExchangeView`]) and `response_event_ids` (the validated responses
//! that basis covers), and carry an `after` ref to every basis id.

use ed25519_dalek::SigningKey;
use rand_core::CryptoRngCore;

use crate::canonical::{Json, Object};
use crate::did::{ActorId, DidCoreId};
use crate::encrypted::{
    AadContext, EncryptedEnvelope, SidecarKey, CONTROL_CONTENT_TYPE, MESSAGE_CONTENT_TYPE,
    NONCE_LEN,
};
use crate::envelope::{ScopeRef, EXCHANGE_CONTROL, MESSAGE_CREATE, REALM_CREATE, SIDECAR_CREATE};
use crate::error::Rejection;
use crate::event::{Event, EventBuilder, Unverified};
use crate::id::{EventId, EventKind, RealmId, StrandId};
use crate::keyring::Keyring;
use crate::time::Timestamp;

use super::causality::Causality;
use super::classify::SidecarInfo;
use super::plaintext::{
    Action, Binding, ControlPlaintext, ExchangeId, MessagePlaintext, RequestContext, Role,
    TerminalKind,
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
        let binding = Binding {
            exchange_id: exchange_id.clone(),
            role: Role::Request(context),
        };
        self.message(Some(binding), body, &[], at, rng)
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
        let plaintext = MessagePlaintext { body, binding }.to_json();
        self.message_raw(&plaintext, after, at, rng)
    }

    /// A sidecar message sealing any JSON plaintext.
    pub fn message_raw(
        &self,
        plaintext: &Json,
        after: &[EventId],
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let sealed = self.seal(MESSAGE_CREATE, MESSAGE_CONTENT_TYPE, plaintext, rng);
        let payload = Object::new().with("encrypted_payload", sealed.to_json());
        self.sign(MESSAGE_CREATE, payload.into(), after, at)
    }

    /// A control of `act` over what `view` has seen: basis = maximal heads of the seen
    /// facts, responses = the seen validated responses that basis covers.
    pub fn control(
        &self,
        view: &ExchangeView,
        act: Act,
        causality: &impl Causality,
        at: Timestamp,
        rng: &mut impl CryptoRngCore,
    ) -> Result<Event<Unverified>, Rejection> {
        let basis = causality.heads_of(&view.facts);
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
        let context = Object::new()
            .with("kind", "strand".into())
            .with("strand_id", strand_id.to_string().into());
        let payload = Object::new()
            .with("sidecar_id", self.sidecar.sidecar_id.to_string().into())
            .with("source_context_ref", context.into())
            .with("encrypted_payload", sealed.to_json());
        self.sign(EXCHANGE_CONTROL, payload.into(), after, at)
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
            &plaintext.to_bytes(),
        )
    }

    fn sign(
        &self,
        kind: &str,
        payload: Json,
        after: &[EventId],
        at: Timestamp,
    ) -> Result<Event<Unverified>, Rejection> {
        EventBuilder::new(kind, self.scope(), self.actor.clone(), at)
            .payload(payload)
            .after(after.iter().copied())
            .sign(&self.key)
    }
}
