//! [`Heads`]: the ledger heads, ascending, in one vector whose live part may start after a
//! gap, so that removing a head moves whichever side of it is shorter.
//!
//! A head is removed when a child names it. Runtimes answer in order: a step's answers
//! remove its requests one after the other, the oldest first, from the middle of
//! thousands of heads. Shifting the tail left at each removal moved the whole tail every
//! time (a quarter of the memory copying on a sidecar runtime's committing thread); the few
//! heads in front of the removed one move right into the gap instead.

use super::Pos;

/// Ascending positions; the live ones are `all[from..]`.
#[derive(Clone, Debug, Default)]
pub(super) struct Heads {
    all: Vec<Pos>,
    from: usize,
}

impl PartialEq for Heads {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Heads {
    /// Heads from `sorted` (ascending, no duplicates: the caller checked).
    pub fn from_sorted(sorted: Vec<Pos>) -> Self {
        Heads {
            all: sorted,
            from: 0,
        }
    }

    /// The heads, ascending.
    pub fn as_slice(&self) -> &[Pos] {
        self.all.get(self.from..).unwrap_or_default()
    }

    /// Adds `x`, greater than every head.
    pub fn push(&mut self, x: Pos) {
        self.all.push(x);
    }

    /// Removes `p` if it is a head: found by binary search; the shorter side of it moves.
    pub fn remove(&mut self, p: Pos) {
        let Ok(i) = self.as_slice().binary_search(&p) else {
            return;
        };
        let at = self.from + i;
        if i < self.all.len() - at {
            self.all.copy_within(self.from..at, self.from + 1);
            self.from += 1;
            // The gap is given back once it is the larger part (amortized O(1) a removal).
            if self.from > self.all.len() / 2 {
                self.all.drain(..self.from);
                self.from = 0;
            }
        } else {
            self.all.remove(at);
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.all.capacity() * size_of::<Pos>()
    }
}
