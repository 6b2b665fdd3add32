//! Every bound the sidecar runtime enforces, on one screen, each with its reason: envelopes
//! in through the stub connection, events out.

/// Largest stub-connection record (`TO,SENDER,PROTOCOL_ID,MESSAGE,`), in bytes. The record
/// becomes one encrypted `ak.message.create` event, base64 inside JSON (4/3) and sealed, so
/// it must stay well within [`MAX_EVENT_BYTES`](akledger::limits::MAX_EVENT_BYTES); a longer record is logged and skipped.
pub const MAX_STUB_RECORD_BYTES: usize = 512 << 10;

/// Longest `to`, `sender` or protocol id of an envelope, in bytes. Addresses are names or
/// hex keys; the bound keeps the header scan that finds record boundaries short.
pub const MAX_ENVELOPE_HEADER_FIELD_BYTES: usize = 1024;

/// Most bytes the stub connection reads from its input file in one poll. Bounds the
/// memory of one poll; a longer backlog is read over several polls.
pub const MAX_STUB_READ_BYTES: usize = 4 << 20;

/// Most events the runtime appends to the ledger at a time (one run: one log write, one
/// fsync). Within [`MAX_BATCH_EVENTS`](akledger::limits::MAX_BATCH_EVENTS); a run is also
/// cut before its events pass [`MAX_BATCH_BYTES`](akledger::limits::MAX_BATCH_BYTES).
pub const MAX_INBOX_BATCH: usize = 1_000;

/// Most envelopes taken in (or answers sent out) as one stream of the signing threads: they
/// sign ahead while the committing thread appends what is signed in runs, so only the end of
/// a stream leaves a core idle (the last run's append, alone). A backlog of 10 000 echo
/// envelopes took 851–944 ms in streams of 1000, 738–807 ms in one stream (2.42–2.61 and
/// 2.28–2.48 × the import's time). Bounds the signed events held in memory at once (a few
/// KB each).
pub const SIGN_STREAM: usize = 10_000;

/// Fewest signed events of a batch the runtime appends at a time while its signing threads
/// sign the rest: the commit of one run overlaps the signing of the next (a batch signed
/// whole, then committed, left a core idle while it committed), and each run costs one log
/// write and one sync, so runs much shorter than this cost more in syncs than they save.
pub const SIGN_AHEAD_RUN: usize = 250;

/// Pause between polls of the input file, and of the output file for its reader to take a
/// record, when a step had nothing to do, in milliseconds: AEA's stub connection reads its
/// input every millisecond, so a round trip through the sidecar costs a few of them; an
/// idle poll is two `fstat`s and a short `pread`.
pub const STUB_POLL_INTERVAL_MS: u64 = 1;

/// Most fields one protobuf message of the default protocol may carry. Bounds the work of
/// decoding an untrusted message (a 512 KiB record of one-byte fields would otherwise be
/// half a million map entries).
pub const MAX_PROTOBUF_FIELDS: usize = 4_096;

/// Largest sidecar runtime configuration file (`sidecar run --config`), in bytes: a few
/// identities and an address book; anything far larger is not a configuration.
pub const MAX_RUNTIME_CONFIG_BYTES: u64 = 1 << 20;

/// Largest runtime progress marker read (`DIR/runtime-progress.json`): four numbers and the
/// agents declared gone, at most [`MAX_DID_CORE_ID_BYTES`](akledger::limits::MAX_DID_CORE_ID_BYTES) each; anything larger is damage.
pub const MAX_PROGRESS_BYTES: u64 = 1 << 20;

/// Default-protocol dialogues the runtime keeps (AEA 1.x bookkeeping: ids, targets and
/// references of each). A dialogue costs a few hundred bytes; past this the oldest is
/// dropped, and a late message of it is answered `INVALID_DIALOGUE` as one never seen.
pub const MAX_DIALOGUES: usize = 65_536;

/// Largest frame of AEA's TCP connection, and of the link between sidecars, in bytes: an
/// envelope becomes one event, as a stub record does ([`MAX_STUB_RECORD_BYTES`]); a longer
/// frame closes the client that sent it.
pub const MAX_TCP_FRAME_BYTES: usize = MAX_STUB_RECORD_BYTES;

/// Agents connected to the TCP connection at once: each costs a socket and its buffers; a
/// connection past this is closed as it is accepted.
pub const MAX_TCP_CLIENTS: usize = 256;

/// Most bytes read from one TCP client (or the link) in one poll: bounds the memory and the
/// time one busy peer takes from the others; the rest is read at the next poll.
pub const MAX_TCP_READ_BYTES: usize = 4 << 20;

/// Bytes handed to one TCP client's (or the link's) socket and not yet taken by it: past
/// this, frames wait in their queue, so a slow reader holds memory of one buffer only.
pub const MAX_TCP_BUFFERED_BYTES: usize = 1 << 20;

/// Milliseconds between attempts to reach a link's peer: a peer that is down costs one
/// connection attempt (on a thread of its own) this often.
pub const LINK_RETRY_MS: u64 = 500;

/// Connections to a link's listening side still proving who they are: each must prove it
/// holds the peer's key before it replaces the established one, so a stranger cannot cut
/// the link; past this, newcomers are closed.
pub const MAX_LINK_HANDSHAKES: usize = 4;
