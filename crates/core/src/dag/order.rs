//! Deterministic linear extensions of the DAG (Kahn's algorithm with a min-heap).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{DagIndex, Pos};

impl DagIndex {
    /// A deterministic topological order of all events: repeatedly emits, among the
    /// events whose parents have all been emitted, the one with the smallest
    /// `(key(pos), pos)` (ties on the key are broken by position).  `key` is called once
    /// per event.
    pub fn causal_order<K: Ord>(&self, key: impl Fn(Pos) -> K) -> Vec<Pos> {
        let n = self.len();
        // Children in CSR form, built per call (O(n + edges)).
        let mut pending: Vec<u32> = Vec::with_capacity(n);
        let mut child_off: Vec<usize> = vec![0; n + 1];
        for i in 0..n {
            let x = Pos::new(u32::try_from(i).unwrap_or(u32::MAX));
            let ps = self.parents(x);
            pending.push(u32::try_from(ps.len()).unwrap_or(u32::MAX));
            for p in ps {
                if let Some(c) = child_off.get_mut(p.index() + 1) {
                    *c += 1;
                }
            }
        }
        for i in 0..n {
            let prev = child_off.get(i).copied().unwrap_or(0);
            if let Some(c) = child_off.get_mut(i + 1) {
                *c += prev;
            }
        }
        let mut fill = child_off.clone();
        let mut children: Vec<Pos> = vec![Pos::new(0); child_off.get(n).copied().unwrap_or(0)];
        for i in 0..n {
            let x = Pos::new(u32::try_from(i).unwrap_or(u32::MAX));
            for p in self.parents(x) {
                if let Some(f) = fill.get_mut(p.index()) {
                    if let Some(slot) = children.get_mut(*f) {
                        *slot = x;
                    }
                    *f += 1;
                }
            }
        }

        let mut heap = BinaryHeap::new();
        for (i, &d) in pending.iter().enumerate() {
            if d == 0 {
                let x = Pos::new(u32::try_from(i).unwrap_or(u32::MAX));
                heap.push(Reverse((key(x), x)));
            }
        }
        let mut out = Vec::with_capacity(n);
        while let Some(Reverse((_, x))) = heap.pop() {
            out.push(x);
            let i = x.index();
            let (a, b) = (
                child_off.get(i).copied().unwrap_or(0),
                child_off.get(i + 1).copied().unwrap_or(0),
            );
            for &c in children.get(a..b).unwrap_or(&[]) {
                if let Some(d) = pending.get_mut(c.index()) {
                    *d = d.saturating_sub(1);
                    if *d == 0 {
                        heap.push(Reverse((key(c), c)));
                    }
                }
            }
        }
        out
    }
}
