//! Every bound the core enforces, on one screen, each with its reason.
//!
//! Limits are checked before the work they bound (before hashing, allocating or walking),
//! so an oversized input costs a length comparison and nothing more. The engine's bounds
//! (batches, pending events, sync, feeds, files) are in `akledger::limits`.

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

/// Most decompressed public keys a verifier caches. Decompression is ~9 µs of a ~60 µs
/// verification; the bound keeps a flood of one-off keys from growing memory without end.
pub const MAX_KEY_CACHE: usize = 65_536;

/// Largest keyring file (PROFILE §11) read or written. A keyring is a handful of keys; the
/// bound keeps a wrong or hostile file from being read whole, and `keys add` refuses to
/// write a file its readers would refuse.
pub const MAX_KEYRING_BYTES: usize = 1 << 20;

/// Largest signed note (a §13 checkpoint, with its signatures) read, in bytes. The bound Go's
/// `sumdb/tlog` puts on a signed tree note (10^6 bytes); a checkpoint is a few hundred bytes,
/// and C2SP `signed-note` asks verifiers to take at least 16 signatures of up to ~5 kB each.
pub const MAX_NOTE_BYTES: usize = 1_000_000;

/// Most signature lines in a signed note. Go's `sumdb/note` refuses a note with more than
/// 100; each line matching a known key costs a signature check, so the bound caps the work
/// one note can ask for. C2SP `signed-note` requires accepting at least 16.
pub const MAX_NOTE_SIGNATURES: usize = 100;

/// Largest tree (in leaves) the stored-hash functions of [`crate::tlog`] address: 2^62,
/// so every stored-hash index (below 2·size) fits in a `u64` with room to spare. No ledger
/// comes near it; a larger size is refused as the caller's mistake.
pub const MAX_TREE_SIZE: u64 = 1 << 62;

/// Most hashes a proof's JSON form (§13) may carry. An inclusion path in a tree below 2^64
/// leaves has at most 64 hashes and a consistency path at most 65, so anything longer can
/// only fail; the parser refuses it before decoding a single hash.
pub const MAX_PROOF_HASHES: usize = 128;

/// Highest actor-model version (PROFILE §14.1) an entity id may name: 2^53 − 1, the
/// largest integer canonical JSON carries exactly, so a version always round-trips through
/// any JSON tool that reads it as a number.
pub const MAX_ACTOR_VERSION: u64 = (1 << 53) - 1;

/// Fewest characters of an id's base64url an abbreviation may give (after its
/// `ak:<kind>:` tag), as git asks of an abbreviated object name: 24 bits single out one
/// id among thousands and are still short enough to type.
pub const MIN_ID_PREFIX_CHARS: usize = 4;
