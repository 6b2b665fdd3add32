//! Where the log holds each admitted event, about 4 bytes per event instead of a
//! [`LogPos`]'s 16: a segment file never reaches 4 GiB ([`MAX_SEGMENT_FILE`]), so an offset
//! fits in 32 bits, and events admitted one after another mostly lie in one segment, so the
//! segment number is kept once per run.
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

/// Admitted events' log positions, by admission position: each offset in 32 bits, and the
/// segment once per run of events in the same segment (a new run starts only where the
/// segment changes, which happens once per segment file for events admitted as they are
/// written, and rarely otherwise). About 4 bytes per event.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct LogPositions {
    offsets: Vec<u32>,
    /// `(first index, segment)` of each run, ascending by index.
    runs: Vec<(u32, u32)>,
}

impl LogPositions {
    /// Room for `n` positions.
    pub fn with_capacity(n: usize) -> Self {
        LogPositions {
            offsets: Vec::with_capacity(n),
            runs: Vec::new(),
        }
    }

    /// Appends the next admitted event's position.
    pub fn push(&mut self, at: PackedPos) {
        let LogPos { segment, offset } = at.get();
        if self.runs.last().map(|&(_, s)| s) != Some(segment) {
            let first = u32::try_from(self.offsets.len()).unwrap_or(u32::MAX);
            self.runs.push((first, segment));
        }
        // `PackedPos::new` checked that the offset fits.
        self.offsets.push(offset as u32);
    }

    /// The segment of the event admitted `index`-th.
    fn segment(&self, index: usize) -> Option<u32> {
        let run = self
            .runs
            .partition_point(|&(first, _)| first as usize <= index);
        self.runs.get(run.checked_sub(1)?).map(|&(_, s)| s)
    }

    /// The position of the event admitted `index`-th.
    pub fn get(&self, index: usize) -> Option<LogPos> {
        let offset = *self.offsets.get(index)?;
        Some(LogPos::new(self.segment(index)?, u64::from(offset)))
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Every position, in admission order.
    pub fn iter(&self) -> impl Iterator<Item = LogPos> + '_ {
        self.iter_from(0)
    }

    fn iter_from(&self, from: usize) -> impl Iterator<Item = LogPos> + '_ {
        let mut runs = self.runs.iter().peekable();
        let mut segment = self.segment(from).unwrap_or(0);
        let offsets = self.offsets.get(from..).unwrap_or(&[]);
        offsets.iter().enumerate().map(move |(i, &offset)| {
            let i = from + i;
            while let Some(&&(first, s)) = runs.peek() {
                if first as usize > i {
                    break;
                }
                segment = s;
                runs.next();
            }
            LogPos::new(segment, u64::from(offset))
        })
    }

    /// The positions from admission index `from` on.
    pub fn from(&self, from: usize) -> Vec<LogPos> {
        self.iter_from(from).collect()
    }
}
