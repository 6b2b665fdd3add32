//! Sync: two ledgers exchange exactly the events the other lacks, over any byte stream.
//!
//! The IO shell's network end (it touches no file; it reads and writes a stream). One side
//! drives ([`Ledger::sync`](crate::Ledger::sync), the client), the other answers
//! ([`Ledger::serve_session`](crate::Ledger::serve_session)); over TCP,
//! [`Ledger::serve`](crate::Ledger::serve) runs many sessions with a clean stop and
//! [`Ledger::sync_tcp`](crate::Ledger::sync_tcp) connects with timeouts on:
//!
//! 1. **hello** — both send their heads.
//! 2. **have rounds** — the client finds the common set C (the events both hold; it is
//!    closed under ancestors on both sides). When every server head is known locally, C is
//!    what those heads cover and no round is needed. Otherwise the client asks `have?` about
//!    its own events that the known server heads do not cover, newest first, in queries
//!    that double in size (32, 64, …); a `yes` for an event settles all its ancestors, which
//!    are dropped from later queries. The answers give C's heads M, ids both sides know.
//! 3. **pull** — the client sends M; the server streams what M does not cover, in causal
//!    order, in batches; the client admits each batch as it arrives.
//! 4. **push** — the client sends what neither M nor the server's heads cover (pulled
//!    events are not echoed; pending events the pull released are included), in causal
//!    order, in batches; the server admits each batch as it arrives.
//!
//! A stream read and written in turn ([`Ledger::sync`](crate::Ledger::sync),
//! [`Ledger::serve_session`](crate::Ledger::serve_session)) pushes after the pull. With the
//! stream's two ends apart ([`Ledger::sync_duplex`](crate::Ledger::sync_duplex),
//! [`Ledger::serve_duplex`](crate::Ledger::serve_duplex); TCP and `--peer-cmd` pipes in the
//! CLI) the client pushes right after its `pull` request, from a thread of its own, while
//! it receives the pull, and the server sends the pull from a thread of its own while it
//! reads the push: the frames are the same, and only their timing differs, so every
//! pairing of the two kinds of ends works. The push then holds what the pull could not
//! have released; pending events the pull released here go in a push round after it.
//!
//! Everything received goes through normal admission (verification, pending bounds). The
//! peer is untrusted: frames are versioned and bounded ([`frame`]), every read and write
//! has a timeout (pipes included: [`Duplex::timed`]), the whole session has a time limit
//! ([`SyncOptions::session_limit`]), rejected events per session are bounded, and a peer
//! whose advertised heads are not delivered is reported. What was admitted before a failure stays (each batch
//! is committed on its own), so a rerun completes.

// Reached by the tests through `internals`, which holds it to no public API rules.
#[cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]
pub(crate) mod budget;
mod client;
pub mod frame;
mod lanes;
mod negotiate;
mod serve;
mod server;
mod slots;
mod stream;
mod timed;

pub use budget::MemoryBudget;
pub use server::{stop_serving, ServeEvent, ServeOptions, ServeReport};
pub use timed::{Duplex, TimedReader, TimedWriter};

/// Refuses a session before it starts: writes the protocol's error frame with `why`, which
/// the peer's client reports as [`SyncError::Refused`] (a server that is busy says so).
pub fn refuse(stream: &mut impl std::io::Write, why: &str) -> Result<(), SyncError> {
    frame::write_frame(stream, &frame::Frame::Error(why.to_string())).map(|_| ())
}

use std::time::Duration;

use crate::error::{Error, Fault};
use crate::limits::{SYNC_SESSION_LIMIT_SECS, SYNC_TIMEOUT_SECS};

/// Which directions a sync moves events in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    /// Pull what the peer has, push what it lacks.
    #[default]
    Both,
    /// Only receive.
    PullOnly,
    /// Only send.
    PushOnly,
}

/// What one sync session moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Events sent to the peer.
    pub sent: u64,
    /// Events received from the peer.
    pub received: u64,
    /// Received events admitted now.
    pub admitted: u64,
    /// Received events already held here (a race with another writer, or a repeating peer).
    pub duplicates: u64,
    /// Received events stored as pending (their dependencies did not arrive).
    pub pending: u64,
    /// Received events admission refused (nothing written for them).
    pub rejected: u64,
    /// Bytes written to the peer.
    pub bytes_sent: u64,
    /// Bytes read from the peer.
    pub bytes_received: u64,
    /// Request/response exchanges (the client counts them; hello is the first).
    pub rounds: u64,
    /// Bytes of event payloads sent and received (the rest is protocol overhead).
    pub event_bytes: u64,
    /// Events sent that the peer's admission refused, with its reasons: not delivered.
    pub refused_by_peer: Vec<PeerRefusal>,
}

