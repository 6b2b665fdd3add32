//! The sidecar runtime through its binary on real files: the echo demo, the error skill,
//! a crash (SIGABRT from the test hook) between each pair of steps followed by a restart,
//! a clean stop on SIGTERM and SIGINT, and a scripted exchange run by the decision maker.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::support::{bin, json, p, run_ok, stdout};
use akledger_runtime::records::{read_record, Record};
use akledger_runtime::stub_format::{decode_record, split_records};
use akledger_runtime::{DefaultMessage, Envelope, Performative};

/// The binary's crash test hook: `<stage>[:<n>]` aborts the n-th time the runtime passes it.
const CRASH_AT_ENV: &str = "AKLEDGER_RUNTIME_CRASH_AT";

struct Sidecar {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    input: PathBuf,
    output: PathBuf,
}

impl Sidecar {
    fn new() -> Sidecar {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        Sidecar {
            _tmp: tmp,
            dir: root.join("ledger"),
            input: root.join("in.txt"),
            output: root.join("out.txt"),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = bin();
        c.args(["sidecar", "run", "--dir"])
            .arg(&self.dir)
            .arg("--input-file")
            .arg(&self.input)
            .arg("--output-file")
            .arg(&self.output)
            // These tests read the whole output afterwards: nobody empties it.
            .args(["--output-mode", "append"])
            .args(args)
            .env_remove(CRASH_AT_ENV);
        c
    }

    /// `sidecar run --once`, optionally crashing at a step; the exit status and stderr.
    fn once(&self, args: &[&str], crash_at: Option<&str>) -> (ExitStatus, String) {
        let mut c = self.command(args);
        c.arg("--once");
        if let Some(step) = crash_at {
            c.env(CRASH_AT_ENV, step);
        }
        let out = c.output().unwrap();
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn append(&self, bytes: &[u8]) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.input)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    fn sent(&self) -> Vec<Envelope> {
        read_envelopes(&self.output)
    }

    /// The ledger's `ak.message.create` events (each envelope in or out is one).
    fn message_events(&self) -> usize {
        let export = self.dir.with_extension("export.jsonl");
        run_ok(&["export", "--dir", p(&self.dir), "--out", p(&export)], 0);
        let text = std::fs::read_to_string(&export).unwrap();
        text.lines()
            .filter(|l| l.contains("\"kind\":\"ak.message.create\""))
            .count()
    }
}

fn read_envelopes(path: &Path) -> Vec<Envelope> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let split = split_records(&bytes);
    assert_eq!(split.consumed, bytes.len(), "the output is whole records");
    split
        .records
        .into_iter()
        .map(|r| decode_record(&bytes[r]).unwrap())
        .collect()
}

/// The AEA docs' echo demo line, as `echo` appends it (literal escapes).
const ECHO_DEMO: &[u8] =
    b"my_first_aea,sender_aea,fetchai/default:1.0.0,\\x12\\x10\\x08\\x01\\x12\\x011*\\t*\\x07\\n\\x05hello,\n";

fn echo_line(n: usize) -> Vec<u8> {
    let m = DefaultMessage::bytes(&format!("d{n}"), format!("hello {n}").into_bytes());
    let mut line = b"my_first_aea,sender_aea,fetchai/default:1.0.0,".to_vec();
    line.extend_from_slice(&m.encode());
    line.extend_from_slice(b",\n");
    line
}

fn bytes_content(e: &Envelope) -> (String, i32, i32, Vec<u8>) {
    let m = DefaultMessage::decode(&e.message).unwrap();
    let Performative::Bytes(content) = m.performative else {
        panic!("not bytes: {m:?}")
    };
    (m.dialogue_reference.0, m.message_id, m.target, content)
}

