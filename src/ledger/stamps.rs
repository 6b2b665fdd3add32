//! The admitted events' `created_at` stamps, about four bytes each instead of eight.
//!
//! The DAG index already keeps each event's generation number, `gen = max(stamp, parents'
//! gen + 1)`, and admission refuses an event created before one of its parents
//! (`created_at_before_causal_predecessor`), so `gen − stamp` is at most the event's depth
//! in the DAG: it fits in 32 bits. Only that lag is kept, and the stamp is read back as
//! `gen − lag`. A lag that does not fit (which admission rules out) is kept whole in a side
//! map rather than refused, so the stamps stay exact whatever a caller stored.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::collections::BTreeMap;

use crate::dag::{DagIndex, Pos};

/// The lag that says "kept whole in the side map".
const FAR: u32 = u32::MAX;

/// Stamps by position, as lags behind the DAG's generation numbers.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct Stamps {
    lags: Vec<u32>,
    far: BTreeMap<u32, u64>,
}

impl Stamps {
    /// Room for `n` stamps.
    pub fn with_capacity(n: usize) -> Self {
        Stamps {
            lags: Vec::with_capacity(n),
            far: BTreeMap::new(),
        }
    }

    /// Appends the stamp of the next position, whose generation number is `gen`.
    pub fn push(&mut self, stamp: u64, gen: u64) {
        let pos = self.lags.len();
        match gen
            .checked_sub(stamp)
            .and_then(|lag| u32::try_from(lag).ok())
        {
            Some(lag) if lag != FAR => self.lags.push(lag),
            _ => {
                self.lags.push(FAR);
                // Positions are `u32` (the DAG index refuses more).
                self.far
                    .insert(u32::try_from(pos).unwrap_or(u32::MAX), stamp);
            }
        }
    }

    /// The stamp at `pos`, read against `dag` (the index the stamps were pushed beside).
    pub fn get(&self, pos: Pos, dag: &DagIndex) -> Option<u64> {
        match *self.lags.get(pos.index())? {
            FAR => self.far.get(&pos.get()).copied(),
            lag => dag.generation(pos)?.checked_sub(u64::from(lag)),
        }
    }
}
