//! White-box hooks for the workspace's own tests, behind the `internals` feature (which
//! `akledger-testkit` turns on): the engine's tests live in `tests/it/`, so that
//! `cargo test` compiles the engine once instead of twice, and these are the private parts
//! that `tests/it/unit/` checks directly. Not part of the API; nothing here is promised to
//! stay.
#![allow(missing_docs)]

use std::cell::Cell;

thread_local! {
    /// When set, this thread's segment-log writes fail as if the disk returned EIO.
    pub static FAIL_LOG_WRITES: Cell<bool> = const { Cell::new(false) };
    /// When set, this thread's syncs of appended segment-log batches fail as if the disk
    /// returned EIO (the bytes are written; whether they are durable is then unknown).
    pub static FAIL_LOG_SYNCS: Cell<bool> = const { Cell::new(false) };
}

/// The ledger's live state, read-locked.
pub fn read_state(
    ledger: &crate::Ledger,
) -> Result<std::sync::RwLockReadGuard<'_, state::State>, crate::Error> {
    ledger.read_state()
}

/// The seq of the last log batch the index's tables cover (`None` when they cover none, or
/// the ledger has no index), and of the last in the log.
pub fn index_and_log_marks(ledger: &crate::Ledger) -> Result<(Option<u64>, u64), crate::Error> {
    ledger.index_and_log_marks()
}

/// Bytes of the ledger's log held in memory (see `SegmentReader::bytes_in_memory`).
pub fn log_bytes_in_memory(ledger: &crate::Ledger) -> u64 {
    ledger.log_bytes_in_memory()
}

pub mod check {
    pub use crate::ledger::check::*;
}
pub mod graph_file {
    pub use crate::ledger::graph_file::*;
}

pub mod admit {
    pub use crate::ledger::admit::*;
}
pub mod budget {
    pub use crate::sync::budget::*;
    use std::time::Duration;

    /// `MemoryBudget::try_reserve`, which the API keeps to the sync session.
    pub fn try_reserve(budget: &MemoryBudget, bytes: u64) -> Option<Room> {
        budget.try_reserve(bytes)
    }

    /// `MemoryBudget::reserve_within`, which the API keeps to the sync session.
    pub fn reserve_within(budget: &MemoryBudget, bytes: u64, wait: Duration) -> Option<Room> {
        budget.reserve_within(bytes, wait)
    }
}
pub mod feed {
    pub use crate::ledger::feed::*;
}
pub mod graph_view {
    pub use crate::ledger::graph_file::view::*;
}
pub mod id_table {
    pub use crate::ledger::id_table::*;
}
pub mod index {
    pub use crate::ledger::index::*;
}
pub mod pending_set {
    pub use crate::ledger::pending_set::*;
}
pub mod positions {
    pub use crate::ledger::positions::*;
}
pub mod stamps {
    pub use crate::ledger::stamps::*;
}
pub mod queries {
    pub use crate::ledger::queries::*;
}
pub mod record {
    pub use crate::ledger::record::*;
}
pub mod snapshot {
    pub use crate::ledger::snapshot::*;
}
pub mod state {
    pub use crate::ledger::state::*;
}
pub mod stored {
    pub use crate::ledger::stored::*;
}
pub mod verify_batch {
    pub use crate::ledger::verify_batch::*;
}
pub mod pool {
    pub use crate::ledger::pool::*;
}

/// Waits for the periodic snapshot the ledger is writing on its own thread, if any, so that
/// a test may look at `DIR/snapshot` as of the last commit.
pub fn finish_snapshot_write(ledger: &crate::Ledger) -> Result<(), crate::Error> {
    ledger.finish_snapshot_write()
}
