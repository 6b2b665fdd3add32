//! Every bound the engine enforces, on one screen, each with its reason.
//!
//! Limits are checked before the work they bound (before hashing, allocating or walking),
//! so an oversized input costs a length comparison and nothing more. The bounds of the
//! pure core (event size, JSON depth, refs, ids) are re-exported here from
//! `akledger_core::limits`, so this module names every bound a ledger enforces.

pub use akledger_core::limits::*;

/// Most bytes of events in one `append_batch` call. One batch is one log write that must fit
/// the log's 256 MiB batch bound with its framing (23 bytes an entry); checked before any
/// work, so an oversized batch is the caller's error and never reaches the log.
pub const MAX_BATCH_BYTES: usize = 192 << 20;

/// Events after which [`crate::Ledger::append_log`] cuts a batch: large enough to amortize
/// one fdatasync over many events, small enough that a batch's outcomes arrive steadily.
pub const LOG_BATCH_EVENTS: usize = 1000;

/// Batches [`crate::Ledger::append_log`] keeps verifying while one commits into an
/// in-memory ledger (an audit). A worker verifies a whole batch as one signature batch when
/// the batches in flight are enough to occupy every worker (`ledger/pool.rs`); with one
/// ahead, the workers finishing a batch wait while the committing thread reads and submits
/// the next; with two they always have one queued. Memory: this many batches plus the one
/// committing, each within [`LOG_BATCH_BYTES`].
pub const LOG_BATCHES_AHEAD: usize = 2;

/// The same into a ledger on disk: one more, because each commit also waits for its
/// fdatasync, during which two batches ahead left the workers idle (a durable import of
/// 1 M events took 5 % longer with two than with three; `docs/performance.md`).
pub const LOG_BATCHES_AHEAD_ON_DISK: usize = 3;

/// Buffers of delivered batches [`crate::Ledger::append_log`] keeps to read later batches
/// into, once the workers have freed the events that share them (a little after each batch
/// is delivered): with as many as the batches in flight on disk, 70–75 % of a 1 M-event
/// audit's or import's batches took a used buffer, with two 23–35 %. Memory: as many
/// batches' bytes again as are in flight, a few MB for events of a kilobyte, at most this
/// many times [`LOG_BATCH_BYTES`] for events near the largest size.
pub const LOG_SPARE_BUFFERS: usize = LOG_BATCHES_AHEAD_ON_DISK + 1;

/// Bytes of events after which [`crate::Ledger::append_log`] cuts a batch (whichever of this
/// and [`LOG_BATCH_EVENTS`] comes first), so a log of large events (up to
/// [`MAX_EVENT_BYTES`] each) stays far within [`MAX_BATCH_BYTES`] and its memory
/// ([`LOG_BATCHES_AHEAD_ON_DISK`] + 1 batches in flight at most) is bounded.
pub const LOG_BATCH_BYTES: usize = 32 << 20;

/// Most verification threads a ledger starts (`Config::verify_threads` is clamped to it). They
/// live as long as the ledger; more threads than cores only add switching.
pub const MAX_VERIFY_THREADS: usize = 256;

/// Most events in one `append_batch` call. One batch is one log write and one fsync; the bound
/// keeps a batch's memory (≤ this × [`MAX_EVENT_BYTES`]) and commit latency finite.
pub const MAX_BATCH_EVENTS: usize = 10_000;

/// Default bound on events held pending (missing dependencies) at once. Pending events are
/// kept in memory and re-read on every open; anyone can send events with invented parents,
/// so without a bound a flood of them costs every later open time and memory.
pub const DEFAULT_MAX_PENDING_EVENTS: usize = 100_000;

/// Default bound on the bytes of events held pending at once (see above).
pub const DEFAULT_MAX_PENDING_BYTES: usize = 256 << 20;

/// Largest sync frame payload (bytes). A frame of events is cut at [`SYNC_BATCH_BYTES`], and
/// one event is at most [`MAX_EVENT_BYTES`], so honest frames stay far below this; a peer
/// announcing more is refused before anything is allocated.
pub const MAX_SYNC_FRAME_BYTES: usize = 16 << 20;

/// Bytes of events after which a sender cuts a sync frame (one admission batch each).
pub const SYNC_BATCH_BYTES: usize = 8 << 20;

/// Events after which a sender cuts a sync frame: one admission batch each, the size of an
/// import's ([`LOG_BATCH_EVENTS`]). The receiver keeps three batches verifying while one
/// commits, as an import does, and holds each frame until its batch commits: frames of
/// 1000 hold half the memory of frames of 2000, at the same speed (a session with frames of
/// 2000 took 0.98 × the time, with frames of 500 1.07 ×: `docs/performance.md`, 2026-12-05
/// evening).
pub const SYNC_BATCH_EVENTS: usize = LOG_BATCH_EVENTS;

