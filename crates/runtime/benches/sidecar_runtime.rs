//! Envelopes per second through the sidecar runtime — stub input file → inbox events →
//! echo handler → outbox events → stub output file — next to `import` of the same events
//! (the runtime's whole resulting log, replayed into a fresh ledger through
//! `Ledger::append_log`), both with the default `Durability::Sync`, in one run. The
//! runtime writes two sealed events per envelope (one in, one out), so the ratio says what
//! the runtime's authoring, sealing, handling and file IO cost on top of admitting them.
//!
//! Before timing, one run is checked: every envelope echoed once, 2 N message events. Then
//! runtime and import runs in turn give the median of their wall-time ratios, and of their
//! CPU-time ratios (Linux), for [`ENVELOPES`] and for [`MANY_ENVELOPES`] envelopes (the
//! issue's own figure was taken at 10 k: there the import's fixed costs, opening and
//! closing a ledger, weigh less, and its ratio is the one users with a backlog see).
//!
//! `cargo bench --bench sidecar_runtime -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use akledger::log_format::{write_item, LogFormat};
use akledger::prelude::*;
use akledger_runtime::skills::Skill;
use akledger_runtime::{
    bootstrap, DefaultMessage, EchoHandler, OutputMode, Runtime, StubConnection,
};
use akledger_testkit::cpu;

const ENVELOPES: usize = 1_000;

/// The larger input of the alternated figures.
const MANY_ENVELOPES: usize = 10_000;

/// Runtime and import runs timed in turn for the printed ratio (of [`MANY_ENVELOPES`]:
/// [`MANY_PAIRS`]).
const PAIRS: usize = 11;
const MANY_PAIRS: usize = 7;

/// A directory with a bootstrapped ledger and N echo envelopes waiting in the input file.
struct Prepared {
    dir: tempfile::TempDir,
    config: akledger_runtime::RuntimeConfig,
}

/// The ledger of a prepared directory, with its keyring file (the sidecar key is in it).
fn open(dir: &std::path::Path) -> Ledger {
    Ledger::open_with(Config::new(dir.join("ledger")).keyring_file(dir.join("keyring.json")))
        .expect("open")
}

fn prepare() -> Prepared {
    prepare_n(ENVELOPES)
}

/// A prepared directory with `envelopes` echo envelopes waiting.
fn prepare_n(envelopes: usize) -> Prepared {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = open(dir.path());
    let config = bootstrap(&ledger, SigningKey::generate(&mut OsRng)).expect("bootstrap");
    let mut input = Vec::new();
    for n in 0..envelopes {
        input.extend_from_slice(b"my_first_aea,sender_aea,fetchai/default:1.0.0,");
        input.extend_from_slice(&DefaultMessage::bytes(&n.to_string(), b"hello".to_vec()).encode());
        input.extend_from_slice(b",\n");
    }
    std::fs::write(dir.path().join("in"), input).expect("write input");
    Prepared { dir, config }
}

/// Runs the runtime until the input is drained; returns the ledger's length.
fn run(p: &Prepared) -> usize {
    let ledger = open(p.dir.path());
    let connection = StubConnection::open_with(
        &p.dir.path().join("in"),
        &p.dir.path().join("out"),
        OutputMode::Append,
    )
    .expect("stub");
    let mut runtime = Runtime::new(&ledger, connection, p.config.clone()).expect("runtime");
    let echo = Skill::new("echo").and_then(|s| s.handler(EchoHandler::default()));
    runtime.add_skill(echo.expect("skill")).expect("add skill");
    while !runtime.step(Timestamp::now()).expect("step").is_idle() {}
    ledger.len()
}

/// The ledger's events as a JSON Lines log.
fn exported(p: &Prepared) -> Vec<u8> {
    let ledger = open(p.dir.path());
    let mut log = Vec::new();
    for event in ledger.iter() {
        write_item(
            &mut log,
            LogFormat::JsonLines,
            event.expect("event").bytes(),
        )
        .expect("write");
    }
    log
}

