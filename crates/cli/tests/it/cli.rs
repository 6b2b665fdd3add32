//! The `akledger` binary, run for real: exit codes, JSON shapes, files, round trips.

use crate::support::*;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use akledger::error::Code;
use akledger::workload::{sidecar_workload, SidecarSpec};
use serde_json::Value;

/// A demo ledger in a fresh temp dir (fewer exchanges, to stay quick).
fn demo(exchanges: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    run_ok(&["demo", "--dir", p(&dir), "--exchanges", exchanges], 0);
    tmp
}

#[test]
fn demo_builds_a_ledger_and_runs_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let first = run_ok(&["demo", "--dir", p(&dir)], 0);
    let text = stdout(&first);
    assert!(text.contains("admitted"), "{text}");
    assert!(text.contains("rejected"), "{text}");
    assert!(text.contains("signature_invalid"), "{text}");
    assert!(text.contains("exchanges"), "{text}");
    assert!(dir.join("keyring.json").is_file());
    assert!(dir.join("log").is_dir());
    let second = run_ok(&["demo", "--dir", p(&dir)], 0);
    assert!(
        stdout(&second).contains("admitted     0 now"),
        "{}",
        stdout(&second)
    );
    // The ledger it left is consistent.
    let check = json(&run_ok(&["check", "--dir", p(&dir), "--json"], 0));
    assert_eq!(check["differences"], Value::Array(vec![]));
}

