//! What an auditor sees, run for real on real files: an exchange's history (conflict
//! winners included), `show --decrypt`, `demo --offered-log`, `log --follow` against a
//! writer in another process, terminal-only progress, `dag --dot` and `audit --html`
//! (rendered by a real headless browser when one is installed).

use akledger_testkit as common;

use crate::support::*;
use common::copy_dir;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A ledger where one exchange got two concurrent terminal controls: the controller closed
/// it in one copy of the ledger and cancelled it in another, and the copies were merged.
/// A new realm with the key's sidecar in it; returns the sidecar id.
fn realm_with_sidecar(key: &Path, dir: &Path) -> String {
    let (k, d) = (p(key), p(dir));
    run_ok(&["init", "--dir", d], 0);
    let realm = json(&run_ok(
        &["realm", "create", "--key", k, "--dir", d, "--json"],
        0,
    ));
    let realm_id = realm["realm_id"].as_str().unwrap();
    let args = [
        "sidecar", "create", "--realm", realm_id, "--key", k, "--dir", d, "--json",
    ];
    json(&run_ok(&args, 0))["sidecar_id"]
        .as_str()
        .unwrap()
        .to_string()
}

struct Conflicting {
    dir: PathBuf,
    sidecar: String,
    exchange: String,
    boss: PathBuf,
}

fn conflicting(tmp: &Path) -> Conflicting {
    let dir = tmp.join("data");
    let d = p(&dir);
    let boss = tmp.join("boss.json");
    let bob = tmp.join("bob.json");
    run_ok(&["init", "--dir", d], 0);
    run_ok(&["keygen", "--out", p(&boss)], 0);
    let bob_ids = json(&run_ok(&["keygen", "--out", p(&bob), "--json"], 0));
    let s = realm_with_sidecar(&boss, &dir);
    let x = "exchange-with-a-conflict-0001";
    let author = |key: &Path, dir: &Path, extra: &[&str]| {
        let mut args = vec!["exchange"];
        args.extend_from_slice(&extra[..1]);
        args.extend(["--key", p(key), "--dir", p(dir), "--sidecar", &s]);
        args.extend(["--exchange-id", x]);
        args.extend_from_slice(&extra[1..]);
        run_ok(&args, 0);
    };
    let bob_did = bob_ids["did_key"].as_str().unwrap();
    author(
        &boss,
        &dir,
        &["request", "--agent", bob_did, "--body", "summarize"],
    );
    author(
        &bob,
        &dir,
        &["respond", "--completes", "--body", "here it is"],
    );
    let other = tmp.join("other");
    copy_dir(&dir, &other);
    author(&boss, &dir, &["control", "close"]);
    author(&boss, &other, &["control", "cancel"]);
    let merged = tmp.join("other.jsonl");
    run_ok(&["export", "--dir", p(&other), "--out", p(&merged)], 0);
    run_ok(&["import", "--dir", d, p(&merged)], 0);
    Conflicting {
        dir,
        sidecar: s,
        exchange: x.to_string(),
        boss,
    }
}

