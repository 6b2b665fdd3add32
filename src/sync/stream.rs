//! One side's end of a session: frames in and out with byte counts, and the two event
//! streams (sending what the peer lacks in causal order, admitting what arrives). The
//! reading half ([`Inbound`]) and the writing half ([`Outbound`]) are apart, so that a
//! stream of events can go out on a thread of its own while the session reads
//! ([`super::lanes`]).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::id::EventId;
use crate::ledger::{Appended, Ledger, OutcomeCounts, Pipeline};
use crate::limits::{
    MAX_SYNC_REJECTED, SYNC_BATCH_BYTES, SYNC_BATCH_EVENTS, SYNC_FREE_FRAME_BYTES,
    SYNC_TIMEOUT_SECS,
};

use super::budget::{MemoryBudget, Room};
use super::frame::{read_header, read_payload, write_frame, Events, EventsFrame, Frame};
use super::lanes::{Job, Lanes, Outgoing};
use super::{SyncError, SyncReport};

/// The session's stream, which refuses to read or write once the session's time limit has
/// passed: with the stream's own per-read and per-write timeouts, a session lasts at most
/// its limit plus one timeout, however slowly a peer trickles bytes.
pub(super) struct Limited<S> {
    inner: S,
    until: Instant,
    limit: Duration,
}

/// The error a [`Limited`] stream fails with past its limit.
#[derive(Debug)]
pub(super) struct OverLimit(pub Duration);

impl std::fmt::Display for OverLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the session ran past its {} s limit", self.0.as_secs())
    }
}

impl std::error::Error for OverLimit {}

impl<S> Limited<S> {
    fn check(&self) -> io::Result<()> {
        if Instant::now() >= self.until {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                OverLimit(self.limit),
            ));
        }
        Ok(())
    }
}

impl<S: Read> Read for Limited<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.check()?;
        self.inner.read(buf)
    }
}

impl<S: Write> Write for Limited<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.check()?;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        self.inner.flush()
    }
}

/// The reading half of a session, with what it received and admitted.
pub(super) struct Inbound<R> {
    stream: Limited<R>,
    /// What arrived so far (and, on the client, the rounds and the peer's refusals).
    pub report: SyncReport,
    /// Ids of the events the peer sent (so it holds them), in arrival order.
    pub received_ids: Vec<EventId>,
    /// Events received whose outcomes are counted.
    committed: u64,
    /// The received events admission refused, not yet told to the peer: index among the
    /// events received this session, PROFILE code, why.
    pub refused: Vec<(u64, String, String)>,
    /// Where the room for received frames comes from.
    budget: MemoryBudget,
    /// The room of the last frame read, until it is admitted or the next frame is read.
    last_room: Option<Room>,
    /// The room of each batch admission holds, oldest first (`None`: a small batch).
    held: VecDeque<Option<Room>>,
}

/// The ledger's size and a session's admissions at one moment ([`Inbound::mark`]), to tell
/// later how many events became admitted beyond those the session received.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    len: usize,
    admitted: u64,
}

/// The writing half of a session, with what it sent.
pub(super) struct Outbound<W> {
    stream: Limited<W>,
    /// What was sent so far.
    pub report: SyncReport,
    /// Set when the session fails: a stream of events going out stops at its next frame.
    stop: Arc<AtomicBool>,
}

/// Both halves of a session. The writing half may be away, sending a stream of events
/// beside the reading half ([`Lanes`]); anything else written waits for that stream's end.
pub(super) struct Wire<'scope, R, W, L> {
    /// The reading half.
    pub rx: Inbound<R>,
    tx: Outgoing<'scope, W>,
    lanes: L,
    stop: Arc<AtomicBool>,
}

