//! Reading the wall clock for authors (PROFILE §3), behind the `clock` feature: the only
//! clock read of the core, off unless asked for. Everything else in the core takes the
//! time as an argument; the engine turns the feature on for its authoring helpers.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::time::Timestamp;

impl Timestamp {
    /// The current UTC time, to the millisecond. A clock before 1970 reads as the epoch; a
    /// clock past year 9999 reads as the last representable millisecond.
    #[allow(clippy::disallowed_methods)] // the core's one clock read
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
