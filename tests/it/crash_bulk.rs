//! Crash consistency of a bulk append (`Ledger::append_log`) with real process kills.
//!
//! A bulk append takes no periodic snapshot and gathers its index writes
//! (`Config::bulk_index_records`), so a process killed during one leaves a snapshot from
//! before it and an index behind the log. The parent test re-runs this test binary as a
//! child (`--exact crash_bulk::bulk_append_child`) that appends one log file of a
//! workload to the ledger directory, printing how many items it has been told of; the
//! parent kills it with SIGKILL once it has heard of a seeded number of them, reopens the
//! ledger and checks:
//!
//! * every item the child was told of is there, and what is there is a prefix of the log
//!   (batches commit in log order), cut at a batch of the append;
//! * `check()` is clean;
//! * the next child appends the same log again, so duplicates and the rest follow a
//!   recovery, and the last round runs to the end.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use akledger::limits::LOG_BATCH_EVENTS;
use akledger::workload::{realm_dag, SplitMix};
use akledger::{Config, Durability, Error, Ledger};

/// The ledger directory (set only for the child).
const DIR_VAR: &str = "AKLEDGER_BULK_CRASH_DIR";
/// The log file the child appends.
const LOG_VAR: &str = "AKLEDGER_BULK_CRASH_LOG";
/// Prefix of the child's protocol lines (libtest prints its own lines too).
const TAG: &str = "BULK ";
/// Events of the workload (and one realm creation): six batches of the append and part
/// of a seventh.
const EVENTS: usize = 6_500;
/// Index records the child gathers before writing them: one batch and a half.
const HOLD: usize = 1_500;

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{TAG}{line}").expect("stdout");
    out.flush().expect("flush");
}

/// The child: does nothing unless started by the parent test with `AKLEDGER_BULK_CRASH_DIR`.
#[test]
fn bulk_append_child() {
    let Ok(dir) = std::env::var(DIR_VAR) else {
        return;
    };
    let log = std::fs::read(std::env::var(LOG_VAR).expect("log var")).expect("log");
    let config = Config::new(&dir)
        .durability(Durability::Sync)
        .bulk_index_records(HOLD)
        .snapshot_interval(700);
    let ledger = Ledger::open_with(config).expect("open");
    let report = ledger.open_report();
    say(&format!(
        "open replayed={} snapshot_ignored={}",
        report.replayed,
        report.snapshot_ignored.is_some()
    ));
    let mut told = 0usize;
    ledger
        .append_log_with(&log[..], |_| {
            told += 1;
            if told % 50 == 0 {
                say(&format!("told {told}"));
            }
            Ok::<(), Error>(())
        })
        .expect("append");
    say(&format!("told {told}"));
    ledger.close().expect("close");
    say("done");
}

/// What one child printed before it died.
#[derive(Debug, Default)]
struct Run {
    told: usize,
    opened: Option<String>,
    done: bool,
}

/// Runs a child on `dir` and kills it once it has been told of `kill_after` items (never,
/// for `None`).
fn run_child(dir: &std::path::Path, log: &std::path::Path, kill_after: Option<usize>) -> Run {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "crash_bulk::bulk_append_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, dir)
        .env(LOG_VAR, log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some((_, msg)) = line.split_once(TAG) {
                let _ = tx.send(msg.to_owned());
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut run = Run::default();
    let deadline = Instant::now() + Duration::from_secs(120);
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let mut words = line.split(' ');
        match words.next() {
            Some("open") => run.opened = Some(line.clone()),
            Some("told") => run.told = words.next().expect("n").parse().expect("n"),
            Some("done") => run.done = true,
            _ => {}
        }
        if kill_after.is_some_and(|n| run.told >= n) {
            let _ = child.kill(); // SIGKILL on unix
            break;
        }
    }
    let status = child.wait().expect("wait child");
    // What the child printed after the kill was decided was printed after it was told of
    // more items, which are then there as well.
    while let Ok(line) = rx.try_recv() {
        if let Some(n) = line.strip_prefix("told ") {
            run.told = n.parse().expect("n");
        }
    }
    reader.join().expect("reader thread");
    let errors = err_reader.join().expect("stderr thread");
    assert!(
        status.signal() == Some(9) || (status.success() && run.done),
        "child failed ({status}): {run:?}\n{errors}"
    );
    run
}

#[test]
fn sigkill_during_a_bulk_append_loses_nothing_it_told_of() {
    let started = Instant::now();
    let events = realm_dag(0xB01C, EVENTS, 8, 256).expect("workload");
    let ids: Vec<_> = events.iter().map(|e| e.id()).collect();
    let n = ids.len();
    let lines: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let mut log = tempfile::NamedTempFile::new().expect("log file");
    log.write_all(&lines.join(&b'\n')).expect("write log");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = SplitMix::new(0xB01C_0001);
    // (items there, log entries the reopen replayed) of each round.
    let mut rounds = Vec::new();
    let mut there_before = 0;
    for round in 0..6 {
        // The last round runs to the end; the others are killed past what the ledger held.
        let kill_after =
            (round < 5).then(|| (there_before + 1 + rng.below(2 * LOG_BATCH_EVENTS)).min(n));
        let run = run_child(dir.path(), log.path(), kill_after);
        let ledger = Ledger::open(dir.path()).expect("reopen after kill");
        let replayed = ledger.open_report().replayed;
        let there = ids.iter().take_while(|id| ledger.contains(id)).count();
        assert!(
            ids.iter().skip(there).all(|id| !ledger.contains(id)),
            "round {round}: the ledger holds a prefix of the log and more"
        );
        assert_eq!(ledger.len(), there);
        assert!(
            there >= run.told,
            "round {round}: told of {}, {there} there",
            run.told
        );
        assert!(
            there % LOG_BATCH_EVENTS == 0 || there == n,
            "round {round}: {there} there, not a whole number of batches"
        );
        let check = ledger.check().expect("check");
        assert!(check.is_clean(), "round {round}: {check:?}");
        drop(ledger);
        rounds.push((there, replayed));
        there_before = there;
        if run.done {
            assert_eq!(there, n);
            break;
        }
    }
    assert_eq!(there_before, n, "the last round ran to the end");
    eprintln!(
        "sigkill_during_a_bulk_append: (events there, entries replayed) {rounds:?} in {:?}",
        started.elapsed()
    );
    // The kills left the index behind the log, and the reopens replayed the difference.
    assert!(
        rounds.iter().filter(|&&(_, replayed)| replayed > 0).count() >= 2,
        "{rounds:?}"
    );
}
