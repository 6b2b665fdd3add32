//! Every bound replication enforces, on one screen, each with its reason.

use akledger::limits::MAX_EVENT_BYTES;

/// Messages one `replicate` fetch asks the server for; events published before waiting for
/// their acknowledgements; events of one admission batch of consumed events at most (a
/// fetch's are admitted in as many batches as they need, well within
/// [`MAX_BATCH_EVENTS`](akledger::limits::MAX_BATCH_EVENTS)): large enough to amortize a
/// round trip and one fdatasync over many events.
pub const REPLICATE_BATCH_EVENTS: usize = 1_000;

/// Events packed into one message at most ([`crate::message`]): the server's cost is per
/// message, and 64 events of a typical kilobyte make it a 64th of one message an event.
pub const MESSAGE_EVENTS: usize = 64;

/// Bytes of one message of several events at most (an event larger than this goes alone;
/// a server whose `max_payload` is smaller gets messages of that size less
/// [`MESSAGE_HEADER_ALLOWANCE`]): far within a stock server's 1 MiB `max_payload`, and
/// small enough that a consumer's fetch of [`REPLICATE_BATCH_BYTES`] holds many messages.
pub const MESSAGE_BYTES: usize = 64 << 10;

/// Bytes of messages one `replicate` fetch asks for (whichever of this and
/// [`REPLICATE_BATCH_EVENTS`] messages comes first), and bytes of events published before
/// waiting for their acknowledgements. Over the largest message the stream takes
/// ([`REPLICATE_MAX_MESSAGE_BYTES`]: the server fails a fetch whose first message is over
/// its byte bound); bounds the memory of the batches in flight, far within
/// [`MAX_BATCH_BYTES`](akledger::limits::MAX_BATCH_BYTES). (2 MiB, a quarter of the round
/// trips fewer, measured no faster.)
pub const REPLICATE_BATCH_BYTES: usize = 8 << 20;

/// Consumed batches kept verifying while one commits ([`akledger::Ledger::pipeline_ahead`]),
/// as `akledger import` keeps them ([`LOG_BATCHES_AHEAD_ON_DISK`]): the verifying threads
/// stay busy while the committing thread syncs, or waits for a fetch or an
/// acknowledgement. Each holds at most [`REPLICATE_BATCH_EVENTS`] events. With one, 20 k
/// events took 1.19-1.24x the time of their import through a pipeline one batch ahead,
/// against 1.13-1.15x with two (three calls of ten alternated pairs each). Since a worker
/// verifies a whole batch when there is a batch ahead for each, two left the workers idle
/// through each sync: 1.24-1.28x the import's time against 1.21-1.22x with three (three
/// alternated calls each).
///
/// [`LOG_BATCHES_AHEAD_ON_DISK`]: akledger::limits::LOG_BATCHES_AHEAD_ON_DISK
pub const CONSUME_AHEAD: usize = akledger::limits::LOG_BATCHES_AHEAD_ON_DISK;

/// Largest message the `replicate` stream accepts (set as the stream's `max_msg_size` when
/// it is created): one canonical event of the largest size and its headers (the
/// `Nats-Msg-Id`, well under 4 KiB; a message of several events is at most
/// [`MESSAGE_BYTES`]), so the server refuses anything larger from anyone. Events near [`MAX_EVENT_BYTES`] also
/// need the server's `max_payload` raised above its 1 MiB default.
pub const REPLICATE_MAX_MESSAGE_BYTES: usize = MAX_EVENT_BYTES + 4096;

/// Bytes a published message's headers may take besides its events: `NATS/1.0`, the
/// `Nats-Msg-Id` (an event id of 53 characters, 76 or 77 for a message of several events,
/// 17 more for a message published again under a suffix) and the line ends come to at
/// most 121; an event larger than the server's
/// `max_payload` less this is skipped, never sent to be refused, and no message of several
/// events is packed past it.
pub const MESSAGE_HEADER_ALLOWANCE: usize = 256;

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
