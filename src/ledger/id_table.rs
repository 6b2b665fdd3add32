//! The admitted events' ids in admission order, and the way back from an id to its dense
//! position. Each id is stored once, as its 33 bytes; the lookup slots (`id_slots.rs`) hold
//! only `u32` positions and a tag byte, and compare candidates against the stored ids.
//! About 39 bytes per event, against ~200 for a `Vec<EventId>` plus a
//! `HashMap<EventId, Pos>` (an `EventId` carries its text form: 77 bytes, kept twice).
//!
//! Pure data. The hash of an id is a keyed hash of its first eight digest bytes (one
//! folded 64×64→128-bit multiply, not SipHash: digests are already uniform), and the key,
//! drawn per table from the standard library's random hash keys, keeps crafted ids from
//! piling into one probe run.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::hash::{BuildHasher, RandomState};

use super::id_slots::IdSlots;
pub use super::id_slots::Vacancy;
use crate::dag::Pos;
use crate::id::{DigestSuite, EventId};

/// The key of the ids' hash: two secret words, the multiplier odd.
#[derive(Clone, Copy)]
pub(super) struct IdHasher {
    k0: u64,
    k1: u64,
}

impl Default for IdHasher {
    /// A fresh key from the standard library's random hash keys.
    fn default() -> Self {
        let keys = RandomState::new();
        IdHasher {
            k0: keys.hash_one(0u64),
            k1: keys.hash_one(1u64) | 1,
        }
    }
}

/// The hash of an id's 33 bytes: its first eight digest bytes, xored with one key word and
/// multiplied by the other into 128 bits, whose halves are folded together (every output
/// bit depends on every input bit and on the key).
pub(super) fn id_hash(hasher: &IdHasher, raw: &[u8; 33]) -> u64 {
    let mut prefix = [0u8; 8];
    if let Some(digest) = raw.get(1..9) {
        prefix.copy_from_slice(digest);
    }
    let product = u128::from(u64::from_le_bytes(prefix) ^ hasher.k0) * u128::from(hasher.k1);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of the id at a position already in the table (for the table's growth).
fn rehash<'a>(ids: &'a [[u8; 33]], hasher: &'a IdHasher) -> impl Fn(u32) -> u64 + 'a {
    move |p| {
        ids.get(p as usize)
            .map_or(0, |stored| id_hash(hasher, stored))
    }
}

/// Ids by position, and positions by id.
#[derive(Clone, Default)]
pub struct IdTable {
    ids: Vec<[u8; 33]>,
    index: IdSlots,
    hasher: IdHasher,
}

impl IdTable {
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    fn hash(hasher: &IdHasher, raw: &[u8; 33]) -> u64 {
        id_hash(hasher, raw)
    }

    /// The position of `id`, if it is in the table.
    pub fn get(&self, id: &EventId) -> Option<Pos> {
        self.find(id.bytes())
    }

    fn find(&self, raw: &[u8; 33]) -> Option<Pos> {
        let ids = &self.ids;
        self.index
            .find(Self::hash(&self.hasher, raw), |p| {
                ids.get(p as usize) == Some(raw)
            })
            .map(Pos::new)
    }

    /// The position of `id`, or where a lookup of it stopped (see [`IdTable::push_at`]).
    pub fn find_or_vacancy(&self, id: &EventId) -> Result<Pos, Option<Vacancy>> {
        let (ids, raw) = (&self.ids, id.bytes());
        self.index
            .find_or_vacancy(Self::hash(&self.hasher, raw), |p| {
                ids.get(p as usize) == Some(raw)
            })
            .map(Pos::new)
    }

    /// True when `id` is in the table.
    pub fn contains(&self, id: &EventId) -> bool {
        self.get(id).is_some()
    }

    /// Appends `id` at the next position and returns it; `None` when the id is already
    /// there or positions are exhausted. With a `vacancy` that
    /// [`IdTable::find_or_vacancy`] gave for this id on this table, the probe starts there
    /// (ids pushed since move it on; a growth of the table voids it): the lookup and the
    /// insert then probe the table once between them.
    pub fn push_at(&mut self, id: &EventId, vacancy: Option<Vacancy>) -> Option<Pos> {
        let raw = *id.bytes();
        let (ids, hasher) = (&self.ids, &self.hasher);
        // The slots hold one position per id, so the next is the id's place in `ids`.
        let pos = self.index.insert(
            Self::hash(hasher, &raw),
            vacancy,
            |p| ids.get(p as usize) == Some(&raw),
            rehash(ids, hasher),
        )?;
        self.ids.push(raw);
        Some(Pos::new(pos))
    }

    /// The id at `pos`.
    pub fn id_at(&self, pos: Pos) -> Option<EventId> {
        EventId::from_bytes(self.ids.get(pos.index())?).ok()
    }

    /// The ids' bytes, by position.
    pub fn raw(&self) -> &[[u8; 33]] {
        &self.ids
    }

    /// A table of these ids, in this order; `None` when an id repeats or a header is not
    /// a known digest suite.
    pub fn from_raw(ids: Vec<[u8; 33]>) -> Option<IdTable> {
        let count = u32::try_from(ids.len()).ok()?;
        let mut table = IdTable {
            index: IdSlots::for_count(ids.len()),
            ids,
            hasher: IdHasher::default(),
        };
        let IdTable { ids, index, hasher } = &mut table;
        for raw in ids.iter().take(count as usize) {
            DigestSuite::from_header(*raw.first()?).ok()?;
            // `None` for an id already there.
            index.insert(
                Self::hash(hasher, raw),
                None,
                |p| ids.get(p as usize) == Some(raw),
                rehash(ids, hasher),
            )?;
        }
        Some(table)
    }
}

impl PartialEq for IdTable {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids
    }
}

impl Eq for IdTable {}

impl std::fmt::Debug for IdTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdTable")
            .field("len", &self.ids.len())
            .finish_non_exhaustive()
    }
}
