//! Ledger configuration (builder-lite): where it lives, how durable, which keys.

use std::path::{Path, PathBuf};

use crate::keyring::Keyring;
use crate::limits::{
    BULK_INDEX_RECORDS, DEFAULT_MAX_PENDING_BYTES, DEFAULT_MAX_PENDING_EVENTS, SNAPSHOT_INTERVAL,
};
use crate::store::log::{Durability, DEFAULT_CACHED_TAIL, DEFAULT_SEGMENT_SIZE};

/// How to open a ledger.
#[derive(Clone, Debug)]
pub struct Config {
    /// Empty for an in-memory ledger.
    pub(crate) dir: PathBuf,
    pub(crate) in_memory: bool,
    pub(crate) durability: Durability,
    pub(crate) keyring: Keyring,
    pub(crate) keyring_file: Option<PathBuf>,
    pub(crate) segment_size: u64,
    pub(crate) cached_tail: Option<u64>,
    pub(crate) verify_threads: usize,
    pub(crate) read_only: bool,
    pub(crate) max_pending_events: usize,
    pub(crate) max_pending_bytes: usize,
    pub(crate) snapshot_interval: u64,
    pub(crate) bulk_index_records: usize,
    /// The ledger tree's origin (PROFILE §13); `None`: the default.
    pub(crate) origin: Option<String>,
    /// Record a checkpoint every so many admitted events, signed with this key.
    pub(crate) checkpoint_every: Option<(u64, crate::ed25519_dalek::SigningKey)>,
}

impl Config {
    /// A ledger in directory `dir` (created if missing): durable appends (one fdatasync per
    /// batch), an empty keyring, 64 MiB log segments, verification on every core.
    pub fn new(dir: impl AsRef<Path>) -> Self {
        Config {
            dir: dir.as_ref().to_owned(),
            in_memory: false,
            durability: Durability::Sync,
            keyring: Keyring::new(),
            keyring_file: None,
            segment_size: DEFAULT_SEGMENT_SIZE,
            cached_tail: Some(DEFAULT_CACHED_TAIL),
            verify_threads: std::thread::available_parallelism().map_or(1, usize::from),
            read_only: false,
            max_pending_events: DEFAULT_MAX_PENDING_EVENTS,
            max_pending_bytes: DEFAULT_MAX_PENDING_BYTES,
            snapshot_interval: SNAPSHOT_INTERVAL as u64,
            bulk_index_records: BULK_INDEX_RECORDS,
            origin: None,
            checkpoint_every: None,
        }
    }

    /// A ledger that lives in memory only and starts empty: its log is held in memory (the
    /// same frames as on disk, without their checksums: memory neither tears nor rots), it keeps no index on disk, no snapshot, no lock
    /// and no acknowledged marker, and nothing it holds outlives it. For reading a log
    /// without writing a copy of it — what `akledger audit` does — and for tests. It costs
    /// the bytes of every accepted event in memory; everything else behaves as on disk
    /// (admission, pending events, queries, the exchange fold). It cannot be read-only.
    pub fn in_memory() -> Self {
        Config {
            in_memory: true,
            durability: Durability::Buffered,
            ..Config::new("")
        }
    }

    /// True for a ledger made with [`Config::in_memory`].
    pub fn is_in_memory(&self) -> bool {
        self.in_memory
    }

    /// Opens without modifying any file: a shared lock on `DIR/lock` (so writers wait for
    /// readers and readers for the writer), no torn tail cut, the index read from a private
    /// copy in the temporary directory (sled rewrites files it opens) and never rebuilt —
    /// without a usable copy the log is replayed in memory — appends refused with
    /// [`crate::Error::ReadOnly`]. Works on read-only media and on a full disk.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Whether the ledger opens read-only ([`Config::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Most events held pending at once; a new event past it is refused with
    /// `pending_limit_exceeded` (events replayed from the log are never refused).
    pub fn max_pending_events(mut self, events: usize) -> Self {
        self.max_pending_events = events;
        self
    }

    /// Most bytes of pending events held at once (see [`Config::max_pending_events`]).
    pub fn max_pending_bytes(mut self, bytes: usize) -> Self {
        self.max_pending_bytes = bytes;
        self
    }

