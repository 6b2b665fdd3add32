//! [`Replicator`]: publish what is new, consume what the stream holds, in rounds.

use std::collections::{HashSet, VecDeque};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::limits::{
    CONSUME_AHEAD, MAX_REPLICATE_ECHO_IDS, MESSAGE_HEADER_ALLOWANCE, REPLICATE_BACKOFF_MILLIS,
    REPLICATE_BATCH_BYTES, REPLICATE_BATCH_EVENTS, REPLICATE_POLL_MILLIS,
};
use akledger::id::{EventId, RealmId};
use akledger::ledger::{AppendReport, Appended, BulkAppend, Ledger, OutcomeCounts, Pipeline};

use super::marker::{self, Marker};
use super::message::{decoded, events_of, Packed};
use super::nats::{Delivered, Outgoing, Runtime, Session};
use super::runs::Runs;
use super::subject::{check_stream_name, realm_of, realm_subject};
use super::{ReplicateError, ReplicateOptions, ReplicateReport};

/// Replicates one ledger through one stream. Made by [`Replicator::new`]; the CLI's
/// `akledger replicate` is a thin wrapper around it.
///
/// ```no_run
/// use akledger_replicate::{ReplicateOptions, Replicator};
/// # let ledger = akledger::Ledger::open("books")?;
/// let mut replicator = Replicator::new(&ledger, ReplicateOptions::new("nats://127.0.0.1:4222"))?;
/// let report = replicator.once()?;
/// println!("published {}, admitted {}", report.published, report.admitted);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Replicator<'l> {
    ledger: &'l Ledger,
    options: ReplicateOptions,
    marker_path: PathBuf,
    marker: Marker,
    runtime: Runtime,
    /// Ids consumed from the stream (pending here, or admitted where the position was not
    /// known) and not yet passed by publishing: not published back.
    echo: HashSet<EventId>,
    /// Admission positions of events consumed from the stream: publishing passes over them
    /// without reading them back from the log.
    echo_at: Runs,
    report: ReplicateReport,
}

/// What [`Replicator::follow`] tells its caller while it runs.
#[derive(Debug)]
#[non_exhaustive]
pub enum FollowEvent<'a> {
    /// The stream is consumed to its end (said once after each stretch of consuming, and
    /// once after each connection).
    CaughtUp(&'a ReplicateReport),
    /// The server went away or failed a request; connecting again after `retry_in`.
    Reconnecting {
        /// What failed.
        error: &'a ReplicateError,
        /// The back-off before the next attempt.
        retry_in: Duration,
    },
}

/// A batch being consumed: its events' bytes one after another in one buffer (the workers
/// verify spans of it, the events keeping shares of it rather than copies), and where each
/// one is.
#[derive(Default)]
struct Part {
    buffer: Vec<u8>,
    spans: Vec<Range<usize>>,
}

impl Part {
    /// An empty batch with room for `bytes` of events.
    fn with_room(bytes: usize) -> Part {
        Part {
            buffer: Vec::with_capacity(bytes),
            spans: Vec::with_capacity(REPLICATE_BATCH_EVENTS),
        }
    }

    fn add(&mut self, event: &[u8]) {
        let start = self.buffer.len();
        self.buffer.extend_from_slice(event);
        self.spans.push(start..self.buffer.len());
    }
}

/// Consumed batches waiting in the pipeline: acknowledged once committed.
struct Committing<'l> {
    pipeline: Pipeline<'l>,
    /// One per batch the pipeline holds, oldest first: the message to acknowledge once that
    /// batch is committed (the last message all of whose events it or the batches before
    /// it carry), or none.
    holds: VecDeque<Option<Delivered>>,
}

/// Messages packed for one publishing batch.
struct Batch {
    /// Bytes of one message at most: what the server takes less the headers.
    message_bytes: usize,
    /// Messages closed.
    messages: Vec<Outgoing>,
    /// The message being packed, and its events' realm.
    packing: Option<(RealmId, Packed)>,
    /// Events and bytes of events in both.
    events: usize,
    bytes: usize,
}

impl Batch {
    fn new(max_payload: usize) -> Batch {
        Batch {
            message_bytes: max_payload.saturating_sub(MESSAGE_HEADER_ALLOWANCE),
            messages: Vec::new(),
            packing: None,
            events: 0,
            bytes: 0,
        }
    }

