//! How a session's two directions run: in turn on one thread, or at once on two.
//!
//! A stream that is one object ([`Ledger::sync`], [`Ledger::serve_session`]) is read and
//! written by one thread, so a session sends a stream of events and then reads on
//! ([`InTurn`], over a [`OneStream`]). A stream whose reader and writer are apart (a TCP
//! socket, a pipe pair: [`Ledger::sync_duplex`], [`Ledger::serve_duplex`]) sends its
//! stream of events from a thread of its own while the session goes on reading and
//! admitting ([`AtOnce`]): a pull and a push then move together, each side verifying what
//! it receives while it sends.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::thread::{Scope, ScopedJoinHandle};

use crate::id::EventId;
use crate::ledger::Ledger;

use super::stream::Outbound;
use super::SyncError;

/// Runs a stream of events on a session's writing half.
pub(super) trait Lanes<'scope, W> {
    /// Whether a stream of events goes out while the session reads.
    const AT_ONCE: bool;

    /// Sends `job` on `tx`: beside the caller, or now.
    fn send(&self, tx: Outbound<W>, job: Job<'scope>) -> Outgoing<'scope, W>;
}

/// A stream of events to send ([`Outbound::send_events`]): the ledger holding them, and
/// their ids in a causal order.
pub(super) struct Job<'scope> {
    pub(super) ledger: &'scope Ledger,
    pub(super) ids: Vec<EventId>,
}

impl Job<'_> {
    fn run<W: Write>(self, mut tx: Outbound<W>) -> (Outbound<W>, Result<(), SyncError>) {
        let sent = tx.send_events(self.ledger, &self.ids);
        (tx, sent)
    }
}

/// One thread: the stream of events is sent before the call returns.
pub(super) struct InTurn;

impl<'scope, W: Write> Lanes<'scope, W> for InTurn {
    const AT_ONCE: bool = false;

    fn send(&self, tx: Outbound<W>, job: Job<'scope>) -> Outgoing<'scope, W> {
        let (tx, sent) = job.run(tx);
        Outgoing::Ended(tx, sent)
    }
}

/// Two threads: the stream of events goes out from a thread of `scope`.
pub(super) struct AtOnce<'scope, 'env>(pub &'scope Scope<'scope, 'env>);

impl<'scope, W: Write + Send + 'scope> Lanes<'scope, W> for AtOnce<'scope, '_> {
    const AT_ONCE: bool = true;

    fn send(&self, tx: Outbound<W>, job: Job<'scope>) -> Outgoing<'scope, W> {
        Outgoing::Sending(self.0.spawn(move || job.run(tx)))
    }
}

/// Where a session's writing half is.
pub(super) enum Outgoing<'scope, W> {
    /// Here, free.
    Here(Outbound<W>),
    /// Back from a stream of events, with how it ended.
    Ended(Outbound<W>, Result<(), SyncError>),
    /// Away, sending a stream of events.
    Sending(ScopedJoinHandle<'scope, (Outbound<W>, Result<(), SyncError>)>),
    /// Lost with a sending thread that panicked.
    Lost,
}

impl<W> Outgoing<'_, W> {
    /// The writing half, waiting for a stream of events to end; that stream's failure is
    /// returned once (the half stays, for an error frame).
    pub(super) fn here(&mut self) -> Result<&mut Outbound<W>, SyncError> {
        let (tx, ended) = match std::mem::replace(self, Outgoing::Lost) {
            Outgoing::Here(tx) => (tx, Ok(())),
            Outgoing::Ended(tx, ended) => (tx, ended),
            Outgoing::Sending(handle) => handle.join().map_err(|_| lost())?,
            Outgoing::Lost => return Err(lost()),
        };
        *self = Outgoing::Here(tx);
        ended?;
        match self {
            Outgoing::Here(tx) => Ok(tx),
            _ => Err(lost()),
        }
    }

    /// The writing half whatever became of a stream of events (the session is failing).
    pub(super) fn here_after_stop(&mut self) -> Result<&mut Outbound<W>, SyncError> {
        let _ = self.here();
        self.here()
    }
}

fn lost() -> SyncError {
    SyncError::Io(io::Error::other("the thread sending events stopped"))
}

/// One stream read and written in turn by one thread, lent as both halves of a session.
pub(super) struct OneStream<'s, S>(RefCell<&'s mut S>);

impl<'s, S> OneStream<'s, S> {
    pub(super) fn new(stream: &'s mut S) -> Self {
        OneStream(RefCell::new(stream))
    }

    fn with<T>(&self, f: impl FnOnce(&mut S) -> io::Result<T>) -> io::Result<T> {
        let mut stream = self
            .0
            .try_borrow_mut()
            .map_err(|_| io::Error::other("the stream is in use"))?;
        f(&mut stream)
    }
}

impl<S: Read> Read for &OneStream<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.with(|s| s.read(buf))
    }
}

impl<S: Write> Write for &OneStream<'_, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|s| s.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(|s| s.flush())
    }
}
