//! Behaviours (seed 002): what a skill does of its own accord, run by the main loop's
//! `act()` when due: once, or every so often. A finite-state machine is in [`super::fsm`].

use super::SkillContext;
use crate::envelope::Envelope;
use akledger::time::Timestamp;

/// When a behaviour acts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Schedule {
    /// Once, at the first step of the runtime's first run (and never again: the tick is
    /// recorded).
    Once,
    /// At the first step, then whenever `interval_ms` milliseconds have passed since it
    /// last acted.
    Every {
        /// Milliseconds between ticks (at least 1).
        interval_ms: u64,
    },
}

/// One call to act.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tick {
    /// The tick's time: the step's clock reading, and the `created_at` of its tick event
    /// when it is recorded (what a run after a crash hands the behaviour again).
    pub at: Timestamp,
}

/// What one tick of a behaviour did.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Acted {
    /// Envelopes to send (each made an outbox event before it is written).
    pub sends: Vec<Envelope>,
    /// True when the behaviour (or a model) changed though nothing is sent. A tick that
    /// sends or changes something is recorded as an event, so that a run after a crash
    /// hands it to the behaviour again; a tick that does neither is not.
    pub changed: bool,
}

impl Acted {
    /// Nothing sent, nothing changed.
    pub fn idle() -> Acted {
        Acted::default()
    }

    /// Nothing sent, something changed.
    pub fn changed() -> Acted {
        Acted {
            sends: Vec::new(),
            changed: true,
        }
    }

    /// `sends` to send.
    pub fn send(sends: Vec<Envelope>) -> Acted {
        Acted {
            sends,
            changed: true,
        }
    }

    /// True when the tick must be recorded.
    pub fn is_recorded(&self) -> bool {
        self.changed || !self.sends.is_empty()
    }
}

/// A skill's pro-active part.
///
/// `act` must depend only on the ticks and inputs the skill had before it (see the module
/// doc of [`crate::skills`]): a run after a crash replays the recorded ticks to rebuild the
/// behaviour.
pub trait Behaviour: Send {
    /// Its name, unique within its skill (`[A-Za-z_][A-Za-z0-9_]*`).
    fn name(&self) -> &str;

    /// When it acts.
    fn schedule(&self) -> Schedule;

    /// Acts once.
    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Acted;

    /// True once it will never act again.
    fn is_done(&self) -> bool {
        false
    }

    /// Its state's name, when it has one (a state machine's), written into its tick
    /// records for the reader of the ledger.
    fn state(&self) -> Option<&str> {
        None
    }

    /// Why it cannot run as built (a state machine naming a state it lacks), if it cannot.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A behaviour's act as a closure.
type ActFn = Box<dyn FnMut(Tick, &mut SkillContext<'_>) -> Acted + Send>;

/// A behaviour that acts once.
pub struct OneShotBehaviour {
    name: String,
    act: ActFn,
    done: bool,
}

impl std::fmt::Debug for OneShotBehaviour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneShotBehaviour")
            .field("name", &self.name)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl OneShotBehaviour {
    /// A one-shot behaviour named `name` that does `act`.
    pub fn new(
        name: &str,
        act: impl FnMut(Tick, &mut SkillContext<'_>) -> Acted + Send + 'static,
    ) -> OneShotBehaviour {
        OneShotBehaviour {
            name: name.to_string(),
            act: Box::new(act),
            done: false,
        }
    }
}

impl Behaviour for OneShotBehaviour {
    fn name(&self) -> &str {
        &self.name
    }

    fn schedule(&self) -> Schedule {
        Schedule::Once
    }

    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Acted {
        self.done = true;
        let mut acted = (self.act)(tick, context);
        acted.changed = true;
        acted
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

/// A behaviour that acts every so often.
pub struct CyclicBehaviour {
    name: String,
    interval_ms: u64,
    act: ActFn,
}

impl std::fmt::Debug for CyclicBehaviour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CyclicBehaviour")
            .field("name", &self.name)
            .field("interval_ms", &self.interval_ms)
            .finish_non_exhaustive()
    }
}

impl CyclicBehaviour {
    /// A behaviour named `name` that does `act` every `interval_ms` milliseconds (at
    /// least 1).
    pub fn new(
        name: &str,
        interval_ms: u64,
        act: impl FnMut(Tick, &mut SkillContext<'_>) -> Acted + Send + 'static,
    ) -> CyclicBehaviour {
        CyclicBehaviour {
            name: name.to_string(),
            interval_ms: interval_ms.max(1),
            act: Box::new(act),
        }
    }
}

impl Behaviour for CyclicBehaviour {
    fn name(&self) -> &str {
        &self.name
    }

    fn schedule(&self) -> Schedule {
        Schedule::Every {
            interval_ms: self.interval_ms,
        }
    }

    fn act(&mut self, tick: Tick, context: &mut SkillContext<'_>) -> Acted {
        (self.act)(tick, context)
    }
}
