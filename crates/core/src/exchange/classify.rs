//! The per-event step of the fold: decrypt one admitted sidecar event with the keyring (AAD
//! rebuilt from the signed envelope), read its plaintext, and keep only what the exchange
//! fold needs. The result depends on the event and the key alone, so the ledger can cache
//! it per admitted event and refold an exchange without decrypting again.

use crate::did::{ActorId, DidCoreId};
use crate::encrypted::{AadContext, EncryptedEnvelope, CONTROL_CONTENT_TYPE, MESSAGE_CONTENT_TYPE};
use crate::envelope::Body;
use crate::event::{Event, Verified};
use crate::id::{EventId, RealmId, SidecarId, StrandId};
use crate::keyring::Keyring;
use crate::time::Timestamp;

use super::causality::Causality;
use super::plaintext::{
    Binding, ControlPlaintext, ExchangeId, MessageError, MessagePlaintext, Role,
};
use super::report::{NotFolded, Reason};

/// The sidecar an event set belongs to.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SidecarInfo {
    /// The sidecar.
    pub sidecar_id: SidecarId,
    /// Its realm.
    pub realm_id: RealmId,
    /// The controller: the sidecar create's complete actor (PROFILE §1, §6).
    pub controller: ActorId,
    /// The sidecar's context attaches known so far (PROFILE §6), in any order.
    pub attaches: Vec<ContextAttach>,
}

/// An `ak.sidecar.context.attach` of the sidecar by its controller.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct ContextAttach {
    /// The attach event.
    pub event_id: EventId,
    /// The strand it binds the sidecar to.
    pub strand_id: StrandId,
    /// Its version.
    pub version: u64,
}

impl SidecarInfo {
    /// A sidecar with no attach known yet.
    pub fn new(sidecar_id: SidecarId, realm_id: RealmId, controller: ActorId) -> Self {
        SidecarInfo {
            sidecar_id,
            realm_id,
            controller,
            attaches: Vec::new(),
        }
    }

    /// The sidecar made by `create`, if it is an `ak.sidecar.create`.
    pub fn of_create(create: &Event<Verified>) -> Option<Self> {
        match create.body() {
            Body::SidecarCreate => Some(SidecarInfo::new(
                create.id().retype(),
                create.scope().realm_id()?,
                create.actor().clone(),
            )),
            _ => None,
        }
    }

    /// The latest attach known (greatest version, ties: greatest digest bytes): the
    /// current context of an event covering every known attach (PROFILE §6).
    pub fn latest_attach(&self) -> Option<&ContextAttach> {
        self.attaches
            .iter()
            .max_by_key(|a| (a.version, a.event_id.digest()))
    }

    /// The sidecar's current context as seen from `event` (PROFILE §6): the strand of the
    /// attach with the greatest version among those `event` covers (ties: greatest digest
    /// bytes); `None` when it covers no attach.
    pub fn current_context(&self, event: &EventId, causality: &impl Causality) -> Option<StrandId> {
        self.attaches
            .iter()
            .filter(|a| causality.covers(&[*event], &a.event_id))
            .max_by_key(|a| (a.version, a.event_id.digest()))
            .map(|a| a.strand_id)
    }
}

/// What an exchange event says, once read.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Fact {
    /// A bound message: request, response or internal.
    Message(Role),
    /// A decrypted, well-formed control by the controller.
    Control {
        /// The outer `source_context_ref.strand_id`.
        strand_id: StrandId,
        /// The plaintext.
        plaintext: ControlPlaintext,
    },
}

/// An event that belongs to one exchange, with what the fold needs of it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExchangeItem {
    /// The event.
    pub event_id: EventId,
    /// The exchange it names.
    pub exchange_id: ExchangeId,
    /// The principal of its actor.
    pub author: DidCoreId,
    /// Its `created_at` (the author's claim; for timelines, never for decisions).
    pub created_at: Timestamp,
    /// True when its actor is the controller (complete ActorId, PROFILE §1).
    pub by_controller: bool,
    /// Targets of its causal `after` refs, in canonical order.
    pub after: Vec<EventId>,
    /// True when the event has a DAG edge (PROFILE §5) other than its `after` refs and its
    /// sidecar's create event (a `parent_event` ref): the incremental fold then asks the
    /// causal index what the event covers instead of reading it off `after`.
    pub other_edges: bool,
    /// What it says.
    pub fact: Fact,
    /// The PNCP message a bound message is (PROFILE §14.2), if it is one.
    pub pncp: Option<crate::actors::Pncp>,
}