    /// Packs `event` into the message being packed when it is of the same realm and fits,
    /// otherwise into a new one.
    fn add(&mut self, event: &akledger::Event) {
        let realm = realm_of(event);
        let bytes = event.bytes();
        let fits = matches!(&self.packing, Some((r, packed))
            if *r == realm && packed.fits(bytes.len(), self.message_bytes));
        if !fits {
            self.close();
        }
        let (_, packed) = self
            .packing
            .get_or_insert_with(|| (realm, Packed::default()));
        packed.push(event.id(), bytes);
        self.events += 1;
        self.bytes += bytes.len();
    }

    /// Closes the message being packed.
    fn close(&mut self) {
        if let Some((realm, packed)) = self.packing.take() {
            let (id, events) = (packed.message_id(), packed.ids.len() as u64);
            let (payload, encoding) = packed.encoded();
            self.messages.push(Outgoing {
                subject: realm_subject(&realm),
                id,
                events,
                payload,
                encoding,
            });
        }
    }

    /// The messages packed so far, the last one closed; the batch is empty after.
    fn take(&mut self) -> Vec<Outgoing> {
        self.close();
        self.events = 0;
        self.bytes = 0;
        std::mem::take(&mut self.messages)
    }
}

impl<'l> Replicator<'l> {
    /// Prepares to replicate `ledger` (opened writable) as `options` say: reads its marker
    /// for the stream (or makes one: nothing published, a new consumer identity). No
    /// network yet.
    pub fn new(ledger: &'l Ledger, options: ReplicateOptions) -> Result<Self, ReplicateError> {
        check_stream_name(&options.stream).map_err(ReplicateError::Misuse)?;
        if ledger.config().is_read_only() {
            return Err(ReplicateError::Misuse(
                "replicate needs a ledger opened for writing".into(),
            ));
        }
        if ledger.config().is_in_memory() {
            return Err(ReplicateError::Misuse(
                "replicate needs a ledger on disk, to keep its published-so-far marker".into(),
            ));
        }
        let marker_path = marker::path(ledger.config().dir(), &options.stream);
        let instance = marker::Instance::of(ledger.config().dir())?;
        let (marker, renewed) = marker::load_or_new(&marker_path, &options.stream, instance)?;
        let runtime = Runtime::new(options.timeout)?;
        Ok(Replicator {
            ledger,
            options,
            marker_path,
            marker,
            runtime,
            echo: HashSet::new(),
            echo_at: Runs::default(),
            report: ReplicateReport {
                consumer_renewed: renewed,
                ..ReplicateReport::default()
            },
        })
    }

    /// The durable consumer this ledger reads the stream with.
    pub fn consumer(&self) -> &str {
        &self.marker.consumer
    }

    /// What moved so far (all rounds of this replicator).
    pub fn report(&self) -> &ReplicateReport {
        &self.report
    }

    /// One round: publishes the admitted events the stream lacks, consumes the stream to its
    /// end (what it holds now), then publishes what that released here.
    pub fn once(&mut self) -> Result<ReplicateReport, ReplicateError> {
        let session = self.connect()?;
        self.publish_new(&session)?;
        self.consume(&session, None, &AtomicBool::new(false))?;
        self.publish_new(&session)?;
        Ok(self.report.clone())
    }

