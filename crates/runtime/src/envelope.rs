//! The agent framework's unit of communication (seed 002): an [`Envelope`] carries one
//! serialized message from a sender address to a receiver address under a protocol id, and
//! a [`Connection`] moves envelopes between the runtime and the outside world.

use std::fmt;

use crate::limits::MAX_ENVELOPE_HEADER_FIELD_BYTES;

/// A protocol's public id, `author/name:version` (the AEA `PublicId` form, such as
/// `fetchai/default:1.0.0`): author and name `[A-Za-z_][A-Za-z0-9_]*`, version a semantic
/// version (with optional pre-release and build parts), `latest` or `any`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ProtocolId(pub(super) String);

impl ProtocolId {
    /// Parses `author/name:version`; `None` when it is not of that form.
    pub fn parse(text: &str) -> Option<ProtocolId> {
        if text.len() > MAX_ENVELOPE_HEADER_FIELD_BYTES {
            return None;
        }
        let (author, rest) = text.split_once('/')?;
        let (name, version) = rest.split_once(':')?;
        let ok = is_identifier(author) && is_identifier(name) && is_version(version);
        ok.then(|| ProtocolId(text.to_string()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProtocolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `latest`, `any`, or `MAJOR.MINOR.PATCH[-pre][+build]` without leading zeros.
fn is_version(s: &str) -> bool {
    if s == "latest" || s == "any" {
        return true;
    }
    let (core, build) = s.split_once('+').map_or((s, None), |(c, b)| (c, Some(b)));
    let (core, pre) = core
        .split_once('-')
        .map_or((core, None), |(c, p)| (c, Some(p)));
    let number = |n: &str| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
    };
    let dotted = |t: &str| {
        t.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| number(p))
        && pre.is_none_or(dotted)
        && build.is_none_or(dotted)
}

/// One envelope (seed 002): destination, sender, protocol, message bytes and optional
/// routing context.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Envelope {
    /// The destination address.
    pub to: String,
    /// The sender address.
    pub sender: String,
    /// The protocol the message follows.
    pub protocol_id: ProtocolId,
    /// The serialized message.
    pub message: Vec<u8>,
    /// Optional routing information (a URI); the stub line format does not carry it.
    pub context: Option<String>,
}

impl Envelope {
    /// An envelope without context.
    pub fn new(to: &str, sender: &str, protocol_id: ProtocolId, message: Vec<u8>) -> Envelope {
        Envelope {
            to: to.to_string(),
            sender: sender.to_string(),
            protocol_id,
            message,
            context: None,
        }
    }

    /// The envelope as AEA 1.x serializes it (`aea.mail.base_pb2.Envelope`: `to` = 1,
    /// `sender` = 2, `protocol_id` = 3, `message` = 4, `uri` = 5), what the AEA error skill
    /// quotes.
    pub fn encode_protobuf(&self) -> Vec<u8> {
        use super::protobuf::put_scalar_bytes;
        let mut out = Vec::with_capacity(self.message.len() + 64);
        put_scalar_bytes(&mut out, 1, self.to.as_bytes());
        put_scalar_bytes(&mut out, 2, self.sender.as_bytes());
        put_scalar_bytes(&mut out, 3, self.protocol_id.as_str().as_bytes());
        put_scalar_bytes(&mut out, 4, &self.message);
        if let Some(uri) = &self.context {
            put_scalar_bytes(&mut out, 5, uri.as_bytes());
        }
        out
    }

    /// Reads an envelope as AEA 1.x serializes it ([`Envelope::encode_protobuf`]): `to`,
    /// `sender` and `protocol_id` present and at most
    /// [`MAX_ENVELOPE_HEADER_FIELD_BYTES`] each, the protocol id of the `author/name:version`
    /// form; a field given twice counts once, its last value (proto3); unknown fields are
    /// skipped.
    pub fn decode_protobuf(bytes: &[u8]) -> Result<Envelope, String> {
        use super::protobuf::{fields, string, Value};
        let (mut to, mut sender, mut protocol, mut message, mut uri) =
            (None, None, None, Vec::new(), None);
        for (number, value) in fields(bytes).map_err(|e| e.to_string())? {
            let Value::Bytes(b) = value else {
                if (1..=5).contains(&number) {
                    return Err(format!("field {number} is not length-delimited"));
                }
                continue;
            };
            let text = || string(b).map_err(|e| e.to_string());
            match number {
                1 => to = Some(text()?),
                2 => sender = Some(text()?),
                3 => protocol = Some(text()?),
                4 => message = b.to_vec(),
                5 => uri = Some(text()?),
                _ => {}
            }
        }
        let header = |field: Option<String>, name: &str| match field {
            Some(v) if !v.is_empty() && v.len() <= MAX_ENVELOPE_HEADER_FIELD_BYTES => Ok(v),
            Some(v) if !v.is_empty() => Err(format!(
                "{name} is longer than {MAX_ENVELOPE_HEADER_FIELD_BYTES} bytes"
            )),
            _ => Err(format!("{name} is missing")),
        };
        let to = header(to, "to")?;
        let sender = header(sender, "sender")?;
        let protocol = header(protocol, "protocol_id")?;
        let protocol_id = ProtocolId::parse(&protocol)
            .ok_or_else(|| format!("protocol_id {protocol:?} is not author/name:version"))?;
        Ok(Envelope {
            to,
            sender,
            protocol_id,
            message,
            context: uri.filter(|u| !u.is_empty()),
        })
    }
}

/// Which file, and which content of it, a position in a connection's input belongs to: a
/// position means nothing in a file that was since replaced (rotated), truncated or
/// rewritten.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FileIdentity {
    /// The file's device.
    pub device: u64,
    /// The file's inode.
    pub inode: u64,
    /// The first 8 bytes of the blake3 digest of the (up to 64) bytes just before the
    /// position: a file rewritten from its start has other bytes there.
    pub guard: u64,
}

/// A position in a connection's input: where to resume after a restart.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct InputCursor {
    /// Bytes of the input before it.
    pub offset: u64,
    /// The input file it is a position in (`None` for inputs that are no file, and in
    /// records written before files were identified).
    pub file: Option<FileIdentity>,
}

