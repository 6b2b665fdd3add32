//! Every bound the engine enforces, on one screen, each with its reason.
//!
//! Limits are checked before the work they bound (before hashing, allocating or walking),
//! so an oversized input costs a length comparison and nothing more.

/// Largest canonical event, in bytes (PROFILE §2, §3). Arkret's `MAX_EVENT_ENVELOPE_BYTES`;
/// one event must fit comfortably in one log record and one network message.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// Deepest JSON nesting accepted (PROFILE §2). Bounds recursion in the parser and the
/// canonical writer; Arkret rejects depth 65.
pub const MAX_JSON_DEPTH: usize = 64;

/// Largest integer magnitude in canonical JSON (PROFILE §2): 2^53 − 1, the range every
/// IEEE-754 double (and so every JavaScript peer) represents exactly.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Most `semantic_refs` on one event (PROFILE §3). Bounds the per-event edge count the DAG
/// index stores and the work of one admission.
pub const MAX_SEMANTIC_REFS: usize = 128;

/// Longest `did_core_id`, in bytes (PROFILE §1).
pub const MAX_DID_CORE_ID_BYTES: usize = 512;

/// Longest event `kind` string. Kinds are short dotted names; the bound keeps a hostile kind
/// from dominating index keys.
pub const MAX_KIND_BYTES: usize = 128;

/// Longest reference id or ref role we store for non-causal refs; the same order as an id.
pub const MAX_REF_ID_BYTES: usize = 512;

// No id list inside a request or control plaintext has a bound of its own (PROFILE §8.2):
// the event bound above is the only one.

/// Most ids the authoring helpers put in a control's basis. Each basis id needs an `after`
/// ref (PROFILE §8.3), so a basis can never exceed [`MAX_SEMANTIC_REFS`]; with more
/// concurrent exchange heads the helper closes over this many (PROFILE §8.2).
pub const MAX_CONTROL_BASIS: usize = MAX_SEMANTIC_REFS;

/// Most bytes of events in one `append_batch` call. One batch is one log write that must fit
/// the log's 256 MiB batch bound with its framing (23 bytes an entry); checked before any
/// work, so an oversized batch is the caller's error and never reaches the log.
pub const MAX_BATCH_BYTES: usize = 192 << 20;

/// Events after which [`crate::Ledger::append_log`] cuts a batch: large enough to amortize
/// one fdatasync over many events, small enough that a batch's outcomes arrive steadily.
pub const LOG_BATCH_EVENTS: usize = 1000;

/// Batches [`crate::Ledger::append_log`] keeps verifying while one commits. With one, the
/// workers finishing a batch wait while the committing thread reads and submits the next;
/// with two they always have one queued. Memory: this many batches plus the one
/// committing, each within [`LOG_BATCH_BYTES`].
pub const LOG_BATCHES_AHEAD: usize = 2;

/// Bytes of events after which [`crate::Ledger::append_log`] cuts a batch (whichever of this
/// and [`LOG_BATCH_EVENTS`] comes first), so a log of large events (up to
/// [`MAX_EVENT_BYTES`] each) stays far within [`MAX_BATCH_BYTES`] and its memory
/// ([`LOG_BATCHES_AHEAD`] + 1 batches in flight) is bounded.
pub const LOG_BATCH_BYTES: usize = 32 << 20;

/// Most verification threads a ledger starts (`Config::verify_threads` is clamped to it). They
/// live as long as the ledger; more threads than cores only add switching.
pub const MAX_VERIFY_THREADS: usize = 256;

/// Most events in one `append_batch` call. One batch is one log write and one fsync; the bound
/// keeps a batch's memory (≤ this × [`MAX_EVENT_BYTES`]) and commit latency finite.
pub const MAX_BATCH_EVENTS: usize = 10_000;

/// Most decompressed public keys a verifier caches. Decompression is ~9 µs of a ~60 µs
/// verification; the bound keeps a flood of one-off keys from growing memory without end.
pub const MAX_KEY_CACHE: usize = 65_536;

