//! The closure walk: computes, for a set of start events, the per-chain "covered
//! prefix" (for each chain, the highest sequence number covered by the set), using chain
//! checkpoints to stop early.  Optionally targeted at one event, in which case it prunes
//! with positions, generation numbers and checkpoint clocks and stops once the target is
//! found.
//!
//! Invariant: `acc[c] = s` means every member of chain `c` with sequence `<= s` is covered
//! by the start set *and* its ancestry has been (or is queued to be) accounted for, either
//! by a checkpoint clock (closed under ancestry) or by pushing the members' parents.

use super::{DagIndex, Pos};

/// What a targeted walk looks for: "is this event covered?".
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    chain: u32,
    seq: u32,
    pos: u32,
    gen: u64,
}

impl Target {
    pub(crate) fn of(idx: &DagIndex, x: Pos) -> Option<Target> {
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

/// Reusable walk state; `acc` is per chain, so scratch is O(#chains), not O(#events).
pub(crate) struct Walk<'a> {
    idx: &'a DagIndex,
    acc: Vec<u32>,
    stack: Vec<Pos>,
    target: Option<Target>,
    found: bool,
}

impl<'a> Walk<'a> {
    /// A full (untargeted) walk.
    pub(crate) fn full(idx: &'a DagIndex) -> Self {
        Walk {
            idx,
            acc: vec![0; idx.chains.len()],
            stack: Vec::new(),
            target: None,
            found: false,
        }
    }

    /// A walk that stops as soon as `target` is known to be covered.
    pub(crate) fn targeted(idx: &'a DagIndex, target: Target) -> Self {
        let mut w = Walk::full(idx);
        w.target = Some(target);
        w
    }

    /// Whether the target has been found (targeted walks only).
    pub(crate) fn found(&self) -> bool {
        self.found
    }

    /// The per-chain covered prefix (meaningful after [`Walk::run`] of a full walk).
    pub(crate) fn into_acc(self) -> Vec<u32> {
        self.acc
    }

    /// Is `x` covered by what has been walked so far (full walks, after `run`)?
    pub(crate) fn covered(&self, x: Pos) -> bool {
        covered_by(self.idx, &self.acc, x)
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
        self.acc.get(chain as usize).copied().unwrap_or(u32::MAX)
    }

    fn join(&mut self, start: usize, len: usize) {
        let Some(clock) = self.idx.clock_pool.get(start..start.saturating_add(len)) else {
            return;
        };
        for (a, &c) in self.acc.iter_mut().zip(clock) {
            if c > *a {
                *a = c;
            }
        }
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
        if let Some(a) = self.acc.get_mut(c as usize) {
            *a = s;
        }
        if let Some(t) = self.target {
            if c == t.chain {
                // Members of the target's chain below it cannot descend from it.
                if s >= t.seq {
                    self.found = true;
                }
                return;
            }
        }
        let Some(chain) = idx.chains.get(c as usize) else {
            return;
        };
        if let Some(t) = self.target {
            if let Some(k) = chain.ceil(s) {
                if idx.clock_entry(k, t.chain) < t.seq {
                    return; // even a later member of this chain does not reach the target
                }
            }
        }
        let mut lo = old;
        if let Some(k) = chain.floor(s) {
            if k.seq > old {
                if let Some(t) = self.target {
                    if idx.clock_entry(k, t.chain) >= t.seq {
                        self.found = true;
                        return;
                    }
                }
                self.join(k.start, k.len);
                lo = k.seq;
            }
        }
        let mut seq = s;
        while seq > lo {
            let Some(m) = chain.member(seq) else {
                break;
            };
            if let Some(t) = self.target {
                let g = idx.generation(m).unwrap_or(0);
                if m.get() < t.pos || g <= t.gen {
                    break; // older members cannot have the target as an ancestor
                }
            }
            for &q in idx.parents(m) {
                if let Some((qc, qs)) = idx.chain_seq(q) {
                    if qs > self.acc_of(qc) {
                        self.stack.push(q);
                    }
                }
            }
            seq -= 1;
        }
    }
}

/// Is `x` covered according to the per-chain prefix `acc`?
pub(crate) fn covered_by(idx: &DagIndex, acc: &[u32], x: Pos) -> bool {
    match idx.chain_seq(x) {
        Some((c, s)) => acc.get(c as usize).is_some_and(|&a| a >= s),
        None => false,
    }
}
