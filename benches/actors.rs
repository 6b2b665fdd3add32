//! `current_model` (PROFILE §14.1) on a synthetic DAG of 1 M events by 64 writers, with
//! 10 k actors of 1–4 model versions each (each version on its actor's writer chain, after
//! the one before it, so the chain is causal): the actor's versions found by its did, then
//! the greatest one the queried event covers. Beside it, the same answer by a BFS over the
//! queried event's ancestors (the naive oracle), which the index must agree with.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::time::Duration;

use akledger::actors::current_model_at;
use akledger::dag::{DagIndex, Pos};
use akledger::ed25519_dalek::SigningKey;
use akledger::workload::SplitMix;
use akledger::DidCoreId;
use criterion::{criterion_group, criterion_main, Criterion};

const EVENTS: usize = 1_000_000;
const WRITERS: usize = 64;
const ACTORS: usize = 10_000;

/// A DAG of `n` events: writer `i % w`'s chain, each event also referring to another
/// writer's latest half the time.
fn synth(n: usize, w: usize, rng: &mut SplitMix) -> DagIndex {
    let mut dag = DagIndex::with_capacity(n);
    let mut latest: Vec<Option<Pos>> = vec![None; w];
    for i in 0..n {
        let me = i % w;
        let mut parents: Vec<Pos> = latest[me].into_iter().collect();
        if rng.below(2) == 0 {
            let other = (me + 1 + rng.below(w - 1)) % w;
            parents.extend(latest[other]);
        }
        dag.insert(&parents, i as u64).unwrap();
        latest[me] = Some(Pos::new(i as u32));
    }
    dag
}

/// The naive answer: the greatest version among the ancestors of `seen` (BFS).
fn bfs_current(dag: &DagIndex, versions: &[(u64, Pos)], seen: Pos) -> Option<Pos> {
    let mut seen_set = HashSet::new();
    let mut stack = vec![seen];
    while let Some(p) = stack.pop() {
        if seen_set.insert(p) {
            stack.extend(dag.parents(p).iter().copied());
        }
    }
    versions
        .iter()
        .filter(|(_, p)| seen_set.contains(p))
        .max_by_key(|(v, _)| *v)
        .map(|(_, p)| *p)
}

fn benches(c: &mut Criterion) {
    let mut rng = SplitMix::new(0xAC7_0125);
    let dag = synth(EVENTS, WRITERS, &mut rng);
    // Actor a's versions sit on writer a % 64's chain, at increasing positions.
    let dids: Vec<DidCoreId> = (0..ACTORS)
        .map(|a| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(a as u64).to_le_bytes());
            DidCoreId::for_key(&SigningKey::from_bytes(&seed).verifying_key())
        })
        .collect();
    let per_chain = EVENTS / WRITERS;
    let mut registry: HashMap<DidCoreId, Vec<(u64, Pos)>> = HashMap::new();
    for (a, did) in dids.iter().enumerate() {
        let writer = a % WRITERS;
        let count = 1 + rng.below(4);
        let mut step = rng.below(per_chain / 8);
        let mut versions = Vec::new();
        for v in 1..=count as u64 {
            let pos = Pos::new((step * WRITERS + writer) as u32);
            versions.push((v, pos));
            step += 1 + rng.below(per_chain / 8);
            if step >= per_chain {
                break;
            }
        }
        registry.insert(did.clone(), versions);
    }
    let queries: Vec<(DidCoreId, Pos)> = (0..4096)
        .map(|_| {
            let did = dids[rng.below(ACTORS)].clone();
            (did, Pos::new(rng.below(EVENTS) as u32))
        })
        .collect();
    // The index agrees with the oracle on a sample before anything is timed.
    let mut found = 0;
    for (did, seen) in queries.iter().take(64) {
        let versions = &registry[did];
        let got = current_model_at(&dag, versions, *seen);
        assert_eq!(
            got,
            bfs_current(&dag, versions, *seen),
            "{did} from {seen:?}"
        );
        found += usize::from(got.is_some());
    }
    eprintln!(
        "actors: {EVENTS} events, {ACTORS} actors, {} versions; {found} of 64 sampled queries see a model",
        registry.values().map(Vec::len).sum::<usize>()
    );

    let mut g = c.benchmark_group("current_model");
    let mut k = 0usize;
    g.bench_function("index_1M_10k_actors", |b| {
        b.iter(|| {
            k = (k + 1) % queries.len();
            let (did, seen) = &queries[k];
            black_box(current_model_at(&dag, &registry[did], *seen))
        })
    });
    let mut k = 0usize;
    g.bench_function("bfs_1M_10k_actors", |b| {
        b.iter(|| {
            k = (k + 1) % queries.len();
            let (did, seen) = &queries[k];
            black_box(bfs_current(&dag, &registry[did], *seen))
        })
    });
    g.finish();
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(group);
