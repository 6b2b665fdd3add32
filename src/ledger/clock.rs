//! The clock as seen from a ledger: the time an event with admitted parents may carry.
//! `Timestamp::now` itself is the core's (its `clock` feature, which the engine enables).

use crate::error::Error;
use crate::id::EventId;
use crate::time::Timestamp;

use super::Ledger;

impl Ledger {
    /// [`Timestamp::now_after`] the admitted events `parents`. An id that is not admitted is
    /// [`Error::NotFound`].
    pub fn now_after(&self, parents: &[EventId]) -> Result<Timestamp, Error> {
        let mut stamps = Vec::with_capacity(parents.len());
        for id in parents {
            let event = self.get(id)?.ok_or(Error::NotFound(*id))?;
            stamps.push(event.created_at());
        }
        Ok(Timestamp::now_after(stamps))
    }
}