#[test]
fn the_echo_demo_through_files_bootstraps_mirrors_and_audits_clean() {
    let s = Sidecar::new();
    s.append(ECHO_DEMO);
    let (status, stderr) = s.once(&["--echo"], None);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("bootstrapped"), "{stderr}");
    assert!(stderr.contains("controller.key"), "{stderr}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(s.dir.join("controller.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(s.dir.join("keyring.json").exists());

    let sent = s.sent();
    assert_eq!(sent.len(), 1);
    let echo = &sent[0];
    assert_eq!(
        (echo.to.as_str(), echo.sender.as_str()),
        ("sender_aea", "my_first_aea")
    );
    assert_eq!(echo.protocol_id.as_str(), "fetchai/default:1.0.0");
    // AEA 1.x numbering: the responder's first message is -1, targeting message 1; the
    // responder reference is 64 hex digits.
    assert_eq!(bytes_content(echo), ("1".into(), -1, 1, b"hello".to_vec()));
    let m = DefaultMessage::decode(&echo.message).unwrap();
    assert_eq!(m.dialogue_reference.1.len(), 64);
    assert!(m
        .dialogue_reference
        .1
        .bytes()
        .all(|b| b.is_ascii_hexdigit()));

    // The same message as raw bytes (in a dialogue of its own: reference "2"), and a second
    // run that takes in only the new line.
    let mut raw = b"my_first_aea,sender_aea,fetchai/default:1.0.0,".to_vec();
    raw.extend_from_slice(b"\x12\x10\x08\x01\x12\x012*\t*\x07\n\x05hello,\n");
    s.append(&raw);
    let (status, stderr) = s.once(&["--echo"], None);
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("bootstrapped"));
    let sent = s.sent();
    assert_eq!(sent.len(), 2);
    assert_eq!(bytes_content(&sent[1]).3, b"hello");
    assert_eq!(s.message_events(), 4, "two envelopes in, two out");

    // The export audits clean, with the envelopes as events of the sidecar.
    let export = s.dir.with_extension("export.jsonl");
    let keyring = s.dir.join("keyring.json");
    let out = run_ok(
        &["audit", p(&export), "--keyring", p(&keyring), "--json"],
        0,
    );
    let report = json(&out);
    assert_eq!(report["summary"]["admitted"], 8, "{report}");
    assert_eq!(report["summary"]["rejected"], 0);
    assert_eq!(report["summary"]["pending"], 0);
    let shown = run_ok(
        &["log", "--kind", "ak.message.create", "--dir", p(&s.dir)],
        0,
    );
    assert_eq!(stdout(&shown).lines().count(), 4);
}

#[test]
fn the_error_skill_answers_what_cannot_be_handled() {
    let s = Sidecar::new();
    let not_protobuf = b"me,you,fetchai/default:1.0.0,hello,\n";
    let mut invalid = b"me,you,fetchai/default:1.0.0,".to_vec();
    invalid.extend_from_slice(
        &DefaultMessage {
            target: 5,
            ..DefaultMessage::bytes("1", b"x".to_vec())
        }
        .encode(),
    );
    invalid.extend_from_slice(b",\n");
    s.append(b"1,2,3,4,5,\n");
    s.append(not_protobuf);
    s.append(&invalid);
    s.append(b"me,you,someone/else:1.0.0,whatever,\n");
    let (status, stderr) = s.once(&["--echo"], None);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("bad formatted input"), "{stderr}");
    // Without --echo, the default protocol has no skill.
    s.append(&echo_line(1));
    let (status, _) = s.once(&[], None);
    assert!(status.success());
    let sent = s.sent();
    let addresses: Vec<(&str, &str)> = sent
        .iter()
        .map(|e| (e.to.as_str(), e.sender.as_str()))
        .collect();
    let back = ("you", "me");
    assert_eq!(
        addresses,
        vec![back, back, back, ("sender_aea", "my_first_aea")]
    );
    let codes: Vec<(String, i32)> = sent
        .iter()
        .map(
            |e| match DefaultMessage::decode(&e.message).unwrap().performative {
                Performative::Error { code, .. } => (e.protocol_id.to_string(), code as i32),
                other => panic!("{other:?}"),
            },
        )
        .collect();
    let default = "fetchai/default:1.0.0".to_string();
    assert_eq!(
        codes,
        // DECODING_ERROR, INVALID_MESSAGE, UNSUPPORTED_PROTOCOL, UNSUPPORTED_SKILL; the
        // malformed line gets nothing.
        vec![
            (default.clone(), 1),
            (default.clone(), 2),
            (default.clone(), 0),
            (default, 3)
        ]
    );
}

