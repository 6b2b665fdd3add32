//! Skills' handlers (seed 002): a [`Handler`] reacts to the envelopes of one protocol, a
//! [`HandlerRegistry`] finds it by `protocol_id`, the [`EchoHandler`] mirrors
//! default-protocol `bytes` messages (as AEA's echo skill does), and [`error_reply`] is
//! the error skill: what an envelope that cannot be handled gets back.
//!
//! Handlers are pure reactions: an envelope in, envelopes to send out. The runtime has
//! already made the inbound envelope an event, and makes each outbound one an event before
//! it is written (the ledger is the InBox and the OutBox).

use std::collections::{BTreeMap, HashMap};

use super::default_protocol::{DefaultMessage, ErrorCode, Performative, DEFAULT_PROTOCOL_ID};
use super::envelope::{Envelope, ProtocolId};
use akledger::id::EventId;

/// Why a handler could not handle an envelope: the error skill answers with this code.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Refusal {
    /// The default protocol's error code.
    pub code: ErrorCode,
    /// A human text.
    pub message: String,
}

impl Refusal {
    /// A refusal with `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// An inbound envelope as a handler sees it: already an event in the ledger.
#[derive(Clone, Copy, Debug)]
pub struct Inbound<'a> {
    /// The envelope.
    pub envelope: &'a Envelope,
    /// Its inbox event.
    pub event_id: EventId,
}

/// A skill's reaction to one protocol.
pub trait Handler: Send {
    /// The protocol it handles.
    fn protocol_id(&self) -> &ProtocolId;

    /// The envelopes to send in answer to `inbound` (possibly none), or why it cannot be
    /// handled. Must depend on the envelope only (the runtime may run it again after a
    /// crash and keeps what was already sent).
    fn handle(&mut self, inbound: Inbound<'_>) -> Result<Vec<Envelope>, Refusal>;
}

/// Handlers by protocol id.
#[derive(Default)]
pub struct HandlerRegistry {
    handlers: HashMap<ProtocolId, Box<dyn Handler>>,
}

impl std::fmt::Debug for HandlerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&str> = self.handlers.keys().map(ProtocolId::as_str).collect();
        ids.sort_unstable();
        f.debug_struct("HandlerRegistry")
            .field("protocols", &ids)
            .finish()
    }
}

impl HandlerRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `handler` for its protocol, replacing any earlier one.
    pub fn register(&mut self, handler: Box<dyn Handler>) {
        self.handlers.insert(handler.protocol_id().clone(), handler);
    }

    /// The handler of `protocol`.
    pub fn get_mut(&mut self, protocol: &ProtocolId) -> Option<&mut (dyn Handler + 'static)> {
        self.handlers.get_mut(protocol).map(|h| &mut **h)
    }
}

/// `fetchai/default:1.0.0`.
pub fn default_protocol_id() -> ProtocolId {
    ProtocolId(DEFAULT_PROTOCOL_ID.to_string())
}

/// The reply envelope to `to_envelope`: addressed back to its sender, from its receiver.
pub fn reply(to_envelope: &Envelope, protocol_id: ProtocolId, message: Vec<u8>) -> Envelope {
    Envelope::new(&to_envelope.sender, &to_envelope.to, protocol_id, message)
}

/// The error skill: a default-protocol `error` message back to the sender of `envelope`,
/// starting a dialogue named after the inbound event; `error_data` holds the offending
/// envelope's protocol id and message.
pub fn error_reply(envelope: &Envelope, inbound: EventId, refusal: &Refusal) -> Envelope {
    let data = BTreeMap::from([
        (
            "protocol_id".to_string(),
            envelope.protocol_id.as_str().as_bytes().to_vec(),
        ),
        ("message".to_string(), envelope.message.clone()),
    ]);
    let message = DefaultMessage::error(
        &dialogue_reference(inbound),
        refusal.code,
        &refusal.message,
        data,
    );
    reply(envelope, default_protocol_id(), message.encode())
}

/// A dialogue reference derived from an event id (deterministic, so a handler run again
/// after a crash answers the same).
pub fn dialogue_reference(event: EventId) -> String {
    let text = event.to_string();
    text.rsplit(':')
        .next()
        .unwrap_or(&text)
        .chars()
        .take(16)
        .collect()
}

/// Decodes and checks a default-protocol message, as refusals the error skill answers.
pub fn decode_default(envelope: &Envelope) -> Result<DefaultMessage, Refusal> {
    let message = DefaultMessage::decode(&envelope.message).map_err(|e| {
        Refusal::new(
            ErrorCode::DecodingError,
            format!("the message is not a {DEFAULT_PROTOCOL_ID} message: {e}"),
        )
    })?;
    message
        .check()
        .map_err(|why| Refusal::new(ErrorCode::InvalidMessage, why))?;
    Ok(message)
}

/// AEA's echo skill: every default-protocol `bytes` message is answered to its sender with
/// the same content, as the next message of the dialogue (message id + 1, targeting the
/// received one, the responder reference filled in when empty); `error` and `end`
/// messages are received and not answered.
#[derive(Debug)]
pub struct EchoHandler {
    protocol: ProtocolId,
}

impl Default for EchoHandler {
    fn default() -> Self {
        EchoHandler {
            protocol: default_protocol_id(),
        }
    }
}

impl Handler for EchoHandler {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(&mut self, inbound: Inbound<'_>) -> Result<Vec<Envelope>, Refusal> {
        let message = decode_default(inbound.envelope)?;
        let Performative::Bytes(content) = message.performative else {
            return Ok(Vec::new());
        };
        let (starter, responder) = message.dialogue_reference;
        let responder = if responder.is_empty() {
            dialogue_reference(inbound.event_id)
        } else {
            responder
        };
        let echo = DefaultMessage {
            message_id: message.message_id.saturating_add(1),
            dialogue_reference: (starter, responder),
            target: message.message_id,
            performative: Performative::Bytes(content),
        };
        Ok(vec![reply(
            inbound.envelope,
            self.protocol.clone(),
            echo.encode(),
        )])
    }
}