    /// Rounds until `stop` is set (checked at least every [`REPLICATE_POLL_MILLIS`]):
    /// publishes what is admitted here, waits for and consumes what arrives, and tells `on`
    /// when it caught up with the stream. When the server goes away it connects again,
    /// backing off from [`REPLICATE_BACKOFF_MILLIS`]`.0` to `.1`; errors other than the
    /// server's stop it.
    pub fn follow(
        &mut self,
        stop: &AtomicBool,
        mut on: impl FnMut(FollowEvent<'_>),
    ) -> Result<ReplicateReport, ReplicateError> {
        let (first, cap) = REPLICATE_BACKOFF_MILLIS;
        let mut backoff = first;
        while !stop.load(Ordering::SeqCst) {
            let result = self.connect().and_then(|session| {
                backoff = first;
                self.follow_session(&session, stop, &mut on)
            });
            match result {
                Ok(()) => break,
                Err(error) if error.is_transient() => {
                    self.report.reconnects += 1;
                    let retry_in = Duration::from_millis(backoff);
                    on(FollowEvent::Reconnecting {
                        error: &error,
                        retry_in,
                    });
                    sleep_unless(stop, retry_in);
                    backoff = (backoff * 2).min(cap);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.report.clone())
    }

    /// Connects, and notes a server whose `max_payload` is below what the largest event
    /// needs.
    fn connect(&mut self) -> Result<Session, ReplicateError> {
        let session = self.runtime.connect(
            &self.options.url,
            &self.options.stream,
            &self.marker.consumer,
        )?;
        let needed = crate::limits::REPLICATE_MAX_MESSAGE_BYTES;
        self.report.small_max_payload =
            (session.max_payload < needed).then_some(session.max_payload as u64);
        // A stream made anew (deleted, then created again by this connection or another)
        // holds none of what the marker counts as published: publish it all again.
        if self.marker.stream_created.as_deref() != Some(session.stream_created.as_str()) {
            if self.marker.stream_created.is_some() {
                self.marker.published = 0;
                self.report.stream_recreated += 1;
            }
            self.marker.stream_created = Some(session.stream_created.clone());
            marker::save(&self.marker_path, &self.marker)?;
        }
        Ok(session)
    }

    fn follow_session(
        &mut self,
        session: &Session,
        stop: &AtomicBool,
        on: &mut impl FnMut(FollowEvent<'_>),
    ) -> Result<(), ReplicateError> {
        let poll = Duration::from_millis(REPLICATE_POLL_MILLIS);
        // Consumed count when `on` last heard of catching up (none yet in this session).
        let mut told: Option<u64> = None;
        while !stop.load(Ordering::SeqCst) {
            self.publish_new(session)?;
            let drained = self.consume(session, Some(poll), stop)?;
            if drained && told != Some(self.report.consumed) {
                self.publish_new(session)?;
                told = Some(self.report.consumed);
                on(FollowEvent::CaughtUp(&self.report));
            }
        }
        self.publish_new(session)
    }

    /// Publishes the admitted events from the marker on, in admission order, packed into
    /// messages of one realm each ([`crate::message`]), in batches; after each acknowledged
    /// batch the marker advances (durably). Events consumed from the stream are passed over,
    /// not sent back.
    fn publish_new(&mut self, session: &Session) -> Result<(), ReplicateError> {
        let end = self.ledger.len() as u64;
        if self.marker.published >= end {
            return Ok(());
        }
        let mut position = self.marker.published;
        let mut batch = Batch::new(session.max_payload);
        while position < end {
            // Consumed events: passed over without reading them back.
            if let Some(past) = self.echo_at.take_run_from(position) {
                position = past.min(end);
                continue;
            }
            // Read up to the next consumed one.
            let run_end = self.echo_at.next_from(position).unwrap_or(end).min(end);
            let run = usize::try_from(run_end - position).unwrap_or(usize::MAX);
            for event in self.ledger.iter_from(position).take(run) {
                let event = event?;
                position += 1;
                if self.echo.remove(&event.id()) {
                    continue;
                }
                if event.bytes().len() + MESSAGE_HEADER_ALLOWANCE > session.max_payload {
                    self.skip(&event, session.max_payload)?;
                    continue;
                }
                batch.add(&event);
                if batch.events >= REPLICATE_BATCH_EVENTS || batch.bytes >= REPLICATE_BATCH_BYTES {
                    self.publish_through(session, batch.take(), position)?;
                }
            }
            // The log ended before the run did (it cannot shrink): stop here.
            if position < run_end {
                break;
            }
        }
        self.publish_through(session, batch.take(), position)
    }

    /// Records that `event` cannot be published to a server whose messages are at most
    /// `max_payload` bytes: in the report and, with the reason, in the skipped file.
    fn skip(&mut self, event: &akledger::Event, max_payload: usize) -> Result<(), ReplicateError> {
        let reason = format!(
            "{} bytes with its headers, over the server's max_payload of {max_payload} bytes (raise max_payload to at least {} in the server's configuration)",
            event.bytes().len() + MESSAGE_HEADER_ALLOWANCE,
            crate::limits::REPLICATE_MAX_MESSAGE_BYTES
        );
        let skipped = crate::Skipped {
            id: event.id(),
            bytes: event.bytes().len() as u64,
            reason,
        };
        let record = akledger::canonical::Object::new()
            .with(
                "bytes",
                akledger::canonical::Json::Int(skipped.bytes as i64),
            )
            .with("event_id", skipped.id.to_string().into())
            .with("reason", skipped.reason.as_str().into());
        let mut line = akledger::canonical::to_canonical(&record.into());
        line.push(b'\n');
        let path = self.marker_path.with_extension("skipped.jsonl");
        let append = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &line));
        append.map_err(|e| ReplicateError::Marker {
            path,
            reason: e.to_string(),
        })?;
        self.report.skipped.push(skipped);
        Ok(())
    }

    /// Publishes `batch` and, once the server acknowledged all of it, records that the
    /// stream holds the admitted events before `position`.
    fn publish_through(
        &mut self,
        session: &Session,
        batch: Vec<Outgoing>,
        position: u64,
    ) -> Result<(), ReplicateError> {
        if !batch.is_empty() {
            let (stored, squatted) = self.runtime.publish(session, batch)?;
            self.report.published += stored;
            self.report.squatted += squatted;
        }
        if position > self.marker.published {
            self.marker.published = position;
            marker::save(&self.marker_path, &self.marker)?;
        }
        Ok(())
    }

    /// Fetches and admits batches until a fetch brings nothing (with `wait`, nothing within
    /// it: then `true`, drained) or `stop` is set. Each batch is fetched while the one before
    /// it is verified, admitted through a pipeline that keeps [`CONSUME_AHEAD`] batches
    /// verifying while one commits, and acknowledged once committed. Whatever stops the
    /// loop, the batches still in the pipeline are committed (what arrived whole is kept)
    /// and, when the server is still there, acknowledged; otherwise the server redelivers
    /// them later and they count as duplicates.
    fn consume(
        &mut self,
        session: &Session,
        wait: Option<Duration>,
        stop: &AtomicBool,
    ) -> Result<bool, ReplicateError> {
        // A round's drain is a bulk append (its index writes gathered, no periodic
        // snapshot until it ends); a follower's consume, which may last as long as the
        // stream keeps coming, is not.
        let bulk = wait.is_none().then(|| self.ledger.bulk_append());
        let mut committing = Committing {
            pipeline: self.ledger.pipeline_ahead(CONSUME_AHEAD),
            holds: VecDeque::new(),
        };
        let result = self.consume_into(session, wait, stop, &mut committing);
        let settled = self.settle(committing);
        let ended = bulk.map_or(Ok(()), BulkAppend::end);
        result.and_then(|drained| settled.and(ended.map_err(Into::into)).map(|()| drained))
    }

    fn consume_into(
        &mut self,
        session: &Session,
        wait: Option<Duration>,
        stop: &AtomicBool,
        committing: &mut Committing<'l>,
    ) -> Result<bool, ReplicateError> {
        let mut ahead = self.runtime.fetch_ahead(session, wait);
        // Where a compressed message is decompressed, reused.
        let mut scratch = Vec::new();
        loop {
            let fetched = self.runtime.fetched(ahead)?;
            if fetched.is_empty() {
                return Ok(true);
            }
            // The next batch comes in while this one is verified and the one before commits.
            // (Stopped or failed before it is taken, its messages, unacknowledged, are
            // delivered again to the next run.)
            ahead = self.runtime.fetch_ahead(session, wait);
            // Admitted in batches of at most REPLICATE_BATCH_EVENTS. Each batch holds the
            // last message all of whose events it or the batches before it carry, which is
            // acknowledged once that batch is committed (a message of several events may
            // span two batches); the fetch's last batch holds its last message (a fetch
            // with no events at all goes through as an empty batch, in its turn).
            let mut part = Part::default();
            let mut hold: Option<Delivered> = None;
            for message in fetched {
                let payload = decoded(message.payload(), message.encoding(), &mut scratch);
                let payload = match payload {
                    Ok(payload) => payload,
                    Err(why) => {
                        self.report.unreadable += 1;
                        if self.report.unreadable_first.is_none() {
                            self.report.unreadable_first =
                                Some(format!("message {}: {why}", message.sequence()));
                        }
                        &[][..]
                    }
                };
                for event in events_of(payload) {
                    if part.spans.len() >= REPLICATE_BATCH_EVENTS {
                        self.push_part(committing, &mut part, hold.take())?;
                    }
                    part.add(event);
                    self.report.consumed += 1;
                }
                hold = Some(message);
            }
            self.push_part(committing, &mut part, hold)?;
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            if wait.is_some() {
                // Following: events admitted here meanwhile do not wait for a quiet stream.
                self.publish_new(session)?;
            }
        }
    }

    /// Pushes `part` into the pipeline, holding `hold` for acknowledgement once it is
    /// committed, and counts the batch this commits (acknowledging what that one held).
    fn push_part(
        &mut self,
        committing: &mut Committing<'l>,
        part: &mut Part,
        hold: Option<Delivered>,
    ) -> Result<(), ReplicateError> {
        let room = part.buffer.len();
        let Part { buffer, spans } = std::mem::replace(part, Part::with_room(room));
        let committed = committing.pipeline.push_spans(Arc::new(buffer), spans)?;
        committing.holds.push_back(hold);
        if let Some(committed) = committed {
            self.committed(committed, committing.holds.pop_front().flatten())?;
        }
        Ok(())
    }

    /// Commits the batches the pipeline holds, counts them, and acknowledges the last
    /// message they held (the acknowledgement covers the ones before it).
    fn settle(&mut self, committing: Committing<'_>) -> Result<(), ReplicateError> {
        let Committing { pipeline, holds } = committing;
        for committed in pipeline.finish_all()? {
            self.count(committed);
        }
        match holds.into_iter().flatten().last() {
            Some(last) => self.runtime.ack_through(&last),
            None => Ok(()),
        }
    }

    /// Counts a committed batch and acknowledges the message it held, if any (without
    /// waiting for the server: [`Replicator::settle`] ends the round with one that waits).
    fn committed(
        &mut self,
        committed: AppendReport,
        held: Option<Delivered>,
    ) -> Result<(), ReplicateError> {
        self.count(committed);
        match held {
            Some(last) => self.runtime.ack_unconfirmed(&last),
            None => Ok(()),
        }
    }

    /// Counts a committed batch's outcomes (pending events it released count as admitted
    /// now); remembers the consumed events now held here so that publishing passes over
    /// them.
    fn count(&mut self, committed: AppendReport) {
        let counts = OutcomeCounts::of(&committed.outcomes);
        self.report.admitted += counts.admitted + committed.released.len() as u64;
        self.report.duplicates += counts.duplicates;
        self.report.pending += counts.pending;
        self.report.rejected += counts.rejected;
        if self.echo.len() as u64 + self.echo_at.len() >= MAX_REPLICATE_ECHO_IDS as u64 {
            self.echo.clear();
            self.echo_at.clear();
        }
        // A batch that released nothing took one position per event it admitted, all of
        // them consumed: publishing skips them unread, without looking each one up.
        let whole = committed.released.is_empty();
        if whole {
            self.echo_at.insert_range(committed.positions);
        }
        for outcome in committed.outcomes {
            match outcome {
                // Admitted now: its position is known, publishing skips it unread.
                Appended::Admitted(id) if !whole => match self.ledger.position(&id) {
                    Some(at) => {
                        self.echo_at.insert(at);
                    }
                    None => {
                        self.echo.insert(id);
                    }
                },
                Appended::Pending { id, .. } => {
                    self.echo.insert(id);
                }
                _ => {}
            }
        }
        // Consumed events that waited here and are admitted now; a local pending event
        // released by them is published as usual.
        for id in committed.released {
            if self.echo.remove(&id) {
                if let Some(at) = self.ledger.position(&id) {
                    self.echo_at.insert(at);
                } else {
                    self.echo.insert(id);
                }
            }
        }
    }
}

/// Sleeps `pause`, waking early when `stop` is set.
fn sleep_unless(stop: &AtomicBool, pause: Duration) {
    let slice = Duration::from_millis(50);
    let mut left = pause;
    while !left.is_zero() && !stop.load(Ordering::SeqCst) {
        let step = left.min(slice);
        std::thread::sleep(step);
        left -= step;
    }
}

#[cfg(test)]
mod tests {
    use akledger::{Config, Ledger};

    use super::Replicator;
    use crate::{ReplicateError, ReplicateOptions};

    #[test]
    fn replication_refuses_an_in_memory_ledger_before_any_network() {
        let memory = Ledger::open_with(Config::in_memory()).unwrap();
        // Nothing listens there: the refusal comes before any connection is tried.
        let refused = Replicator::new(&memory, ReplicateOptions::new("nats://127.0.0.1:9"));
        assert!(
            matches!(refused, Err(ReplicateError::Misuse(ref why)) if why.contains("on disk")),
            "{:?}",
            refused.err()
        );
    }
}
