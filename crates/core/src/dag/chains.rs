//! Online chain decomposition: every event belongs to exactly one chain (a path in the
//! DAG whose consecutive members are parent and child), and some chain members carry a
//! checkpoint "chain clock" (for every chain, the highest member covered by that event).
//!
//! This file owns the [`Chain`] and [`Checkpoint`] records and the floor / ceiling
//! checkpoint look-ups; the decision of *when* to checkpoint lives in `mod.rs`.

use super::clocks::StoredClock;
use super::Pos;

/// Lower bound on the spacing (in chain members) between two checkpoints of one chain.
pub(crate) const MIN_CHECKPOINT_SPACING: u32 = 8;

/// Target amortised clock bytes per event: a chain checkpoints every
/// `max(MIN_CHECKPOINT_SPACING, ceil(4 * chains / CLOCK_BYTES_PER_EVENT))` members.
pub(crate) const CLOCK_BYTES_PER_EVENT: u32 = 16;

/// One chain: its members in chain order (member `k` has sequence number `k + 1`) and the
/// checkpoints taken along it, ascending by sequence number.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chain {
    pub(crate) members: Vec<Pos>,
    pub(crate) checkpoints: Vec<Checkpoint>,
}

/// A stored chain clock of the chain member with sequence number `seq` (where it lies in
/// the index's [`ClockPool`](super::clocks::ClockPool)): entry `c` = highest sequence
/// number of chain `c` covered by that member (0 = none); chains at or beyond its length
/// are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    pub(crate) seq: u32,
    pub(crate) clock: StoredClock,
}

impl Chain {
    /// Current tip (last member), if any.
    pub(crate) fn tip(&self) -> Option<Pos> {
        self.members.last().copied()
    }

    /// Number of members (= sequence number of the tip).
    pub(crate) fn len_u32(&self) -> u32 {
        u32::try_from(self.members.len()).unwrap_or(u32::MAX)
    }

    /// Member with 1-based sequence number `seq`.
    pub(crate) fn member(&self, seq: u32) -> Option<Pos> {
        let k = usize::try_from(seq).ok()?.checked_sub(1)?;
        self.members.get(k).copied()
    }

    /// Sequence number of the latest checkpoint (0 when none).
    pub(crate) fn last_checkpoint_seq(&self) -> u32 {
        self.checkpoints.last().map_or(0, |k| k.seq)
    }

    /// Highest checkpoint with `seq <= s`.
    pub(crate) fn floor(&self, s: u32) -> Option<&Checkpoint> {
        let i = self.checkpoints.partition_point(|k| k.seq <= s);
        self.checkpoints.get(i.checked_sub(1)?)
    }

    /// Lowest checkpoint with `seq >= s`.
    pub(crate) fn ceil(&self, s: u32) -> Option<&Checkpoint> {
        let i = self.checkpoints.partition_point(|k| k.seq < s);
        self.checkpoints.get(i)
    }

    /// Approximate heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.members.capacity() * std::mem::size_of::<Pos>()
            + self.checkpoints.capacity() * std::mem::size_of::<Checkpoint>()
    }
}

/// Checkpoint spacing for a chain when `chains` chains exist.
pub(crate) fn checkpoint_spacing(chains: usize) -> u32 {
    let chains = u32::try_from(chains).unwrap_or(u32::MAX);
    let by_budget = chains.saturating_mul(4).div_ceil(CLOCK_BYTES_PER_EVENT);
    by_budget.max(MIN_CHECKPOINT_SPACING)
}
