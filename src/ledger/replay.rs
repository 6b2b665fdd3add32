//! Replay of the log through admission (on open, past the index or snapshot, and for a
//! check), in three stages: a reading thread reads each log batch and checks its frames,
//! parsing threads parse its events (verifying their proofs again for a check), and this
//! thread decides, applies and hands each batch to the sink. Batches are applied in log
//! order, one at a time, exactly as a one-stage replay would.

use std::sync::mpsc::{channel, sync_channel};

use crate::error::Error;
use crate::event::Event;
use crate::proof::Verifier;
use crate::store::log::{segment_file_name, HighWater, LogBatch, LogPos, SegmentReader};

use super::admit::{Decider, Source};
use super::drop_pending::dropped_ids;
use super::index::Changes;
use super::record::Record;
use super::state::State;
use super::stored::reread;
use super::verify_batch::verify_all;
use super::{log_error, ENTRY_EVENT};
use crate::layout;

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
/// log batch at a time, handing each batch's changes to `sink`. Batches are parsed on
/// `threads` threads (batch `i` on thread `i mod threads`, so they come back in log order
/// by taking them round-robin); a [`Reverify`] replay uses one, as verifying is itself
/// spread over threads.
pub(crate) fn replay(
    reader: &SegmentReader,
    state: &mut State,
    start: Option<HighWater>,
    reverify: Option<&Reverify<'_>>,
    threads: usize,
    sink: &mut Sink<'_>,
) -> Result<Replayed, Error> {
    let workers = if reverify.is_some() {
        1
    } else {
        threads.max(1)
    };
    std::thread::scope(|scope| {
        let mut batches = Vec::with_capacity(workers);
        let mut prepared = Vec::with_capacity(workers);
        let mut spent = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (batch_tx, batch_rx) = sync_channel::<Result<LogBatch, Error>>(1);
            let (ready_tx, ready_rx) = sync_channel::<Result<Prepared, Error>>(AHEAD);
            // Applied events go back to the thread that parsed them, to be freed there:
            // memory is cheapest to free on the thread that allocated it (the allocator's
            // arenas are per thread).
            let (spent_tx, spent_rx) = channel::<Vec<Event>>();
            scope.spawn(move || {
                for batch in batch_rx {
                    spent_rx.try_iter().for_each(drop);
                    if ready_tx
                        .send(batch.and_then(|b| prepare(b, reverify)))
                        .is_err()
                    {
                        return; // the applying side stopped on an error
                    }
                }
            });
            batches.push(batch_tx);
            prepared.push(ready_rx);
            spent.push(spent_tx);
        }
        scope.spawn(move || read_batches(reader, start, &batches));
        let mut done = Replayed::default();
        for turn in (0..workers).cycle() {
            let (Some(ready), Some(spent)) = (prepared.get(turn), spent.get(turn)) else {
                break;
            };
            // A closed channel: the reading thread ended after the batch before this one.
            let Ok(batch) = ready.recv() else { break };
            let events = apply(reader, state, batch?, &mut done, sink)?;
            // When the parsing thread is gone, they are freed here.
            let _ = spent.send(events);
        }
        Ok(done)
    })
}

/// Reads the log after `start` and deals its batches to the parsing threads in turn; a
/// read error goes to the next thread in turn, and ends the reading.
fn read_batches(
    reader: &SegmentReader,
    start: Option<HighWater>,
    workers: &[std::sync::mpsc::SyncSender<Result<LogBatch, Error>>],
) {
    let batches = match start {
        Some(high) => reader.batches_from(high.end),
        None => reader.batches(),
    };
    let mut turn = (0..workers.len()).cycle();
    for batch in batches {
        let failed = batch.is_err();
        let worker = turn.next().and_then(|t| workers.get(t));
        let sent = worker.is_some_and(|w| w.send(batch.map_err(log_error)).is_ok());
        if failed || !sent {
            return; // damage is reported once; a stopped applier wants no more
        }
    }
}

fn prepare(batch: LogBatch, reverify: Option<&Reverify<'_>>) -> Result<Prepared, Error> {
    if batch.is_empty() {
        return Err(Error::Misuse("an empty log batch was replayed".into()));
    }
    let high = HighWater {
        seq: batch.seq,
        end: batch.end,
    };
    let entries = batch.len() as u64;
    let dropped = dropped_ids(&batch)?;
    let stored: Vec<_> = batch.entries().filter(|e| e.kind == ENTRY_EVENT).collect();
    let events = match reverify {
        None => stored
            .iter()
            .map(|entry| Ok((entry.pos, Ok(reread(entry.payload, entry.pos)?))))
            .collect::<Result<_, Error>>()?,
        Some(r) => {
            let payloads: Vec<&[u8]> = stored.iter().map(|e| e.payload).collect();
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
                            layout::LOG,
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
    reader: &SegmentReader,
    state: &mut State,
    batch: Prepared,
    done: &mut Replayed,
    sink: &mut Sink<'_>,
) -> Result<Vec<Event>, Error> {
    done.entries += batch.entries;
    let staged = {
        let mut decider = Decider::new(state, reader).expecting(batch.events.len());
        for (pos, event) in batch.events {
            match event {
                Ok(event) => {
                    decider.decide(event, Source::Log(pos));
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