/// Default bound on events held pending (missing dependencies) at once. Pending events are
/// kept in memory and re-read on every open; anyone can send events with invented parents,
/// so without a bound a flood of them costs every later open time and memory.
pub const DEFAULT_MAX_PENDING_EVENTS: usize = 100_000;

/// Default bound on the bytes of events held pending at once (see above).
pub const DEFAULT_MAX_PENDING_BYTES: usize = 256 << 20;

/// Largest keyring file (PROFILE §11) read or written. A keyring is a handful of keys; the
/// bound keeps a wrong or hostile file from being read whole, and `keys add` refuses to
/// write a file its readers would refuse.
pub const MAX_KEYRING_BYTES: usize = 1 << 20;

/// Largest sync frame payload (bytes). A frame of events is cut at [`SYNC_BATCH_BYTES`], and
/// one event is at most [`MAX_EVENT_BYTES`], so honest frames stay far below this; a peer
/// announcing more is refused before anything is allocated.
pub const MAX_SYNC_FRAME_BYTES: usize = 16 << 20;

/// Bytes of events after which a sender cuts a sync frame (one admission batch each).
pub const SYNC_BATCH_BYTES: usize = 8 << 20;

/// Events after which a sender cuts a sync frame (well within [`MAX_BATCH_EVENTS`]).
pub const SYNC_BATCH_EVENTS: usize = 2_000;

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

/// Sessions one `serve` runs at once; further connections wait in the accept backlog.
pub const MAX_SYNC_SESSIONS: usize = 64;

/// Default seconds a sync peer may stay silent (or refuse our bytes) before the session
/// fails with a timeout.
pub const SYNC_TIMEOUT_SECS: u64 = 30;

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

/// Admitted events between two state snapshots written while a ledger is open (one is also
/// written on a clean close). Bounds what an open after a crash replays from the log on top
/// of the last snapshot (~1 s of parsing at 2^18 events) against the cost of writing one
/// (~0.1 s per million events held).
pub const SNAPSHOT_INTERVAL: usize = 1 << 18;

/// Bytes of one checked page of the graph file (`DIR/graph`): a query reads and checksums
/// whole pages, so a lookup or a step of a walk costs one small read and ~1 µs of hashing.
pub const GRAPH_PAGE_BYTES: u64 = 4096;

/// Bits of an id's digest that pick its fanout bucket in the graph file: 4096 buckets
/// (16 KiB), so at a million events a lookup binary-searches ~250 entries (~9 KiB, a few
/// pages) instead of the whole table.
pub const GRAPH_FANOUT_BITS: usize = 12;

/// Most events a heads query walks in the graph file before it leaves the query to the
/// in-memory index. A walk this long has read more pages than loading the index of a
/// ledger of that size would, and the index's chain clocks answer without walking.
pub const GRAPH_WALK_BUDGET: usize = 1 << 16;

// The sidecar runtime (`runtime/`): envelopes in through the stub connection, events out.

/// Largest stub-connection record (`TO,SENDER,PROTOCOL_ID,MESSAGE,`), in bytes. The record
/// becomes one encrypted `ak.message.create` event, base64 inside JSON (4/3) and sealed, so
/// it must stay well within [`MAX_EVENT_BYTES`]; a longer record is logged and skipped.
pub const MAX_STUB_RECORD_BYTES: usize = 512 << 10;

/// Longest `to`, `sender` or protocol id of an envelope, in bytes. Addresses are names or
/// hex keys; the bound keeps the header scan that finds record boundaries short.
pub const MAX_ENVELOPE_HEADER_FIELD_BYTES: usize = 1024;

/// Most bytes the stub connection reads from its input file in one poll. Bounds the
/// memory of one poll; a longer backlog is read over several polls.
pub const MAX_STUB_READ_BYTES: usize = 4 << 20;

/// Envelopes appended to the ledger as one inbox batch. Within [`MAX_BATCH_EVENTS`]; one
/// batch is one log write (one fsync), which is what makes a backlog fast to take in.
pub const MAX_INBOX_BATCH: usize = 1_000;

