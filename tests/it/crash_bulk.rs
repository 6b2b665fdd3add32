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

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use akledger::limits::LOG_BATCH_EVENTS;
use akledger::workload::{realm_dag, SplitMix};
use akledger::{Config, Durability, Error, Ledger};

use crate::child_process::{self, Child};

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
    child_process::say(TAG, line);
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
    done: bool,
}

/// Runs a child on `dir` and kills it once it has been told of `kill_after` items (never,
/// for `None`).
fn run_child(dir: &std::path::Path, log: &std::path::Path, kill_after: Option<usize>) -> Run {
    let mut child = Child::spawn(
        "crash_bulk::bulk_append_child",
        TAG,
        &[(DIR_VAR, dir.as_os_str()), (LOG_VAR, log.as_os_str())],
    );
    let told = |line: &str| line.strip_prefix("told ").map(|n| n.parse().expect("n"));
    let deadline = Instant::now() + Duration::from_secs(120);
    while let Ok(line) = child
        .lines
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        if kill_after.is_some_and(|n| told(&line).is_some_and(|t| t >= n)) {
            child.kill();
            break;
        }
    }
    let (status, lines, errors) = child.wait();
    // Lines printed after the kill was decided count too: the items they tell of are
    // committed as well.
    let run = Run {
        told: lines.iter().filter_map(|l| told(l)).max().unwrap_or(0),
        done: lines.iter().any(|l| l == "done"),
    };
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
