//! The closure walk: computes, for a set of start events, the per-chain "covered
//! prefix" (for each chain, the highest sequence number covered by the set), using chain
//! checkpoints to stop early.  Optionally targeted at one event, in which case it prunes
//! with positions, generation numbers and checkpoint clocks and stops once the target is
//! found.
//!
//! Invariant: `acc[c] = s` means every member of chain `c` with sequence `<= s` is covered
//! by the start set *and* its ancestry has been (or is queued to be) accounted for, either
//! by a checkpoint clock (closed under ancestry) or by pushing the members' parents.

use std::collections::BTreeMap;

use super::clocks::ClockEntries;
use super::source::{ChainSource, ClockAt};
use super::{DagIndex, Pos};

/// Chains above which a targeted walk keeps its per-chain prefix sparse: such a walk
/// touches few chains, and a dense prefix is zeroed in full for every query (with tens of
/// thousands of chains, that zeroing was most of a `covers`).
const DENSE_TARGETED_CHAINS: usize = 1024;

/// The per-chain covered prefix: dense (one entry per chain), or sparse (touched chains
/// only, the others 0) for targeted walks over many chains.
enum Acc {
    Dense(Vec<u32>),
    Sparse {
        chains: usize,
        touched: BTreeMap<u32, u32>,
    },
}

impl Acc {
    fn get(&self, chain: u32) -> Option<u32> {
        match self {
            Acc::Dense(v) => v.get(chain as usize).copied(),
            Acc::Sparse { chains, touched } => {
                ((chain as usize) < *chains).then(|| touched.get(&chain).copied().unwrap_or(0))
            }
        }
    }

    fn set(&mut self, chain: u32, s: u32) {
        match self {
            Acc::Dense(v) => {
                if let Some(a) = v.get_mut(chain as usize) {
                    *a = s;
                }
            }
            Acc::Sparse { chains, touched } => {
                if (chain as usize) < *chains {
                    touched.insert(chain, s);
                }
            }
        }
    }

    fn join(&mut self, clock: &ClockEntries<'_>) {
        match self {
            Acc::Dense(v) => clock.join_into(v),
            Acc::Sparse { chains, touched } => {
                for (chain, c) in clock.iter().enumerate().take(*chains) {
                    if c > 0 {
                        let a = touched.entry(chain as u32).or_insert(0);
                        if c > *a {
                            *a = c;
                        }
                    }
                }
            }
        }
    }

    fn into_dense(self) -> Vec<u32> {
        match self {
            Acc::Dense(v) => v,
            Acc::Sparse { chains, touched } => {
                let mut v = vec![0; chains];
                for (c, s) in touched {
                    if let Some(a) = v.get_mut(c as usize) {
                        *a = s;
                    }
                }
                v
            }
        }
    }
}

/// What a targeted walk looks for: "is this event covered?".
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub(crate) chain: u32,
    pub(crate) seq: u32,
    pos: u32,
    gen: u64,
}

impl Target {
    pub(crate) fn of<G: ChainSource>(idx: &G, x: Pos) -> Option<Target> {
        let (chain, seq) = idx.chain_seq(x)?;
        let gen = idx.generation(x)?;
        Some(Target {
            chain,
            seq,
            pos: x.get(),
            gen,
        })
    }
}

/// Reusable walk state; `acc` is per chain, so scratch is O(#chains), not O(#events)
/// (for a targeted walk over many chains, O(chains touched)).
pub(crate) struct Walk<'a, G: ChainSource = DagIndex> {
    idx: &'a G,
    acc: Acc,
    stack: Vec<Pos>,
    target: Option<Target>,
    found: bool,
}

impl<'a, G: ChainSource> Walk<'a, G> {
    /// A full (untargeted) walk.
    pub(crate) fn full(idx: &'a G) -> Self {
        Walk {
            idx,
            acc: Acc::Dense(vec![0; idx.chain_count()]),
            stack: Vec::new(),
            target: None,
            found: false,
        }
    }

    /// A walk that stops as soon as `target` is known to be covered.
    pub(crate) fn targeted(idx: &'a G, target: Target) -> Self {
        let chains = idx.chain_count();
        let acc = if chains > DENSE_TARGETED_CHAINS {
            Acc::Sparse {
                chains,
                touched: BTreeMap::new(),
            }
        } else {
            Acc::Dense(vec![0; chains])
        };
        Walk {
            idx,
            acc,
            stack: Vec::new(),
            target: Some(target),
            found: false,
        }
    }

    /// Whether the target has been found (targeted walks only).
    pub(crate) fn found(&self) -> bool {
        self.found
    }

    /// The per-chain covered prefix (meaningful after [`Walk::run`] of a full walk).
    pub(crate) fn into_acc(self) -> Vec<u32> {
        self.acc.into_dense()
    }

    /// Is `x` covered by what has been walked so far (full walks, after `run`)?
    pub(crate) fn covered(&self, x: Pos) -> bool {
        match self.idx.chain_seq(x) {
            Some((c, s)) => self.acc.get(c).is_some_and(|a| a >= s),
            None => false,
        }
    }

