//! The ledger: the IO shell that sequences verify → decide → log → index → state.
//!
//! * The segment log ([`crate::store::log`]) is the truth: every accepted event (admitted or
//!   pending) is appended there, in batches, before anything acknowledges it.
//! * sled (`index`) holds rebuildable indexes with a high-water mark; on open the gap
//!   between that mark and the log is replayed, and a sled ahead of the log (possible only
//!   after a machine crash in `Buffered` mode) is rebuilt from the log.
//! * The in-memory `State` (DAG index, id maps, registry, pending set) answers queries.
//!
//! Concurrency: any number of threads append and read. A batch is verified in parallel
//! without locks (on the ledger's persistent `pool`, one signature batch per worker), then
//! one writer at a time decides it against the committed state, writes it to the log, and
//! applies it to the state under the state's write lock while the log's fdatasync finishes
//! (the batch's writeback starts as soon as it is written; the lock is let go only once
//! the sync succeeded, and a state holding a batch whose sync failed is never read again),
//! then updates the exchanges, the tree and sled — so a reader sees a batch entirely or
//! not at all, and only once it is durable. A [`Pipeline`] overlaps the two stages for
//! one caller: batch n+1 is verified while batch n is committed.

// Modules the tests reach through `internals` (the feature); each holds itself to no
// public-API rules there (an inner `cfg_attr` at its top).
mod actor_models;
pub(crate) mod admit;
mod append_log;
mod append_report;
pub(crate) mod check;
mod clock;
mod config;
pub(crate) mod derived;
mod disclosure_store;
mod drop_pending;
mod exchanges;
pub(crate) mod feed;
pub(crate) mod graph_file;
mod id_slots;
pub(crate) mod id_table;
pub(crate) mod index;
pub mod keyring_file;
mod live_keys;
mod observers;
mod open;
pub(crate) mod pending_set;
mod pipeline;
pub(crate) mod pool;
pub(crate) mod positions;
pub(crate) mod queries;
pub(crate) mod record;
mod replay;
mod sidecar_handle;
pub(crate) mod snapshot;
pub(crate) mod stamps;
pub(crate) mod state;
pub(crate) mod stored;
mod stored_checkpoint;
mod tiles;
mod tree;
pub(crate) mod verify_batch;
mod watch;

pub use crate::store::log::Durability;
pub use admit::Appended;
pub use append_log::{AppendedItem, LogOutcome, LogPosition, LogReport, LogSummary};
pub use append_report::{AppendReport, OutcomeCounts};
pub use check::CheckReport;
pub use config::Config;
pub use feed::{ExchangeChange, ExchangeFeed, Feed, FeedItem};
pub use graph_file::view::GraphView;
pub use observers::ObserverFeed;
pub use open::OpenReport;
pub use pipeline::{Origins, Pipeline};
pub use queries::{pending_causes, PendingCause};
pub use sidecar_handle::SidecarHandle;
pub use tiles::TilesReport;
pub use tree::DEFAULT_ORIGIN_PREFIX;
pub use watch::{EventFeed, WatchedEvent};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use crate::error::Error;
use crate::event::Event;
use crate::id::EventId;
use crate::layout;
use crate::limits::{MAX_BATCH_BYTES, MAX_BATCH_EVENTS, SNAPSHOT_SHARE};
use crate::proof::Verifier;
use crate::store::log::{HighWater, LogError, ReadFrom, SegmentLog, SegmentReader};
use crate::store::root::{AckWriter, Acked, RootLock};

use admit::{Decider, Source};
use index::Index;
use record::Record;
use state::State;
use stored::Stored;

/// Log entries written since the last state snapshot for a close to write a new one: below
/// it, replaying them on the next open costs less than writing the snapshot would.
const SNAPSHOT_ON_CLOSE: u64 = 4096;

/// Log entry kind of an event's canonical bytes.
const ENTRY_EVENT: u8 = 1;

