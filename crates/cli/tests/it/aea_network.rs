//! `akledger sidecar run` on the network with real aea 1.2.5 agents (the partner of
//! `aea.rs`): an agent whose `fetchai/tcp` client connects to the sidecar's TCP connection,
//! and two agents that talk through two sidecars joined by a link while each sidecar is
//! killed mid-burst.

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::Path;

use serde_json::{json, Value};

use crate::aea::{
    copy_agent, n, partner, pings, report, run_agent, stop_agent, summary, wait_for, Sidecar,
};
use crate::support::{bin, len};

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Points the tcp client of `project` at `port`. (The agent runs with `-s`, which skips
/// the fingerprint check a changed package file would fail.)
fn connect_tcp_client(project: &Path, port: u16) {
    let yaml = project.join("vendor/fetchai/connections/tcp/connection.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    assert!(text.contains("port: 10000"), "{text}");
    std::fs::write(&yaml, text.replace("port: 10000", &format!("port: {port}"))).unwrap();
}

#[test]
fn a_real_agent_s_tcp_client_is_answered() {
    let Some(p) = partner("aea agent over tcp") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The agent announces its address (fetchai/tcp sends it first), so its dialogues use it.
    let plan = json!({"to": "sidecar", "pings": pings(300), "second": true, "by_address": true});
    let project = copy_agent(&p.project_tcp, tmp.path(), "partner_tcp", &plan);
    let ledger = tmp.path().join("ledger");
    let mut s = Sidecar::with_args(&ledger, os(&["--echo", "--tcp-listen", "127.0.0.1:0"]));
    let log = s.log();
    let port: u16 = log
        .split("AEA TCP, listening on 127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no port in {log}"));
    connect_tcp_client(&project, port);
    let agent = run_agent(&p, &project);
    wait_for("every ping over tcp answered twice", || {
        let r = report(&project);
        n(&r, "echoes") == 300 && n(&r, "second_echoes") == 300
    });
    let r = report(&project);
    eprintln!("agent over fetchai/tcp: {}", summary(&r));
    assert_eq!(n(&r, "rejected") + n(&r, "mismatched"), 0, "{r}");
    stop_agent(agent);
    assert_eq!(s.stop(), 0);
    // The realm and the sidecar's four events, then each ping and second message in and
    // each echo out.
    assert_eq!(len(&ledger), 4 + 4 * 300);
}

/// Bootstraps the sidecar ledger `dir` (`sidecar run --once` on two scratch files) and
/// returns its controller's principal, which the other side's link accepts.
fn bootstrap(dir: &Path, scratch: &Path) -> String {
    let out = bin()
        .args(["sidecar", "run", "--once", "--dir"])
        .arg(dir)
        .arg("--input-file")
        .arg(scratch.join("in"))
        .arg("--output-file")
        .arg(scratch.join("out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    said.split("principal ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no principal in {said}"))
        .to_string()
}

/// Adds to `dir`'s configuration a stub connection to `agent`'s files, a link, and routes.
fn configure(dir: &Path, agent: &Path, link: Value, routes: Value) {
    let path = dir.join("sidecar-runtime.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    config["connections"] = json!([
        {"name": "agent", "kind": "stub",
         "input_file": agent.join("output_file"), "output_file": agent.join("input_file")},
        link,
    ]);
    config["routes"] = routes;
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
}

#[test]
fn two_real_agents_talk_through_two_linked_sidecars_killed_mid_burst() {
    let Some(p) = partner("aea agents over a link") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let pings_sent = 200;
    let alice = copy_agent(
        &p.project,
        tmp.path(),
        "alice",
        &json!({"to": "bob", "pings": pings(pings_sent)}),
    );
    let bob = copy_agent(&p.project, tmp.path(), "bob", &json!({"echo": true}));
    let (east, west) = (tmp.path().join("east"), tmp.path().join("west"));
    let east_principal = bootstrap(&east, tmp.path());
    let west_principal = bootstrap(&west, tmp.path());
    let port = free_port();
    let at = format!("127.0.0.1:{port}");
    configure(
        &east,
        &alice,
        json!({"name": "west", "kind": "link", "listen": at, "peer": west_principal}),
        json!({"alice": "agent", "bob": "west"}),
    );
    configure(
        &west,
        &bob,
        json!({"name": "east", "kind": "link", "connect": at, "peer": east_principal}),
        json!({"bob": "agent", "alice": "east"}),
    );
    let (before_east, before_west) = (len(&east), len(&west));
    let mut e = Sidecar::with_args(&east, Vec::new());
    let mut w = Sidecar::with_args(&west, Vec::new());
    let b = run_agent(&p, &bob);
    let a = run_agent(&p, &alice);
    // Each sidecar is killed once mid-burst and started again.
    wait_for("echoes to start", || n(&report(&alice), "echoes") > 40);
    e.kill();
    e.restart();
    wait_for("more echoes", || n(&report(&alice), "echoes") > 120);
    w.kill();
    w.restart();
    wait_for("every ping answered", || {
        n(&report(&alice), "echoes") == pings_sent as u64
    });
    let (ra, rb) = (report(&alice), report(&bob));
    eprintln!(
        "alice through east and west, each killed once: {}; bob: {}",
        summary(&ra),
        summary(&rb)
    );
    // A stub writes an envelope and then records it: a kill between the two can hand an
    // agent one envelope twice, which its dialogues refuse. The link loses and doubles
    // nothing.
    assert_eq!(n(&ra, "mismatched"), 0, "{ra}");
    assert!(n(&ra, "rejected") + n(&rb, "rejected") <= 2, "{ra} {rb}");
    stop_agent(a);
    stop_agent(b);
    assert_eq!((e.stop(), w.stop()), (0, 0));
    // Each side: every ping and every echo in by one connection and out by the other.
    for (dir, before) in [(&east, before_east), (&west, before_west)] {
        assert_eq!(len(dir) - before, 4 * pings_sent, "{}", dir.display());
    }
}
