//! [`AppendReport`]: everything one appended batch did — its own items' outcomes and the
//! pending events it released.

use crate::error::Rejection;
use crate::id::EventId;

use super::admit::Appended;
use super::state::Staged;

/// What one batch did (returned by [`super::Ledger::append_batch_report`]).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct AppendReport {
    /// One outcome per input item, in input order.
    pub outcomes: Vec<Appended>,
    /// Pending events (stored earlier, or earlier in this batch) admitted because this
    /// batch supplied their last missing dependency, in admission order.
    pub released: Vec<EventId>,
    /// Pending events whose dependencies arrived in this batch but which then failed
    /// their admission checks; they are no longer pending.
    pub rejected_on_release: Vec<(EventId, Rejection)>,
    /// The admission positions (from 0, in admission order) this batch's admissions took:
    /// one per [`Appended::Admitted`] outcome and one per released event, interleaved in
    /// the order they were admitted. Empty when the batch admitted nothing.
    pub positions: std::ops::Range<u64>,
}

impl AppendReport {
    /// The report of a decided batch, read off its staged changes; `first` is the position
    /// its first admission takes (the committed length it was decided against).
    pub(super) fn of(outcomes: Vec<Appended>, staged: &Staged, first: u64) -> Self {
        let released = staged
            .admitted
            .iter()
            .map(|a| a.event.id())
            .filter(|id| staged.released.contains(id))
            .collect();
        AppendReport {
            outcomes,
            released,
            rejected_on_release: staged.rejected_on_release.clone(),
            positions: first..first + staged.admitted.len() as u64,
        }
    }
}

/// Appended outcomes counted by kind (what `sync` and `replicate` report of what they
/// received).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct OutcomeCounts {
    /// Admitted now.
    pub admitted: u64,
    /// Already admitted.
    pub duplicates: u64,
    /// Stored as pending.
    pub pending: u64,
    /// Refused.
    pub rejected: u64,
}

impl OutcomeCounts {
    /// Counts `outcomes`.
    pub fn of(outcomes: &[Appended]) -> Self {
        let mut counts = OutcomeCounts::default();
        for outcome in outcomes {
            match outcome {
                Appended::Admitted(_) => counts.admitted += 1,
                Appended::Duplicate(_) => counts.duplicates += 1,
                Appended::Pending { .. } => counts.pending += 1,
                Appended::Rejected { .. } => counts.rejected += 1,
            }
        }
        counts
    }
}
