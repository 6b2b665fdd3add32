//! The exchange feed: a bounded, per-subscriber stream of projection changes.
//!
//! A subscriber that falls [`EXCHANGE_FEED_CAPACITY`] changes behind stops receiving them
//! and, once it has read what was queued, gets one [`ExchangeChange::Lagged`]: it then
//! re-reads [`Ledger::exchanges`](super::Ledger::exchanges), which already holds every
//! dropped change, and continues with the changes after the marker. Memory per subscriber
//! is bounded whatever the subscriber does.

use std::sync::atomic::{AtomicBool, Ordering};
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
#[derive(Debug)]
pub struct ExchangeFeed {
    rx: Receiver<Item>,
    lagged: Arc<AtomicBool>,
}

/// What travels on the channel: the previous status and the new projection.
type Item = (Option<Status>, Projection);

/// The ledger's end of one feed.
#[derive(Debug)]
pub(super) struct FeedSender {
    tx: Sender<Item>,
    lagged: Arc<AtomicBool>,
}

/// A connected feed, its two ends.
pub(super) fn feed() -> (FeedSender, ExchangeFeed) {
    let (tx, rx) = crossbeam::channel::bounded(EXCHANGE_FEED_CAPACITY);
    let lagged = Arc::new(AtomicBool::new(false));
    (
        FeedSender {
            tx,
            lagged: Arc::clone(&lagged),
        },
        ExchangeFeed { rx, lagged },
    )
}

impl FeedSender {
    /// Offers a change; `false` when the subscriber is gone (the sender is then dropped).
    pub(super) fn send(&self, previous: Option<Status>, projection: &Projection) -> bool {
        // Sent even while lagged: a change queued before the marker is subsumed by the
        // re-read the marker asks for.
        match self.tx.try_send((previous, projection.clone())) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.lagged.store(true, Ordering::Release);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

impl ExchangeFeed {
    /// The next change if one is ready (or the lag marker once the queue is drained).
    pub fn try_next(&self) -> Option<ExchangeChange> {
        match self.rx.try_recv() {
            Ok(item) => Some(changed(item)),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => self.take_lag(),
        }
    }

    /// Waits up to `timeout` for the next change; `None` when none came (or the ledger is
    /// gone).
    pub fn next_timeout(&self, timeout: Duration) -> Option<ExchangeChange> {
        if let Some(change) = self.try_next() {
            return Some(change);
        }
        self.rx.recv_timeout(timeout).ok().map(changed)
    }

    /// Every change ready now, in order, without waiting.
    pub fn drain(&self) -> Vec<ExchangeChange> {
        std::iter::from_fn(|| self.try_next()).collect()
    }

    fn take_lag(&self) -> Option<ExchangeChange> {
        self.lagged
            .swap(false, Ordering::AcqRel)
            .then_some(ExchangeChange::Lagged)
    }
}

fn changed((previous, projection): Item) -> ExchangeChange {
    ExchangeChange::Changed {
        previous,
        projection: Box::new(projection),
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
        let (tx, feed) = feed();
        for _ in 0..EXCHANGE_FEED_CAPACITY + 5 {
            assert!(tx.send(None, &p));
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
        assert!(tx.send(Some(Status::Delivered), &p));
        assert_eq!(
            feed.try_next(),
            Some(ExchangeChange::Changed {
                previous: Some(Status::Delivered),
                projection: Box::new(p.clone())
            })
        );
        assert_eq!(feed.try_next(), None);
        drop(feed);
        assert!(!tx.send(None, &p));
    }
}