/// An envelope read by a connection, with where it came from in the connection's input
/// (for the stub connection: the byte range of its record in the input file).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Received {
    /// The envelope.
    pub envelope: Envelope,
    /// Input position where its record starts.
    pub start: u64,
    /// Input position just after its record, in the file it was read from: everything
    /// before it has been taken in once this envelope is.
    pub end: InputCursor,
}

/// The interface between the runtime and the outside world (seed 002): it receives
/// envelopes and sends envelopes. The runtime decides *when* each envelope is durable (the
/// ledger) and tells the connection where to resume after a restart.
///
/// A connection never blocks for long: the runtime's main loop polls every connection of
/// its [`Multiplexer`](crate::Multiplexer) in turn.
pub trait Connection: Send {
    /// What kind of connection it is (`stub`, `tcp`, `link`): the name a multiplexer gives
    /// it when it is the only one.
    fn kind(&self) -> &'static str;

    /// A line for people: what it reads and writes (files, addresses).
    fn describe(&self) -> String {
        self.kind().to_string()
    }

    /// The envelopes that arrived since the last call (possibly none), oldest first; never
    /// blocks for long. Malformed input is logged and skipped, never an error. Calling it
    /// again says that everything the previous call returned is in the ledger (a connection
    /// whose peer waits for acknowledgements sends them then).
    fn receive(&mut self) -> std::io::Result<Vec<Received>>;

    /// The input position after everything received so far (malformed records included).
    fn input_cursor(&self) -> InputCursor;

    /// Resumes reading at `cursor` (what the ledger says was taken in), or from the start
    /// of what the input holds now when it is no longer the input `cursor` names.
    fn resume_at(&mut self, cursor: &InputCursor) -> std::io::Result<()>;

    /// The lane of `envelope`: envelopes of one lane are written in the order they were
    /// queued, and different lanes independently (the TCP connection: one lane per
    /// destination address, so an agent that is away holds up nobody else). One lane by
    /// default.
    fn lane(&self, _envelope: &Envelope) -> String {
        String::new()
    }

    /// Queues `envelope` to be written; [`Connection::deliver`] names it by `token`.
    fn send(&mut self, envelope: &Envelope, token: u64) -> std::io::Result<()>;

    /// Writes what its readers can take now, without waiting, and returns the token of one
    /// queued envelope that is now written (for a connection with acknowledgements: taken
    /// in by the peer), or `None` when there is none. The runtime calls it until `None`.
    fn deliver(&mut self) -> std::io::Result<Option<u64>>;

    /// Makes what was written durable, where the output is kept (a connection whose output
    /// is a socket keeps nothing: nothing to do).
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Envelopes queued and not written yet.
    fn queued(&self) -> usize;

    /// The output position now: what the runtime's progress marker keeps for
    /// [`Connection::already_sent`] (for the stub connection in append mode: the output
    /// file's length; for the link: the sequence number of the oldest envelope the peer has
    /// not acknowledged; 0 where nothing can be compared).
    fn output_position(&mut self) -> std::io::Result<u64>;

    /// After a restart: how many of `expected` (in order: the envelopes of this connection
    /// the ledger holds as sent that the marker does not record as written) the output
    /// already holds after position `from`. Anything after those (a write torn by a crash)
    /// is discarded, so queueing the rest writes each envelope once.
    fn already_sent(&mut self, from: u64, expected: &[Envelope]) -> std::io::Result<usize>;
}