impl SyncReport {
    /// Adds `other`'s counts to these (the two halves of one session).
    fn add(&mut self, other: &SyncReport) {
        self.sent += other.sent;
        self.received += other.received;
        self.admitted += other.admitted;
        self.duplicates += other.duplicates;
        self.pending += other.pending;
        self.rejected += other.rejected;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.rounds += other.rounds;
        self.event_bytes += other.event_bytes;
        self.refused_by_peer
            .extend(other.refused_by_peer.iter().cloned());
    }
}

/// An event sent that the peer refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerRefusal {
    /// The event.
    pub id: crate::id::EventId,
    /// The PROFILE code the peer gave.
    pub code: String,
    /// Why, in the peer's words (at most 500 characters).
    pub message: String,
}

/// Why a sync session stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The peer broke the protocol (bad frame, unknown version, over a bound, lied).
    #[error("sync peer broke the protocol: {0}")]
    Protocol(String),
    /// The peer said nothing (or took nothing) for longer than the timeout.
    #[error("sync peer timed out (silent for longer than the timeout)")]
    Timeout,
    /// The session lasted longer than its time limit ([`SyncOptions::session_limit`]).
    #[error("sync session cut off: it ran past its {} s time limit", .0.as_secs())]
    OverLimit(Duration),
    /// The stream ended in the middle of the session.
    #[error("sync peer disconnected in the middle of the session")]
    Disconnected,
    /// This side had no room for what the peer sent: the server's budget of received frames
    /// ([`MemoryBudget`]) stayed held by other sessions for a whole timeout.
    #[error("sync busy: {0}")]
    Busy(String),
    /// The peer gave up and said why.
    #[error("sync peer refused: {0}")]
    Refused(String),
    /// Reading or writing the stream failed.
    #[error("sync stream: {0}")]
    Io(std::io::Error),
    /// The caller asked for something impossible.
    #[error("{0}")]
    Misuse(String),
    /// The peer pushed events to a read-only server, which admits none.
    #[error("this server is read-only: it takes no events (sync with --pull-only)")]
    ReadOnly,
    /// The local ledger failed.
    #[error(transparent)]
    Ledger(#[from] Error),
}

impl SyncError {
    /// Maps a stream error, recognising timeouts and disconnects.
    pub fn io(e: std::io::Error) -> SyncError {
        use std::io::ErrorKind::*;
        if let Some(over) = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<stream::OverLimit>())
        {
            return SyncError::OverLimit(over.0);
        }
        match e.kind() {
            WouldBlock | TimedOut => SyncError::Timeout,
            UnexpectedEof | BrokenPipe | ConnectionReset | ConnectionAborted => {
                SyncError::Disconnected
            }
            _ => SyncError::Io(e),
        }
    }

    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            SyncError::Protocol(_) | SyncError::Refused(_) => Fault::ProtocolViolation,
            SyncError::Timeout
            | SyncError::Busy(_)
            | SyncError::OverLimit(_)
            | SyncError::Disconnected
            | SyncError::Io(_) => Fault::Io,
            SyncError::Misuse(_) | SyncError::ReadOnly => Fault::CallerMisuse,
            SyncError::Ledger(e) => e.fault(),
        }
    }
}

/// Session settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SyncOptions {
    /// Directions to move events in.
    pub direction: Direction,
    /// How long the peer may stay silent, or leave our bytes untaken. Enforced by the
    /// stream: [`Duplex::timed`] for pipes, socket timeouts for TCP
    /// ([`SyncOptions::apply_to`]).
    pub timeout: Duration,
    /// How long the whole session may last. Checked before every read and write, so a
    /// session ends at most one `timeout` after it, however slowly the peer trickles bytes.
    pub session_limit: Duration,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            direction: Direction::Both,
            timeout: Duration::from_secs(SYNC_TIMEOUT_SECS),
            session_limit: Duration::from_secs(SYNC_SESSION_LIMIT_SECS),
        }
    }
}

impl SyncOptions {
    /// Sets read and write timeouts on a TCP stream.
    pub fn apply_to(&self, stream: &std::net::TcpStream) -> std::io::Result<()> {
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        stream.set_nodelay(true)
    }
}
