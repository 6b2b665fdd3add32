//! One side's end of a session: frames in and out with byte counts, and the two event
//! streams (sending what the peer lacks in causal order, admitting what arrives).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use crate::id::EventId;
use crate::ledger::{Appended, Ledger, OutcomeCounts, Pipeline};
use crate::limits::{
    MAX_SYNC_REJECTED, SYNC_BATCH_BYTES, SYNC_BATCH_EVENTS, SYNC_FREE_FRAME_BYTES,
    SYNC_TIMEOUT_SECS,
};

use super::budget::{MemoryBudget, Room};
use super::frame::{read_header, read_payload, write_frame, Events, EventsFrame, Frame};
use super::{SyncError, SyncReport};

/// The session's stream, which refuses to read or write once the session's time limit has
/// passed: with the stream's own per-read and per-write timeouts, a session lasts at most
/// its limit plus one timeout, however slowly a peer trickles bytes.
pub(super) struct Limited<'s, S> {
    inner: &'s mut S,
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

impl<S> Limited<'_, S> {
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

impl<S: Read> Read for Limited<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.check()?;
        self.inner.read(buf)
    }
}

impl<S: Write> Write for Limited<'_, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.check()?;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        self.inner.flush()
    }
}

/// A stream with the session's counters.
pub(super) struct Wire<'s, S: Read + Write> {
    stream: Limited<'s, S>,
    /// What moved so far.
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

impl<'s, S: Read + Write> Wire<'s, S> {
    /// A session on `stream` that may last `limit` (the time starts now), holding what it
    /// receives within `budget`.
    pub fn new(stream: &'s mut S, limit: Duration, budget: MemoryBudget) -> Self {
        Wire {
            stream: Limited {
                inner: stream,
                until: Instant::now() + limit,
                limit,
            },
            report: SyncReport::default(),
            received_ids: Vec::new(),
            committed: 0,
            refused: Vec::new(),
            budget,
            last_room: None,
            held: VecDeque::new(),
        }
    }

    pub fn send(&mut self, frame: &Frame) -> Result<(), SyncError> {
        self.report.bytes_sent += write_frame(&mut self.stream, frame)?;
        Ok(())
    }

    /// The next frame, or `None` at a clean end of stream. A peer's `Error` frame becomes
    /// [`SyncError::Refused`].
    pub fn recv_or_end(&mut self, expected_bits: usize) -> Result<Option<Frame>, SyncError> {
        self.recv_holding(expected_bits, None)
    }

    /// [`Wire::recv_or_end`] while `receiving` may hold a batch: when the budget has no room
    /// for the next frame, that batch is committed first (giving its room back), so that
    /// this session holds nothing while it waits for room.
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
            // While read, a frame takes up to twice its size (its buffer grows by doubling
            // as bytes arrive); then its own (events stay in it until admitted).
            let reading = 2 * header.len as u64;
            let room = match self.budget.try_reserve(reading) {
                Some(room) => room,
                None => {
                    if let Some((ledger, pipeline)) = receiving {
                        if let Some(held) = pipeline.take() {
                            self.admit_rest(ledger, held)?;
                            *pipeline = Some(ledger.pipeline());
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

    /// The next frame; the stream ending here is a disconnect.
    pub fn recv(&mut self, expected_bits: usize) -> Result<Frame, SyncError> {
        self.recv_or_end(expected_bits)?
            .ok_or(SyncError::Disconnected)
    }

    /// Tells the peer why this side stops (best effort: the peer may be gone).
    pub fn refuse(&mut self, error: &SyncError) {
        if matches!(
            error,
            SyncError::Protocol(_)
                | SyncError::Misuse(_)
                | SyncError::Busy(_)
                | SyncError::ReadOnly
        ) {
            let _ = write_frame(&mut self.stream, &Frame::Error(error.to_string()));
        }
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
                self.report.bytes_sent += std::mem::take(&mut frame).write(&mut self.stream)?;
            }
            sent += 1;
            self.report.event_bytes += event.len() as u64;
            frame.push(event);
            Ok::<(), SyncError>(())
        })?;
        if !frame.is_empty() {
            self.report.bytes_sent += frame.write(&mut self.stream)?;
        }
        self.report.sent += sent;
        self.send(&Frame::Done(sent))
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

    /// Commits the last batch `pipeline` holds and counts its outcomes.
    pub fn admit_rest(&mut self, ledger: &Ledger, pipeline: Pipeline<'_>) -> Result<(), SyncError> {
        let counted = match pipeline.finish()? {
            Some(outcomes) => self.count(ledger, outcomes),
            None => Ok(()),
        };
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

    /// Receives a stream of `Events` up to its `Done`, admitting the batches two stages
    /// deep (one verified while the one before it commits).
    pub fn receive_events(&mut self, ledger: &Ledger) -> Result<(), SyncError> {
        let before = self.report.received;
        let mut receiving = Some(ledger.pipeline());
        let failure = loop {
            let step = match self.recv_holding(0, Some((ledger, &mut receiving))) {
                Ok(Some(Frame::Events(events))) => {
                    let pipeline = receiving.get_or_insert_with(|| ledger.pipeline());
                    self.admit(ledger, pipeline, events)
                }
                Ok(Some(Frame::Done(n))) if n == self.report.received - before => {
                    return match receiving {
                        Some(pipeline) => self.admit_rest(ledger, pipeline),
                        None => Ok(()),
                    };
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
