//! The pending set: every stored event still waiting for a dependency, each filed under the
//! one missing dependency it waits for. Slots of fixed size (the id, the dependency, the
//! log position, the size and two links: 104 bytes) in one vector. A table of `u32` slot
//! numbers finds a slot by id; another finds, per dependency, the first of the slots filed
//! under it, which are linked to each other. So a pending event costs about what an
//! admitted one does, however many parents it names, and filing the ten-thousandth event
//! under one dependency (all waiting for a realm's create event, say) costs what filing
//! the first did.
//!
//! Pure data; iteration is in slot order, [`PendingSet::sorted`] in canonical id order.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use hashbrown::HashTable;

use crate::id::{DigestSuite, EventId};
use crate::store::log::LogPos;

use super::id_table::{id_hash, IdHasher};
use super::state::PendingEntry;

/// No slot (the end of a dependency's list).
const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Slot {
    id: [u8; 33],
    waits_for: [u8; 33],
    size: u32,
    at: LogPos,
    /// The neighbours filed under the same dependency.
    prev: u32,
    next: u32,
}

/// Pending events by id, and by the dependency each is filed under.
#[derive(Clone, Default)]
pub struct PendingSet {
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    by_id: HashTable<u32>,
    /// Per dependency, the first slot of its list.
    by_dep: HashTable<u32>,
    hasher: IdHasher,
    bytes: usize,
}

impl PendingSet {
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
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
        let mut slot = Slot {
            id,
            waits_for: e.waits_for,
            size: e.size,
            at: e.at,
            prev: NONE,
            next: NONE,
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
        // Put it first in its dependency's list.
        let dep = slot.waits_for;
        let slots = &self.slots;
        let head = self.by_dep.find_mut(
            dep_hash,
            |&h| matches!(slots.get(h as usize), Some(Some(s)) if s.waits_for == dep),
        );
        let old_head = head.map(|h| std::mem::replace(h, n));
        if let Some(old) = old_head {
            slot.next = old;
            if let Some(Some(first)) = self.slots.get_mut(old as usize) {
                first.prev = n;
            }
        }
        if let Some(place) = self.slots.get_mut(n as usize) {
            *place = Some(slot);
        }
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.by_id
            .insert_unique(id_hash_of, n, rehash(slots, hasher, |s| &s.id));
        if old_head.is_none() {
            self.by_dep
                .insert_unique(dep_hash, n, rehash(slots, hasher, |s| &s.waits_for));
        }
    }

    fn set_link(&mut self, n: u32, f: impl FnOnce(&mut Slot)) {
        if let Some(Some(slot)) = self.slots.get_mut(n as usize) {
            f(slot);
        }
    }

    /// Removes pending event `id`; its entry, if it was pending.
    pub fn remove(&mut self, id: &EventId) -> Option<PendingEntry> {
        let n = self.find(id.bytes())?;
        let slot = self.slots.get_mut(n as usize)?.take()?;
        let hash = id_hash(&self.hasher, &slot.id);
        if let Ok(found) = self.by_id.find_entry(hash, |&m| m == n) {
            found.remove();
        }
        // Unlink it from its dependency's list; the list's head moves on when it was first.
        let (prev, next) = (slot.prev, slot.next);
        if prev == NONE {
            let hash = id_hash(&self.hasher, &slot.waits_for);
            if let Ok(mut found) = self.by_dep.find_entry(hash, |&m| m == n) {
                if next == NONE {
                    found.remove();
                } else {
                    *found.get_mut() = next;
                }
            }
        } else {
            self.set_link(prev, |p| p.next = next);
        }
        if next != NONE {
            self.set_link(next, |s| s.prev = prev);
        }
        self.free.push(n);
        self.bytes = self.bytes.saturating_sub(slot.size as usize);
        entry(&slot)
    }

    /// The pending events filed under `dep`, in canonical order.
    pub fn waiters(&self, dep: &EventId) -> Vec<EventId> {
        let raw = dep.bytes();
        let mut out = Vec::new();
        let first = self.by_dep.find(id_hash(&self.hasher, raw), |&h| {
            self.slot(h).is_some_and(|s| &s.waits_for == raw)
        });
        let mut at = first.copied().unwrap_or(NONE);
        while let Some(slot) = self.slot(at) {
            out.extend(EventId::from_bytes(&slot.id).ok());
            at = slot.next;
        }
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
    hasher: &'a IdHasher,
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