/// Pause between polls of the input file when it had nothing new, in milliseconds. The
/// stub connection follows a plain file (no inotify): short enough that an `echo >>`
/// answers promptly, long enough that an idle sidecar costs nothing measurable.
pub const STUB_POLL_INTERVAL_MS: u64 = 20;

/// Most fields one protobuf message of the default protocol may carry. Bounds the work of
/// decoding an untrusted message (a 512 KiB record of one-byte fields would otherwise be
/// half a million map entries).
pub const MAX_PROTOBUF_FIELDS: usize = 4_096;

/// Largest sidecar runtime configuration file (`sidecar run --config`), in bytes: a few
/// identities and an address book; anything far larger is not a configuration.
pub const MAX_RUNTIME_CONFIG_BYTES: u64 = 1 << 20;

/// Largest runtime progress marker read (`DIR/runtime-progress.json`): four numbers and the
/// agents declared gone, at most [`MAX_DID_CORE_ID_BYTES`] each; anything larger is damage.
pub const MAX_PROGRESS_BYTES: u64 = 1 << 20;

/// Events one `replicate` fetch asks the server for, and events published before waiting for
/// their acknowledgements: one admission batch each (well within [`MAX_BATCH_EVENTS`]),
/// large enough to amortize a round trip and one fdatasync over many events.
pub const REPLICATE_BATCH_EVENTS: usize = 1_000;

/// Bytes of messages one `replicate` fetch asks for (whichever of this and
/// [`REPLICATE_BATCH_EVENTS`] comes first): bounds the memory of the two batches in flight
/// and keeps a batch far within [`MAX_BATCH_BYTES`].
pub const REPLICATE_BATCH_BYTES: usize = 8 << 20;

/// Largest message the `replicate` stream accepts (set as the stream's `max_msg_size` when
/// it is created): one canonical event and its headers (the `Nats-Msg-Id`, well under 4 KiB),
/// so the server refuses anything larger from anyone. Events near [`MAX_EVENT_BYTES`] also
/// need the server's `max_payload` raised above its 1 MiB default.
pub const REPLICATE_MAX_MESSAGE_BYTES: usize = MAX_EVENT_BYTES + 4096;

/// Seconds the server waits for a consumed batch's acknowledgement before redelivering it.
/// A batch is acknowledged only once durable here; this covers verifying and committing two
/// batches on a loaded machine. Too short only redelivers (duplicates, counted and harmless).
pub const REPLICATE_ACK_WAIT_SECS: u64 = 30;

/// Seconds the stream remembers a message id to drop a re-published duplicate (its
/// `duplicate_window`). The published-so-far marker advances after every acknowledged batch,
/// so a crash re-publishes at most one batch, within seconds of restarting; the server holds
/// one id per message of the window in memory, so a longer window only costs memory.
pub const REPLICATE_DUPLICATE_WINDOW_SECS: u64 = 120;

/// Default seconds one request to the server (connect, stream and consumer lookups, a
/// publish acknowledgement, a fetch beyond its own wait) may take before it fails; `--follow`
/// then reconnects.
pub const REPLICATE_TIMEOUT_SECS: u64 = 10;

/// Milliseconds `--follow` waits on the server for new messages in one fetch: how late it
/// notices a stop request or a locally admitted event to publish.
pub const REPLICATE_POLL_MILLIS: u64 = 500;

/// First and last back-off, in milliseconds, of `--follow` between reconnection attempts
/// (doubling from the first up to the last): quick after a blip, at most one attempt every
/// few seconds against a server that is down.
pub const REPLICATE_BACKOFF_MILLIS: (u64, u64) = (100, 5_000);

/// Longest stream name `replicate` accepts (NATS allows more; the name is also a file name
/// in the ledger directory, `replicate/<stream>.json`).
pub const MAX_REPLICATE_STREAM_NAME: usize = 64;

/// Ids of consumed events remembered so that publishing does not echo them back to the
/// stream they came from. Past it the set is forgotten: the cost is re-publishing events the
/// stream holds, which its duplicate window or every consumer's admission absorbs.
pub const MAX_REPLICATE_ECHO_IDS: usize = 1 << 20;
