//! Bounded per-subscriber feeds, and the exchange feed built on them.
//!
//! A [`Feed`] holds at most a fixed number of items (and bytes) its subscriber has
//! not read. Past that the ledger drops items and, once the subscriber has read what was
//! queued, hands it one lag marker: it then re-reads what it follows from the ledger (which
//! already holds every dropped item) and continues with the items after the marker.
//! Memory per subscriber is bounded whatever the subscriber does. Both feed types use it:
//! the exchange feed here ([`ExchangeFeed`]: a subscriber that falls
//! [`EXCHANGE_FEED_CAPACITY`] changes behind gets [`ExchangeChange::Lagged`] and re-reads
//! [`Ledger::exchanges`](super::Ledger::exchanges)) and the event feed
//! ([`super::EventFeed`]).
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam::channel::{Receiver, Sender, TryRecvError, TrySendError};

use crate::exchange::{Projection, Status};
use crate::limits::EXCHANGE_FEED_CAPACITY;

/// One item of an [`ExchangeFeed`].
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum ExchangeChange {
    /// An exchange's projection changed (or appeared, with `previous: None`).
    Changed {
        /// The status before this change; `None` when the exchange had no projection.
        previous: Option<Status>,
        /// The projection now.
        projection: Box<Projection>,
    },
    /// Changes were dropped because the subscriber fell behind: re-read the projections.
    Lagged,
}

/// A sidecar's exchange changes, from [`Ledger::exchange_feed`](super::Ledger::exchange_feed).
///
/// Subscribe first, then read the current state with
/// [`Ledger::exchanges`](super::Ledger::exchanges): every change committed after the
/// subscription arrives on the feed, so nothing falls between the read and the feed (a
/// change may be seen twice, once in the read and once on the feed; projections are
/// whole states, so applying one again is harmless).
///
/// # Examples
///
/// See [`Ledger::exchange_feed`](super::Ledger::exchange_feed).
pub type ExchangeFeed = Feed<ExchangeChange>;

/// The ledger's end of one exchange feed.
pub type ExchangeSender = FeedSender<ExchangeChange>;

/// A connected exchange feed, its two ends.
pub fn exchange_feed() -> (ExchangeSender, ExchangeFeed) {
    bounded(EXCHANGE_FEED_CAPACITY, usize::MAX, 0)
}

impl ExchangeSender {
    /// Offers a change; `false` when the subscriber is gone (the sender is then dropped).
    pub fn announce(&self, previous: Option<Status>, projection: &Projection) -> bool {
        let change = ExchangeChange::Changed {
            previous,
            projection: Box::new(projection.clone()),
        };
        self.send(change, 0)
    }
}

/// An item type of a [`Feed`]: it has a lag marker.
pub trait FeedItem: Sized {
    /// The marker a subscriber gets once it has read what was queued before items were
    /// dropped.
    fn lagged() -> Self;
}

impl FeedItem for ExchangeChange {
    fn lagged() -> Self {
        ExchangeChange::Lagged
    }
}

/// The subscriber's end of a bounded feed: [`ExchangeFeed`] and
/// [`EventFeed`](super::EventFeed) are this type.
#[derive(Debug)]
pub struct Feed<T> {
    rx: Receiver<(T, usize)>,
    shared: Arc<Shared>,
    /// Where the feed starts, for feeds whose items have positions.
    pub(super) start: u64,
}

/// The ledger's end of a bounded feed.
#[derive(Debug)]
pub struct FeedSender<T> {
    tx: Sender<(T, usize)>,
    shared: Arc<Shared>,
}

/// What both ends share: the lag flag and the bytes queued, against their bound.
#[derive(Debug)]
struct Shared {
    lagged: AtomicBool,
    queued_bytes: AtomicUsize,
    max_bytes: usize,
}

/// A connected bounded feed holding at most `capacity` items and `max_bytes` bytes (as
/// weighed by the sender) for its subscriber.
pub fn bounded<T>(capacity: usize, max_bytes: usize, start: u64) -> (FeedSender<T>, Feed<T>) {
    let (tx, rx) = crossbeam::channel::bounded(capacity);
    let shared = Arc::new(Shared {
        lagged: AtomicBool::new(false),
        queued_bytes: AtomicUsize::new(0),
        max_bytes,
    });
    (
        FeedSender {
            tx,
            shared: Arc::clone(&shared),
        },
        Feed { rx, shared, start },
    )
}

impl<T> FeedSender<T> {
    /// Offers `item` weighing `bytes`; `false` when the subscriber is gone (the sender is
    /// then dropped). A full feed drops the item and marks the subscriber lagged.
    pub fn send(&self, item: T, bytes: usize) -> bool {
        // Sent even while lagged: an item queued before the marker is subsumed by the
        // re-read the marker asks for.
        let queued = self.shared.queued_bytes.load(Ordering::Acquire);
        if queued.saturating_add(bytes) > self.shared.max_bytes {
            self.shared.lagged.store(true, Ordering::Release);
            return !self.disconnected();
        }
        self.shared.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
        match self.tx.try_send((item, bytes)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
                self.shared.lagged.store(true, Ordering::Release);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    /// True when the subscriber dropped its end.
    fn disconnected(&self) -> bool {
        Arc::strong_count(&self.shared) < 2
    }
}

impl<T: FeedItem> Feed<T> {
    /// The next item if one is ready (or the lag marker once the queue is drained).
    pub fn try_next(&self) -> Option<T> {
        match self.rx.try_recv() {
            Ok(item) => Some(self.received(item)),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => self.take_lag(),
        }
    }

    /// Waits up to `timeout` for the next item; `None` when none came (or the ledger is
    /// gone).
    pub fn next_timeout(&self, timeout: Duration) -> Option<T> {
        if let Some(next) = self.try_next() {
            return Some(next);
        }
        self.rx
            .recv_timeout(timeout)
            .ok()
            .map(|item| self.received(item))
    }

    /// Every item ready now, in order, without waiting.
    pub fn drain(&self) -> Vec<T> {
        std::iter::from_fn(|| self.try_next()).collect()
    }

    fn received(&self, (item, bytes): (T, usize)) -> T {
        self.shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        item
    }

    fn take_lag(&self) -> Option<T> {
        self.shared
            .lagged
            .swap(false, Ordering::AcqRel)
            .then(T::lagged)
    }
}
