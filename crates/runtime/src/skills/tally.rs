//! The `tally` skill: a handler that counts default-protocol envelopes per sender and never
//! answers (so it sits beside the echo skill on one protocol), and a cyclic behaviour that
//! writes the count into its tick record whenever it changed.

use std::collections::BTreeMap;

use super::behaviour::{Acted, Behaviour, Schedule, Tick};
use super::{Skill, SkillContext};
use crate::envelope::{Envelope, ProtocolId};
use crate::handlers::{default_protocol_id, Handler, Inbound, Refusal};
use akledger::error::Error;

/// The model's name.
const MODEL: &str = "tally";

/// Envelopes counted, per sender.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Per sender address.
    pub by_sender: BTreeMap<String, u64>,
    /// In all.
    pub total: u64,
}

/// The `tally` skill, reporting every `interval_ms`.
pub fn tally(name: &str, interval_ms: u64) -> Result<Skill, Error> {
    Skill::new(name)?
        .model(MODEL, Tally::default())
        .handler(Counter {
            protocol: default_protocol_id(),
        })?
        .behaviour(Report {
            interval_ms,
            reported: 0,
            summary: String::from("nothing yet"),
        })
}

/// Counts.
struct Counter {
    protocol: ProtocolId,
}

impl Handler for Counter {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal> {
        if let Some(tally) = context.models().get_mut::<Tally>(MODEL) {
            *tally
                .by_sender
                .entry(inbound.envelope.sender.clone())
                .or_default() += 1;
            tally.total += 1;
        }
        Ok(Vec::new())
    }
}

/// Writes the count into its tick's `state` when it changed.
struct Report {
    interval_ms: u64,
    reported: u64,
    summary: String,
}

impl Behaviour for Report {
    fn name(&self) -> &str {
        "report"
    }

    fn schedule(&self) -> Schedule {
        Schedule::Every {
            interval_ms: self.interval_ms,
        }
    }

    fn act(&mut self, _tick: Tick, context: &mut SkillContext<'_>) -> Acted {
        let Some(tally) = context.models().get::<Tally>(MODEL) else {
            return Acted::idle();
        };
        if tally.total == self.reported {
            return Acted::idle();
        }
        self.reported = tally.total;
        self.summary = format!(
            "{} envelopes from {} senders",
            tally.total,
            tally.by_sender.len()
        );
        Acted::changed()
    }

    fn state(&self) -> Option<&str> {
        Some(&self.summary)
    }
}
