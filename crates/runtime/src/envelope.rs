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
pub trait Connection {
    /// The envelopes that arrived since the last call (possibly none), oldest first; never
    /// blocks for long. Malformed input is logged and skipped, never an error.
    fn receive(&mut self) -> std::io::Result<Vec<Received>>;

    /// The input position after everything received so far (malformed records included).
    fn input_cursor(&self) -> InputCursor;

    /// Resumes reading at `cursor` (what the ledger says was taken in), or from the start
    /// of what the input holds now when it is no longer the input `cursor` names.
    fn resume_at(&mut self, cursor: &InputCursor) -> std::io::Result<()>;

    /// Queues `envelope` to be written.
    fn send(&mut self, envelope: &Envelope) -> std::io::Result<()>;

    /// Writes the next queued envelope if its reader can take it now, without waiting;
    /// whether it did.
    fn deliver(&mut self) -> std::io::Result<bool>;

    /// Makes what was written durable, where the output is kept.
    fn flush(&mut self) -> std::io::Result<()>;

    /// Envelopes queued and not written yet.
    fn queued(&self) -> usize;

    /// The output position now (for the stub connection in append mode: the output file's
    /// length; 0 where the reader empties the output).
    fn output_position(&mut self) -> std::io::Result<u64>;

    /// After a restart: how many of `expected` (in order: envelopes the ledger holds as
    /// sent but the marker does not record as written) the output already holds after
    /// position `from`. Anything after those (a write torn by a crash) is discarded, so
    /// queueing the rest writes each envelope once.
    fn already_sent(&mut self, from: u64, expected: &[Envelope]) -> std::io::Result<usize>;
}
