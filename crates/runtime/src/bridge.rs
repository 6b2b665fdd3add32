//! The exchange bridge: envelopes of the protocol `akledger/exchange:1.0.0` become
//! exchange events (PROFILE §8), and the exchange projections are what the sidecar reports
//! back. The message is a JSON object whose `performative` says what it is:
//!
//! - `request` (from the controller's address): `{"performative":"request",
//!   "exchange_id","agents":[address…],"coordinator"?:address,"track"?:name,
//!   "order_key"?:text,"body":any}` opens the exchange with a request authored by the
//!   controller, addressed to the agents' principals (address book). Each addressed agent
//!   is sent `{"performative":"request","exchange_id","request_event_id","from","body"}`.
//! - `respond` (from an agent's address the runtime holds a key for):
//!   `{"performative":"respond","exchange_id","body":any,"completes"?:bool}` becomes that
//!   agent's bound response.
//! - `coordinator_gone` (from the controller's address): `{"performative":
//!   "coordinator_gone","agent":address}` declares an agent gone; the decision maker hands
//!   its exchanges over.
//! - `status` (from anyone): `{"performative":"status","exchange_id"}`.
//!
//! A `request` or `respond` may name a seed-000 skill, `"skill":"SUBJECT/ACTION"`, with its
//! PNCP `"data"` object (PROFILE §14.2): the request is then a PNCP `Request` (every
//! addressed agent's model must offer the skill) and the response a PNCP `Response`, each
//! with its redacted fields committed to before sealing; the delivery to each agent carries
//! `skill` and the data as sent (the agent needs the values). The runtime's own records of
//! such envelopes withhold their messages when the skill declares redacted fields
//! ([`SkillMessage`], [`super::records::WithheldMessage`]).
//!
//! Every accepted message is answered to its sender with `{"performative":"projection",
//! "projection":P}` (P the PROFILE §8.6 object); what cannot be done (a request from
//! someone other than the controller, an unknown address, a response the fold would not
//! fold) gets the error skill's `INVALID_MESSAGE` with the reason, undecodable JSON
//! `DECODING_ERROR`. The bodies of requests and responses are wrapped in a `bridge`
//! record naming the inbound event ([`super::records`]).

use std::collections::BTreeSet;

use super::config::RuntimeConfig;
use super::default_protocol::ErrorCode;
use super::envelope::{Envelope, ProtocolId};
use super::handlers::{reply, Inbound, Refusal};
use super::multiplexer::{Effects, Stage};
use super::records::bridge_body;
use akledger::canonical::{to_canonical, Json, Object};
use akledger::did::DidCoreId;
use akledger::error::Error;
use akledger::exchange::{ExchangeId, Projection};
use akledger::ledger::Ledger;

/// The bridge's protocol id.
pub const EXCHANGE_PROTOCOL_ID: &str = "akledger/exchange:1.0.0";

/// `akledger/exchange:1.0.0`.
pub fn exchange_protocol_id() -> ProtocolId {
    ProtocolId(EXCHANGE_PROTOCOL_ID.to_string())
}

/// What an exchange envelope says of a seed-000 skill (pure): enough for the runtime to
/// decide whether its records must withhold the message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SkillMessage {
    /// The exchange it is about.
    pub exchange: ExchangeId,
    /// The skill's subject.
    pub subject: String,
    /// The skill's action.
    pub action: String,
    /// Every address the message names: its `agents`, `coordinator` and `from`.
    pub addresses: Vec<String>,
}

/// The skill an envelope of [`EXCHANGE_PROTOCOL_ID`] names, with its exchange; `None` for
/// any other envelope, or one that names no skill or no valid exchange.
pub fn skill_message(envelope: &Envelope) -> Option<SkillMessage> {
    if envelope.protocol_id.as_str() != EXCHANGE_PROTOCOL_ID {
        return None;
    }
    let doc = parse_message(&envelope.message)?;
    let (subject, action) = skill_of(&doc)?.ok()?;
    let text = |k: &str| doc.get(k).and_then(Json::as_str);
    let agents = doc.get("agents").and_then(Json::as_array);
    let addresses = agents
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .chain(text("coordinator"))
        .chain(text("from"))
        .map(str::to_string)
        .collect();
    Some(SkillMessage {
        exchange: ExchangeId::parse(text("exchange_id")?).ok()?,
        subject,
        action,
        addresses,
    })
}

/// The message as a JSON object, if it is one.
fn parse_message(message: &[u8]) -> Option<Object> {
    match serde_json::from_slice::<serde_json::Value>(message)
        .ok()
        .and_then(|v| Json::try_from(v).ok())
    {
        Some(Json::Object(o)) => Some(o),
        _ => None,
    }
}

