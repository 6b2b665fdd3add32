//! Skills inside a runtime: several handling one protocol, one-shot and cyclic behaviours
//! whose ticks are recorded, and a restart that rebuilds their state from the ledger
//! without sending anything twice.

use std::path::Path;

use akledger::ed25519_dalek::SigningKey;
use akledger::ledger::Ledger;
use akledger::time::Timestamp;
use akledger_runtime::handlers::reply;
use akledger_runtime::skills::{Acted, CyclicBehaviour, OneShotBehaviour, Skill, SkillContext};
use akledger_runtime::stub_format::encode_record;

use crate::support::written;
use akledger_runtime::{
    bootstrap, Envelope, Handler, Inbound, OutputMode, ProtocolId, Refusal, Runtime, RuntimeConfig,
    StubConnection,
};

fn ask_protocol() -> ProtocolId {
    ProtocolId::parse("test/ask:1.0.0").unwrap()
}

/// Answers every `test/ask` envelope with its skill's name and how many it answered.
struct Answer {
    protocol: ProtocolId,
}

impl Handler for Answer {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal> {
        let answered = context.models().get_mut::<u32>("answered").unwrap();
        *answered += 1;
        let count = *answered;
        let text = format!("{} {count}", context.skill_name());
        Ok(vec![reply(
            inbound.envelope,
            self.protocol.clone(),
            text.into_bytes(),
        )])
    }
}

fn note(text: String) -> Envelope {
    Envelope::new("agent", "sidecar", ask_protocol(), text.into_bytes())
}

/// The skills, built afresh as a program would at every start.
fn skills() -> Vec<Skill> {
    let answering = |name: &str| {
        Skill::new(name)
            .unwrap()
            .model("answered", 0u32)
            .handler(Answer {
                protocol: ask_protocol(),
            })
            .unwrap()
    };
    let greeter = Skill::new("greeter")
        .unwrap()
        .behaviour(OneShotBehaviour::new("hello", |_, _| {
            Acted::send(vec![note("hello".into())])
        }))
        .unwrap();
    let counter = Skill::new("counter")
        .unwrap()
        .model("n", 0u32)
        .behaviour(CyclicBehaviour::new(
            "count",
            10,
            |tick, context: &mut SkillContext<'_>| {
                let n = context.models().get_mut::<u32>("n").unwrap();
                *n += 1;
                // Every other tick only counts: recorded (it changed), nothing sent.
                if *n % 2 == 0 {
                    Acted::changed()
                } else {
                    Acted::send(vec![note(format!("count {n} at {}", tick.at.millis()))])
                }
            },
        ))
        .unwrap();
    vec![answering("left"), answering("right"), greeter, counter]
}

fn runtime<'l>(ledger: &'l Ledger, config: &RuntimeConfig, dir: &Path) -> Runtime<'l> {
    let stub =
        StubConnection::open_with(&dir.join("in"), &dir.join("out"), OutputMode::Append).unwrap();
    let mut runtime = Runtime::new(ledger, stub, config.clone()).unwrap();
    for skill in skills() {
        runtime.add_skill(skill).unwrap();
    }
    runtime
}

fn texts(path: &Path) -> Vec<String> {
    written(path)
        .into_iter()
        .map(|e| String::from_utf8(e.message).unwrap())
        .collect()
}

fn at(t0: Timestamp, ms: u64) -> Timestamp {
    Timestamp::from_millis(t0.millis() + ms).unwrap()
}

#[test]
fn behaviours_tick_on_schedule_and_a_restart_repeats_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
    let config = bootstrap(&ledger, SigningKey::from_bytes(&[8; 32])).unwrap();
    let t0 = Timestamp::now();
    let out = dir.path().join("out");

    let mut first = runtime(&ledger, &config, dir.path());
    // Ticks at 0, 10, 20 and 30 ms; the steps between them find the counter not due.
    for ms in [0, 5, 10, 15, 20, 30] {
        first.step(at(t0, ms)).unwrap();
    }
    let ms = t0.millis();
    assert_eq!(
        texts(&out),
        [
            "hello".to_string(),
            format!("count 1 at {ms}"),
            format!("count 3 at {}", ms + 20)
        ]
    );
    let events = ledger.len();
    drop(first);

    // Started again: the four recorded ticks rebuild the counter (n = 4) and the greeter
    // (done), and nothing is sent again.
    let mut second = runtime(&ledger, &config, dir.path());
    second.step(at(t0, 35)).unwrap();
    assert_eq!(texts(&out).len(), 3);
    assert_eq!(
        ledger.len(),
        events,
        "a step with nothing due records nothing"
    );
    second.step(at(t0, 40)).unwrap();
    assert_eq!(
        texts(&out).last().unwrap(),
        &format!("count 5 at {}", ms + 40)
    );

    // Two skills handle one protocol: each answers, each with its own state.
    let ask = Envelope::new("sidecar", "agent", ask_protocol(), b"?".to_vec());
    std::fs::write(dir.path().join("in"), encode_record(&ask)).unwrap();
    second.step(at(t0, 41)).unwrap();
    let answers = texts(&out).split_off(4);
    assert_eq!(answers, ["left 1", "right 1"]);
}
