//! The answering side of a session ([`Ledger::serve_session`]).

use std::io::{Read, Write};
use std::time::Duration;

use crate::ledger::{Ledger, Pipeline};
use crate::limits::{MAX_SYNC_ROUNDS, SYNC_SESSION_LIMIT_SECS};

use super::budget::MemoryBudget;
use super::frame::Frame;
use super::lanes::{AtOnce, InTurn, Lanes, OneStream};
use super::stream::{unexpected, Mark, Wire};
use super::{Duplex, SyncError, SyncReport};

/// What the server expects next.
#[derive(PartialEq, Eq)]
enum Phase {
    Hello,
    Requests,
    /// Inside a pushed stream of events.
    Receiving,
}

impl Ledger {
    /// Answers one client session on `stream` until the client says bye or the stream
    /// ends (a clean end between requests is not an error). Pushed events go through normal
    /// admission batch by batch. A protocol violation is told to the peer before returning.
    /// The session may last [`SYNC_SESSION_LIMIT_SECS`]; [`Ledger::serve_session_within`]
    /// sets another limit.
    pub fn serve_session<S: Read + Write>(&self, stream: &mut S) -> Result<SyncReport, SyncError> {
        self.serve_session_within(stream, Duration::from_secs(SYNC_SESSION_LIMIT_SECS))
    }

    /// [`Ledger::serve_session`] with a time limit for the whole session (see
    /// [`SyncOptions::session_limit`](super::SyncOptions::session_limit)).
    pub fn serve_session_within<S: Read + Write>(
        &self,
        stream: &mut S,
        limit: Duration,
    ) -> Result<SyncReport, SyncError> {
        self.serve_session_sharing(stream, limit, &MemoryBudget::new(0))
    }

    /// [`Ledger::serve_session_within`], holding what the peer sends within `budget`, which
    /// a server shares between all its sessions (see [`MemoryBudget`]; `serve` gives its
    /// sessions [`MAX_SYNC_HELD_BYTES`](crate::limits::MAX_SYNC_HELD_BYTES)). A session
    /// that gets no room within the timeout ends with [`SyncError::Busy`], told to the peer.
    pub fn serve_session_sharing<S: Read + Write>(
        &self,
        stream: &mut S,
        limit: Duration,
        budget: &MemoryBudget,
    ) -> Result<SyncReport, SyncError> {
        self.answer_session(stream, limit, budget, false)
    }

    /// [`Ledger::serve_session_within`] for a read-only server: the peer may pull, and a
    /// peer that pushes events is refused ([`SyncError::ReadOnly`], told to the peer) with
    /// nothing it sent admitted.
    pub fn serve_session_read_only<S: Read + Write>(
        &self,
        stream: &mut S,
        limit: Duration,
    ) -> Result<SyncReport, SyncError> {
        self.answer_session(stream, limit, &MemoryBudget::new(0), true)
    }

    /// [`Ledger::serve_session_within`] (or, when `read_only`,
    /// [`Ledger::serve_session_read_only`]) over a stream whose two ends are apart: what the
    /// peer pulls goes out from a thread of its own while what it pushes beside is read and
    /// admitted (see [`Ledger::sync_duplex`]). Any client is answered, frame for frame as
    /// by [`Ledger::serve_session`].
    pub fn serve_duplex<R: Read + Send, W: Write + Send>(
        &self,
        stream: Duplex<R, W>,
        limit: Duration,
        read_only: bool,
    ) -> Result<SyncReport, SyncError> {
        self.answer_duplex(stream, limit, &MemoryBudget::new(0), read_only)
    }

    /// One session in turn on one stream; when `read_only`, a peer that pushes events is
    /// refused ([`SyncError::ReadOnly`], told to the peer) and nothing it sent is admitted.
    fn answer_session<S: Read + Write>(
        &self,
        stream: &mut S,
        limit: Duration,
        budget: &MemoryBudget,
        read_only: bool,
    ) -> Result<SyncReport, SyncError> {
        let one = OneStream::new(stream);
        Wire::new(&one, &one, limit, budget.clone(), InTurn)
            .run(|wire| answer(self, wire, read_only))
    }

    /// [`Ledger::answer_session`] with the stream's ends apart, both directions at once.
    pub(super) fn answer_duplex<R: Read + Send, W: Write + Send>(
        &self,
        stream: Duplex<R, W>,
        limit: Duration,
        budget: &MemoryBudget,
        read_only: bool,
    ) -> Result<SyncReport, SyncError> {
        std::thread::scope(|scope| {
            let wire = Wire::new(
                stream.reader,
                stream.writer,
                limit,
                budget.clone(),
                AtOnce(scope),
            );
            wire.run(|wire| answer(self, wire, read_only))
        })
    }
}

