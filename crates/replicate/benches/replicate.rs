//! Replication through one local `nats-server` into one ledger, against `import` of the same
//! events: 20 k realm events, each with 256 random characters of payload text (as little
//! compressible as ciphertext: only the events' structure compresses; it printed how much,
//! packed as replication packs them), are published once into a JetStream stream; each timed run
//! consumes the whole stream into a fresh ledger (a new durable consumer,
//! `Replicator::once`), and the control imports the same events, as a JSON Lines log in
//! memory, into a fresh ledger through `Ledger::append_log` (what `akledger import` runs:
//! each line read and copied into an event, two batches verifying while one commits).
//! Before criterion's timing, [`PAIRS`] replicate and import runs in turn print the median
//! of their ratios, and where each run's CPU went: this process replicating, this process
//! importing, and the server (on Linux). Each pair also times the same events already in
//! memory pushed through a `Ledger::pipeline_ahead(2)` (nothing read or copied: the
//! bench's control until 2026-12-04), and the ratio against it is printed too.
//! Skipped, with a message, when `nats-server` is not installed.
//!
//! `cargo bench --bench replicate -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

use akledger::id::EventId;
use akledger::log_format::{write_item, LogFormat};
use akledger::workload::{sign_all, RealmDag};
use akledger::{Config, Ledger};
use akledger_replicate::message::Packed;
use akledger_replicate::{ReplicateOptions, Replicator};
use akledger_testkit::{cpu, nats};

const EVENTS: usize = 20_000;
const WRITERS: usize = 16;
const PAYLOAD: usize = 256;

/// Replicate, import and pipeline runs timed in turn for the printed ratios.
const PAIRS: usize = 11;

/// One timed run: wall seconds, and the CPU seconds this process and the server used in it
/// (`None` where `/proc` does not say).
struct Run {
    wall: f64,
    cpu: Option<f64>,
    server_cpu: Option<f64>,
}

/// The median of `values` (`None` when any is missing), with the smallest and largest.
fn median_of(values: impl Iterator<Item = Option<f64>>) -> (Option<f64>, f64, f64) {
    let Some(mut values) = values.collect::<Option<Vec<f64>>>() else {
        return (None, f64::NAN, f64::NAN);
    };
    values.sort_by(f64::total_cmp);
    let (first, last) = (values.first().copied(), values.last().copied());
    (
        values.get(values.len() / 2).copied(),
        first.unwrap_or(f64::NAN),
        last.unwrap_or(f64::NAN),
    )
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir)).expect("open")
}

/// Imports `log` (JSON Lines) as `akledger import` does (`Ledger::append_log`: batches of
/// 1000, two verifying while one commits).
fn import(ledger: &Ledger, log: &[u8]) {
    let summary = ledger.append_log(log).expect("import").summary;
    assert_eq!(summary.items, EVENTS);
}

/// Pushes events already in memory through a pipeline in batches of 1000 (the replicator's
/// batch size), two batches verifying while one commits.
fn push_prepared(ledger: &Ledger, events: &[Arc<[u8]>]) {
    let mut pipeline = ledger.pipeline_ahead(2);
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
    let (dag, realm) = RealmDag::new(7, WRITERS, PAYLOAD).expect("workload");
    let mut dag = dag.with_random_text();
    let mut events = vec![realm];
    events.extend(sign_all(&dag.plan(EVENTS - 1).expect("plan"), threads()).expect("events"));
    let ids: Vec<EventId> = events.iter().map(|e| e.id()).collect();
    let events: Vec<Arc<[u8]>> = events.iter().map(|e| Arc::from(e.bytes())).collect();
    // What compression makes of them, packed as replication packs them (64 to a message).
    let (mut plain, mut sent) = (0usize, 0usize);
    let every = akledger_replicate::limits::MESSAGE_EVENTS;
    for (chunk, ids) in events.chunks(every).zip(ids.chunks(every)) {
        let mut packed = Packed::default();
        for (event, id) in chunk.iter().zip(ids) {
            packed.push(*id, event);
        }
        plain += packed.payload.len();
        sent += packed.encoded().0.len();
    }
    eprintln!(
        "replicate: {EVENTS} events of {:.0} bytes on average; packed 64 to a message, they \
         are sent in {:.3} of their bytes",
        plain as f64 / EVENTS as f64,
        sent as f64 / plain as f64
    );
    let mut log = Vec::new();
    for event in &events {
        write_item(&mut log, LogFormat::JsonLines, event).expect("log");
    }
    let tmp = tempfile::tempdir().expect("tmp");
    {
        let source = open(&tmp.path().join("source"));
        import(&source, &log);
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
    // The figures from alternated pairs: the machine's load shifts between criterion's two
    // groups, not within a pair.
    let server_pid = server.pid();
    let mut measured = |work: &dyn Fn(&Ledger)| {
        let (ledger, dir) = fresh();
        let (meter, server_meter) = (cpu::Meter::of_self(), server_pid.map(cpu::Meter::of));
        let start = Instant::now();
        work(&ledger);
        let run = Run {
            wall: start.elapsed().as_secs_f64(),
            cpu: meter.seconds(),
            server_cpu: server_meter.and_then(|m| m.seconds()),
        };
        drop(ledger);
        let _ = std::fs::remove_dir_all(dir);
        run
    };
    let mut replicated = Vec::new();
    let mut imported = Vec::new();
    let mut pushed = Vec::new();
    for _ in 0..PAIRS {
        replicated.push(measured(&|ledger| replicate(ledger, &url)));
        imported.push(measured(&|ledger| import(ledger, &log)));
        pushed.push(measured(&|ledger| push_prepared(ledger, &events)));
    }
    let ratio_to = |control: &[Run]| {
        median_of(
            replicated
                .iter()
                .zip(control)
                .map(|(r, c)| Some(r.wall / c.wall)),
        )
    };
    let ratios = ratio_to(&imported);
    let to_pushed = ratio_to(&pushed);
    let ms = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{:.1} ms", v * 1e3));
    let wall = |runs: &[Run]| ms(median_of(runs.iter().map(|r| Some(r.wall))).0);
    eprintln!(
        "replicate figures: {EVENTS} events, {PAIRS} alternated runs of each: through one \
         local nats-server {}, import {}, prepared events pushed {} (medians); \
         replicate/import {:.3} (median of the pairs' ratios, {:.3}-{:.3}), \
         replicate/pushed {:.3} ({:.3}-{:.3}). CPU per run (medians, in 10 ms ticks): this \
         process {} replicating, {} importing, {} pushing; nats-server {} while replicating",
        wall(&replicated),
        wall(&imported),
        wall(&pushed),
        ratios.0.unwrap_or(f64::NAN),
        ratios.1,
        ratios.2,
        to_pushed.0.unwrap_or(f64::NAN),
        to_pushed.1,
        to_pushed.2,
        ms(median_of(replicated.iter().map(|r| r.cpu)).0),
        ms(median_of(imported.iter().map(|r| r.cpu)).0),
        ms(median_of(pushed.iter().map(|r| r.cpu)).0),
        ms(median_of(replicated.iter().map(|r| r.server_cpu)).0),
    );

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
        bench.iter_custom(|iters| timed(iters, &|ledger| import(ledger, &log)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