#[test]
fn a_crash_between_each_pair_of_steps_loses_nothing_and_repeats_nothing() {
    // The first marker is written by the recovery every run starts with; the second after
    // the envelopes.
    for step in ["received", "inbox", "outbox", "sent", "sent:3", "marker:2"] {
        let s = Sidecar::new();
        // Bootstrap first (a crash during bootstrap is not what this test is about).
        let (status, _) = s.once(&["--echo"], None);
        assert!(status.success());
        for n in 0..3 {
            s.append(&echo_line(n));
        }
        let (status, stderr) = s.once(&["--echo"], Some(step));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(6),
            "{step}: killed by SIGABRT: {stderr}"
        );
        let (status, stderr) = s.once(&["--echo"], None);
        assert!(status.success(), "{step}: {stderr}");
        let contents: Vec<Vec<u8>> = s.sent().iter().map(|e| bytes_content(e).3).collect();
        assert_eq!(
            contents,
            (0..3)
                .map(|n| format!("hello {n}").into_bytes())
                .collect::<Vec<_>>(),
            "{step}: each envelope echoed exactly once, in order"
        );
        assert_eq!(
            s.message_events(),
            6,
            "{step}: three in, three out, no twins"
        );
        // More input after the restart is taken in from where the ledger says.
        s.append(&echo_line(3));
        assert!(s.once(&["--echo"], None).0.success());
        assert_eq!(s.sent().len(), 4, "{step}");
        assert_eq!(s.message_events(), 8, "{step}");
    }
}

#[test]
fn a_crash_hook_naming_no_stage_is_a_usage_error() {
    let s = Sidecar::new();
    assert!(s.once(&["--echo"], None).0.success());
    for spec in ["nowhere", "sent:x"] {
        let (status, stderr) = s.once(&["--echo"], Some(spec));
        assert_eq!(status.code(), Some(2), "{spec}: {stderr}");
        assert!(stderr.contains("received, inbox, bridged"), "{stderr}");
    }
}

fn wait_for(mut done: impl FnMut() -> bool) {
    // A safety net against a hang, not a timing assertion.
    for _ in 0..3000 {
        if done() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("gave up waiting");
}

#[test]
fn sigterm_and_sigint_stop_the_runtime_cleanly_with_exit_0() {
    for signal in ["-TERM", "-INT"] {
        let s = Sidecar::new();
        let child = s
            .command(&["--echo"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // It follows the input as it grows.
        wait_for(|| s.dir.join("sidecar-runtime.json").exists());
        s.append(&echo_line(1));
        wait_for(|| s.sent().len() == 1);
        s.append(&echo_line(2));
        wait_for(|| s.sent().len() == 2);
        let killed = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("stopped"));
    }
}

/// An exchange envelope line from `sender` with a JSON message.
fn exchange_line(sender: &str, message: serde_json::Value) -> Vec<u8> {
    let mut line = format!("sidecar,{sender},akledger/exchange:1.0.0,").into_bytes();
    line.extend_from_slice(message.to_string().as_bytes());
    line.extend_from_slice(b",\n");
    line
}

/// What the sidecar sent, readably: (to, performative, exchange id, status, coordinator's
/// address or failure code).
fn reports(s: &Sidecar, from: usize) -> Vec<(String, String, String, String)> {
    s.sent()
        .iter()
        .skip(from)
        .map(|e| {
            assert_eq!(e.protocol_id.as_str(), "akledger/exchange:1.0.0", "{e:?}");
            let m: serde_json::Value = serde_json::from_slice(&e.message).unwrap();
            let p = &m["projection"];
            let status = p["status"].as_str().unwrap_or("-").to_string();
            let extra = p["failure_reason_code"].as_str().unwrap_or("").to_string();
            let x = m["exchange_id"]
                .as_str()
                .or(p["exchange_id"].as_str())
                .unwrap_or("-");
            (
                e.to.clone(),
                format!("{} {x}", m["performative"].as_str().unwrap()),
                status,
                extra,
            )
        })
        .collect()
}

fn row(to: &str, what: &str, status: &str, extra: &str) -> (String, String, String, String) {
    (to.into(), what.into(), status.into(), extra.into())
}

/// The controller requests, two agents reply, the decision maker closes; a coordinator
/// declared gone is replaced; an exchange left open past the timeout is failed — all
/// through the two files, with crashes at the bridge and decision steps on the way.
/// Bootstraps the sidecar and gives it `agents`, each with a key of its own (the addresses
/// whose exchange replies it signs, `DIR/<agent>.key`); their principals.
fn with_agents(s: &Sidecar, agents: &[&str]) -> Vec<String> {
    assert!(s.once(&[], None).0.success(), "bootstrap");
    let mut declared = Vec::new();
    let mut principals = Vec::new();
    for agent in agents {
        let key = s.dir.join(format!("{agent}.key"));
        let out = stdout(&run_ok(&["keygen", "--out", p(&key)], 0));
        let did = out
            .split_whitespace()
            .find(|w| w.starts_with("ak:did_core:"));
        principals.push(did.expect("keygen prints the principal").to_string());
        declared.push(serde_json::json!({"address": agent, "key_file": format!("{agent}.key")}));
    }
    let config_path = s.dir.join("sidecar-runtime.json");
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config_path).unwrap()).unwrap();
    config["agents"] = declared.into();
    std::fs::write(&config_path, config.to_string()).unwrap();
    principals
}

