//! [`Ledger::append_log`]: a whole log (JSON Lines or a CBOR sequence, PROFILE §9) in one
//! call, with each item's outcome and position.
//!
//! The format is detected from the first byte ([`LogReader::detect`]). Items are framed
//! one at a time — a JSON Lines line is bounded by [`crate::limits::MAX_EVENT_BYTES`]
//! while it is read, and an over-long one is skipped without being held — and appended in
//! batches cut at [`LOG_BATCH_EVENTS`] items or [`LOG_BATCH_BYTES`] bytes, whichever comes
//! first, through a [`super::Pipeline`] (one batch verified while the previous commits).
//! An item that cannot be framed or is rejected is an outcome, not a failure: the import
//! goes on. Only reading the input, or the ledger's own IO, stops it.

use std::collections::VecDeque;
use std::io::{BufRead, Seek};
use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, Rejection};
use crate::id::EventId;
use crate::limits::{LOG_BATCH_BYTES, LOG_BATCH_EVENTS, LOG_SPARE_BUFFERS};
use crate::log_format::{LogFormat, LogReader};

use super::pool::Items;
use super::{AppendReport, Appended, Ledger};

/// Where an item is in a log.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct LogPosition {
    /// 0-based item index.
    pub index: usize,
    /// 1-based line (JSON Lines only: one item per line).
    pub line: Option<usize>,
    /// Byte offset of the item's start.
    pub byte: u64,
}

impl LogPosition {
    /// The position of item `index` starting at `byte` in a log of `format`.
    pub fn new(index: usize, byte: u64, format: LogFormat) -> LogPosition {
        let line = (format == LogFormat::JsonLines).then(|| index.saturating_add(1));
        LogPosition { index, line, byte }
    }
}

impl std::fmt::Display for LogPosition {
    /// `line 500 (byte 776992)`, or `index 499 (byte 776992)` without lines.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line} (byte {})", self.byte),
            None => write!(f, "index {} (byte {})", self.index, self.byte),
        }
    }
}

/// One decided item, as [`Ledger::append_log_with`] hands it over.
#[derive(Debug)]
pub struct AppendedItem<'a> {
    /// Where the item is.
    pub position: LogPosition,
    /// Its bytes (empty when it could not be framed).
    pub bytes: &'a [u8],
    /// What the ledger did; an item that cannot be framed is `Rejected` with no id.
    pub outcome: Appended,
}

/// One item's outcome, as [`Ledger::append_log`] keeps it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LogOutcome {
    /// Where the item is.
    pub position: LogPosition,
    /// What the ledger did.
    pub outcome: Appended,
}

/// What appending a log did, in counts.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct LogSummary {
    /// The detected format.
    pub format: LogFormat,
    /// Items read.
    pub items: usize,
    /// Admitted on arrival.
    pub admitted: usize,
    /// Already stored with the same bytes (or sent twice).
    pub duplicates: usize,
    /// Stored, waiting for dependencies on arrival.
    pub pending: usize,
    /// Rejected on arrival, framing failures included.
    pub rejected: usize,
    /// Batches appended.
    pub batches: usize,
    /// Pending events (of this log or stored before) admitted once the log supplied their
    /// dependencies, in admission order.
    pub released: Vec<EventId>,
    /// Pending events whose dependencies arrived but which then failed admission.
    pub rejected_on_release: Vec<(EventId, Rejection)>,
}

impl LogSummary {
    fn new(format: LogFormat) -> Self {
        LogSummary {
            format,
            items: 0,
            admitted: 0,
            duplicates: 0,
            pending: 0,
            rejected: 0,
            batches: 0,
            released: Vec::new(),
            rejected_on_release: Vec::new(),
        }
    }

    fn count(&mut self, outcome: &Appended) {
        self.items += 1;
        match outcome {
            Appended::Admitted(_) => self.admitted += 1,
            Appended::Duplicate(_) => self.duplicates += 1,
            Appended::Pending { .. } => self.pending += 1,
            Appended::Rejected { .. } => self.rejected += 1,
        }
    }

    fn merge(&mut self, report: AppendReport) {
        self.released.extend(report.released);
        self.rejected_on_release.extend(report.rejected_on_release);
    }
}

/// A whole log's outcomes: the summary and every item's outcome with its position.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct LogReport {
    /// The counts.
    pub summary: LogSummary,
    /// One outcome per item, in log order.
    pub outcomes: Vec<LogOutcome>,
}

/// A framed item waiting for its batch's outcomes.
struct Queued {
    index: usize,
    offset: u64,
    /// Where its bytes start in the log (after a CBOR item's header).
    payload_at: u64,
    /// Where its bytes are in its batch's buffer.
    bytes: Result<Range<usize>, Rejection>,
    /// XXH3-64 of its bytes, taken as they were read (while they are in the cache), when
    /// the ledger refers to them in the file ([`super::Origins::hashes`]).
    hash: Option<u64>,
}

