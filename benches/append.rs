//! Ledger ingest: verified durable append at several batch sizes, and through a
//! `Ledger::pipeline` (batch n+1 verified while batch n commits), against the verification
//! floor: the same events parsed and batch-verified (`Event::verify_batch`, ZIP-215) over
//! the same threads, and on one thread. All in one group so the ratios come from one run;
//! then an audit (a log replayed into an in-memory ledger) against the same floor; then
//! the bytes on disk of a large ledger and its open: writer, read-only, and rebuilding the
//! index from the log.
//!
//! `cargo bench --bench append -- --noplot`; `AKLEDGER_BENCH_1M=1` builds the large ledger
//! with 1 M events instead of 100 k.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use akledger::did::key_of_did_key;
use akledger::limits::LOG_BATCHES_AHEAD_ON_DISK;
use akledger::proof::{binding_bytes, verify_batch, SignatureCheck, JWS_HEADER_B64};
use akledger::workload::realm_dag;
use akledger::{Config, Durability, Event, Keyring, Ledger, Unverified, Verifier};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand_core::OsRng;

const PAYLOAD: usize = 512;
const WRITERS: usize = 16;
/// Distinct events appended in causal order; a fresh ledger starts when they run out.
const POOL: usize = 60_000;

fn pool(seed: u64, events: usize) -> Vec<Vec<u8>> {
    realm_dag(seed, events, WRITERS, PAYLOAD)
        .expect("workload")
        .iter()
        .map(|e: &Event<Unverified>| e.bytes().to_vec())
        .collect()
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The verification floor: each of `threads` crossbeam threads parses its share of `items`
/// and verifies it as one signature batch, as the ledger's verification pool does.
fn verify_parallel(items: &[Vec<u8>], verifier: &Verifier, threads: usize) -> usize {
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    crossbeam::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                s.spawn(move |_| {
                    let parsed = part.iter().map(|b| Event::parse(b));
                    Event::verify_batch(parsed, verifier, OsRng)
                        .iter()
                        .filter(|v| v.is_ok())
                        .count()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("verify thread"))
            .sum()
    })
    .expect("scope")
}

/// Appends `iters` batches of `batch` new events, timing only the appends; opens a fresh
/// ledger (untimed) whenever the pool of distinct events runs out. With `ahead` > 0 the
/// batches stream through one `Ledger::pipeline_ahead(ahead)` per ledger instead of
/// `append_batch` calls.
fn timed_appends(
    events: &[Vec<u8>],
    batch: usize,
    durability: Durability,
    ahead: usize,
    iters: u64,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger =
            Ledger::open_with(Config::new(dir.path()).durability(durability)).expect("open");
        let take = (left as usize).min(events.len() / batch);
        let chunks = events.chunks_exact(batch).take(take);
        if ahead > 0 {
            let shared: Vec<Vec<Arc<[u8]>>> = chunks
                .map(|c| c.iter().map(|b| Arc::from(b.as_slice())).collect())
                .collect();
            let start = Instant::now();
            let mut pipeline = ledger.pipeline_ahead(ahead);
            for chunk in shared {
                black_box(pipeline.push(chunk).expect("push"));
            }
            black_box(pipeline.finish_all().expect("finish"));
            total += start.elapsed();
        } else {
            for chunk in chunks {
                let start = Instant::now();
                let out = ledger.append_batch(chunk).expect("append");
                total += start.elapsed();
                debug_assert!(out.iter().all(|o| o.code().is_none()));
                black_box(out);
            }
        }
        left -= take as u64;
    }
    total
}

