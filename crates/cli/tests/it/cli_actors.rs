//! `akledger actor publish|show` (PROFILE §14.1) on real files: versions published in
//! turn with their predecessor filled in, the current model as seen from an event, and
//! every refusal (another actor's model, a skipped or repeated version, a broken model)
//! with nothing written.

use std::path::{Path, PathBuf};

use super::support::{json, len, p, run_ok, stderr, stdout};

/// A key file in `dir` and the principal it signs as.
fn key(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(name);
    let out = stdout(&run_ok(&["keygen", "--out", p(&path)], 0));
    let did = out
        .split_whitespace()
        .find(|w| w.starts_with("ak:did_core:key:"))
        .expect("keygen prints the principal")
        .to_owned();
    (path, did)
}

/// Version `version` of `did`'s model offering travel/book (its passport redacted; the
/// fulfiller may ask for a visa, whose number is redacted) and, from version 2,
/// travel/cancel.
fn model(dir: &Path, did: &str, version: u64) -> PathBuf {
    let cancel = if version > 1 {
        r#",{"action":"cancel"}"#
    } else {
        ""
    };
    let text = format!(
        r#"{{"id":"{did}#{version}","skills":{{"skills":[{{"subject":"travel","actions":[{{"action":"book","input":[{{"name":"destination","optional":false,"redacted":false}},{{"name":"passport","optional":false,"redacted":true}}],"fulfillerQuestions":[{{"id":"visa","name":"visa?","question":["country"],"answer":[{{"name":"visa_number","optional":false,"redacted":true}}]}}]}}{cancel}]}}]}}}}"#
    );
    let path = dir.join(format!("model-{version}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn versions_are_published_in_turn_and_shown_as_seen_from_an_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let (agent, did) = key(tmp.path(), "agent.key.json");
    run_ok(&["init", "--dir", p(&dir)], 0);
    run_ok(
        &["realm", "create", "--dir", p(&dir), "--key", p(&agent)],
        0,
    );
    let publish = |version: u64| {
        json(&run_ok(
            &[
                "actor",
                "publish",
                "--dir",
                p(&dir),
                "--key",
                p(&agent),
                "--model",
                p(&model(tmp.path(), &did, version)),
                "--json",
            ],
            0,
        ))
    };
    let v1 = publish(1);
    assert_eq!(v1["outcome"], "admitted");
    assert_eq!(v1["entity_id"], format!("{did}#1"));
    let v2 = publish(2);
    assert_eq!(v2["outcome"], "admitted");
    let show = |at: Option<&str>| {
        let mut args = vec!["actor", "show", "--dir", p(&dir), did.as_str(), "--json"];
        if let Some(at) = at {
            args.extend(["--at", at]);
        }
        json(&run_ok(&args, 0))
    };
    let latest = show(None);
    assert_eq!(latest["version"], 2);
    assert_eq!(latest["event_id"], v2["event_id"]);
    assert_eq!(latest["model"]["id"], format!("{did}#2"));
    let seen_from_v1 = show(Some(v1["event_id"].as_str().unwrap()));
    assert_eq!(seen_from_v1["version"], 1);
    let text = stdout(&run_ok(&["actor", "show", "--dir", p(&dir), &did], 0));
    assert!(
        text.contains("offers travel/book (redacted: passport)"),
        "{text}"
    );
    assert!(text.contains("offers travel/cancel"), "{text}");
    // An actor with no model: exit 1, and valid JSON.
    let (_, stranger) = key(tmp.path(), "stranger.key.json");
    let none = run_ok(&["actor", "show", "--dir", p(&dir), &stranger, "--json"], 1);
    assert_eq!(json(&none)["model"], serde_json::Value::Null);
    run_ok(&["check", "--dir", p(&dir)], 0);
}

#[test]
fn refused_models_write_nothing_and_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let (agent, did) = key(tmp.path(), "agent.key.json");
    let (other, _) = key(tmp.path(), "other.key.json");
    run_ok(&["init", "--dir", p(&dir)], 0);
    run_ok(
        &["realm", "create", "--dir", p(&dir), "--key", p(&agent)],
        0,
    );
    let broken = tmp.path().join("broken.json");
    std::fs::write(
        &broken,
        format!(r#"{{"id":"{did}#1","skills":{{"skills":[{{"subject":"travel"}}]}}}}"#),
    )
    .unwrap();
    let cases: Vec<(PathBuf, PathBuf, &str)> = vec![
        (
            other.clone(),
            model(tmp.path(), &did, 1),
            "an actor publishes its own model",
        ),
        (
            agent.clone(),
            model(tmp.path(), &did, 2),
            "the ledger holds none",
        ),
        (agent.clone(), broken, "actions is required"),
    ];
    for (key, model, needle) in cases {
        let out = publish(&dir, &key, &model, 2);
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
        assert_eq!(len(&dir), 1, "{needle}: something was written");
    }
    let v1 = model(tmp.path(), &did, 1);
    publish(&dir, &agent, &v1, 0);
    let again = publish(&dir, &agent, &v1, 2);
    assert!(
        stderr(&again).contains("already holds version 1"),
        "{}",
        stderr(&again)
    );
    assert_eq!(len(&dir), 2);
}

/// `actor publish` of `model` with `key`, expecting exit `code`.
fn publish(dir: &Path, key: &Path, model: &Path, code: i32) -> std::process::Output {
    run_ok(
        &[
            "actor",
            "publish",
            "--dir",
            p(dir),
            "--key",
            p(key),
            "--model",
            p(model),
        ],
        code,
    )
}

/// A ledger in `tmp/data` with a realm and a sidecar of `boss.key.json`, an agent that
/// offers travel/book (its passport redacted), and `tmp/data.json` booking with `passport`.
struct Travel {
    dir: PathBuf,
    boss: PathBuf,
    agent: PathBuf,
    agent_did: String,
    sidecar_id: String,
    data: PathBuf,
}

fn travel(tmp: &Path, passport: &str) -> Travel {
    let dir = tmp.join("data");
    run_ok(&["init", "--dir", p(&dir)], 0);
    let (boss, _) = key(tmp, "boss.key.json");
    let (agent, agent_did) = key(tmp, "agent.key.json");
    let (_, sidecar) = super::support::realm_and_sidecar(&dir, &boss);
    let sidecar_id = sidecar["sidecar_id"].as_str().unwrap().to_owned();
    publish(&dir, &agent, &model(tmp, &agent_did, 1), 0);
    let data = tmp.join("data.json");
    let text = format!(r#"{{"destination":"Lyon","passport":"{passport}"}}"#);
    std::fs::write(&data, text).unwrap();
    Travel {
        dir,
        boss,
        agent,
        agent_did,
        sidecar_id,
        data,
    }
}

#[test]
fn a_redacted_request_is_disclosed_and_verified_and_its_value_stays_off_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let Travel {
        dir,
        boss,
        agent_did,
        sidecar_id,
        data,
        ..
    } = travel(tmp.path(), "P-SECRET-4417");
    let d = p(&dir);
    let sidecar_id = sidecar_id.as_str();
    let x = "exchange-travel-from-the-cli";
    let request = json(&skill_request(
        &dir,
        &boss,
        sidecar_id,
        x,
        &agent_did,
        "travel/book",
        Some(&data),
        0,
    ));
    assert_eq!(request["disclosed"], serde_json::json!(["passport"]));
    let event = request["event_id"].as_str().unwrap();
    // The disclosure, printed and verified against the sealed event.
    let disclosure = run_ok(&["disclose", "--dir", d, event, "passport"], 0);
    let shown = json(&disclosure);
    assert_eq!(shown["value"], "P-SECRET-4417");
    assert_eq!(shown["event_id"], event);
    let file = tmp.path().join("passport.json");
    std::fs::write(&file, &disclosure.stdout).unwrap();
    let ok = run_ok(&["verify-disclosure", "--dir", d, p(&file)], 0);
    assert!(
        stdout(&ok).contains("opens the commitment"),
        "{}",
        stdout(&ok)
    );
    // A lie about the value does not open it (exit 1); no disclosure for another field.
    let mut lie = shown.clone();
    lie["value"] = "P-SOMETHING-ELSE".into();
    std::fs::write(&file, lie.to_string()).unwrap();
    let bad = run_ok(&["verify-disclosure", "--dir", d, p(&file)], 1);
    assert!(stdout(&bad).contains("does NOT open"), "{}", stdout(&bad));
    run_ok(&["disclose", "--dir", d, event, "destination"], 1);
    // The value is nowhere in the exported log, nor in `show --decrypt`.
    let export = tmp.path().join("export.jsonl");
    run_ok(&["export", "--dir", d, "--out", p(&export)], 0);
    let exported = std::fs::read_to_string(&export).unwrap();
    assert!(!exported.contains("P-SECRET-4417"));
    let decrypted = stdout(&run_ok(
        &["show", "--dir", d, event, "--decrypt", "--json"],
        0,
    ));
    assert!(!decrypted.contains("P-SECRET-4417"), "{decrypted}");
    assert!(decrypted.contains("ak_redacted"), "{decrypted}");
    // A skill the agent does not offer: refused, nothing written.
    let before = len(&dir);
    let refused = skill_request(
        &dir,
        &boss,
        sidecar_id,
        "exchange-travel-refused-000",
        &agent_did,
        "travel/fly",
        None,
        2,
    );
    assert!(
        stderr(&refused).contains("skill_not_offered"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(len(&dir), before);
}

/// `exchange request --skill SKILL [--data FILE] --json` by `boss` to `agent`, expecting exit
/// `code`.
#[allow(clippy::too_many_arguments)]
fn skill_request(
    dir: &Path,
    boss: &Path,
    sidecar: &str,
    exchange: &str,
    agent: &str,
    skill: &str,
    data: Option<&Path>,
    code: i32,
) -> std::process::Output {
    let mut args = vec![
        "exchange",
        "request",
        "--key",
        p(boss),
        "--dir",
        p(dir),
        "--sidecar",
        sidecar,
        "--exchange-id",
        exchange,
        "--agent",
        agent,
        "--body",
        "book it",
        "--skill",
        skill,
        "--json",
    ];
    if let Some(data) = data {
        args.extend(["--data", p(data)]);
    }
    run_ok(&args, code)
}

/// `exchange respond --pncp KIND` on real files: the agent asks a question, the controller
/// answers it (the visa number committed to and disclosed), the history names each kind;
/// a kind the controller may not send and an unknown kind are refused, writing nothing.
#[test]
fn questions_and_answers_are_sent_with_pncp_and_shown_in_the_history() {
    let tmp = tempfile::tempdir().unwrap();
    let Travel {
        dir,
        boss,
        agent,
        agent_did,
        sidecar_id,
        data,
    } = travel(tmp.path(), "P-1");
    let d = p(&dir);
    let x = "exchange-travel-questions";
    skill_request(
        &dir,
        &boss,
        &sidecar_id,
        x,
        &agent_did,
        "travel/book",
        Some(&data),
        0,
    );
    let send = |key: &Path, kind: &str, question: Option<&str>, text: &str, code: i32| {
        let file = tmp.path().join(format!("{kind}.json"));
        std::fs::write(&file, text).unwrap();
        let mut args = vec![
            "exchange",
            "respond",
            "--dir",
            d,
            "--key",
            p(key),
            "--sidecar",
            &sidecar_id,
            "--exchange-id",
            x,
            "--body",
            "",
            "--pncp",
            kind,
            "--data",
            p(&file),
            "--json",
        ];
        if let Some(q) = question {
            args.extend(["--question-id", q]);
        }
        run_ok(&args, code)
    };
    send(&agent, "Question", Some("visa"), r#"{"country":"NO"}"#, 0);
    let answer = json(&send(
        &boss,
        "Answer",
        Some("visa"),
        r#"{"visa_number":"V-SECRET-55"}"#,
        0,
    ));
    assert_eq!(answer["disclosed"], serde_json::json!(["visa_number"]));
    let before = len(&dir);
    let refused = send(&boss, "Status", None, "{}", 2);
    assert!(
        stderr(&refused).contains("Question, Answer or Cancel"),
        "{}",
        stderr(&refused)
    );
    let refused = send(&agent, "Maybe", None, "{}", 2);
    assert!(
        stderr(&refused).contains("--pncp \"Maybe\""),
        "{}",
        stderr(&refused)
    );
    assert_eq!(len(&dir), before);
    let history = stdout(&run_ok(&["exchange", x, "--history", "--dir", d], 0));
    for line in [
        "request Request travel/book: folded",
        "internal Question travel/book (question visa): folded",
        "internal Answer travel/book (question visa): ignored: author_is_controller",
    ] {
        assert!(history.contains(line), "{line} in {history}");
    }
    let history = json(&run_ok(
        &["exchange", x, "--history", "--json", "--dir", d],
        0,
    ));
    assert_eq!(
        history["entries"][2]["pncp"],
        serde_json::json!({"kind": "Answer", "subject": "travel", "action": "book", "question_id": "visa"})
    );
    let export = tmp.path().join("export.jsonl");
    run_ok(&["export", "--dir", d, "--out", p(&export)], 0);
    assert!(!std::fs::read_to_string(&export)
        .unwrap()
        .contains("V-SECRET-55"));
}

/// `observe grant|revoke|feed` (PROFILE §14.4) on real files: an agent's grant is refused
/// with nothing written; the controller's grant shows the exchanges requested after it
/// (their redacted values as commitments), `--follow` prints a new one as it is admitted,
/// and after a revoke later exchanges are not shown.
#[test]
fn an_observer_feed_shows_granted_exchanges_and_follows_them() {
    use std::process::Stdio;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let Travel {
        dir,
        boss,
        agent,
        agent_did,
        sidecar_id,
        data,
    } = travel(tmp.path(), "P-WATCHED-1");
    let d = p(&dir);
    let sidecar_id = sidecar_id.as_str();
    let request = |x: &str| {
        let out = skill_request(
            &dir,
            &boss,
            sidecar_id,
            x,
            &agent_did,
            "travel/book",
            Some(&data),
            0,
        );
        json(&out)["event_id"].as_str().unwrap().to_owned()
    };
    let grant = |key: &Path, filter: &str, code: i32| {
        run_ok(
            &[
                "observe",
                "grant",
                "--dir",
                d,
                "--key",
                p(key),
                "--sidecar",
                sidecar_id,
                "--observer",
                &agent_did,
                "--subject",
                "travel",
                "--action",
                "book",
                "--filter",
                filter,
                "--json",
            ],
            code,
        )
    };
    let before_grant = request("exchange-before-the-grant-0");
    // Only the controller grants: refused with its code, nothing written.
    let before = len(&dir);
    let refused = grant(&agent, "Skill", 2);
    assert!(
        stderr(&refused).contains("sidecar_exchange_control_forbidden"),
        "{}",
        stderr(&refused)
    );
    assert!(stderr(&grant(&boss, "Pncp:Nonsense", 2)).contains("--filter"));
    assert_eq!(len(&dir), before);
    let granted = json(&grant(&boss, "Skill", 0));
    let g = granted["event_id"].as_str().unwrap().to_owned();
    let feed = |follow: bool| {
        let mut args = vec!["observe", "feed", "--dir", d, "--grant", &g, "--json"];
        if follow {
            args.push("--follow");
        }
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let mut follower = super::support::bin()
        .args(feed(true))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rx = super::support::lines_of(follower.stdout.take().unwrap());
    let watched = request("exchange-after-the-grant-0");
    // A hang guard only: the line comes as soon as the follower looks.
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the new item");
    let _ = follower.kill();
    let _ = follower.wait();
    let item: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(item["event_id"], watched.as_str());
    assert_eq!(item["kind"], "Request");
    assert!(
        item["data"]["passport"]["ak_redacted"].is_object(),
        "{item}"
    );
    assert!(!line.contains("P-WATCHED-1"));
    // After a revoke, later exchanges are not shown; the earlier one stays.
    run_ok(
        &[
            "observe",
            "revoke",
            "--dir",
            d,
            "--key",
            p(&boss),
            "--sidecar",
            sidecar_id,
            "--grant",
            &g,
        ],
        0,
    );
    request("exchange-after-the-revoke-0");
    let args = feed(false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let lines = stdout(&run_ok(&args, 0));
    let shown: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(shown.len(), 1, "{lines}");
    assert_eq!(shown[0]["event_id"], watched.as_str());
    assert_ne!(shown[0]["event_id"], before_grant.as_str());
    // Not a grant: a clear error.
    let not_a_grant = run_ok(
        &["observe", "feed", "--dir", d, "--grant", &before_grant],
        2,
    );
    assert!(
        stderr(&not_a_grant).contains("not an observation grant"),
        "{}",
        stderr(&not_a_grant)
    );
}
