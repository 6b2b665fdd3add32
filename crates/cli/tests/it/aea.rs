//! `akledger sidecar run` against a partner nobody here wrote: the aea 1.2.5 framework.
//!
//! `crates/cli/tests/aea/setup.sh` (which `.ci/run` runs) installs aea 1.2.5 into a Python
//! 3.10 virtual environment, generates the default protocol with AEA's own generator, and
//! builds an agent project offline. These tests then
//! - write envelopes with the library's `write_envelope` and take the replies as AEA's stub
//!   connection takes its input (`driver.py`), every reply checked by the library's own
//!   `DefaultDialogues`: bursts, second messages, hostile payloads, a writer holding the
//!   lock;
//! - run real agents (`aea run` of the project, with the `partner` skill) that ping the
//!   sidecar in bursts and check every answer with their dialogues, through restarts of
//!   the sidecar and of the agent.
//!
//! Without that setup each test says it is skipped and returns.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::bin;

/// How long a wait for the partner may last before the test fails: generous, nothing is
/// timed here.
const PATIENCE: Duration = Duration::from_secs(180);

pub(crate) use akledger_testkit::aea::{copy_agent, pings, report, run_agent, stop_agent, Partner};

/// The partner setup.sh made, else `None` after saying that `test` is skipped.
pub(crate) fn partner(test: &str) -> Option<Partner> {
    let found = akledger_testkit::aea::partner();
    if found.is_none() {
        eprintln!(
            "{test}: skipped: the aea 1.2.5 partner is not set up here (run crates/cli/tests/aea/setup.sh; it needs Python 3.10)"
        );
    }
    found
}

/// Where the partner's sources (driver.py) are.
fn here() -> PathBuf {
    akledger_testkit::workspace_root().join("crates/cli/tests/aea")
}

/// A running `akledger sidecar run`, killed when dropped; what it says goes to `DIR.log`.
pub(crate) struct Sidecar {
    pub(crate) dir: PathBuf,
    input: PathBuf,
    output: PathBuf,
    args: Vec<std::ffi::OsString>,
    child: Option<Child>,
}

impl Sidecar {
    /// On two files (its input, its output), with the echo skill.
    /// On `dir/in` and `dir/out`, its ledger in `dir/ledger`, with the echo skill.
    fn start_in(dir: &Path) -> Sidecar {
        Sidecar::start(&dir.join("ledger"), &dir.join("in"), &dir.join("out"))
    }

    fn start(dir: &Path, input: &Path, output: &Path) -> Sidecar {
        let args = [
            "--echo".as_ref(),
            "--input-file".as_ref(),
            input.as_os_str(),
        ]
        .into_iter()
        .chain(["--output-file".as_ref(), output.as_os_str()])
        .map(std::ffi::OsStr::to_os_string)
        .collect();
        let mut s = Sidecar::with_args(dir, args);
        s.input = input.to_path_buf();
        s.output = output.to_path_buf();
        s
    }

    /// With `args` after `--dir DIR`.
    pub(crate) fn with_args(dir: &Path, args: Vec<std::ffi::OsString>) -> Sidecar {
        let mut s = Sidecar {
            dir: dir.to_path_buf(),
            input: PathBuf::new(),
            output: PathBuf::new(),
            args,
            child: None,
        };
        s.restart();
        s
    }

