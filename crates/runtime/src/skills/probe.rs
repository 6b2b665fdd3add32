//! The `probe` skill: a finite-state machine that pings an address in a default-protocol
//! dialogue of its own and waits for the same content to come back, trying again on a
//! timeout, and the handler that takes the answer into the dialogue. Its states:
//!
//! ```text
//!   ping --sent--> waiting --answered--> done
//!    ^                |  \--exhausted--> failed
//!    +----timeout-----+
//! ```
//!
//! Its dialogue references are digests of the skill's name, the attempt and the tick's
//! time, so a run after a crash replaying the ticks opens the same dialogues.

use super::behaviour::Tick;
use super::fsm::{FsmBehaviour, Stepped};
use super::{Skill, SkillContext};
use crate::default_protocol::Performative;
use crate::dialogue::Dialogues;
use crate::envelope::{Envelope, ProtocolId};
use crate::handlers::{decode_default, default_protocol_id, Handler, Inbound, Refusal};
use akledger::error::Error;
use akledger::id::{hex, DigestSuite};

/// The model's name.
const MODEL: &str = "probe";

/// How the probe paces itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Milliseconds between the machine's ticks.
    pub interval_ms: u64,
    /// Milliseconds to wait for an answer before trying again.
    pub timeout_ms: u64,
    /// Pings before giving up.
    pub attempts: u32,
}

/// What the machine and the handler share.
#[derive(Debug)]
struct Probe {
    to: String,
    content: Vec<u8>,
    dialogues: Dialogues,
    attempt: u32,
    /// The reference of the dialogue waiting for an answer, and when it was opened.
    waiting: Option<(String, u64)>,
    answered: bool,
}

/// The `probe` skill named `name`, pinging `to` with `content`.
pub fn probe(name: &str, to: &str, content: &[u8], timing: Timing) -> Result<Skill, Error> {
    let model = Probe {
        to: to.to_string(),
        content: content.to_vec(),
        dialogues: Dialogues::new(),
        attempt: 0,
        waiting: None,
        answered: false,
    };
    let attempts = timing.attempts.max(1);
    let timeout = timing.timeout_ms;
    let fsm = FsmBehaviour::new("fsm", timing.interval_ms, "ping")
        .state("ping", ping)
        .state(
            "waiting",
            move |tick: Tick, context: &mut SkillContext<'_>| {
                let Some(p) = context.models().get_mut::<Probe>(MODEL) else {
                    return Stepped::stay();
                };
                match p.waiting {
                    _ if p.answered => Stepped::on("answered"),
                    Some((_, at)) if tick.at.millis() >= at.saturating_add(timeout) => {
                        p.waiting = None;
                        Stepped::on(if p.attempt >= attempts {
                            "exhausted"
                        } else {
                            "timeout"
                        })
                    }
                    _ => Stepped::stay(),
                }
            },
        )
        .final_state("done")
        .final_state("failed")
        .transition("ping", "sent", "waiting")
        .transition("waiting", "answered", "done")
        .transition("waiting", "timeout", "ping")
        .transition("waiting", "exhausted", "failed");
    Skill::new(name)?
        .model(MODEL, model)
        .handler(Answers {
            protocol: default_protocol_id(),
        })?
        .behaviour(fsm)
}

/// The `ping` state: opens a dialogue.
fn ping(tick: Tick, context: &mut SkillContext<'_>) -> Stepped {
    let skill = context.skill_name().to_string();
    let address = context.address().to_string();
    let Some(p) = context.models().get_mut::<Probe>(MODEL) else {
        return Stepped::stay();
    };
    p.attempt += 1;
    let seed = format!("akledger probe {skill} {} {}", p.attempt, tick.at.millis());
    let nonce = hex(&DigestSuite::Blake3.digest(seed.as_bytes()));
    let Some(message) = p
        .dialogues
        .create(&p.to, &nonce, Performative::Bytes(p.content.clone()))
    else {
        return Stepped::stay();
    };
    p.waiting = Some((nonce, tick.at.millis()));
    let envelope = Envelope::new(&p.to, &address, default_protocol_id(), message.encode());
    Stepped::on("sent").sending(vec![envelope])
}

/// Takes the probed address's answers into the probe's dialogues; everything else is
/// another skill's business.
struct Answers {
    protocol: ProtocolId,
}

impl Handler for Answers {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal> {
        let Some(p) = context.models().get_mut::<Probe>(MODEL) else {
            return Ok(Vec::new());
        };
        let Ok(message) = decode_default(inbound.envelope) else {
            return Ok(Vec::new());
        };
        let ours = inbound.envelope.sender == p.to
            && p.waiting
                .as_ref()
                .is_some_and(|(nonce, _)| *nonce == message.dialogue_reference.0);
        if !ours
            || p.dialogues
                .update(&message, &inbound.envelope.sender, "")
                .is_none()
        {
            return Ok(Vec::new());
        }
        if message.performative == Performative::Bytes(p.content.clone()) {
            p.answered = true;
        }
        Ok(Vec::new())
    }
}
