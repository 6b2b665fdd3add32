//! White-box hooks for the workspace's own tests, behind the `internals` feature (which
//! `akledger-testkit-core` turns on): the tests live in `tests/it/`, so that `cargo test`
//! compiles the core once instead of twice, and these are the private parts they check
//! directly. Not part of the API; nothing here is promised to stay.

pub use crate::canonical::keys::{known, KNOWN};
pub use crate::canonical::strict::special_byte;
pub use crate::canonical::value::utf16_cmp;
pub use crate::dag::running::MAX_TRACKED_CHAINS;
pub use crate::envelope::direct::{read_direct, Direct};
pub use crate::event::same_as_general;
pub use crate::exchange::preview::verdict;
pub use crate::id::decode_token;
pub use crate::proof::signing_input;
pub use crate::time::civil_from_days;

use crate::dag::running::RunningClocks;
use crate::dag::DagIndex;

/// [`crate::proof`]'s signatures of many messages by one key (the signing threads' path).
pub fn sign_many(key: &ed25519_dalek::SigningKey, messages: &[&[u8]]) -> Vec<[u8; 64]> {
    crate::proof::sign_many(key, messages)
}

/// A DAG index whose running clocks track nothing, so that every checkpoint is walked
/// for: what the running clocks must agree with.
pub fn dag_without_running_clocks() -> DagIndex {
    DagIndex::with_running(RunningClocks::disabled())
}

/// Of `dag`'s running clocks: whether tracking stopped, how many chain tips are held,
/// and how many of those clocks are known.
pub fn running_clock_counts(dag: &DagIndex) -> (bool, usize, usize) {
    dag.running_clocks().counts()
}

/// `(chain, seq)` of `x` in `dag`: its chain's id and its 1-based place in that chain.
pub fn chain_seq(dag: &DagIndex, x: crate::dag::Pos) -> Option<(u32, u32)> {
    dag.chain_seq(x)
}
