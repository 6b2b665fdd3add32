//! Benchmarks for `akledger::dag::DagIndex` on a deterministic synthetic DAG
//! (N events, W writers, round-robin; each event refs its writer's previous event and,
//! half the time, another writer's latest event), next to a naive BFS baseline.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use akledger::dag::{DagIndex, Pos};
use akledger::workload::SplitMix;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// The synthetic DAG as `(parents, stamp)` in admission order.
fn synth(n: usize, writers: usize, seed: u64) -> Vec<(Vec<Pos>, u64)> {
    let mut rng = SplitMix::new(seed | 1);
    let mut latest: Vec<Option<Pos>> = vec![None; writers];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let w = i % writers;
        let mut ps = Vec::with_capacity(2);
        if let Some(p) = latest[w] {
            ps.push(p);
        }
        if writers > 1 && rng.below(2) == 0 {
            let other = (w + 1 + rng.below(writers - 1)) % writers;
            if let Some(p) = latest[other] {
                ps.push(p);
            }
        }
        out.push((ps, i as u64 * 3));
        latest[w] = Some(Pos::new(i as u32));
    }
    out
}

fn build(events: &[(Vec<Pos>, u64)]) -> DagIndex {
    let mut idx = DagIndex::with_capacity(events.len());
    for (ps, st) in events {
        idx.insert(ps, *st).expect("synthetic parents exist");
    }
    idx
}

/// Naive baseline: BFS from `basis` over parent links, fresh visited vector per query.
fn bfs_covers(idx: &DagIndex, basis: &[Pos], x: Pos) -> bool {
    let mut seen = vec![false; idx.len()];
    let mut q: VecDeque<Pos> = VecDeque::new();
    for &h in basis {
        seen[h.index()] = true;
        q.push_back(h);
    }
    while let Some(v) = q.pop_front() {
        if v == x {
            return true;
        }
        for &p in idx.parents(v) {
            if !seen[p.index()] {
                seen[p.index()] = true;
                q.push_back(p);
            }
        }
    }
    false
}

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
const WRITERS: [usize; 2] = [8, 64];

fn configure(c: &mut Criterion) -> Criterion {
    let _ = c;
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

fn benches(c: &mut Criterion) {
    for &n in &SIZES {
        for &w in &WRITERS {
            let events = synth(n, w, 0x5EED ^ (n as u64) ^ ((w as u64) << 32));
            let idx = build(&events);
            let id = format!("{n}/{w}w");
            eprintln!(
                "dag {id}: {} events, {} chains, {} heads, memory {} B = {:.1} B/event",
                idx.len(),
                idx.chain_count(),
                idx.heads().len(),
                idx.memory_bytes(),
                idx.memory_bytes() as f64 / n as f64
            );
            let heads: Vec<Pos> = idx.heads().to_vec();
            let mut rng = SplitMix::new(0xC0FFEE ^ n as u64);
            let recent: Vec<Pos> = (0..64)
                .map(|_| Pos::new((n - 1 - rng.below(100)) as u32))
                .collect();
            let old: Vec<Pos> = (0..64)
                .map(|_| Pos::new(rng.below((n / 100).max(1)) as u32))
                .collect();

            let mut g = c.benchmark_group("heads");
            g.bench_function(BenchmarkId::new("index", &id), |b| {
                b.iter(|| black_box(idx.heads()).len())
            });
            g.finish();

            let mut g = c.benchmark_group("covers");
            for (label, targets) in [("recent", &recent), ("old", &old)] {
                let mut k = 0usize;
                g.bench_function(BenchmarkId::new(format!("index_{label}"), &id), |b| {
                    b.iter(|| {
                        k = (k + 1) % targets.len();
                        black_box(idx.covers(&heads, targets[k]))
                    })
                });
                let mut k = 0usize;
                g.bench_function(BenchmarkId::new(format!("bfs_{label}"), &id), |b| {
                    b.iter(|| {
                        k = (k + 1) % targets.len();
                        black_box(bfs_covers(&idx, &heads, targets[k]))
                    })
                });
            }
            g.finish();

            let sets: Vec<Vec<Pos>> = (0..16)
                .map(|_| (0..100).map(|_| Pos::new(rng.below(n) as u32)).collect())
                .collect();
            let mut g = c.benchmark_group("heads_of");
            let mut k = 0usize;
            g.bench_function(BenchmarkId::new("index_100", &id), |b| {
                b.iter(|| {
                    k = (k + 1) % sets.len();
                    black_box(idx.heads_of(&sets[k]))
                })
            });
            g.finish();

            let mut g = c.benchmark_group("ancestors");
            g.bench_function(BenchmarkId::new("full_from_heads", &id), |b| {
                b.iter(|| black_box(idx.ancestors_of(&heads).count()))
            });
            g.finish();

            let mut g = c.benchmark_group("rebuild");
            g.bench_function(BenchmarkId::new("insert_all", &id), |b| {
                b.iter(|| black_box(build(&events).len()))
            });
            g.finish();
        }
    }
}

criterion_group! {
    name = dag;
    config = configure(&mut Criterion::default());
    targets = benches
}
criterion_main!(dag);
