//! An observer feed (PROFILE §14.4) over a generated seed-000 sidecar of about 100 k events
//! (PNCP requests and responses with redacted fields, one grant of the responses), beside
//! the durable ingest of the same events: the feed keeps up with ingest when computing it
//! takes a fraction of the time ingesting took.
//!
//! - `ingest`: a fresh ledger appends every event (batches of 4096, fdatasync each);
//! - `ingest_observed`: the same with a live observer (`Ledger::observe`) subscribed after
//!   the grant and drained after each batch: what following the feed adds to ingest;
//! - `feed_cold`: a ledger just opened computes the grant's whole feed (decrypting and
//!   folding the sidecar on the way);
//! - `feed_warm`: the same on a ledger whose sidecar state is built.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::time::Duration;

use akledger::workload::{sidecar_workload, SidecarSpec};
use akledger::{Config, Ledger};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

/// Exchanges generated: about 2.9 events each, 100 k events in all.
const EXCHANGES: usize = 34_000;
const BATCH: usize = 4096;

fn benches(c: &mut Criterion) {
    let spec = SidecarSpec {
        exchanges: EXCHANGES,
        agents: 5,
        forgeries: false,
        skills: true,
    };
    let w = sidecar_workload(7, spec).unwrap();
    let (grant, _) = w.observation.clone().unwrap();
    let bytes: Vec<&[u8]> = w.events.iter().map(|e| e.bytes()).collect();
    let config = |dir: &std::path::Path| Config::new(dir).keyring(w.keyring.clone());
    let ingest = |dir: &std::path::Path| {
        let ledger = Ledger::open_with(config(dir)).unwrap();
        for batch in bytes.chunks(BATCH) {
            ledger.append_batch(batch).unwrap();
        }
        ledger.close().unwrap();
    };
    let written = tempfile::tempdir().unwrap();
    ingest(written.path());
    let items = {
        let ledger = Ledger::open_with(config(written.path())).unwrap();
        ledger.observer_feed(&grant).unwrap().len()
    };
    eprintln!(
        "observe: {} events, {EXCHANGES} exchanges, {items} feed items",
        bytes.len()
    );

    // The realm, sidecar, strand, attach, five models and the grant come first.
    let (head, rest) = bytes.split_at(16);
    let ingest_observed = |dir: &std::path::Path| {
        let ledger = Ledger::open_with(config(dir)).unwrap();
        ledger.append_batch(head).unwrap();
        let mut feed = ledger.observe(&grant).unwrap();
        let mut seen = feed.drain().unwrap().len();
        for batch in rest.chunks(BATCH) {
            ledger.append_batch(batch).unwrap();
            seen += feed.drain().unwrap().len();
        }
        assert_eq!(seen, items);
        drop(feed);
        ledger.close().unwrap();
    };

    let mut g = c.benchmark_group("observer_feed_100k");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Elements(bytes.len() as u64));
    g.bench_function("ingest", |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |dir| ingest(dir.path()),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("ingest_observed", |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |dir| ingest_observed(dir.path()),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("feed_cold", |b| {
        b.iter_batched(
            || Ledger::open_with(config(written.path())).unwrap(),
            |ledger| {
                let feed = ledger.observer_feed(&grant).unwrap();
                assert_eq!(feed.len(), items);
                ledger
            },
            BatchSize::PerIteration,
        )
    });
    let ledger = Ledger::open_with(config(written.path())).unwrap();
    ledger.observer_feed(&grant).unwrap();
    g.bench_function("feed_warm", |b| {
        b.iter(|| black_box(ledger.observer_feed(&grant).unwrap().len()))
    });
    g.finish();
}

criterion_group!(group, benches);
criterion_main!(group);
