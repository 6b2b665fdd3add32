//! The verifiable log's commands (PROFILE §13) on real ledgers: `checkpoint` (and
//! `--print-vkey`), `prove` (inclusion and consistency, JSON and text), `verify-proof`
//! offline, and `audit --checkpoint` of exported, truncated, reordered and event-missing
//! logs; every bad input with its exit code and message.

use akledger_testkit::copy_dir;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::support::{json, ledger_of, ledger_of_generated, log_lines, p, run_ok, stderr, stdout};

/// A checkpoint key file (mode 0600) in `dir`.
fn key(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    run_ok(&["keygen", "--out", p(&path)], 0);
    path
}

/// Writes `text` to `dir/name` and returns the path.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The ledger's checkpoint note and verifier key, written to files.
fn checkpoint(dir: &Path, ledger: &Path, key: &Path, tag: &str) -> (PathBuf, PathBuf) {
    let note = stdout(&run_ok(
        &["checkpoint", "--dir", p(ledger), "--key", p(key)],
        0,
    ));
    let vkey = stdout(&run_ok(
        &[
            "checkpoint",
            "--dir",
            p(ledger),
            "--key",
            p(key),
            "--print-vkey",
        ],
        0,
    ));
    (
        file(dir, &format!("{tag}.note"), &note),
        file(dir, &format!("{tag}.vkey"), &vkey),
    )
}

fn event_id(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    v["event_id"].as_str().unwrap().to_string()
}

/// `verify-proof` of `proof` against the checkpoint `note` (and `old`, the older one a
/// consistency proof starts from) with `vkey`, expecting exit `code`.
fn verify_proof(
    proof: &Path,
    note: &Path,
    old: Option<&Path>,
    vkey: &Path,
    code: i32,
) -> std::process::Output {
    let mut args = vec!["verify-proof", "--proof", p(proof), "--checkpoint", p(note)];
    if let Some(old) = old {
        args.extend(["--old-checkpoint", p(old)]);
    }
    args.extend(["--vkey", p(vkey)]);
    run_ok(&args, code)
}

/// A generated ledger of `events` events and its lines, a checkpoint key, and the
/// checkpoint it signed (note and verifier key files tagged `tag`).
fn checkpointed(
    dir: &Path,
    events: usize,
    tag: &str,
) -> (PathBuf, Vec<String>, PathBuf, PathBuf, PathBuf) {
    let (ledger, lines) = ledger_of_generated(dir, events);
    let key = key(dir, "ckpt.key.json");
    let (note, vkey) = checkpoint(dir, &ledger, &key, tag);
    (ledger, lines, key, note, vkey)
}