/// An embedded, durable, concurrent event ledger. `Send + Sync`.
///
/// Open a directory, append signed events (one, a batch, or a whole log with
/// [`Ledger::append_log`]), and query them; sidecar exchanges fold as events arrive
/// ([`Ledger::exchanges`], [`Ledger::exchange_feed`]) and a [`SidecarHandle`] authors them.
///
/// # Examples
///
/// ```
/// use akledger::{ActorId, Appended, EventBuilder, Ledger, ScopeRef, Timestamp};
///
/// let dir = tempfile::tempdir()?;
/// let ledger = Ledger::open(dir.path())?;
/// let key = ed25519_dalek::SigningKey::from_bytes(&[1; 32]);
/// let me = ActorId::service_for_key(&key.verifying_key());
/// let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, me.clone(), Timestamp::now())
///     .sign(&key)?;
/// let scope = ScopeRef::Realm { realm_id: realm.id().retype() };
/// let note = EventBuilder::new("ak.note.create", scope, me, Timestamp::now_after([realm.created_at()]))
///     .sign(&key)?;
///
/// // The note waits for its realm, and is released when the realm arrives.
/// assert!(matches!(ledger.append(note.bytes())?, Appended::Pending { .. }));
/// let report = ledger.append_batch_report(&[realm.bytes()])?;
/// assert_eq!(report.released, vec![note.id()]);
/// assert_eq!(ledger.len(), 2);
/// assert_eq!(ledger.heads(), vec![note.id()]);
///
/// // Reopened, it holds the same.
/// drop(ledger);
/// assert_eq!(Ledger::open(dir.path())?.get(&note.id())?.map(|e| e.id()), Some(note.id()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Ledger {
    config: Config,
    verifier: Arc<Verifier>,
    pool: pool::VerifyPool,
    writer: Mutex<Writer>,
    reader: SegmentReader,
    state: RwLock<State>,
    /// Set when the state holds a batch whose log sync failed (`Ledger::commit` applies a
    /// batch while the log is synced): the state may then say more than the disk, and is
    /// read no more (reads fail as `Poisoned`, like writes after any failed commit).
    broken: AtomicBool,
    /// The ledger tree (PROFILE §13). Lock order: `state` before `tree`; a commit takes the
    /// tree's write lock before it lets go of the state's, so whoever saw an event admitted
    /// finds it in the tree.
    tree: RwLock<tree::Tree>,
    /// `None` when opened read-only.
    index: Option<Index>,
    exchanges: Mutex<exchanges::Exchanges>,
    /// The [`Ledger::watch_events`] subscribers.
    event_watchers: Mutex<watch::EventWatchers>,
    /// An in-memory ledger's disclosures (on disk: `DIR/disclosures.jsonl`).
    kept_disclosures: Mutex<Vec<crate::actors::Disclosure>>,
    opened: OpenReport,
    /// The root lock, held while the ledger is open (`None` in memory).
    _lock: Option<RootLock>,
}

struct Writer {
    log: SegmentLog,
    poisoned: bool,
    /// Log entries written so far (the acknowledged marker records it).
    entries: u64,
    /// The acknowledged marker (`None` when opened read-only).
    ack: Option<AckWriter>,
    /// `entries` when the state snapshot was last written (or the one loaded was taken).
    snapshot_entries: u64,
    /// `entries` when the graph file was last written (assumed written with the snapshot
    /// loaded, as a close writes both, when the file claims the log; 0 when it does not, so
    /// that the close writes it).
    graph_entries: u64,
    /// The tree size of the latest recorded checkpoint (`DIR/checkpoint`), 0 when none.
    checkpointed: u64,
    /// The periodic snapshot being synced and renamed on a thread of its own, so that the
    /// commit that wrote it does not wait for the disk, with `snapshot_entries` before it. The next
    /// snapshot, the close and the drop wait for it first; a write that failed is reported
    /// there, and the snapshot is due again.
    snapshot_writing: Option<(JoinHandle<Result<(), Error>>, u64)>,
    /// Bulk appends ([`Ledger::append_log`], [`Ledger::bulk_append`]) under way, on any
    /// threads: commits take no periodic snapshot until the last ends, and gather their
    /// index writes (see [`BulkAppend`]).
    bulk: u32,
    /// Committed batches' index writes gathered during a bulk append, written once they
    /// hold [`Config::bulk_index_records`] records, when the last bulk append ends, and
    /// before any snapshot (an index behind the snapshot would make an open ignore it).
    held: index::Held,
}

