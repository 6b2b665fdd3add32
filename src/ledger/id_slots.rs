//! The id table's lookup slots: positions found by a hash, five bytes a slot, sized to the
//! ids it holds rather than to a power of two.
//!
//! Open addressing with linear probing. Each slot has a one-byte tag (0 = empty, else the
//! high bit and seven bits of the hash) beside its `u32` position, so a probe compares an
//! id only when its tag matches (one time in 128 for a stranger). The home slot is the
//! hash scaled to the slot count (a multiply, no modulo), so the count can be any number:
//! a table opened for a million ids holds 1.2 million slots (6 bytes an id), where a
//! power-of-two table of the same load would hold two million (10.5 bytes an id). At most
//! seven slots in eight are used; past that the table grows by half.
//!
//! Nothing is ever removed (admitted ids stay), so there are no tombstones, and a slot
//! once used stays used: a lookup that finds nothing can hand back where it stopped (a
//! [`Vacancy`]), and an insert of the same hash into the table, still of that size, may
//! start probing there instead of at the home slot, past slots it would only pass again.
//! That is how admission finds a new id and places it with one probe of the table (the
//! decision looks it up; the commit inserts it). Pure data.

/// Where a lookup that found nothing stopped: the first empty slot of its hash's probe run,
/// in a table of `slots` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vacancy {
    slot: usize,
    slots: usize,
}

/// Slots per position held when a table is sized for a known count (a load of 5/6).
const SLOTS_PER_ID: (usize, usize) = (6, 5);

/// Position-valued slots keyed by hash; see the module documentation.
#[derive(Clone, Default)]
pub(super) struct IdSlots {
    tags: Vec<u8>,
    positions: Vec<u32>,
    used: usize,
}

/// The tag of a hash: never 0.
#[inline]
fn tag_of(hash: u64) -> u8 {
    0x80 | (hash as u8 & 0x7f)
}

impl IdSlots {
    /// Slots for `n` positions at a load of 5/6.
    pub(super) fn for_count(n: usize) -> Self {
        let slots = n
            .saturating_mul(SLOTS_PER_ID.0)
            .checked_div(SLOTS_PER_ID.1)
            .unwrap_or(n)
            .saturating_add(16);
        IdSlots {
            tags: vec![0; slots],
            positions: vec![0; slots],
            used: 0,
        }
    }

    /// Number of slots (used or not).
    pub(super) fn slots(&self) -> usize {
        self.tags.len()
    }

    /// The home slot of a hash.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        ((u128::from(hash) * self.tags.len() as u128) >> 64) as usize
    }

    /// Looks `hash` up from slot `start` (its home slot, or a vacancy its probe run reached
    /// before): `Ok(position)` for the stored position `is` accepts, `Err(slot)` for the
    /// empty slot where it would go (`Err(None)` when there is no slot at all).
    #[inline]
    fn probe(
        &self,
        hash: u64,
        start: usize,
        is: impl Fn(u32) -> bool,
    ) -> Result<u32, Option<usize>> {
        let slots = self.tags.len();
        let tag = tag_of(hash);
        let mut i = start;
        for _ in 0..slots {
            match self.tags.get(i) {
                Some(0) | None => return Err(Some(i)),
                Some(&t) if t == tag => {
                    if let Some(&p) = self.positions.get(i) {
                        if is(p) {
                            return Ok(p);
                        }
                    }
                }
                Some(_) => {}
            }
            i += 1;
            if i == slots {
                i = 0;
            }
        }
        Err(None)
    }

    /// The position stored under `hash` that `is` accepts.
    #[inline]
    pub(super) fn find(&self, hash: u64, is: impl Fn(u32) -> bool) -> Option<u32> {
        self.probe(hash, self.home(hash), is).ok()
    }

    /// [`IdSlots::find`], or where the lookup stopped when nothing matched (`None` for a
    /// table without slots).
    #[inline]
    pub(super) fn find_or_vacancy(
        &self,
        hash: u64,
        is: impl Fn(u32) -> bool,
    ) -> Result<u32, Option<Vacancy>> {
        let slots = self.slots();
        self.probe(hash, self.home(hash), is)
            .map_err(|slot| slot.map(|slot| Vacancy { slot, slots }))
    }

    /// Stores the next position (as many as the slots hold: positions are 0, 1, 2, … in
    /// the order they were stored) under `hash` and returns it, unless a position `is`
    /// accepts is already there (then `None`). `rehash` gives the hash of a stored
    /// position, for growing. A `vacancy` that [`IdSlots::find_or_vacancy`] gave for the
    /// same `hash` on this table starts the probe there, unless the table has grown since.
    pub(super) fn insert(
        &mut self,
        hash: u64,
        vacancy: Option<Vacancy>,
        is: impl Fn(u32) -> bool,
        rehash: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        let position = u32::try_from(self.used).ok()?;
        if self.used.saturating_add(1).saturating_mul(8) > self.slots().saturating_mul(7) {
            self.grow(rehash);
        }
        let start = match vacancy {
            Some(v) if v.slots == self.slots() && v.slot < v.slots => v.slot,
            _ => self.home(hash),
        };
        match self.probe(hash, start, is) {
            Ok(_) => None,
            Err(Some(slot)) => {
                self.put(slot, hash, position);
                Some(position)
            }
            // Unreachable: growing leaves free slots.
            Err(None) => None,
        }
    }

    fn put(&mut self, slot: usize, hash: u64, position: u32) {
        if let (Some(t), Some(p)) = (self.tags.get_mut(slot), self.positions.get_mut(slot)) {
            *t = tag_of(hash);
            *p = position;
            self.used += 1;
        }
    }

    /// Moves every position into half as many slots again. The positions are rehashed in
    /// order, so their ids are read one after another rather than in slot order (at
    /// random): a growth of a million-id table misses the cache far less.
    fn grow(&mut self, rehash: impl Fn(u32) -> u64) {
        let slots = self.slots().saturating_add(self.slots() / 2).max(16);
        let mut grown = IdSlots {
            tags: vec![0; slots],
            positions: vec![0; slots],
            used: 0,
        };
        for p in (0..self.used).filter_map(|p| u32::try_from(p).ok()) {
            let hash = rehash(p);
            if let Err(Some(slot)) = grown.probe(hash, grown.home(hash), |_| false) {
                grown.put(slot, hash, p);
            }
        }
        *self = grown;
    }
}
