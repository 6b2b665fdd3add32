//! Opening a ledger: recover the log, load the index, replay the gap between the index's
//! high-water mark and the log, or rebuild the index from the log when it cannot be trusted.

use std::path::Path;
use std::sync::{Mutex, RwLock};

use crate::error::Error;
use crate::layout;
use crate::limits::REPLAY_OVER_INDEX;
use crate::proof::Verifier;
use crate::store::log::{
    HighWater, LogError, LogOptions, LogPos, RecoveryReport, SegmentLog, SegmentReader,
};
use crate::store::root::{read_acked, AckWriter, Acked, LockError, RootLock};

use super::index::{Changes, Held, Index};
use super::record::Record;
use super::replay::{replay, Sink};
use super::snapshot::{self, Snapshot};
use super::state::State;
use super::stored_checkpoint;
use super::tree::Tree;
use super::{log_error, Config, Ledger, Writer};

/// What opening found and did.
#[derive(Clone, Debug, Default)]
pub struct OpenReport {
    /// The log's recovery report (torn tail cut, segments).
    pub log: RecoveryReport,
    /// Log entries replayed into the index because they were past its high-water mark
    /// (on a read-only open: every entry, replayed into memory).
    pub replayed: u64,
    /// Why the index was rebuilt from the whole log, if it was.
    pub rebuilt: Option<String>,
    /// The ledger was opened read-only (nothing on disk was changed).
    pub read_only: bool,
    /// A read-only open found a writer holding the ledger and read beside it, without a
    /// lock: the log as far as its batches were whole, with the state snapshot and stored
    /// checkpoint taken before it (never the index, which the writer is changing). A batch
    /// being written is left for the next open, and is not reported as a torn tail; nor
    /// is a tree file the writer has not extended yet.
    pub beside_writer: bool,
    /// The state was loaded from the state snapshot taken after this log batch (entries
    /// after it were replayed from the log).
    pub snapshot: Option<u64>,
    /// Why a state snapshot present in the directory was not used, if it was not.
    pub snapshot_ignored: Option<String>,
    /// Why the index was rewritten from the state snapshot, if it was (instead of being
    /// rebuilt from the whole log: see [`OpenReport::rebuilt`]).
    pub index_from_snapshot: Option<String>,
    /// What was done to the ledger tree's file (`DIR/tree`), if anything: events added that
    /// it lacked, or why it was rebuilt from the admission order (read-only: built in
    /// memory).
    pub tree: Option<String>,
}

impl OpenReport {
    /// One sentence per recovery action taken (or, read-only, left undone), for people.
    pub fn actions(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(t) = &self.log.torn_tail {
            out.push(format!(
                "cut a torn tail: {} now ends at byte {} ({} bytes of an unacknowledged batch dropped: {})",
                t.file.display(),
                t.offset,
                self.log.bytes_dropped,
                t.reason
            ));
        }
        if let Some(t) = self
            .log
            .torn_tail_left
            .as_ref()
            .filter(|_| !self.beside_writer)
        {
            out.push(format!(
                "ignored a torn tail after byte {} of {} (read-only open; left on disk: {})",
                t.offset,
                t.file.display(),
                t.reason
            ));
        }
        if let Some(why) = &self.snapshot_ignored {
            out.push(format!("ignored the state snapshot: {why}"));
        }
        if let Some(why) = &self.index_from_snapshot {
            out.push(format!("rewrote the index from the state snapshot: {why}"));
        }
        if let Some(what) = &self.tree {
            out.push(what.clone());
        }
        if let Some(why) = &self.rebuilt {
            out.push(format!("rebuilt the index from the log: {why}"));
        } else if self.replayed > 0 && !self.read_only && self.snapshot.is_none() {
            out.push(format!(
                "replayed {} log entries the index had not recorded yet",
                self.replayed
            ));
        }
        out
    }
}