#[test]
fn a_scripted_exchange_runs_through_files_and_the_decision_maker_closes_it() {
    let s = Sidecar::new();
    with_agents(&s, &["agent_a", "agent_b"]);

    // 1. A request to both agents (agent_a coordinates), agent_b's partial answer, and
    // agent_a's completing answer; the run crashes right after the request is in the
    // ledger and is restarted.
    let x1 = "order-000000000000000001";
    s.append(&exchange_line(
        "controller",
        serde_json::json!({
        "performative": "request", "exchange_id": x1, "agents": ["agent_a", "agent_b"],
        "coordinator": "agent_a", "track": "orders", "body": {"sku": "A-1", "qty": 2}}),
    ));
    s.append(&exchange_line(
        "agent_b",
        serde_json::json!({
        "performative": "respond", "exchange_id": x1, "body": "picked"}),
    ));
    s.append(&exchange_line(
        "agent_a",
        serde_json::json!({
        "performative": "respond", "exchange_id": x1, "body": "shipped", "completes": true}),
    ));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(s.once(&[], Some("bridged")).0.signal(), Some(6));
    let (status, stderr) = s.once(&[], None);
    assert!(status.success(), "{stderr}");
    assert_eq!(
        reports(&s, 0),
        vec![
            row("agent_a", &format!("request {x1}"), "-", ""),
            row("agent_b", &format!("request {x1}"), "-", ""),
            row("controller", &format!("projection {x1}"), "delivered", ""),
            row("agent_b", &format!("projection {x1}"), "responding", ""),
            row("agent_a", &format!("projection {x1}"), "responding", ""),
            // The decision maker's close, reported to the controller.
            row("controller", &format!("projection {x1}"), "complete", ""),
        ]
    );

    // 2. Another request; the controller declares agent_a gone; the decision maker hands
    // the exchange to agent_b, who completes it; the run crashes right after the close.
    let x2 = "order-000000000000000002";
    s.append(&exchange_line(
        "controller",
        serde_json::json!({
        "performative": "request", "exchange_id": x2, "agents": ["agent_a", "agent_b"],
        "coordinator": "agent_a", "body": "order 2"}),
    ));
    s.append(&exchange_line(
        "controller",
        serde_json::json!({
        "performative": "coordinator_gone", "agent": "agent_a"}),
    ));
    assert!(s.once(&[], None).0.success());
    let before = s.sent().len();
    s.append(&exchange_line(
        "agent_b",
        serde_json::json!({
        "performative": "respond", "exchange_id": x2, "body": "done by b", "completes": true}),
    ));
    assert_eq!(s.once(&[], Some("decided")).0.signal(), Some(6));
    assert!(s.once(&[], None).0.success());
    let tail = reports(&s, before - 1);
    assert_eq!(tail[0].2, "delivered", "after the reassignment: {tail:?}");
    assert_eq!(
        tail[1..],
        [
            row("agent_b", &format!("projection {x2}"), "responding", ""),
            row("controller", &format!("projection {x2}"), "complete", ""),
        ]
    );
    let projection = |x: &str| json(&run_ok(&["exchange", x, "--json", "--dir", p(&s.dir)], 0));
    let p2 = projection(x2);
    let agent_b = p2["participating_agent_ids"][0].clone();
    assert_eq!(
        p2["coordinator_agent_id"], agent_b,
        "reassigned to agent_b: {p2}"
    );
    assert_ne!(
        p2["coordinator_assignment_event_id"],
        p2["request_event_id"]
    );
    assert_eq!(p2["status"], "complete");

    // 3. With a timeout of zero, an exchange nobody answers is failed at once.
    let config_path = s.dir.join("sidecar-runtime.json");
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config_path).unwrap()).unwrap();
    config["timeout_secs"] = serde_json::json!(0);
    config["timeout_code"] = serde_json::json!("nobody_answered");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let x3 = "order-000000000000000003";
    s.append(&exchange_line(
        "controller",
        serde_json::json!({
        "performative": "request", "exchange_id": x3, "agents": ["agent_b"], "body": "order 3"}),
    ));
    assert!(s.once(&[], None).0.success());
    let p3 = projection(x3);
    assert_eq!(
        (p3["status"].as_str(), p3["failure_reason_code"].as_str()),
        (Some("failed"), Some("nobody_answered"))
    );
    let last = reports(&s, 0).pop().unwrap();
    assert_eq!(
        last,
        row(
            "controller",
            &format!("projection {x3}"),
            "failed",
            "nobody_answered"
        )
    );

    // Refusals come back through the error skill: a request from an agent, a response
    // from an address the runtime holds no key for.
    let before = s.sent().len();
    s.append(&exchange_line("agent_a", serde_json::json!({
        "performative": "request", "exchange_id": "order-000000000000000004", "agents": ["agent_b"], "body": 1})));
    s.append(&exchange_line(
        "stranger",
        serde_json::json!({
        "performative": "respond", "exchange_id": x1, "body": "me too"}),
    ));
    assert!(s.once(&[], None).0.success());
    let errors: Vec<i32> = s.sent()[before..]
        .iter()
        .map(
            |e| match DefaultMessage::decode(&e.message).unwrap().performative {
                Performative::Error { code, .. } => code as i32,
                other => panic!("{other:?}"),
            },
        )
        .collect();
    assert_eq!(errors, vec![2, 2], "INVALID_MESSAGE twice");
}

