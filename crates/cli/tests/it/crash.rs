//! Crash consistency of the `akledger` binary with real process kills: SIGKILL during an
//! import and during an index rebuild; every reopening is whole and checks clean. (The
//! library's own kill tests are the engine's `crash` tests.)

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use akledger::workload::{realm_dag, SplitMix};
use akledger::Ledger;

/// A JSON Lines log of `events` events of `realm_dag(seed, …)`, in order.
fn write_log(path: &Path, seed: u64, events: usize) -> usize {
    let events = realm_dag(seed, events, 4, 64).expect("workload");
    let mut text = Vec::new();
    for e in &events {
        text.extend_from_slice(e.bytes());
        text.push(b'\n');
    }
    std::fs::write(path, text).expect("write log");
    events.len()
}

/// Runs `akledger ARGS --dir DIR` and SIGKILLs it after `ms` (if still running).
fn kill_cli_after(dir: &Path, args: &[&str], ms: u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(args)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn akledger");
    std::thread::sleep(Duration::from_millis(ms));
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `akledger import LOG --dir DIR` to completion.
fn import_all(log: &Path, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_akledger"))
        .arg("import")
        .arg(log)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigkill_during_a_cli_import_loses_nothing_and_resumes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("events.jsonl");
    let total = write_log(&log, 51, 4000);
    let dir = tmp.path().join("data");
    let mut rng = SplitMix::new(0xC4A5_0004);
    let mut seen = 0usize;
    for _ in 0..6 {
        kill_cli_after(
            &dir,
            &["import", log.to_str().expect("utf-8")],
            20 + rng.below(400) as u64,
        );
        let ledger = Ledger::open(&dir).expect("reopen after a kill during import");
        assert!(
            ledger.len() >= seen,
            "{} events after {seen} were seen",
            ledger.len()
        );
        seen = ledger.len();
        assert!(ledger.check().expect("check").is_clean());
    }
    import_all(&log, &dir);
    assert_eq!(Ledger::open(&dir).expect("open").len(), total);
}

#[test]
fn sigkill_during_an_index_rebuild_leaves_a_ledger_that_opens_whole() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("events.jsonl");
    let total = write_log(&log, 52, 6000);
    let dir = tmp.path().join("data");
    import_all(&log, &dir);
    let mut rng = SplitMix::new(0xC4A5_0005);
    let (mut rebuilds_seen, mut rewrites_seen) = (0, 0);
    for round in 0..8 {
        // Every other round the index goes; every fourth, the snapshot too, so the index
        // is rebuilt from the log rather than rewritten from the snapshot.
        if round % 2 == 0 {
            std::fs::remove_dir_all(dir.join("index")).expect("delete index");
        }
        if round % 4 == 0 {
            let _ = std::fs::remove_file(dir.join("snapshot"));
        }
        // `init` opens for writing: it rebuilds or rewrites the index, and is killed part
        // way.
        kill_cli_after(&dir, &["init"], 10 + rng.below(300) as u64);
        let ledger = Ledger::open(&dir).expect("reopen after a kill during a rebuild");
        let report = ledger.open_report();
        rebuilds_seen += usize::from(report.rebuilt.is_some());
        rewrites_seen += usize::from(report.index_from_snapshot.is_some());
        assert_eq!(ledger.len(), total, "{report:?}");
        assert!(ledger.check().expect("check").is_clean());
    }
    eprintln!(
        "rebuild kills: {rebuilds_seen} reopenings finished an interrupted rebuild from the log, \
         {rewrites_seen} an interrupted rewrite from the snapshot"
    );
}
