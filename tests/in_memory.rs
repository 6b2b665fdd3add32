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

#[cfg(feature = "nats")]
#[test]
fn replication_refuses_an_in_memory_ledger_before_any_network() {
    use akledger::replicate::{ReplicateError, ReplicateOptions, Replicator};
    let memory = Ledger::open_with(Config::in_memory()).unwrap();
    // Nothing listens there: the refusal comes before any connection is tried.
    let refused = Replicator::new(&memory, ReplicateOptions::new("nats://127.0.0.1:9"));
    assert!(
        matches!(refused, Err(ReplicateError::Misuse(ref why)) if why.contains("on disk")),
        "{:?}",
        refused.err()
    );
}

#[test]
fn the_sidecar_runtime_refuses_an_in_memory_ledger() {
    use akledger::runtime::{bootstrap, Runtime, StubConnection};
    let memory = Ledger::open_with(Config::in_memory()).unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let config = bootstrap(&memory, key).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (input, output) = (tmp.path().join("in"), tmp.path().join("out"));
    std::fs::write(&input, b"").unwrap();
    let connection = StubConnection::open(&input, &output).unwrap();
    let refused = Runtime::new(&memory, connection, config);
    assert!(
        matches!(refused, Err(Error::Misuse(ref why)) if why.contains("on disk")),
        "{:?}",
        refused.err()
    );
}