#[test]
fn exchange_history_shows_each_fate_and_the_conflict_winner() {
    let tmp = tempfile::tempdir().unwrap();
    let Conflicting {
        dir,
        sidecar,
        exchange: x,
        boss,
    } = conflicting(tmp.path());
    let d = p(&dir);
    // --sidecar defaults to the only sidecar.
    let h = json(&run_ok(
        &["exchange", "--dir", d, &x, "--history", "--json"],
        0,
    ));
    assert_eq!(h["sidecar_id"], sidecar.as_str());
    assert_eq!(h["status"], "complete");
    let entries = h["entries"].as_array().unwrap();
    let roles: Vec<&str> = entries
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles.iter().filter(|r| **r == "control").count(), 2);
    assert_eq!(roles.first(), Some(&"request"));
    assert!(roles.contains(&"response"));
    let controls: Vec<&Value> = entries.iter().filter(|e| e["role"] == "control").collect();
    let winner = controls
        .iter()
        .find(|c| c["outcome"] == "terminal")
        .unwrap();
    let loser = controls.iter().find(|c| c["outcome"] == "ignored").unwrap();
    assert_eq!(loser["reason"], "conflict_loser");
    assert_eq!(loser["beaten_by"], serde_json::json!([winner["event_id"]]));
    assert_ne!(winner["action"], loser["action"]);
    for e in entries {
        assert!(e["created_at"].as_str().unwrap().ends_with('Z'));
        assert!(e["author"].as_str().unwrap().starts_with("ak:did_core:"));
    }
    // The projection agrees with the timeline.
    let projection = json(&run_ok(&["exchange", "--dir", d, &x, "--json"], 0));
    assert_eq!(projection["terminal_event_id"], winner["event_id"]);
    let text = stdout(&run_ok(&["exchange", "--dir", d, &x, "--history"], 0));
    let winner_id = winner["event_id"].as_str().unwrap();
    assert!(text.contains(&format!("ignored: conflict_loser (beaten by {winner_id})")));
    assert!(text.contains(": terminal"), "{text}");
    assert!(text.contains("(controller)  request: folded"), "{text}");

    // With a second sidecar the default is gone: a clear error names both.
    // One controller, one sidecar per realm: the second lives in another realm.
    let second_id = realm_with_sidecar(&boss, &dir);
    let refused = run_ok(&["exchange", "--dir", d, &x, "--history"], 2);
    let err = stderr(&refused);
    assert!(err.contains("--sidecar") && err.contains(&sidecar) && err.contains(&second_id));
    run_ok(
        &[
            "exchange",
            "--dir",
            d,
            "--sidecar",
            &sidecar,
            &x,
            "--history",
        ],
        0,
    );
    // An exchange nothing names.
    run_ok(
        &[
            "exchange",
            "--dir",
            d,
            "--sidecar",
            &sidecar,
            "no-such-exchange-0000000000",
            "--history",
        ],
        2,
    );
}

/// A small demo ledger with its offered log, in `tmp` (relative paths, run there).
fn demo_in(tmp: &Path) -> String {
    let out = bin()
        .current_dir(tmp)
        .args([
            "demo",
            "--dir",
            "data",
            "--exchanges",
            "12",
            "--offered-log",
            "offered.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn demo_offered_log_is_what_the_try_line_audits() {
    let tmp = tempfile::tempdir().unwrap();
    let text = demo_in(tmp.path());
    let offered = std::fs::read_to_string(tmp.path().join("offered.jsonl")).unwrap();
    let lines = offered.lines().count();
    // "offered      N events (V valid, F forged), …"
    let counts: Vec<usize> = text
        .lines()
        .find(|l| l.starts_with("offered"))
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(counts.first(), Some(&lines), "{text}");
    let forged = counts[2];
    assert!(forged > 0);
    let try_line = text.lines().find(|l| l.starts_with("try")).unwrap();
    assert!(!try_line.contains("/tmp"), "{try_line}");
    let audit = try_line
        .split(';')
        .find(|c| c.contains("akledger audit"))
        .unwrap()
        .split('#')
        .next()
        .unwrap();
    let words: Vec<&str> = audit.split_whitespace().collect();
    assert_eq!(
        words[..3],
        ["akledger", "audit", "offered.jsonl"],
        "{audit}"
    );
    let out = bin()
        .current_dir(tmp.path())
        .args(&words[1..])
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["summary"]["events"], lines);
    assert_eq!(report["summary"]["rejected"], forged);
    assert!(report["exchanges"].as_array().unwrap().len() >= 12);
    // The stream really is out of order: some events waited for their parents.
    let text_report = stdout(
        &bin()
            .current_dir(tmp.path())
            .args(&words[1..])
            .output()
            .unwrap(),
    );
    assert!(text_report.contains("event_id_digest_mismatch"));
    // The try line's history command works as printed.
    let history = try_line
        .split(';')
        .find(|c| c.contains("--history"))
        .unwrap();
    let words: Vec<&str> = history.split_whitespace().collect();
    let out = bin()
        .current_dir(tmp.path())
        .args(&words[1..])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The request line (a PNCP request names its kind and skill after its role).
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("  request") && l.ends_with(": folded")),
        "{text}"
    );
}