/// Most events one sync frame may hold (well within [`MAX_BATCH_EVENTS`]): twice what this
/// build sends, as earlier builds sent frames of 2000.
pub const MAX_SYNC_FRAME_EVENTS: usize = 2_000;
const _: () = assert!(SYNC_BATCH_EVENTS <= MAX_SYNC_FRAME_EVENTS);

/// Most ids in one sync frame (heads, have queries, common frontier): bounds the work one
/// frame can ask for. A ledger with more heads than this cannot sync (it never happens with
/// real writers; heads are the concurrent tips of the DAG).
pub const MAX_SYNC_IDS: usize = 65_536;

/// Most have-query rounds in one sync session. The query size doubles each round up to
/// [`MAX_SYNC_IDS`], so this covers histories far beyond any ledger; a peer that keeps a
/// session going past it is cut off.
pub const MAX_SYNC_ROUNDS: usize = 4_096;

/// Events a peer may send that admission rejects, per session, before the session is cut
/// off as a flood: an honest peer sends only events its own ledger admitted.
pub const MAX_SYNC_REJECTED: usize = 1_000;

/// Sessions one `serve` runs at once; a connection beyond them is told the server is busy.
pub const MAX_SYNC_SESSIONS: usize = 64;

/// Bytes of received frames the sessions of one `serve` hold at once, in all
/// ([`MemoryBudget`](crate::sync::MemoryBudget)): a batch's room is kept until it commits,
/// and a frame being read and decoded takes twice its size. Without a total, 100 peers that
/// each pushed a 16 MB frame and stalled took `serve` to 1.36 GB (1.1 GB kept after); 256 MiB
/// still lets 10 peers push the 8 MiB batches honest clients send, two stages deep.
pub const MAX_SYNC_HELD_BYTES: u64 = 256 << 20;

/// Frames up to this size are read without a reservation from the budget: hellos, have
/// queries and their answers, done and bye. What they hold is bounded by the session count.
pub const SYNC_FREE_FRAME_BYTES: usize = 64 << 10;

/// Busy answers one `serve` writes at once (each on a short-lived thread); a connection
/// beyond them is closed without one, so a flood costs at most this many threads.
pub const MAX_SYNC_REFUSALS: usize = 16;

/// Seconds a busy answer may take to write and to see the peer close.
pub const BUSY_ANSWER_SECS: u64 = 2;

/// Default seconds a sync peer may stay silent (or refuse our bytes) before the session
/// fails with a timeout.
pub const SYNC_TIMEOUT_SECS: u64 = 30;

/// Bytes per second a `serve` session must have moved on average, once it is older than
/// one read timeout, to keep its slot while another peer waits for one: a peer that
/// trickles a byte now and then to hold a slot moves far less, an honest one (even on a
/// slow link, even while the other side computes) far more.
pub const MIN_SYNC_SESSION_BYTES_PER_SEC: u64 = 1024;

/// Default seconds one sync session may last in all. Per-read timeouts alone let a peer
/// that trickles a byte now and then hold a session (and one of [`MAX_SYNC_SESSIONS`])
/// forever; an hour is about 40 times what a first sync of a million events takes here.
pub const SYNC_SESSION_LIMIT_SECS: u64 = 3_600;

/// Changes an exchange feed holds for a subscriber that has not read them. A slow (or
/// forgotten) subscriber must not grow the ledger's memory: past this the feed drops
/// changes and tells the subscriber it lagged, so it re-reads the projections instead.
pub const EXCHANGE_FEED_CAPACITY: usize = 1024;

/// Events an event feed ([`crate::Ledger::watch_events`]) holds for a subscriber that has not
/// read them: the same reasoning as [`EXCHANGE_FEED_CAPACITY`].
pub const EVENT_FEED_CAPACITY: usize = 1024;

/// Bytes of events an event feed holds for a subscriber that has not read them. Events are
/// up to [`MAX_EVENT_BYTES`] each, so the count bound alone would let one slow subscriber
/// pin a gigabyte; past this the feed lags as it does past its count.
pub const EVENT_FEED_BYTES: usize = 64 << 20;

/// How long opening a ledger waits for its root lock before reporting it held. A child
/// process forked by the ledger's own process holds the lock's open file until it execs
/// (microseconds to milliseconds); one second covers that on a loaded machine, and a real
/// second writer is told no later than that.
pub const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a read-only open waits for the shared lock before it reads beside the writer
/// that holds it. Reading beside a writer is always safe, so this only spares a reader the
/// unlocked path when the lock is held for a moment by a forked child (see
/// [`LOCK_PATIENCE`]); short, because a `log --follow` beside a real writer pays it on every
/// look.
pub const READER_LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(50);

