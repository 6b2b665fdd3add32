//! What an auditor sees, run for real on files: exit codes a script can trust (a closed
//! pipe keeps the verdict, `covers` answers with its exit code), pending events explained
//! down to their root cause, positions as `line N (byte B)`, and the hint when nothing
//! decrypts.

use crate::support::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A generated log (realm notes + one sidecar) and its keyring.
fn generated(dir: &Path) -> (String, Vec<String>) {
    let log = dir.join("g.jsonl");
    let keyring = dir.join("g.keyring.json");
    run_ok(
        &[
            "gen",
            "--events",
            "40",
            "--writers",
            "2",
            "--exchanges",
            "3",
            "--out",
            p(&log),
            "--keyring-out",
            p(&keyring),
        ],
        0,
    );
    let lines = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (p(&keyring).to_string(), lines)
}

/// The generated log imported into a ledger at `dir/d`: (keyring, log lines, ledger dir).
fn imported(dir: &Path) -> (String, Vec<String>, std::path::PathBuf) {
    let (keyring, lines) = generated(dir);
    let ledger = dir.join("d");
    let log = dir.join("g.jsonl");
    run_ok(
        &[
            "import",
            p(&log),
            "--dir",
            p(&ledger),
            "--keyring",
            &keyring,
        ],
        0,
    );
    (keyring, lines, ledger)
}

/// The `event_id` a log line names.
fn id_of(line: &str) -> String {
    serde_json::from_str::<Value>(line).unwrap()["event_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Runs akledger, reads one line of its stdout and closes the pipe; its first line and
/// how it ended.
fn first_line_then_close(args: &[&str]) -> (String, Output) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    (first, child.wait_with_output().unwrap())
}

#[test]
fn a_closed_pipe_exits_quietly_without_a_verdict() {
    // export has nothing to judge: a reader that stops early is not an error.
    let tmp = tempfile::tempdir().unwrap();
    let (_, _, dir) = imported(tmp.path());
    let (first, out) = first_line_then_close(&["export", "--dir", p(&dir)]);
    assert!(first.starts_with('{'));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn a_closed_pipe_keeps_the_verdict() {
    // Thousands of rejected lines: far more output than a pipe buffers, so the reader
    // closing after one line really breaks the pipe.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("bad.jsonl");
    write_lines(&log, &vec!["{\"not\":\"an event\"}".to_string(); 5000]);
    for extra in [None, Some("--json")] {
        let mut args = vec!["audit", p(&log)];
        args.extend(extra);
        let (first, out) = first_line_then_close(&args);
        assert!(!first.is_empty());
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
    // verify streams its verdict: the same holds.
    let mut child = bin()
        .arg("verify")
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

#[test]
fn help_documents_every_exit_code() {
    let help = text(&run_ok(&["--help"], 0).stdout);
    for needle in ["Exit codes", "  0 ", "  1 ", "  2 ", "130", "not covered"] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
    let covers = text(&run_ok(&["covers", "--help"], 0).stdout);
    assert!(covers.contains("1 when not covered"), "{covers}");
}

#[test]
fn covers_answers_with_its_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, lines, dir) = imported(tmp.path());
    let (first, last) = (id_of(&lines[0]), id_of(&lines[40]));
    let d = p(&dir);
    run_ok(&["covers", "--dir", d, "--basis", &last, &first], 0);
    let o = run_ok(&["covers", "--dir", d, "--basis", &first, &last], 1);
    assert_eq!(text(&o.stdout).trim(), "not covered");
}

/// The log with line 6 (index 5) tampered: its id no longer matches, so everything that
/// depends on it waits for the id it claims.
fn tampered(dir: &Path) -> (std::path::PathBuf, String, String, u64) {
    let (keyring, mut lines) = generated(dir);
    let claimed = id_of(&lines[5]);
    let byte: usize = lines[..5].iter().map(|l| l.len() + 1).sum();
    lines[5] = lines[5].replacen("\"kind\":\"ak.", "\"kind\":\"ak.x", 1);
    let log = dir.join("tampered.jsonl");
    write_lines(&log, &lines);
    (log, keyring, claimed, byte as u64)
}

#[test]
fn audit_explains_pending_down_to_the_rejected_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, keyring, claimed, byte) = tampered(tmp.path());
    let report: Value = serde_json::from_slice(
        &run_ok(&["audit", p(&log), "--keyring", &keyring, "--json"], 1).stdout,
    )
    .unwrap();
    let rejected = &report["rejected"][0];
    assert_eq!(rejected["index"], 5);
    assert_eq!(rejected["line"], 6);
    assert_eq!(rejected["byte"], byte);
    assert_eq!(rejected["event_id"], Value::Null);
    assert_eq!(rejected["claimed_event_id"], claimed.as_str());
    assert_eq!(rejected["code"], "event_id_digest_mismatch");
    let pending = report["pending"].as_array().unwrap();
    assert!(!pending.is_empty());
    // Every pending event ultimately waits for the tampered one, even those whose direct
    // dependencies are pending themselves.
    for entry in pending {
        assert_eq!(
            entry["root_missing"],
            serde_json::json!([claimed]),
            "{entry}"
        );
    }
    assert!(pending.iter().any(|e| !e["missing"]
        .as_array()
        .unwrap()
        .contains(&Value::from(claimed.as_str()))));

    let human = text(&run_ok(&["audit", p(&log), "--keyring", &keyring], 1).stdout);
    let want = format!(
        "waits for {claimed}, which was rejected at line 6 (byte {byte}): event_id_digest_mismatch"
    );
    assert!(human.contains(&want), "{want}\nnot in:\n{human}");
    assert!(
        human.contains(&format!("line 6 (byte {byte}): (claims {claimed})")),
        "{human}"
    );
}

