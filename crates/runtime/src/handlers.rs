//! Skills' handlers (seed 002): a [`Handler`] reacts to the envelopes of one protocol, the
//! [`EchoHandler`] mirrors default-protocol `bytes` messages in their dialogues (as AEA's
//! echo skill does), and [`error_reply`] is the error skill: what an envelope that cannot
//! be handled gets back.
//!
//! Handlers are pure reactions: an envelope in, envelopes to send out. The runtime has
//! already made the inbound envelope an event, and makes each outbound one an event before
//! it is written (the ledger is the InBox and the OutBox).

use std::collections::BTreeMap;

use super::base85;
use super::default_protocol::{DefaultMessage, ErrorCode, Performative, DEFAULT_PROTOCOL_ID};
use super::dialogue::Dialogues;
use super::envelope::{Envelope, ProtocolId};
use super::skills::SkillContext;
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
    /// handled. Must depend only on the inputs its skill had before it, in order: when the
    /// runtime starts it hands every input the ledger holds to the skills again (their
    /// answers, already sent, are dropped), so that a handler's state (dialogues, models)
    /// is what it was, and a handler run again after a crash answers the same.
    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal>;
}

/// `fetchai/default:1.0.0`.
pub fn default_protocol_id() -> ProtocolId {
    ProtocolId(DEFAULT_PROTOCOL_ID.to_string())
}

/// The reply envelope to `to_envelope`: addressed back to its sender, from its receiver.
pub fn reply(to_envelope: &Envelope, protocol_id: ProtocolId, message: Vec<u8>) -> Envelope {
    Envelope::new(&to_envelope.sender, &to_envelope.to, protocol_id, message)
}

/// The error skill, in the shape of AEA 1.2.5's `fetchai/error`: a default-protocol
/// `error` message back to the sender of `envelope`, outside any dialogue (references empty,
/// message 1, target 0), whose `error_data` quotes the offending envelope (AEA's protobuf
/// `Envelope`) in base85 under `envelope`, and its protocol id under `protocol_id` when the
/// protocol is what is unsupported. Base85 holds no backslash, so the AEA reader never
/// escape-decodes (and so garbles) the quote.
pub fn error_reply(envelope: &Envelope, refusal: &Refusal) -> Envelope {
    let mut data = BTreeMap::from([(
        "envelope".to_string(),
        base85::encode(&envelope.encode_protobuf()),
    )]);
    if refusal.code == ErrorCode::UnsupportedProtocol {
        data.insert(
            "protocol_id".to_string(),
            base85::encode(envelope.protocol_id.as_str().as_bytes()),
        );
    }
    let message = DefaultMessage {
        message_id: 1,
        dialogue_reference: (String::new(), String::new()),
        target: 0,
        performative: Performative::Error {
            code: refusal.code,
            message: refusal.message.clone(),
            data,
        },
    };
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

/// This side's dialogue nonce for what answers the event `event`: its digest in 64 hex
/// digits, the form of AEA 1.x's nonces (32 random bytes), and the same every time the
/// event is handled.
pub fn dialogue_nonce(event: EventId) -> String {
    akledger::id::hex(&event.digest())
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
/// the same content, in its dialogue as AEA 1.x numbers them ([`crate::dialogue`]: the
/// responder's messages count down from −1, each targets the message it answers, and the
/// responder reference is assigned when the dialogue starts); `error` and `end` messages are
/// taken into their dialogue and not answered. A message of no dialogue (never started,
/// out of turn, or answering what cannot be answered) is answered as the echo skill does:
/// an `INVALID_DIALOGUE` error opening a dialogue of its own, quoting the message (in
/// base85, see [`error_reply`]) under `default_message`.
#[derive(Debug)]
pub struct EchoHandler {
    protocol: ProtocolId,
    dialogues: Dialogues,
}

impl Default for EchoHandler {
    fn default() -> Self {
        EchoHandler {
            protocol: default_protocol_id(),
            dialogues: Dialogues::new(),
        }
    }
}

impl Handler for EchoHandler {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        _context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal> {
        let message = decode_default(inbound.envelope)?;
        let sender = &inbound.envelope.sender;
        let nonce = dialogue_nonce(inbound.event_id);
        let answer = match self.dialogues.update(&message, sender, &nonce) {
            Some(dialogue) => match &message.performative {
                Performative::Bytes(content) => self.dialogues.reply(
                    &dialogue,
                    message.message_id,
                    Performative::Bytes(content.clone()),
                ),
                _ => None,
            },
            None => {
                let data = BTreeMap::from([(
                    "default_message".to_string(),
                    base85::encode(&inbound.envelope.message),
                )]);
                let error = Performative::Error {
                    code: ErrorCode::InvalidDialogue,
                    message: "Invalid dialogue.".to_string(),
                    data,
                };
                self.dialogues.create(sender, &nonce, error)
            }
        };
        Ok(answer
            .map(|m| reply(inbound.envelope, self.protocol.clone(), m.encode()))
            .into_iter()
            .collect())
    }
}
