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
}

/// An envelope read by a connection, with where it came from in the connection's input
/// (for the stub connection: the byte range of its record in the input file).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Received {
    /// The envelope.
    pub envelope: Envelope,
    /// Input position where its record starts.
    pub start: u64,
    /// Input position just after its record: everything before it has been taken in once
    /// this envelope is.
    pub end: u64,
}

/// The interface between the runtime and the outside world (seed 002): it receives
/// envelopes and sends envelopes. The runtime decides *when* each envelope is durable (the
/// ledger) and tells the connection where to resume after a restart.
pub trait Connection {
    /// The envelopes that arrived since the last call (possibly none), oldest first; never
    /// blocks for long. Malformed input is logged and skipped, never an error.
    fn receive(&mut self) -> std::io::Result<Vec<Received>>;

    /// The input position after everything received so far (malformed records included).
    fn input_position(&self) -> u64;

    /// Resumes reading at input position `position` (what the ledger says was taken in).
    fn resume_at(&mut self, position: u64) -> std::io::Result<()>;

    /// Writes `envelope` out (durably, when the connection can).
    fn send(&mut self, envelope: &Envelope) -> std::io::Result<()>;

    /// Makes everything sent so far durable.
    fn flush(&mut self) -> std::io::Result<()>;

    /// The output position now (for the stub connection: the output file's length).
    fn output_position(&mut self) -> std::io::Result<u64>;

    /// After a restart: how many of `expected` (in order) were already sent after output
    /// position `from`. Anything after those (a write torn by a crash) is discarded, so
    /// sending the rest sends each envelope exactly once.
    fn already_sent(&mut self, from: u64, expected: &[Envelope]) -> std::io::Result<usize>;
}
