//! `Ledger::watch_events`: every admitted event, released pending ones included, in
//! admission order with its position; a slow subscriber gets a bounded queue and a lag
//! marker, and re-reads the gap with `iter_from`.

use akledger::exchange::create_realm;
use akledger::ledger::{EventFeed, WatchedEvent};
use akledger::limits::EVENT_FEED_CAPACITY;
use akledger::workload::{sidecar_workload, SidecarSpec};
use akledger::{ActorId, Config, Durability, EventId, Ledger, Timestamp};

fn open(dir: &std::path::Path) -> Ledger {
    Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).unwrap()
}

fn admitted(feed: &EventFeed) -> Vec<(u64, EventId)> {
    feed.drain()
        .into_iter()
        .map(|item| match item {
            WatchedEvent::Admitted { position, event } => (position, event.id()),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

fn ledger_order(ledger: &Ledger, from: u64) -> Vec<(u64, EventId)> {
    (from..)
        .zip(ledger.iter_from(from).map(|e| e.unwrap().id()))
        .collect()
}

#[test]
fn a_subscriber_sees_released_events_in_admission_order() {
    let w = sidecar_workload(
        3,
        SidecarSpec {
            exchanges: 4,
            agents: 2,
            forgeries: false,
            skills: false,
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let (head, tail) = w.events.split_at(3);
    for e in head {
        ledger.append(e.bytes()).unwrap();
    }
    let feed = ledger.watch_events();
    assert_eq!(feed.start(), 3, "the feed starts where the ledger was");
    // Odd events first (most wait for a parent), then the even ones release them.
    let mut released = 0;
    for parity in [1, 0] {
        for e in tail.iter().skip(parity).step_by(2) {
            released += ledger
                .append_batch_report(&[e.bytes()])
                .unwrap()
                .released
                .len();
        }
    }
    assert!(released > 0, "the order must release pending events");
    assert_eq!(ledger.len(), w.events.len());
    let seen = admitted(&feed);
    assert_eq!(seen, ledger_order(&ledger, 3));
    assert_eq!(seen.len(), tail.len());
    assert!(feed.try_next().is_none());
}

#[test]
fn a_slow_subscriber_lags_with_a_bounded_queue_and_rereads() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let feed = ledger.watch_events();
    let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let me = ActorId::service_for_key(&key.verifying_key());
    let extra = 40;
    let events: Vec<_> = (0..(EVENT_FEED_CAPACITY + extra) as u64)
        .map(|i| {
            let at = Timestamp::from_millis(1_790_000_000_000 + i).unwrap();
            create_realm(&key, me.clone(), at).unwrap()
        })
        .collect();
    let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&bytes).unwrap();
    // Nothing read while the batch went in: the queue held the capacity, no more.
    let drained = feed.drain();
    assert_eq!(drained.len(), EVENT_FEED_CAPACITY + 1);
    assert!(matches!(drained.last(), Some(WatchedEvent::Lagged)));
    let last_seen = match &drained[EVENT_FEED_CAPACITY - 1] {
        WatchedEvent::Admitted { position, .. } => *position,
        other => panic!("{other:?}"),
    };
    assert_eq!(last_seen, EVENT_FEED_CAPACITY as u64 - 1);
    // The re-read fills the gap; later events flow on the feed again.
    let gap = ledger_order(&ledger, last_seen + 1);
    assert_eq!(gap.len(), extra);
    let late = create_realm(&key, me, Timestamp::from_millis(1_800_000_000_000).unwrap()).unwrap();
    ledger.append(late.bytes()).unwrap();
    assert_eq!(
        admitted(&feed),
        vec![((EVENT_FEED_CAPACITY + extra) as u64, late.id())]
    );
    // A dropped feed is forgotten.
    drop(feed);
    let later = ledger.watch_events();
    assert_eq!(later.start(), ledger.len() as u64);
}
