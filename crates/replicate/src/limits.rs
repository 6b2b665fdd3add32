//! Every bound replication enforces, on one screen, each with its reason.

use akledger::limits::MAX_EVENT_BYTES;

/// Events one `replicate` fetch asks the server for, and events published before waiting for
/// their acknowledgements: one admission batch each (well within [`MAX_BATCH_EVENTS`](akledger::limits::MAX_BATCH_EVENTS)),
/// large enough to amortize a round trip and one fdatasync over many events.
pub const REPLICATE_BATCH_EVENTS: usize = 1_000;

/// Bytes of messages one `replicate` fetch asks for (whichever of this and
/// [`REPLICATE_BATCH_EVENTS`] comes first): bounds the memory of the two batches in flight
/// and keeps a batch far within [`MAX_BATCH_BYTES`](akledger::limits::MAX_BATCH_BYTES).
pub const REPLICATE_BATCH_BYTES: usize = 8 << 20;

/// Largest message the `replicate` stream accepts (set as the stream's `max_msg_size` when
/// it is created): one canonical event and its headers (the `Nats-Msg-Id`, well under 4 KiB),
/// so the server refuses anything larger from anyone. Events near [`MAX_EVENT_BYTES`] also
/// need the server's `max_payload` raised above its 1 MiB default.
pub const REPLICATE_MAX_MESSAGE_BYTES: usize = MAX_EVENT_BYTES + 4096;

/// Bytes a published message's headers may take besides the event: `NATS/1.0`, the
/// `Nats-Msg-Id` with its 53-character event id and the line ends come to 80; an event
/// larger than the server's `max_payload` less this is skipped, never sent to be refused.
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