impl<'scope, R: Read, W: Write, L: Lanes<'scope, W>> Wire<'scope, R, W, L> {
    /// A session reading `reader` and writing `writer` (the two ends of one stream) that
    /// may last `limit` (the time starts now), holding what it receives within `budget`.
    pub fn new(reader: R, writer: W, limit: Duration, budget: MemoryBudget, lanes: L) -> Self {
        let until = Instant::now() + limit;
        let stop = Arc::new(AtomicBool::new(false));
        Wire {
            rx: Inbound {
                stream: Limited {
                    inner: reader,
                    until,
                    limit,
                },
                report: SyncReport::default(),
                received_ids: Vec::new(),
                committed: 0,
                refused: Vec::new(),
                budget,
                last_room: None,
                held: VecDeque::new(),
            },
            tx: Outgoing::Here(Outbound {
                stream: Limited {
                    inner: writer,
                    until,
                    limit,
                },
                report: SyncReport::default(),
                stop: Arc::clone(&stop),
            }),
            lanes,
            stop,
        }
    }

    /// Whether a stream of events goes out while this session reads.
    pub fn at_once(&self) -> bool {
        L::AT_ONCE
    }

    /// The writing half, once a stream of events it was sending has ended (its failure is
    /// this call's).
    fn tx(&mut self) -> Result<&mut Outbound<W>, SyncError> {
        self.tx.here()
    }

    pub fn send(&mut self, frame: &Frame) -> Result<(), SyncError> {
        self.tx()?.send(frame)
    }

    /// [`Outbound::send_events`] beside this session's reading when the lanes allow (the
    /// stream's end, or its failure, is seen by the next write or [`Wire::sent`]); else
    /// now, its failure this call's.
    pub fn send_events_beside(
        &mut self,
        ledger: &'scope Ledger,
        missing: Vec<EventId>,
    ) -> Result<(), SyncError> {
        self.tx()?;
        let Outgoing::Here(tx) = std::mem::replace(&mut self.tx, Outgoing::Lost) else {
            return Err(SyncError::Misuse("the writing half is away".into()));
        };
        self.tx = self.lanes.send(
            tx,
            Job {
                ledger,
                ids: missing,
            },
        );
        match self.at_once() {
            true => Ok(()),
            false => self.sent(),
        }
    }

    /// Waits for a stream of events started by [`Wire::send_events_beside`] to end.
    pub fn sent(&mut self) -> Result<(), SyncError> {
        self.tx().map(|_| ())
    }

    /// [`Outbound::send_events`], now.
    pub fn send_events(&mut self, ledger: &Ledger, missing: &[EventId]) -> Result<(), SyncError> {
        self.tx()?.send_events(ledger, missing)
    }

    /// The next frame, or `None` at a clean end of stream. A peer's `Error` frame becomes
    /// [`SyncError::Refused`].
    pub fn recv_or_end(&mut self, expected_bits: usize) -> Result<Option<Frame>, SyncError> {
        self.rx.recv_holding(expected_bits, None)
    }

    /// The next frame; the stream ending here is a disconnect.
    pub fn recv(&mut self, expected_bits: usize) -> Result<Frame, SyncError> {
        self.recv_or_end(expected_bits)?
            .ok_or(SyncError::Disconnected)
    }

    /// Tells the peer why this side stops (best effort: the peer may be gone), once a stream
    /// of events going out has stopped.
    fn refuse(&mut self, error: &SyncError) {
        self.stop.store(true, Ordering::SeqCst);
        let told = matches!(
            error,
            SyncError::Protocol(_)
                | SyncError::Misuse(_)
                | SyncError::Busy(_)
                | SyncError::ReadOnly
        );
        if let (true, Ok(tx)) = (told, self.tx.here_after_stop()) {
            let _ = write_frame(&mut tx.stream, &Frame::Error(error.to_string()));
        }
    }

    /// Runs a session's `exchange` on this wire, then ends the session ([`Wire::end`]).
    pub fn run(
        mut self,
        exchange: impl FnOnce(&mut Self) -> Result<(), SyncError>,
    ) -> Result<SyncReport, SyncError> {
        let ran = exchange(&mut self);
        self.end(ran)
    }

    /// Ends a session: waits for a stream of events still going out (its failure is the
    /// session's, told to the peer), and returns what both halves moved, or why `ended`
    /// or that stream failed (told to the peer).
    fn end(mut self, ended: Result<(), SyncError>) -> Result<SyncReport, SyncError> {
        if let Err(e) = ended.and_then(|()| self.sent()) {
            self.refuse(&e);
            return Err(e);
        }
        let mut report = std::mem::take(&mut self.rx.report);
        if let Ok(tx) = self.tx.here() {
            report.add(&tx.report);
        }
        Ok(report)
    }
}

impl<W: Write> Outbound<W> {
    pub fn send(&mut self, frame: &Frame) -> Result<(), SyncError> {
        self.report.bytes_sent += write_frame(&mut self.stream, frame)?;
        Ok(())
    }

