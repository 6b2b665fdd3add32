//! Segment log throughput: durable append at several batch sizes, and sequential iteration.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use akledger::store::log::{Durability, LogOptions, SegmentLog};

const ENTRY: usize = 512;

fn open(dir: &std::path::Path, durability: Durability) -> SegmentLog {
    let opts = LogOptions {
        durability,
        ..LogOptions::default()
    };
    match SegmentLog::open(dir, opts) {
        Ok((log, _)) => log,
        Err(e) => panic!("open: {e}"),
    }
}

fn append(c: &mut Criterion) {
    let payload = vec![0xA5u8; ENTRY];
    let mut group = c.benchmark_group("append_512B");
    group.sample_size(10);
    for (batch, durability, label) in [
        (1usize, Durability::Sync, "sync"),
        (100, Durability::Sync, "sync"),
        (1000, Durability::Sync, "sync"),
        (1000, Durability::Buffered, "buffered"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = open(dir.path(), durability);
        let entries: Vec<(u8, &[u8])> = (0..batch).map(|_| (1u8, payload.as_slice())).collect();
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(format!("batch_{batch}_{label}"), |b| {
            b.iter(|| log.append_batch(&entries).expect("append"))
        });
    }
    group.finish();
}

fn iterate(c: &mut Criterion) {
    const N: usize = 100_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = open(dir.path(), Durability::Buffered);
    let payload = vec![0x5Au8; ENTRY];
    let entries: Vec<(u8, &[u8])> = (0..1000).map(|_| (1u8, payload.as_slice())).collect();
    for _ in 0..N / 1000 {
        log.append_batch(&entries).expect("append");
    }
    log.sync().expect("sync");
    let bytes: u64 = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .sum();
    eprintln!(
        "on disk: {bytes} bytes for {N} entries of {ENTRY} B = {:.1} B/entry",
        bytes as f64 / N as f64
    );
    let mut group = c.benchmark_group("iterate_512B");
    group.sample_size(10);
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("100k", |b| {
        b.iter_batched(
            || (),
            |()| {
                let bytes: usize = log.iter().map(|e| e.expect("entry").payload.len()).sum();
                assert_eq!(bytes, N * ENTRY);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, append, iterate);
criterion_main!(benches);
