//! Reachability queries on [`DagIndex`]: coverage, ancestry, maximal heads, covered sets
//! and set differences.  Unknown positions are never covered, never ancestors, and are
//! ignored when they appear in a basis or input set.

use super::source;
use super::walk::{covered_by, Walk};
use super::{DagIndex, Pos};

/// Below this many targets `covers_all` runs one targeted walk per target; above it, one
/// full closure of the basis answers every target in O(1).
const BATCH_FULL_CLOSURE_MIN: usize = 4;

impl DagIndex {
    /// Per-chain covered prefix of `set` (full closure walk).
    fn closure(&self, set: &[Pos]) -> Vec<u32> {
        let mut walk = Walk::full(self);
        for &p in set {
            walk.push(p);
        }
        walk.run();
        walk.into_acc()
    }

    /// Is `x` covered by `basis` (`x ∈ basis` or `x` is an ancestor of a basis member)?
    pub fn covers(&self, basis: &[Pos], x: Pos) -> bool {
        source::covers(self, basis, x)
    }

    /// Batch form of [`DagIndex::covers`]: `out[i] == covers(basis, xs[i])`.
    pub fn covers_all(&self, basis: &[Pos], xs: &[Pos]) -> Vec<bool> {
        if xs.len() < BATCH_FULL_CLOSURE_MIN {
            return xs.iter().map(|&x| self.covers(basis, x)).collect();
        }
        let acc = self.closure(basis);
        xs.iter().map(|&x| covered_by(self, &acc, x)).collect()
    }

    /// Strict ancestry: `a != b` and `a` is reachable from `b` through parent links.
    pub fn is_ancestor(&self, a: Pos, b: Pos) -> bool {
        a.get() < b.get() && b.index() < self.len() && self.covers(&[b], a)
    }

    /// `a` and `b` are known, distinct, and neither covers the other.
    pub fn concurrent(&self, a: Pos, b: Pos) -> bool {
        let n = self.len();
        a != b
            && a.index() < n
            && b.index() < n
            && !self.is_ancestor(a, b)
            && !self.is_ancestor(b, a)
    }

    /// Maximal heads of `set` (members covered by no other member), ascending, without
    /// duplicates; unknown positions are dropped.
    pub fn heads_of(&self, set: &[Pos]) -> Vec<Pos> {
        source::heads_of(self, set)
    }

    /// Strict ancestors of `x` (`x` itself excluded), ascending by position.  Empty for an
    /// unknown position.
    pub fn ancestors(&self, x: Pos) -> Covered<'_> {
        let mut it = self.ancestors_of(&[x]);
        it.end = x.get().min(it.end);
        it
    }

    /// The set covered by `set`: the members themselves plus all their ancestors,
    /// ascending by position, each once.  Unknown members are ignored.
    pub fn ancestors_of(&self, set: &[Pos]) -> Covered<'_> {
        let n = self.len();
        let end = set
            .iter()
            .filter(|p| p.index() < n)
            .map(|p| p.get().saturating_add(1))
            .max()
            .unwrap_or(0);
        Covered {
            idx: self,
            acc: self.closure(set),
            next: 0,
            end,
        }
    }

    /// Events covered by `a_set` and not covered by `b_set`, ascending by position.
    /// Output-sensitive: per chain, the covered prefix difference is read off the chain.
    pub fn difference(&self, a_set: &[Pos], b_set: &[Pos]) -> Vec<Pos> {
        let a = self.closure(a_set);
        let b = self.closure(b_set);
        let mut out = Vec::new();
        for ((chain, &ha), &hb) in self.chains.iter().zip(&a).zip(&b) {
            if ha > hb {
                let lo = hb as usize;
                let hi = (ha as usize).min(chain.members.len());
                out.extend_from_slice(chain.members.get(lo..hi).unwrap_or(&[]));
            }
        }
        out.sort_unstable();
        out
    }
}

/// Iterator over a covered set in ascending position order (see
/// [`DagIndex::ancestors_of`]).  Holds the per-chain covered prefix, O(1) per position.
#[derive(Debug, Clone)]
pub struct Covered<'a> {
    idx: &'a DagIndex,
    acc: Vec<u32>,
    next: u32,
    end: u32,
}

impl Iterator for Covered<'_> {
    type Item = Pos;

    fn next(&mut self) -> Option<Pos> {
        while self.next < self.end {
            let p = Pos::new(self.next);
            self.next += 1;
            if covered_by(self.idx, &self.acc, p) {
                return Some(p);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.end.saturating_sub(self.next) as usize))
    }
}