/// A bulk append under way ([`Ledger::bulk_append`]; [`Ledger::append_log`] takes one for
/// its own run). While it lives:
/// - commits take no periodic snapshot. Each would rewrite the whole state (three of them,
///   157 MB, while importing a million events) only to be replaced seconds later; the next
///   commit after the append, or the close, takes the one that is due. A process that dies
///   during the append reopens from the index, which an open prefers over a snapshot that
///   far behind ([`crate::limits::REPLAY_OVER_INDEX`]);
/// - commits gather their index writes and write them every
///   [`Config::bulk_index_records`] records, one sled transaction where there were dozens.
///   A process that dies during the append leaves the index behind the log by fewer
///   records than that, and the next open replays them from the log, as it does any log
///   entries sled had not flushed.
///
/// [`BulkAppend::end`] writes what is gathered and reports its error; a drop without it
/// (an append that failed) writes it too, and on an error leaves it to the next commit or
/// the close.
#[must_use = "the bulk append ends when this is dropped"]
pub struct BulkAppend<'a>(&'a Ledger);

impl<'a> BulkAppend<'a> {
    /// Counts the ledger's writer in a bulk append until the result is ended or dropped.
    pub(crate) fn start(ledger: &'a Ledger) -> Self {
        if let Ok(mut writer) = ledger.writer.lock() {
            writer.bulk = writer.bulk.saturating_add(1);
        }
        BulkAppend(ledger)
    }

    /// Ends the bulk append; when it was the last under way, writes the index writes
    /// gathered, and reports an error doing so (dropping it leaves them to the next commit
    /// or the close).
    pub fn end(self) -> Result<(), Error> {
        let ended = self.leave();
        std::mem::forget(self);
        ended
    }

    fn leave(&self) -> Result<(), Error> {
        let mut writer = self.0.writer.lock().map_err(|_| Error::Poisoned)?;
        writer.bulk = writer.bulk.saturating_sub(1);
        if writer.bulk > 0 {
            return Ok(());
        }
        self.0.write_held_index(&mut writer)
    }
}

impl Drop for BulkAppend<'_> {
    fn drop(&mut self) {
        let _ = self.leave();
    }
}

impl Writer {
    /// Waits for the periodic snapshot being written, if any. When its write failed, the
    /// snapshot is due again and the error is returned.
    fn finish_snapshot_write(&mut self) -> Result<(), Error> {
        let Some((writing, before)) = self.snapshot_writing.take() else {
            return Ok(());
        };
        let written = writing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if written.is_err() {
            self.snapshot_entries = before;
        }
        written
    }

    /// Records that the log is acknowledged up to its current end.
    fn mark_acknowledged(&self) -> Result<(), Error> {
        let Some(ack) = &self.ack else {
            return Ok(());
        };
        ack.write(Acked {
            high: self.log.high_water(),
            entries: self.entries,
        })
        .map_err(|(path, source)| Error::Io { path, source })
    }
}

impl Drop for Writer {
    /// Best effort, Buffered mode: make the log durable, then record it as acknowledged.
    fn drop(&mut self) {
        // A snapshot still being written is finished before the ledger's lock is let go.
        if let Some((writing, _)) = self.snapshot_writing.take() {
            let _ = writing.join();
        }
        let buffered = self.log.durability() == Durability::Buffered;
        if buffered && !self.poisoned && self.ack.is_some() && self.log.sync().is_ok() {
            let _ = self.mark_acknowledged();
            if let Some(ack) = &self.ack {
                let _ = ack.sync();
            }
        }
    }
}

impl Drop for Ledger {
    /// Best effort: a state snapshot, when enough was written since the last one for the
    /// next open to gain from it (see [`Ledger::close`] to see its errors).
    fn drop(&mut self) {
        let _ = self.save_snapshot(SNAPSHOT_ON_CLOSE.min(self.config.snapshot_interval));
    }
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("dir", &self.config.dir)
            .field("len", &self.len())
            .finish()
    }
}

impl Ledger {
    /// Opens (or creates) the ledger in directory `dir` with the defaults of [`Config::new`].
    pub fn open(dir: impl AsRef<std::path::Path>) -> Result<Ledger, Error> {
        Ledger::open_with(Config::new(dir))
    }