#[test]
fn a_configuration_that_cannot_run_is_refused_by_name_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ledger");
    let (input, output) = (tmp.path().join("in"), tmp.path().join("out"));
    let once = [
        "sidecar",
        "run",
        "--once",
        "--dir",
        p(&dir),
        "--input-file",
        p(&input),
        "--output-file",
        p(&output),
    ];
    run_ok(&once, 0);
    let path = dir.join("sidecar-runtime.json");
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let events = crate::support::len(&dir);
    let cases = [
        (
            serde_json::json!({"connections": [{"name": "x", "kind": "carrier-pigeon"}]}),
            "kind \"carrier-pigeon\" is not stub, tcp or link",
        ),
        (
            serde_json::json!({"connections": [{"name": "x", "kind": "link", "connect": "127.0.0.1:1"}]}),
            "peer is missing",
        ),
        (
            serde_json::json!({"connections": [{"name": "x", "kind": "link", "listen": "127.0.0.1:1", "connect": "127.0.0.1:2", "peer": "x"}]}),
            "either listen or connect",
        ),
        (
            serde_json::json!({"connections": [{"name": "x", "kind": "tcp", "listen": "nowhere"}]}),
            "listen",
        ),
        (
            serde_json::json!({"routes": {"agent_b": "nosuch"}}),
            "no connection named \"nosuch\"",
        ),
        (
            serde_json::json!({"skills": [{"name": "s", "kind": "telepathy"}]}),
            "telepathy",
        ),
        (
            serde_json::json!({"timeout_secs": -1}),
            "timeout_secs is not a non-negative integer",
        ),
    ];
    for (change, expected) in cases {
        let mut config = good.clone();
        for (k, v) in change.as_object().unwrap() {
            config[k] = v.clone();
        }
        std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
        let out = run_ok(&once, 2);
        let said = crate::support::stderr(&out);
        assert!(said.contains(expected), "{change}: {said}");
        assert!(
            said.contains("sidecar-runtime.json"),
            "names the file: {said}"
        );
        assert_eq!(
            crate::support::len(&dir),
            events,
            "{change}: nothing written"
        );
    }
}

