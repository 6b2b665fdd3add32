//! The sidecar against real aea 1.2.5 agents, whole processes on the same stub files
//! (`crates/cli/tests/aea/setup.sh` first; without it the benchmark says it is skipped):
//! - round trip, one message in flight at a time: an agent pinging `akledger sidecar run`
//!   against the same agent pinging a second agent that echoes (agent to agent);
//! - throughput: a burst of 1000 pings from one agent answered by the sidecar against the
//!   same 1000 round trips between two agents (agents cannot take a burst from each other:
//!   AEA's reader merges records read together, so agent to agent goes one at a time).
//!
//! The times are the pinging agent's own (from sending a ping to its dialogues accepting
//! the echo). Runs alternate, A then B, three pairs; medians and their ratio are printed.
//!
//! `cargo bench --bench aea_partner`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use akledger_testkit::aea::{copy_agent, partner, pings, report, run_agent, stop_agent, Partner};
use akledger_testkit::timed::median;
use serde_json::{json, Value};

const ROUND_TRIPS: usize = 200;
const BURST: usize = 1000;
const PAIRS: usize = 3;

/// The pinger's round trips (ms) once every echo is in.
fn wait_round_trips(project: &Path, n: usize) -> Vec<f64> {
    let started = Instant::now();
    loop {
        let r = report(project);
        if r["echoes"].as_u64() == Some(n as u64) {
            assert_eq!(r["rejected"].as_u64(), Some(0), "{r}");
            return r["round_trips_ms"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
        }
        assert!(started.elapsed() < Duration::from_secs(300), "stuck: {r}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pings `target` (another agent, or the sidecar) with `plan`; the pinger's round trips.
fn agent_to_agent(p: &Partner, plan: Value, n: usize) -> Vec<f64> {
    let tmp = tempfile::tempdir().unwrap();
    let echo = copy_agent(&p.project, tmp.path(), "echo", &json!({"echo": true}));
    let pinger = copy_agent(&p.project, tmp.path(), "pinger", &plan);
    // Each agent's output file is the other's input file.
    std::os::unix::fs::symlink(echo.join("input_file"), pinger.join("output_file")).unwrap();
    std::os::unix::fs::symlink(pinger.join("input_file"), echo.join("output_file")).unwrap();
    let e = run_agent(p, &echo);
    std::thread::sleep(Duration::from_secs(3));
    let a = run_agent(p, &pinger);
    let trips = wait_round_trips(&pinger, n);
    stop_agent(a);
    stop_agent(e);
    trips
}

fn agent_to_sidecar(p: &Partner, plan: Value, n: usize) -> Vec<f64> {
    let tmp = tempfile::tempdir().unwrap();
    let pinger = copy_agent(&p.project, tmp.path(), "pinger", &plan);
    let mut sidecar = Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(["sidecar", "run", "--echo", "--dir"])
        .arg(tmp.path().join("ledger"))
        .arg("--input-file")
        .arg(pinger.join("output_file"))
        .arg("--output-file")
        .arg(pinger.join("input_file"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while !tmp.path().join("ledger/runtime-progress.json").exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let a = run_agent(p, &pinger);
    let trips = wait_round_trips(&pinger, n);
    stop_agent(a);
    let _ = Command::new("kill")
        .args(["-TERM", &sidecar.id().to_string()])
        .status();
    sidecar.wait().unwrap();
    trips
}

fn main() {
    let Some(p) = partner() else {
        eprintln!(
            "aea_partner: skipped: run crates/cli/tests/aea/setup.sh first (it needs Python 3.10)"
        );
        return;
    };
    let one_at_a_time =
        |to: &str, n: usize| json!({"to": to, "pings": pings(n), "sequential": true});
    let mut sidecar_trip = Vec::new();
    let mut agent_trip = Vec::new();
    let mut burst = Vec::new();
    let mut sequential = Vec::new();
    for pair in 0..PAIRS {
        let s = median(agent_to_sidecar(
            &p,
            one_at_a_time("sidecar", ROUND_TRIPS),
            ROUND_TRIPS,
        ));
        let a = median(agent_to_agent(
            &p,
            one_at_a_time("echo", ROUND_TRIPS),
            ROUND_TRIPS,
        ));
        println!("pair {pair}: round trip median {s:.2} ms through the sidecar, {a:.2} ms agent to agent");
        sidecar_trip.push(s);
        agent_trip.push(a);
        let trips = agent_to_sidecar(&p, json!({"to": "sidecar", "pings": pings(BURST)}), BURST);
        let burst_s = trips.iter().copied().fold(0.0, f64::max) / 1000.0;
        let trips = agent_to_agent(&p, one_at_a_time("echo", BURST), BURST);
        let sequential_s = trips.iter().sum::<f64>() / 1000.0;
        println!(
            "pair {pair}: {BURST} pings answered in {burst_s:.2} s by the sidecar (a burst), {sequential_s:.2} s agent to agent (one at a time)"
        );
        burst.push(burst_s);
        sequential.push(sequential_s);
    }
    let (s, a) = (median(sidecar_trip), median(agent_trip));
    println!(
        "round trip: {s:.2} ms through the sidecar vs {a:.2} ms agent to agent = {:.2}x",
        s / a
    );
    let (b, q) = (median(burst), median(sequential));
    println!(
        "throughput: {:.0} vs {:.0} pings/s = {:.2}x",
        BURST as f64 / b,
        BURST as f64 / q,
        q / b
    );
}
