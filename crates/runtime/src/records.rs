//! What the runtime writes into the ledger: the plaintext bodies of its `ak.message.create`
//! events (sealed per PROFILE §6–§7 like every sidecar message), and reading them back.
//! Pure.
//!
//! Every body is an object with `"akledger_runtime"` naming the record:
//!
//! - `inbox`: an envelope taken in, `{"akledger_runtime":"inbox","envelope":E,
//!   "input":{"start":n,"end":n,"file"?:F}}` (its record's byte range in the input, and
//!   which input file, `F` = `{"device","inode","guard"}`: see [`crate::envelope::FileIdentity`]).
//! - `outbox`: an envelope to send, `{"akledger_runtime":"outbox","cause":ID,"effect":i,
//!   "envelope":E}`.
//! - `bridge`: the body of a request or response the exchange bridge authored,
//!   `{"akledger_runtime":"bridge","cause":ID,"effect":i,"content":any}`.
//!
//! `E` = `{"to","sender","protocol_id","message":<unpadded base64url>,"context"?}`.
//! `cause` is the event that made the runtime act (an inbox event, or a control the
//! decision maker authored) and `effect` the action's index among that cause's actions:
//! the pair is what makes handling exactly-once across a crash (an action whose
//! `(cause, effect)` is already in the ledger is not taken again).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::envelope::{Envelope, InputCursor, ProtocolId};
use super::progress::{file_json, file_of};
use akledger::canonical::{Json, Object};
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

/// A runtime record read back from a message body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Record {
    /// An envelope taken in, with its input byte range.
    Inbox {
        /// The envelope.
        envelope: Envelope,
        /// Where its record starts in the input.
        start: u64,
        /// Just after its record, in the file it was read from.
        end: InputCursor,
    },
    /// An envelope to send.
    Outbox {
        /// Which action.
        tag: Tag,
        /// The envelope.
        envelope: Envelope,
    },
    /// A request or response the bridge authored.
    Bridge {
        /// Which action.
        tag: Tag,
    },
}

fn int(n: u64) -> Json {
    Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `E`.
pub fn envelope_json(e: &Envelope) -> Json {
    let mut obj = Object::new()
        .with("to", e.to.as_str().into())
        .with("sender", e.sender.as_str().into())
        .with("protocol_id", e.protocol_id.as_str().into())
        .with("message", URL_SAFE_NO_PAD.encode(&e.message).into());
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
pub fn inbox_body(envelope: &Envelope, start: u64, end: &InputCursor) -> Json {
    let input = Object::new()
        .with("start", int(start))
        .with("end", int(end.offset));
    let input = match end.file {
        Some(f) => input.with("file", file_json(f)),
        None => input,
    };
    Object::new()
        .with(RECORD_MEMBER, "inbox".into())
        .with("envelope", envelope_json(envelope))
        .with("input", input.into())
        .into()
}

/// An outbox body.
pub fn outbox_body(tag: Tag, envelope: &Envelope) -> Json {
    tagged("outbox", tag)
        .with("envelope", envelope_json(envelope))
        .into()
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

fn envelope_of(v: Option<&Json>) -> Option<Envelope> {
    let obj = v?.as_object()?;
    let text = |k: &str| obj.get(k).and_then(Json::as_str);
    Some(Envelope {
        to: text("to")?.to_string(),
        sender: text("sender")?.to_string(),
        protocol_id: ProtocolId::parse(text("protocol_id")?)?,
        message: URL_SAFE_NO_PAD.decode(text("message")?).ok()?,
        context: text("context").map(str::to_string),
    })
}

fn tag_of(obj: &Object) -> Option<Tag> {
    Some(Tag {
        cause: EventId::parse(obj.get("cause")?.as_str()?).ok()?,
        effect: u32::try_from(u64_of(obj.get("effect"))?).ok()?,
    })
}

/// The runtime record a message body holds, if it is one.
pub fn read_record(body: &Json) -> Option<Record> {
    let obj = body.as_object()?;
    match obj.get(RECORD_MEMBER)?.as_str()? {
        "inbox" => {
            let input = obj.get("input")?.as_object()?;
            Some(Record::Inbox {
                envelope: envelope_of(obj.get("envelope"))?,
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
        "outbox" => Some(Record::Outbox {
            tag: tag_of(obj)?,
            envelope: envelope_of(obj.get("envelope"))?,
        }),
        "bridge" => Some(Record::Bridge { tag: tag_of(obj)? }),
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
            let inbox = inbox_body(&e, 3, &end);
            assert_eq!(
                read_record(&inbox),
                Some(Record::Inbox {
                    envelope: e.clone(),
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
            read_record(&outbox_body(tag, &e)),
            Some(Record::Outbox { tag, envelope: e })
        );
        assert_eq!(
            read_record(&bridge_body(tag, Json::from("x"))),
            Some(Record::Bridge { tag })
        );
        assert_eq!(read_record(&Json::from("plain")), None);
    }
}