pub fn open(config: Config) -> Result<Ledger, Error> {
    if config.in_memory {
        return open_in_memory(config);
    }
    let dir = config.dir.clone();
    if !config.read_only {
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
    }
    // The root lock comes before anything else is touched. A reader that finds a writer
    // holding it reads beside the writer, unlocked (`None`).
    let lock = if config.read_only {
        RootLock::shared(&dir, crate::limits::READER_LOCK_PATIENCE)
            .map(Some)
            .or_else(|e| match e {
                LockError::Held => Ok(None),
                LockError::Io(path, source) => Err(Error::Io { path, source }),
            })?
    } else {
        Some(RootLock::exclusive(&dir).map_err(|e| match e {
            LockError::Held => Error::AlreadyOpen { path: dir.clone() },
            LockError::Io(path, source) => Error::Io { path, source },
        })?)
    };
    let beside_writer = lock.is_none();
    // Beside a writer, what the writer records of its log — the acknowledged marker, the
    // stored checkpoint, the state snapshot — is read before the log: the writer records
    // each only once the log holds what it describes, so the log read after them extends
    // all three, and none of them can look ahead of it.
    let acked = read_acked(&dir).map_err(|(path, source)| Error::Io { path, source })?;
    let stored_checkpoint = stored_checkpoint::read(&dir)?;
    let early_snapshot = beside_writer.then(|| snapshot::read(&dir));
    // Otherwise the state snapshot is read, checked and decoded while the log is
    // recovered: neither needs the other, and on a large ledger each is a good part of the
    // open.
    std::thread::scope(|scope| {
        let snapshot = scope.spawn(|| early_snapshot.unwrap_or_else(|| snapshot::read(&dir)));
        let opts = LogOptions {
            segment_size: config.segment_size,
            durability: config.durability,
            verify_on_open: false,
            read_only: config.read_only,
            acknowledged: acked.map(|a| a.high),
            cached_tail: config.cached_tail,
            ..LogOptions::default()
        };
        let (mut log, recovery) = match SegmentLog::open(dir.join(layout::LOG), opts.clone()) {
            Ok(opened) => opened,
            Err(e @ LogError::BehindAcknowledged { .. }) => {
                return Err(missing_acknowledged(e, acked, &dir, &opts))
            }
            Err(e) => return Err(log_error(e)),
        };
        let reader = log.reader();
        // Replayed log batches are parsed on the threads that verify appends.
        let threads = config.verify_threads;
        let found = snapshot
            .join()
            .unwrap_or_else(|_| Err("reading it failed (its thread panicked)".into()));
        if let Ok(Some(snap)) = &found {
            if let Some(reason) = snap.outlived_by(&reader, log.high_water()) {
                return Err(Error::Corrupt {
                    path: dir.join(layout::SNAPSHOT),
                    offset: 0,
                    reason,
                });
            }
        }
        let mut report = OpenReport {
            log: recovery,
            read_only: config.read_only,
            beside_writer,
            ..OpenReport::default()
        };
        let (state, index, entries) = if config.read_only {
            let log_high = log.high_water();
            let mut nowhere = |_: usize, _: &[Record], _: &Changes, _: HighWater| Ok(());
            let replayed = usable_snapshot(found, &reader, log_high, &mut report)
                .and_then(|snap| from_snapshot(snap, &reader, threads, &mut nowhere, &mut report));
            let state = match replayed {
                Some(state) => state,
                None => {
                    // Beside a writer the index is changing under the copy: the log is
                    // replayed whole instead.
                    let index = (!beside_writer).then(|| read_index(&dir, log_high));
                    let (mut state, start) = match index.flatten() {
                        Some((state, high)) => (state, Some(high)),
                        None => (State::default(), None),
                    };
                    report.replayed =
                        replay(&reader, &mut state, start, None, threads, &mut nowhere)?.entries;
                    state
                }
            };
            let entries = entries_in_log(&reader, acked, log_high)?;
            (state, None, entries)
        } else {
            let index = open_index(&dir, &mut report)?;
            super::derived::remove_temporaries(&dir);
            let log_high = log.high_water();
            let mut persist =
                |first: usize, records: &[Record], changes: &Changes, high: HighWater| {
                    index.persist(first, records, changes, high)
                };
            let snap = match usable_snapshot(found, &reader, log_high, &mut report) {
                Some(snap) => index_covering(&index, snap, &reader, &mut report)?,
                None => None,
            };
            let replayed = snap
                .and_then(|snap| from_snapshot(snap, &reader, threads, &mut persist, &mut report));
            let state = match replayed {
                Some(state) => state,
                None => {
                    let (mut state, start) = match load(&index, log_high) {
                        Ok(loaded) => loaded,
                        Err(why) => {
                            index.clear()?;
                            report.rebuilt.get_or_insert(why);
                            (State::default(), None)
                        }
                    };
                    report.replayed =
                        replay(&reader, &mut state, start, None, threads, &mut persist)?.entries;
                    state
                }
            };
            let entries = entries_in_log(&reader, acked, log_high)?;
            (state, Some(index), entries)
        };
        let (mut tree, tree_report) = Tree::open(&dir, state.ids.raw(), config.read_only)?;
        report.tree = tree_report.filter(|_| !beside_writer);
        let checkpointed = match stored_checkpoint {
            Some(checkpoint) => {
                stored_checkpoint::check(
                    &dir,
                    &mut tree,
                    &checkpoint,
                    state.ids.raw(),
                    config.read_only,
                    &mut report.tree,
                )?;
                checkpoint.size()
            }
            None => 0,
        };
        let ack = if config.read_only {
            None
        } else {
            let ack = AckWriter::open(&dir).map_err(|(path, source)| Error::Io { path, source })?;
            mark_recovered(&mut log, &ack, acked, entries)?;
            Some(ack)
        };
        let snapshot_entries = match report.snapshot {
            Some(_) => entries.saturating_sub(report.replayed),
            None => 0,
        };
        // A graph file that does not describe this log (none, an older version, another
        // log's) is written anew by the close, even when nothing is written.
        let graph_entries = if super::graph_file::claims(&dir, log.high_water()) {
            snapshot_entries
        } else {
            0
        };
        let writer = Writer {
            log,
            poisoned: false,
            entries,
            ack,
            snapshot_entries,
            graph_entries,
            checkpointed,
            snapshot_writing: None,
            bulk: 0,
            held: Held::default(),
        };
        Ok(assemble(config, writer, (state, tree), index, report, lock))
    })
}

