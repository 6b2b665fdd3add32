//! The `--json` contract (docs/json.md): each command's output is the form the document
//! gives it (one document, or JSON Lines), every document and line carries its documented
//! `type` and `"format": 1`, and empty results are valid JSON.

use std::path::Path;

use serde_json::Value;

use super::support::{p, run, run_ok, stdout};

/// The form of a command's `--json` output.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Document,
    Lines,
}

/// Runs `args` (exit 0 or 1), reads its output in `form`, and checks each object's `type`
/// and `format`; the objects.
fn check(args: &[&str], form: Form, kind: &str, docs: &str) -> Vec<Value> {
    let out = run(args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let objects: Vec<Value> = match form {
        Form::Document => {
            assert_eq!(text.lines().count(), 1, "{args:?}: one document: {text}");
            vec![serde_json::from_str(&text).unwrap()]
        }
        Form::Lines => text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    };
    for o in &objects {
        assert_eq!(o["type"], kind, "{args:?}: {o}");
        assert_eq!(o["format"], 1, "{args:?}: {o}");
    }
    let row = docs
        .lines()
        .find(|l| l.contains(&format!("`{kind}`")))
        .unwrap_or_else(|| panic!("{kind} is not in docs/json.md"));
    let documented = if row.contains("| JSON Lines |") {
        Form::Lines
    } else {
        Form::Document
    };
    assert_eq!(documented, form, "{kind}: {row}");
    objects
}

/// The first admitted event of `kind` in the ledger at `dir`, and its author.
fn first_of(dir: &Path, kind: &str) -> (String, String) {
    let log = stdout(&run_ok(&["log", "--dir", p(dir), "--json"], 0));
    let line = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["kind"] == kind)
        .unwrap();
    (
        line["event_id"].as_str().unwrap().into(),
        line["actor"].as_str().unwrap().into(),
    )
}

#[test]
fn every_json_output_has_its_documented_form_type_and_format() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/json.md"))
            .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| tmp.path().join(name);
    let (d, log, keyring) = (t("d"), t("d.jsonl"), t("d/keyring.json"));
    run_ok(&["demo", "--dir", p(&d), "--exchanges", "20"], 0);
    run_ok(&["export", "--dir", p(&d), "--out", p(&log)], 0);
    let dd = p(&d);
    use Form::*;
    let heads = check(
        &["heads", "--dir", dd, "--json"],
        Document,
        "akledger.heads",
        &docs,
    );
    let head = heads[0]["heads"][0].as_str().unwrap().to_string();
    check(
        &["heads-of", "--dir", dd, &head, "--json"],
        Document,
        "akledger.heads",
        &docs,
    );
    let basis = ["covers", "--dir", dd, "--basis", &head, &head, "--json"];
    check(&basis, Document, "akledger.covers", &docs);
    let all = check(
        &["exchanges", "--dir", dd, "--json"],
        Document,
        "akledger.exchanges",
        &docs,
    );
    let x = all[0]["exchanges"][0]["exchange_id"]
        .as_str()
        .unwrap()
        .to_string();
    check(
        &["exchange", "--dir", dd, &x, "--json"],
        Document,
        "akledger.exchange",
        &docs,
    );
    let history = ["exchange", "--dir", dd, &x, "--history", "--json"];
    check(&history, Document, "akledger.exchange.history", &docs);
    check(
        &["check", "--dir", dd, "--json"],
        Document,
        "akledger.check",
        &docs,
    );
    let pending = check(
        &["pending", "--dir", dd, "--json"],
        Document,
        "akledger.pending",
        &docs,
    );
    assert!(
        pending[0]["pending"].is_array(),
        "no pending events is an empty list"
    );
    check(
        &["keys", "list", "--dir", dd, "--json"],
        Document,
        "akledger.keys.list",
        &docs,
    );
    let audit = ["audit", p(&log), "--keyring", p(&keyring), "--json"];
    check(&audit, Document, "akledger.audit", &docs);
    let (grant, _) = first_of(&d, "ak.observation.grant");
    let (_, agent) = first_of(&d, "ak.actor.model");
    let decrypt = ["show", "--dir", dd, &grant, "--decrypt", "--json"];
    check(&decrypt, Document, "akledger.show.decrypted", &docs);
    let model = ["actor", "show", "--dir", dd, &agent, "--json"];
    check(&model, Document, "akledger.actor.model", &docs);
    let lines = check(
        &["log", "--dir", dd, "--json"],
        Lines,
        "akledger.log.event",
        &docs,
    );
    assert!(lines.len() > 100);
    let feed = ["observe", "feed", "--dir", dd, "--grant", &grant, "--json"];
    assert!(!check(&feed, Lines, "akledger.observe.item", &docs).is_empty());
    check(
        &["verify", p(&log), "--json"],
        Lines,
        "akledger.verify.event",
        &docs,
    );

    // A new ledger: its empty results, then the writing commands.
    let (e, key) = (t("e"), t("k.json"));
    let keygen = ["keygen", "--out", p(&key), "--json"];
    check(&keygen, Document, "akledger.keygen", &docs);
    check(
        &["init", "--dir", p(&e), "--json"],
        Document,
        "akledger.init",
        &docs,
    );
    let empty = check(
        &["heads", "--dir", p(&e), "--json"],
        Document,
        "akledger.heads",
        &docs,
    );
    assert_eq!(empty[0]["heads"], serde_json::json!([]));
    assert!(check(
        &["log", "--dir", p(&e), "--json"],
        Lines,
        "akledger.log.event",
        &docs
    )
    .is_empty());
    let realm = [
        "realm",
        "create",
        "--dir",
        p(&e),
        "--key",
        p(&key),
        "--json",
    ];
    check(&realm, Document, "akledger.authored", &docs);
    let sidecar = all[0]["exchanges"][0]["sidecar_id"]
        .as_str()
        .unwrap()
        .to_string();
    let add = [
        "keys",
        "add",
        "--dir",
        p(&e),
        "--sidecar",
        &sidecar,
        "--epoch",
        "1",
        "--generate",
        "--json",
    ];
    check(&add, Document, "akledger.keys.added", &docs);
    let append = ["append", p(&log), "--dir", p(&e), "--json"];
    check(&append, Lines, "akledger.append.outcome", &docs);
    let f = t("f");
    let import = ["import", p(&log), "--dir", p(&f), "--json"];
    check(&import, Document, "akledger.import", &docs);
}
