//! The pending set: every stored event still waiting for a dependency, each filed under the
//! one missing dependency it waits for. Slots of fixed size (the id, the dependency, the
//! log position and the size: 96 bytes) in one vector, found by id and by dependency
//! through two tables of `u32` slot numbers, so a pending event costs about what an
//! admitted one does, however many parents it names.
//!
//! Pure data; iteration is in slot order, [`PendingSet::sorted`] in canonical id order.

use std::hash::RandomState;

use hashbrown::HashTable;

use crate::id::{DigestSuite, EventId};
use crate::store::log::LogPos;

use super::id_table::id_hash;
use super::state::PendingEntry;

#[derive(Clone, Debug)]
struct Slot {
    id: [u8; 33],
    waits_for: [u8; 33],
    size: u32,
    at: LogPos,
}

/// Pending events by id, and by the dependency each is filed under.
#[derive(Clone, Default)]
pub struct PendingSet {
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    by_id: HashTable<u32>,
    by_dep: HashTable<u32>,
    hasher: RandomState,
    bytes: usize,
}

impl PendingSet {
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Bytes of the pending events.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn slot(&self, n: u32) -> Option<&Slot> {
        self.slots.get(n as usize)?.as_ref()
    }

    fn find(&self, raw: &[u8; 33]) -> Option<u32> {
        self.by_id
            .find(id_hash(&self.hasher, raw), |&n| {
                self.slot(n).is_some_and(|s| &s.id == raw)
            })
            .copied()
    }

    /// Whether `id` is pending.
    pub fn contains(&self, id: &EventId) -> bool {
        self.find(id.bytes()).is_some()
    }

    /// The entry of pending event `id`.
    pub fn get(&self, id: &EventId) -> Option<PendingEntry> {
        self.slot(self.find(id.bytes())?).and_then(entry)
    }

    /// Room for `n` more pending events (before a bulk load).
    pub fn reserve(&mut self, n: usize) {
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.by_id.reserve(n, rehash(slots, hasher, |s| &s.id));
        self.by_dep
            .reserve(n, rehash(slots, hasher, |s| &s.waits_for));
        self.slots.reserve(n);
    }

    /// Files `id` (replacing an earlier entry of it).
    pub fn insert(&mut self, id: EventId, e: PendingEntry) {
        self.remove(&id);
        self.file(*id.bytes(), e);
    }

    /// Files the event with these id bytes, as a stored row names it; false (and nothing
    /// filed) when the id is not of a known digest suite or is already filed.
    pub fn insert_raw(&mut self, id: [u8; 33], e: PendingEntry) -> bool {
        if DigestSuite::from_header(id[0]).is_err() || self.find(&id).is_some() {
            return false;
        }
        self.file(id, e);
        true
    }

    fn file(&mut self, id: [u8; 33], e: PendingEntry) {
        let slot = Slot {
            id,
            waits_for: e.waits_for,
            size: e.size,
            at: e.at,
        };
        let n = match self.free.pop() {
            Some(n) => n,
            None => {
                let Ok(n) = u32::try_from(self.slots.len()) else {
                    return;
                };
                self.slots.push(None);
                n
            }
        };
        let (id_hash_of, dep_hash) = (
            id_hash(&self.hasher, &slot.id),
            id_hash(&self.hasher, &slot.waits_for),
        );
        self.bytes += slot.size as usize;
        if let Some(place) = self.slots.get_mut(n as usize) {
            *place = Some(slot);
        }
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.by_id
            .insert_unique(id_hash_of, n, rehash(slots, hasher, |s| &s.id));
        self.by_dep
            .insert_unique(dep_hash, n, rehash(slots, hasher, |s| &s.waits_for));
    }

