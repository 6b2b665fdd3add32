//! [`Ledger::watch_events`]: every admitted event, in admission order, on a bounded feed.
//!
//! Each event carries its admission position (0-based, as in [`Ledger::iter_from`]). Events
//! released from pending arrive when they are admitted, in the order the batch admitted
//! them. The feed is bounded by [`EVENT_FEED_CAPACITY`] events and [`EVENT_FEED_BYTES`]
//! bytes; a subscriber that falls behind gets [`WatchedEvent::Lagged`] and re-reads the
//! gap with [`Ledger::iter_from`] (the machinery is the exchange feed's, `feed.rs`).

use crate::error::Error;
use crate::event::Event;
use crate::limits::{EVENT_FEED_BYTES, EVENT_FEED_CAPACITY};

use super::feed::{bounded, Feed, FeedItem, FeedSender};
use super::Ledger;

/// One item of an [`EventFeed`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum WatchedEvent {
    /// An event was admitted (on arrival, or released from pending).
    Admitted {
        /// Its admission position: the ledger's `n`-th admitted event, from 0.
        position: u64,
        /// The event.
        event: Event,
    },
    /// Events were dropped because the subscriber fell behind: re-read them with
    /// [`Ledger::iter_from`] from the position after the last one seen.
    Lagged,
}

/// Every event the ledger admits from the subscription on, from [`Ledger::watch_events`].
///
/// Subscribe, then read what came before: the feed delivers exactly the events at
/// positions [`EventFeed::start`] and later, and [`Ledger::iter`] (or `iter_from`) holds
/// those before it, so nothing is missed and nothing is seen twice.
///
/// # Examples
///
/// See [`Ledger::watch_events`].
pub type EventFeed = Feed<WatchedEvent>;

impl FeedItem for WatchedEvent {
    fn lagged() -> Self {
        WatchedEvent::Lagged
    }
}

/// The ledger's event subscribers.
pub(super) type EventWatchers = Vec<FeedSender<WatchedEvent>>;

impl EventFeed {
    /// The position of the first event this feed delivers: the number of events admitted
    /// when it subscribed.
    pub fn start(&self) -> u64 {
        self.start
    }
}

impl Ledger {
    /// A feed of every event admitted from now on, in admission order, released pending
    /// events included (see [`EventFeed`] for the subscribe-then-read order and the bound).
    /// The feed may be dropped at any time.
    ///
    /// # Examples
    ///
    /// ```
    /// use akledger::ledger::WatchedEvent;
    /// use akledger::workload::{sidecar_workload, SidecarSpec};
    /// use akledger::Ledger;
    ///
    /// let w = sidecar_workload(5, SidecarSpec { exchanges: 1, agents: 1, forgeries: false, skills: false })?;
    /// let dir = tempfile::tempdir()?;
    /// let ledger = Ledger::open(dir.path())?;
    /// let (first, rest) = w.events.split_first().ok_or("empty")?;
    /// ledger.append(first.bytes())?;
    ///
    /// let feed = ledger.watch_events(); // subscribe, then read what came before
    /// let before: Vec<_> = ledger.iter().take(feed.start() as usize).collect::<Result<_, _>>()?;
    /// assert_eq!(before.len(), 1);
    /// for event in rest.iter().rev() {
    ///     ledger.append(event.bytes())?; // newest first: pending until the chain closes
    /// }
    /// let mut seen = Vec::new();
    /// while let Some(item) = feed.try_next() {
    ///     match item {
    ///         WatchedEvent::Admitted { position, event } => seen.push((position, event.id())),
    ///         // Fell behind: re-read with `ledger.iter_from(last seen + 1)` and carry on.
    ///         WatchedEvent::Lagged => {}
    ///         _ => {}
    ///     }
    /// }
    /// let expected: Vec<_> = (1u64..).zip(ledger.iter_from(1).map(|e| e.map(|e| e.id())))
    ///     .map(|(p, id)| id.map(|id| (p, id)))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(seen, expected);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch_events(&self) -> EventFeed {
        // Under the state lock, so no commit falls between the count and the subscription.
        let state = self.read_state();
        let start = state.as_ref().map_or(0, |s| s.len()) as u64;
        let (tx, rx) = bounded(EVENT_FEED_CAPACITY, EVENT_FEED_BYTES, start);
        if let Ok(mut watchers) = self.event_watchers.lock() {
            watchers.push(tx);
        }
        drop(state);
        rx
    }

    /// Admitted events from admission position `from` on (0-based), in admission order.
    pub fn iter_from(&self, from: u64) -> impl Iterator<Item = Result<Event, Error>> + '_ {
        let at: Vec<_> = self
            .state
            .read()
            .map(|s| {
                let from = usize::try_from(from).unwrap_or(usize::MAX);
                s.at.from(from)
            })
            .unwrap_or_default();
        at.into_iter().map(move |at| self.read_event(at))
    }

    /// Whether any event feed is open (asked under the state write lock, it holds until the
    /// lock is released: subscribing takes the state lock).
    pub(super) fn has_event_watchers(&self) -> bool {
        self.event_watchers
            .lock()
            .map_or(true, |watchers| !watchers.is_empty())
    }

    /// Hands the events a commit admitted (positions from `first`) to every event feed,
    /// forgetting feeds whose subscriber is gone. Called under the state write lock.
    pub(super) fn announce_admitted(&self, first: usize, admitted: &[Event]) {
        let Ok(mut watchers) = self.event_watchers.lock() else {
            return;
        };
        if watchers.is_empty() {
            return;
        }
        // A subscriber may keep an event long after its batch: not the batch's whole read
        // buffer with it.
        let admitted: Vec<Event> = admitted.iter().map(Event::detached).collect();
        watchers.retain(|tx| {
            admitted.iter().enumerate().all(|(i, event)| {
                let position = (first + i) as u64;
                let item = WatchedEvent::Admitted {
                    position,
                    event: event.clone(),
                };
                tx.send(item, event.bytes().len())
            })
        });
    }
}