fn ingest(c: &mut Criterion) {
    let events = pool(42, POOL);
    let verifier = Verifier::new(Keyring::new());
    let threads = threads();
    eprintln!(
        "ingest: {} events of {PAYLOAD} B payload ({} B each on the wire), {threads} verify threads",
        events.len(),
        events.get(1).map_or(0, Vec::len)
    );
    let mut group = c.benchmark_group("ingest_512B");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    // `ahead`: 0 = `append_batch`, n = `Ledger::pipeline_ahead(n)` (1 is `Ledger::pipeline`,
    // 3 what `append_log`, and so `akledger import`, uses on disk).
    for (batch, durability, ahead, label) in [
        (1usize, Durability::Sync, 0, "append_sync"),
        (100, Durability::Sync, 0, "append_sync"),
        (1000, Durability::Sync, 0, "append_sync"),
        (1000, Durability::Buffered, 0, "append_buffered"),
        (1000, Durability::Sync, 1, "pipeline_sync"),
        (1000, Durability::Sync, 2, "pipeline_ahead_2_sync"),
        (
            1000,
            Durability::Sync,
            LOG_BATCHES_AHEAD_ON_DISK,
            "pipeline_ahead_3_sync",
        ),
    ] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(format!("{label}/batch_{batch}"), |b| {
            b.iter_custom(|iters| timed_appends(&events, batch, durability, ahead, iters))
        });
    }
    // The floor: a signature batch of 1000 on each thread, as each of the pipeline's
    // workers verifies a whole batch.
    let per_thread = 1000;
    let floor: &[Vec<u8>] = events
        .get(1..(1 + per_thread * threads).min(events.len()))
        .expect("events");
    group.throughput(Throughput::Elements(floor.len() as u64));
    group.bench_function(
        format!("batch_verify_floor/{threads}_threads_{}", floor.len()),
        |b| b.iter(|| assert_eq!(verify_parallel(floor, &verifier, threads), floor.len())),
    );
    let one: &[Vec<u8>] = events.get(1..1 + per_thread).expect("1000 events");
    group.throughput(Throughput::Elements(one.len() as u64));
    group.bench_function("batch_verify_floor/1_thread_1000", |b| {
        b.iter(|| assert_eq!(verify_parallel(one, &verifier, 1), one.len()))
    });
    group.finish();
}

/// Events in the audit comparison.
const AUDITED: usize = 20_000;

/// Issue #12 row "audit": replaying a log (JSON Lines) into an in-memory ledger — what
/// `akledger audit` does before it reports — against two floors, in one group: parsing and
/// batch-verifying the same events on the same threads, and the issue's own, batch
/// verification of their signatures alone on one thread.
fn audit(c: &mut Criterion) {
    let events = pool(7, AUDITED);
    let mut log = Vec::new();
    for event in &events {
        log.extend_from_slice(event);
        log.push(b'\n');
    }
    let verifier = Verifier::new(Keyring::new());
    let threads = threads();
    let mut group = c.benchmark_group("audit_vs_floor");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function(format!("audit_in_memory/{}", events.len()), |b| {
        b.iter(|| {
            let ledger = Ledger::open_with(Config::in_memory()).expect("in-memory ledger");
            let report = ledger.append_log(log.as_slice()).expect("replay");
            assert_eq!(ledger.len(), events.len());
            black_box(report)
        })
    });
    group.bench_function(
        format!("batch_verify_floor/{threads}_threads_{}", events.len()),
        |b| b.iter(|| assert_eq!(verify_parallel(&events, &verifier, threads), events.len())),
    );
    // The floor: Ed25519 (ZIP-215) batch verification alone, on one thread, of the
    // same signatures in batches of the size the ledger's workers verify (a whole log
    // batch each, `LOG_BATCH_EVENTS`): from key, signature and signed message (the
    // challenge hash included) to verdict. The goal: audit ≤ 2 × this ÷ cores.
    let signed: Vec<([u8; 32], [u8; 64], Vec<u8>)> = events.iter().map(|e| signed(e)).collect();
    group.bench_function(
        format!("signature_batch_floor/1_thread_{}", events.len()),
        |b| {
            b.iter(|| {
                for share in signed.chunks(akledger::limits::LOG_BATCH_EVENTS) {
                    let checks: Vec<SignatureCheck> = share
                        .iter()
                        .map(|(key, sig, msg)| SignatureCheck::new(*key, *sig, msg))
                        .collect();
                    assert!(verify_batch(&checks, OsRng).iter().all(Result::is_ok));
                }
            })
        },
    );
    group.finish();
}