#[test]
fn checkpoint_prove_and_verify_proof_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let (ledger, lines, key, note, vkey) = checkpointed(tmp.path(), 40, "full");
    let note_text = std::fs::read_to_string(&note).unwrap();
    let first = event_id(&lines[0]);
    let token = first.rsplit(':').next().unwrap();
    assert!(
        note_text.starts_with(&format!("akledger/{token}\n41\n")),
        "{note_text}"
    );
    assert!(note_text.contains("\n\n\u{2014} akledger/"), "{note_text}");
    let vkey_text = std::fs::read_to_string(&vkey).unwrap();
    assert!(
        vkey_text.starts_with(&format!("akledger/{token}+")),
        "{vkey_text}"
    );

    // Inclusion, JSON and text.
    let id = event_id(&lines[7]);
    let proof = run_ok(&["prove", "--dir", p(&ledger), &id, "--json"], 0);
    let doc = json(&proof);
    assert_eq!(doc["tree_size"], 41);
    assert_eq!(doc["event_id"], id.as_str());
    let index = doc["leaf_index"].as_u64().unwrap();
    let proof_file = file(tmp.path(), "inc.json", &stdout(&proof));
    let text = stdout(&run_ok(&["prove", "--dir", p(&ledger), &id], 0));
    assert!(
        text.starts_with(&format!("inclusion of {id} (event number {index})")),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("hash ")).count(),
        doc["hashes"].as_array().unwrap().len()
    );
    let ok = verify_proof(&proof_file, &note, None, &vkey, 0);
    assert!(stdout(&ok).starts_with("ok: "), "{}", stdout(&ok));

    // Consistency between a checkpoint of an older copy and the current one.
    let older = tmp.path().join("older");
    ledger_of(&older, &lines.iter().take(20).collect::<Vec<_>>());
    let (old_note, _) = checkpoint(tmp.path(), &older, &key, "old");
    let consistency = stdout(&run_ok(
        &[
            "prove",
            "--dir",
            p(&ledger),
            "--consistency",
            "20",
            "--json",
        ],
        0,
    ));
    let consistency_file = file(tmp.path(), "cons.json", &consistency);
    let args = |proof: &Path, old: &Path, new: &Path| {
        vec![
            "verify-proof".to_string(),
            "--proof".into(),
            p(proof).into(),
            "--checkpoint".into(),
            p(new).into(),
            "--old-checkpoint".into(),
            p(old).into(),
            "--vkey".into(),
            p(&vkey).into(),
        ]
    };
    let run = |a: Vec<String>, code| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run_ok(&a, code)
    };
    let ok = run(args(&consistency_file, &old_note, &note), 0);
    assert!(
        stdout(&ok).contains("extends its tree of 20 events"),
        "{}",
        stdout(&ok)
    );
    // The notes swapped: the proof does not hold.
    let bad = run(args(&consistency_file, &note, &old_note), 1);
    assert!(
        stdout(&bad).starts_with("proof_invalid: "),
        "{}",
        stdout(&bad)
    );
    // A consistency proof needs the old note; an inclusion proof takes none.
    let e = verify_proof(&consistency_file, &note, None, &vkey, 2);
    assert!(stderr(&e).contains("--old-checkpoint"), "{}", stderr(&e));
    run(args(&proof_file, &old_note, &note), 2);

    // A proof at an earlier size verifies against that size's note only.
    let at20 = stdout(&run_ok(
        &[
            "prove",
            "--dir",
            p(&ledger),
            &event_id(&lines[3]),
            "--size",
            "20",
            "--json",
        ],
        0,
    ));
    let at20 = file(tmp.path(), "at20.json", &at20);
    let verify = |proof: &Path, note: &Path, code| verify_proof(proof, note, None, &vkey, code);
    verify(&at20, &old_note, 0);
    let wrong = verify(&at20, &note, 1);
    assert!(
        stdout(&wrong).contains("proof_invalid"),
        "{}",
        stdout(&wrong)
    );
}

