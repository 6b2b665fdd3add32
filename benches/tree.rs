//! The ledger tree (PROFILE §13): what its upkeep costs next to durable ingest, proofs at
//! a million events, and what it keeps in memory.
//!
//! * `tree_vs_ingest`: `tlog::append_hashes` over 1000 ids (what a committed batch of 1000
//!   events adds to the tree, hashing only) against the durable append of a batch of 1000
//!   events (which includes the tree's upkeep and its write); the ratio is printed from a
//!   timed run of each over the same events.
//! * `proofs_1m`: inclusion and consistency proofs, made and verified, over the stored
//!   hashes of 1 M leaves held in memory.
//! * The resident bytes per event of the tree, printed: on disk, the right edge only;
//!   in memory, every stored hash.
//!
//! `cargo bench --bench tree -- --noplot`.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use akledger::tlog::{self, Hash};
use akledger::workload::realm_dag;
use akledger::{Config, Durability, Ledger};

const BATCH: usize = 1000;
const POOL: usize = 20_000;
const MILLION: u64 = 1_000_000;

/// Events to append, and their 33-byte binary ids.
fn pool() -> (Vec<Vec<u8>>, Vec<[u8; 33]>) {
    let events = realm_dag(7, POOL - 1, 16, 256).expect("workload");
    let ids = events.iter().map(|e| *e.id().bytes()).collect();
    (events.iter().map(|e| e.bytes().to_vec()).collect(), ids)
}

/// Durable appends of `iters` batches of [`BATCH`] events, timed; a fresh ledger (untimed)
/// whenever the pool runs out.
fn timed_appends(events: &[Vec<u8>], iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger =
            Ledger::open_with(Config::new(dir.path()).durability(Durability::Sync)).expect("open");
        let take = (left as usize).min(events.len() / BATCH);
        for chunk in events.chunks_exact(BATCH).take(take) {
            let start = Instant::now();
            black_box(ledger.append_batch(chunk).expect("append"));
            total += start.elapsed();
        }
        left -= take as u64;
    }
    total
}

/// The tree's hashing for `iters` batches of [`BATCH`] ids appended to a tree in memory.
fn timed_hashing(ids: &[[u8; 33]], iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut stored: Vec<Hash> = Vec::new();
    let mut n = 0u64;
    for i in 0..iters as usize {
        let chunk = ids
            .chunks_exact(BATCH)
            .nth(i % (ids.len() / BATCH))
            .expect("chunk");
        let start = Instant::now();
        for id in chunk {
            let more = tlog::append_hashes(n, tlog::leaf_hash(id), &stored).expect("append");
            stored.extend(more);
            n += 1;
        }
        total += start.elapsed();
    }
    black_box(stored.len());
    total
}

fn tree_vs_ingest(c: &mut Criterion) {
    let (events, ids) = pool();
    // The ratio, from one timed run of each over the same events.
    let batches = (events.len() / BATCH) as u64;
    let append = timed_appends(&events, batches);
    let hashing = timed_hashing(&ids, batches);
    let per = |d: Duration| d.as_secs_f64() * 1e9 / (batches as f64 * BATCH as f64);
    eprintln!(
        "tree upkeep: {:.0} ns/event of hashing vs {:.0} ns/event of durable append (batches of {BATCH}): {:.2} %",
        per(hashing),
        per(append),
        100.0 * hashing.as_secs_f64() / append.as_secs_f64()
    );
    let mut group = c.benchmark_group("tree_vs_ingest");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("durable_append/batch_1000", |b| {
        b.iter_custom(|iters| timed_appends(&events, iters))
    });
    group.bench_function("append_hashes/batch_1000", |b| {
        b.iter_custom(|iters| timed_hashing(&ids, iters))
    });
    group.finish();
}

fn proofs_1m(c: &mut Criterion) {
    let start = Instant::now();
    let mut stored: Vec<Hash> = Vec::with_capacity(2 * MILLION as usize);
    for n in 0..MILLION {
        let leaf = tlog::leaf_hash(&n.to_le_bytes());
        let more = tlog::append_hashes(n, leaf, &stored).expect("append");
        stored.extend(more);
    }
    let root = tlog::tree_hash(MILLION, &stored).expect("root");
    eprintln!(
        "proofs: the stored hashes of {MILLION} leaves built in {:.2} s; resident: in memory {:.1} bytes/event ({} hashes), on disk the right edge only: {} hashes ({} bytes with their indexes, {:.6} bytes/event)",
        start.elapsed().as_secs_f64(),
        (stored.len() * 32) as f64 / MILLION as f64,
        stored.len(),
        MILLION.count_ones(),
        MILLION.count_ones() * 40,
        f64::from(MILLION.count_ones() * 40) / MILLION as f64
    );
    let mut group = c.benchmark_group("proofs_1m");
    group.sample_size(50);
    let mut i = 0u64;
    group.bench_function("inclusion_proof", |b| {
        b.iter(|| {
            i = (i + 7_919) % MILLION;
            black_box(tlog::inclusion_proof(i, MILLION, &stored).expect("proof"))
        })
    });
    group.bench_function("inclusion_proof_and_verify", |b| {
        b.iter(|| {
            i = (i + 7_919) % MILLION;
            let proof = tlog::inclusion_proof(i, MILLION, &stored).expect("proof");
            let leaf = tlog::leaf_hash(&i.to_le_bytes());
            tlog::verify_inclusion(&leaf, i, MILLION, &proof, &root).expect("verifies")
        })
    });
    let mut m = 1u64;
    group.bench_function("consistency_proof", |b| {
        b.iter(|| {
            m = (m + 104_729) % MILLION + 1;
            black_box(tlog::consistency_proof(m, MILLION, &stored).expect("proof"))
        })
    });
    group.bench_function("consistency_proof_and_verify", |b| {
        b.iter(|| {
            m = (m + 104_729) % MILLION + 1;
            let proof = tlog::consistency_proof(m, MILLION, &stored).expect("proof");
            let old = tlog::tree_hash(m, &stored).expect("old root");
            tlog::verify_consistency(m, MILLION, &proof, &old, &root).expect("verifies")
        })
    });
    group.finish();
}

criterion_group!(benches, tree_vs_ingest, proofs_1m);
criterion_main!(benches);