/// Opens a fresh ledger, imports `log` (of `len` events) and closes it, as a run opens,
/// steps and closes its ledger; the time it took.
fn import(log: &[u8], len: usize) -> Duration {
    let target = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    let ledger = Ledger::open(target.path()).expect("open");
    let summary = ledger.append_log(log).expect("import").summary;
    drop(ledger);
    let took = t.elapsed();
    assert_eq!(summary.items, len);
    took
}

/// One checked run of `envelopes` envelopes, then `pairs` runtime and import runs in turn:
/// prints the medians and the median of the pairs' ratios, of wall and of CPU time (this
/// process, 10 ms ticks). The machine's load shifts between criterion's two groups, not
/// within a pair. Returns the runtime's log.
fn alternated(envelopes: usize, pairs: usize) -> Vec<u8> {
    let p = prepare_n(envelopes);
    let t = Instant::now();
    let len = run(&p);
    let runtime_time = t.elapsed();
    assert_eq!(len, 4 + 2 * envelopes, "two events per envelope");
    let out = std::fs::read(p.dir.path().join("out")).expect("out");
    assert!(out.iter().filter(|&&b| b == b'\n').count() >= envelopes);
    let log = exported(&p);
    let import_time = import(&log, len);
    let per_s = |d: Duration, n: usize| n as f64 / d.as_secs_f64();
    println!(
        "sidecar runtime: {envelopes} envelopes in {:.3} s = {:.0} envelopes/s ({:.0} events/s); import of the same {len} events {:.3} s = {:.0} events/s; runtime/import time ratio {:.1}",
        runtime_time.as_secs_f64(),
        per_s(runtime_time, envelopes),
        per_s(runtime_time, len),
        import_time.as_secs_f64(),
        per_s(import_time, len),
        runtime_time.as_secs_f64() / import_time.as_secs_f64()
    );
    // The runtime signs what import verifies, on the same cores: the CPU ratio says how
    // much more work it does, the wall ratio how much of it the cores hide.
    let mut timed: Vec<[(f64, Option<f64>); 2]> = (0..pairs)
        .map(|_| {
            let p = prepare_n(envelopes);
            let (meter, t) = (cpu::Meter::of_self(), Instant::now());
            run(&p);
            let runtime = (t.elapsed().as_secs_f64(), meter.seconds());
            let meter = cpu::Meter::of_self();
            let imported = import(&log, len).as_secs_f64();
            [runtime, (imported, meter.seconds())]
        })
        .collect();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut ratios: Vec<f64> = timed.iter().map(|[r, i]| r.0 / i.0).collect();
    let mut cpu_ratios: Vec<f64> = timed
        .iter()
        .filter_map(|[r, i]| Some(r.1? / i.1?))
        .collect();
    let (mut runtimes, mut imports): (Vec<f64>, Vec<f64>) =
        timed.drain(..).map(|[r, i]| (r.0, i.0)).unzip();
    println!(
        "sidecar runtime: {envelopes} envelopes, {pairs} alternated pairs: runtime {:.1} ms, import {:.1} ms (medians), runtime/import {:.2} (median of the pairs' ratios, {:.2}-{:.2}); CPU time runtime/import {}",
        median(&mut runtimes) * 1e3,
        median(&mut imports) * 1e3,
        median(&mut ratios),
        ratios.first().copied().unwrap_or_default(),
        ratios.last().copied().unwrap_or_default(),
        match cpu_ratios.is_empty() {
            true => "n/a".to_string(),
            false => format!("{:.2} (median of the pairs')", median(&mut cpu_ratios)),
        },
    );
    log
}

fn bench(c: &mut Criterion) {
    let log = alternated(ENVELOPES, PAIRS);
    alternated(MANY_ENVELOPES, MANY_PAIRS);

    let mut group = c.benchmark_group("sidecar_runtime");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ENVELOPES as u64));
    group.bench_function("echo_envelopes_through_files", |b| {
        b.iter_batched(prepare, |p| run(&p), BatchSize::PerIteration)
    });
    group.bench_function("import_the_same_events", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let ledger = Ledger::open(dir.path()).expect("open");
                ledger.append_log(&log[..]).expect("import").summary.items
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