    /// Opens (or creates) a ledger.
    pub fn open_with(mut config: Config) -> Result<Ledger, Error> {
        if let Some(path) = &config.keyring_file {
            let stored = keyring_file::load_or_new(path)?;
            config.keyring.merge(stored);
        }
        open::open(config)
    }

    /// What opening found and did (torn tail cut, entries replayed, index rebuilt).
    pub fn open_report(&self) -> &OpenReport {
        &self.opened
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The verifier (and through it the keyring) this ledger uses.
    pub fn verifier(&self) -> &Verifier {
        &self.verifier
    }

    /// Appends one event (see [`Ledger::append_batch`]).
    pub fn append(&self, bytes: &[u8]) -> Result<Appended, Error> {
        let mut out = self.append_batch(&[bytes])?;
        out.pop()
            .ok_or_else(|| Error::Misuse("empty batch result".into()))
    }

    /// Appends a batch of events: verified in parallel, then decided in order (each event
    /// sees the earlier ones), written to the log with one fdatasync, indexed, and made
    /// visible at once. Returns one outcome per input, in order. Rejected events write
    /// nothing; an `Err` means nothing of the batch is acknowledged.
    pub fn append_batch<B: AsRef<[u8]> + Sync>(&self, items: &[B]) -> Result<Vec<Appended>, Error> {
        self.append_batch_report(items)
            .map(|report| report.outcomes)
    }

    /// [`Ledger::append_batch`], also reporting what the batch did beyond its own items: the
    /// pending events it released (admitted now, in admission order) and those rejected on
    /// release.
    pub fn append_batch_report<B: AsRef<[u8]> + Sync>(
        &self,
        items: &[B],
    ) -> Result<AppendReport, Error> {
        check_batch_bounds(items.len(), items.iter().map(|b| b.as_ref().len()).sum())?;
        self.check_writable()?;
        let verified = if items.len() < 2 {
            pool::Verified::here(verify_batch::verify_part(items, &self.verifier))
        } else {
            let shared = items.iter().map(|b| Arc::from(b.as_ref())).collect();
            self.pool.submit(pool::Items::Each(shared), 1).wait()
        };
        self.decide_and_commit(verified, None)
    }

    /// Appends events verified already: made with `EventBuilder::sign_verified` (or
    /// `SidecarAuthor::sign_verified`) against [`Ledger::verifier`], or verified by the
    /// caller. They are decided, written and reported as [`Ledger::append_batch_report`]
    /// does, without being parsed or their signatures checked again; their proof's binding
    /// and authorization checks run again against this ledger's verifier (cheap, and the
    /// event may have been verified against another keyring), and an event they refuse is
    /// rejected with its code. For a producer that admits what it makes, such as the
    /// sidecar runtime.
    pub fn append_verified(&self, events: Vec<Event>) -> Result<AppendReport, Error> {
        check_batch_bounds(events.len(), events.iter().map(|e| e.bytes().len()).sum())?;
        self.check_writable()?;
        let verdicts = events
            .into_iter()
            .map(|e| e.check_authorized(&self.verifier).map(|()| e))
            .collect();
        self.decide_and_commit(pool::Verified::here(verdicts), None)
    }

    /// Refuses writes to a ledger opened read-only.
    fn check_writable(&self) -> Result<(), Error> {
        if self.config.read_only {
            return Err(Error::ReadOnly {
                path: self.config.dir.clone(),
            });
        }
        Ok(())
    }

    /// A pipeline for one caller's stream of batches (import, audit): each batch is verified
    /// on the pool while the previous one is committed.
    pub fn pipeline(&self) -> Pipeline<'_> {
        Pipeline::new(self)
    }