    /// Queue a start event; unknown positions are ignored.
    pub(crate) fn push(&mut self, p: Pos) {
        if p.index() < self.idx.len() {
            self.stack.push(p);
        }
    }

    /// Process the queue until empty (or until the target is found).
    pub(crate) fn run(&mut self) {
        while let Some(p) = self.stack.pop() {
            if self.found {
                self.stack.clear();
                return;
            }
            self.expand(p);
        }
    }

    fn acc_of(&self, chain: u32) -> u32 {
        // Out-of-range chain cannot happen for positions of this index; treating it as
        // fully accounted makes the walk skip it rather than panic.
        self.acc.get(chain).unwrap_or(u32::MAX)
    }

    fn join(&mut self, k: &ClockAt) {
        let clock = self.idx.clock(k);
        self.acc.join(&clock);
    }

    fn expand(&mut self, p: Pos) {
        let idx = self.idx;
        let Some((c, s)) = idx.chain_seq(p) else {
            return;
        };
        let old = self.acc_of(c);
        if s <= old {
            return;
        }
        self.acc.set(c, s);
        if let Some(t) = self.target {
            if c == t.chain {
                // Members of the target's chain below it cannot descend from it.
                if s >= t.seq {
                    self.found = true;
                }
                return;
            }
        }
        match self.target {
            Some(t) => self.expand_targeted(c, old, s, t),
            None => self.expand_full(c, old, s),
        }
    }

    /// Accounts members `(old, s]` of `chain`: joins the floor checkpoint clock and
    /// queues the parents of the members above it.
    fn expand_full(&mut self, chain: u32, old: u32, s: u32) {
        let mut lo = old;
        if let Some(k) = self.idx.floor(chain, s) {
            if k.seq > old {
                self.join(&k);
                lo = k.seq;
            }
        }
        self.push_parents(chain, lo, s);
    }

    /// Like [`Walk::expand_full`], but only members that may descend from the target are
    /// expanded, and checkpoint clocks answer "found" / "not below here" directly.
    fn expand_targeted(&mut self, chain: u32, old: u32, s: u32, t: Target) {
        let idx = self.idx;
        if idx.last_checkpoint_seq(chain) >= s {
            if let Some(k) = idx.ceil(chain, s) {
                if idx.clock_entry(&k, t.chain) < t.seq {
                    return; // even a later member of this chain does not reach the target
                }
            }
        }
        let floor = idx.floor(chain, s).filter(|k| k.seq > old);
        let lo = floor.map_or(old, |k| k.seq);
        // The floor checkpoint is only relevant if its member may descend from the target.
        let floor = floor.filter(|k| {
            idx.member(chain, k.seq)
                .is_some_and(|m| !too_old(idx, m, t))
        });
        if let Some(k) = floor {
            if idx.clock_entry(&k, t.chain) >= t.seq {
                self.found = true;
                return;
            }
        }
        if self.push_parents_targeted(chain, lo, s, t) {
            if let Some(k) = floor {
                self.join(&k);
            }
        }
    }

    /// Queues unaccounted parents of members `(lo, s]`.
    fn push_parents(&mut self, chain: u32, lo: u32, s: u32) {
        let mut seq = s;
        while seq > lo {
            let Some(m) = self.idx.member(chain, seq) else {
                break;
            };
            self.push_parents_of(m);
            seq -= 1;
        }
    }

    /// Queues unaccounted parents of members `(lo, s]` not older than the target;
    /// returns false when it stopped at a member older than the target.
    fn push_parents_targeted(&mut self, chain: u32, lo: u32, s: u32, t: Target) -> bool {
        let mut seq = s;
        while seq > lo {
            let Some(m) = self.idx.member(chain, seq) else {
                return false;
            };
            if too_old(self.idx, m, t) {
                return false;
            }
            self.push_parents_of(m);
            seq -= 1;
        }
        true
    }

    fn push_parents_of(&mut self, m: Pos) {
        let idx = self.idx;
        let (acc, stack) = (&self.acc, &mut self.stack);
        idx.for_each_parent(m, |q| {
            if let Some((qc, qs)) = idx.chain_seq(q) {
                if qs > acc.get(qc).unwrap_or(u32::MAX) {
                    stack.push(q);
                }
            }
        });
    }
}

/// `m` (a member not on the target's chain, hence `m != target`) cannot have the target
/// as an ancestor: it is older by position or by generation number.
fn too_old<G: ChainSource>(idx: &G, m: Pos, t: Target) -> bool {
    m.get() < t.pos || idx.generation(m).unwrap_or(0) <= t.gen
}

/// Is `x` covered according to the per-chain prefix `acc`?
pub(crate) fn covered_by(idx: &DagIndex, acc: &[u32], x: Pos) -> bool {
    match idx.chain_seq(x) {
        Some((c, s)) => acc.get(c as usize).is_some_and(|&a| a >= s),
        None => false,
    }
}
