//! The in-memory ledger (`Config::in_memory`), what `akledger audit` replays into: the same
//! answers as a ledger on disk for the same arrivals (the on-disk one is the oracle), log
//! segments rotating in memory, and the uses that need a directory refused.

use akledger::workload::realm_dag;
use akledger::{Appended, Config, Durability, Error, EventId, Ledger};

/// Appends `events` in batches of `batch`, and returns every outcome.
fn feed(ledger: &Ledger, events: &[&[u8]], batch: usize) -> Vec<Appended> {
    events
        .chunks(batch)
        .flat_map(|chunk| ledger.append_batch(chunk).unwrap())
        .collect()
}

fn snapshot_of(ledger: &Ledger) -> (Vec<EventId>, Vec<EventId>, usize, Vec<Vec<u8>>) {
    let events: Vec<Vec<u8>> = ledger.iter().map(|e| e.unwrap().bytes().to_vec()).collect();
    let pending = ledger.pending_causes().into_iter().map(|p| p.id).collect();
    (ledger.heads(), pending, ledger.len(), events)
}

#[test]
fn in_memory_answers_as_on_disk_for_the_same_arrivals() {
    let events = realm_dag(7, 600, 4, 16).unwrap();
    // Children first for a third of them: they wait, pending, and are released later.
    let mut order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    order[1..200].reverse();
    // The last event never arrives, so whatever depends on it stays pending.
    order.retain(|b| *b != events[599].bytes());
    order.push(events[3].bytes()); // a duplicate

    let tmp = tempfile::tempdir().unwrap();
    let disk = Ledger::open_with(Config::new(tmp.path()).durability(Durability::Buffered)).unwrap();
    // Tiny segments: the in-memory log rotates many times.
    let memory = Ledger::open_with(Config::in_memory().segment_size(16 << 10)).unwrap();
    assert!(memory.config().is_in_memory());

    let on_disk = feed(&disk, &order, 64);
    let in_memory = feed(&memory, &order, 64);
    assert_eq!(format!("{in_memory:?}"), format!("{on_disk:?}"));
    assert!(in_memory
        .iter()
        .any(|o| matches!(o, Appended::Pending { .. })));
    assert_eq!(snapshot_of(&memory), snapshot_of(&disk));
    for event in &events[..599] {
        let got = memory.get(&event.id()).unwrap().expect("admitted");
        assert_eq!(got.bytes(), event.bytes());
    }
    assert!(memory.check().unwrap().is_clean());
}

#[test]
fn an_in_memory_ledger_cannot_be_read_only() {
    let refused = Ledger::open_with(Config::in_memory().read_only(true));
    assert!(matches!(refused, Err(Error::Misuse(_))), "{refused:?}");
}