#[test]
fn no_input_stops_the_pipeline_a_giant_exchange_envelope_or_megabytes_of_blank_lines() {
    let s = Sidecar::new();
    with_agents(&s, &["agent_a"]);
    // A 300 KB exchange request (within the record bound; it once made every run exit 2),
    // then 4 MB of blank lines (once quadratic: hours), then the echo demo: the request is
    // delivered, the blank lines skipped in one linear pass, the echo answered, and a
    // later run goes on.
    let body = "x".repeat(300 << 10);
    s.append(&exchange_line(
        "controller",
        serde_json::json!({"performative": "request", "exchange_id": "order-000000000000000009",
                           "agents": ["agent_a"], "body": body}),
    ));
    s.append(&b"\n".repeat(4 << 20));
    s.append(ECHO_DEMO);
    let (status, stderr) = s.once(&["--echo"], None);
    assert!(status.success(), "{stderr}");
    let sent = s.sent();
    let echoes: Vec<_> = sent.iter().filter(|e| e.to == "sender_aea").collect();
    assert_eq!(echoes.len(), 1, "{stderr}");
    assert_eq!(bytes_content(echoes[0]).3, b"hello");
    let delivered: Vec<_> = sent.iter().filter(|e| e.to == "agent_a").collect();
    assert_eq!(delivered.len(), 1, "the request delivered: {stderr}");
    assert!(delivered[0].message.len() > 300 << 10);
    let (status, stderr) = s.once(&["--echo"], None);
    assert!(status.success(), "a restart goes on too: {stderr}");
    assert_eq!(s.sent().len(), sent.len(), "nothing taken in twice");
}

/// Every file under `dir` (recursively) whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
        {
            found.push(path);
        }
    }
    found
}

/// The runtime's records in the sidecar's ledger, decrypted with its keyring, each with
/// its plaintext.
fn records(s: &Sidecar) -> Vec<(Vec<u8>, Option<Record>)> {
    let ledger = akledger::Ledger::open_with(
        akledger::ledger::Config::new(&s.dir).keyring_file(s.dir.join("keyring.json")),
    )
    .unwrap();
    let keyring = ledger.verifier().keyring();
    ledger
        .iter()
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let akledger::Body::SidecarMessage { encrypted } = e.body() else {
                return None;
            };
            let sidecar = e.scope().sidecar_id()?;
            let bytes =
                akledger::exchange::classify::decrypt(&sidecar, &e, &keyring, encrypted).unwrap();
            let body = akledger::exchange::MessagePlaintext::parse(&bytes)
                .unwrap()
                .body;
            Some((bytes, read_record(&body)))
        })
        .collect()
}