/// Admitted events between two state snapshots written while a ledger is open (one is also
/// written on a clean close). Bounds what an open after a crash replays from the log on top
/// of the last snapshot (~1 s of parsing at 2^18 events) against the cost of writing one
/// (~0.1 s per million events held).
pub const SNAPSHOT_INTERVAL: usize = 1 << 18;

/// Past `SNAPSHOT_SHARE × SNAPSHOT_INTERVAL` entries, snapshots are a `1 / SNAPSHOT_SHARE`
/// share of the ledger apart instead: each rewrites the whole state (~100 bytes an event),
/// so a fixed spacing makes ingest quadratic (importing 10 M events wrote 19 GB of
/// snapshots, and took 37.7 µs an event against 19.4 µs at 1 M); a growing one writes at
/// most ~5 × the final state in all, for an open after a crash that replays at most a
/// quarter of the ledger.
pub const SNAPSHOT_SHARE: u64 = 4;

/// A writer's open loads its state from the index instead of the state snapshot when the
/// log between the snapshot and the index's mark is more than `1 / REPLAY_OVER_INDEX` of
/// the log before the snapshot. Measured at a million events on 2 cores: replaying the log
/// costs 2.5 µs an event, loading the index 0.46 µs and the snapshot 0.15 µs, so the index
/// is the shorter way once the stretch to replay passes about a seventh of the snapshot.
/// That is what lets a bulk append ([`crate::Ledger::append_log`]) take no snapshot until
/// it ends: a process that dies during one reopens from the index, which trails the log by
/// at most [`BULK_INDEX_RECORDS`] records and sled's flush interval.
pub const REPLAY_OVER_INDEX: u64 = 6;

/// Index records a bulk append gathers before it writes them in one sled transaction
/// (`Config::bulk_index_records`): 64 batches of [`LOG_BATCH_EVENTS`], about 3 MB held.
/// sled's cost is per transaction far more than per byte: writing each batch's row in a
/// transaction of its own took 3 % of a 1 M-event import's wall time, as much as no index
/// at all saved. What a process that dies during a bulk append leaves behind the index,
/// the next open replays from the log: at 2.5 µs an event, at most 0.16 s.
pub const BULK_INDEX_RECORDS: usize = 64 * LOG_BATCH_EVENTS;

/// Bytes of one checked page of the graph file (`DIR/graph`): a query reads and checksums
/// whole pages, so a lookup or a step of a walk costs one small read and ~1 µs of hashing.
pub const GRAPH_PAGE_BYTES: u64 = 4096;

/// Bytes of the buffer through which the state snapshot and the graph file are written as
/// they are encoded: large enough that a write call per chunk costs nothing beside the
/// copy, small enough to stay in the cache instead of fresh memory as large as the file
/// (100 MB at a million events). A multiple of [`GRAPH_PAGE_BYTES`], so each chunk of the
/// graph file's body holds whole pages to checksum.
pub const DERIVED_WRITE_CHUNK: usize = 1 << 20;
const _: () = assert!(DERIVED_WRITE_CHUNK as u64 % GRAPH_PAGE_BYTES == 0);

/// Chunks of a derived file being written that stay in the page cache: the older ones are
/// dropped once written back, so the file's writes reuse pages instead of taking fresh ones
/// (`store::page_cache`). The writeback of each starts when it is written; at ~1 GB/s a
/// chunk is written back in about a millisecond, while encoding the next four takes
/// several, so the older ones are clean by the time they are dropped.
pub const DERIVED_CACHED_CHUNKS: usize = 4;

/// Bits of an id's digest that pick its fanout bucket in the graph file: 4096 buckets
/// (16 KiB), so at a million events a lookup binary-searches ~250 entries (~9 KiB, a few
/// pages) instead of the whole table.
pub const GRAPH_FANOUT_BITS: usize = 12;

/// Most values (ids, positions, parents, clock entries, …) one query reads from the graph
/// file before it leaves the query to the opened ledger. A chain walk reads a checkpoint's
/// clock and at most a checkpoint spacing of members per chain it enters, so honest queries
/// stay far below it (hundreds to tens of thousands of reads); it bounds the work a file
/// whose contents pass their checksums but contradict themselves can cause.
pub const GRAPH_READ_BUDGET: u64 = 1 << 22;

/// Leaves of the tree file (`DIR/tree`) whose hashes an open recomputes from the admission
/// order, from its end: where a crash or a lost tail leaves damage, for ~2 ms of hashing
/// and reads at any size. The rest is `check`'s (a recomputation of every hash costs about
/// a second per million events, too much for every open).
pub const TREE_TAIL_CHECK: u64 = 1024;

/// Leaves a tree rebuild or check hashes between two writes or reads (64 Ki leaves, ~4 MiB
/// of hashes): bounds their buffers at any ledger size.
pub const TREE_CHUNK: usize = 1 << 16;
