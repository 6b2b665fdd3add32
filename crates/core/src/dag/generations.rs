//! The events' corrected generation numbers, about four bytes each instead of eight.
//!
//! Generation numbers follow the events' millisecond stamps, and events admitted near one
//! another carry nearby stamps. So the numbers are kept by blocks of [`BLOCK`] events: the
//! block's first number in full, and each event's signed 32-bit distance from it (±24 days
//! in milliseconds). An event whose distance does not fit (a stamp weeks away from its
//! block's first) is kept whole in a side map, so every number reads back exactly, whatever
//! the stamps.
//!
//! Pure data, no IO.

use std::collections::BTreeMap;

/// Events per block.
const BLOCK: usize = 256;

/// The distance that says "kept whole in the side map".
const FAR: i32 = i32::MIN;

/// Generation numbers by position; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Generations {
    /// The first number of each block.
    bases: Vec<u64>,
    /// Each event's distance from its block's base, or [`FAR`].
    distances: Vec<i32>,
    /// The numbers whose distance is [`FAR`], by position.
    far: BTreeMap<u32, u64>,
}

impl Generations {
    /// Room for `n` numbers.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Generations {
            bases: Vec::with_capacity(n.div_ceil(BLOCK)),
            distances: Vec::with_capacity(n),
            far: BTreeMap::new(),
        }
    }

    /// How many numbers are kept.
    pub(crate) fn len(&self) -> usize {
        self.distances.len()
    }

    /// Appends the next event's number.
    pub(crate) fn push(&mut self, gen: u64) {
        let i = self.distances.len();
        if i % BLOCK == 0 {
            self.bases.push(gen);
        }
        let base = self.bases.last().copied().unwrap_or(gen);
        let distance = i64::try_from(i128::from(gen) - i128::from(base))
            .ok()
            .and_then(|d| i32::try_from(d).ok())
            .filter(|&d| d != FAR);
        match distance {
            Some(d) => self.distances.push(d),
            None => {
                self.distances.push(FAR);
                // Positions are `u32` (the index refuses more).
                self.far.insert(u32::try_from(i).unwrap_or(u32::MAX), gen);
            }
        }
    }

    /// The number at position `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<u64> {
        let d = *self.distances.get(i)?;
        if d == FAR {
            return self.far.get(&u32::try_from(i).ok()?).copied();
        }
        let base = *self.bases.get(i / BLOCK)?;
        Some(base.wrapping_add_signed(i64::from(d)))
    }

    /// Every number, by position.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or(0))
    }

    /// Heap bytes held (the side map estimated at 48 bytes an entry).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bases.capacity() * std::mem::size_of::<u64>()
            + self.distances.capacity() * std::mem::size_of::<i32>()
            + self.far.len() * 48
    }
}
