//! Pending events are bounded, and an operator can drop one (recorded in the log, so every
//! replay agrees).

use std::path::Path;

use akledger::error::Code;
use akledger::workload::realm_dag;
use akledger::{Appended, Config, Ledger};

fn log_len(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn new_pending_events_past_the_bound_are_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(31, 40, 2, 8).unwrap();
    // Everything after the realm's create event waits for it.
    let late: Vec<&[u8]> = events[1..10].iter().map(|e| e.bytes()).collect();
    {
        let ledger = Ledger::open_with(Config::new(tmp.path()).max_pending_events(5)).unwrap();
        let out = ledger.append_batch(&late[..5]).unwrap();
        assert!(out.iter().all(|o| matches!(o, Appended::Pending { .. })));
        let before = log_len(tmp.path());
        let out = ledger.append_batch(&late[5..7]).unwrap();
        for o in &out {
            assert_eq!(o.code(), Some(Code::PendingLimitExceeded), "{o:?}");
        }
        assert_eq!(log_len(tmp.path()), before, "a refused event was written");
        assert_eq!(ledger.pending().len(), 5);
        // An event that does not wait is still admitted, and releases the waiters.
        ledger.append(events[0].bytes()).unwrap();
        assert_eq!(ledger.pending().len(), 0);
    }
    // The byte bound, and replay never refuses what the log holds.
    let tmp = tempfile::tempdir().unwrap();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late[..5]).unwrap();
    }
    let tight = Config::new(tmp.path()).max_pending_bytes(late[0].len());
    let ledger = Ledger::open_with(tight).unwrap();
    assert_eq!(ledger.pending().len(), 5);
    let out = ledger.append(late[6]).unwrap();
    assert_eq!(out.code(), Some(Code::PendingLimitExceeded), "{out:?}");
}

#[test]
fn a_dropped_pending_event_stays_dropped_through_every_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(32, 40, 2, 8).unwrap();
    let late: Vec<&[u8]> = events[1..4].iter().map(|e| e.bytes()).collect();
    let victim = events[2].id();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late).unwrap();
        assert!(ledger.drop_pending(&victim).unwrap());
        assert!(!ledger.drop_pending(&victim).unwrap(), "dropped twice");
        assert_eq!(ledger.pending().len(), 2);
    }
    // Through the index, and through a full replay (read-only, and after the index is gone).
    let indexed = Ledger::open(tmp.path()).unwrap();
    assert_eq!(indexed.pending().len(), 2);
    assert!(indexed.check().unwrap().is_clean());
    drop(indexed);
    let replayed = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
    assert!(replayed.pending().iter().all(|(id, _)| *id != victim));
    drop(replayed);
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    let rebuilt = Ledger::open(tmp.path()).unwrap();
    assert_eq!(rebuilt.pending().len(), 2);
    // The realm arrives: the two kept are admitted, the dropped one is not; it can be sent
    // again.
    rebuilt.append(events[0].bytes()).unwrap();
    assert!(rebuilt.get(&victim).unwrap().is_none());
    assert_eq!(
        rebuilt.append(events[2].bytes()).unwrap(),
        Appended::Admitted(victim)
    );
    assert!(rebuilt.check().unwrap().is_clean());
}

/// Naive oracle for the root cause of a pending event: walk its dependencies through every
/// event that was submitted (so is pending) and collect the ones never submitted.
fn oracle_roots(
    id: akledger::EventId,
    all: &std::collections::HashMap<akledger::EventId, &akledger::Event<akledger::Unverified>>,
    submitted: &std::collections::HashSet<akledger::EventId>,
) -> Vec<akledger::EventId> {
    let mut roots = std::collections::BTreeSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![id];
    while let Some(next) = todo.pop() {
        if !seen.insert(next) {
            continue;
        }
        if !submitted.contains(&next) {
            roots.insert(next);
            continue;
        }
        todo.extend(all[&next].dependencies());
    }
    roots.into_iter().collect()
}

#[test]
fn the_root_cause_of_a_pending_event_is_what_never_arrived_and_a_batch_reports_releases() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(33, 60, 3, 8).unwrap();
    let all: std::collections::HashMap<_, _> = events.iter().map(|e| (e.id(), e)).collect();
    // Hold back the realm create and two later events; send everything else.
    let held = [0usize, 17, 41];
    let sent: Vec<&akledger::Event<akledger::Unverified>> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| !held.contains(i))
        .map(|(_, e)| e)
        .collect();
    let submitted: std::collections::HashSet<_> = sent.iter().map(|e| e.id()).collect();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let bytes: Vec<&[u8]> = sent.iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&bytes).unwrap();
    let pending = ledger.pending();
    assert_eq!(
        pending.len(),
        sent.len(),
        "nothing can be admitted without the realm"
    );
    let mut deeper = 0;
    for (id, direct) in &pending {
        let roots = ledger.pending_root_missing(id).unwrap();
        assert_eq!(roots, oracle_roots(*id, &all, &submitted), "{id}");
        assert!(roots.windows(2).all(|w| w[0] < w[1]), "canonical order");
        deeper += usize::from(roots != *direct);
        let stored = ledger.pending_event(id).unwrap();
        assert_eq!(stored.bytes(), all[id].bytes());
    }
    assert!(
        deeper > 0,
        "some pending event waits on another pending event"
    );
    // Re-sending a pending event reports it pending, not duplicate.
    let again = ledger.append(sent[3].bytes()).unwrap();
    assert!(matches!(again, Appended::Pending { .. }), "{again:?}");

    // Sending the held events releases every pending one, reported in admission order.
    let held_bytes: Vec<&[u8]> = held.iter().map(|&i| events[i].bytes()).collect();
    let report = ledger.append_batch_report(&held_bytes).unwrap();
    assert!(report
        .outcomes
        .iter()
        .all(|o| matches!(o, Appended::Admitted(_))));
    assert!(report.rejected_on_release.is_empty());
    let mut released = report.released.clone();
    released.sort_unstable();
    let mut expected: Vec<_> = submitted.iter().copied().collect();
    expected.sort_unstable();
    assert_eq!(released, expected);
    let order: Vec<_> = ledger.iter().map(|e| e.unwrap().id()).collect();
    let released_order: Vec<_> = order
        .iter()
        .filter(|id| submitted.contains(id))
        .copied()
        .collect();
    assert_eq!(report.released, released_order);
    // Admitted, unknown: not pending.
    assert_eq!(ledger.pending_root_missing(&events[5].id()), None);
    assert!(ledger.pending_event(&events[5].id()).is_none());
    assert_eq!(ledger.pending().len(), 0);
}
