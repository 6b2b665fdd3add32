//! Pending events are filed under one missing dependency at a time and read back from the log
//! when that one arrives. This checks, against a naive oracle, that the ledger still admits
//! exactly the events whose whole past has arrived, whatever the arrival order, the batch
//! cuts, the fan-in of each event and the reopens in between (index loaded, or rebuilt from
//! the log), and that `pending()` lists exactly what each waiting event misses.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use akledger::ed25519_dalek::SigningKey;
use proptest::prelude::*;

use akledger::workload::{realm_dag, SplitMix, EPOCH_MILLIS};
use akledger::{
    ActorId, Config, Event, EventBuilder, EventId, Json, Ledger, Object, ScopeRef, Timestamp,
    Unverified,
};

/// A realm and `n` notes in it, each naming 1..=`fan_in` random earlier events (the realm
/// create included), in causal order.
fn wide_dag(seed: u64, n: usize, fan_in: usize) -> Vec<Event<Unverified>> {
    let realm = realm_dag(seed, 0, 1, 8).unwrap().remove(0);
    let key = SigningKey::from_bytes(&[9; 32]);
    let mut rng = SplitMix::new(seed);
    let mut out = vec![realm.clone()];
    for i in 0..n {
        let parents: BTreeSet<EventId> = (0..1 + rng.below(fan_in))
            .map(|_| out[rng.below(out.len())].id())
            .collect();
        let event = EventBuilder::new(
            "ak.note.create",
            ScopeRef::Realm {
                realm_id: realm.id().retype(),
            },
            ActorId::service_for_key(&key.verifying_key()),
            Timestamp::from_millis(EPOCH_MILLIS + 1 + i as u64).unwrap(),
        )
        .after(parents)
        .payload(Object::new().with("n", Json::Int(i as i64)).into())
        .sign(&key)
        .unwrap();
        out.push(event);
    }
    out
}

/// What the ledger must hold after `received`: admitted = received events whose every
/// dependency is admitted (a fixpoint); pending = the rest, each with its missing
/// dependencies in canonical order.
fn oracle(
    all: &HashMap<EventId, &Event<Unverified>>,
    received: &BTreeSet<EventId>,
) -> (BTreeSet<EventId>, BTreeMap<EventId, Vec<EventId>>) {
    let mut admitted = BTreeSet::new();
    loop {
        let before = admitted.len();
        for id in received {
            if !admitted.contains(id) && all[id].dependencies().iter().all(|d| admitted.contains(d))
            {
                admitted.insert(*id);
            }
        }
        if admitted.len() == before {
            break;
        }
    }
    let pending = received
        .iter()
        .filter(|id| !admitted.contains(*id))
        .map(|id| {
            let mut missing: Vec<EventId> = all[id]
                .dependencies()
                .iter()
                .filter(|d| !admitted.contains(d))
                .copied()
                .collect();
            missing.sort_unstable();
            missing.dedup();
            (*id, missing)
        })
        .collect();
    (admitted, pending)
}

fn observed(ledger: &Ledger) -> (BTreeSet<EventId>, BTreeMap<EventId, Vec<EventId>>) {
    let admitted = ledger.iter().map(|e| e.unwrap().id()).collect();
    (admitted, ledger.pending().into_iter().collect())
}

fn arrival(seed: u64, n: usize, fan_in: usize, reopen_every: usize) {
    let events = wide_dag(seed, n, fan_in);
    let all: HashMap<EventId, &Event<Unverified>> = events.iter().map(|e| (e.id(), e)).collect();
    let mut order: Vec<&Event<Unverified>> = events.iter().collect();
    let mut rng = SplitMix::new(seed ^ 0x5eed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::open(tmp.path()).unwrap();
    let mut received = BTreeSet::new();
    let mut rest = order.as_slice();
    let mut batches = 0;
    while !rest.is_empty() {
        let (batch, tail) = rest.split_at((1 + rng.below(6)).min(rest.len()));
        rest = tail;
        let bytes: Vec<&[u8]> = batch.iter().map(|e| e.bytes()).collect();
        ledger.append_batch(&bytes).unwrap();
        received.extend(batch.iter().map(|e| e.id()));
        batches += 1;
        if batches % reopen_every == 0 {
            drop(ledger);
            if batches % (2 * reopen_every) == 0 {
                // The index is derived: without it, open rebuilds it from the log.
                std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
            }
            ledger = Ledger::open(tmp.path()).unwrap();
        }
        assert_eq!(
            observed(&ledger),
            oracle(&all, &received),
            "after batch {batches}"
        );
    }
    assert_eq!(ledger.len(), events.len());
    let report = ledger.check().unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_arrival_order_admits_exactly_what_the_oracle_does(
        seed in any::<u64>(),
        n in 5usize..50,
        fan_in in 1usize..6,
        reopen_every in 2usize..8,
    ) {
        arrival(seed, n, fan_in, reopen_every);
    }
}

/// Mid-way `check()` also compares the sled pending rows (with the dependency each event is
/// filed under) against a rebuild from the log.
#[test]
fn pending_rows_agree_with_a_rebuild_while_events_wait() {
    let events = wide_dag(7, 40, 5);
    let tmp = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_with(Config::new(tmp.path())).unwrap();
    // Everything but the realm and the first three notes, newest first: most events wait,
    // many on several missing events.
    let late: Vec<&[u8]> = events[4..].iter().rev().map(|e| e.bytes()).collect();
    ledger.append_batch(&late).unwrap();
    for (i, e) in events[..4].iter().enumerate().rev() {
        ledger.append(e.bytes()).unwrap();
        let report = ledger.check().unwrap();
        assert!(
            report.differences.is_empty(),
            "step {i}: {:?}",
            report.differences
        );
    }
    assert_eq!(ledger.len(), events.len());
}