/// A [`Config::in_memory`] ledger: an empty log in memory, and nothing on disk.
fn open_in_memory(config: Config) -> Result<Ledger, Error> {
    if config.read_only {
        return Err(Error::Misuse(
            "an in-memory ledger cannot be read-only: it starts empty".into(),
        ));
    }
    let log = SegmentLog::in_memory(LogOptions {
        segment_size: config.segment_size,
        durability: super::Durability::Buffered,
        verify_on_open: false,
        read_only: false,
        acknowledged: None,
        cached_tail: None,
        ..LogOptions::default()
    })
    .map_err(log_error)?;
    let writer = Writer {
        log,
        poisoned: false,
        entries: 0,
        ack: None,
        snapshot_entries: 0,
        graph_entries: 0,
        checkpointed: 0,
        snapshot_writing: None,
        bulk: 0,
        held: Held::default(),
    };
    Ok(assemble(
        config,
        writer,
        (State::default(), Tree::lazy()),
        None,
        OpenReport::default(),
        None,
    ))
}

/// The ledger over an opened log and its state.
fn assemble(
    config: Config,
    writer: Writer,
    (state, tree): (State, Tree),
    index: Option<Index>,
    report: OpenReport,
    lock: Option<RootLock>,
) -> Ledger {
    let verifier = std::sync::Arc::new(Verifier::new(config.keyring.clone()));
    Ledger {
        pool: super::pool::VerifyPool::new(std::sync::Arc::clone(&verifier), config.verify_threads),
        verifier,
        config,
        reader: writer.log.reader(),
        writer: Mutex::new(writer),
        state: RwLock::new(state),
        broken: std::sync::atomic::AtomicBool::new(false),
        tree: RwLock::new(tree),
        index,
        exchanges: Mutex::default(),
        event_watchers: Mutex::default(),
        kept_disclosures: Mutex::default(),
        opened: report,
        _lock: lock,
    }
}