    /// Sends the events `missing` (ids held here, in admission order: a causal order, see
    /// [`Ledger::difference_in_admission_order`]), in batches, then `Done(count)`. Their
    /// bytes go as stored, not re-parsed: read from the log (neighbours together) straight into
    /// their frame.
    pub fn send_events(&mut self, ledger: &Ledger, missing: &[EventId]) -> Result<(), SyncError> {
        let mut frame = EventsFrame::default();
        let mut sent = 0u64;
        let at = ledger.stored_at(missing)?;
        ledger.read_stored_each(&at, |event| {
            if !frame.is_empty()
                && (frame.len() >= SYNC_BATCH_EVENTS
                    || frame.payload_len() + event.len() > SYNC_BATCH_BYTES)
            {
                self.write_events(&mut frame)?;
            }
            sent += 1;
            self.report.event_bytes += event.len() as u64;
            frame.push(event);
            Ok::<(), SyncError>(())
        })?;
        if !frame.is_empty() {
            self.write_events(&mut frame)?;
        }
        self.report.sent += sent;
        self.send(&Frame::Done(sent))
    }

    /// Writes `frame` (emptying it), unless the session has stopped.
    fn write_events(&mut self, frame: &mut EventsFrame) -> Result<(), SyncError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(SyncError::Misuse("the session stopped".into()));
        }
        self.report.bytes_sent += frame.write(&mut self.stream)?;
        Ok(())
    }
}

impl<R: Read> Inbound<R> {
    /// The ledger's size and this session's admissions now.
    pub fn mark(&self, ledger: &Ledger) -> Mark {
        Mark {
            len: ledger.len(),
            admitted: self.report.admitted,
        }
    }

    /// Events admitted here since `mark` beyond those this session received and admitted:
    /// pending events they released, or another writer's.
    pub fn grown_beyond(&self, ledger: &Ledger, mark: Mark) -> u64 {
        let grown = ledger.len().saturating_sub(mark.len) as u64;
        grown.saturating_sub(self.report.admitted - mark.admitted)
    }

