//! Replicate: every ledger of a realm gets every event of that realm through a NATS
//! JetStream stream, a clustered, durable log run by someone else.
//!
//! The IO shell's second network end (after [`akledger::sync`]); it owns the replication
//! marker `DIR/replicate/<stream>.json` (`marker.rs`) and the client (`nats.rs`, the only
//! async code of the crate, confined to its own tokio runtime with one worker thread);
//! how events are packed into messages is [`message`], without IO, and the positions of
//! consumed events that publishing passes over are kept as runs (`runs.rs`, without IO). A [`Replicator`] does, in
//! rounds:
//!
//! * **publish** — the admitted events not yet in the stream, in admission order (a causal
//!   order), packed up to 64 to a message of one realm on its subject
//!   `ak.<realm token>.events` ([`subject`]), with a `Nats-Msg-Id` that the message's
//!   events determine (a lone event's is its event id), so the server drops a re-published
//!   copy within its duplicate window. The marker (how many admitted events, from position
//!   0, the stream holds) advances only after the server acknowledged the batch. Events
//!   that came from the stream are not published back. A duplicate is read back: junk
//!   published under a message's id first does not keep its events out (it goes again under
//!   the id and a random suffix). An event over the server's `max_payload` is skipped and listed, never
//!   retried for ever; a stream made anew is refilled; a copied ledger directory draws a
//!   consumer of its own (the marker names the directory).
//! * **consume** — a durable pull consumer named from the ledger's identity (a random id kept
//!   in the marker) fetches batches; each goes through normal admission (verification,
//!   pending for out-of-order delivery) in a [`Ledger::pipeline`](akledger::Ledger::pipeline), and is acknowledged only
//!   once committed (at-least-once delivery and idempotent append: each event takes effect
//!   once). Forged or malformed messages are rejected by admission, counted, and
//!   acknowledged with the rest, so they are never redelivered and stop nothing.
//!
//! [`Replicator::once`] publishes what is new and consumes to the end of the stream;
//! [`Replicator::follow`] keeps doing so until asked to stop, reconnecting with back-off
//! while the server is away.
#![deny(missing_docs)]

pub mod limits;
mod marker;
pub mod message;
mod nats;
mod replicator;
mod runs;
pub mod subject;

pub use replicator::{FollowEvent, Replicator};

use std::path::Path;
use std::time::Duration;

use akledger::error::{Error, Fault};

use crate::limits::REPLICATE_TIMEOUT_SECS;

/// The stream name used when none is given.
pub const DEFAULT_STREAM: &str = "AKLEDGER";

/// Where and how to replicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicateOptions {
    /// The server, for example `nats://127.0.0.1:4222`.
    pub url: String,
    /// The stream's name ([`subject::check_stream_name`]).
    pub stream: String,
    /// How long one request to the server may take.
    pub timeout: Duration,
}

impl ReplicateOptions {
    /// Options for the server at `url`, the default stream and timeout.
    pub fn new(url: impl Into<String>) -> Self {
        ReplicateOptions {
            url: url.into(),
            stream: DEFAULT_STREAM.to_owned(),
            timeout: Duration::from_secs(REPLICATE_TIMEOUT_SECS),
        }
    }
}

/// What replication moved so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicateReport {
    /// Events published that the stream did not hold yet.
    pub published: u64,
    /// Events consumed from the stream (the lines of its messages).
    pub consumed: u64,
    /// Events admitted here: consumed ones, and pending ones (consumed earlier, or held
    /// here before) that consumed events released.
    pub admitted: u64,
    /// Consumed events already held here (published from here, or redelivered).
    pub duplicates: u64,
    /// Consumed events stored as pending (their dependencies were not here yet; counted
    /// again under `admitted` when released).
    pub pending: u64,
    /// Consumed events admission refused (forged, malformed): acknowledged, not kept.
    pub rejected: u64,
    /// Consumed messages that could not be read ([`message::Unreadable`]: an unknown
    /// encoding, or compressed bytes that do not decompress within the bound): acknowledged,
    /// their events (if any) not read.
    pub unreadable: u64,
    /// The first of them: its stream sequence and why it could not be read.
    pub unreadable_first: Option<String>,
    /// Times `follow` lost the server and connected again.
    pub reconnects: u64,
    /// Admitted events not published because the server takes no message that large (its
    /// `max_payload`): each is also appended to `DIR/replicate/<stream>.skipped.jsonl`
    /// with the reason, and publishing goes on past it.
    pub skipped: Vec<Skipped>,
    /// The server's `max_payload` (bytes) when it is below what the largest event needs
    /// ([`limits::REPLICATE_MAX_MESSAGE_BYTES`]): raise it (`max_payload` in the server's
    /// configuration) or larger events are skipped.
    pub small_max_payload: Option<u64>,
    /// True when the marker was written in another ledger directory (this one is a copy,
    /// or a restored backup): this ledger got a durable consumer of its own, which reads
    /// the stream from its start (what is held here already counts as duplicates).
    pub consumer_renewed: bool,
    /// Times the stream was found made anew (deleted and created again): everything
    /// admitted here was published again to refill it.
    pub stream_recreated: u64,
    /// Events of messages whose id the stream already held with other bytes (junk published
    /// under it first): published again under the id and a random suffix (counted in
    /// `published`).
    pub squatted: u64,
}

/// An admitted event replication could not publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The event.
    pub id: akledger::EventId,
    /// Its size in bytes.
    pub bytes: u64,
    /// Why.
    pub reason: String,
}

/// Why replication stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplicateError {
    /// The server could not be reached, refused a request or did not answer in time.
    #[error("nats: {0}")]
    Server(String),
    /// The replication marker could not be read or written.
    #[error("{path}: replication marker: {reason}")]
    Marker {
        /// The marker file.
        path: std::path::PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The caller asked for something impossible.
    #[error("{0}")]
    Misuse(String),
    /// The local ledger failed.
    #[error(transparent)]
    Ledger(#[from] Error),
}

impl ReplicateError {
    fn marker(path: &Path, reason: String) -> ReplicateError {
        ReplicateError::Marker {
            path: path.to_owned(),
            reason,
        }
    }

    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            ReplicateError::Server(_) | ReplicateError::Marker { .. } => Fault::Io,
            ReplicateError::Misuse(_) => Fault::CallerMisuse,
            ReplicateError::Ledger(e) => e.fault(),
        }
    }

    /// Whether trying again later may succeed (the server was away or slow): `follow`
    /// reconnects after these and stops on the others.
    pub fn is_transient(&self) -> bool {
        matches!(self, ReplicateError::Server(_))
    }
}
