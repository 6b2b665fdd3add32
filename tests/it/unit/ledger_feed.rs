use akledger::internals::feed::*;
use akledger::limits::EXCHANGE_FEED_CAPACITY;
use akledger::workload::{sidecar_workload, SidecarSpec};
#[allow(unused_imports)]
use akledger::*;

fn projection() -> Projection {
    let w = sidecar_workload(
        3,
        SidecarSpec {
            exchanges: 1,
            agents: 1,
            forgeries: false,
            skills: false,
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger =
        akledger::Ledger::open_with(akledger::Config::new(dir.path()).keyring(w.keyring.clone()))
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

/// A number, or the lag marker (`None`).
#[derive(Debug, PartialEq)]
struct Num(Option<u32>);

impl FeedItem for Num {
    fn lagged() -> Self {
        Num(None)
    }
}

#[test]
fn a_feed_is_bounded_by_bytes_too() {
    let (tx, rx) = bounded::<Num>(100, 10, 0);
    assert!(tx.send(Num(Some(1)), 6));
    assert!(
        tx.send(Num(Some(2)), 6),
        "dropped for bytes, the subscriber is still there"
    );
    assert!(tx.send(Num(Some(3)), 4));
    assert_eq!(rx.drain(), [Num(Some(1)), Num(Some(3)), Num(None)]);
    // Reading freed the bytes.
    assert!(tx.send(Num(Some(4)), 10));
    assert_eq!(rx.try_next(), Some(Num(Some(4))));
    drop(rx);
    assert!(!tx.send(Num(Some(5)), 1));
    assert!(!tx.send(Num(Some(6)), 100));
}