impl Ledger {
    /// Appends every item of a log and returns the summary and each item's outcome with
    /// its position. For logs too large to keep an outcome per item, use
    /// [`Ledger::append_log_with`].
    ///
    /// `Err` only when the input cannot be read or is neither format
    /// (`schema_violation`), or the ledger fails; batches committed before stay committed.
    ///
    /// # Examples
    ///
    /// ```
    /// use akledger::log_format::{write_item, LogFormat};
    /// use akledger::workload::{sidecar_workload, SidecarSpec};
    /// use akledger::{Appended, Code, Ledger};
    ///
    /// let w = sidecar_workload(1, SidecarSpec { exchanges: 2, agents: 1, forgeries: false, skills: false })?;
    /// let mut log = Vec::new();
    /// for event in &w.events {
    ///     write_item(&mut log, LogFormat::JsonLines, event.bytes())?;
    /// }
    /// log.extend_from_slice(b"{\"not\":\"an event\"}\n");
    ///
    /// let dir = tempfile::tempdir()?;
    /// let ledger = Ledger::open(dir.path())?;
    /// let report = ledger.append_log(&log[..])?;
    /// assert_eq!(report.summary.admitted, w.events.len());
    /// let last = report.outcomes.last().ok_or("no items")?;
    /// assert_eq!(last.position.line, Some(w.events.len() + 1));
    /// assert!(matches!(&last.outcome, Appended::Rejected { rejection, .. }
    ///     if rejection.code() == Code::SchemaViolation));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn append_log(&self, log: impl BufRead) -> Result<LogReport, Error> {
        let mut outcomes = Vec::new();
        let summary = self.append_log_with(log, |item| {
            outcomes.push(LogOutcome {
                position: item.position,
                outcome: item.outcome,
            });
            Ok::<(), Error>(())
        })?;
        Ok(LogReport { summary, outcomes })
    }

    /// [`Ledger::append_log`], calling `on` with each item in log order once its batch is
    /// committed instead of keeping the outcomes. An `Err` from `on` stops the import
    /// (batches committed so far stay) and is returned.
    pub fn append_log_with<E: From<Error>>(
        &self,
        log: impl BufRead,
        on: impl FnMut(AppendedItem<'_>) -> Result<(), E>,
    ) -> Result<LogSummary, E> {
        self.append_log_from(log, None, on)
    }

    /// [`Ledger::append_log_with`] of a log file. An in-memory ledger
    /// ([`crate::Config::in_memory`], what `akledger audit` replays into) then keeps the
    /// file open and refers to each stored event's bytes in it instead of copying them, so
    /// its memory follows what it derives from the events, not the log's size; the file
    /// must not change while the ledger is open (an event whose bytes in the file differ
    /// from what was read is kept in memory). A ledger on disk stores the events as always.
    pub fn append_log_file_with<E: From<Error>>(
        &self,
        file: std::fs::File,
        on: impl FnMut(AppendedItem<'_>) -> Result<(), E>,
    ) -> Result<LogSummary, E> {
        // Where reading starts in the file: the log's offsets count from there.
        let source = match self.config.in_memory {
            true => file
                .try_clone()
                .ok()
                .and_then(|mut f| Some((f.stream_position().ok()?, Arc::new(f)))),
            false => None,
        };
        let log = std::io::BufReader::with_capacity(1 << 20, file);
        self.append_log_from(log, source, on)
    }

    /// Appends the log read from `log`; `source`, when given, is the file `log` reads and
    /// where in it reading starts.
    fn append_log_from<E: From<Error>>(
        &self,
        log: impl BufRead,
        source: Option<(u64, Arc<std::fs::File>)>,
        mut on: impl FnMut(AppendedItem<'_>) -> Result<(), E>,
    ) -> Result<LogSummary, E> {
        let mut reader = LogReader::detect(log)
            .map_err(|source| Error::ReadLog { offset: 0, source })?
            .map_err(Error::Rejected)?;
        let format = reader.format();
        let mut summary = LogSummary::new(format);
        let bulk = super::BulkAppend::start(self);
        let mut pipeline = self.stream_pipeline();
        // Batches pushed and not yet delivered, oldest first, with their buffers.
        let mut committing: VecDeque<(Arc<Vec<u8>>, Vec<Queued>)> = VecDeque::new();
        let mut batch: Vec<Queued> = Vec::new();
        // The batch's items, one after another: one buffer a batch. The events read from
        // it share it (`Event::parse_span`) until their worker frees them, a little after
        // the batch is delivered; the buffers of delivered batches wait in `spares` to be
        // used again once nothing else holds them.
        let mut buffer: Vec<u8> = Vec::new();
        let mut spares = Spares::default();
        let mut push = |batch: Vec<Queued>,
                        buffer: Vec<u8>,
                        summary: &mut LogSummary,
                        spares: &mut Spares|
         -> Result<(), E> {
            let buffer = Arc::new(buffer);
            let spans = batch.iter().filter_map(|q| q.bytes.clone().ok()).collect();
            let origins = source.as_ref().map(|(start, source)| super::Origins {
                source: Arc::clone(source),
                offsets: batch
                    .iter()
                    .filter(|q| q.bytes.is_ok())
                    .map(|q| q.payload_at.checked_add(*start))
                    .collect(),
                hashes: batch
                    .iter()
                    .filter(|q| q.bytes.is_ok())
                    .map(|q| q.hash)
                    .collect(),
            });
            let items = Items::Spans {
                buffer: Arc::clone(&buffer),
                spans,
            };
            let report = pipeline.push_items(items, origins)?;
            summary.batches += 1;
            committing.push_back((buffer, batch));
            if let Some(report) = report {
                let (buffer, decided) = committing.pop_front().unwrap_or_default();
                deliver(&buffer, &decided, report, summary, &mut on)?;
                spares.keep(buffer);
            }
            Ok(())
        };
        loop {
            if batch.len() == LOG_BATCH_EVENTS {
                let room = buffer.len().saturating_add(buffer.len() / 8);
                let full = std::mem::take(&mut buffer);
                push(std::mem::take(&mut batch), full, &mut summary, &mut spares)?;
                buffer = spares.take().unwrap_or_else(|| Vec::with_capacity(room));
            }
            let offset = reader.offset();
            let Some(item) = reader.next_into(&mut buffer) else {
                break;
            };
            let mut item = item.map_err(|source| Error::ReadLog { offset, source })?;
            if let Ok(span) = &mut item.bytes {
                if !batch.is_empty() && span.end > LOG_BATCH_BYTES {
                    // Over the batch's bytes with this item: the batch goes without it.
                    let next = buffer.split_off(span.start);
                    let full = std::mem::replace(&mut buffer, next);
                    push(std::mem::take(&mut batch), full, &mut summary, &mut spares)?;
                    *span = 0..buffer.len();
                }
            }
            let size = item.bytes.as_ref().map_or(0, ExactSizeIterator::len);
            batch.push(Queued {
                index: item.index,
                offset: item.offset,
                payload_at: match format {
                    LogFormat::JsonLines => item.offset,
                    // A CBOR item's bytes end where the next item starts.
                    LogFormat::CborSeq => reader.offset().saturating_sub(size as u64),
                },
                hash: match (&source, &item.bytes) {
                    (Some(_), Ok(span)) => Some(xxhash_rust::xxh3::xxh3_64(
                        buffer.get(span.clone()).unwrap_or_default(),
                    )),
                    _ => None,
                },
                bytes: item.bytes,
            });
        }
        if !batch.is_empty() {
            push(batch, buffer, &mut summary, &mut spares)?;
        }
        for report in pipeline.finish_all()? {
            let (buffer, decided) = committing.pop_front().unwrap_or_default();
            deliver(&buffer, &decided, report, &mut summary, &mut on)?;
        }
        bulk.end()?;
        Ok(summary)
    }
}

/// Hands each item of a committed batch to `on` with its outcome (items that could not be
/// framed get their framing rejection) and counts it.
fn deliver<E: From<Error>>(
    buffer: &[u8],
    batch: &[Queued],
    mut report: AppendReport,
    summary: &mut LogSummary,
    on: &mut impl FnMut(AppendedItem<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut outcomes = std::mem::take(&mut report.outcomes).into_iter();
    summary.merge(report);
    for item in batch {
        let (bytes, outcome) = match &item.bytes {
            Ok(span) => {
                let outcome = outcomes
                    .next()
                    .ok_or_else(|| Error::Misuse("the ledger returned too few outcomes".into()))?;
                (buffer.get(span.clone()).unwrap_or_default(), outcome)
            }
            Err(rejection) => (
                &[][..],
                Appended::Rejected {
                    id: None,
                    rejection: rejection.clone(),
                },
            ),
        };
        summary.count(&outcome);
        on(AppendedItem {
            position: LogPosition::new(item.index, item.offset, summary.format),
            bytes,
            outcome,
        })?;
    }
    Ok(())
}

/// The buffers of delivered batches, newest last, kept to be used again: one is free once
/// the workers have freed the events read from it.
#[derive(Default)]
struct Spares(VecDeque<Arc<Vec<u8>>>);

impl Spares {
    /// Keeps `buffer`; past [`LOG_SPARE_BUFFERS`], the oldest is let go.
    fn keep(&mut self, buffer: Arc<Vec<u8>>) {
        if self.0.len() >= LOG_SPARE_BUFFERS {
            self.0.pop_front();
        }
        self.0.push_back(buffer);
    }

    /// The oldest buffer nothing else holds, emptied.
    fn take(&mut self) -> Option<Vec<u8>> {
        let free = self.0.iter().position(|b| Arc::strong_count(b) == 1)?;
        let mut buffer = Arc::try_unwrap(self.0.remove(free)?).ok()?;
        buffer.clear();
        Some(buffer)
    }
}