/// The `"skill":"SUBJECT/ACTION"` a bridge message names: `None` when it names none, a
/// refusal when it is not of that form.
fn skill_of(doc: &Object) -> Option<Result<(String, String), Refusal>> {
    let skill = doc.get("skill")?;
    let parsed = skill
        .as_str()
        .and_then(|s| s.split_once('/'))
        .filter(|(subject, action)| !subject.is_empty() && !action.is_empty());
    Some(match parsed {
        Some((subject, action)) => Ok((subject.to_string(), action.to_string())),
        None => Err(invalid(format!(
            "skill must be a string SUBJECT/ACTION, not {}",
            String::from_utf8_lossy(&skill.to_bytes())
        ))),
    })
}

/// The skill and PNCP data of a `request` or `respond` that names one: `Ok(None)` when it
/// names no skill; a refusal when the skill or the data is malformed.
fn skill_and_data(doc: &Object) -> Result<Option<(String, String, Object)>, Refusal> {
    let Some(skill) = skill_of(doc) else {
        if doc.get("data").is_some() {
            return Err(invalid(
                "data is PNCP data: name its skill (SUBJECT/ACTION)",
            ));
        }
        return Ok(None);
    };
    let (subject, action) = skill?;
    let data = match doc.get("data") {
        None => Object::new(),
        Some(Json::Object(o)) => o.clone(),
        Some(_) => return Err(invalid("data must be a JSON object")),
    };
    Ok(Some((subject, action, data)))
}

/// A projection report: `{"performative":"projection","projection":P}`.
pub fn projection_message(p: &Projection) -> Vec<u8> {
    let doc = Object::new()
        .with("performative", "projection".into())
        .with("projection", p.to_json());
    to_canonical(&doc.into())
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::new(ErrorCode::InvalidMessage, message)
}

/// A failed ledger action: the caller's mistake is the sender's (`INVALID_MESSAGE`), an IO
/// failure is the runtime's.
fn refused(e: Error) -> Result<Refusal, Error> {
    match e {
        Error::WouldNotFold { .. } | Error::Rejected(_) | Error::Misuse(_) => {
            Ok(invalid(e.to_string()))
        }
        other => Err(other),
    }
}

/// Handles one bridge envelope; `Ok(Err(_))` is a refusal for the error skill.
pub(super) fn handle(
    ledger: &Ledger,
    config: &RuntimeConfig,
    gone: &mut BTreeSet<DidCoreId>,
    inbound: Inbound<'_>,
    effects: &mut Effects<'_>,
) -> Result<Result<(), Refusal>, Error> {
    let envelope = inbound.envelope;
    let Some(doc) = parse_message(&envelope.message) else {
        return Ok(Err(Refusal::new(
            ErrorCode::DecodingError,
            format!("the message is not a JSON object of {EXCHANGE_PROTOCOL_ID}"),
        )));
    };
    let text = |k: &str| doc.get(k).and_then(Json::as_str);
    let exchange = || {
        text("exchange_id")
            .ok_or_else(|| invalid("exchange_id is missing"))
            .and_then(|x| ExchangeId::parse(x).map_err(|e| invalid(e.message().to_string())))
    };
    let outcome = match text("performative") {
        Some(p @ ("request" | "respond")) => match exchange() {
            Err(refusal) => Err(refusal),
            Ok(exchange) => {
                let ask = Ask {
                    ledger,
                    config,
                    doc: &doc,
                    exchange,
                    envelope,
                };
                match p {
                    "request" => request(&ask, effects)?,
                    _ => respond(&ask, effects)?,
                }
            }
        },
        Some("coordinator_gone") => {
            declare_gone(config, gone, text("agent"), envelope).map(|()| None)
        }
        Some("status") => exchange().map(Some),
        _ => Err(invalid(
            "performative must be request, respond, coordinator_gone or status",
        )),
    };
    let report = match outcome {
        Err(refusal) => return Ok(Err(refusal)),
        Ok(None) => Object::new()
            .with("performative", "coordinator_gone".into())
            .with(
                "gone",
                Json::Array(gone.iter().map(|d| d.as_str().into()).collect()),
            )
            .into(),
        Ok(Some(x)) => match ledger.exchange(&config.sidecar, &x)? {
            Some(p) => {
                effects.send(reply(
                    envelope,
                    exchange_protocol_id(),
                    projection_message(&p),
                ));
                return Ok(Ok(()));
            }
            None => return Ok(Err(invalid(format!("no exchange {x} in this sidecar")))),
        },
    };
    effects.send(reply(
        envelope,
        exchange_protocol_id(),
        to_canonical(&report),
    ));
    Ok(Ok(()))
}

/// One exchange envelope being handled.
struct Ask<'a> {
    ledger: &'a Ledger,
    config: &'a RuntimeConfig,
    doc: &'a Object,
    exchange: ExchangeId,
    envelope: &'a Envelope,
}