/// The state snapshot `found` in the ledger directory, when there is one that fits the log.
fn usable_snapshot(
    found: Result<Option<Snapshot>, String>,
    reader: &SegmentReader,
    log_high: HighWater,
    report: &mut OpenReport,
) -> Option<Snapshot> {
    let checked = found.and_then(|found| {
        let Some(snap) = found else {
            return Ok(None);
        };
        snap.fits(reader, log_high)?;
        Ok(Some(snap))
    });
    checked.unwrap_or_else(|why| {
        report.snapshot_ignored = Some(why);
        None
    })
}

/// `snap`, when the index covers it and loading it is the shorter way to the log's end.
/// sled is written every batch, the snapshot at checkpoints: an empty index (removed, or
/// found damaged and removed) is rewritten from the snapshot's state, which the log has
/// just vouched for, instead of being rebuilt from the whole log. An index that holds rows
/// but is behind the snapshot (sled had not flushed when the process died, or it was
/// restored from a backup) wins: the snapshot is not used, and the log after the index's
/// mark is replayed into it. So does an index so far ahead of the snapshot that replaying
/// the log between them would take longer than loading the index
/// ([`REPLAY_OVER_INDEX`]): a bulk append takes no snapshot until it ends, so a process
/// that died during one left the index as its only recent state.
fn index_covering(
    index: &Index,
    snap: Snapshot,
    reader: &SegmentReader,
    report: &mut OpenReport,
) -> Result<Option<Snapshot>, Error> {
    let start = LogPos::new(0, 0);
    match index.high_water() {
        Ok(Some(h)) if h.seq >= snap.high.seq => {
            let after = reader.bytes_between(snap.high.end, h.end);
            let before = reader.bytes_between(start, snap.high.end);
            if after.saturating_mul(REPLAY_OVER_INDEX) <= before {
                return Ok(Some(snap));
            }
            report.snapshot_ignored = Some(format!(
                "the index is {after} log bytes ahead of it, against {before} before it: loading the index is shorter than replaying them"
            ));
            Ok(None)
        }
        Ok(Some(h)) => {
            report.snapshot_ignored = Some(format!(
                "the index covers batch {} only, and it is kept (restored, or not flushed before the process ended)",
                h.seq
            ));
            Ok(None)
        }
        Ok(None) => {
            index.seed(&snap.state, snap.high)?;
            // The index was not rebuilt from the log after all.
            let why = report
                .rebuilt
                .take()
                .unwrap_or("the index was empty".into());
            report.index_from_snapshot = Some(why);
            Ok(Some(snap))
        }
        // Unreadable: the load below finds out and rebuilds from the log.
        Err(e) => {
            report.snapshot_ignored = Some(format!("the index's mark is unreadable ({e})"));
            Ok(None)
        }
    }
}

/// The snapshot's state with the log entries after it replayed into `sink`; `None` (and
/// the reason in the report) when that replay fails, so the caller opens without it.
fn from_snapshot(
    snap: Snapshot,
    reader: &SegmentReader,
    threads: usize,
    sink: &mut Sink<'_>,
    report: &mut OpenReport,
) -> Option<State> {
    let mut state = snap.state;
    match replay(reader, &mut state, Some(snap.high), None, threads, sink) {
        Ok(done) => {
            report.replayed = done.entries;
            report.snapshot = Some(snap.high.seq);
            Some(state)
        }
        Err(e) => {
            report.snapshot_ignored = Some(format!("replaying the log after it failed: {e}"));
            None
        }
    }
}