impl ExchangeItem {
    /// True when an `after` ref names `id`.
    pub fn has_after(&self, id: &EventId) -> bool {
        self.after.binary_search(id).is_ok()
    }
}

/// The outcome of classifying one sidecar event.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Classified {
    /// Belongs to an exchange; the exchange fold decides.
    Exchange(Box<ExchangeItem>),
    /// A message without binding: not an exchange event, never listed.
    Plain(EventId),
    /// The controller's context attach: the fold needs it to know the current context.
    Attach(ContextAttach),
    /// Never folds, whatever else is admitted.
    Unbound(NotFolded),
}

/// Classifies one event of `sidecar`; `None` for events that are not messages or controls
/// in that sidecar.
pub fn classify(
    sidecar: &SidecarInfo,
    event: &Event<Verified>,
    keyring: &Keyring,
) -> Option<Classified> {
    if event.scope().sidecar_id() != Some(sidecar.sidecar_id) {
        return None;
    }
    let unbound = |exchange_id, reason| {
        Classified::Unbound(NotFolded {
            event_id: event.id(),
            sidecar_id: sidecar.sidecar_id,
            exchange_id,
            reason,
        })
    };
    let (fact, exchange_id, pncp) = match event.body() {
        Body::SidecarMessage { encrypted } => {
            let read = match sealed_here(sidecar, event, keyring, encrypted) {
                Some(binding) => Ok((binding, None)),
                None => match open(sidecar, event, keyring, encrypted, MESSAGE_CONTENT_TYPE) {
                    Ok(bytes) => MessagePlaintext::parse(&bytes).map(|m| (m.binding, m.pncp)),
                    Err(reason) => return Some(unbound(None, reason)),
                },
            };
            let (binding, pncp) = match read {
                Ok((None, _)) => return Some(Classified::Plain(event.id())),
                Ok((Some(b), pncp)) => (b, pncp),
                Err(MessageError::Plaintext) => {
                    return Some(unbound(None, Reason::PlaintextInvalid))
                }
                Err(MessageError::Binding(x)) => return Some(unbound(x, Reason::BindingInvalid)),
            };
            let Binding { exchange_id, role } = binding;
            (Fact::Message(role), exchange_id, pncp)
        }
        Body::ExchangeControl {
            strand_id,
            encrypted,
            ..
        } => {
            if *event.actor() != sidecar.controller {
                return Some(unbound(None, Reason::ControlNotByController));
            }
            let plaintext = match open(sidecar, event, keyring, encrypted, CONTROL_CONTENT_TYPE)
                .and_then(|b| {
                    ControlPlaintext::parse(&b).map_err(|_| Reason::ControlPlaintextInvalid)
                }) {
                Ok(p) => p,
                Err(reason) => return Some(unbound(None, reason)),
            };
            let exchange_id = plaintext.exchange_id.clone();
            let fact = Fact::Control {
                strand_id: *strand_id,
                plaintext,
            };
            (fact, exchange_id, None)
        }
        Body::ContextAttach(a) if *event.actor() == sidecar.controller => {
            return Some(Classified::Attach(ContextAttach {
                event_id: event.id(),
                strand_id: a.strand_id,
                version: a.version,
            }))
        }
        _ => return None,
    };
    let after = after_refs(event);
    Some(Classified::Exchange(Box::new(ExchangeItem {
        event_id: event.id(),
        exchange_id,
        author: event.actor().principal().clone(),
        created_at: event.created_at(),
        by_controller: *event.actor() == sidecar.controller,
        other_edges: has_other_edges(event, &sidecar.sidecar_id, &after),
        after,
        fact,
        pncp,
    })))
}

