//! Running the real `akledger` binary from CLI tests: the command, its output as text or
//! JSON, and required exit codes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;

use serde_json::Value;

/// The built `akledger` binary, ready for arguments.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
}

/// Runs `akledger args…` to completion.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run akledger")
}

/// Its stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Its stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and requires exit code `code`.
pub fn run_ok(args: &[&str], code: i32) -> Output {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "akledger {args:?}\nstdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    o
}

/// Its stdout parsed as one JSON value.
pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

/// A path as a command-line argument.
pub fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// A generated log (realm create + `events` notes by 4 writers), as lines.
pub fn log_lines(dir: &Path, events: usize) -> Vec<String> {
    let file = dir.join("all.jsonl");
    run_ok(
        &[
            "gen",
            "--events",
            &events.to_string(),
            "--writers",
            "4",
            "--exchanges",
            "0",
            "--out",
            p(&file),
        ],
        0,
    );
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Imports the given lines into a new ledger at `dir`.
pub fn ledger_of(dir: &Path, lines: &[&String]) {
    let file = dir.with_extension("jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    run_ok(&["import", p(&file), "--dir", p(dir)], 0);
}

/// A ledger at `dir/a` holding a generated log of `events` notes (see [`log_lines`]), and
/// that log's lines.
pub fn ledger_of_generated(dir: &Path, events: usize) -> (PathBuf, Vec<String>) {
    let ledger = dir.join("a");
    let lines = log_lines(dir, events);
    ledger_of(&ledger, &lines.iter().collect::<Vec<_>>());
    (ledger, lines)
}

/// The ledger's heads, as `heads --json` prints them.
pub fn heads(dir: &Path) -> Value {
    json(&run_ok(&["heads", "--dir", p(dir), "--json"], 0))
}

/// Admitted events, as `check --json` counts them.
pub fn len(dir: &Path) -> usize {
    json(&run_ok(&["check", "--dir", p(dir), "--json"], 0))["admitted"]
        .as_u64()
        .unwrap_or(0) as usize
}

/// `realm create` then `sidecar create` in it by `key` in the ledger `dir`: their JSON
/// outputs (the sidecar's with its private strand).
pub fn realm_and_sidecar(dir: &Path, key: &Path) -> (Value, Value) {
    let d = p(dir);
    run_ok(&["init", "--dir", d], 0);
    let realm = json(&run_ok(
        &["realm", "create", "--key", p(key), "--dir", d, "--json"],
        0,
    ));
    let realm_id = realm["realm_id"].as_str().unwrap_or_default().to_owned();
    let sidecar = json(&run_ok(
        &[
            "sidecar",
            "create",
            "--realm",
            &realm_id,
            "--key",
            p(key),
            "--dir",
            d,
            "--json",
        ],
        0,
    ));
    (realm, sidecar)
}

/// The lines `out` gives, sent on as they come by a thread of their own.
pub fn lines_of(out: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    rx
}
