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

/// Most addressed agents in one exchange request. Bounds the per-exchange projection and the
/// reassignment check; far above any real agent team.
pub const MAX_ADDRESSED_AGENTS: usize = 256;

/// Most ids in a control's `basis_event_ids` or `response_event_ids`. A basis is a set of
/// maximal heads, so it is as wide as the number of concurrent writers; responses are bounded
/// by what one exchange can hold.
pub const MAX_CONTROL_ID_LIST: usize = 4096;

/// Most bytes of events in one `append_batch` call. One batch is one log write that must fit
/// the log's 256 MiB batch bound with its framing (23 bytes an entry); checked before any
/// work, so an oversized batch is the caller's error and never reaches the log.
pub const MAX_BATCH_BYTES: usize = 192 << 20;

/// Most verification threads a ledger starts (`Config::verify_threads` is clamped to it). They
/// live as long as the ledger; more threads than cores only add switching.
pub const MAX_VERIFY_THREADS: usize = 256;

/// Most events in one `append_batch` call. One batch is one log write and one fsync; the bound
/// keeps a batch's memory (≤ this × [`MAX_EVENT_BYTES`]) and commit latency finite.
pub const MAX_BATCH_EVENTS: usize = 10_000;

/// Most decompressed public keys a verifier caches. Decompression is ~9 µs of a ~60 µs
/// verification; the bound keeps a flood of one-off keys from growing memory without end.
pub const MAX_KEY_CACHE: usize = 65_536;