#[test]
fn bad_inputs_have_their_codes_exit_codes_and_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let (ledger, lines, key, note, vkey) = checkpointed(tmp.path(), 12, "n");
    let id = event_id(&lines[4]);
    let proof = stdout(&run_ok(&["prove", "--dir", p(&ledger), &id, "--json"], 0));
    let proof_file = file(tmp.path(), "inc.json", &proof);
    let verify =
        |proof: &Path, note: &Path, vkey: &Path, code| verify_proof(proof, note, None, vkey, code);

    // A malformed note, and one whose body changed: checkpoint_invalid, exit 1.
    let note_text = std::fs::read_to_string(&note).unwrap();
    let malformed = file(tmp.path(), "malformed.note", "not a note");
    let o = verify(&proof_file, &malformed, &vkey, 1);
    assert!(
        stdout(&o).starts_with("checkpoint_invalid: "),
        "{}",
        stdout(&o)
    );
    let altered = file(
        tmp.path(),
        "altered.note",
        &note_text.replacen("\n13\n", "\n12\n", 1),
    );
    let o = verify(&proof_file, &altered, &vkey, 1);
    assert!(
        stdout(&o).starts_with("checkpoint_invalid: "),
        "{}",
        stdout(&o)
    );

    // A key of another name: no signature it knows, checkpoint_invalid.
    let other_vkey = stdout(&run_ok(
        &[
            "checkpoint",
            "--dir",
            p(&ledger),
            "--key",
            p(&key),
            "--origin",
            "example.org/other",
            "--print-vkey",
        ],
        0,
    ));
    let other_vkey = file(tmp.path(), "other.vkey", &other_vkey);
    let o = verify(&proof_file, &note, &other_vkey, 1);
    assert!(
        stdout(&o).starts_with("checkpoint_invalid: "),
        "{}",
        stdout(&o)
    );
    // Not a verifier key at all: usage, exit 2.
    let junk = file(tmp.path(), "junk.vkey", "nope");
    let o = verify(&proof_file, &note, &junk, 2);
    assert!(
        stderr(&o).contains("not a note verifier key"),
        "{}",
        stderr(&o)
    );

    // A proof of the wrong length, and one that is not a proof: proof_invalid, exit 1.
    let mut doc: Value = serde_json::from_str(&proof).unwrap();
    doc["hashes"].as_array_mut().unwrap().pop();
    let short = file(tmp.path(), "short.json", &doc.to_string());
    let o = verify(&short, &note, &vkey, 1);
    assert!(stdout(&o).starts_with("proof_invalid: "), "{}", stdout(&o));
    let garbage = file(tmp.path(), "garbage.json", "{\"origin\": 1}");
    let o = verify(&garbage, &note, &vkey, 1);
    assert!(stdout(&o).starts_with("proof_invalid: "), "{}", stdout(&o));

    // prove: an unknown id, sizes past the tree, an event not in the tree asked: exit 2.
    std::fs::create_dir(tmp.path().join("longer")).unwrap();
    let longer = log_lines(&tmp.path().join("longer"), 30);
    let unknown = event_id(&longer[20]);
    let unknown = unknown.as_str();
    for (args, says) in [
        (vec![unknown], "not an admitted event"),
        (
            vec![id.as_str(), "--size", "14"],
            "past the ledger's tree of 13",
        ),
        (
            vec![id.as_str(), "--size", "2"],
            "not in the tree of the first 2",
        ),
        (vec!["--consistency", "14"], "fewer"),
        (
            vec!["--consistency", "3", "--size", "99"],
            "past the ledger's tree",
        ),
    ] {
        let mut all = vec!["prove", "--dir", p(&ledger)];
        all.extend(args);
        let o = run_ok(&all, 2);
        assert!(
            stderr(&o).contains("proof_invalid") && stderr(&o).contains(says),
            "{all:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty());
    }
    let o = run_ok(&["prove", "--dir", p(&ledger), "ak:event:nope"], 2);
    assert!(stderr(&o).contains("nope"), "{}", stderr(&o));
    // checkpoint: a key file that is not one, an origin that is not a key name.
    let not_key = file(tmp.path(), "not.key", "{}");
    let o = run_ok(
        &["checkpoint", "--dir", p(&ledger), "--key", p(&not_key)],
        2,
    );
    assert!(stderr(&o).contains("not.key"), "{}", stderr(&o));
    let o = run_ok(
        &[
            "checkpoint",
            "--dir",
            p(&ledger),
            "--key",
            p(&key),
            "--origin",
            "two words",
        ],
        2,
    );
    assert!(stderr(&o).contains("checkpoint_invalid"), "{}", stderr(&o));
}