fn answer<'scope, R: Read, W: Write, L: Lanes<'scope, W>>(
    ledger: &'scope Ledger,
    wire: &mut Wire<'scope, R, W, L>,
    read_only: bool,
) -> Result<(), SyncError> {
    // The pushed stream's batches, admitted as an import's are until its `Done`; a session
    // that fails mid-stream still commits the batch that arrived whole.
    let mut receiving: Option<Pipeline<'_>> = None;
    let result = answer_frames(ledger, wire, &mut receiving, read_only);
    match (result, receiving) {
        (Err(failure), Some(pipeline)) => Err(wire.rx.fail_after(ledger, pipeline, failure)),
        (result, _) => result,
    }
}

fn answer_frames<'scope, R: Read, W: Write, L: Lanes<'scope, W>>(
    ledger: &'scope Ledger,
    wire: &mut Wire<'scope, R, W, L>,
    receiving: &mut Option<Pipeline<'scope>>,
    read_only: bool,
) -> Result<(), SyncError> {
    let mut phase = Phase::Hello;
    let mut pushed_from = 0u64;
    // The ledger's size and the session's admissions when the pushed stream began.
    let mut pushed_at = Mark::default();
    let mut have_rounds = 0usize;
    // While a pushed stream is admitted, index writes are gathered as an import's are.
    let mut bulk = None;
    loop {
        let Some(frame) = wire.rx.recv_holding(0, Some((ledger, &mut *receiving)))? else {
            return match phase {
                Phase::Receiving => Err(SyncError::Disconnected),
                _ => Ok(()),
            };
        };
        match (&phase, frame) {
            (Phase::Hello, Frame::Hello(_)) => {
                wire.send(&Frame::Hello(ledger.heads()))?;
                phase = Phase::Requests;
            }
            (Phase::Requests, Frame::Have(ids)) => {
                have_rounds += 1;
                if have_rounds > MAX_SYNC_ROUNDS {
                    return Err(SyncError::Protocol(format!(
                        "the peer asked more than {MAX_SYNC_ROUNDS} have queries in one session"
                    )));
                }
                let bits = ids.iter().map(|id| ledger.contains(id)).collect();
                wire.send(&Frame::Known(bits))?;
            }
            (Phase::Requests, Frame::Pull(common)) => {
                // Ids not held here are not common (a pushed event may be pending here).
                let common: Vec<_> = common
                    .into_iter()
                    .filter(|id| ledger.contains(id))
                    .collect();
                let missing = ledger.difference_in_admission_order(&ledger.heads(), &common)?;
                // Beside the reading when the stream's ends are apart: the client may push
                // while it pulls. Whatever is written next waits for this stream's end.
                wire.send_events_beside(ledger, missing)?;
            }
            (Phase::Requests, Frame::Events(_)) if read_only => return Err(SyncError::ReadOnly),
            (Phase::Requests, Frame::Events(events)) => {
                pushed_from = wire.rx.report.received;
                pushed_at = wire.rx.mark(ledger);
                bulk = Some(ledger.bulk_append());
                let pipeline = receiving.insert(ledger.stream_pipeline());
                wire.rx.admit(ledger, pipeline, events)?;
                phase = Phase::Receiving;
            }
            (Phase::Receiving, Frame::Events(events)) => {
                let pipeline = receiving.get_or_insert_with(|| ledger.stream_pipeline());
                wire.rx.admit(ledger, pipeline, events)?;
            }
            (Phase::Receiving | Phase::Requests, Frame::Done(n)) => {
                if let Some(pipeline) = receiving.take() {
                    wire.rx.admit_rest(ledger, pipeline)?;
                }
                if let Some(bulk) = bulk.take() {
                    bulk.end()?;
                }
                let got = wire.rx.report.received - pushed_from;
                if phase == Phase::Requests && n != 0 || phase == Phase::Receiving && n != got {
                    return Err(SyncError::Protocol(format!(
                        "the peer announced {n} events but sent {got}"
                    )));
                }
                // Events admitted beyond those pushed: pending events the push released,
                // which the client may pull next.
                let released = wire.rx.grown_beyond(ledger, pushed_at);
                // What the stream held that admission refused, by index in the stream: the
                // pusher must not count them as delivered.
                let refused: Vec<_> = std::mem::take(&mut wire.rx.refused)
                    .into_iter()
                    .map(|(at, code, why)| (at.saturating_sub(pushed_from), code, why))
                    .collect();
                if !refused.is_empty() {
                    wire.send(&Frame::Refused(refused))?;
                }
                wire.send(&Frame::Done(if got == 0 { 0 } else { released }))?;
                pushed_from = wire.rx.report.received;
                phase = Phase::Requests;
            }
            (Phase::Requests, Frame::Bye) => return Ok(()),
            (Phase::Hello, other) => return Err(unexpected(&other, "hello")),
            (Phase::Receiving, other) => return Err(unexpected(&other, "events or done")),
            (Phase::Requests, other) => {
                return Err(unexpected(&other, "have, pull, events or bye"))
            }
        }
    }
}
