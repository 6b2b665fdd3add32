//! Replay of the log through admission (on open, past the index or snapshot, and for a
//! check), in two stages: a reading thread reads each log batch, checks its frames and
//! parses its events (verifying their proofs again for a check) while this thread decides,
//! applies and hands the batch before it to the sink. Batches are applied in log order, one
//! at a time, exactly as a one-stage replay would.

use std::sync::mpsc::{channel, sync_channel};

use crate::error::Error;
use crate::event::Event;
use crate::proof::Verifier;
use crate::store::log::{segment_file_name, HighWater, LogEntry, LogPos, LogReader};

use super::admit::{Decider, Source};
use super::drop_pending::dropped_ids;
use super::index::Changes;
use super::open::{parse_stored, LOG_DIR};
use super::record::Record;
use super::state::State;
use super::verify_batch::verify_all;
use super::{log_error, ENTRY_EVENT};

/// Log batches read and parsed ahead of the one being applied.
const AHEAD: usize = 2;

/// Checks every replayed event's proof (used by [`Ledger::check`](super::Ledger::check)).
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

/// One log batch, read and parsed.
struct Prepared {
    high: HighWater,
    entries: u64,
    dropped: Vec<crate::id::EventId>,
    /// Each event entry: parsed, or why its proof no longer verifies (with [`Reverify`]).
    events: Vec<(LogPos, Result<Event, String>)>,
}

/// Replays every log entry after `start` (all of them when `None`) through admission, one
/// log batch at a time, handing each batch's changes to `sink`.
pub(crate) fn replay(
    reader: &LogReader,
    state: &mut State,
    start: Option<HighWater>,
    reverify: Option<&Reverify<'_>>,
    sink: &mut Sink<'_>,
) -> Result<Replayed, Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Result<Prepared, Error>>(AHEAD);
        // Applied events come back to the reading thread to be freed: memory is cheapest
        // to free on the thread that allocated it (the allocator's arenas are per thread).
        let (spent_tx, spent_rx) = channel::<Vec<Event>>();
        scope.spawn(move || {
            let iter = match start {
                Some(high) => reader.iter_from(high.end),
                None => reader.iter(),
            };
            let mut batch: Vec<LogEntry> = Vec::new();
            for entry in iter {
                spent_rx.try_iter().for_each(drop);
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        let _ = tx.send(Err(log_error(e)));
                        return;
                    }
                };
                if batch.first().is_some_and(|first| first.seq != entry.seq) {
                    let full = std::mem::take(&mut batch);
                    if tx.send(prepare(full, reverify)).is_err() {
                        return; // the applying side stopped on an error
                    }
                }
                batch.push(entry);
            }
            if !batch.is_empty() {
                let _ = tx.send(prepare(batch, reverify));
            }
        });
        let mut done = Replayed::default();
        for prepared in rx {
            let spent = apply(reader, state, prepared?, &mut done, sink)?;
            // When the reading thread is gone, they are freed here.
            let _ = spent_tx.send(spent);
        }
        Ok(done)
    })
}

/// Reads one log batch's events: parsed, or (with `reverify`) refused with the reason.
fn prepare(batch: Vec<LogEntry>, reverify: Option<&Reverify<'_>>) -> Result<Prepared, Error> {
    let Some(last) = batch.last() else {
        return Err(Error::Misuse("an empty log batch was replayed".into()));
    };
    let high = HighWater {
        seq: last.seq,
        end: last.batch_end,
    };
    let entries = batch.len() as u64;
    let dropped = dropped_ids(&batch)?;
    let stored: Vec<LogEntry> = batch
        .into_iter()
        .filter(|e| e.kind == ENTRY_EVENT)
        .collect();
    let events = match reverify {
        None => stored
            .iter()
            .map(|entry| Ok((entry.pos, Ok(parse_stored(&entry.payload, entry.pos)?))))
            .collect::<Result<_, Error>>()?,
        Some(r) => {
            let payloads: Vec<&[u8]> = stored.iter().map(|e| e.payload.as_slice()).collect();
            let verdicts = verify_all(&payloads, r.verifier, r.threads);
            stored
                .iter()
                .zip(verdicts)
                .map(|(entry, verdict)| match verdict {
                    Ok(event) => (entry.pos, Ok(event)),
                    Err(why) => (
                        entry.pos,
                        Err(format!(
                            "{}/{} byte {}: {why}",
                            LOG_DIR,
                            segment_file_name(entry.pos.segment),
                            entry.pos.offset
                        )),
                    ),
                })
                .collect()
        }
    };
    Ok(Prepared {
        high,
        entries,
        dropped,
        events,
    })
}

/// Decides and applies one prepared batch, then hands its changes to `sink`. Returns the
/// batch's events, for the caller to free.
fn apply(
    reader: &LogReader,
    state: &mut State,
    batch: Prepared,
    done: &mut Replayed,
    sink: &mut Sink<'_>,
) -> Result<Vec<Event>, Error> {
    done.entries += batch.entries;
    let staged = {
        let mut decider = Decider::new(state, reader);
        for (pos, event) in batch.events {
            match event {
                Ok(event) => {
                    decider.decide(event, Source::Log(pos), |_, _| true);
                }
                Err(failure) => done.failures.push(failure),
            }
        }
        decider.finish()?
    };
    let changes = Changes::of(&staged, &[]).and_dropped(&batch.dropped);
    let first = state.len();
    let spent = staged.admitted.iter().map(|a| a.event.clone()).collect();
    let records = state.apply(staged, &[]).map_err(Error::Misuse)?;
    for id in &batch.dropped {
        state.drop_pending(id);
    }
    sink(first, &records, &changes, batch.high)?;
    Ok(spent)
}
