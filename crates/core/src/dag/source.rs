//! [`ChainSource`]: what a closure walk reads — the chain decomposition, the checkpoint
//! clocks, generation numbers and parents — wherever they live. The in-memory
//! [`DagIndex`] is one source; the engine's graph file, read a checked page at a time, is
//! another, so a query on a ledger nobody has open takes the same walk (and gives the same
//! answer) as one on an open ledger, reading only the pages the walk touches.
//!
//! A source answers `None` (or 0, or nothing) for what it does not hold; a walk treats
//! that as "nothing more to account for", never panics, and the page source remembers that
//! it could not read, so its caller discards the answer.

use super::chains::Checkpoint;
use super::clocks::{ClockEntries, StoredClock};
use super::walk::{Target, Walk};
use super::{DagIndex, Pos};

/// A checkpoint of one chain: the member's sequence number and where its clock lies in
/// the source's clock pool (entry `c` of the clock is the highest sequence number of chain
/// `c` covered by that member; entries past `len` are 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockAt {
    /// Sequence number of the checkpointed member in its chain (1-based).
    pub seq: u32,
    /// First entry of its clock in the clock pool.
    pub start: u64,
    /// Number of stored entries.
    pub len: u64,
    /// `Some(base)` when the source stores the entries as 16-bit offsets from `base`
    /// ([`ClockEntries::Narrow`]); `None` when it stores them in full.
    pub narrow: Option<u32>,
}

/// Read access to a chain-decomposed DAG, as the closure walk needs it.
pub trait ChainSource {
    /// Number of events.
    fn len(&self) -> usize;
    /// Whether there is no event.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of chains.
    fn chain_count(&self) -> usize;
    /// `(chain, seq)` of `p`.
    fn chain_seq(&self, p: Pos) -> Option<(u32, u32)>;
    /// Corrected generation number of `p`.
    fn generation(&self, p: Pos) -> Option<u64>;
    /// Calls `f` with each parent of `p`.
    fn for_each_parent(&self, p: Pos, f: impl FnMut(Pos));
    /// The member of chain `c` with sequence number `seq`.
    fn member(&self, c: u32, seq: u32) -> Option<Pos>;
    /// Sequence number of chain `c`'s latest checkpoint (0 when none).
    fn last_checkpoint_seq(&self, c: u32) -> u32;
    /// Chain `c`'s highest checkpoint with `seq <= s`.
    fn floor(&self, c: u32, s: u32) -> Option<ClockAt>;
    /// Chain `c`'s lowest checkpoint with `seq >= s`.
    fn ceil(&self, c: u32, s: u32) -> Option<ClockAt>;
    /// The stored entries of a checkpoint's clock.
    fn clock(&self, k: &ClockAt) -> ClockEntries<'_>;
    /// Entry `chain` of a checkpoint's clock (0 beyond its stored length).
    fn clock_entry(&self, k: &ClockAt, chain: u32) -> u32;
}

impl From<&Checkpoint> for ClockAt {
    fn from(k: &Checkpoint) -> ClockAt {
        ClockAt {
            seq: k.seq,
            start: k.clock.start as u64,
            len: u64::from(k.clock.len),
            narrow: k.clock.narrow_base(),
        }
    }
}

/// Where a [`ClockAt`] of the in-memory index says its clock is.
fn stored(k: &ClockAt) -> StoredClock {
    StoredClock {
        start: usize::try_from(k.start).unwrap_or(usize::MAX),
        len: u32::try_from(k.len).unwrap_or(0),
        base: k.narrow.unwrap_or(0),
    }
}

impl ChainSource for DagIndex {
    #[inline]
    fn len(&self) -> usize {
        DagIndex::len(self)
    }
    #[inline]
    fn chain_count(&self) -> usize {
        self.chains.len()
    }
    #[inline]
    fn chain_seq(&self, p: Pos) -> Option<(u32, u32)> {
        DagIndex::chain_seq(self, p)
    }
    #[inline]
    fn generation(&self, p: Pos) -> Option<u64> {
        DagIndex::generation(self, p)
    }
    #[inline]
    fn for_each_parent(&self, p: Pos, f: impl FnMut(Pos)) {
        self.parents(p).iter().copied().for_each(f);
    }
    #[inline]
    fn member(&self, c: u32, seq: u32) -> Option<Pos> {
        self.chains.get(c as usize)?.member(seq)
    }
    #[inline]
    fn last_checkpoint_seq(&self, c: u32) -> u32 {
        self.chains
            .get(c as usize)
            .map_or(0, |chain| chain.last_checkpoint_seq())
    }
    #[inline]
    fn floor(&self, c: u32, s: u32) -> Option<ClockAt> {
        self.chains.get(c as usize)?.floor(s).map(ClockAt::from)
    }
    #[inline]
    fn ceil(&self, c: u32, s: u32) -> Option<ClockAt> {
        self.chains.get(c as usize)?.ceil(s).map(ClockAt::from)
    }
    #[inline]
    fn clock(&self, k: &ClockAt) -> ClockEntries<'_> {
        self.clocks.entries(&stored(k))
    }
    #[inline]
    fn clock_entry(&self, k: &ClockAt, chain: u32) -> u32 {
        self.clocks.entry(&stored(k), chain)
    }
}

/// Maximal heads of `set` in `g` (members covered by no other member), ascending, without
/// duplicates; unknown positions are dropped. See [`DagIndex::heads_of`].
pub fn heads_of<G: ChainSource>(g: &G, set: &[Pos]) -> Vec<Pos> {
    let n = g.len();
    let mut members: Vec<Pos> = set.iter().copied().filter(|p| p.index() < n).collect();
    members.sort_unstable_by(|a, b| b.cmp(a));
    members.dedup();
    // Descending: a member can only be covered by a later (higher) one, and it is covered
    // by some other member iff it is covered by the maxima found so far.
    let mut walk = Walk::full(g);
    let mut out = Vec::new();
    for s in members {
        if walk.covered(s) {
            continue;
        }
        out.push(s);
        walk.push(s);
        walk.run();
    }
    out.reverse();
    out
}

/// Whether `x` is covered by `basis` in `g` (`x` in it, or an ancestor of a member). See
/// [`DagIndex::covers`].
pub fn covers<G: ChainSource>(g: &G, basis: &[Pos], x: Pos) -> bool {
    let Some(target) = Target::of(g, x) else {
        return false;
    };
    // Fast path: a basis member on the target's chain at or above it.
    let on_chain_above = |h: Pos| {
        g.chain_seq(h)
            .is_some_and(|(c, s)| (c, true) == (target.chain, s >= target.seq))
    };
    if basis.iter().any(|&h| on_chain_above(h)) {
        return true;
    }
    let mut walk = Walk::targeted(g, target);
    for &h in basis {
        if h.get() >= x.get() {
            walk.push(h);
        }
    }
    walk.run();
    walk.found()
}
