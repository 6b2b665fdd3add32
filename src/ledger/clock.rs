//! Reading the wall clock for authors (PROFILE §3). The pure core never reads the clock;
//! these helpers live in the IO shell and hand a [`Timestamp`] to it.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::Error;
use crate::id::EventId;
use crate::time::Timestamp;

use super::Ledger;

impl Timestamp {
    /// The current UTC time, to the millisecond. A clock before 1970 reads as the epoch; a
    /// clock past year 9999 reads as the last representable millisecond.
    pub fn now() -> Timestamp {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Timestamp::from_millis(millis).unwrap_or(Timestamp::MAX)
    }

    /// The current time, but not earlier than any of `parents`: the `created_at` an event
    /// with these causal parents may carry (PROFILE §3,
    /// `created_at_before_causal_predecessor`), even when this machine's clock is behind
    /// the parents' authors'.
    pub fn now_after(parents: impl IntoIterator<Item = Timestamp>) -> Timestamp {
        parents.into_iter().fold(Timestamp::now(), Timestamp::max)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_not_earlier_than_parents_and_tracks_the_clock() {
        let before = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap();
        let now = Timestamp::now();
        assert!(now.millis() >= before);
        let future = Timestamp::from_millis(before + 3_600_000).unwrap();
        assert_eq!(Timestamp::now_after([future, now]), future);
        let past = Timestamp::from_millis(before - 3_600_000).unwrap();
        assert!(Timestamp::now_after([past]) >= now);
        assert!(Timestamp::now_after([]) >= now);
    }
}