#[test]
fn a_ledger_explains_its_pending_events() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, keyring, claimed, _) = tampered(tmp.path());
    let dir = tmp.path().join("d");
    let d = p(&dir);
    run_ok(&["init", "--dir", d], 0);
    let appended = text(&run_ok(&["append", p(&log), "--dir", d, "--keyring", &keyring], 1).stdout);
    // append names the missing ids, and positions read `line N (byte B)`.
    assert!(
        appended.contains(&format!("pending (missing {claimed}")),
        "{appended}"
    );
    assert!(appended.starts_with("line 1 (byte 0): "), "{appended}");

    let listed: Value =
        serde_json::from_slice(&run_ok(&["pending", "--dir", d, "--json"], 0).stdout).unwrap();
    assert_eq!(listed["type"], "akledger.pending");
    let entries = listed["pending"].as_array().unwrap().clone();
    assert!(!entries.is_empty());
    assert!(entries
        .iter()
        .all(|e| e["root_missing"] == serde_json::json!([claimed])));
    // One whose direct dependency is itself pending: the root cause is transitive.
    let deep = entries
        .iter()
        .find(|e| e["missing"] != serde_json::json!([claimed]))
        .expect("a pending event behind another pending one");
    let id = deep["event_id"].as_str().unwrap();
    let why = text(&run_ok(&["pending", "--dir", d, "--why", id], 0).stdout);
    assert!(why.contains("(pending itself)"), "{why}");
    assert!(
        why.contains(&format!("waits for {claimed}, which was never admitted")),
        "{why}"
    );
    // Not pending: a usage error naming why.
    let first = id_of(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    );
    let o = run_ok(&["pending", "--dir", d, "--why", &first], 2);
    assert!(text(&o.stderr).contains("not pending (admitted)"));
}

#[test]
fn crlf_and_blank_lines_get_their_own_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, lines) = generated(tmp.path());
    let log = tmp.path().join("crlf.jsonl");
    let bytes = format!("{}\r\n{}\r\n\n{}\n", lines[0], lines[1], lines[2]);
    std::fs::write(&log, &bytes).unwrap();
    let out = text(&run_ok(&["verify", p(&log)], 1).stdout);
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 4, "{out}");
    assert!(
        got[0].starts_with("line 1 (byte 0): ") && got[0].contains("CRLF"),
        "{out}"
    );
    assert!(got[1].contains("CRLF"), "{out}");
    assert!(
        got[2].starts_with("line 3 ") && got[2].contains("blank line"),
        "{out}"
    );
    assert!(got[3].ends_with(" ok"), "{out}");
}

#[test]
fn an_audit_without_keys_says_how_to_pass_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (keyring, _) = generated(tmp.path());
    let log = tmp.path().join("g.jsonl");
    let o = run_ok(&["audit", p(&log)], 0);
    let err = text(&o.stderr);
    assert!(
        err.contains("could not be decrypted") && err.contains("--keyring"),
        "{err}"
    );
    let o = run_ok(&["audit", p(&log), "--keyring", &keyring], 0);
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
}

