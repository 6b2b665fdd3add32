//! Sync between two ledgers of 100 k events that share 90 k and each have a 10 k divergent
//! tail (`RealmDag::fork`), over loopback TCP, against `import` of the same missing events
//! (each tail appended to the other ledger as a JSON-lines log by `Ledger::append_log`, what
//! `akledger import` does once it has read its file). Timed:
//! - `sync`: both ends with the socket's two ends apart (`Ledger::sync_duplex` against
//!   `Ledger::serve_duplex`), what `akledger sync --peer` and `akledger serve` run: the push
//!   goes out while the pull comes in;
//! - `sync_in_turn`: one stream read and written in turn at both ends (`Ledger::sync`
//!   against `Ledger::serve_session`), what a library caller with a single stream gets;
//! - `import_same_missing_events`: the comparator;
//! - `pipeline_2000_one_ahead`: the same tails pushed through `Ledger::pipeline` in batches of
//!   2000, this bench's comparator before 2026-12-05 evening (kept to relate older figures).
//!
//! Before timing, one session checks and prints the protocol figures: events sent == the
//! symmetric difference, protocol bytes beyond the events, and that a second sync moves 0
//! events in 1 round.
//!
//! `cargo bench --bench sync -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

use akledger::sync::{Duplex, SyncOptions, SyncReport};
use akledger::{Config, Durability, Event, Ledger, Unverified};

use akledger_testkit::{divergent_histories, SYNC_SHARED as SHARED, SYNC_TAIL as TAIL};

fn bytes(events: Vec<Event<Unverified>>) -> Vec<Arc<[u8]>> {
    events.iter().map(|e| Arc::from(e.bytes())).collect()
}

/// Events as a JSON-lines log.
fn json_lines(events: &[Arc<[u8]>]) -> Vec<u8> {
    let mut log = Vec::new();
    for event in events {
        log.extend_from_slice(event);
        log.push(b'\n');
    }
    log
}

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).expect("open")
}

fn fill(dir: &Path, parts: &[&[Arc<[u8]>]]) {
    let ledger = open(dir);
    for part in parts {
        import(&ledger, part);
    }
}

/// Appends events through a pipeline in batches of 2000, one batch ahead.
fn import(ledger: &Ledger, events: &[Arc<[u8]>]) {
    let mut pipeline = ledger.pipeline();
    for chunk in events.chunks(2000) {
        pipeline.push(chunk.to_vec()).expect("push");
    }
    pipeline.finish().expect("finish");
}

/// A fresh copy, written back before timing starts: otherwise the first `fdatasync` of the
/// copied log segment (at its rotation) waits for the copy's dirty pages, 26–41 ms inside
/// either timed operation.
fn copy_dir(from: &Path, to: &Path) {
    akledger_testkit::copy_dir(from, to);
    akledger_testkit::write_back(to);
}

/// One session: `client` syncs with `server` over loopback TCP, both directions at once
/// when `at_once`, else in turn.
fn session(client: &Ledger, server: &Ledger, at_once: bool) -> SyncReport {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::scope(|scope| {
        let served = scope.spawn(|| {
            let (mut s, _) = listener.accept().expect("accept");
            match at_once {
                true => {
                    let halves = Duplex {
                        reader: &s,
                        writer: &s,
                    };
                    server.serve_duplex(halves, Duration::from_secs(600), false)
                }
                false => server.serve_session(&mut s),
            }
            .expect("serve")
        });
        let mut s = TcpStream::connect(addr).expect("connect");
        let options = SyncOptions::default();
        let report = match at_once {
            true => client.sync_duplex(
                Duplex {
                    reader: &s,
                    writer: &s,
                },
                &options,
            ),
            false => client.sync(&mut s, &options),
        }
        .expect("sync");
        served.join().expect("server thread");
        report
    })
}

fn bench(c: &mut Criterion) {
    let (shared, [tail_a, tail_b]) = divergent_histories();
    let (tail_a, tail_b) = (bytes(tail_a), bytes(tail_b));
    let shared = bytes(shared);
    let tmp = tempfile::tempdir().expect("tmp");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    fill(&a, &[&shared, &tail_a]);
    fill(&b, &[&shared, &tail_b]);

    // The figures, checked once.
    {
        let (ca, cb) = (tmp.path().join("ca"), tmp.path().join("cb"));
        copy_dir(&a, &ca);
        copy_dir(&b, &cb);
        let (la, lb) = (open(&ca), open(&cb));
        let first = session(&la, &lb, true);
        let second = session(&la, &lb, true);
        let event_bytes: usize = tail_a.iter().chain(&tail_b).map(|e| e.len()).sum();
        let wire = first.bytes_sent + first.bytes_received;
        let overhead = wire as f64 / event_bytes as f64 - 1.0;
        eprintln!(
            "sync figures: sent {} received {} (symmetric difference {}), rounds {}, wire {} B, \
             event bytes {} B, protocol overhead {:.3} %; second sync: sent {} received {} rounds {}",
            first.sent,
            first.received,
            2 * TAIL,
            first.rounds,
            wire,
            event_bytes,
            overhead * 100.0,
            second.sent,
            second.received,
            second.rounds
        );
        assert_eq!((first.sent, first.received), (TAIL as u64, TAIL as u64));
        assert_eq!((second.sent, second.received, second.rounds), (0, 0, 1));
        assert_eq!(la.heads(), lb.heads());
        assert_eq!(la.len(), SHARED + 2 * TAIL);
    }

    let mut group = c.benchmark_group("sync_100k_10pct_divergent");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    let fresh = |name: &str| {
        let (ca, cb) = (
            tmp.path().join(format!("{name}a")),
            tmp.path().join(format!("{name}b")),
        );
        let _ = std::fs::remove_dir_all(&ca);
        let _ = std::fs::remove_dir_all(&cb);
        copy_dir(&a, &ca);
        copy_dir(&b, &cb);
        (open(&ca), open(&cb))
    };
    // Times `work` on fresh copies of both ledgers (copying, and writing the copies back,
    // are not timed).
    let timed = |iters: u64, name: &str, work: &dyn Fn(&Ledger, &Ledger)| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let (la, lb) = fresh(name);
            let start = Instant::now();
            work(&la, &lb);
            total += start.elapsed();
        }
        total
    };
    group.bench_function("sync", |bench| {
        bench.iter_custom(|iters| {
            timed(iters, "s", &|la, lb| {
                session(la, lb, true);
            })
        })
    });
    group.bench_function("sync_in_turn", |bench| {
        bench.iter_custom(|iters| {
            timed(iters, "t", &|la, lb| {
                session(la, lb, false);
            })
        })
    });
    let (log_a, log_b) = (json_lines(&tail_a), json_lines(&tail_b));
    group.bench_function("import_same_missing_events", |bench| {
        bench.iter_custom(|iters| {
            timed(iters, "i", &|la, lb| {
                la.append_log(log_b.as_slice()).expect("import b");
                lb.append_log(log_a.as_slice()).expect("import a");
            })
        })
    });
    group.bench_function("pipeline_2000_one_ahead", |bench| {
        bench.iter_custom(|iters| {
            timed(iters, "p", &|la, lb| {
                import(la, &tail_b);
                import(lb, &tail_a);
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
