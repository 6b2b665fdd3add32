//! A behaviour that is a finite-state machine (seed 002's FSM behaviour): states that act,
//! and transitions between them on the events their acts name.

use std::collections::{BTreeMap, BTreeSet};

use super::behaviour::{Acted, Behaviour, Schedule, Tick};
use super::SkillContext;
use crate::envelope::Envelope;

/// What one act of a state did.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Stepped {
    /// Envelopes to send.
    pub sends: Vec<Envelope>,
    /// The event that moves the machine on (`None`: it stays in this state).
    pub event: Option<String>,
    /// True when the state (or a model) changed though nothing is sent and no event is
    /// named (see [`Acted::changed`]).
    pub changed: bool,
}

impl Stepped {
    /// Stays, nothing sent, nothing changed.
    pub fn stay() -> Stepped {
        Stepped::default()
    }

    /// Moves on by `event`.
    pub fn on(event: &str) -> Stepped {
        Stepped {
            event: Some(event.to_string()),
            ..Stepped::default()
        }
    }

    /// Also sends `sends`.
    pub fn sending(mut self, sends: Vec<Envelope>) -> Stepped {
        self.sends = sends;
        self
    }
}

/// One state of a machine: it acts at every tick while current.
pub trait State: Send {
    /// Acts once.
    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Stepped;
}

impl<F> State for F
where
    F: FnMut(Tick, &mut SkillContext<'_>) -> Stepped + Send,
{
    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Stepped {
        self(tick, context)
    }
}

/// A finite-state machine behaviour: at each tick the current state acts, and the event it
/// names (if any) moves the machine along its transition; reaching a final state ends it.
///
/// # Examples
///
/// ```
/// use akledger_runtime::skills::{FsmBehaviour, SkillContext, Stepped};
///
/// let fsm = FsmBehaviour::new("door", 100, "closed")
///     .state("closed", |_tick, _context: &mut SkillContext<'_>| Stepped::on("push"))
///     .state("open", |_tick, _context: &mut SkillContext<'_>| Stepped::on("leave"))
///     .final_state("gone")
///     .transition("closed", "push", "open")
///     .transition("open", "leave", "gone");
/// # let _ = fsm;
/// ```
pub struct FsmBehaviour {
    name: String,
    interval_ms: u64,
    states: BTreeMap<String, Box<dyn State>>,
    finals: BTreeSet<String>,
    transitions: BTreeMap<(String, String), String>,
    current: String,
}

impl std::fmt::Debug for FsmBehaviour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsmBehaviour")
            .field("name", &self.name)
            .field("current", &self.current)
            .field("states", &self.states.keys().collect::<Vec<_>>())
            .field("finals", &self.finals)
            .field("transitions", &self.transitions)
            .finish()
    }
}

impl FsmBehaviour {
    /// A machine named `name` that ticks every `interval_ms` milliseconds (at least 1),
    /// starting in state `initial`.
    pub fn new(name: &str, interval_ms: u64, initial: &str) -> FsmBehaviour {
        FsmBehaviour {
            name: name.to_string(),
            interval_ms: interval_ms.max(1),
            states: BTreeMap::new(),
            finals: BTreeSet::new(),
            transitions: BTreeMap::new(),
            current: initial.to_string(),
        }
    }

    /// Adds the state `name`.
    pub fn state(mut self, name: &str, state: impl State + 'static) -> FsmBehaviour {
        self.states.insert(name.to_string(), Box::new(state));
        self
    }

    /// Adds the final state `name`: reaching it ends the machine.
    pub fn final_state(mut self, name: &str) -> FsmBehaviour {
        self.finals.insert(name.to_string());
        self
    }

    /// In state `from`, the event `event` moves the machine to state `to`.
    pub fn transition(mut self, from: &str, event: &str, to: &str) -> FsmBehaviour {
        self.transitions
            .insert((from.to_string(), event.to_string()), to.to_string());
        self
    }

    /// The current state.
    pub fn current(&self) -> &str {
        &self.current
    }

    fn known(&self, state: &str) -> bool {
        self.states.contains_key(state) || self.finals.contains(state)
    }
}

impl Behaviour for FsmBehaviour {
    fn name(&self) -> &str {
        &self.name
    }

    fn schedule(&self) -> Schedule {
        Schedule::Every {
            interval_ms: self.interval_ms,
        }
    }

    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Acted {
        let Some(state) = self.states.get_mut(&self.current) else {
            return Acted::idle();
        };
        let stepped = state.act(tick, context);
        let mut changed = stepped.changed;
        if let Some(event) = stepped.event {
            match self.transitions.get(&(self.current.clone(), event.clone())) {
                Some(next) => {
                    self.current.clone_from(next);
                    changed = true;
                }
                None => eprintln!(
                    "akledger: sidecar: skill {}: behaviour {}: no transition from {} on {event}; it stays",
                    context.skill, self.name, self.current
                ),
            }
        }
        Acted {
            sends: stepped.sends,
            changed,
        }
    }

    fn is_done(&self) -> bool {
        self.finals.contains(&self.current)
    }

    fn state(&self) -> Option<&str> {
        Some(&self.current)
    }

    fn check(&self) -> Result<(), String> {
        let unknown = |state: &str| format!("behaviour {}: no state named {state:?}", self.name);
        if !self.known(&self.current) {
            return Err(unknown(&self.current));
        }
        for ((from, _), to) in &self.transitions {
            if !self.states.contains_key(from) {
                return Err(unknown(from));
            }
            if !self.known(to) {
                return Err(unknown(to));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::Models;

    fn tick(ms: u64) -> Tick {
        Tick {
            at: akledger::time::Timestamp::from_millis(ms).unwrap(),
        }
    }

    #[test]
    fn a_machine_follows_its_transitions_to_a_final_state() {
        let mut fsm = FsmBehaviour::new("m", 10, "a")
            .state("a", |_t, _c: &mut SkillContext<'_>| Stepped::on("next"))
            .state("b", |_t, _c: &mut SkillContext<'_>| Stepped::stay())
            .state("c", |_t, _c: &mut SkillContext<'_>| Stepped::on("nowhere"))
            .final_state("z")
            .transition("a", "next", "b")
            .transition("c", "end", "z");
        assert_eq!(fsm.check(), Ok(()));
        let mut models = Models::default();
        let mut context = SkillContext {
            skill: "s",
            address: "sidecar",
            models: &mut models,
        };
        assert!(fsm.act(tick(1), &mut context).changed);
        assert_eq!(Behaviour::state(&fsm), Some("b"));
        assert!(!fsm.act(tick(2), &mut context).is_recorded(), "b stays");
        fsm.current = "c".into();
        assert!(
            !fsm.act(tick(3), &mut context).changed,
            "no such transition"
        );
        assert!(!fsm.is_done());
        fsm.current = "z".into();
        assert!(fsm.is_done());
    }

    #[test]
    fn a_machine_naming_unknown_states_is_refused() {
        let fsm = FsmBehaviour::new("m", 10, "a");
        assert!(fsm.check().unwrap_err().contains("\"a\""));
        let fsm = FsmBehaviour::new("m", 10, "a")
            .state("a", |_t, _c: &mut SkillContext<'_>| Stepped::stay())
            .transition("a", "go", "b");
        assert!(fsm.check().unwrap_err().contains("\"b\""));
    }
}