#[test]
fn keys_list_shows_ids_and_epochs_never_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let d = p(&dir);
    run_ok(&["init", "--dir", d], 0);
    let key = tmp.path().join("k.json");
    let ids: Value =
        serde_json::from_slice(&run_ok(&["keygen", "--out", p(&key), "--json"], 0).stdout).unwrap();
    let did_key = ids["did_key"].as_str().unwrap();
    let principal = "ak:did_core:web:example.com";
    run_ok(
        &[
            "keys",
            "add",
            "--dir",
            d,
            "--principal",
            principal,
            "--did-key",
            did_key,
        ],
        0,
    );
    let sidecar = "ak:sidecar:AumdUO_wamfNslbmnTDggwluquDFqjSKmmqbXOgElF6p";
    for epoch in ["2", "1"] {
        run_ok(
            &[
                "keys",
                "add",
                "--dir",
                d,
                "--sidecar",
                sidecar,
                "--epoch",
                epoch,
                "--generate",
            ],
            0,
        );
    }
    let listed: Value =
        serde_json::from_slice(&run_ok(&["keys", "list", "--dir", d, "--json"], 0).stdout).unwrap();
    assert_eq!(
        listed["principals"],
        serde_json::json!([{"principal": principal, "did_keys": [did_key]}])
    );
    assert_eq!(
        listed["sidecars"],
        serde_json::json!([{"sidecar_id": sidecar, "epochs": [1, 2]}])
    );
    // No secret of the keyring file appears in either form.
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("keyring.json")).unwrap()).unwrap();
    let human = text(&run_ok(&["keys", "list", "--dir", d], 0).stdout);
    let mut secrets = Vec::new();
    collect_strings(&file["sidecar_keys"], &mut secrets);
    assert!(!secrets.is_empty());
    for secret in secrets.iter().filter(|s| s.len() == 43) {
        assert!(!human.contains(secret.as_str()) && !listed.to_string().contains(secret.as_str()));
    }
    assert!(
        human.contains(&format!("sidecar {sidecar} epochs 1 2")),
        "{human}"
    );
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

#[test]
fn completions_and_man_page_are_generated() {
    let bash = text(&run_ok(&["completions", "bash"], 0).stdout);
    assert!(
        bash.contains("akledger") && bash.contains("pending"),
        "{bash}"
    );
    let zsh = text(&run_ok(&["completions", "zsh"], 0).stdout);
    assert!(zsh.starts_with("#compdef akledger"), "{zsh}");
    run_ok(&["completions", "tcsh-not-a-shell"], 2);
    let man = text(&run_ok(&["man"], 0).stdout);
    assert!(man.contains(".TH akledger 1"), "{man}");
    assert!(man.contains("audit"), "{man}");
}

#[test]
fn log_lists_newest_first_and_export_says_how_many() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, lines, dir) = imported(tmp.path());
    let d = p(&dir);
    // Admission order is log order here (gen writes parents first).
    let ids: Vec<String> = lines.iter().map(|l| id_of(l)).collect();
    let all = text(&run_ok(&["log", "--dir", d], 0).stdout);
    let got: Vec<&str> = all.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let want: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(got, want);
    let three = text(&run_ok(&["log", "--dir", d, "--limit", "3"], 0).stdout);
    assert_eq!(
        three.lines().collect::<Vec<_>>(),
        all.lines().take(3).collect::<Vec<_>>()
    );
    let creates = text(
        &run_ok(
            &["log", "--dir", d, "--kind", "ak.realm.create", "--json"],
            0,
        )
        .stdout,
    );
    let creates: Vec<Value> = creates
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!creates.is_empty());
    assert!(creates.iter().all(|c| c["kind"] == "ak.realm.create"
        && c["actor"].as_str().unwrap().starts_with("ak:did_core:")));
    // Newest first: the log's first event (the realm create) comes last.
    assert_eq!(creates[creates.len() - 1]["event_id"], ids[0].as_str());

    let out = tmp.path().join("all.cbor");
    let said = text(
        &run_ok(
            &["export", "--dir", d, "--format", "cbor", "--out", p(&out)],
            0,
        )
        .stdout,
    );
    assert_eq!(
        said.trim(),
        format!("wrote {} events to {}", lines.len(), p(&out))
    );
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn an_audit_replays_in_memory_writes_nothing_and_agrees_with_an_on_disk_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, keyring, _, _) = tampered(tmp.path());
    let before = files_under(tmp.path());
    let scratch = tempfile::tempdir().unwrap();
    let audit = |extra: &[&str]| {
        let out = bin()
            .args(["audit", p(&log), "--keyring", &keyring, "--json"])
            .args(extra)
            .current_dir(scratch.path())
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        out.stdout
    };
    let in_memory = audit(&[]);
    assert_eq!(
        files_under(scratch.path()),
        Vec::<std::path::PathBuf>::new(),
        "an in-memory audit wrote files"
    );
    assert_eq!(files_under(tmp.path()), before, "the audited side changed");
    let on_disk = audit(&["--on-disk"]);
    assert_eq!(text(&in_memory), text(&on_disk));
    let report: Value = serde_json::from_slice(&in_memory).unwrap();
    assert!(report["summary"]["pending"].as_u64().unwrap() > 0);
    assert!(!report["exchanges"].as_array().unwrap().is_empty());
}
