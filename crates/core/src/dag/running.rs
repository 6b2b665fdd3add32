//! Running clocks: the chain clock of every chain's tip, kept up to date as events are
//! inserted, so that a checkpoint usually copies its clock instead of walking for it.
//!
//! The clock of a new event is the join of its parents' clocks, plus its own entry. A
//! parent is the tip of its chain, whose clock is kept here; or an older member already
//! covered by what was joined (its chain's entry reaches it); or a tip superseded not
//! long ago, whose clock is still in a ring of the last [`RECENT`] superseded tips; or an
//! older member referenced again — a realm's first event is a parent of nearly every
//! event. Clocks of those come from a small cache, filled by a walk. Walks for the cache are paid from a
//! credit earned by checkpoints that needed no walk (plus a small start), so the index
//! never walks much more than it would without running clocks. A clock that cannot be had
//! within that credit makes its chain's tip clock unknown until the chain's next
//! checkpoint, which walks as before and makes it known again.
//!
//! Everything here is a cache of exact answers: the checkpoint clocks stored are the same
//! with it or without it, so it is neither part of the index's equality nor of its
//! snapshot (a loaded index starts with every tip clock unknown). Tip clocks cost
//! `4 · chains²` bytes, so tracking stops, and its memory is freed, past
//! [`MAX_TRACKED_CHAINS`] chains.

use super::walk::Walk;
use super::{DagIndex, Pos};

/// Most chains whose tip clocks are kept: 1024² × 4 bytes = 4 MiB at most. Past it the
/// index walks for every checkpoint, as it does without running clocks.
pub const MAX_TRACKED_CHAINS: usize = 1024;

/// Superseded tips whose clocks are kept, most recent first out: events name recent
/// events of other writers, which have often moved on since.
const RECENT: usize = 256;

/// Clocks of older members kept for reuse. A handful of events (a realm's first event, an
/// open exchange's request) are referenced again and again; a miss costs one walk.
const OLD_CLOCKS: usize = 32;

/// Walks the cache may spend before any checkpoint has saved one, and the most credit
/// that can build up.
const MAX_CREDIT: u32 = 32;

/// The running clocks of a [`DagIndex`]; see the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct RunningClocks {
    /// The clock of each chain's tip, by chain; `None` when unknown. Entries beyond a
    /// clock's length are 0.
    tips: Vec<Option<Vec<u32>>>,
    /// Clocks of recently superseded tips, at `position % RECENT`.
    recent: Vec<OldClock>,
    /// Clocks of older members referenced again.
    old: Vec<OldClock>,
    /// Walks the cache may still spend.
    credit: u32,
    /// True once the chains outgrew [`MAX_TRACKED_CHAINS`]: nothing is tracked any more.
    off: bool,
}

#[derive(Clone, Debug)]
struct OldClock {
    pos: Pos,
    hits: u32,
    clock: Vec<u32>,
}

impl Default for RunningClocks {
    fn default() -> Self {
        RunningClocks {
            tips: Vec::new(),
            recent: Vec::new(),
            old: Vec::new(),
            credit: MAX_CREDIT,
            off: false,
        }
    }
}

impl RunningClocks {
    /// Running clocks that are never kept (tests compare an index built with them to one
    /// built without).
    /// Clocks that track nothing: every checkpoint is walked for.
    #[cfg(feature = "internals")]
    pub(crate) fn disabled() -> Self {
        RunningClocks {
            off: true,
            ..RunningClocks::default()
        }
    }

    /// Whether tracking stopped, how many chain tips are held and how many of those are
    /// known.
    #[cfg(feature = "internals")]
    pub(crate) fn counts(&self) -> (bool, usize, usize) {
        let known = self.tips.iter().filter(|t| t.is_some()).count();
        (self.off, self.tips.len(), known)
    }

