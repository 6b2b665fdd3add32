//! What the runtime writes into the ledger: the plaintext bodies of its `ak.message.create`
//! events (sealed per PROFILE §6–§7 like every sidecar message), and reading them back.
//! Pure.
//!
//! Every body is an object with `"akledger_runtime"` naming the record:
//!
//! - `inbox`: an envelope taken in, `{"akledger_runtime":"inbox","connection"?:C,
//!   "envelope":E,"input":{"start":n,"end":n,"file"?:F}}` (the connection it came in by, its
//!   record's range in that connection's input, and which input file, `F` =
//!   `{"device","inode","guard"}`: see [`crate::envelope::FileIdentity`]).
//! - `outbox`: an envelope to send, `{"akledger_runtime":"outbox","cause":ID,"effect":i,
//!   "connection"?:C,"envelope":E}` (the connection it is written to).
//! - `bridge`: the body of a request or response the exchange bridge authored,
//!   `{"akledger_runtime":"bridge","cause":ID,"effect":i,"content":any}`.
//! - `tick`: a behaviour acted, `{"akledger_runtime":"tick","skill":S,"behaviour":B,
//!   "state"?:T}` (its state after the tick, for a state machine); the tick's time is the
//!   event's `created_at`.
//!
//! `E` = `{"to","sender","protocol_id","message":<unpadded base64url>,"context"?}`, or, for
//! an envelope whose skill declares redacted fields (PROFILE §14.3), `"message"` is the
//! placeholder `{"ak_redacted":{"alg","commitment"}}` of a commitment to that base64url text
//! (field `message`) bound to the exchange `"exchange_id"` names, beside it: the message
//! itself stays in the connection's input and the ledger's disclosure store, and recovery
//! reads it back from the store ([`WithheldMessage`]); `C` a
//! connection name, absent in records written before there were several (the runtime's
//! first connection). `cause` is the event that made the runtime act (an inbox event, a
//! tick, or a control the decision maker authored) and `effect` the action's index among
//! that cause's actions: the pair is what makes handling exactly-once across a crash (an
//! action whose `(cause, effect)` is already in the ledger is not taken again).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::envelope::{Envelope, InputCursor, ProtocolId};
use super::progress::{file_json, file_of};
use akledger::actors::{commitment, placeholder, placeholder_commitment, Disclosure, Salt};
use akledger::canonical::{Json, Object};
use akledger::exchange::ExchangeId;
use akledger::id::EventId;

/// The member naming a runtime record.
pub const RECORD_MEMBER: &str = "akledger_runtime";

/// One action of the runtime: the `effect`-th action caused by event `cause`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Tag {
    /// The event that caused it.
    pub cause: EventId,
    /// Its index among the cause's actions.
    pub effect: u32,
}

/// The field name of a withheld message's commitment and disclosure.
pub const WITHHELD_FIELD: &str = "message";

/// An envelope message a record withholds (PROFILE §14.3): the record holds the
/// placeholder of a commitment to the message's unpadded base64url text, bound to
/// `exchange`; the disclosure store holds the text.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WithheldMessage {
    /// The exchange the commitment binds.
    pub exchange: ExchangeId,
    /// The placeholder the record holds where the message would be.
    pub placeholder: Json,
}

impl WithheldMessage {
    /// Withholds `message` (of an envelope of `exchange`) under `salt`: what the record
    /// holds, and the value to disclose (the message's unpadded base64url text).
    pub fn new(exchange: ExchangeId, salt: &Salt, message: &[u8]) -> (WithheldMessage, Json) {
        let value = Json::str(URL_SAFE_NO_PAD.encode(message));
        let placeholder = placeholder(&commitment(&exchange, WITHHELD_FIELD, salt, &value));
        (
            WithheldMessage {
                exchange,
                placeholder,
            },
            value,
        )
    }

    /// The message `disclosure` gives back, when it opens this commitment.
    pub fn restore(&self, disclosure: &Disclosure) -> Option<Vec<u8>> {
        if disclosure.field != WITHHELD_FIELD
            || !disclosure.opens(&self.exchange, &self.placeholder)
        {
            return None;
        }
        URL_SAFE_NO_PAD.decode(disclosure.value.as_str()?).ok()
    }
}