    /// What it said so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.with_extension("log")).unwrap_or_default()
    }

    pub(crate) fn restart(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.with_extension("log"))
            .unwrap();
        let child = bin()
            .args(["sidecar", "run", "--dir"])
            .arg(&self.dir)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_for("the sidecar's marker", || {
            self.dir.join("runtime-progress.json").exists()
        });
    }

    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    pub(crate) fn stop(&mut self) -> i32 {
        let Some(child) = self.child.take() else {
            return 0;
        };
        let term = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(term.success());
        child
            .wait_with_output()
            .unwrap()
            .status
            .code()
            .unwrap_or(-1)
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs driver.py (the library's writer and reader) against a sidecar's files.
fn drive(p: &Partner, sidecar: &Sidecar, args: &[&str]) -> Value {
    let out = Command::new(&p.python)
        .arg(here().join("driver.py"))
        .arg("--input")
        .arg(&sidecar.input)
        .arg("--output")
        .arg(&sidecar.output)
        .args(args)
        .current_dir(p.project.parent().unwrap().join("registry"))
        // The generated `packages` (the default protocol) are in the registry.
        .env("PYTHONPATH", p.project.parent().unwrap().join("registry"))
        .env("HOME", &p.home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "driver.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A report without its list of round trips, which is summed up as its median and maximum.
pub(crate) fn summary(report: &Value) -> Value {
    let mut report = report.clone();
    if let Some(trips) = report
        .as_object_mut()
        .and_then(|o| o.remove("round_trips_ms"))
    {
        let mut trips: Vec<f64> = trips
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        trips.sort_by(f64::total_cmp);
        if let (Some(&max), Some(&median)) = (trips.last(), trips.get(trips.len() / 2)) {
            report["round_trip_ms_median"] = median.round().into();
            report["round_trip_ms_max"] = max.round().into();
        }
    }
    report
}

pub(crate) fn n(report: &Value, key: &str) -> u64 {
    report[key].as_u64().unwrap_or(0)
}

#[test]
fn the_library_s_writer_and_reader_bursts_of_1_to_1000_each_answered_and_accepted() {
    let Some(p) = partner("aea bursts") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Sidecar::start_in(tmp.path());
    for count in [1, 10, 100, 1000] {
        let report = drive(&p, &s, &["--count", &count.to_string()]);
        eprintln!("burst of {count}: {}", summary(&report));
        assert_eq!(n(&report, "echoes"), count, "{report}");
        assert_eq!(n(&report, "rejected"), 0, "{report}");
        assert_eq!(
            n(&report, "mismatched") + n(&report, "undecodable"),
            0,
            "{report}"
        );
    }
    assert_eq!(s.stop(), 0);
}

#[test]
fn dialogues_run_as_aea_1_numbers_them() {
    let Some(p) = partner("aea dialogues") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let s = Sidecar::start_in(tmp.path());
    // The agent's second message (2, target -1) is answered as -2, target 2.
    let report = drive(&p, &s, &["--count", "20", "--second"]);
    assert_eq!(
        (n(&report, "echoes"), n(&report, "second_echoes")),
        (20, 20),
        "{report}"
    );
    assert_eq!(n(&report, "rejected"), 0, "{report}");
    // A message of a dialogue nobody started gets INVALID_DIALOGUE, in a dialogue of its
    // own that the library's dialogues accept (so it is no `rejected`).
    let mut unknown = b"sidecar,client,fetchai/default:1.0.0,".to_vec();
    unknown.extend_from_slice(
        &akledger_runtime::DefaultMessage {
            message_id: 2,
            dialogue_reference: ("f".repeat(64), "e".repeat(64)),
            target: -1,
            performative: akledger_runtime::Performative::Bytes(b"out of nowhere".to_vec()),
        }
        .encode(),
    );
    unknown.push(b',');
    let hex: String = unknown.iter().map(|b| format!("{b:02x}")).collect();
    let report = drive(&p, &s, &["--count", "0", "--raw", &hex, "--expect", "1"]);
    assert_eq!(report["errors"]["INVALID_DIALOGUE"], 1, "{report}");
    assert_eq!(n(&report, "rejected"), 0, "{report}");
}

#[test]
fn hostile_payloads_forge_nothing_and_errors_decode() {
    let Some(p) = partner("aea hostile payloads") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Sidecar::start_in(tmp.path());
    // A payload holding a comma, a newline and a whole record with a forged sender: the
    // payload comes back whole, and nothing is taken from "mallory".
    let forged = b"x,\nsidecar,mallory,fetchai/default:1.0.0,\x12\x05\x08\x01\x12\x011,\nmore";
    let hex: String = forged.iter().map(|b| format!("{b:02x}")).collect();
    let report = drive(&p, &s, &["--count", "5", "--payload", &hex]);
    assert_eq!(n(&report, "echoes"), 5, "{report}");
    assert_eq!(
        n(&report, "rejected") + n(&report, "mismatched"),
        0,
        "{report}"
    );
    // (A running sidecar holds its ledger; it is looked at stopped.)
    assert_eq!(s.stop(), 0);
    let export = tmp.path().join("export.jsonl");
    let keyring = s.dir.join("keyring.json");
    crate::support::run_ok(
        &[
            "export",
            "--dir",
            s.dir.to_str().unwrap(),
            "--out",
            export.to_str().unwrap(),
        ],
        0,
    );
    let shown = crate::support::run_ok(
        &[
            "audit",
            export.to_str().unwrap(),
            "--keyring",
            keyring.to_str().unwrap(),
            "--json",
        ],
        0,
    );
    assert_eq!(crate::support::json(&shown)["summary"]["rejected"], 0);
    let mut seen = 0;
    for line in std::fs::read_to_string(&export).unwrap().lines() {
        let event = serde_json::from_str::<Value>(line).unwrap();
        if event["kind"] != "ak.message.create" {
            continue;
        }
        let id = event["event_id"].as_str().unwrap().to_string();
        let shown = crate::support::run_ok(
            &["show", &id, "--decrypt", "--dir", s.dir.to_str().unwrap()],
            0,
        );
        let text = crate::support::stdout(&shown);
        assert!(
            !text.contains("mallory"),
            "a forged envelope was recorded: {text}"
        );
        seen += 1;
    }
    assert_eq!(seen, 10, "five pings in and five echoes out");
    s.restart();
    // What AEA's reader escape-decodes (`\x`, `\N{...}`) is decoded the same way; a line
    // whose message then is no default-protocol message gets the error skill's answer,
    // which the library decodes (its quote is base85: no `\x` for the reader to garble).
    let typed = b"sidecar,client,fetchai/default:1.0.0,\\x12\\x10\\x08\\x01\\x12\\x01z*\\t*\\x07\\n\\x05hello,\n";
    let named = b"sidecar,client,fetchai/default:1.0.0,\\N{SNOWMAN}\\x41 not protobuf,\n";
    let hexes: Vec<String> = [&typed[..], &named[..]]
        .iter()
        .map(|line| line.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    let report = drive(
        &p,
        &s,
        &[
            "--count", "0", "--raw", &hexes[0], "--raw", &hexes[1], "--expect", "2",
        ],
    );
    assert_eq!(n(&report, "undecodable"), 0, "{report}");
    assert_eq!(report["errors"]["DECODING_ERROR"], 1, "{report}");
    // The typed line decodes to a first message of dialogue "z": echoed in it.
    assert_eq!(n(&report, "records"), 2, "{report}");
}

#[test]
fn a_writer_holding_the_lock_is_never_read_half_written() {
    let Some(p) = partner("aea lock contention") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let s = Sidecar::start_in(tmp.path());
    // Each record written in two halves, 30 ms apart, under one held lock.
    let report = drive(&p, &s, &["--count", "20", "--hold-lock-ms", "30"]);
    assert_eq!(n(&report, "echoes"), 20, "{report}");
    assert_eq!(
        n(&report, "rejected") + n(&report, "undecodable"),
        0,
        "{report}"
    );
}

/// A copy of the partner agent project in `dir`, planned by `plan` (partner.json).
fn agent(p: &Partner, dir: &Path, plan: &Value) -> PathBuf {
    copy_agent(&p.project, dir, "partner", plan)
}

#[test]
fn a_real_agent_s_bursts_are_answered_through_restarts_of_either_side() {
    let Some(p) = partner("aea agent") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let plan = serde_json::json!({"to": "sidecar", "pings": pings(300), "second": true});
    let project = agent(&p, tmp.path(), &plan);
    // The agent's stub reads input_file and writes output_file in its project directory.
    let mut s = Sidecar::start(
        &tmp.path().join("ledger"),
        &project.join("output_file"),
        &project.join("input_file"),
    );
    let a = run_agent(&p, &project);
    // The sidecar is killed twice mid-burst and restarted.
    for _ in 0..2 {
        wait_for("echoes to start", || n(&report(&project), "echoes") > 50);
        s.kill();
        s.restart();
    }
    wait_for("every ping answered twice", || {
        let r = report(&project);
        n(&r, "echoes") == 300 && n(&r, "second_echoes") == 300
    });
    let r = report(&project);
    eprintln!("agent through two sidecar kills: {}", summary(&r));
    // A kill between writing an envelope and recording it can hand the agent that one
    // envelope twice; its dialogues refuse the second copy.
    assert!(n(&r, "rejected") <= 2, "{r}");
    assert_eq!(n(&r, "mismatched"), 0, "{r}");
    stop_agent(a);

    // The agent restarts (its stub empties output_file, the sidecar's input, on connect)
    // with new pings: every one is answered, none of the old ones taken in again. (A
    // running sidecar holds its ledger; it is counted stopped.)
    assert_eq!(s.stop(), 0);
    let before = crate::support::len(&s.dir);
    s.restart();
    std::fs::remove_file(project.join("report.json")).unwrap();
    let plan = serde_json::json!({"to": "sidecar", "pings": pings(100)});
    std::fs::write(project.join("partner.json"), plan.to_string()).unwrap();
    let a = run_agent(&p, &project);
    wait_for("the restarted agent's pings answered", || {
        n(&report(&project), "echoes") == 100
    });
    stop_agent(a);
    assert_eq!(s.stop(), 0);
    assert_eq!(
        crate::support::len(&s.dir) - before,
        200,
        "each new ping in and its echo out, nothing else"
    );
}