#[test]
fn heads_covers_heads_of_json_shapes() {
    let tmp = demo("30");
    let dir = tmp.path().join("data");
    let heads = json(&run_ok(&["heads", "--dir", p(&dir), "--json"], 0));
    let heads: Vec<String> = heads["heads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect();
    assert!(heads.len() >= 2);
    let mut sorted = heads.clone();
    sorted.sort();
    assert_eq!(heads, sorted, "heads in canonical order");

    let (a, b) = (heads[0].as_str(), heads[1].as_str());
    let covered = json(&run_ok(
        &["covers", "--dir", p(&dir), "--basis", a, a, "--json"],
        0,
    ));
    assert_eq!(
        covered,
        serde_json::json!({"covered": true, "type": "akledger.covers", "format": 1})
    );
    let not = json(&run_ok(
        &["covers", "--dir", p(&dir), "--basis", a, b, "--json"],
        1,
    ));
    assert_eq!(
        not,
        serde_json::json!({"covered": false, "type": "akledger.covers", "format": 1})
    );

    let of = json(&run_ok(&["heads-of", a, b, "--dir", p(&dir), "--json"], 0));
    assert_eq!(
        of,
        serde_json::json!({"heads": [a, b], "type": "akledger.heads", "format": 1})
    );

    // Human forms.
    assert_eq!(
        stdout(&run_ok(&["covers", "--dir", p(&dir), "--basis", a, b], 1)).trim(),
        "not covered"
    );
    assert_eq!(
        stdout(&run_ok(&["heads", "--dir", p(&dir)], 0))
            .lines()
            .count(),
        heads.len()
    );
}

/// `covers` and `heads-of` start with a parser of their own arguments only (a shorter
/// start); their help and their usage errors still come from the whole command tree.
#[test]
fn the_query_commands_help_and_usage_errors_come_from_the_whole_tree() {
    for command in ["covers", "heads-of"] {
        let help = stdout(&run_ok(&[command, "--help"], 0));
        assert_eq!(help, stdout(&run_ok(&["help", command], 0)));
        for bad in [&[command][..], &[command, "--bogus"]] {
            let o = run(bad);
            assert_eq!(o.status.code(), Some(2), "{bad:?}");
            let usage = format!("Usage: akledger {command}");
            assert!(stderr(&o).contains(&usage), "{bad:?}: {}", stderr(&o));
        }
    }
}

#[test]
fn read_commands_json_parses() {
    let tmp = demo("20");
    let dir = tmp.path().join("data");
    let d = p(&dir);
    let all = json(&run_ok(&["exchanges", "--dir", d, "--json"], 0));
    let exchanges = all["exchanges"].as_array().unwrap();
    assert_eq!(exchanges.len(), 20);
    assert!(all["not_folded"].is_array());
    let first = &exchanges[0];
    let sidecar = first["sidecar_id"].as_str().unwrap();
    let xid = first["exchange_id"].as_str().unwrap();
    let one = json(&run_ok(
        &["exchange", "--dir", d, "--sidecar", sidecar, xid, "--json"],
        0,
    ));
    assert_eq!(
        (&one["type"], &one["format"]),
        (&"akledger.exchange".into(), &1.into())
    );
    let mut one = one;
    one.as_object_mut()
        .unwrap()
        .retain(|k, _| k != "type" && k != "format");
    assert_eq!(&one, first);
    let request = first["request_event_id"].as_str().unwrap();
    let shown = json(&run_ok(&["show", request, "--dir", d], 0));
    assert_eq!(shown["event_id"], first["request_event_id"]);
    let failed = json(&run_ok(
        &["exchanges", "--dir", d, "--status", "failed", "--json"],
        0,
    ));
    assert!(failed["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["status"] == "failed"));
    let check = json(&run_ok(&["check", "--dir", d, "--json"], 0));
    assert!(check["entries"].as_u64().unwrap() > 0);
}

/// Audit report pieces that must survive a round trip.
fn state_of(report: &Value) -> (Value, Value) {
    (report["heads"].clone(), report["exchanges"].clone())
}

#[test]
fn export_import_audit_round_trip() {
    let tmp = demo("40");
    let dir = tmp.path().join("data");
    let keyring = dir.join("keyring.json");
    for format in ["jsonl", "cbor"] {
        let log = tmp.path().join(format!("all.{format}"));
        run_ok(
            &[
                "export",
                "--dir",
                p(&dir),
                "--format",
                format,
                "--out",
                p(&log),
            ],
            0,
        );
        let copy = tmp.path().join(format!("copy-{format}"));
        let imported = json(&run_ok(
            &["import", p(&log), "--dir", p(&copy), "--json"],
            0,
        ));
        assert_eq!(imported["rejected"], 0);
        let original = json(&run_ok(&["heads", "--dir", p(&dir), "--json"], 0));
        let copied = json(&run_ok(&["heads", "--dir", p(&copy), "--json"], 0));
        assert_eq!(original, copied);

        let report = json(&run_ok(
            &["audit", p(&log), "--keyring", p(&keyring), "--json"],
            0,
        ));
        assert_eq!(report["summary"]["rejected"], 0);
        assert_eq!(report["summary"]["pending"], 0);
        assert_eq!(report["heads"], original["heads"]);
        let live = json(&run_ok(&["exchanges", "--dir", p(&dir), "--json"], 0));
        assert_eq!(state_of(&report).1, live["exchanges"]);
        assert_eq!(report["not_folded"], live["not_folded"]);
    }
}

#[test]
fn export_since_leaves_out_what_the_basis_covers() {
    let tmp = demo("10");
    let dir = tmp.path().join("data");
    let d = p(&dir);
    let all = stdout(&run_ok(&["export", "--dir", d], 0));
    let heads = json(&run_ok(&["heads", "--dir", d, "--json"], 0));
    let head = heads["heads"][0].as_str().unwrap();
    let since = stdout(&run_ok(&["export", "--dir", d, "--since", head], 0));
    assert!(since.lines().count() < all.lines().count());
    assert!(!since.contains(&format!("\"event_id\":\"{head}\"")));
    let none = stdout(&run_ok(
        &[
            "export",
            "--dir",
            d,
            "--since",
            &heads["heads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(","),
        ],
        0,
    ));
    assert!(none.is_empty());
}

#[test]
fn audit_reports_forgeries_and_tampering_at_their_indexes() {
    let w = sidecar_workload(
        11,
        SidecarSpec {
            exchanges: 30,
            agents: 4,
            forgeries: true,
            skills: false,
        },
    )
    .unwrap();
    assert!(!w.forgeries.is_empty());
    let mut lines: Vec<Vec<u8>> = w.events.iter().map(|e| e.bytes().to_vec()).collect();
    // (index, code, has an id); forgeries come after everything they could depend on.
    let mut expected: Vec<(usize, &'static str, bool)> = Vec::new();
    for f in &w.forgeries {
        expected.push((lines.len(), f.expected.as_str(), true));
        lines.push(f.bytes.clone());
    }
    // Tampered copies of valid events (the originals stay, so nothing goes pending):
    // a changed kind breaks the id, a changed signature breaks the proof, a broken first
    // byte is not JSON at all.
    let victim = String::from_utf8(w.events[5].bytes().to_vec()).unwrap();
    let kind = victim.replacen("\"kind\":\"ak.", "\"kind\":\"ak.x", 1);
    assert_ne!(kind, victim);
    expected.push((lines.len(), "event_id_digest_mismatch", false));
    lines.push(kind.into_bytes());
    let jws_at = victim.find("\"jws\":\"").unwrap() + 60;
    let mut sig = victim.clone().into_bytes();
    sig[jws_at] = if sig[jws_at] == b'A' { b'B' } else { b'A' };
    expected.push((lines.len(), "signature_invalid", true));
    lines.push(sig);
    let mut garbage = victim.into_bytes();
    garbage[0] = b'x';
    expected.push((lines.len(), "schema_violation", false));
    lines.push(garbage);

    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("forged.jsonl");
    let mut text = lines.join(&b'\n');
    text.push(b'\n');
    std::fs::write(&log, text).unwrap();
    let keyring = tmp.path().join("keyring.json");
    std::fs::write(&keyring, w.keyring.to_json_bytes()).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&keyring, std::fs::Permissions::from_mode(0o600)).unwrap();

    let out = run_ok(&["audit", p(&log), "--keyring", p(&keyring), "--json"], 1);
    let report = json(&out);
    let rejected = report["rejected"].as_array().unwrap();
    let got: Vec<(usize, String, bool)> = rejected
        .iter()
        .map(|r| {
            (
                r["index"].as_u64().unwrap() as usize,
                r["code"].as_str().unwrap().to_string(),
                !r["event_id"].is_null(),
            )
        })
        .collect();
    let want: Vec<(usize, String, bool)> = expected
        .iter()
        .map(|(i, c, id)| {
            // A forged digest carries no trustworthy id.
            let id = *id && *c != Code::EventIdDigestMismatch.as_str();
            (*i, c.to_string(), id)
        })
        .collect();
    assert_eq!(got, want);
    let s = &report["summary"];
    assert_eq!(s["events"], lines.len());
    assert_eq!(s["admitted"], w.events.len());
    assert_eq!(s["rejected"], expected.len());
    assert_eq!(s["pending"], 0);
    assert_eq!(s["duplicates"], 0);
    for key in ["pending", "heads", "exchanges", "not_folded"] {
        assert!(report[key].is_array(), "{key}");
    }
    assert_eq!(report["exchanges"].as_array().unwrap().len(), 30);

    // The human report names each rejection by line (index + 1: one event per line).
    let human = run_ok(&["audit", p(&log), "--keyring", p(&keyring)], 1);
    for (i, code, _) in &want {
        assert!(
            stdout(&human).contains(&format!("line {} (byte ", i + 1))
                && stdout(&human).contains(code),
            "{}",
            stdout(&human)
        );
    }
}

#[test]
fn audit_maps_rejections_on_release_and_pending_to_the_log() {
    let w = sidecar_workload(
        12,
        SidecarSpec {
            exchanges: 12,
            agents: 3,
            forgeries: true,
            skills: false,
        },
    )
    .unwrap();
    // An agent-authored control arrives first: pending (its parents are missing), then
    // rejected when they arrive — reported at its own index, 0.
    let forged = w
        .forgeries
        .iter()
        .find(|f| f.expected == Code::SidecarExchangeControlForbidden)
        .unwrap();
    let mut lines: Vec<Vec<u8>> = vec![forged.bytes.clone()];
    // The first parent of the last event with refs never arrives: that event stays
    // pending (forgeries are in exchange 9, this is in exchange 11).
    let last = w
        .events
        .iter()
        .rev()
        .map(|e| akledger::Event::parse(e.bytes()).unwrap())
        .find(|e| !e.envelope().causal_refs().is_empty())
        .unwrap();
    let parent = last.envelope().causal_refs()[0];
    lines.extend(
        w.events
            .iter()
            .filter(|e| e.id() != parent)
            .map(|e| e.bytes().to_vec()),
    );
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("order.cbor");
    let mut cbor = Vec::new();
    for line in &lines {
        akledger::log_format::write_item(&mut cbor, akledger::log_format::LogFormat::CborSeq, line)
            .unwrap();
    }
    std::fs::write(&log, &cbor).unwrap();
    let report = json(&run_ok(&["audit", p(&log), "--json"], 1));
    assert_eq!(report["rejected"][0]["index"], 0);
    assert_eq!(
        report["rejected"][0]["code"],
        "sidecar_exchange_control_forbidden"
    );
    assert_eq!(report["rejected"][0]["event_id"], forged_id(&forged.bytes));
    assert_eq!(report["summary"]["rejected"], 1);
    let pending = report["pending"].as_array().unwrap();
    let mine = pending
        .iter()
        .find(|x| x["event_id"] == last.id().to_string())
        .expect("the last event is pending");
    assert!(mine["missing"]
        .as_array()
        .unwrap()
        .contains(&Value::from(parent.to_string())));
    let s = &report["summary"];
    let total = s["admitted"].as_u64().unwrap()
        + s["duplicates"].as_u64().unwrap()
        + s["pending"].as_u64().unwrap()
        + s["rejected"].as_u64().unwrap();
    assert_eq!(total, lines.len() as u64);
}

fn forged_id(bytes: &[u8]) -> String {
    akledger::Event::parse(bytes).unwrap().id().to_string()
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.jsonl");
    let o = run_ok(&["audit", p(&missing)], 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("nope.jsonl"));
    let junk = tmp.path().join("junk.bin");
    std::fs::write(&junk, b"\x01\x02\x03").unwrap();
    for cmd in ["audit", "verify", "import"] {
        let mut args = vec![cmd, p(&junk)];
        let dir = tmp.path().join("d");
        if cmd == "import" {
            args.extend(["--dir", p(&dir)]);
        }
        let o = run_ok(&args, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("junk.bin") && err.contains("schema_violation"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        // A failed import into a new directory leaves nothing behind.
        assert!(!dir.exists(), "{cmd} left {}", dir.display());
    }
    let bad_keyring = tmp.path().join("k.json");
    std::fs::write(&bad_keyring, b"{\"principals\":{},\"extra\":1}").unwrap();
    let o = run_ok(&["audit", p(&junk), "--keyring", p(&bad_keyring)], 2);
    assert!(stderr(&o).contains("k.json"), "{}", stderr(&o));
    let o = run_ok(&["heads", "--dir", p(&tmp.path().join("none"))], 2);
    assert!(stderr(&o).contains("none"));
    let o = run_ok(
        &[
            "show",
            "ak:event:nope",
            "--dir",
            p(&tmp.path().join("none")),
        ],
        2,
    );
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[test]
fn append_prints_one_outcome_per_event() {
    let tmp = demo("5");
    let dir = tmp.path().join("data");
    let exported = run_ok(&["export", "--dir", p(&dir)], 0).stdout;
    let copy = tmp.path().join("copy");
    run_ok(&["init", "--dir", p(&copy)], 0);
    let mut child = bin()
        .args(["append", "-", "--dir", p(&copy), "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&exported).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        exported
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    );
    assert!(lines.iter().all(|l| l["outcome"] == "admitted"));
    assert_eq!(lines[3]["index"], 3);
}

#[test]
fn gen_then_audit_is_clean_with_the_right_counts() {
    let tmp = tempfile::tempdir().unwrap();
    for format in ["jsonl", "cbor"] {
        let log = tmp.path().join(format!("gen.{format}"));
        let keyring = tmp.path().join(format!("gen-{format}.keyring.json"));
        run_ok(
            &[
                "gen",
                "--events",
                "3000",
                "--writers",
                "8",
                "--exchanges",
                "25",
                "--seed",
                "4",
                "--format",
                format,
                "--out",
                p(&log),
                "--keyring-out",
                p(&keyring),
            ],
            0,
        );
        let report = json(&run_ok(
            &["audit", p(&log), "--keyring", p(&keyring), "--json"],
            0,
        ));
        let sidecar_events = sidecar_workload(
            4,
            SidecarSpec {
                exchanges: 25,
                agents: 5,
                forgeries: false,
                skills: false,
            },
        )
        .unwrap()
        .events
        .len();
        let total = 3001 + sidecar_events;
        let s = &report["summary"];
        assert_eq!(s["events"], total);
        assert_eq!(s["admitted"], total);
        assert_eq!(s["duplicates"], 0);
        assert_eq!(s["pending"], 0);
        assert_eq!(s["rejected"], 0);
        assert_eq!(report["rejected"], serde_json::json!([]));
        assert_eq!(report["exchanges"].as_array().unwrap().len(), 25);
        assert!(!report["heads"].as_array().unwrap().is_empty());
        // Without the keyring nothing decrypts, so nothing folds.
        let blind = json(&run_ok(&["audit", p(&log), "--json"], 0));
        assert_eq!(blind["exchanges"], serde_json::json!([]));
        assert!(blind["not_folded"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["reason"] == "not_decryptable"));
    }
    // Same seed, same bytes.
    let again = run_ok(
        &[
            "gen",
            "--events",
            "3000",
            "--writers",
            "8",
            "--exchanges",
            "25",
            "--seed",
            "4",
        ],
        0,
    );
    assert_eq!(
        again.stdout,
        std::fs::read(tmp.path().join("gen.jsonl")).unwrap()
    );
}

#[test]
fn authoring_an_exchange_to_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| tmp.path().join(name);
    let dir = t("data");
    let d = p(&dir);
    run_ok(&["init", "--dir", d], 0);
    let boss = t("boss.json");
    let bob = t("bob.json");
    let boss_ids = json(&run_ok(&["keygen", "--out", p(&boss), "--json"], 0));
    let bob_ids = json(&run_ok(&["keygen", "--out", p(&bob), "--json"], 0));
    let key_text = std::fs::read_to_string(&boss).unwrap();
    let secret: Value = serde_json::from_str(&key_text).unwrap();
    let secret = secret["ed25519_secret_key"].as_str().unwrap();
    let shown = serde_json::to_string(&boss_ids).unwrap();
    assert!(!shown.contains(secret), "keygen must not print the secret");
    assert!(boss_ids["did_key"]
        .as_str()
        .unwrap()
        .starts_with("did:key:z6Mk"));
    let bob_id = bob_ids["did_core_id"].as_str().unwrap();
    assert!(bob_id.starts_with("ak:did_core:key:z6Mk"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&boss).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // keygen refuses to overwrite.
    run_ok(&["keygen", "--out", p(&boss)], 2);

    let (realm, sidecar) = super::support::realm_and_sidecar(&dir, &boss);
    assert_eq!(realm["outcome"], "admitted");
    let sidecar_id = sidecar["sidecar_id"].as_str().unwrap();
    // The controller's private strand was created and attached with the sidecar.
    let strand_id = sidecar["strand_id"].as_str().unwrap();
    assert!(strand_id.starts_with("ak:strand:"));
    assert_eq!(sidecar["outcome"], "admitted");
    let x = "exchange-from-the-cli-0001";
    let request = run_ok(
        &[
            "exchange",
            "request",
            "--key",
            p(&boss),
            "--dir",
            d,
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x,
            // A did:key (as keygen prints it) names the same agent as its principal.
            "--agent",
            bob_ids["did_key"].as_str().unwrap(),
            "--body",
            "please summarize",
        ],
        0,
    );
    assert!(stdout(&request).starts_with("ak:event:"));
    let shown = json(&run_ok(
        &["exchange", "--dir", d, "--sidecar", sidecar_id, x, "--json"],
        0,
    ));
    assert_eq!(shown["status"], "delivered");
    assert_eq!(shown["source_context_ref"]["strand_id"], strand_id);
    let answer = json(&run_ok(
        &[
            "exchange",
            "respond",
            "--key",
            p(&bob),
            "--dir",
            d,
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x,
            "--completes",
            "--body",
            "here it is",
            "--json",
        ],
        0,
    ));
    assert_eq!(answer["outcome"], "admitted");
    // Bob may not close it: the ledger refuses an agent's control.
    let close = |key: &Path, code: i32| {
        let args = [
            "exchange",
            "control",
            "--key",
            p(key),
            "--dir",
            d,
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x,
            "close",
        ];
        run_ok(&args, code)
    };
    let forbidden = close(&bob, 1);
    assert!(stderr(&forbidden).contains("sidecar_exchange_control_forbidden"));
    close(&boss, 0);
    let done = json(&run_ok(
        &["exchange", "--dir", d, "--sidecar", sidecar_id, x, "--json"],
        0,
    ));
    assert_eq!(done["status"], "complete");
    assert_eq!(
        done["user_facing_response_event_ids"],
        serde_json::json!([answer["event_id"]])
    );
    assert!(done["terminal_event_id"].is_string());
    run_ok(&["check", "--dir", d], 0);

    // keys add: a principal and a second sidecar epoch; the keyring stays readable.
    run_ok(
        &[
            "keys",
            "add",
            "--dir",
            d,
            "--principal",
            "ak:did_core:web:example.com",
            "--did-key",
            bob_ids["did_key"].as_str().unwrap(),
        ],
        0,
    );
    run_ok(
        &[
            "keys",
            "add",
            "--dir",
            d,
            "--sidecar",
            sidecar_id,
            "--epoch",
            "2",
            "--generate",
        ],
        0,
    );
    run_ok(&["keys", "add", "--dir", d, "--sidecar", sidecar_id], 2);
    let ring: Value =
        serde_json::from_slice(&std::fs::read(dir.join("keyring.json")).unwrap()).unwrap();
    assert_eq!(
        ring["sidecar_keys"][sidecar_id].as_object().unwrap().len(),
        2
    );
    assert!(ring["principals"]["ak:did_core:web:example.com"].is_array());
    run_ok(&["heads", "--dir", d], 0);
}

/// `strand create`, `sidecar create --strand`, `sidecar attach`: requests name the current
/// context; reassigning to the current coordinator is a usage error with a plain message.
#[test]
fn strands_attach_and_requests_follow_the_current_context() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| tmp.path().join(name);
    let dir = t("data");
    let d = p(&dir);
    let (boss, bob, carol) = (t("boss.json"), t("bob.json"), t("carol.json"));
    run_ok(&["keygen", "--out", p(&boss)], 0);
    let bob_id = json(&run_ok(&["keygen", "--out", p(&bob), "--json"], 0))["did_core_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let carol_id = json(&run_ok(&["keygen", "--out", p(&carol), "--json"], 0))["did_core_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let author = |args: &[&str], key: &Path, code: i32| {
        // Options right after the subcommand, before any action of `exchange control`.
        let mut all = args[..2].to_vec();
        all.extend(["--key", p(key), "--dir", d, "--json"]);
        all.extend(&args[2..]);
        let o = run_ok(&all, code);
        (code == 0).then(|| json(&o))
    };
    run_ok(&["init", "--dir", d], 0);
    let realm = author(&["realm", "create"], &boss, 0).unwrap();
    let realm_id = realm["realm_id"].as_str().unwrap();
    let first = author(&["strand", "create", "--realm", realm_id], &boss, 0).unwrap();
    let first_strand = first["strand_id"].as_str().unwrap();
    let sidecar = author(
        &[
            "sidecar",
            "create",
            "--realm",
            realm_id,
            "--strand",
            first_strand,
        ],
        &boss,
        0,
    )
    .unwrap();
    assert_eq!(sidecar["strand_id"], first_strand);
    let sidecar_id = sidecar["sidecar_id"].as_str().unwrap();
    // A second sidecar of the same actor is refused, and nothing else is appended.
    let events_before = run_ok(&["export", "--dir", d], 0).stdout.len();
    let twice = run_ok(
        &[
            "sidecar",
            "create",
            "--realm",
            realm_id,
            "--key",
            p(&boss),
            "--dir",
            d,
        ],
        1,
    );
    assert!(stderr(&twice).contains("sidecar_singleton_conflict"));
    assert_eq!(
        run_ok(&["export", "--dir", d], 0).stdout.len(),
        events_before
    );
    let request = |x: &str| {
        author(
            &[
                "exchange",
                "request",
                "--sidecar",
                sidecar_id,
                "--exchange-id",
                x,
                "--agent",
                &bob_id,
                "--agent",
                &carol_id,
                "--coordinator",
                &bob_id,
                "--body",
                "go",
            ],
            &boss,
            0,
        )
        .unwrap()
    };
    let show = |x: &str| {
        json(&run_ok(
            &["exchange", "--dir", d, "--sidecar", sidecar_id, x, "--json"],
            0,
        ))
    };
    let x1 = "exchange-on-the-first-strand";
    request(x1);
    assert_eq!(show(x1)["source_context_ref"]["strand_id"], first_strand);

    let second = author(&["strand", "create", "--realm", realm_id], &boss, 0).unwrap();
    let second_strand = second["strand_id"].as_str().unwrap();
    // Only the controller attaches its sidecar.
    let refused = run_ok(
        &[
            "sidecar",
            "attach",
            "--sidecar",
            sidecar_id,
            "--strand",
            second_strand,
            "--key",
            p(&bob),
            "--dir",
            d,
        ],
        1,
    );
    assert!(stderr(&refused).contains("sidecar_exchange_control_forbidden"));
    let attached = author(
        &[
            "sidecar",
            "attach",
            "--sidecar",
            sidecar_id,
            "--strand",
            second_strand,
        ],
        &boss,
        0,
    )
    .unwrap();
    assert_eq!(attached["outcome"], "admitted");
    let x2 = "exchange-on-the-second-strand";
    request(x2);
    assert_eq!(show(x2)["source_context_ref"]["strand_id"], second_strand);

    // Reassigning to the coordinator in office: a usage error that says so.
    let same = run_ok(
        &[
            "exchange",
            "control",
            "--key",
            p(&boss),
            "--dir",
            d,
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x1,
            "reassign",
            "--to",
            &bob_id,
        ],
        2,
    );
    assert!(
        stderr(&same).contains(&format!("{bob_id} is already the coordinator")),
        "{}",
        stderr(&same)
    );
    author(
        &[
            "exchange",
            "control",
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x1,
            "reassign",
            "--to",
            &carol_id,
        ],
        &boss,
        0,
    );
    assert_eq!(show(x1)["coordinator_agent_id"], carol_id.as_str());
    // A control of the first exchange still names the first strand: its basis covers only
    // the first attach.
    author(
        &[
            "exchange",
            "control",
            "--sidecar",
            sidecar_id,
            "--exchange-id",
            x1,
            "cancel",
        ],
        &boss,
        0,
    );
    assert_eq!(show(x1)["status"], "failed");
    run_ok(&["check", "--dir", d], 0);
}

/// Only the creating commands make a ledger, saying so; every other command answers a
/// directory that holds none with `no ledger at DIR` and makes nothing, and a creating
/// command that fails before storing anything removes what it made.
#[test]
fn no_ledger_is_made_by_a_typo() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("k.json");
    run_ok(&["keygen", "--out", p(&key)], 0);
    let log = tmp.path().join("one.jsonl");
    std::fs::write(&log, b"").unwrap();
    let typo = tmp.path().join("typo");
    let t = p(&typo);
    let id = "ak:event:AvW3IN7cfBmrh_JhLIAq0mZdraiN_yt58SFUKwRj3vhN";
    for args in [
        vec!["append", p(&log), "--dir", t],
        vec!["drop-pending", id, "--dir", t],
        vec!["realm", "create", "--key", p(&key), "--dir", t],
        vec!["serve", "--stdio", "--dir", t],
        vec!["checkpoint", "--key", p(&key), "--dir", t],
        vec!["heads", "--dir", t],
        vec!["log", "--dir", t],
        vec!["export", "--dir", t],
        vec![
            "keys",
            "add",
            "--sidecar",
            "ak:sidecar:AvW3IN7cfBmrh_JhLIAq0mZdraiN_yt58SFUKwRj3vhN",
            "--epoch",
            "1",
            "--generate",
            "--dir",
            t,
        ],
    ] {
        let o = run_ok(&args, 2);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("no ledger at {t}")),
            "{args:?}: {err}"
        );
        assert!(!typo.exists(), "{args:?} made {t}");
    }
    // A directory that is not a ledger, even one that exists.
    let o = run_ok(&["heads", "--dir", "/etc"], 2);
    assert!(stderr(&o).contains("no ledger at /etc"), "{}", stderr(&o));
    // Creating commands that fail store nothing and leave nothing: an import of a missing
    // file, a sync with nobody listening.
    let missing = tmp.path().join("missing.jsonl");
    run_ok(&["import", p(&missing), "--dir", t], 2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = closed.local_addr().unwrap().to_string();
    drop(closed);
    run_ok(&["sync", "--peer", &peer, "--dir", t], 2);
    assert!(!typo.exists());
    // An existing empty directory keeps nothing of a failed import, and is still there.
    std::fs::create_dir(&typo).unwrap();
    run_ok(&["import", p(&missing), "--dir", t], 2);
    assert_eq!(std::fs::read_dir(&typo).unwrap().count(), 0);
    // `init` makes one and says so; a second `init` finds it.
    let o = run_ok(&["init", "--dir", t], 0);
    assert!(
        stderr(&o).contains(&format!("created a new ledger at {t}")),
        "{}",
        stderr(&o)
    );
    let again = run_ok(&["init", "--dir", t], 0);
    assert!(stderr(&again).is_empty(), "{}", stderr(&again));
    run_ok(&["append", p(&log), "--dir", t], 0);
}

/// Ids are accepted abbreviated wherever an id is, as git resolves abbreviated names: a
/// unique prefix (with or without its `ak:<kind>:` tag, or a report's label ending in
/// `…`) stands for the id; an ambiguous one is refused with its candidates listed; too
/// short a one names the rule.
#[test]
fn unique_prefixes_stand_for_ids_and_ambiguous_ones_list_their_candidates() {
    // About 1,100 events: some share their first 4 characters (2 + 12 bits of digest).
    let tmp = demo("150");
    let dir = tmp.path().join("data");
    let d = p(&dir);
    let log = stdout(&run_ok(&["log", "--dir", d], 0));
    let ids: Vec<&str> = log.lines().filter_map(|l| l.split(' ').next()).collect();
    let tail = |id: &str| id.strip_prefix("ak:event:").unwrap().to_string();
    // The shortest unique abbreviation of the first id, and an ambiguous 4-character one.
    let first = ids[0];
    let unique = (4..44)
        .map(|n| tail(first)[..n].to_string())
        .find(|pre| {
            ids.iter()
                .filter(|i| tail(i).starts_with(pre.as_str()))
                .count()
                == 1
        })
        .unwrap();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for id in &ids {
        *counts.entry(tail(id)[..4].to_string()).or_default() += 1;
    }
    let (shared, n) = counts.into_iter().max_by_key(|(_, n)| *n).unwrap();
    assert!(n >= 2, "{} ids share no 4-character prefix", ids.len());
    let shown = |arg: &str| json(&run_ok(&["show", "--dir", d, arg], 0))["id"].clone();
    let full = json(&run_ok(&["show", "--dir", d, first], 0))["id"].clone();
    for arg in [
        unique.clone(),
        format!("ak:event:{unique}"),
        format!("{}…", &tail(first)[..12]),
    ] {
        assert_eq!(shown(&arg), full, "{arg}");
    }
    // Any command that takes an id: covers, heads-of (answered from the graph file), and
    // a sidecar id.
    run_ok(&["covers", "--dir", d, "--basis", &unique, &unique], 0);
    let heads = stdout(&run_ok(&["heads-of", "--dir", d, &unique], 0));
    assert!(heads.contains(first), "{heads}");
    let ambiguous = run_ok(&["show", "--dir", d, &shared], 2);
    let err = stderr(&ambiguous);
    assert!(err.contains("is ambiguous"), "{err}");
    let listed = err
        .lines()
        .filter(|l| l.trim_start().starts_with("ak:event:"))
        .count();
    assert_eq!(listed, n.min(10), "{err}");
    let short = run_ok(&["show", "--dir", d, &tail(first)[..3]], 2);
    assert!(
        stderr(&short).contains("at least 4 characters"),
        "{}",
        stderr(&short)
    );
    let none = run_ok(&["show", "--dir", d, "ak:event:ZZZZZZ"], 2);
    assert!(stderr(&none).contains("no event here"), "{}", stderr(&none));
}

/// Help that teaches: `--help` groups the commands (every one in a group), argument
/// errors say in plain words what is wrong and the rule, and a `log --kind` that matches
/// nothing names the kinds the ledger holds.
#[test]
fn help_groups_commands_and_argument_errors_speak_plainly() {
    let help = stdout(&run_ok(&["--help"], 0));
    for group in [
        "Start:",
        "Read a ledger:",
        "Write to a ledger:",
        "Audit and verify:",
        "Connect ledgers:",
        "Tools:",
    ] {
        assert!(help.contains(group), "{group} in {help}");
    }
    assert!(!help.contains("Other:"), "a command in no group: {help}");
    let tmp = demo("3");
    let dir = tmp.path().join("data");
    let d = p(&dir);
    let bad = run_ok(&["exchange", "nosuch", "--dir", d], 2);
    let said = stderr(&bad);
    assert!(
        said.contains("\"nosuch\" is not an exchange id: an exchange id is 22 to 128 characters"),
        "{said}"
    );
    assert!(!said.contains("schema_violation"), "{said}");
    let none = run_ok(&["log", "--kind", "ak.no.such", "--dir", d], 1);
    assert!(stdout(&none).is_empty());
    let said = stderr(&none);
    assert!(
        said.contains("no admitted event is of kind \"ak.no.such\"")
            && said.contains("ak.realm.create ("),
        "{said}"
    );
    // The example in `log --help` names a kind that exists.
    let example = stdout(&run_ok(&["log", "--help"], 0));
    let kind = example
        .split("--kind ")
        .nth(2)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    run_ok(&["log", "--kind", kind, "--dir", d, "--limit", "1"], 0);
}

/// The commands under `akledger PATH…`, read off its help.
fn subcommands(path: &[String]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help".into());
    let help = stdout(&run_ok(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        0,
    ));
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.ends_with(':') && !line.starts_with(' ') {
            // "Commands:" for a subcommand; the top level groups its commands.
            inside = !line.starts_with("Options")
                && !line.starts_with("Arguments")
                && !line.starts_with("Exit codes")
                && !line.starts_with("Usage");
            continue;
        }
        if inside {
            if let Some(name) = line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            {
                if name != "help" && !line.starts_with("   ") {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Every `Example:` line in every command's help parses: its flags and arguments are
/// accepted (checked by clap up to `--help`, so no file it names need exist).
#[test]
fn every_help_example_parses() {
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut examples = 0;
    while let Some(path) = queue.pop() {
        for sub in subcommands(&path) {
            let mut next = path.clone();
            next.push(sub);
            let mut args = next.clone();
            args.push("--help".into());
            let help = stdout(&run_ok(
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                0,
            ));
            for example in help
                .lines()
                .filter_map(|l| l.trim().strip_prefix("Example: akledger "))
            {
                // The command itself, before any pipe, redirection or second command.
                let command = example
                    .split(['|', '>', ';', '#'])
                    .next()
                    .unwrap()
                    .split("&&")
                    .next()
                    .unwrap();
                let mut words = shell_words(command);
                words.push("--help".into());
                let o = run(&words.iter().map(String::as_str).collect::<Vec<_>>());
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "akledger {example}: {}",
                    stderr(&o)
                );
                examples += 1;
            }
            queue.push(next);
        }
    }
    assert!(examples >= 30, "only {examples} examples found");
}

/// Words as a shell splits them: white space separates, double or single quotes group.
fn shell_words(text: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}