/// The key, the signature and the signed message (the JWS signing input) of an event.
fn signed(bytes: &[u8]) -> ([u8; 32], [u8; 64], Vec<u8>) {
    let event = Event::parse(bytes).expect("parse");
    let proof = event.proof();
    let key = key_of_did_key(&proof.verification_method).expect("did:key");
    let sig_text = proof.jws.rsplit('.').next().expect("signature");
    let sig: [u8; 64] = URL_SAFE_NO_PAD
        .decode(sig_text)
        .expect("base64url")
        .try_into()
        .expect("64 bytes");
    let binding = binding_bytes(
        &proof.event_digest,
        event.actor(),
        &proof.verification_method,
        &proof.created_at.to_string(),
    );
    let message = format!("{JWS_HEADER_B64}.{}", URL_SAFE_NO_PAD.encode(binding));
    (key.to_bytes(), sig, message.into_bytes())
}

/// (apparent bytes, allocated bytes) of every file under `dir`.
fn disk_usage(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut sum = (0, 0);
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        let meta = entry.metadata().expect("metadata");
        if meta.is_dir() {
            let (a, b) = disk_usage(&entry.path());
            sum = (sum.0 + a, sum.1 + b);
        } else {
            sum = (sum.0 + meta.len(), sum.1 + meta.blocks() * 512);
        }
    }
    sum
}

/// Builds a ledger of `n` events (realms of 10 000 events each, generated two at a time in
/// parallel, appended `Buffered` in batches of 1000).
fn build(dir: &Path, n: usize) -> usize {
    const PER_REALM: usize = 10_000;
    let ledger =
        Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).expect("open");
    let realms = n.div_ceil(PER_REALM);
    let started = Instant::now();
    for pair in (0..realms).collect::<Vec<_>>().chunks(threads().max(1)) {
        let generated: Vec<Vec<Vec<u8>>> = crossbeam::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|&r| s.spawn(move |_| pool(1000 + r as u64, PER_REALM)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("generator"))
                .collect()
        })
        .expect("scope");
        for events in &generated {
            for chunk in events.chunks(1000) {
                ledger.append_batch(chunk).expect("append");
            }
        }
    }
    let len = ledger.len();
    eprintln!("built {len} events in {:?}", started.elapsed());
    len
}

fn open_large(c: &mut Criterion) {
    let n = if std::env::var("AKLEDGER_BENCH_1M").is_ok_and(|v| v == "1") {
        1_000_000
    } else {
        100_000
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let len = build(dir.path(), n);
    let (log, log_alloc) = disk_usage(&dir.path().join("log"));
    let (index, index_alloc) = disk_usage(&dir.path().join("index"));
    let per = |bytes: u64| bytes as f64 / len as f64;
    eprintln!(
        "on disk for {len} events: log {log} B ({:.0} B/event, {:.0} allocated), \
         index {index} B ({:.0} B/event, {:.0} allocated), total {:.0} B/event allocated",
        per(log),
        per(log_alloc),
        per(index),
        per(index_alloc),
        per(log_alloc + index_alloc)
    );
    {
        let ledger = Ledger::open(dir.path()).expect("open");
        eprintln!("first reopen: {:?}", ledger.open_report());
    }
    // Issue #12 rows "open" and "open when the index must be rebuilt", in one group: a
    // writer and a read-only open (index and snapshot present); a writer open after
    // `index/` was removed (untimed), which rewrites it from the state snapshot; and one
    // after `index/` and the snapshot were removed, which rebuilds both from the log.
    let mut group = c.benchmark_group("open");
    group.sample_size(10);
    for (label, read_only, removed) in [
        ("writer", false, &[][..]),
        ("read_only", true, &[][..]),
        ("index_from_snapshot", false, &["index"][..]),
        ("rebuild_from_log", false, &["index", "snapshot"][..]),
    ] {
        group.bench_function(format!("{label}/events_{len}"), |b| {
            // Only the open is timed; each ledger is dropped (sled flushed and closed, the
            // snapshot written) before the next open, since one directory holds one open
            // ledger at a time.
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    for name in removed {
                        let path = dir.path().join(name);
                        let gone =
                            std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                        gone.expect("remove");
                    }
                    let start = Instant::now();
                    let config = Config::new(dir.path()).read_only(read_only);
                    let ledger = Ledger::open_with(config).expect("open");
                    total += start.elapsed();
                    assert_eq!(ledger.len(), len);
                    let report = ledger.open_report();
                    assert_eq!(report.index_from_snapshot.is_some(), removed.len() == 1);
                    assert_eq!(report.rebuilt.is_some(), removed.len() == 2);
                    drop(ledger);
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, ingest, audit, open_large);
criterion_main!(benches);
