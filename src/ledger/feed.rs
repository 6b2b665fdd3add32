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
pub(super) type ExchangeSender = FeedSender<ExchangeChange>;

/// A connected exchange feed, its two ends.
pub(super) fn exchange_feed() -> (ExchangeSender, ExchangeFeed) {
    bounded(EXCHANGE_FEED_CAPACITY, usize::MAX, 0)
}

impl ExchangeSender {
    /// Offers a change; `false` when the subscriber is gone (the sender is then dropped).
    pub(super) fn announce(&self, previous: Option<Status>, projection: &Projection) -> bool {
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
pub(super) struct FeedSender<T> {
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
pub(super) fn bounded<T>(
    capacity: usize,
    max_bytes: usize,
    start: u64,
) -> (FeedSender<T>, Feed<T>) {
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
    pub(super) fn send(&self, item: T, bytes: usize) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{sidecar_workload, SidecarSpec};

    fn projection() -> Projection {
        let w = sidecar_workload(
            3,
            SidecarSpec {
                exchanges: 1,
                agents: 1,
                forgeries: false,
            },
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ledger =
            crate::Ledger::open_with(crate::Config::new(dir.path()).keyring(w.keyring.clone()))
                .unwrap();
        for e in &w.events {
            ledger.append(e.bytes()).unwrap();
        }
        let fold = ledger.exchanges(&w.sidecar).unwrap();
        fold.projections[0].clone()
    }

    #[test]
    fn a_slow_subscriber_gets_a_bounded_queue_then_one_lag_marker() {
        let p = projection();
        let (tx, feed) = exchange_feed();
        for _ in 0..EXCHANGE_FEED_CAPACITY + 5 {
            assert!(tx.announce(None, &p));
        }
        let got = feed.drain();
        assert_eq!(
            got.len(),
            EXCHANGE_FEED_CAPACITY + 1,
            "queue, then the marker"
        );
        assert_eq!(got.last(), Some(&ExchangeChange::Lagged));
        assert!(got[..EXCHANGE_FEED_CAPACITY]
            .iter()
            .all(|c| matches!(c, ExchangeChange::Changed { previous: None, .. })));
        // After the marker the feed flows again, and a dropped feed is forgotten.
        assert!(tx.announce(Some(Status::Delivered), &p));
        assert_eq!(
            feed.try_next(),
            Some(ExchangeChange::Changed {
                previous: Some(Status::Delivered),
                projection: Box::new(p.clone())
            })
        );
        assert_eq!(feed.try_next(), None);
        drop(feed);
        assert!(!tx.announce(None, &p));
    }

    /// A number, or the lag marker.
    impl FeedItem for Option<u32> {
        fn lagged() -> Self {
            None
        }
    }

    #[test]
    fn a_feed_is_bounded_by_bytes_too() {
        let (tx, rx) = bounded::<Option<u32>>(100, 10, 0);
        assert!(tx.send(Some(1), 6));
        assert!(
            tx.send(Some(2), 6),
            "dropped for bytes, the subscriber is still there"
        );
        assert!(tx.send(Some(3), 4));
        assert_eq!(rx.drain(), [Some(1), Some(3), None]);
        // Reading freed the bytes.
        assert!(tx.send(Some(4), 10));
        assert_eq!(rx.try_next(), Some(Some(4)));
        drop(rx);
        assert!(!tx.send(Some(5), 1));
        assert!(!tx.send(Some(6), 100));
    }
}