#[test]
fn audit_against_a_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let (ledger, lines, key, note, vkey) = checkpointed(tmp.path(), 30, "n");
    let audit = |lines: &[&String], name: &str, code| {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let log = file(tmp.path(), name, &text);
        let args = [
            "audit",
            p(&log),
            "--checkpoint",
            p(&note),
            "--vkey",
            p(&vkey),
            "--json",
        ];
        json(&run_ok(&args, code))["checkpoint"].clone()
    };
    let all: Vec<&String> = lines.iter().collect();

    // The log exported, and the same log with more after it.
    let exported = stdout(&run_ok(&["export", "--dir", p(&ledger)], 0));
    let exported: Vec<String> = exported.lines().map(str::to_owned).collect();
    let c = audit(&exported.iter().collect::<Vec<_>>(), "exported.jsonl", 0);
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(c["tree_size"], 31);
    assert!(c.get("consistency").is_none());
    let text = stdout(&run_ok(
        &[
            "audit",
            p(&file(tmp.path(), "e.jsonl", &(exported.join("\n") + "\n"))),
            "--checkpoint",
            p(&note),
            "--vkey",
            p(&vkey),
        ],
        0,
    ));
    assert!(text.contains("checkpoint ok: "), "{text}");

    // Truncated: checkpoint_mismatch.
    let c = audit(&all[..25], "truncated.jsonl", 1);
    assert_eq!(c["status"], "checkpoint_mismatch", "{c}");
    assert_eq!(c["tree_size"], 25);
    // Missing an event from the middle (those after it that depend on it wait: the audit
    // exits 1 for them too, and for the checkpoint).
    let mut missing = all.clone();
    missing.remove(10);
    let c = audit(&missing, "missing.jsonl", 1);
    assert_eq!(c["status"], "checkpoint_mismatch", "{c}");
    // Reordered: two neighbours that do not depend on each other swapped change the
    // admission order, and every event is still admitted.
    let mut found = false;
    for k in 1..29 {
        let mut swapped = all.clone();
        swapped.swap(k, k + 1);
        let text: String = swapped.iter().map(|l| format!("{l}\n")).collect();
        let log = file(tmp.path(), "swapped.jsonl", &text);
        let o = super::support::run(&[
            "audit",
            p(&log),
            "--checkpoint",
            p(&note),
            "--vkey",
            p(&vkey),
            "--json",
        ]);
        let report = json(&o);
        assert_eq!(report["summary"]["admitted"], 31, "every event admitted");
        if report["checkpoint"]["status"] == "checkpoint_mismatch" {
            assert_eq!(o.status.code(), Some(1));
            found = true;
            break;
        }
        assert_eq!(report["checkpoint"]["status"], "ok");
    }
    assert!(
        found,
        "some swap of independent neighbours changes the order"
    );

    // An altered note: checkpoint_invalid.
    let note_text = std::fs::read_to_string(&note).unwrap();
    let altered = note_text.replacen("\n31\n", "\n30\n", 1);
    assert_ne!(altered, note_text);
    std::fs::write(&note, altered).unwrap();
    let c = audit(&all, "all.jsonl", 1);
    assert_eq!(c["status"], "checkpoint_invalid", "{c}");
    std::fs::write(&note, &note_text).unwrap();

    // A longer log: ok, with the consistency proof from the checkpoint's size.
    let more_dir = tmp.path().join("more");
    std::fs::create_dir(&more_dir).unwrap();
    let (longer_ledger, more) = ledger_of_generated(&more_dir, 45);
    let longer: Vec<&String> = more.iter().collect();
    assert_eq!(longer[..31], all[..], "gen is deterministic");
    let c = audit(&longer, "longer.jsonl", 0);
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(c["consistency"]["old_size"], 31);
    assert_eq!(c["consistency"]["new_size"], 46);
    // The audit's consistency proof verifies against the note and the longer ledger's.
    let (new_note, _) = checkpoint(tmp.path(), &longer_ledger, &key, "new");
    let proof = file(tmp.path(), "audit-cons.json", &c["consistency"].to_string());
    verify_proof(&proof, &new_note, Some(&note), &vkey, 0);
    // Usage: --checkpoint needs --vkey.
    run_ok(
        &[
            "audit",
            p(&tmp.path().join("all.jsonl")),
            "--checkpoint",
            p(&note),
        ],
        2,
    );
}

