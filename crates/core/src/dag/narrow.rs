//! Numbers by position, two bytes each while every one of them fits in 16 bits, four after.
//!
//! The chain of each event and its sequence number in that chain are small in most ledgers:
//! the 1 M-event ledger of the benchmarks (64 writers) has 1712 chains, the longest of
//! 15,627 events. Kept in 16 bits they take two bytes an event each instead of four. The
//! first number that does not fit widens the whole array to 32 bits once (a copy of what
//! it holds), so every number reads back exactly, whatever the ledger.
//!
//! Pure data, no IO.

/// `u32`s by position; see the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct Narrow(Repr);

#[derive(Clone, Debug)]
enum Repr {
    /// Every number pushed so far is below 2¹⁶.
    Narrow(Vec<u16>),
    /// At least one was not.
    Wide(Vec<u32>),
}

impl Default for Narrow {
    fn default() -> Self {
        Narrow(Repr::Narrow(Vec::new()))
    }
}

impl Narrow {
    /// Room for `n` numbers of 16 bits.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Narrow(Repr::Narrow(Vec::with_capacity(n)))
    }

    /// How many numbers are kept.
    pub(crate) fn len(&self) -> usize {
        match &self.0 {
            Repr::Narrow(v) => v.len(),
            Repr::Wide(v) => v.len(),
        }
    }

    /// The number at `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<u32> {
        match &self.0 {
            Repr::Narrow(v) => v.get(i).map(|&n| u32::from(n)),
            Repr::Wide(v) => v.get(i).copied(),
        }
    }

    /// Appends the next number, widening the array when it does not fit in 16 bits.
    pub(crate) fn push(&mut self, n: u32) {
        match &mut self.0 {
            Repr::Wide(v) => v.push(n),
            Repr::Narrow(v) => match u16::try_from(n) {
                Ok(small) => v.push(small),
                Err(_) => {
                    let mut wide = Vec::with_capacity(v.capacity().max(v.len() + 1));
                    wide.extend(v.iter().map(|&m| u32::from(m)));
                    wide.push(n);
                    self.0 = Repr::Wide(wide);
                }
            },
        }
    }

    /// The numbers, by position.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or(0))
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Narrow(v) => v.capacity() * 2,
            Repr::Wide(v) => v.capacity() * 4,
        }
    }
}

impl FromIterator<u32> for Narrow {
    fn from_iter<I: IntoIterator<Item = u32>>(numbers: I) -> Self {
        let numbers = numbers.into_iter();
        let mut narrow = Narrow::with_capacity(numbers.size_hint().0);
        numbers.for_each(|n| narrow.push(n));
        narrow
    }
}

/// Equal when they hold the same numbers, whatever their widths.
impl PartialEq for Narrow {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Narrow {}
