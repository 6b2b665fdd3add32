//! The skills a configuration names, in a runtime: the `probe` state machine answered and
//! unanswered (its pings counted in the output), and `notices`, which the decision maker's
//! internal messages reach through `update()` when it closes an exchange.

use crate::support::written;
use std::path::Path;

use akledger::canonical::{parse_value, Json};
use akledger::ed25519_dalek::SigningKey;
use akledger::ledger::Ledger;
use akledger::time::Timestamp;
use akledger_runtime::dialogue::Dialogues;
use akledger_runtime::skills::{SkillCatalog, SkillDeclaration};
use akledger_runtime::stub_format::encode_record;
use akledger_runtime::{
    bootstrap, DefaultMessage, Envelope, Identity, OutputMode, Performative, ProtocolId, Runtime,
    RuntimeConfig, StubConnection,
};

fn skill(name: &str, kind: &str, settings: &str) -> akledger_runtime::skills::Skill {
    SkillCatalog::builtin()
        .build(&SkillDeclaration {
            name: name.into(),
            kind: kind.into(),
            settings: parse_value(settings.as_bytes()).unwrap(),
        })
        .unwrap()
}

fn runtime_of<'l>(ledger: &'l Ledger, config: RuntimeConfig, dir: &Path) -> Runtime<'l> {
    let stub =
        StubConnection::open_with(&dir.join("in"), &dir.join("out"), OutputMode::Append).unwrap();
    Runtime::new(ledger, stub, config).unwrap()
}

fn at(t0: Timestamp, ms: u64) -> Timestamp {
    Timestamp::from_millis(t0.millis() + ms).unwrap()
}

const PROBE: &str =
    r#"{"to":"agent","content":"are you there","interval_ms":10,"timeout_ms":50,"attempts":3}"#;

#[test]
fn an_answered_probe_stops_pinging() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
    let config = bootstrap(&ledger, SigningKey::from_bytes(&[11; 32])).unwrap();
    let me = config.address.clone();
    let mut runtime = runtime_of(&ledger, config, dir.path());
    runtime
        .add_skill(skill("reachable", "probe", PROBE))
        .unwrap();
    let t0 = Timestamp::now();
    runtime.step(at(t0, 0)).unwrap();
    runtime.step(at(t0, 10)).unwrap();
    let out = written(&dir.path().join("out"));
    assert_eq!(out.len(), 1, "one ping, then waiting");
    let ping = &out[0];
    assert_eq!(
        (ping.to.as_str(), ping.sender.as_str()),
        ("agent", me.as_str())
    );

    // The agent echoes it in its dialogue, as AEA's echo skill would.
    let message = DefaultMessage::decode(&ping.message).unwrap();
    assert_eq!(
        message.performative,
        Performative::Bytes(b"are you there".to_vec())
    );
    let mut dialogues = Dialogues::new();
    let dialogue = dialogues.update(&message, &me, "agent-nonce").unwrap();
    let echo = dialogues
        .reply(&dialogue, message.message_id, message.performative.clone())
        .unwrap();
    let answer = Envelope::new(&me, "agent", ping.protocol_id.clone(), echo.encode());
    std::fs::write(dir.path().join("in"), encode_record(&answer)).unwrap();
    for ms in (20..500).step_by(10) {
        runtime.step(at(t0, ms)).unwrap();
    }
    assert_eq!(
        written(&dir.path().join("out")).len(),
        1,
        "done: no ping since"
    );
}

#[test]
fn an_unanswered_probe_gives_up_after_its_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
    let config = bootstrap(&ledger, SigningKey::from_bytes(&[12; 32])).unwrap();
    let mut runtime = runtime_of(&ledger, config.clone(), dir.path());
    runtime
        .add_skill(skill("reachable", "probe", PROBE))
        .unwrap();
    let t0 = Timestamp::now();
    for ms in (0..150).step_by(10) {
        runtime.step(at(t0, ms)).unwrap();
    }
    let sent = written(&dir.path().join("out"));
    assert_eq!(sent.len(), 3, "a ping every 50 ms");
    drop(runtime);
    // Started again, the replayed ticks leave it failed: nothing more is sent.
    let mut runtime = runtime_of(&ledger, config, dir.path());
    runtime
        .add_skill(skill("reachable", "probe", PROBE))
        .unwrap();
    for ms in (150..600).step_by(10) {
        runtime.step(at(t0, ms)).unwrap();
    }
    assert_eq!(written(&dir.path().join("out")), sent);
}

fn exchange(sender: &str, body: &str) -> Envelope {
    let protocol = ProtocolId::parse("akledger/exchange:1.0.0").unwrap();
    Envelope::new("sidecar", sender, protocol, body.as_bytes().to_vec())
}

#[test]
fn notices_hears_each_control_the_decision_maker_authors() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
    let mut config = bootstrap(&ledger, SigningKey::from_bytes(&[13; 32])).unwrap();
    config.agents.push(Identity {
        address: "agent_a".into(),
        key: SigningKey::from_bytes(&[14; 32]),
    });
    let mut runtime = runtime_of(&ledger, config, dir.path());
    runtime
        .add_skill(skill("watch", "notices", r#"{"to":"watcher"}"#))
        .unwrap();
    let id = "order-000000000000000001";
    let lines = [
        exchange(
            "controller",
            &format!(
                r#"{{"performative":"request","exchange_id":"{id}","agents":["agent_a"],"body":"ship it"}}"#
            ),
        ),
        exchange(
            "agent_a",
            &format!(
                r#"{{"performative":"respond","exchange_id":"{id}","body":"shipped","completes":true}}"#
            ),
        ),
    ];
    let input: Vec<u8> = lines.iter().flat_map(encode_record).collect();
    std::fs::write(dir.path().join("in"), input).unwrap();
    let report = runtime.step(Timestamp::now()).unwrap();
    assert_eq!(report.controls, 1, "the decision maker closed the exchange");

    let notices: Vec<_> = written(&dir.path().join("out"))
        .into_iter()
        .filter(|e| e.to == "watcher")
        .collect();
    assert_eq!(notices.len(), 1);
    let message = DefaultMessage::decode(&notices[0].message).unwrap();
    assert_eq!((message.message_id, message.target), (1, 0));
    let Performative::Bytes(content) = message.performative else {
        panic!("{message:?}")
    };
    let notice = parse_value(&content).unwrap();
    let field = |k: &str| notice.as_object().unwrap().get(k).cloned();
    assert_eq!(field("performative"), Some(Json::from("control")));
    let control = field("control").unwrap();
    let text = String::from_utf8(akledger::canonical::to_canonical(&control)).unwrap();
    assert!(text.contains(id) && text.contains("close"), "{text}");
}