#[test]
fn a_checkpoint_after_a_sigkilled_import_extends_the_one_before() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = log_lines(tmp.path(), 3000);
    let ledger = tmp.path().join("books");
    ledger_of(&ledger, &lines.iter().take(400).collect::<Vec<_>>());
    let key = key(tmp.path(), "ckpt.key.json");
    let (before, vkey) = checkpoint(tmp.path(), &ledger, &key, "before");
    assert_eq!(
        std::fs::read_to_string(ledger.join("checkpoint")).unwrap(),
        std::fs::read_to_string(&before).unwrap(),
        "checkpoint records the note it prints"
    );
    let rest = file(tmp.path(), "rest.jsonl", &(lines[400..].join("\n") + "\n"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(["import", p(&rest), "--dir", p(&ledger)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let _ = child.kill();
    let _ = child.wait();

    let (after, _) = checkpoint(tmp.path(), &ledger, &key, "after");
    let size: u64 = std::fs::read_to_string(&after)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(size >= 400, "{size}");
    let proof = stdout(&run_ok(
        &[
            "prove",
            "--dir",
            p(&ledger),
            "--consistency",
            "400",
            "--json",
        ],
        0,
    ));
    let proof = file(tmp.path(), "kill.json", &proof);
    verify_proof(&proof, &after, Some(&before), &vkey, 0);
    run_ok(&["check", "--dir", p(&ledger)], 0);
}

#[test]
fn a_ledger_rolled_back_behind_its_recorded_checkpoint_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = log_lines(tmp.path(), 60);
    let ledger = tmp.path().join("books");
    ledger_of(&ledger, &lines.iter().take(30).collect::<Vec<_>>());
    let backup = tmp.path().join("backup");
    copy_dir(&ledger, &backup);
    let rest = file(tmp.path(), "rest.jsonl", &(lines[30..].join("\n") + "\n"));
    run_ok(&["import", p(&rest), "--dir", p(&ledger)], 0);
    let key = key(tmp.path(), "ckpt.key.json");
    checkpoint(tmp.path(), &ledger, &key, "n");
    // The older copy put back, with the recorded checkpoint of the newer ledger.
    let recorded = ledger.join("checkpoint");
    let rolled = tmp.path().join("rolled");
    copy_dir(&backup, &rolled);
    std::fs::copy(&recorded, rolled.join("checkpoint")).unwrap();
    for args in [
        vec!["import", p(&rest), "--dir", p(&rolled)],
        vec!["heads", "--dir", p(&rolled)],
    ] {
        let o = run_ok(&args, 2);
        assert!(
            stderr(&o).contains("checkpoint_mismatch")
                && stderr(&o).contains("size 61")
                && stderr(&o).contains("it holds 30 events"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn tiles_writes_a_tlog_tiles_directory_whose_checkpoint_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let (ledger, lines) = ledger_of_generated(tmp.path(), 299);
    let key = key(tmp.path(), "ckpt.key.json");
    let out = tmp.path().join("tiles");
    let o = run_ok(
        &[
            "tiles",
            "--dir",
            p(&ledger),
            "--key",
            p(&key),
            "--out",
            p(&out),
        ],
        0,
    );
    assert!(
        stdout(&o).contains("tree of 300 events") && stdout(&o).contains("3 hash tiles"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::metadata(out.join("tile/0/000")).unwrap().len(),
        256 * 32
    );
    assert_eq!(
        std::fs::metadata(out.join("tile/0/001.p/44"))
            .unwrap()
            .len(),
        44 * 32
    );
    assert_eq!(
        std::fs::metadata(out.join("tile/1/000.p/1")).unwrap().len(),
        32
    );
    // Each entry: a 2-byte length (33) and the 33-byte id.
    assert_eq!(
        std::fs::metadata(out.join("tile/entries/000"))
            .unwrap()
            .len(),
        256 * 35
    );
    // The tiles' checkpoint is the ledger's: a proof from the ledger verifies against it.
    let vkey = stdout(&run_ok(
        &[
            "checkpoint",
            "--dir",
            p(&ledger),
            "--key",
            p(&key),
            "--print-vkey",
        ],
        0,
    ));
    let vkey = file(tmp.path(), "t.vkey", &vkey);
    let proof = stdout(&run_ok(
        &[
            "prove",
            "--dir",
            p(&ledger),
            &event_id(&lines[260]),
            "--json",
        ],
        0,
    ));
    let proof = file(tmp.path(), "t.json", &proof);
    verify_proof(&proof, &out.join("checkpoint"), None, &vkey, 0);
    // A key file others can read is refused, and nothing is written.
    let loose = tmp.path().join("loose.key");
    std::fs::copy(&key, &loose).unwrap();
    std::fs::set_permissions(&loose, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    let o = run_ok(
        &[
            "tiles",
            "--dir",
            p(&ledger),
            "--key",
            p(&loose),
            "--out",
            p(&elsewhere),
        ],
        2,
    );
    assert!(stderr(&o).contains("chmod 600"), "{}", stderr(&o));
    assert!(!elsewhere.exists());
}

#[test]
fn witness_cosigns_only_checkpoints_that_extend_the_last_one() {
    use akledger::tlog::{Cosigner, Note};
    let tmp = tempfile::tempdir().unwrap();
    let lines = log_lines(tmp.path(), 59);
    let all: Vec<&String> = lines.iter().collect();
    let ledger = tmp.path().join("books");
    ledger_of(&ledger, &all[..20]);
    let log_key = key(tmp.path(), "ckpt.key.json");
    let (c20, vkey) = checkpoint(tmp.path(), &ledger, &log_key, "c20");
    let witness_key = key(tmp.path(), "w.key.json");
    let state = tmp.path().join("w.state");
    let witness = |note: &Path, proof: Option<&Path>, code| {
        let mut args = vec![
            "witness",
            "--key",
            p(&witness_key),
            "--name",
            "witness.example",
            "--state",
            p(&state),
            "--log-vkey",
            p(&vkey),
            "--checkpoint",
            p(note),
        ];
        if let Some(proof) = proof {
            args.extend(["--proof", p(proof)]);
        }
        run_ok(&args, code)
    };
    let cosigner = Cosigner::new(
        "witness.example",
        akledger::key_file::read(&witness_key).unwrap(),
    )
    .unwrap();
    let log_vkey =
        akledger::tlog::VerifierKey::parse(std::fs::read_to_string(&vkey).unwrap().trim()).unwrap();

    // The first checkpoint is taken on trust and cosigned.
    let out = stdout(&witness(&c20, None, 0));
    let note = Note::parse(out.as_bytes()).unwrap();
    let verified = note
        .verify(&[log_vkey.clone(), cosigner.verifier_key().clone()])
        .unwrap();
    assert_eq!(verified.len(), 2, "the log's signature and the cosignature");
    assert!(verified.iter().any(|v| v.time.is_some()));
    assert_eq!(std::fs::read_to_string(&state).unwrap(), out);

    // A larger tree: refused without its proof (usage), cosigned with it.
    let rest = file(tmp.path(), "rest.jsonl", &(lines[20..40].join("\n") + "\n"));
    run_ok(&["import", p(&rest), "--dir", p(&ledger)], 0);
    let (c40, _) = checkpoint(tmp.path(), &ledger, &log_key, "c40");
    let o = witness(&c40, None, 2);
    assert!(stderr(&o).contains("--proof"), "{}", stderr(&o));
    let proof = |m: &str, name: &str| {
        let text = stdout(&run_ok(
            &["prove", "--dir", p(&ledger), "--consistency", m, "--json"],
            0,
        ));
        file(tmp.path(), name, &text)
    };
    let p20 = proof("20", "p20.json");
    witness(&c40, Some(&p20), 0);
    assert!(std::fs::read_to_string(&state).unwrap().contains("\n40\n"));

    // An older checkpoint does not extend the last one cosigned: refused, state kept.
    let o = witness(&c20, None, 1);
    assert!(
        stdout(&o).starts_with("refused: checkpoint_mismatch"),
        "{}",
        stdout(&o)
    );
    assert!(std::fs::read_to_string(&state).unwrap().contains("\n40\n"));
    // A proof from another size, and an altered note: refused.
    let rest = file(tmp.path(), "rest2.jsonl", &(lines[40..].join("\n") + "\n"));
    run_ok(&["import", p(&rest), "--dir", p(&ledger)], 0);
    let (c60, _) = checkpoint(tmp.path(), &ledger, &log_key, "c60");
    let o = witness(&c60, Some(&proof("20", "p20b.json")), 1);
    assert!(
        stdout(&o).starts_with("refused: proof_invalid"),
        "{}",
        stdout(&o)
    );
    let altered = std::fs::read_to_string(&c60)
        .unwrap()
        .replacen("\n60\n", "\n59\n", 1);
    let altered = file(tmp.path(), "altered.note", &altered);
    let o = witness(&altered, Some(&proof("40", "p40.json")), 1);
    assert!(
        stdout(&o).starts_with("refused: checkpoint_invalid"),
        "{}",
        stdout(&o)
    );
    assert!(std::fs::read_to_string(&state).unwrap().contains("\n40\n"));
    witness(&c60, Some(&proof("40", "p40b.json")), 0);
    assert!(std::fs::read_to_string(&state).unwrap().contains("\n60\n"));
}
