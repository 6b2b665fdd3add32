//! Where the checkpoint clocks live, two bytes per entry when they can be.
//!
//! A checkpoint clock holds, for every chain, the highest member covered (0 = none). In a
//! ledger whose writers move at similar paces those numbers lie close together: the
//! clock of a member near the top of one chain names members near the tops of the
//! others. So a clock whose non-zero entries span fewer than 2¹⁶ values is stored *narrow*,
//! as 16-bit offsets from its smallest non-zero entry (its `base`; a stored 0 is still
//! "none", a stored `v` is `base + v − 1`), and any other clock is stored *wide*, in full
//! 32-bit entries. The choice is made per clock, so a clock that spans too much costs what
//! it did before and no clock is ever approximated.
//!
//! Pure data, no IO. A [`StoredClock`] says which store a clock is in and where; the
//! [`ClockEntries`] view reads either the same way.

use std::borrow::Cow;

/// Where one clock is stored: `base == 0` for a wide clock, otherwise the base of a narrow
/// one (narrow bases are non-zero entries, so at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StoredClock {
    pub(crate) start: usize,
    pub(crate) len: u32,
    pub(crate) base: u32,
}

impl StoredClock {
    /// The narrow base, or `None` for a wide clock.
    pub(crate) fn narrow_base(&self) -> Option<u32> {
        (self.base != 0).then_some(self.base)
    }
}

/// The checkpoint clocks of one index: the narrow ones and the wide ones, each one after
/// another.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClockPool {
    narrow: Vec<u16>,
    wide: Vec<u32>,
}

impl ClockPool {
    /// An empty pool with room for `narrow` and `wide` entries.
    pub(crate) fn with_capacity(narrow: usize, wide: usize) -> Self {
        ClockPool {
            narrow: Vec::with_capacity(narrow),
            wide: Vec::with_capacity(wide),
        }
    }

    /// The base `clock` is stored narrow with, or `None` when it is stored wide.
    pub(crate) fn narrow_base(clock: &[u32]) -> Option<u32> {
        let (lowest, highest) = clock.iter().fold((u32::MAX, 0), |(lo, hi), &e| match e {
            0 => (lo, hi),
            e => (lo.min(e), hi.max(e)),
        });
        match highest {
            0 => Some(1),
            _ => (highest - lowest < u32::from(u16::MAX)).then_some(lowest),
        }
    }

    /// Stores `clock` and says where it is.
    pub(crate) fn push(&mut self, clock: &[u32]) -> StoredClock {
        let len = u32::try_from(clock.len()).unwrap_or(u32::MAX);
        if let Some(lowest) = ClockPool::narrow_base(clock) {
            let start = self.narrow.len();
            self.narrow.extend(clock.iter().map(|&e| match e {
                0 => 0,
                // `e - lowest + 1` is at most u16::MAX by the test above.
                e => u16::try_from(e - lowest + 1).unwrap_or(u16::MAX),
            }));
            StoredClock {
                start,
                len,
                base: lowest,
            }
        } else {
            let start = self.wide.len();
            self.wide.extend_from_slice(clock);
            StoredClock {
                start,
                len,
                base: 0,
            }
        }
    }

    /// The entries of a clock this pool stored (none for one it did not).
    pub(crate) fn entries(&self, at: &StoredClock) -> ClockEntries<'_> {
        let range = at.start..at.start.saturating_add(at.len as usize);
        match at.narrow_base() {
            Some(base) => ClockEntries::Narrow {
                base,
                entries: self.narrow.get(range).unwrap_or(&[]),
            },
            None => ClockEntries::Full(Cow::Borrowed(self.wide.get(range).unwrap_or(&[]))),
        }
    }

    /// Entry `chain` of a stored clock (0 beyond its length).
    #[inline]
    pub(crate) fn entry(&self, at: &StoredClock, chain: u32) -> u32 {
        if chain >= at.len {
            return 0;
        }
        let i = at.start.saturating_add(chain as usize);
        match at.narrow_base() {
            Some(base) => self.narrow.get(i).map_or(0, |&v| narrow_value(base, v)),
            None => self.wide.get(i).copied().unwrap_or(0),
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.narrow.capacity() * std::mem::size_of::<u16>()
            + self.wide.capacity() * std::mem::size_of::<u32>()
    }

    /// Entries stored, narrow and wide (for tests and measurements).
    pub(crate) fn stored(&self) -> (usize, usize) {
        (self.narrow.len(), self.wide.len())
    }
}

/// The value of narrow entry `v` of a clock with base `base`.
#[inline]
fn narrow_value(base: u32, v: u16) -> u32 {
    match v {
        0 => 0,
        v => base.saturating_add(u32::from(v) - 1),
    }
}

/// A checkpoint clock's stored entries, as its source holds them: entry `c` is the highest
/// sequence number of chain `c` covered by the checkpointed member (0 = none); entries past
/// [`ClockEntries::len`] are 0.
#[derive(Clone, Debug)]
pub enum ClockEntries<'a> {
    /// Full 32-bit entries.
    Full(Cow<'a, [u32]>),
    /// 16-bit offsets from `base`: 0 is 0, `v` is `base + v − 1`.
    Narrow {
        /// The clock's smallest non-zero entry.
        base: u32,
        /// The offsets.
        entries: &'a [u16],
    },
}

impl ClockEntries<'_> {
    /// Number of stored entries.
    pub fn len(&self) -> usize {
        match self {
            ClockEntries::Full(entries) => entries.len(),
            ClockEntries::Narrow { entries, .. } => entries.len(),
        }
    }

    /// Whether no entry is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, in chain order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (full, narrow) = match self {
            ClockEntries::Full(entries) => (entries.as_ref(), None),
            ClockEntries::Narrow { base, entries } => (&[][..], Some((*base, *entries))),
        };
        let narrow = narrow
            .into_iter()
            .flat_map(|(base, entries)| entries.iter().map(move |&v| narrow_value(base, v)));
        full.iter().copied().chain(narrow)
    }

    /// The entries as a vector.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// Raises each `acc[c]` to entry `c` where the entry is higher.
    pub fn join_into(&self, acc: &mut [u32]) {
        match self {
            ClockEntries::Full(entries) => {
                for (a, &e) in acc.iter_mut().zip(entries.iter()) {
                    *a = (*a).max(e);
                }
            }
            ClockEntries::Narrow { base, entries } => {
                for (a, &v) in acc.iter_mut().zip(entries.iter()) {
                    *a = (*a).max(narrow_value(*base, v));
                }
            }
        }
    }
}
