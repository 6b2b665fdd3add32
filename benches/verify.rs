//! Ingress cost per event, for three payload sizes: the full path (`Event::from_bytes`:
//! size check, canonical parse, envelope, digest, proof) against the bare ZIP-215 check of
//! the same signature (the floor), and parsing alone; then the same events 256 at a time,
//! parsed and batch-verified (`Event::verify_batch`) against the bare batch check of their
//! prepared signatures (the batch floor). Ratios come from one run.
//!
//! `cargo bench --bench verify -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use akledger::proof::{verify_batch, SignatureCheck};
use akledger::workload::realm_dag;
use akledger::{Event, Keyring, Verifier};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand_core::OsRng;

/// Events in a batch.
const BATCH: usize = 256;

fn bench(c: &mut Criterion) {
    let verifier = Verifier::new(Keyring::new());
    for (label, size) in [("256B", 256), ("1KiB", 1024), ("16KiB", 16 * 1024)] {
        let events: Vec<Vec<u8>> = realm_dag(7, BATCH, 4, size)
            .expect("workload")
            .iter()
            .skip(1)
            .map(|e| e.bytes().to_vec())
            .collect();
        let checks: Vec<SignatureCheck> = events
            .iter()
            .map(|b| {
                let e = Event::parse(b).expect("parse");
                let digest = e.id().digest_text();
                verifier
                    .prepare(e.envelope(), &digest, e.proof())
                    .expect("prepared")
            })
            .collect();
        let (one, one_check) = (&events[0], &checks[0]);
        one_check.clone().verify().expect("floor verifies");
        Event::from_bytes(one, &verifier).expect("path verifies");

        let mut g = c.benchmark_group(format!("verify/{label}"));
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("event", one.len()), |b| {
            b.iter(|| Event::from_bytes(black_box(one), &verifier).expect("ok"))
        });
        g.bench_function(BenchmarkId::new("signature_floor", one.len()), |b| {
            b.iter(|| black_box(one_check).clone().verify().expect("ok"))
        });
        g.bench_function(BenchmarkId::new("parse_only", one.len()), |b| {
            b.iter(|| Event::parse(black_box(one)).expect("ok"))
        });
        g.throughput(Throughput::Elements(BATCH as u64));
        g.bench_function(BenchmarkId::new("event_batch", BATCH), |b| {
            b.iter(|| {
                let parsed = events.iter().map(|e| Event::parse(e));
                let out = Event::verify_batch(parsed, &verifier, OsRng);
                assert!(out.iter().all(Result::is_ok));
            })
        });
        g.bench_function(BenchmarkId::new("signature_batch_floor", BATCH), |b| {
            b.iter(|| {
                let out = verify_batch(black_box(&checks), OsRng);
                assert!(out.iter().all(Result::is_ok));
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