    /// The next frame, or `None` at a clean end of stream, while `receiving` may hold a
    /// batch: when the budget has no room for the next frame, that batch is committed first
    /// (giving its room back), so that this session holds nothing while it waits for room.
    /// A peer's `Error` frame becomes [`SyncError::Refused`].
    pub fn recv_holding<'l>(
        &mut self,
        expected_bits: usize,
        receiving: Option<(&'l Ledger, &mut Option<Pipeline<'l>>)>,
    ) -> Result<Option<Frame>, SyncError> {
        self.last_room = None;
        let Some(header) = read_header(&mut self.stream)? else {
            return Ok(None);
        };
        if header.len > SYNC_FREE_FRAME_BYTES {
            // While read and decoded, a frame takes up to twice its size (its payload, and
            // what a query decodes into); then its own (events stay in it until admitted).
            let reading = 2 * header.len as u64;
            let room = match self.budget.try_reserve(reading) {
                Some(room) => room,
                None => {
                    if let Some((ledger, pipeline)) = receiving {
                        if let Some(held) = pipeline.take() {
                            self.admit_rest(ledger, held)?;
                            *pipeline = Some(ledger.stream_pipeline());
                        }
                    }
                    self.budget
                        .reserve_within(reading, Duration::from_secs(SYNC_TIMEOUT_SECS))
                        .ok_or_else(|| {
                            SyncError::Busy(format!(
                                "no room for a {}-byte frame: the {}-byte budget of received frames is held by other sessions",
                                header.len,
                                self.budget.total()
                            ))
                        })?
                }
            };
            self.last_room = Some(room);
        }
        let (frame, bytes) = read_payload(&mut self.stream, header, expected_bits)?;
        if let Some(room) = &mut self.last_room {
            room.shrink_to(header.len as u64);
        }
        self.report.bytes_received += bytes;
        match frame {
            Frame::Error(text) => Err(SyncError::Refused(text)),
            frame => Ok(Some(frame)),
        }
    }
    /// Starts admitting one received batch through `pipeline` (verified while the batch
    /// before it commits); counts the outcomes of the batch that commit completed.
    pub fn admit(
        &mut self,
        ledger: &Ledger,
        pipeline: &mut Pipeline<'_>,
        events: Events,
    ) -> Result<(), SyncError> {
        self.report.received += events.len() as u64;
        self.report.event_bytes += events.bytes() as u64;
        self.held.push_back(self.last_room.take());
        let (payload, spans) = events.into_parts();
        match pipeline.push_spans(payload, spans)? {
            Some(report) => self.count(ledger, report.outcomes),
            None => Ok(()),
        }
    }

    /// Commits every batch `pipeline` still holds and counts their outcomes.
    pub fn admit_rest(&mut self, ledger: &Ledger, pipeline: Pipeline<'_>) -> Result<(), SyncError> {
        let mut counted = Ok(());
        for report in pipeline.finish_all()? {
            if counted.is_ok() {
                counted = self.count(ledger, report.outcomes);
            }
        }
        // Every batch is committed: no room is held for one.
        self.held.clear();
        counted
    }

    /// Counts a committed batch's outcomes. Too many rejected events, or more duplicates
    /// than this ledger holds, in one session is a flood.
    fn count(&mut self, ledger: &Ledger, outcomes: Vec<Appended>) -> Result<(), SyncError> {
        // The batch committed: its room goes back.
        self.held.pop_front();
        let counts = OutcomeCounts::of(&outcomes);
        self.report.admitted += counts.admitted;
        self.report.duplicates += counts.duplicates;
        self.report.pending += counts.pending;
        self.report.rejected += counts.rejected;
        for outcome in outcomes {
            match outcome {
                Appended::Admitted(id) | Appended::Duplicate(id) | Appended::Pending { id, .. } => {
                    self.received_ids.push(id);
                }
                Appended::Rejected { rejection, .. } => {
                    if self.refused.len() < MAX_SYNC_REJECTED {
                        self.refused.push((
                            self.committed,
                            rejection.code().to_string(),
                            rejection.message().to_string(),
                        ));
                    }
                }
            }
            self.committed += 1;
        }
        if self.report.rejected > MAX_SYNC_REJECTED as u64 {
            return Err(SyncError::Protocol(format!(
                "the peer sent {} events that admission rejected, over the {MAX_SYNC_REJECTED}-event limit of one session",
                self.report.rejected
            )));
        }
        // Each event can arrive as a duplicate at most once per session unless the peer
        // repeats itself.
        if self.report.duplicates > ledger.len() as u64 {
            return Err(SyncError::Protocol(format!(
                "the peer sent {} events this ledger already holds, more than it holds: it repeats itself",
                self.report.duplicates
            )));
        }
        Ok(())
    }

    /// Receives a stream of `Events` up to its `Done`, admitting the batches as an import
    /// does ([`Ledger::stream_pipeline`]: later batches verified while one commits; index
    /// writes gathered until the stream ends).
    pub fn receive_events(&mut self, ledger: &Ledger) -> Result<(), SyncError> {
        let before = self.report.received;
        // Index writes gathered, as an import's are, until the stream ends.
        let bulk = ledger.bulk_append();
        let mut receiving = Some(ledger.stream_pipeline());
        let failure = loop {
            let step = match self.recv_holding(0, Some((ledger, &mut receiving))) {
                Ok(Some(Frame::Events(events))) => {
                    let pipeline = receiving.get_or_insert_with(|| ledger.stream_pipeline());
                    self.admit(ledger, pipeline, events)
                }
                Ok(Some(Frame::Done(n))) if n == self.report.received - before => {
                    if let Some(pipeline) = receiving {
                        self.admit_rest(ledger, pipeline)?;
                    }
                    return Ok(bulk.end()?);
                }
                Ok(Some(Frame::Done(n))) => Err(SyncError::Protocol(format!(
                    "the peer announced {n} events but sent {}",
                    self.report.received - before
                ))),
                Ok(Some(other)) => Err(unexpected(&other, "events or done")),
                Ok(None) => Err(SyncError::Disconnected),
                Err(e) => Err(e),
            };
            if let Err(e) = step {
                break e;
            }
        };
        match receiving {
            Some(pipeline) => Err(self.fail_after(ledger, pipeline, failure)),
            None => Err(failure),
        }
    }

    /// The error a receiving session ends with, once the batch `pipeline` still holds (whole,
    /// and verified) is committed: what arrived whole is kept, and a flood it reveals is
    /// the error to report.
    pub fn fail_after(
        &mut self,
        ledger: &Ledger,
        pipeline: Pipeline<'_>,
        failure: SyncError,
    ) -> SyncError {
        match self.admit_rest(ledger, pipeline) {
            Err(flood @ SyncError::Protocol(_)) => flood,
            _ => failure,
        }
    }
}

/// A frame that does not belong here.
pub(super) fn unexpected(frame: &Frame, wanted: &str) -> SyncError {
    SyncError::Protocol(format!("expected {wanted}, got a {} frame", frame.name()))
}