/// For a read-only open: the index's state, read from a private copy of `index/` in the
/// temporary directory (sled rewrites its files whenever it opens them, so the ledger's own
/// copy is never opened read-only). `None` — and the caller replays the whole log in
/// memory — when there is no index, it cannot be copied (a full temporary disk) or it
/// cannot be used. Nothing in the ledger directory is created, changed or removed.
fn read_index(dir: &Path, log_high: HighWater) -> Option<(State, HighWater)> {
    let path = dir.join(layout::INDEX);
    if !path.join("db").is_file() {
        return None;
    }
    let scratch = tempfile::tempdir().ok()?;
    copy_tree(&path, scratch.path()).ok()?;
    let index = Index::open(scratch.path()).ok()?;
    let (state, high) = load(&index, log_high).ok()?;
    Some((state, high?))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Opens the index; one that sled cannot open (damaged files, the empty snapshot sled
/// leaves after a full disk) or that was written in an older layout is derived data: it is
/// removed (a directory removal, not a key-by-key clear) and rebuilt. Failures of the
/// environment (full disk, read-only media, permissions) are reported.
fn open_index(dir: &Path, report: &mut OpenReport) -> Result<Index, Error> {
    let path = dir.join(layout::INDEX);
    let why = match Index::open(&path) {
        Ok(index) => match index.stale_layout() {
            None => return Ok(index),
            Some(why) => why,
        },
        Err(Error::Io { source, .. }) if is_environmental(&source) => {
            return Err(Error::Io { path, source })
        }
        Err(e) => format!("the index could not be opened ({e})"),
    };
    match std::fs::remove_dir_all(&path) {
        Ok(()) => {}
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(Error::Io { path, source }),
    }
    report.rebuilt = Some(format!("{why}; it was removed"));
    Index::open(&path)
}

fn is_environmental(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::StorageFull | K::ReadOnlyFilesystem | K::PermissionDenied | K::QuotaExceeded
    )
}

/// Log entries in the whole log: from the acknowledged marker on when it is usable, so
/// only the entries written after it are read.
fn entries_in_log(
    reader: &SegmentReader,
    acked: Option<Acked>,
    log_high: HighWater,
) -> Result<u64, Error> {
    let (base, iter) = match acked {
        Some(a) if a.high.seq == log_high.seq => return Ok(a.entries),
        Some(a) if a.high.seq < log_high.seq => (a.entries, reader.iter_from(a.high.end)),
        _ => (0, reader.iter()),
    };
    let mut n = base;
    for entry in iter {
        entry.map_err(log_error)?;
        n += 1;
    }
    Ok(n)
}

/// A log that holds batches past the acknowledged marker (a ledger written before the
/// marker existed, or a tail written but not yet marked when its process ended) is made
/// durable, then marked up to its end: each later open then counts entries from the mark
/// instead of reading the whole log. Nothing is claimed that the disk does not hold.
fn mark_recovered(
    log: &mut SegmentLog,
    ack: &AckWriter,
    acked: Option<Acked>,
    entries: u64,
) -> Result<(), Error> {
    let high = log.high_water();
    if high.seq == 0 || acked.is_some_and(|a| a.high.seq >= high.seq) {
        return Ok(());
    }
    log.sync().map_err(log_error)?;
    let io = |(path, source)| Error::Io { path, source };
    ack.write(Acked { high, entries }).map_err(io)?;
    ack.sync().map_err(io)
}

/// The error for a log that holds less than was acknowledged, counting what is missing.
fn missing_acknowledged(e: LogError, acked: Option<Acked>, dir: &Path, opts: &LogOptions) -> Error {
    let LogError::BehindAcknowledged {
        file,
        offset,
        log_seq,
        acknowledged_seq,
    } = e
    else {
        return log_error(e);
    };
    let look = LogOptions {
        read_only: true,
        acknowledged: None,
        ..opts.clone()
    };
    let held = SegmentLog::open(dir.join(layout::LOG), look)
        .ok()
        .map(|(log, _)| log.iter().take_while(Result::is_ok).count() as u64);
    let missing = match (acked, held) {
        (Some(a), Some(held)) => format!(
            "{} acknowledged events are missing",
            a.entries.saturating_sub(held)
        ),
        _ => "acknowledged events are missing".to_string(),
    };
    Error::Corrupt {
        path: file,
        offset,
        reason: format!(
            "the log ends at batch {log_seq} but batches up to {acknowledged_seq} were acknowledged (per the marker file `{}`): {missing}. Nothing was cut, rebuilt or changed; restore the log from a backup",
            layout::ACKED
        ),
    }
}

/// Loads the state the index holds; `Err` says why the index must be rebuilt instead.
fn load(index: &Index, log_high: HighWater) -> Result<(State, Option<HighWater>), String> {
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
    index.load(&mut state)?;
    Ok((state, Some(high)))
}