    /// Approximate heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        let clock = |c: &Vec<u32>| c.capacity() * std::mem::size_of::<u32>();
        self.tips.capacity() * std::mem::size_of::<Option<Vec<u32>>>()
            + self.tips.iter().flatten().map(clock).sum::<usize>()
            + (self.old.capacity() + self.recent.capacity()) * std::mem::size_of::<OldClock>()
            + self
                .old
                .iter()
                .chain(&self.recent)
                .map(|o| clock(&o.clock))
                .sum::<usize>()
    }

    /// Takes in the event just inserted into `idx` as member `seq` of chain `c`, with the
    /// deduplicated `parents`; `extended` is the parent whose chain it extends (the old
    /// tip of `c`), if any.
    pub(crate) fn observe(
        &mut self,
        idx: &DagIndex,
        (c, seq): (u32, u32),
        parents: &[Pos],
        extended: Option<Pos>,
    ) {
        if self.off {
            return;
        }
        if idx.chains.len() > MAX_TRACKED_CHAINS {
            *self = RunningClocks {
                off: true,
                ..RunningClocks::default()
            };
            return;
        }
        let slot = c as usize;
        if self.tips.len() <= slot {
            self.tips.resize(slot + 1, None);
        }
        let mut clock = match extended {
            Some(p) => {
                let clock = self.tips.get_mut(slot).and_then(Option::take);
                if let Some(clock) = &clock {
                    self.remember(p, clock);
                }
                clock
            }
            None => Some(Vec::new()),
        };
        for &q in parents {
            let Some(acc) = clock.as_mut() else {
                break;
            };
            if Some(q) == extended || covered(idx, acc, q) {
                continue;
            }
            match self.clock_of(idx, q) {
                Some(qc) => join(acc, qc),
                None => clock = None,
            }
        }
        if let Some(acc) = clock.as_mut() {
            if acc.len() <= slot {
                acc.resize(slot + 1, 0);
            }
            if let Some(own) = acc.get_mut(slot) {
                *own = seq;
            }
        }
        if let Some(tip) = self.tips.get_mut(slot) {
            *tip = clock;
        }
    }

    /// The clock of chain `c`'s tip, when known, as a checkpoint would store it: trailing
    /// zeros trimmed. A checkpoint taken from it earns a walk of credit.
    pub(crate) fn checkpoint(&mut self, c: u32) -> Option<Vec<u32>> {
        let clock = self.tips.get(c as usize)?.as_ref()?;
        self.credit = self.credit.saturating_add(1).min(MAX_CREDIT);
        let mut clock = clock.clone();
        trim(&mut clock);
        Some(clock)
    }

    /// Records the clock a checkpoint walked for: chain `c`'s tip clock is known again.
    pub(crate) fn walked(&mut self, c: u32, clock: &[u32]) {
        if let Some(tip) = self.tips.get_mut(c as usize) {
            *tip = Some(clock.to_vec());
        }
    }

    /// Keeps the clock of `p`, a tip being superseded, in the ring of recent ones.
    fn remember(&mut self, p: Pos, clock: &[u32]) {
        let i = p.index() % RECENT;
        if self.recent.len() <= i {
            self.recent.resize_with(i + 1, || OldClock {
                pos: Pos::new(u32::MAX),
                hits: 0,
                clock: Vec::new(),
            });
        }
        if let Some(slot) = self.recent.get_mut(i) {
            slot.pos = p;
            slot.clock.clear();
            slot.clock.extend_from_slice(clock);
        }
    }

    /// The clock of parent `q`: its chain's tip clock, a recent or cached clock, or a walk
    /// paid from the credit; `None` when none of these is to be had.
    fn clock_of(&mut self, idx: &DagIndex, q: Pos) -> Option<&[u32]> {
        let (d, _) = idx.chain_seq(q)?;
        let tip = idx.chains.get(d as usize).and_then(|chain| chain.tip());
        if tip == Some(q) {
            return self.tips.get(d as usize)?.as_deref();
        }
        let recent = self.recent.get(q.index() % RECENT).filter(|r| r.pos == q);
        if let Some(recent) = recent {
            return Some(&recent.clock);
        }
        if let Some(i) = self.old.iter().position(|o| o.pos == q) {
            let hit = self.old.get_mut(i)?;
            hit.hits = hit.hits.saturating_add(1);
            return Some(&hit.clock);
        }
        self.credit = self.credit.checked_sub(1)?;
        let mut walk = Walk::full(idx);
        walk.push(q);
        walk.run();
        let mut clock = walk.into_acc();
        trim(&mut clock);
        let entry = OldClock {
            pos: q,
            hits: 0,
            clock,
        };
        let i = if self.old.len() < OLD_CLOCKS {
            self.old.push(entry);
            self.old.len() - 1
        } else {
            // Replace the least used; every other entry loses a little, so that entries
            // once popular make room in time.
            let (i, _) = self.old.iter().enumerate().min_by_key(|(_, o)| o.hits)?;
            self.old.iter_mut().for_each(|o| o.hits /= 2);
            *self.old.get_mut(i)? = entry;
            i
        };
        self.old.get(i).map(|o| o.clock.as_slice())
    }
}

/// Whether `q` is covered by clock `acc` (its chain's entry reaches it).
fn covered(idx: &DagIndex, acc: &[u32], q: Pos) -> bool {
    idx.chain_seq(q)
        .is_some_and(|(d, s)| acc.get(d as usize).is_some_and(|&a| a >= s))
}

/// `acc` ← the entrywise maximum of `acc` and `other`.
fn join(acc: &mut Vec<u32>, other: &[u32]) {
    if acc.len() < other.len() {
        acc.resize(other.len(), 0);
    }
    for (a, &o) in acc.iter_mut().zip(other) {
        *a = (*a).max(o);
    }
}

/// Drops trailing zero entries (a stored clock's entries beyond its length are 0).
pub(crate) fn trim(clock: &mut Vec<u32>) {
    while clock.last() == Some(&0) {
        clock.pop();
    }
}
