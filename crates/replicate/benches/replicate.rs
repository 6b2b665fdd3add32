//! Replication through one local `nats-server` into one ledger, against `import` of the same
//! events: 20 k realm events are published once into a JetStream stream; each timed run
//! consumes the whole stream into a fresh ledger (a new durable consumer,
//! `Replicator::once`), and the control pushes the same events through a
//! `Ledger::pipeline` into a fresh ledger. Before timing, one run of each prints events/s and
//! their ratio. Skipped, with a message, when `nats-server` is not installed.
//!
//! `cargo bench --bench replicate -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

use akledger::workload::{sign_all, RealmDag};
use akledger::{Config, Ledger};
use akledger_replicate::{ReplicateOptions, Replicator};
use akledger_testkit::nats;

const EVENTS: usize = 20_000;
const WRITERS: usize = 16;
const PAYLOAD: usize = 256;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir)).expect("open")
}

/// Appends events through a pipeline in batches of 1000 (the replicator's batch size).
fn import(ledger: &Ledger, events: &[Arc<[u8]>]) {
    let mut pipeline = ledger.pipeline();
    for chunk in events.chunks(1000) {
        pipeline.push(chunk.to_vec()).expect("push");
    }
    pipeline.finish().expect("finish");
}

/// Consumes the whole stream into `ledger` (a fresh ledger: a new consumer from the start).
fn replicate(ledger: &Ledger, url: &str) {
    let mut replicator = Replicator::new(ledger, ReplicateOptions::new(url)).expect("replicator");
    let report = replicator.once().expect("once");
    assert_eq!(report.admitted as usize, EVENTS);
}

fn bench(c: &mut Criterion) {
    let Some(server) = nats::NatsServer::start("bench replicate") else {
        return;
    };
    let url = server.url();
    let (mut dag, realm) = RealmDag::new(7, WRITERS, PAYLOAD).expect("workload");
    let mut events = vec![realm];
    events.extend(sign_all(&dag.plan(EVENTS - 1).expect("plan"), threads()).expect("events"));
    let events: Vec<Arc<[u8]>> = events.iter().map(|e| Arc::from(e.bytes())).collect();
    let tmp = tempfile::tempdir().expect("tmp");
    {
        let source = open(&tmp.path().join("source"));
        import(&source, &events);
        let mut replicator =
            Replicator::new(&source, ReplicateOptions::new(&url)).expect("replicator");
        let published = replicator.once().expect("publish").published;
        assert_eq!(published as usize, EVENTS);
    }

    let mut runs = 0usize;
    let mut fresh = || {
        runs += 1;
        let dir = tmp.path().join(format!("run{runs}"));
        (open(&dir), dir)
    };
    // The figures, once.
    {
        let (ledger, dir) = fresh();
        let start = Instant::now();
        replicate(&ledger, &url);
        let replicated = start.elapsed();
        drop(ledger);
        let _ = std::fs::remove_dir_all(dir);
        let (ledger, dir) = fresh();
        let start = Instant::now();
        import(&ledger, &events);
        let imported = start.elapsed();
        drop(ledger);
        let _ = std::fs::remove_dir_all(dir);
        let rate = |d: Duration| EVENTS as f64 / d.as_secs_f64();
        eprintln!(
            "replicate figures: {EVENTS} events; through one local nats-server {:.0} events/s, \
             import {:.0} events/s; replicate takes {:.2}x the time of import",
            rate(replicated),
            rate(imported),
            replicated.as_secs_f64() / imported.as_secs_f64()
        );
    }

    let mut group = c.benchmark_group("replicate_20k_one_server_one_ledger");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    // Times `work` on fresh ledgers (opening and removing them is not timed).
    let mut timed = |iters: u64, work: &dyn Fn(&Ledger)| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let (ledger, dir) = fresh();
            let start = Instant::now();
            work(&ledger);
            total += start.elapsed();
            drop(ledger);
            let _ = std::fs::remove_dir_all(dir);
        }
        total
    };
    group.bench_function("replicate_once", |bench| {
        bench.iter_custom(|iters| timed(iters, &|ledger| replicate(ledger, &url)))
    });
    group.bench_function("import_same_events", |bench| {
        bench.iter_custom(|iters| timed(iters, &|ledger| import(ledger, &events)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