/// A skill whose request and response each carry a redacted field, through the bridge:
/// the request and response events commit to the values, and the runtime's inbox and
/// outbox records of those envelopes withhold their messages, which crash recovery (after
/// the outbox is appended, and after the inbox is) reads back from the disclosure store.
/// The agent gets the values it needs; the ledger directory holds them only in the
/// disclosure store.
#[test]
fn envelopes_of_a_skill_with_redacted_fields_stay_off_the_ledger_and_survive_a_crash() {
    let s = Sidecar::new();
    let agent = with_agents(&s, &["agent_a"]).remove(0);
    let model = s.dir.join("model.json");
    std::fs::write(
        &model,
        serde_json::json!({"id": format!("{agent}#1"), "skills": {"skills": [{
            "subject": "travel", "actions": [{"action": "book",
                "input": ["destination", {"name": "passport", "optional": false, "redacted": true}],
                "output": ["seat", {"name": "ticket", "optional": false, "redacted": true}]}]}]}})
        .to_string(),
    )
    .unwrap();
    let key = s.dir.join("agent_a.key");
    run_ok(
        &[
            "actor",
            "publish",
            "--dir",
            p(&s.dir),
            "--key",
            p(&key),
            "--model",
            p(&model),
        ],
        0,
    );
    let (passport, ticket) = ("P-SECRET-4417", "T-SECRET-0099");
    let x = "trip-000000000000000001";
    s.append(&exchange_line(
        "controller",
        serde_json::json!({"performative": "request", "exchange_id": x, "agents": ["agent_a"],
            "skill": "travel/book", "data": {"destination": "Lyon", "passport": passport},
            "body": "book it"}),
    ));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(s.once(&[], Some("outbox")).0.signal(), Some(6));
    // Without its disclosure store, the runtime cannot write what it owes, and says so
    // rather than lose it.
    let store = s.dir.join("disclosures.jsonl");
    let aside = s.dir.with_extension("disclosures.aside");
    std::fs::rename(&store, &aside).unwrap();
    let (status, stderr) = s.once(&[], None);
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("no disclosure that opens"), "{stderr}");
    std::fs::rename(&aside, &store).unwrap();
    let (status, stderr) = s.once(&[], None);
    assert!(status.success(), "{stderr}");
    // The agent got the request with the values it needs, once.
    let delivered: Vec<serde_json::Value> = s
        .sent()
        .iter()
        .filter(|e| e.to == "agent_a")
        .map(|e| serde_json::from_slice(&e.message).unwrap())
        .collect();
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert_eq!(delivered[0]["skill"], "travel/book");
    assert_eq!(delivered[0]["data"]["passport"], passport);

    s.append(&exchange_line(
        "agent_a",
        serde_json::json!({"performative": "respond", "exchange_id": x, "completes": true,
            "skill": "travel/book", "data": {"seat": "12A", "ticket": ticket}}),
    ));
    assert_eq!(s.once(&[], Some("inbox")).0.signal(), Some(6));
    let (status, stderr) = s.once(&[], None);
    assert!(status.success(), "{stderr}");
    let projection = json(&run_ok(&["exchange", x, "--json", "--dir", p(&s.dir)], 0));
    assert_eq!(projection["status"], "complete", "{projection}");

    // Each envelope naming the skill was recorded withheld: the request and the response
    // in, the delivery out; none of the runtime's plaintexts holds a value.
    let records = records(&s);
    let withheld = records
        .iter()
        .filter(|(_, r)| {
            matches!(
                r,
                Some(
                    Record::Inbox {
                        withheld: Some(_),
                        ..
                    } | Record::Outbox {
                        withheld: Some(_),
                        ..
                    }
                )
            )
        })
        .count();
    assert_eq!(withheld, 3, "request in, delivery out, response in");
    for (plaintext, record) in &records {
        let message = match record {
            Some(Record::Inbox { envelope, .. } | Record::Outbox { envelope, .. }) => {
                envelope.message.clone()
            }
            _ => Vec::new(),
        };
        for secret in [passport, ticket] {
            for bytes in [plaintext, &message] {
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{secret} in {}",
                    String::from_utf8_lossy(plaintext)
                );
            }
        }
    }
    for secret in [passport, ticket] {
        let holding = files_holding(&s.dir, secret.as_bytes());
        assert_eq!(
            holding,
            vec![s.dir.join("disclosures.jsonl")],
            "{secret} is only in the disclosure store"
        );
    }
    // The response's own disclosure opens its commitment.
    let store = std::fs::read_to_string(s.dir.join("disclosures.jsonl")).unwrap();
    let response = store
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|d| d["field"] == "ticket")
        .and_then(|d| d["event_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("the ticket's disclosure in {store}"));
    let disclosure = run_ok(&["disclose", "--dir", p(&s.dir), &response, "ticket"], 0);
    assert_eq!(json(&disclosure)["value"], ticket);
    let file = s.dir.with_extension("ticket.json");
    std::fs::write(&file, &disclosure.stdout).unwrap();
    run_ok(&["verify-disclosure", "--dir", p(&s.dir), p(&file)], 0);
}
