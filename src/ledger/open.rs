//! Opening a ledger: recover the log, load the index, replay the gap between the index's
//! high-water mark and the log, or rebuild the index from the log when it cannot be trusted.

use std::sync::{Mutex, RwLock};

use crate::error::Error;
use crate::event::Event;
use crate::proof::Verifier;
use crate::store::log::{
    segment_file_name, HighWater, LogEntry, LogOptions, LogReader, RecoveryReport, SegmentLog,
};

use super::admit::{Decider, Source};
use super::index::{Changes, Index};
use super::record::Record;
use super::state::State;
use super::verify_batch::verify_all;
use super::{log_error, Config, Ledger, Writer, ENTRY_EVENT};

/// What opening found and did.
#[derive(Clone, Debug, Default)]
pub struct OpenReport {
    /// The log's recovery report (torn tail cut, segments).
    pub log: RecoveryReport,
    /// Log entries replayed into the index because they were past its high-water mark.
    pub replayed: u64,
    /// Why the index was rebuilt from the whole log, if it was.
    pub rebuilt: Option<String>,
}

/// Subdirectory of the segment log.
pub const LOG_DIR: &str = "log";
/// Subdirectory of the sled index.
pub const INDEX_DIR: &str = "index";

pub fn open(config: Config) -> Result<Ledger, Error> {
    std::fs::create_dir_all(&config.dir).map_err(|source| Error::Io {
        path: config.dir.clone(),
        source,
    })?;
    let opts = LogOptions {
        segment_size: config.segment_size,
        durability: config.durability,
        verify_on_open: false,
    };
    // The index's sled lock is the ledger's directory lock: take it before the log is
    // recovered, so a second opener never touches a log another ledger is writing.
    let index = Index::open(&config.dir.join(INDEX_DIR))?;
    let (log, recovery) = SegmentLog::open(config.dir.join(LOG_DIR), opts).map_err(log_error)?;
    let reader = log.reader();
    let mut report = OpenReport {
        log: recovery,
        ..OpenReport::default()
    };
    let log_high = log.high_water();
    let (mut state, start) = match load(&index, &reader, log_high) {
        Ok(loaded) => loaded,
        Err(why) => {
            index.clear()?;
            report.rebuilt = Some(why);
            (State::default(), None)
        }
    };
    let mut persist = |first: usize, records: &[Record], changes: &Changes, high: HighWater| {
        index.persist(first, records, changes, high)
    };
    report.replayed = replay(&reader, &mut state, start, None, &mut persist)?.entries;
    state.refresh_heads();
    let verifier = std::sync::Arc::new(Verifier::new(config.keyring.clone()));
    Ok(Ledger {
        pool: super::pool::VerifyPool::new(std::sync::Arc::clone(&verifier), config.verify_threads),
        verifier,
        config,
        writer: Mutex::new(Writer {
            log,
            poisoned: false,
        }),
        reader,
        state: RwLock::new(state),
        index,
        exchanges: Mutex::default(),
        opened: report,
    })
}

/// Loads the state the index holds; `Err` says why the index must be rebuilt instead.
fn load(
    index: &Index,
    reader: &LogReader,
    log_high: HighWater,
) -> Result<(State, Option<HighWater>), String> {
    let Some(high) = index.high_water().map_err(|e| e.to_string())? else {
        return if log_high.seq == 0 {
            Ok((State::default(), None))
        } else {
            Err("the index is empty but the log is not".into())
        };
    };
    if high.seq > log_high.seq {
        return Err(format!(
            "the index is ahead of the log (batch {} > {}): the log's unsynced tail was lost",
            high.seq, log_high.seq
        ));
    }
    let mut state = State::default();
    index.load(&mut state, |at| {
        read_stored(reader, at).map_err(|e| e.to_string())
    })?;
    Ok((state, Some(high)))
}

