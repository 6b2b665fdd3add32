//! The runtime's skills: handing an input to every handler of its protocol, finding the
//! behaviours that are due, and acting.

use akledger::error::Error;
use akledger::time::Timestamp;

use super::behaviour::{Acted, Schedule, Tick};
use super::{Skill, SkillContext};
use crate::envelope::{Envelope, ProtocolId};
use crate::handlers::{Inbound, Refusal};

/// What the handlers of one protocol did with one input.
#[derive(Debug, Default)]
pub(crate) struct Reaction {
    /// The handlers that took it.
    pub(crate) handlers: usize,
    /// The answers, in skill order.
    pub(crate) sends: Vec<Envelope>,
    /// Why the others refused it.
    pub(crate) refusals: Vec<(String, Refusal)>,
}

/// A behaviour's place: `(skill, behaviour)` indexes.
pub(crate) type Place = (usize, usize);

/// The skills, in the order they were added, and when each behaviour last acted.
#[derive(Debug, Default)]
pub(crate) struct Skills {
    skills: Vec<Skill>,
    /// Per skill, per behaviour: the time of its last tick (in this run, or recorded).
    last: Vec<Vec<Option<Timestamp>>>,
}

impl Skills {
    /// Adds `skill`; skill names are unique.
    pub(crate) fn add(&mut self, skill: Skill) -> Result<(), Error> {
        if self.skills.iter().any(|s| s.name == skill.name) {
            return Err(Error::Misuse(format!("two skills named {}", skill.name)));
        }
        self.last.push(vec![None; skill.behaviours.len()]);
        self.skills.push(skill);
        Ok(())
    }

    /// True when there is no skill.
    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// True when some skill handles `protocol`.
    pub(crate) fn handles(&self, protocol: &ProtocolId) -> bool {
        self.skills
            .iter()
            .any(|s| s.handlers.iter().any(|h| h.protocol_id() == protocol))
    }

    /// Hands `inbound` to every handler of its protocol, skill by skill.
    pub(crate) fn react(&mut self, inbound: Inbound<'_>, address: &str) -> Reaction {
        let mut reaction = Reaction::default();
        for skill in &mut self.skills {
            let Some(handler) = skill
                .handlers
                .iter_mut()
                .find(|h| *h.protocol_id() == inbound.envelope.protocol_id)
            else {
                continue;
            };
            let mut context = SkillContext {
                skill: &skill.name,
                address,
                models: &mut skill.models,
            };
            match handler.handle(inbound, &mut context) {
                Ok(sends) => {
                    reaction.handlers += 1;
                    reaction.sends.extend(sends);
                }
                Err(refusal) => reaction.refusals.push((skill.name.clone(), refusal)),
            }
        }
        reaction
    }

    /// The behaviours due at `now`, in skill order.
    pub(crate) fn due(&self, now: Timestamp) -> Vec<Place> {
        let mut due = Vec::new();
        for (s, (skill, last)) in self.skills.iter().zip(&self.last).enumerate() {
            for (b, (behaviour, last)) in skill.behaviours.iter().zip(last).enumerate() {
                if behaviour.is_done() {
                    continue;
                }
                let is_due = match (behaviour.schedule(), last) {
                    (_, None) => true,
                    (Schedule::Once, Some(_)) => false,
                    (Schedule::Every { interval_ms }, Some(at)) => {
                        now.millis() >= at.millis().saturating_add(interval_ms)
                    }
                };
                if is_due {
                    due.push((s, b));
                }
            }
        }
        due
    }

    /// Acts the behaviour at `place` for `tick`.
    pub(crate) fn act(&mut self, place: Place, tick: Tick, address: &str) -> Acted {
        let (s, b) = place;
        let (Some(skill), Some(last)) = (self.skills.get_mut(s), self.last.get_mut(s)) else {
            return Acted::idle();
        };
        let (Some(behaviour), Some(last)) = (skill.behaviours.get_mut(b), last.get_mut(b)) else {
            return Acted::idle();
        };
        *last = Some(tick.at);
        let mut context = SkillContext {
            skill: &skill.name,
            address,
            models: &mut skill.models,
        };
        behaviour.act(tick, &mut context)
    }

    /// The behaviour named `behaviour` of the skill named `skill`.
    pub(crate) fn find(&self, skill: &str, behaviour: &str) -> Option<Place> {
        let s = self.skills.iter().position(|x| x.name == skill)?;
        let b = self
            .skills
            .get(s)?
            .behaviours
            .iter()
            .position(|x| x.name() == behaviour)?;
        Some((s, b))
    }

    /// `(skill name, behaviour name, state)` of the behaviour at `place`.
    pub(crate) fn names(&self, place: Place) -> Option<(&str, &str, Option<&str>)> {
        let skill = self.skills.get(place.0)?;
        let behaviour = skill.behaviours.get(place.1)?;
        Some((&skill.name, behaviour.name(), behaviour.state()))
    }
}