    /// A pipeline that keeps `ahead` batches verifying while one commits (at least 1;
    /// [`Ledger::pipeline`] is `pipeline_ahead(1)`): a push returns the outcomes of the
    /// batch pushed `ahead` pushes before, and [`Pipeline::finish_all`] those of the rest.
    /// With at least one batch ahead per verification thread, each batch is verified whole
    /// by one worker (one signature batch, cheaper per signature than halves of it). Two
    /// keep two workers busy while the committing thread reads the next batch, and three
    /// while it also syncs — what [`Ledger::append_log`] (and so `akledger audit` and
    /// `import`) uses.
    pub fn pipeline_ahead(&self, ahead: usize) -> Pipeline<'_> {
        Pipeline::ahead(self, ahead)
    }

    /// The pipeline a long stream of batches takes (an appended log, the events a sync
    /// receives): [`LOG_BATCHES_AHEAD`](crate::limits::LOG_BATCHES_AHEAD) batches verifying
    /// while one commits, one more on disk, where each commit also waits for its fdatasync.
    pub(crate) fn stream_pipeline(&self) -> Pipeline<'_> {
        use crate::limits::{LOG_BATCHES_AHEAD, LOG_BATCHES_AHEAD_ON_DISK};
        self.pipeline_ahead(match self.config.in_memory {
            true => LOG_BATCHES_AHEAD,
            false => LOG_BATCHES_AHEAD_ON_DISK,
        })
    }

    /// Decides verified events in order against the committed state and commits them.
    /// With `origins`, the offsets in their file of the log entries it stages go to the
    /// log (see [`pipeline::Origins`]).
    fn decide_and_commit(
        &self,
        verified: pool::Verified,
        origins: Option<pipeline::Origins>,
    ) -> Result<AppendReport, Error> {
        let pool::Verified { verdicts, parsed } = verified;
        // The origin of each staged entry (the item whose decision staged it), and its hash.
        let mut entry_offsets = Vec::new();
        let mut entry_hashes = Vec::new();
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        if writer.poisoned {
            return Err(Error::Poisoned);
        }
        let (outcomes, staged, first) = {
            let state = self.state.read().map_err(|_| Error::Poisoned)?;
            let mut decider = Decider::new(&state, &self.reader)
                .expecting(verdicts.len())
                .limit_pending(
                    self.config.max_pending_events,
                    self.config.max_pending_bytes,
                );
            let outcomes: Vec<Appended> = verdicts
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Ok(event) => {
                        let before = decider.staged_entries();
                        let outcome = decider.decide(event, Source::New);
                        if let Some(o) = &origins {
                            if decider.staged_entries() > before {
                                entry_offsets.push(o.offsets.get(i).copied().flatten());
                                // One hash per item: the pipeline keeps no others.
                                if let Some(hashes) = &o.hashes {
                                    entry_hashes.push(hashes.get(i).copied().unwrap_or(0));
                                }
                            }
                        }
                        outcome
                    }
                    Err(rejection) => Appended::Rejected {
                        id: None,
                        rejection,
                    },
                })
                .collect();
            (outcomes, decider.finish()?, state.len() as u64)
        };
        // The writer lock held since before deciding: the batch's admissions are the next
        // positions.
        let report = AppendReport::of(outcomes, &staged, first);
        let from = origins.as_ref().map(|o| ReadFrom {
            source: &o.source,
            offsets: entry_offsets.as_slice(),
            hashes: o.hashes.as_ref().map(|_| entry_hashes.as_slice()),
        });
        let result = self.commit(&mut writer, staged, from);
        self.pool.free(parsed);
        if result.is_err() {
            writer.poisoned = true;
        }
        result.map(|()| report)
    }

    /// Writes a decided batch: the log, then the in-memory state while the log's sync is
    /// under way (unseen until it succeeds: the state stays locked through the sync), then
    /// the exchanges, the tree and sled. `from`: the file the entries were read from, and
    /// each one's offset there.
    fn commit(
        &self,
        writer: &mut Writer,
        mut staged: state::Staged,
        from: Option<ReadFrom<'_>>,
    ) -> Result<(), Error> {
        let new_events = std::mem::take(&mut staged.entries);
        let entries: Vec<(u8, &[u8])> = new_events
            .iter()
            .map(|e| (ENTRY_EVENT, e.bytes()))
            .collect();
        let from = from.filter(|from| {
            from.offsets.len() == entries.len()
                && from.hashes.is_none_or(|h| h.len() == entries.len())
        });
        let mut state = self.state.write().map_err(|_| Error::Poisoned)?;
        let first = state.len();
        // What the exchanges and the event feeds are handed: the events of a sidecar's scope
        // (the only ones the exchanges read), or all of them when a feed is open (decided
        // under the state lock, which a new feed takes to subscribe).
        let watched = self.has_event_watchers();
        let admitted: Vec<Event> = staged
            .admitted
            .iter()
            .filter(|a| watched || a.event.scope().sidecar_id().is_some())
            .map(|a| a.event.clone())
            .collect();
        // Applied while the disk writes the batch back (see `SegmentLog::append_batch_from`).
        let mut applied = false;
        let appended = writer.log.append_batch_from(&entries, from, |entry_at| {
            applied = true;
            let changes = index::Changes::of(&staged, entry_at);
            state
                .apply(staged, entry_at)
                .map(|records| (records, changes))
        });
        let (records, changes) = match appended {
            Ok((_, Ok(done))) => done,
            Ok((_, Err(misuse))) => return Err(Error::Misuse(misuse)),
            Err(e) => {
                // The state holds a batch that may not be on disk: nothing reads it again.
                if applied {
                    self.broken.store(true, Ordering::SeqCst);
                }
                return Err(log_error(e));
            }
        };
        let high_water = writer.log.high_water();
        if !entries.is_empty() {
            writer.entries += entries.len() as u64;
            if self.config.durability == Durability::Sync {
                writer.mark_acknowledged()?;
            }
        }
        drop(entries);
        drop(new_events);
        if let Ok(mut exchanges) = self.exchanges.lock() {
            exchanges.on_admitted(
                &admitted,
                &state,
                &self.verifier.keyring(),
                &self.reader,
                self.config.verify_threads,
            );
            self.build_watched(&state, &mut exchanges);
        }
        if watched {
            self.announce_admitted(first, &admitted);
        }
        let mut tree = self.tree.write().map_err(|_| Error::Poisoned)?;
        // A lazy tree (an in-memory ledger's) is built when read (`Ledger::tree_now`).
        if !tree.is_lazy() {
            let new_ids = state.ids.raw().get(first..).unwrap_or_default().to_vec();
            drop(state);
            tree.append(&new_ids)?;
        }
        drop(tree);
        self.index_batch(writer, first, &records, &changes, high_water)?;
        self.checkpoint_if_due(writer)?;
        if writer.bulk > 0 {
            return Ok(());
        }
        // A snapshot rewrites the whole state: spaced by a share of the ledger once that is
        // larger, the snapshots of a growing ledger write a bounded multiple of its final
        // state (a fixed spacing wrote 19 GB of snapshots while importing 10 M events).
        let every = self
            .config
            .snapshot_interval
            .max(writer.entries / SNAPSHOT_SHARE);
        self.snapshot_if_due(writer, every, false)
    }

    /// Closes the ledger: everything acknowledged is already durable; this also writes the
    /// state snapshot the next open loads (when anything was written since the last one)
    /// and reports its errors, which dropping the ledger cannot.
    pub fn close(self) -> Result<(), Error> {
        self.save_snapshot(1)
    }

    /// On close: writes the state snapshot and the graph file, each when at least
    /// `min_entries` log entries were written since it was last written (never for a
    /// read-only, in-memory or poisoned ledger).
    fn save_snapshot(&self, min_entries: u64) -> Result<(), Error> {
        if self.config.read_only || self.config.in_memory {
            return Ok(());
        }
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        if writer.poisoned {
            return Err(Error::Poisoned);
        }
        self.write_held_index(&mut writer)?;
        self.snapshot_if_due(&mut writer, min_entries, true)
    }

    /// Starts a bulk append, for a caller that feeds many batches in a row itself (through
    /// a [`Pipeline`], say, as a replication drain does): until the result is ended or
    /// dropped, commits take no periodic snapshot and gather their index writes
    /// ([`BulkAppend`]), as [`Ledger::append_log`] does for its own run. What is committed
    /// stays durable and visible as before; only the derived index and snapshot are
    /// written later. For a bounded run: a writer that stays in a bulk append forever
    /// takes no periodic snapshot, and its open after a crash loads the index instead.
    pub fn bulk_append(&self) -> BulkAppend<'_> {
        BulkAppend::start(self)
    }

    /// See [`crate::internals::index_and_log_marks`].
    #[cfg(feature = "internals")]
    pub(crate) fn index_and_log_marks(&self) -> Result<(Option<u64>, u64), Error> {
        let writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let index = match &self.index {
            Some(index) => index.high_water()?.map(|h| h.seq),
            None => None,
        };
        Ok((index, writer.log.high_water().seq))
    }

    /// The index writes of one batch committed to the log (records admitted at `first..`,
    /// its pending and rejection changes, the log's mark `high` after it): written at once,
    /// or during a bulk append gathered with those before them and written every
    /// [`Config::bulk_index_records`] records. Every batch the log takes goes through here,
    /// in log order, so the index's writes and marks never pass one another.
    fn index_batch(
        &self,
        writer: &mut Writer,
        first: usize,
        records: &[Record],
        changes: &index::Changes,
        high: HighWater,
    ) -> Result<(), Error> {
        let Some(index) = &self.index else {
            return Ok(());
        };
        writer.held.add(first, records, changes, high)?;
        if writer.bulk == 0 || writer.held.records() >= self.config.bulk_index_records {
            index.write_held(&mut writer.held)?;
        }
        Ok(())
    }

    /// Writes the index writes a bulk append gathered, if any, with the mark of the last.
    fn write_held_index(&self, writer: &mut Writer) -> Result<(), Error> {
        match &self.index {
            Some(index) => index.write_held(&mut writer.held),
            None => Ok(()),
        }
    }

    /// Writes the state snapshot when `min_entries` log entries were written since the last
    /// one, and on `closing` the graph file likewise. The graph file only serves queries on
    /// a closed ledger (a writer's lock keeps them out while it is open), and one taken
    /// before a crash is always older than the log after it, so checkpoints skip it.
    ///
    /// Both are written as they are encoded, a chunk at a time (`derived`). A snapshot
    /// taken while open is written here and synced and renamed on a thread of its own, so
    /// the commit that takes it does not wait for the disk; the one taken on `closing`, and
    /// the graph file, are in place before this returns.
    fn snapshot_if_due(
        &self,
        writer: &mut Writer,
        min_entries: u64,
        closing: bool,
    ) -> Result<(), Error> {
        let entries = writer.entries;
        let due = |since: u64| entries >= since.saturating_add(min_entries);
        let graph_due = closing && due(writer.graph_entries);
        if self.config.in_memory || !(due(writer.snapshot_entries) || graph_due) {
            return Ok(());
        }
        // The snapshot being written goes first: snapshots reach the disk in the order they
        // were taken, and one that failed is due again.
        writer.finish_snapshot_write()?;
        let snapshot_due = due(writer.snapshot_entries);
        // A snapshot never describes more than the durable log (Buffered appends are not
        // synced yet): an open that finds the log behind a snapshot knows the log lost
        // acknowledged events, and says so.
        if snapshot_due && writer.log.durability() == Durability::Buffered {
            writer.log.sync().map_err(log_error)?;
        }
        let high = writer.log.high_water();
        let dir = self.config.dir.as_path();
        if !closing && snapshot_due {
            let snapshot = self
                .read_state()?
                .write_snapshot(dir, high)
                .map_err(derived_error(dir, layout::SNAPSHOT))?;
            // Synced and renamed on a thread of its own: the commit does not wait for the disk.
            let to = dir.to_path_buf();
            let writing = std::thread::Builder::new()
                .name("akledger-snapshot".into())
                .spawn(move || {
                    snapshot
                        .persist(true)
                        .map_err(derived_error(&to, layout::SNAPSHOT))
                });
            let before = writer.snapshot_entries;
            match writing {
                Ok(writing) => writer.snapshot_writing = Some((writing, before)),
                // The OS would start no thread (and dropped the file with the closure):
                // written again, and synced, here.
                Err(_) => self
                    .read_state()?
                    .write_snapshot(dir, high)
                    .and_then(|file| file.persist(true))
                    .map_err(derived_error(dir, layout::SNAPSHOT))?,
            }
            writer.snapshot_entries = writer.entries;
            return Ok(());
        }
        {
            let guard = self.read_state()?;
            let state: &State = &guard;
            // Both are due at a close, when the verification workers are idle: the graph
            // file is encoded and written on a second thread meanwhile (a panic in it is
            // passed on; when both fail, the snapshot's error is the one returned). The
            // graph file is not synced: one that a machine crash left old or damaged fails
            // its checks and is not used.
            std::thread::scope(|scope| {
                let graph = graph_due.then(|| {
                    scope.spawn(|| {
                        state
                            .write_graph(dir, high)
                            .and_then(|file| file.persist(false))
                            .map_err(derived_error(dir, layout::GRAPH))
                    })
                });
                let snapshot = match snapshot_due {
                    true => state
                        .write_snapshot(dir, high)
                        .and_then(|file| file.persist(true))
                        .map_err(derived_error(dir, layout::SNAPSHOT)),
                    false => Ok(()),
                };
                let graph = graph.map_or(Ok(()), |writing| {
                    writing
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                });
                snapshot.and(graph)
            })?;
        }
        if snapshot_due {
            writer.snapshot_entries = writer.entries;
        }
        if graph_due {
            writer.graph_entries = writer.entries;
        }
        Ok(())
    }

    /// Waits for the periodic snapshot being written on its own thread (see
    /// [`Ledger::snapshot_if_due`]).
    #[cfg(feature = "internals")]
    pub(crate) fn finish_snapshot_write(&self) -> Result<(), Error> {
        self.writer
            .lock()
            .map_err(|_| Error::Poisoned)?
            .finish_snapshot_write()
    }

    /// Bytes of the log held in memory (an in-memory ledger's; see
    /// [`SegmentReader::bytes_in_memory`]).
    #[cfg(feature = "internals")]
    pub(crate) fn log_bytes_in_memory(&self) -> u64 {
        self.reader.bytes_in_memory()
    }

    /// Number of admitted events.
    pub fn len(&self) -> usize {
        self.read_state().map_or(0, |s| s.len())
    }

    /// True when nothing is admitted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The admitted event with this id.
    pub fn get(&self, id: &EventId) -> Result<Option<Event>, Error> {
        self.admitted_at(id)?
            .map(|at| self.read_event(at))
            .transpose()
    }

    /// Where the log holds the admitted event `id`.
    fn admitted_at(&self, id: &EventId) -> Result<Option<crate::store::log::LogPos>, Error> {
        let state = self.read_state()?;
        Ok(state.ids.get(id).and_then(|p| state.at.get(p.index())))
    }

    /// Admitted events in admission order.
    pub fn iter(&self) -> impl Iterator<Item = Result<Event, Error>> + '_ {
        self.iter_from(0)
    }

    /// Reads and re-parses an event this ledger stored. Its proof was verified before it
    /// was written to the checksummed log, so it is not verified again here.
    fn read_event(&self, at: crate::store::log::LogPos) -> Result<Event, Error> {
        self.reader.event(at)
    }

    pub(crate) fn read_state(&self) -> Result<std::sync::RwLockReadGuard<'_, State>, Error> {
        let state = self.state.read().map_err(|_| Error::Poisoned)?;
        match self.broken.load(Ordering::SeqCst) {
            true => Err(Error::Poisoned),
            false => Ok(state),
        }
    }
}

