use akledger::internals::pending_set::*;
use akledger::internals::state::PendingEntry;
use akledger::store::log::LogPos;
use akledger::DigestSuite;
#[allow(unused_imports)]
use akledger::*;
use std::collections::BTreeMap;

fn id(n: u32) -> EventId {
    EventId::from_digest(
        DigestSuite::Blake3,
        blake3::hash(&n.to_le_bytes()).as_bytes(),
    )
}

/// Everything waiting for one event (a realm's create, say): the list under it stays
/// whole through removals from its head, middle and tail.
#[test]
fn one_dependency_with_many_waiters() {
    let mut set = PendingSet::default();
    let realm = id(1_000_000);
    let entry = |n: u32| PendingEntry::new(LogPos::new(0, u64::from(n)), 10, realm);
    for n in 0..30_000 {
        set.insert(id(n), entry(n));
    }
    for n in (0..30_000).filter(|n| n % 3 == 0) {
        assert!(set.remove(&id(n)).is_some());
    }
    assert!(set.remove(&id(29_999)).is_some(), "the first of the list");
    assert!(set.remove(&id(1)).is_some(), "the last of the list");
    let mut expected: Vec<EventId> = (0..30_000)
        .filter(|n| n % 3 != 0 && *n != 29_999 && *n != 1)
        .map(id)
        .collect();
    expected.sort_unstable();
    assert_eq!(set.waiters(&realm), expected);
    for n in (0..30_000).filter(|n| n % 3 != 0) {
        set.remove(&id(n));
    }
    assert_eq!(set.waiters(&realm), vec![]);
    assert_eq!((set.len(), set.bytes()), (0, 0));
    set.insert(id(5), entry(5));
    assert_eq!(set.waiters(&realm), vec![id(5)]);
}

/// Random inserts, refiles and removals against a `BTreeMap` oracle.
#[test]
fn agrees_with_a_map_oracle() {
    let mut set = PendingSet::default();
    let mut oracle: BTreeMap<EventId, PendingEntry> = BTreeMap::new();
    let mut rng = akledger::workload::SplitMix::new(9);
    for step in 0..20_000u32 {
        let who = id(rng.below(2_000) as u32);
        match rng.below(3) {
            0 | 1 => {
                let e = PendingEntry::new(
                    LogPos::new(step, u64::from(step) * 7),
                    rng.below(900),
                    id(10_000 + rng.below(50) as u32),
                );
                set.insert(who, e);
                oracle.insert(who, e);
            }
            _ => assert_eq!(set.remove(&who), oracle.remove(&who)),
        }
    }
    assert_eq!(set.len(), oracle.len());
    assert_eq!(
        set.bytes(),
        oracle.values().map(|e| e.size as usize).sum::<usize>()
    );
    assert_eq!(set.sorted(), oracle.clone().into_iter().collect::<Vec<_>>());
    for dep in (10_000..10_050).map(id) {
        let expected: Vec<EventId> = oracle
            .iter()
            .filter(|(_, e)| e.waits_for == *dep.bytes())
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(set.waiters(&dep), expected);
    }
    for n in 0..2_100 {
        assert_eq!(set.get(&id(n)), oracle.get(&id(n)).copied());
    }
}