#[test]
fn show_decrypts_only_on_request_and_says_when_it_cannot() {
    let tmp = tempfile::tempdir().unwrap();
    let Conflicting {
        dir, exchange: x, ..
    } = conflicting(tmp.path());
    let d = p(&dir);
    let h = json(&run_ok(
        &["exchange", "--dir", d, &x, "--history", "--json"],
        0,
    ));
    let id_of = |role: &str| {
        h["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["role"] == role)
            .unwrap()["event_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let response = id_of("response");
    // By default: the event as stored, ciphertext only.
    let plain = stdout(&run_ok(&["show", "--dir", d, &response], 0));
    assert!(!plain.contains("here it is"));
    let opened = stdout(&run_ok(&["show", "--dir", d, &response, "--decrypt"], 0));
    assert!(
        opened.contains("body         {\"text\":\"here it is\"}"),
        "{opened}"
    );
    assert!(
        opened.contains(&format!("binding      {x} response to")),
        "{opened}"
    );
    let j = json(&run_ok(
        &["show", "--dir", d, &response, "--decrypt", "--json"],
        0,
    ));
    assert_eq!(j["plaintext"]["body"]["text"], "here it is");
    assert_eq!(
        j["plaintext"]["sidecar_exchange_binding"]["role"],
        "user_facing_response"
    );
    let control = id_of("control");
    let c = json(&run_ok(
        &["show", "--dir", d, &control, "--decrypt", "--json"],
        0,
    ));
    assert!(["close", "cancel"].contains(&c["plaintext"]["action"].as_str().unwrap()));
    assert_eq!(c["plaintext"]["exchange_id"], x.as_str());
    assert!(!c["plaintext"]["basis_event_ids"]
        .as_array()
        .unwrap()
        .is_empty());
    let text = stdout(&run_ok(&["show", "--dir", d, &control, "--decrypt"], 0));
    assert!(text.contains("action") && text.contains("basis"), "{text}");
    // No key: a clear message and exit 2, nothing printed on stdout.
    let empty = tmp.path().join("empty-keyring.json");
    std::fs::write(&empty, "{}").unwrap();
    let refused = run_ok(
        &[
            "show",
            "--dir",
            d,
            &response,
            "--decrypt",
            "--keyring",
            p(&empty),
        ],
        2,
    );
    assert!(stdout(&refused).is_empty());
    let err = stderr(&refused);
    assert!(
        err.contains("cannot decrypt") && err.contains("epoch 1") && err.contains("--keyring"),
        "{err}"
    );
    // Not an encrypted event.
    let realm = json(&run_ok(
        &["log", "--dir", d, "--kind", "ak.realm.create", "--json"],
        0,
    ));
    let refused = run_ok(
        &[
            "show",
            "--dir",
            d,
            realm["event_id"].as_str().unwrap(),
            "--decrypt",
        ],
        2,
    );
    assert!(stderr(&refused).contains("no encrypted plaintext"));
}

#[test]
fn log_follow_prints_what_another_process_appends() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("g.jsonl");
    run_ok(
        &["gen", "--events", "8", "--exchanges", "0", "--out", p(&log)],
        0,
    );
    let all = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let (first, rest) = lines.split_at(4);
    let first_log = tmp.path().join("first.jsonl");
    let rest_log = tmp.path().join("rest.jsonl");
    std::fs::write(&first_log, first.join("\n") + "\n").unwrap();
    std::fs::write(&rest_log, rest.join("\n") + "\n").unwrap();
    let dir = tmp.path().join("data");
    run_ok(&["import", "--dir", p(&dir), p(&first_log)], 0);

    let mut follower = bin()
        .args(["log", "--follow", "--json", "--dir", p(&dir)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(follower.stdout.take().unwrap());
    // A hang guard only: the lines come as soon as the follower looks.
    let wait = Duration::from_secs(60);
    let id = |line: &str| {
        serde_json::from_str::<Value>(line).unwrap()["event_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut seen = Vec::new();
    for _ in first {
        seen.push(id(&rx.recv_timeout(wait).expect("the initial events")));
    }
    // A writer holds the ledger (`serve`) while a peer pushes half of the rest through it:
    // the follower shows them as they are admitted, without waiting for the writer.
    let (middle, last) = rest.split_at(2);
    let peer = tmp.path().join("peer");
    let peer_log = tmp.path().join("peer.jsonl");
    std::fs::write(&peer_log, lines[..4 + middle.len()].join("\n") + "\n").unwrap();
    run_ok(&["import", "--dir", p(&peer), p(&peer_log)], 0);
    let err_rx = lines_of(follower.stderr.take().unwrap());
    let writer = crate::sync::Server::start(&dir);
    run_ok(&["sync", "--dir", p(&peer), "--peer", &writer.addr], 0);
    for _ in middle {
        seen.push(id(&rx
            .recv_timeout(wait)
            .expect("the events pushed to the writer")));
    }
    drop(writer); // killed and reaped
                  // Another process appends while the follower runs: it must not hold the writer lock.
    run_ok(&["append", "--dir", p(&dir), p(&rest_log)], 0);
    for _ in last {
        seen.push(id(&rx.recv_timeout(wait).expect("the appended events")));
    }
    // Reading beside the writer is not a recovery: nothing was said about torn tails or
    // derived files.
    let said: Vec<String> = err_rx.try_iter().collect();
    assert!(said.iter().all(|l| !l.contains("recovery")), "{said:?}");
    follower.kill().unwrap();
    follower.wait().unwrap();
    let expected: Vec<String> = lines
        .iter()
        .map(|l| {
            akledger::Event::parse(l.as_bytes())
                .unwrap()
                .id()
                .to_string()
        })
        .collect();
    // Oldest first, in admission order (the log's order: every parent comes first).
    assert_eq!(seen, expected);
    // The follower only read: the ledger is still whole.
    run_ok(&["check", "--dir", p(&dir)], 0);
}

/// Runs `akledger args…` with stdout and stderr on a pseudo-terminal (util-linux
/// `script`), returning what the terminal showed; `None` when `script` is missing.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_akledger");
    let line = std::iter::once(bin)
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| stdout(&out))
}

#[test]
fn progress_shows_on_a_terminal_only() {
    let tmp = tempfile::tempdir().unwrap();
    // Large enough for a bar: 16 MiB of log, 16 000 events.
    let log = tmp.path().join("big.jsonl");
    run_ok(
        &[
            "gen",
            "--events",
            "16000",
            "--exchanges",
            "0",
            "--out",
            p(&log),
        ],
        0,
    );
    let dir = tmp.path().join("data");
    run_ok(&["init", "--dir", p(&dir)], 0);
    let out_log = tmp.path().join("out.jsonl");
    let quiet = [
        vec!["import", "--dir", p(&dir), p(&log)],
        vec!["export", "--dir", p(&dir), "--out", p(&out_log)],
        vec!["check", "--dir", p(&dir)],
    ];
    for args in &quiet {
        let o = run_ok(args, 0);
        assert!(o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
    }
    let Some(import) = on_a_terminal(&["import", "--dir", p(&tmp.path().join("tty")), p(&log)])
    else {
        eprintln!("skipped the terminal half: util-linux `script` is not installed");
        return;
    };
    assert!(import.contains("eta"), "{import}");
    assert!(import.contains("16001 admitted"), "{import}");
    let export = on_a_terminal(&["export", "--dir", p(&dir), "--out", p(&out_log)]).unwrap();
    assert!(export.contains("events eta"), "{export}");
    let check = on_a_terminal(&["check", "--dir", p(&dir)]).unwrap();
    assert!(check.contains("re-verifying 16001 events"), "{check}");
    assert!(check.contains("no differences"), "{check}");
    // sync: a spinner counting bytes each way, on a terminal only.
    let serve = format!(
        "{} serve --stdio --dir {}",
        env!("CARGO_BIN_EXE_akledger"),
        p(&dir)
    );
    let quiet = run_ok(
        &[
            "sync",
            "--dir",
            p(&tmp.path().join("peer1")),
            "--peer-cmd",
            &serve,
        ],
        0,
    );
    assert!(!stderr(&quiet).contains("sync:"), "{}", stderr(&quiet));
    let peer2 = tmp.path().join("peer2");
    let sync = on_a_terminal(&["sync", "--dir", p(&peer2), "--peer-cmd", &serve]).unwrap();
    assert!(
        sync.contains("sync: ") && sync.contains("received"),
        "{sync}"
    );
    assert!(sync.contains("received 16001"), "{sync}");
}

/// Node ids and edges of a DOT text as `dag --dot` writes it.
fn dot_graph(dot: &str) -> (HashSet<String>, Vec<(String, String)>) {
    let mut nodes = HashSet::new();
    let mut edges = Vec::new();
    for line in dot.lines().map(str::trim) {
        // A node first: a label may hold " -> " (a reassignment names both agents).
        if line.starts_with("\"ak:event:") && line.contains(" [label=") {
            nodes.insert(line.split('"').nth(1).unwrap().to_string());
        } else if let Some((from, to)) = line.strip_suffix(';').and_then(|l| l.split_once(" -> ")) {
            edges.push((from.trim_matches('"').into(), to.trim_matches('"').into()));
        }
    }
    (nodes, edges)
}

/// Renders DOT with Graphviz when it is installed.
fn graphviz_renders(dot: &str, svg: &Path) {
    let Ok(mut child) = Command::new("dot")
        .args(["-Tsvg", "-o", p(svg)])
        .stdin(Stdio::piped())
        .spawn()
    else {
        eprintln!("skipped rendering: Graphviz `dot` is not installed");
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "dot refused the graph");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<svg"));
}

#[test]
fn dag_dot_draws_every_event_and_dependency() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("g.jsonl");
    let keyring = tmp.path().join("keyring.json");
    run_ok(
        &[
            "gen",
            "--events",
            "30",
            "--exchanges",
            "6",
            "--seed",
            "3",
            "--out",
            p(&log),
            "--keyring-out",
            p(&keyring),
        ],
        0,
    );
    // Hold back one note that later events name: they wait as pending.
    let all = std::fs::read_to_string(&log).unwrap();
    let events: Vec<akledger::Event<akledger::Unverified>> = all
        .lines()
        .map(|l| akledger::Event::parse(l.as_bytes()).unwrap())
        .collect();
    let held = events
        .iter()
        .find(|e| {
            e.kind() == "ak.note.create"
                && events.iter().any(|o| o.dependencies().contains(&e.id()))
        })
        .unwrap()
        .id();
    let offered: Vec<&str> = all
        .lines()
        .zip(&events)
        .filter(|(_, e)| e.id() != held)
        .map(|(l, _)| l)
        .collect();
    let part = tmp.path().join("part.jsonl");
    std::fs::write(&part, offered.join("\n") + "\n").unwrap();
    let dir = tmp.path().join("data");
    run_ok(&["import", "--dir", p(&dir), p(&part)], 0);
    std::fs::copy(&keyring, dir.join("keyring.json")).unwrap();
    let pending = json(&run_ok(&["pending", "--dir", p(&dir), "--json"], 0))["pending"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!pending.is_empty());
    let dot = stdout(&run_ok(&["dag", "--dot", "--dir", p(&dir)], 0));
    let (nodes, edges) = dot_graph(&dot);
    // Every event offered (admitted or pending) plus the one never seen.
    let expected: HashSet<String> = events.iter().map(|e| e.id().to_string()).collect();
    assert_eq!(nodes, expected);
    let want_edges: usize = events
        .iter()
        .filter(|e| e.id() != held)
        .map(|e| e.dependencies().len())
        .sum();
    assert_eq!(edges.len(), want_edges);
    for (from, to) in &edges {
        assert!(nodes.contains(from) && nodes.contains(to));
    }
    assert!(dot.contains(&format!("\"{held}\" [label=")) && dot.contains("missing"));
    assert_eq!(dot.matches("\\npending\"").count(), pending.len());
    let heads = json(&run_ok(&["heads", "--dir", p(&dir), "--json"], 0));
    assert_eq!(
        dot.matches("peripheries=2").count(),
        heads["heads"].as_array().unwrap().len()
    );
    assert!(
        dot.contains("fillcolor=\"#2da44e\""),
        "terminal controls are coloured"
    );
    graphviz_renders(&dot, &tmp.path().join("dag.svg"));

    // --since: only what the given events do not cover.
    let since = events
        .iter()
        .find(|e| e.kind() == "ak.note.create" && e.id() != held)
        .unwrap()
        .id()
        .to_string();
    let dot = stdout(&run_ok(
        &["dag", "--dot", "--dir", p(&dir), "--since", &since],
        0,
    ));
    let (nodes, _) = dot_graph(&dot);
    assert!(!nodes.contains(&since) && !nodes.contains(&events[0].id().to_string()));
    assert!(nodes.contains(&events.last().unwrap().id().to_string()));

    // --exchange: that exchange's events, its controls coloured by outcome.
    let ex = json(&run_ok(
        &[
            "exchanges",
            "--dir",
            p(&dir),
            "--status",
            "complete",
            "--json",
        ],
        0,
    ));
    let x = ex["exchanges"][0]["exchange_id"].as_str().unwrap();
    let h = json(&run_ok(
        &["exchange", "--dir", p(&dir), x, "--history", "--json"],
        0,
    ));
    let dot = stdout(&run_ok(
        &["dag", "--dot", "--dir", p(&dir), "--exchange", x],
        0,
    ));
    let (nodes, _) = dot_graph(&dot);
    let items: HashSet<String> = h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(nodes, items);
    // Its controls name their action: the one that ended it is filled green.
    assert!(
        dot.lines().any(|l| l.contains("\\ncontrol ")
            && l.contains(": terminal\"")
            && l.contains("fillcolor=\"#2da44e\"")),
        "{dot}"
    );
    graphviz_renders(&dot, &tmp.path().join("exchange.svg"));
}

/// A graph larger than --max-nodes is drawn per writer, saying so and how to draw the
/// events; ignored exchange items stand out; a larger bound draws every event.
#[test]
fn dag_dot_of_a_large_ledger_is_drawn_per_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let d = p(&dir);
    run_ok(&["demo", "--dir", d], 0);
    let out = run_ok(&["dag", "--dot", "--dir", d], 0);
    let (dot, said) = (stdout(&out), stderr(&out));
    assert!(
        said.contains("drawn per writer") && said.contains("--exchange X"),
        "{said}"
    );
    assert!(
        dot.starts_with("// akledger causal DAG per writer:"),
        "{dot}"
    );
    let nodes = dot
        .lines()
        .filter(|l| l.contains("[label=") && !l.contains("->"))
        .count();
    assert!((2..=41).contains(&nodes), "{nodes} nodes: {dot}");
    assert!(dot.contains(" events"));
    graphviz_renders(&dot, &tmp.path().join("writers.svg"));
    let all = stdout(&run_ok(
        &["dag", "--dot", "--dir", d, "--max-nodes", "5000"],
        0,
    ));
    let (event_nodes, _) = dot_graph(&all);
    let logged = stdout(&run_ok(&["log", "--dir", d], 0)).lines().count();
    assert_eq!(event_nodes.len(), logged);
    // The demo's ignored items (responses by agents not addressed, forged controls)
    // stand out: orange, with a red dashed border.
    assert!(
        all.lines()
            .any(|l| l.contains(": ignored: ") && l.contains("color=red") && l.contains("dashed")),
        "no ignored item stands out"
    );
}

/// The first of `names` on PATH.
fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|c| c.is_file())
    })
}