/// A runtime record read back from a message body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Record {
    /// An envelope taken in, with its input byte range.
    Inbox {
        /// The connection it came in by (`None`: the first).
        connection: Option<String>,
        /// The envelope (its message empty when withheld).
        envelope: Envelope,
        /// The commitment that stands for its message, when the record withholds it.
        withheld: Option<WithheldMessage>,
        /// Where its record starts in the input.
        start: u64,
        /// Just after its record, in the file it was read from.
        end: InputCursor,
    },
    /// An envelope to send.
    Outbox {
        /// Which action.
        tag: Tag,
        /// The connection it is written to (`None`: the first).
        connection: Option<String>,
        /// The envelope (its message empty when withheld).
        envelope: Envelope,
        /// The commitment that stands for its message, when the record withholds it.
        withheld: Option<WithheldMessage>,
    },
    /// A request or response the bridge authored.
    Bridge {
        /// Which action.
        tag: Tag,
    },
    /// A behaviour acted.
    Tick {
        /// Its skill.
        skill: String,
        /// The behaviour.
        behaviour: String,
    },
}

fn int(n: u64) -> Json {
    Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `E`, its message withheld when `withheld` says so.
pub fn envelope_json(e: &Envelope, withheld: Option<&WithheldMessage>) -> Json {
    let obj = Object::new()
        .with("to", e.to.as_str().into())
        .with("sender", e.sender.as_str().into())
        .with("protocol_id", e.protocol_id.as_str().into());
    let mut obj = match withheld {
        None => obj.with("message", URL_SAFE_NO_PAD.encode(&e.message).into()),
        Some(w) => obj
            .with("message", w.placeholder.clone())
            .with("exchange_id", w.exchange.as_str().into()),
    };
    if let Some(context) = &e.context {
        obj.insert("context", context.as_str().into());
    }
    obj.into()
}

fn tagged(kind: &str, tag: Tag) -> Object {
    Object::new()
        .with(RECORD_MEMBER, kind.into())
        .with("cause", tag.cause.to_string().into())
        .with("effect", int(u64::from(tag.effect)))
}

/// An inbox body.
pub fn inbox_body(
    connection: &str,
    envelope: &Envelope,
    withheld: Option<&WithheldMessage>,
    start: u64,
    end: &InputCursor,
) -> Json {
    let input = Object::new()
        .with("start", int(start))
        .with("end", int(end.offset));
    let input = match end.file {
        Some(f) => input.with("file", file_json(f)),
        None => input,
    };
    Object::new()
        .with(RECORD_MEMBER, "inbox".into())
        .with("connection", connection.into())
        .with("envelope", envelope_json(envelope, withheld))
        .with("input", input.into())
        .into()
}

/// An outbox body.
pub fn outbox_body(
    tag: Tag,
    connection: &str,
    envelope: &Envelope,
    withheld: Option<&WithheldMessage>,
) -> Json {
    tagged("outbox", tag)
        .with("connection", connection.into())
        .with("envelope", envelope_json(envelope, withheld))
        .into()
}

/// A tick body.
pub fn tick_body(skill: &str, behaviour: &str, state: Option<&str>) -> Json {
    let body = Object::new()
        .with(RECORD_MEMBER, "tick".into())
        .with("skill", skill.into())
        .with("behaviour", behaviour.into());
    match state {
        Some(state) => body.with("state", state.into()).into(),
        None => body.into(),
    }
}

/// A bridge body wrapping the user's `content`.
pub fn bridge_body(tag: Tag, content: Json) -> Json {
    tagged("bridge", tag).with("content", content).into()
}

fn u64_of(v: Option<&Json>) -> Option<u64> {
    match v? {
        Json::Int(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

fn envelope_of(v: Option<&Json>) -> Option<(Envelope, Option<WithheldMessage>)> {
    let obj = v?.as_object()?;
    let text = |k: &str| obj.get(k).and_then(Json::as_str);
    let (message, withheld) = match obj.get("message")? {
        Json::Str(m) => (URL_SAFE_NO_PAD.decode(m).ok()?, None),
        placeholder => {
            placeholder_commitment(placeholder)?;
            let withheld = WithheldMessage {
                exchange: ExchangeId::parse(text("exchange_id")?).ok()?,
                placeholder: placeholder.clone(),
            };
            (Vec::new(), Some(withheld))
        }
    };
    let envelope = Envelope {
        to: text("to")?.to_string(),
        sender: text("sender")?.to_string(),
        protocol_id: ProtocolId::parse(text("protocol_id")?)?,
        message,
        context: text("context").map(str::to_string),
    };
    Some((envelope, withheld))
}

fn tag_of(obj: &Object) -> Option<Tag> {
    Some(Tag {
        cause: EventId::parse(obj.get("cause")?.as_str()?).ok()?,
        effect: u32::try_from(u64_of(obj.get("effect"))?).ok()?,
    })
}

fn connection_of(obj: &Object) -> Option<Option<String>> {
    match obj.get("connection") {
        None => Some(None),
        Some(c) => Some(Some(c.as_str()?.to_string())),
    }
}

/// The runtime record a message body holds, if it is one.
pub fn read_record(body: &Json) -> Option<Record> {
    let obj = body.as_object()?;
    let text = |k: &str| obj.get(k).and_then(Json::as_str).map(str::to_string);
    match obj.get(RECORD_MEMBER)?.as_str()? {
        "inbox" => {
            let input = obj.get("input")?.as_object()?;
            let (envelope, withheld) = envelope_of(obj.get("envelope"))?;
            Some(Record::Inbox {
                connection: connection_of(obj)?,
                envelope,
                withheld,
                start: u64_of(input.get("start"))?,
                end: InputCursor {
                    offset: u64_of(input.get("end"))?,
                    file: match input.get("file") {
                        Some(f) => Some(file_of(f)?),
                        None => None,
                    },
                },
            })
        }
        "outbox" => {
            let (envelope, withheld) = envelope_of(obj.get("envelope"))?;
            Some(Record::Outbox {
                tag: tag_of(obj)?,
                connection: connection_of(obj)?,
                envelope,
                withheld,
            })
        }
        "bridge" => Some(Record::Bridge { tag: tag_of(obj)? }),
        "tick" => Some(Record::Tick {
            skill: text("skill")?,
            behaviour: text("behaviour")?,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back() {
        let e = Envelope::new(
            "my_first_aea",
            "sender_aea",
            ProtocolId::parse("fetchai/default:1.0.0").unwrap(),
            b"\x00,\n\xff".to_vec(),
        );
        for file in [
            None,
            Some(crate::envelope::FileIdentity {
                device: 1,
                inode: 2,
                guard: u64::MAX,
            }),
        ] {
            let end = InputCursor { offset: 90, file };
            let inbox = inbox_body("stub", &e, None, 3, &end);
            assert_eq!(
                read_record(&inbox),
                Some(Record::Inbox {
                    connection: Some("stub".into()),
                    envelope: e.clone(),
                    withheld: None,
                    start: 3,
                    end
                })
            );
        }
        let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let actor = akledger::did::ActorId::service_for_key(&key.verifying_key());
        let at = akledger::time::Timestamp::from_millis(1).unwrap();
        let realm = akledger::exchange::create_realm(&key, actor, at).unwrap();
        let tag = Tag {
            cause: realm.id(),
            effect: 2,
        };
        assert_eq!(
            read_record(&outbox_body(tag, "tcp", &e, None)),
            Some(Record::Outbox {
                tag,
                connection: Some("tcp".into()),
                envelope: e.clone(),
                withheld: None,
            })
        );
        // A withheld message: the record holds neither the bytes nor their base64url, and
        // only the disclosure that opens the commitment gives them back.
        let exchange = ExchangeId::parse("order-000000000000000001").unwrap();
        let salt = Salt([9; 32]);
        let (withheld, value) = WithheldMessage::new(exchange.clone(), &salt, &e.message);
        let body = outbox_body(tag, "tcp", &e, Some(&withheld));
        let text = String::from_utf8(body.to_bytes()).unwrap();
        assert!(!text.contains(value.as_str().unwrap()), "{text}");
        let Some(Record::Outbox {
            envelope,
            withheld: Some(read),
            ..
        }) = read_record(&body)
        else {
            panic!("{text}")
        };
        assert_eq!((envelope.message.len(), &read), (0, &withheld));
        let disclosure = Disclosure {
            event_id: realm.id(),
            field: WITHHELD_FIELD.into(),
            salt,
            value,
        };
        assert_eq!(read.restore(&disclosure), Some(e.message.clone()));
        for lie in [
            Disclosure {
                salt: Salt([8; 32]),
                ..disclosure.clone()
            },
            Disclosure {
                value: Json::str("AAAA"),
                ..disclosure.clone()
            },
            Disclosure {
                field: "data".into(),
                ..disclosure.clone()
            },
        ] {
            assert_eq!(read.restore(&lie), None, "{lie:?}");
        }
        // Records of a runtime with one connection, before connections were named.
        let mut old = outbox_body(tag, "tcp", &e, None);
        if let Json::Object(obj) = &mut old {
            obj.remove("connection");
        }
        assert_eq!(
            read_record(&old),
            Some(Record::Outbox {
                tag,
                connection: None,
                envelope: e,
                withheld: None,
            })
        );
        assert_eq!(
            read_record(&tick_body("probe", "fsm", Some("waiting"))),
            Some(Record::Tick {
                skill: "probe".into(),
                behaviour: "fsm".into()
            })
        );
        assert_eq!(
            read_record(&bridge_body(tag, Json::from("x"))),
            Some(Record::Bridge { tag })
        );
        assert_eq!(read_record(&Json::from("plain")), None);
    }
}