/// Decrypts `encrypted`, carried by `event` in `sidecar`, with the keyring's key for its
/// epoch and the AAD rebuilt from the signed envelope (PROFILE §7); coarse on failure.
pub fn decrypt<S>(
    sidecar: &SidecarId,
    event: &Event<S>,
    keyring: &Keyring,
    encrypted: &EncryptedEnvelope,
) -> Result<Vec<u8>, Reason> {
    let key = keyring
        .sidecar_key(sidecar, encrypted.epoch)
        .ok_or(Reason::NotDecryptable)?;
    let ctx = AadContext {
        scope: event.scope(),
        event_kind: event.kind(),
        sender: event.actor(),
    };
    // Sealed in this process with this very key: its author knows the plaintext. (Test
    // builds decrypt the events the reader's cross-check picks anyway, and compare.)
    if let Some(plaintext) = event.sealing().and_then(|s| s.plaintext_of(encrypted, key)) {
        #[cfg(any(debug_assertions, feature = "cross-check"))]
        if crate::event::cross_checked(&event.id()) {
            assert_eq!(
                encrypted.open(key, &ctx).as_deref(),
                Ok(plaintext),
                "an event's sealing must give what decrypting it gives"
            );
        }
        return Ok(plaintext.to_vec());
    }
    encrypted
        .open(key, &ctx)
        .map_err(|_| Reason::NotDecryptable)
}

/// The binding of `event`'s message plaintext, when its author sealed it in this process
/// without a `pncp` member and decrypting it with the keyring would give that plaintext (the
/// keyring's key for its epoch, the very sealed bytes, a message's content type): what
/// reading the plaintext would give, without decrypting and parsing it. (Test builds read
/// the events the reader's cross-check picks anyway, and compare.)
fn sealed_here(
    sidecar: &SidecarInfo,
    event: &Event<Verified>,
    keyring: &Keyring,
    encrypted: &EncryptedEnvelope,
) -> Option<Option<Binding>> {
    if encrypted.content_type != MESSAGE_CONTENT_TYPE {
        return None;
    }
    let key = keyring.sidecar_key(&sidecar.sidecar_id, encrypted.epoch)?;
    let (_plaintext, message) = event.sealing()?.message_of(encrypted, key)?;
    #[cfg(any(debug_assertions, feature = "cross-check"))]
    if crate::event::cross_checked(&event.id()) {
        assert_eq!(
            MessagePlaintext::parse(_plaintext).map(|m| (m.binding, m.pncp)),
            Ok((message.binding.clone(), None)),
            "what an author notes of its message plaintext must be what reading it gives"
        );
    }
    Some(message.binding.clone())
}

/// Decrypts `encrypted` of `event`; a wrong content type is an invalid plaintext.
fn open(
    sidecar: &SidecarInfo,
    event: &Event<Verified>,
    keyring: &Keyring,
    encrypted: &EncryptedEnvelope,
    content_type: &str,
) -> Result<Vec<u8>, Reason> {
    let bytes = decrypt(&sidecar.sidecar_id, event, keyring, encrypted)?;
    if encrypted.content_type != content_type {
        return Err(match content_type {
            CONTROL_CONTENT_TYPE => Reason::ControlPlaintextInvalid,
            _ => Reason::PlaintextInvalid,
        });
    }
    Ok(bytes)
}

/// Whether `event` has an edge that is neither an `after` ref (`after`, ascending) nor the
/// create event of `sidecar`, its scope.
fn has_other_edges(event: &Event<Verified>, sidecar: &SidecarId, after: &[EventId]) -> bool {
    let scope: EventId = sidecar.retype();
    event
        .dependencies()
        .iter()
        .any(|d| *d != scope && after.binary_search(d).is_err())
}

fn after_refs(event: &Event<Verified>) -> Vec<EventId> {
    let mut after: Vec<EventId> = event
        .envelope()
        .refs
        .iter()
        .filter(|r| r.role == "after")
        .filter_map(|r| r.causal_target())
        .collect();
    after.sort();
    after.dedup();
    after
}
