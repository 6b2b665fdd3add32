//! Opening a ledger whose events wait for missing dependencies, against opening one with the
//! same number of admitted events: pending events must not make every open slower (anyone
//! can send events that name parents nobody has). Four ledgers of `N` events each: all
//! admitted; all pending behind one withheld realm event; each naming 127 parents that
//! never arrive; and, its control (the same log bytes, ten times larger), the same events
//! with their 127 parents present, all admitted. Writer opens (from the state snapshot, and from the sled index with the
//! snapshot removed) and read-only opens (from the snapshot).
//!
//! `cargo bench --bench pending_open -- --noplot` (with `AKLEDGER_BENCH_DIR=DIR` the four
//! ledgers are kept in `DIR/<name>/ledger*`, to measure a
//! whole process's time and peak memory on them).
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use ed25519_dalek::SigningKey;

use akledger::workload::{realm_dag, EPOCH_MILLIS};
use akledger::{ActorId, Config, EventBuilder, Json, Ledger, Object, ScopeRef, Timestamp};

const N: usize = 20_000;
const MISSING: usize = 127;

fn append_all(dir: &Path, events: &[Vec<u8>]) {
    let ledger = Ledger::open(dir).expect("open");
    for chunk in events.chunks(5_000) {
        ledger.append_batch(chunk).expect("append");
    }
}

/// `N` events in the realm of `realm_dag(seed, …)`, each naming the `MISSING` events of
/// another realm as parents; and those `MISSING` events (with their realm). Without the
/// latter the `N` events wait for ever; with them, they are admitted.
fn wide(seed: u64) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let base = realm_dag(seed, 0, 1, 8).expect("realm").remove(0);
    let ghosts = realm_dag(seed + 1, MISSING, 1, 8).expect("ghosts");
    let key = SigningKey::from_bytes(&[7; 32]);
    let mut out = vec![base.bytes().to_vec()];
    for i in 0..N {
        let event = EventBuilder::new(
            "ak.note.create",
            ScopeRef::Realm {
                realm_id: base.id().retype(),
            },
            ActorId::service_for_key(&key.verifying_key()),
            // Later than every parent, so that they can be admitted.
            Timestamp::from_millis(EPOCH_MILLIS + 10_000_000 + i as u64).expect("time"),
        )
        .after(ghosts.iter().skip(1).map(|e| e.id()))
        .payload(Object::new().with("n", Json::Int(i as i64)).into())
        .sign(&key)
        .expect("sign");
        out.push(event.bytes().to_vec());
    }
    let ghosts = ghosts.iter().map(|e| e.bytes().to_vec()).collect();
    (ghosts, out)
}

/// A fresh directory for one ledger: a temporary one, or `$AKLEDGER_BENCH_DIR/name` (kept,
/// so that whole processes can be measured on it, e.g. `/usr/bin/time -v akledger heads`).
fn ledger_dir(name: &str) -> tempfile::TempDir {
    match std::env::var_os("AKLEDGER_BENCH_DIR") {
        Some(base) => {
            let dir = Path::new(&base).join(name);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("bench dir");
            tempfile::Builder::new()
                .prefix("ledger")
                .disable_cleanup(true)
                .tempdir_in(&dir)
                .expect("bench dir")
        }
        None => tempfile::tempdir().expect("tempdir"),
    }
}

fn open_pending(c: &mut Criterion) {
    let dag: Vec<Vec<u8>> = realm_dag(61, N, 8, 256)
        .expect("workload")
        .iter()
        .map(|e| e.bytes().to_vec())
        .collect();
    let admitted = ledger_dir("admitted");
    append_all(admitted.path(), &dag);
    let pending = ledger_dir("pending");
    append_all(pending.path(), &dag[1..]);
    let (ghosts, wide_events) = wide(62);
    let wide = ledger_dir("pending_127_missing");
    append_all(wide.path(), &wide_events);
    let wide_admitted = ledger_dir("admitted_127_parents");
    append_all(wide_admitted.path(), &[ghosts, wide_events].concat());
    for (name, dir, admitted_len, pending_len) in [
        ("admitted", admitted.path(), N + 1, 0),
        ("pending", pending.path(), 0, N),
        ("pending_127_missing", wide.path(), 1, N),
        (
            "admitted_127_parents",
            wide_admitted.path(),
            N + MISSING + 2,
            0,
        ),
    ] {
        let ledger = Ledger::open(dir).expect("open");
        let got = (ledger.len(), ledger.pending().len());
        assert_eq!(got, (admitted_len, pending_len), "{name}");
    }
    let mut group = c.benchmark_group("open_pending");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (name, dir) in [
        ("admitted", admitted.path()),
        ("pending", pending.path()),
        ("pending_127_missing", wide.path()),
        ("admitted_127_parents", wide_admitted.path()),
    ] {
        group.bench_function(format!("writer/{name}"), |b| {
            b.iter(|| Ledger::open(dir).expect("open").len())
        });
        // Without the state snapshot: the sled rows are loaded (the close after the open,
        // which writes a new snapshot, is outside the timed part).
        group.bench_function(format!("writer_from_index/{name}"), |b| {
            b.iter_batched(
                || std::fs::remove_file(dir.join("snapshot")).expect("a snapshot to remove"),
                |()| Ledger::open(dir).expect("open"),
                criterion::BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("read_only/{name}"), |b| {
            b.iter(|| {
                Ledger::open_with(Config::new(dir).read_only(true))
                    .expect("open")
                    .len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, open_pending);
criterion_main!(benches);