    /// Removes pending event `id`; its entry, if it was pending.
    pub fn remove(&mut self, id: &EventId) -> Option<PendingEntry> {
        let n = self.find(id.bytes())?;
        let slot = self.slots.get_mut(n as usize)?.take()?;
        let hash = id_hash(&self.hasher, &slot.id);
        if let Ok(found) = self.by_id.find_entry(hash, |&m| m == n) {
            found.remove();
        }
        let hash = id_hash(&self.hasher, &slot.waits_for);
        if let Ok(found) = self.by_dep.find_entry(hash, |&m| m == n) {
            found.remove();
        }
        self.free.push(n);
        self.bytes = self.bytes.saturating_sub(slot.size as usize);
        entry(&slot)
    }

    /// The pending events filed under `dep`, in canonical order.
    pub fn waiters(&self, dep: &EventId) -> Vec<EventId> {
        let raw = dep.bytes();
        let mut out: Vec<EventId> = self
            .by_dep
            .iter_hash(id_hash(&self.hasher, raw))
            .filter_map(|&n| self.slot(n))
            .filter(|s| &s.waits_for == raw)
            .filter_map(|s| EventId::from_bytes(&s.id).ok())
            .collect();
        out.sort_unstable();
        out
    }

    /// Every pending event with its entry, in canonical id order.
    pub fn sorted(&self) -> Vec<(EventId, PendingEntry)> {
        let mut out: Vec<(EventId, PendingEntry)> = self
            .slots
            .iter()
            .flatten()
            .filter_map(|s| Some((EventId::from_bytes(&s.id).ok()?, entry(s)?)))
            .collect();
        out.sort_unstable_by_key(|(id, _)| *id);
        out
    }
}

/// How a table of slot numbers rehashes one when it grows: by the `key` of its slot.
fn rehash<'a>(
    slots: &'a [Option<Slot>],
    hasher: &'a RandomState,
    key: fn(&Slot) -> &[u8; 33],
) -> impl Fn(&u32) -> u64 + 'a {
    move |&m| match slots.get(m as usize) {
        Some(Some(s)) => id_hash(hasher, key(s)),
        _ => 0,
    }
}

fn entry(s: &Slot) -> Option<PendingEntry> {
    Some(PendingEntry {
        at: s.at,
        size: s.size,
        waits_for: s.waits_for,
    })
}

impl PartialEq for PendingSet {
    fn eq(&self, other: &Self) -> bool {
        self.sorted() == other.sorted()
    }
}

impl Eq for PendingSet {}

impl std::fmt::Debug for PendingSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSet")
            .field("len", &self.len())
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::DigestSuite;
    use std::collections::BTreeMap;

    fn id(n: u32) -> EventId {
        EventId::from_digest(
            DigestSuite::Blake3,
            blake3::hash(&n.to_le_bytes()).as_bytes(),
        )
    }

    /// Random inserts, refiles and removals against a `BTreeMap` oracle.
    #[test]
    fn agrees_with_a_map_oracle() {
        let mut set = PendingSet::default();
        let mut oracle: BTreeMap<EventId, PendingEntry> = BTreeMap::new();
        let mut rng = crate::workload::SplitMix::new(9);
        for step in 0..20_000u32 {
            let who = id(rng.below(2_000) as u32);
            match rng.below(3) {
                0 | 1 => {
                    let e = PendingEntry::new(
                        LogPos::new(step, u64::from(step) * 7),
                        rng.below(900),
                        id(10_000 + rng.below(50) as u32),
                    );
                    set.insert(who, e);
                    oracle.insert(who, e);
                }
                _ => assert_eq!(set.remove(&who), oracle.remove(&who)),
            }
        }
        assert_eq!(set.len(), oracle.len());
        assert_eq!(
            set.bytes(),
            oracle.values().map(|e| e.size as usize).sum::<usize>()
        );
        assert_eq!(set.sorted(), oracle.clone().into_iter().collect::<Vec<_>>());
        for dep in (10_000..10_050).map(id) {
            let expected: Vec<EventId> = oracle
                .iter()
                .filter(|(_, e)| e.waits_for == *dep.bytes())
                .map(|(i, _)| *i)
                .collect();
            assert_eq!(set.waiters(&dep), expected);
        }
        for n in 0..2_100 {
            assert_eq!(set.get(&id(n)), oracle.get(&id(n)).copied());
        }
    }
}
