//! What admission asks of committed events, and the engine's read-back of its own log.
//!
//! Admission ([`super::admit`]) reads committed events through [`Stored`]: the segment log
//! in a ledger, a map in tests. Reading an event back from the log is the one place the
//! engine turns stored bytes into a verified event without checking them again
//! ([`Event::reread_unchecked`]): every entry of the log was verified before it was
//! written, and the log checksums its frames.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use crate::error::Error;
use crate::event::Event;
use crate::layout;
use crate::store::log::{segment_file_name, LogPos, SegmentReader};

use super::log_error;

/// Committed events, as admission needs them.
pub trait Stored {
    /// The committed event at `at` (a pending event read back to be released).
    fn event(&self, at: LogPos) -> Result<Event, Error>;

    /// Whether the committed event at `at` has exactly `bytes` (a resent event's
    /// duplicate check). An unreadable entry holds nothing.
    fn holds(&self, at: LogPos, bytes: &[u8]) -> bool;
}

impl Stored for SegmentReader {
    fn event(&self, at: LogPos) -> Result<Event, Error> {
        let (_, bytes) = self.read(at).map_err(log_error)?;
        reread(&bytes, at)
    }

    fn holds(&self, at: LogPos, bytes: &[u8]) -> bool {
        self.read(at).is_ok_and(|(_, stored)| stored == bytes)
    }
}

/// Re-reads the event the log holds at `at` (see the module doc); bytes that no longer
/// read are corruption of the log.
pub fn reread(bytes: &[u8], at: LogPos) -> Result<Event, Error> {
    Event::reread_unchecked(bytes).map_err(|r| Error::Corrupt {
        path: format!("{}/{}", layout::LOG, segment_file_name(at.segment)).into(),
        offset: at.offset,
        reason: format!("stored event does not parse: {r}"),
    })
}