    /// `Durability::Buffered` skips the per-batch fdatasync: a machine crash may lose the
    /// unsynced tail (a process crash loses nothing); what was synced is never corrupted.
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Keys authorized for non-self-certifying principals, and sidecar keys for the fold.
    pub fn keyring(mut self, keyring: Keyring) -> Self {
        self.keyring = keyring;
        self
    }

    /// A keyring file (PROFILE §11; the CLI's `DIR/keyring.json`) the ledger loads at open,
    /// adding its keys to [`Config::keyring`]'s, and rewrites — atomically, under the file's
    /// lock ([`crate::ledger::keyring_file`]) — whenever [`crate::Ledger::add_sidecar_key`]
    /// or [`crate::Ledger::authorize`] adds a key. A missing file reads as empty and is
    /// created on the first added key. A read-only ledger never writes it.
    pub fn keyring_file(mut self, path: impl AsRef<Path>) -> Self {
        self.keyring_file = Some(path.as_ref().to_owned());
        self
    }

    /// Log segment rotation size in bytes (small values are useful in tests).
    pub fn segment_size(mut self, bytes: u64) -> Self {
        self.segment_size = bytes;
        self
    }

    /// Bytes of the log's newest synced writes left in the page cache (default
    /// [`DEFAULT_CACHED_TAIL`], 32 MiB): older ones are dropped from it once synced, so that
    /// a long import or a busy writer keeps reusing the same pages, and recent events stay
    /// cached for the readers that ask for them; `None` leaves caching to the kernel
    /// alone. Durable (`Durability::Sync`) ledgers only.
    pub fn cached_tail(mut self, bytes: Option<u64>) -> Self {
        self.cached_tail = bytes;
        self
    }

    /// Threads that verify batches (at least 1; at most
    /// [`MAX_VERIFY_THREADS`](crate::limits::MAX_VERIFY_THREADS)), counting the thread that
    /// appends: it verifies while it waits for a batch, beside the ledger's persistent
    /// verification pool of one thread fewer, started when the ledger first verifies a batch.
    pub fn verify_threads(mut self, threads: usize) -> Self {
        self.verify_threads = threads.max(1);
        self
    }

    /// Log entries between two state snapshots written while the ledger is open (default
    /// [`SNAPSHOT_INTERVAL`]; at least 1), or a quarter of the entries written in all when
    /// that is more ([`SNAPSHOT_SHARE`](crate::limits::SNAPSHOT_SHARE)). A close writes one
    /// too once this many — or 4096, whichever is fewer — were written since the last.
    /// Small values are useful in tests; larger ones trade a longer open after a crash for
    /// fewer snapshot writes. A bulk append ([`crate::Ledger::append_log`]) takes none until
    /// it ends: an open after a crash during one loads the index instead.
    pub fn snapshot_interval(mut self, entries: u64) -> Self {
        self.snapshot_interval = entries.max(1);
        self
    }

    /// Index records a bulk append ([`crate::Ledger::append_log`],
    /// [`crate::Ledger::bulk_append`]) gathers before it writes them to the index in one
    /// transaction (default [`BULK_INDEX_RECORDS`]; at least 1; the end of the append
    /// writes the rest). A process that dies during a bulk append leaves the index behind
    /// the log by fewer than this many records, which the next open replays from the log.
    /// Small values are useful in tests.
    pub fn bulk_index_records(mut self, records: usize) -> Self {
        self.bulk_index_records = records.max(1);
        self
    }

    /// The origin of the ledger's checkpoints and proofs (PROFILE §13; also the checkpoint
    /// key's name). Without it, [`crate::Ledger::origin`] is `akledger/` followed by the
    /// token of the first admitted event.
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// Records a signed checkpoint of the ledger tree in `DIR/checkpoint` (replacing the
    /// last) each time `events` more events (at least 1) were admitted since the last one,
    /// signed with `key` (a key of its own, never a sidecar key) under the ledger's origin.
    /// Every open then refuses a log that does not extend the latest recorded checkpoint
    /// (PROFILE §13: a rolled-back log), with `checkpoint_mismatch`. Ignored in memory.
    pub fn checkpoint_every(mut self, events: u64, key: crate::ed25519_dalek::SigningKey) -> Self {
        self.checkpoint_every = Some((events.max(1), key));
        self
    }

    /// The ledger directory (empty for an in-memory ledger).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