/// Re-parses an event this engine wrote to its own log.
pub(crate) fn read_stored(
    reader: &LogReader,
    at: crate::store::log::LogPos,
) -> Result<Event, Error> {
    let (_, bytes) = reader.read(at).map_err(log_error)?;
    parse_stored(&bytes, at)
}

fn parse_stored(bytes: &[u8], at: crate::store::log::LogPos) -> Result<Event, Error> {
    Event::parse(bytes)
        .map(Event::assume_verified)
        .map_err(|r| Error::Corrupt {
            path: format!("{LOG_DIR}/{}", segment_file_name(at.segment)).into(),
            offset: at.offset,
            reason: format!("stored event does not parse: {r}"),
        })
}

/// Checks every replayed event's proof (used by [`Ledger::check`]).
pub(crate) struct Reverify<'a> {
    pub verifier: &'a Verifier,
    pub threads: usize,
}

/// What a replay did.
#[derive(Default)]
pub(crate) struct Replayed {
    pub entries: u64,
    /// Stored events whose proof no longer verifies (only with [`Reverify`]).
    pub failures: Vec<String>,
}

/// Where replayed batches go: the index on open, nowhere for a check.
pub(crate) type Sink<'a> =
    dyn FnMut(usize, &[Record], &Changes, HighWater) -> Result<(), Error> + 'a;

/// Replays every log entry after `start` (all of them when `None`) through admission, one
/// log batch at a time, handing each batch's changes to `sink`.
pub(crate) fn replay(
    reader: &LogReader,
    state: &mut State,
    start: Option<HighWater>,
    reverify: Option<&Reverify<'_>>,
    sink: &mut Sink<'_>,
) -> Result<Replayed, Error> {
    let iter = match start {
        Some(high) => reader.iter_from(high.end),
        None => reader.iter(),
    };
    let mut done = Replayed::default();
    let mut batch: Vec<LogEntry> = Vec::new();
    for entry in iter {
        let entry = entry.map_err(log_error)?;
        if batch.first().is_some_and(|first| first.seq != entry.seq) {
            apply_batch(state, std::mem::take(&mut batch), reverify, &mut done, sink)?;
        }
        batch.push(entry);
    }
    apply_batch(state, batch, reverify, &mut done, sink)?;
    Ok(done)
}

fn apply_batch(
    state: &mut State,
    batch: Vec<LogEntry>,
    reverify: Option<&Reverify<'_>>,
    done: &mut Replayed,
    sink: &mut Sink<'_>,
) -> Result<(), Error> {
    let Some(last) = batch.last() else {
        return Ok(());
    };
    let high = HighWater {
        seq: last.seq,
        end: last.batch_end,
    };
    done.entries += batch.len() as u64;
    let events: Vec<LogEntry> = batch
        .into_iter()
        .filter(|e| e.kind == ENTRY_EVENT)
        .collect();
    let verdicts: Vec<Option<String>> = match reverify {
        None => vec![None; events.len()],
        Some(r) => {
            let payloads: Vec<&[u8]> = events.iter().map(|e| e.payload.as_slice()).collect();
            verify_all(&payloads, r.verifier, r.threads)
                .into_iter()
                .map(|v| v.err().map(|e| e.to_string()))
                .collect()
        }
    };
    let staged = {
        let mut decider = Decider::new(state);
        for (entry, verdict) in events.iter().zip(verdicts) {
            if let Some(why) = verdict {
                done.failures.push(format!(
                    "{}/{} byte {}: {why}",
                    LOG_DIR,
                    segment_file_name(entry.pos.segment),
                    entry.pos.offset
                ));
                continue;
            }
            let event = parse_stored(&entry.payload, entry.pos)?;
            decider.decide(event, Source::Log(entry.pos), |_, _| true);
        }
        decider.finish()
    };
    let changes = Changes::of(&staged, &[]);
    let first = state.len();
    let records = state
        .apply(staged, &[])
        .map_err(|e| Error::Misuse(e.to_string()))?;
    sink(first, &records, &changes, high)
}