/// Refuses a batch over [`MAX_BATCH_EVENTS`] or [`MAX_BATCH_BYTES`] (caller misuse), before
/// any work.
fn check_batch_bounds(events: usize, bytes: usize) -> Result<(), Error> {
    if events > MAX_BATCH_EVENTS {
        return Err(Error::Misuse(format!(
            "a batch of {events} events is over the {MAX_BATCH_EVENTS}-event limit of one append; split it"
        )));
    }
    if bytes > MAX_BATCH_BYTES {
        return Err(Error::Misuse(format!(
            "a batch of {bytes} bytes is over the {MAX_BATCH_BYTES}-byte limit of one append; split it"
        )));
    }
    Ok(())
}

/// The error of writing the derived file `dir/name`.
fn derived_error(dir: &std::path::Path, name: &str) -> impl FnOnce(std::io::Error) -> Error {
    let path = dir.join(name);
    move |source| Error::Io { path, source }
}

/// Maps a log failure to the engine error.
pub(crate) fn log_error(e: LogError) -> Error {
    match e {
        LogError::Io { file, source } => Error::Io { path: file, source },
        LogError::Corrupt {
            file,
            offset,
            reason,
        } => Error::Corrupt {
            path: file,
            offset,
            reason,
        },
        LogError::Poisoned => Error::Poisoned,
        other => Error::Misuse(other.to_string()),
    }
}
