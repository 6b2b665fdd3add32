//! Where the log holds each admitted event, 8 bytes per event instead of a [`LogPos`]'s 16:
//! a segment file never reaches 4 GiB ([`MAX_SEGMENT_FILE`]), so an offset fits in 32 bits
//! beside the 32-bit segment number.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use crate::store::log::{LogPos, MAX_SEGMENT_FILE};

/// A [`LogPos`] packed into 8 bytes (segment in the high half, offset in the low half).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PackedPos(u64);

impl PackedPos {
    /// Packs `at`; refused when its offset lies beyond any segment file (a damaged record).
    pub fn new(at: LogPos) -> Result<PackedPos, String> {
        match u32::try_from(at.offset) {
            Ok(offset) if at.offset <= MAX_SEGMENT_FILE => {
                Ok(PackedPos(u64::from(at.segment) << 32 | u64::from(offset)))
            }
            _ => Err(format!(
                "log offset {} lies beyond the largest segment file",
                at.offset
            )),
        }
    }

    /// The position it packs.
    pub fn get(self) -> LogPos {
        LogPos::new((self.0 >> 32) as u32, self.0 & u64::from(u32::MAX))
    }
}

/// Admitted events' log positions, by admission position.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct LogPositions(Vec<PackedPos>);

impl LogPositions {
    /// Room for `n` positions.
    pub fn with_capacity(n: usize) -> Self {
        LogPositions(Vec::with_capacity(n))
    }

    /// Appends the next admitted event's position.
    pub fn push(&mut self, at: PackedPos) {
        self.0.push(at);
    }

    /// The position of the event admitted `index`-th.
    pub fn get(&self, index: usize) -> Option<LogPos> {
        self.0.get(index).map(|p| p.get())
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Every position, in admission order.
    pub fn iter(&self) -> impl Iterator<Item = LogPos> + '_ {
        self.0.iter().map(|p| p.get())
    }

    /// The positions from admission index `from` on.
    pub fn from(&self, from: usize) -> Vec<LogPos> {
        self.0
            .get(from..)
            .map(|rest| rest.iter().map(|p| p.get()).collect())
            .unwrap_or_default()
    }
}