/// A request from the controller: open the exchange, deliver it to the addressed agents.
fn request(
    ask: &Ask<'_>,
    effects: &mut Effects<'_>,
) -> Result<Result<Option<ExchangeId>, Refusal>, Error> {
    if ask.envelope.sender != ask.config.controller.address {
        return Ok(Err(invalid(format!(
            "only the controller ({}) may request an exchange",
            ask.config.controller.address
        ))));
    }
    let addresses: Vec<&str> = ask
        .doc
        .get("agents")
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let mut agents = Vec::new();
    for address in &addresses {
        match ask.config.principal(address) {
            Some(d) => agents.push(d),
            None => return Ok(Err(invalid(format!("unknown agent address {address:?}")))),
        }
    }
    let coordinator = match ask.doc.get("coordinator").and_then(Json::as_str) {
        Some(a) => match ask.config.principal(a) {
            Some(d) => Some(d),
            None => return Ok(Err(invalid(format!("unknown coordinator address {a:?}")))),
        },
        None => None,
    };
    let track = ask
        .doc
        .get("track")
        .and_then(Json::as_str)
        .unwrap_or("default");
    let order_key = ask
        .doc
        .get("order_key")
        .and_then(Json::as_str)
        .unwrap_or(ask.exchange.as_str());
    let content = ask.doc.get("body").cloned().unwrap_or(Json::Null);
    let skill = match skill_and_data(ask.doc) {
        Ok(skill) => skill,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let author = ask.ledger.sidecar_author(
        ask.config.controller.key.clone(),
        ask.config.sidecar,
        ask.config.epoch,
    )?;
    let handle = ask.ledger.sidecar(&author);
    let tag = effects.next();
    if !effects.taken(tag) {
        let context = match handle.request_context(track, order_key, agents, coordinator) {
            Ok(c) => c,
            Err(e) => return refused(e).map(Err),
        };
        let body = bridge_body(tag, content.clone());
        let requested = match &skill {
            Some((subject, action, data)) => {
                handle.request_skill(&ask.exchange, context, subject, action, data.clone(), body)
            }
            None => handle.request(&ask.exchange, context, body),
        };
        if let Err(e) = requested {
            return refused(e).map(Err);
        }
        effects.passed(Stage::Bridged);
    }
    let Some(p) = ask.ledger.exchange(&ask.config.sidecar, &ask.exchange)? else {
        return Ok(Err(invalid(format!(
            "exchange {} has no request",
            ask.exchange
        ))));
    };
    for address in addresses {
        let delivery = Object::new()
            .with("performative", "request".into())
            .with("exchange_id", ask.exchange.as_str().into())
            .with("request_event_id", p.request_event_id.to_string().into())
            .with("from", ask.envelope.sender.as_str().into())
            .with("body", content.clone());
        let delivery = match &skill {
            Some((subject, action, data)) => delivery
                .with("skill", format!("{subject}/{action}").into())
                .with("data", data.clone().into()),
            None => delivery,
        };
        effects.send(Envelope::new(
            address,
            &ask.config.address,
            exchange_protocol_id(),
            to_canonical(&delivery.into()),
        ));
    }
    Ok(Ok(Some(ask.exchange.clone())))
}

/// A reply from an agent the runtime signs for: its bound response.
fn respond(
    ask: &Ask<'_>,
    effects: &mut Effects<'_>,
) -> Result<Result<Option<ExchangeId>, Refusal>, Error> {
    let Some(agent) = ask.config.agent(&ask.envelope.sender) else {
        return Ok(Err(invalid(format!(
            "no identity for sender {:?}: the runtime cannot sign its response",
            ask.envelope.sender
        ))));
    };
    let completes = ask
        .doc
        .get("completes")
        .and_then(Json::as_bool)
        .unwrap_or(false);
    let content = ask.doc.get("body").cloned().unwrap_or(Json::Null);
    let skill = match skill_and_data(ask.doc) {
        Ok(skill) => skill,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let tag = effects.next();
    if !effects.taken(tag) {
        let author =
            ask.ledger
                .sidecar_author(agent.key.clone(), ask.config.sidecar, ask.config.epoch)?;
        let handle = ask.ledger.sidecar(&author);
        let body = bridge_body(tag, content);
        let responded = match skill {
            Some((subject, action, data)) => {
                handle.respond_skill(&ask.exchange, &subject, &action, data, body, completes)
            }
            None => handle.respond(&ask.exchange, body, completes),
        };
        if let Err(e) = responded {
            return refused(e).map(Err);
        }
        effects.passed(Stage::Bridged);
    }
    Ok(Ok(Some(ask.exchange.clone())))
}

/// The controller declares `agent` gone.
fn declare_gone(
    config: &RuntimeConfig,
    gone: &mut BTreeSet<DidCoreId>,
    agent: Option<&str>,
    envelope: &Envelope,
) -> Result<(), Refusal> {
    if envelope.sender != config.controller.address {
        return Err(invalid("only the controller may declare an agent gone"));
    }
    let address = agent.ok_or_else(|| invalid("agent is missing"))?;
    let did = config
        .principal(address)
        .ok_or_else(|| invalid(format!("unknown agent address {address:?}")))?;
    gone.insert(did);
    Ok(())
}