#[test]
fn audit_html_is_self_contained_and_renders_in_a_browser() {
    let tmp = tempfile::tempdir().unwrap();
    demo_in(tmp.path());
    let html = tmp.path().join("report.html");
    // The audit of the demo's offered log, run where the demo ran (relative paths).
    let audit = |extra: &[&str]| {
        bin()
            .current_dir(tmp.path())
            .args(["audit", "offered.jsonl", "--keyring", "data/keyring.json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = audit(&["--html", "report.html"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    for external in ["http://", "https://", "src=", "@import", "url("] {
        assert!(!page.contains(external), "the page refers to {external}");
    }
    // Nothing may be fetched; the one inline script (the filter) runs by its hash.
    let csp_start = "Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-";
    let at = page.find(csp_start).expect("the CSP") + csp_start.len();
    let hash = &page[at..at + 44];
    let script = page
        .split("<script>")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .unwrap();
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(script.as_bytes());
    assert_eq!(
        hash,
        base64::engine::general_purpose::STANDARD.encode(digest)
    );
    assert_eq!(page.matches("<script>").count(), 1);
    let report = json(&audit(&["--json"]));
    for x in report["exchanges"].as_array().unwrap() {
        let id = x["exchange_id"].as_str().unwrap();
        assert!(page.contains(id));
    }
    let rejected = report["summary"]["rejected"].as_u64().unwrap();
    assert!(page.contains(&format!("<h2>Rejections ({rejected})</h2>")));
    // Every count agrees with the JSON report, and the findings come before the summary.
    let not_folded = report["not_folded"].as_array().unwrap().len();
    assert!(page.contains(&format!("<h2>Not folded ({not_folded})</h2>")));
    assert!(page.contains(&format!(
        "<tr><th>pending</th><td class=\"num\">{}</td></tr>",
        report["summary"]["pending"]
    )));
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("{s}"));
    assert!(at("<h2>Rejections") < at("<h2>Legend</h2>"));
    if not_folded > 0 {
        assert!(at("<h2>Not folded") < at("<h2>Summary</h2>"));
    }
    // The search box and status filter reach every exchange row and timeline.
    assert!(page.contains("id=\"q\" type=\"search\"") && page.contains("id=\"status\""));
    let exchanges = report["exchanges"].as_array().unwrap().len();
    let timelines = page.matches("<details id=\"x-").count();
    assert!(timelines >= exchanges);
    assert_eq!(page.matches(" data-x=").count(), exchanges + timelines);
    assert!(page.contains("badge complete") && page.contains("badge failed"));
    // One picture per exchange, one lane per actor.
    assert_eq!(
        page.matches("aria-label=\"events of the exchange, one lane per actor\"")
            .count(),
        timelines
    );

    let Some(chromium) = find_binary(&["chromium", "chromium-browser"]) else {
        eprintln!("skipped the browser half: neither chromium nor chromium-browser is on PATH");
        return;
    };
    let shot = tmp.path().join("report.png");
    let profile = tmp.path().join("profile");
    let url = format!("file://{}", html.display());
    let browser = |extra: &[&str]| {
        Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let shot_arg = format!("--screenshot={}", shot.display());
    let o = browser(&[&shot_arg, "--window-size=1280,1600", "--hide-scrollbars"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
    // The DOM the browser built holds the report; nothing was fetched (the CSP forbids
    // it, and the page names nothing to fetch).
    let o = browser(&["--dump-dom"]);
    assert!(o.status.success());
    let dom = stdout(&o);
    assert!(dom.contains("<h2>Timelines</h2>") && dom.contains("<svg"));
    assert!(!dom.contains("http://") && !dom.contains("https://"));
}

#[test]
fn text_views_escape_the_control_characters_a_log_carries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let d = p(&dir);
    let boss = tmp.path().join("boss.json");
    run_ok(&["init", "--dir", d], 0);
    run_ok(&["keygen", "--out", p(&boss)], 0);
    let s = realm_with_sidecar(&boss, &dir);
    // A principal may hold any character but white space, '/', '?' and '#' (PROFILE §2):
    // this one erases the line, retitles the terminal and rings the bell.
    let agent = "ak:did_core:web:x\u{1b}[2K\u{1b}]0;pwned\u{7}";
    let x = "exchange-with-escapes-00001";
    run_ok(
        &[
            "exchange",
            "request",
            "--key",
            p(&boss),
            "--dir",
            d,
            "--sidecar",
            &s,
            "--exchange-id",
            x,
            "--agent",
            agent,
            "--body",
            "hello",
        ],
        0,
    );
    let views: [&[&str]; 4] = [
        &["exchanges", "--dir", d],
        &["exchange", "--dir", d, "--sidecar", &s, x],
        &["exchange", "--dir", d, "--sidecar", &s, x, "--history"],
        &["log", "--dir", d],
    ];
    for args in views {
        let out = stdout(&run_ok(args, 0));
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?} printed a control character: {out:?}"
        );
        if args[0] == "exchanges" || !args.contains(&"--history") && args[0] == "exchange" {
            assert!(
                out.contains(r"x\u{1b}[2K\u{1b}]0;pwned\u{7}"),
                "{args:?}: {out}"
            );
        }
    }
    // JSON keeps the principal exact (its own escapes).
    let json_out = json(&run_ok(&["exchanges", "--dir", d, "--json"], 0));
    assert_eq!(
        json_out["exchanges"][0]["coordinator_agent_id"].as_str(),
        Some(agent)
    );
}
