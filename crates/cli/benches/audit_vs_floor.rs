//! `akledger audit` and `akledger import` of a log file, whole process, against their
//! floor: the same file read, each event parsed and its signature batch-verified (ZIP-215,
//! in batches of [`LOG_BATCH_EVENTS`], by the function the ledger's verification workers
//! run on their shares: an import's or audit's worker verifies a whole log batch as one
//! signature batch) on every core, in one process. The audit does that and admission, the causal
//! index, the exchange fold and the report besides; the import, admission into a new
//! ledger on disk, durably. Also their peak resident
//! memory (`/usr/bin/time`): an audit replays into an in-memory ledger that refers to the
//! events in the file instead of holding them.
//!
//! The log: `AKLEDGER_AUDIT_LOG=FILE`, or one `gen` writes of `AKLEDGER_AUDIT_EVENTS`
//! realm events (default 200 000; the figure is at 1 000 000) by 64 writers with a
//! sidecar of 1000 exchanges. Floor, audit and import run in turn, three times each; the
//! medians and the medians of the per-run ratios are printed (the import's as the share of
//! the floor's speed it reaches), with the CPU time (user and system; for the audit and the
//! import also how much of it was system) each used: on 2 cores all three keep both cores
//! busy most of the time, so the wall ratios follow the CPU ratios (the floor's less
//! closely: it reads the whole file on one thread first).
//! Skipped, saying so, without `/usr/bin/time`.
//!
//! `cargo bench --bench audit_vs_floor`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::BufRead;
use std::ops::Range;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use akledger::internals::verify_batch::verify_spans;
use akledger::limits::LOG_BATCH_EVENTS;
use akledger::{Keyring, Verifier};
use akledger_testkit::cpu;
use akledger_testkit::timed::{self, median, timed, Timed};

/// A batch's buffer and where each of its items is in it.
type Batch = (Arc<Vec<u8>>, Vec<Range<usize>>);

/// Reads `log` (JSON Lines), each batch of [`LOG_BATCH_EVENTS`] lines into a buffer of its
/// own as `append_log` reads them, then parses and batch-verifies every event on `threads`
/// threads, each event keeping a share of its batch's buffer as the workers' do
/// (`verify_spans`); returns how many verified.
fn floor(log: &Path, threads: usize) -> usize {
    let mut reader = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(log).unwrap());
    let mut batches: Vec<Batch> = Vec::new();
    loop {
        let (mut buffer, mut spans) = (Vec::new(), Vec::with_capacity(LOG_BATCH_EVENTS));
        while spans.len() < LOG_BATCH_EVENTS {
            let start = buffer.len();
            if reader.read_until(b'\n', &mut buffer).unwrap() == 0 {
                break;
            }
            let end = if buffer.last() == Some(&b'\n') {
                buffer.len() - 1
            } else {
                buffer.len()
            };
            if end > start {
                spans.push(start..end);
            }
        }
        if spans.is_empty() {
            break;
        }
        batches.push((Arc::new(buffer), spans));
    }
    let verifier = Verifier::new(Keyring::new());
    let share = batches.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = batches
            .chunks(share)
            .map(|part| {
                let verifier = &verifier;
                s.spawn(move || {
                    part.iter()
                        .map(|(buffer, spans)| {
                            verify_spans(buffer, spans, verifier)
                                .iter()
                                .filter(|v| v.is_ok())
                                .count()
                        })
                        .sum::<usize>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// `akledger <args>` under `/usr/bin/time`.
fn akledger(args: &[&std::ffi::OsStr]) -> Timed {
    timed(Path::new(env!("CARGO_BIN_EXE_akledger")), args, &[0, 1])
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    if !timed::available() {
        eprintln!("audit_vs_floor: skipped: /usr/bin/time is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = match std::env::var_os("AKLEDGER_AUDIT_LOG") {
        Some(log) => log.into(),
        None => {
            let events = std::env::var("AKLEDGER_AUDIT_EVENTS").unwrap_or_else(|_| "200000".into());
            let log = tmp.path().join("log.jsonl");
            let status = Command::new(env!("CARGO_BIN_EXE_akledger"))
                .args([
                    "gen",
                    "--events",
                    &events,
                    "--writers",
                    "64",
                    "--exchanges",
                    "1000",
                    "--out",
                ])
                .arg(&log)
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            log
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (mut floors, mut audits, mut ratios, mut peaks) = (vec![], vec![], vec![], vec![]);
    let (mut imports, mut shares, mut import_peaks) = (vec![], vec![], vec![]);
    let (mut floor_cpus, mut audit_cpu_ratios, mut import_cpu_shares) = (vec![], vec![], vec![]);
    for run in 0..3 {
        let (meter, started) = (cpu::Meter::of_self(), Instant::now());
        let verified = floor(&log, threads);
        let f = started.elapsed().as_secs_f64();
        let floor_cpu = meter.seconds();
        let audit = akledger(&["audit".as_ref(), log.as_os_str()]);
        let dir = tmp.path().join(format!("import{run}"));
        let import = akledger(&[
            "import".as_ref(),
            log.as_os_str(),
            "--dir".as_ref(),
            dir.as_os_str(),
        ]);
        std::fs::remove_dir_all(&dir).unwrap();
        eprintln!(
            "audit_vs_floor: {verified} events: floor {f:.2} s (CPU {}), audit {:.2} s \
             (CPU {:.2} s, {:.2} s of it system, peak {} KiB), import {:.2} s (CPU {:.2} s, \
             {:.2} s of it system, peak {} KiB)",
            floor_cpu.map_or("n/a".into(), |c| format!("{c:.2} s")),
            audit.wall,
            audit.cpu,
            audit.system,
            audit.peak,
            import.wall,
            import.cpu,
            import.system,
            import.peak,
        );
        floors.push(f);
        audits.push(audit.wall);
        ratios.push(audit.wall / f);
        peaks.push(audit.peak as f64 / 1024.0);
        imports.push(import.wall);
        shares.push(f / import.wall);
        import_peaks.push(import.peak as f64 / 1024.0);
        if let Some(floor_cpu) = floor_cpu {
            floor_cpus.push(floor_cpu);
            audit_cpu_ratios.push(audit.cpu / floor_cpu);
            import_cpu_shares.push(floor_cpu / import.cpu);
        }
    }
    println!(
        "audit {:.2} s (peak {:.0} MiB) vs floor {:.2} s on {threads} threads: {:.3}x (median of per-pair ratios)",
        median(audits),
        median(peaks),
        median(floors),
        median(ratios)
    );
    println!(
        "import {:.2} s (peak {:.0} MiB): {:.3} of the floor's speed (median of per-pair shares)",
        median(imports),
        median(import_peaks),
        median(shares)
    );
    if !floor_cpus.is_empty() {
        println!(
            "CPU time: floor {:.2} s; audit {:.3}x the floor's, import {:.3} of it (medians of \
             per-pair ratios)",
            median(floor_cpus),
            median(audit_cpu_ratios),
            median(import_cpu_shares)
        );
    }
}
