//! Skills (seed 002): pluggable units of an agent's logic, each with handlers (one per
//! protocol: the reactive part), behaviours (one-shot, cyclic, finite-state machines: the
//! pro-active part) and models (state its handlers and behaviours share, through the
//! [`SkillContext`]).
//!
//! The runtime's main loop calls, every step: `act()`, each behaviour that is due;
//! `react()`, every handler registered for the protocol of each envelope taken in (skills
//! are arranged horizontally: several may handle one protocol, each with its own state);
//! `update()`, the handlers of [`DECISION_PROTOCOL_ID`] with the decision maker's internal
//! messages (each control it authored).
//!
//! **Determinism is what makes a skill survive a crash.** The runtime keeps no skill state
//! on disk. It records every input before a skill sees it (an envelope as an inbox event, a
//! tick as a tick event, a control as itself) and on start hands the skills every recorded
//! input again, in ledger order, dropping the answers already sent. So a handler must
//! answer from the inputs before it alone, and a behaviour's `act` likewise; a tick after
//! which a behaviour sends nothing and changes nothing is not recorded
//! ([`Acted::changed`]).
//!
//! - [`Handler`]: the reactive trait, in [`crate::handlers`].
//! - [`behaviour`]: [`Behaviour`], [`OneShotBehaviour`], [`CyclicBehaviour`];
//!   [`fsm`]: [`FsmBehaviour`].
//! - [`models`]: the [`Models`] a skill keeps.
//! - [`builtin`]: the skills a configuration file can name, and the [`SkillCatalog`].

pub mod behaviour;
pub mod builtin;
pub mod fsm;
pub mod models;
mod notices;
mod probe;
pub(crate) mod registry;
mod tally;

pub use behaviour::{Acted, Behaviour, CyclicBehaviour, OneShotBehaviour, Schedule, Tick};
pub use builtin::{SkillCatalog, SkillDeclaration};
pub use fsm::{FsmBehaviour, State, Stepped};
pub use models::Models;

use crate::envelope::ProtocolId;
use crate::handlers::Handler;
use akledger::error::Error;

/// The internal protocol of the decision maker's messages to skills
/// (`akledger/decision:1.0.0`): one message per control it authored, as canonical JSON
/// `{"performative":"control","control_event_id":ID,"control":C}` with `C` the control's
/// plaintext (PROFILE §8.2).
pub const DECISION_PROTOCOL_ID: &str = "akledger/decision:1.0.0";

/// The sender of the decision maker's internal messages.
pub const DECISION_MAKER_ADDRESS: &str = "decision_maker";

/// `akledger/decision:1.0.0`.
pub fn decision_protocol_id() -> ProtocolId {
    ProtocolId(DECISION_PROTOCOL_ID.to_string())
}

/// What a handler or behaviour sees of its skill and of the runtime.
#[derive(Debug)]
pub struct SkillContext<'a> {
    pub(crate) skill: &'a str,
    pub(crate) address: &'a str,
    pub(crate) models: &'a mut Models,
}

impl SkillContext<'_> {
    /// The skill's name.
    pub fn skill_name(&self) -> &str {
        self.skill
    }

    /// The runtime's own envelope address.
    pub fn address(&self) -> &str {
        self.address
    }

    /// The skill's models.
    pub fn models(&mut self) -> &mut Models {
        self.models
    }
}

/// One skill: a name, its handlers, its behaviours and its models.
///
/// # Examples
///
/// ```
/// use akledger_runtime::skills::{Acted, CyclicBehaviour, Skill};
/// use akledger_runtime::EchoHandler;
///
/// // Echo, and count the ticks in a model the handlers could read too.
/// let skill = Skill::new("echo_and_count")?
///     .handler(EchoHandler::default())?
///     .model("ticks", 0u64)
///     .behaviour(CyclicBehaviour::new("count", 1_000, |_tick, context| {
///         if let Some(n) = context.models().get_mut::<u64>("ticks") {
///             *n += 1;
///         }
///         Acted::changed()
///     }))?;
/// assert_eq!(skill.name(), "echo_and_count");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Skill {
    pub(crate) name: String,
    pub(crate) handlers: Vec<Box<dyn Handler>>,
    pub(crate) behaviours: Vec<Box<dyn Behaviour>>,
    pub(crate) models: Models,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let protocols: Vec<&str> = self
            .handlers
            .iter()
            .map(|h| h.protocol_id().as_str())
            .collect();
        let behaviours: Vec<&str> = self.behaviours.iter().map(|b| b.name()).collect();
        f.debug_struct("Skill")
            .field("name", &self.name)
            .field("handlers", &protocols)
            .field("behaviours", &behaviours)
            .field("models", &self.models)
            .finish()
    }
}

/// Longest skill or behaviour name, in bytes (written into every tick record).
const MAX_NAME_BYTES: usize = 64;

/// `[A-Za-z_][A-Za-z0-9_]*`, at most 64 bytes: AEA's form of a skill's name.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), Error> {
    let mut bytes = name.bytes();
    let ok = name.len() <= MAX_NAME_BYTES
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::Misuse(format!(
            "{what} name {name:?}: expected [A-Za-z_][A-Za-z0-9_]*, at most {MAX_NAME_BYTES} bytes"
        )))
    }
}

impl Skill {
    /// A skill named `name` (`[A-Za-z_][A-Za-z0-9_]*`) with nothing in it yet.
    pub fn new(name: &str) -> Result<Skill, Error> {
        check_name("skill", name)?;
        Ok(Skill {
            name: name.to_string(),
            handlers: Vec::new(),
            behaviours: Vec::new(),
            models: Models::default(),
        })
    }

    /// Adds a handler; a skill has at most one per protocol.
    pub fn handler(mut self, handler: impl Handler + 'static) -> Result<Skill, Error> {
        let protocol = handler.protocol_id();
        if self.handlers.iter().any(|h| h.protocol_id() == protocol) {
            return Err(Error::Misuse(format!(
                "skill {}: two handlers for {protocol}",
                self.name
            )));
        }
        self.handlers.push(Box::new(handler));
        Ok(self)
    }

    /// Adds a behaviour; its name is unique within the skill.
    pub fn behaviour(mut self, behaviour: impl Behaviour + 'static) -> Result<Skill, Error> {
        check_name("behaviour", behaviour.name())?;
        if self.behaviours.iter().any(|b| b.name() == behaviour.name()) {
            return Err(Error::Misuse(format!(
                "skill {}: two behaviours named {}",
                self.name,
                behaviour.name()
            )));
        }
        behaviour
            .check()
            .map_err(|why| Error::Misuse(format!("skill {}: {why}", self.name)))?;
        self.behaviours.push(Box::new(behaviour));
        Ok(self)
    }

    /// Adds (or replaces) the model `name`.
    pub fn model<T: std::any::Any + Send>(mut self, name: &str, model: T) -> Skill {
        self.models.insert(name, model);
        self
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The protocols its handlers take.
    pub fn protocols(&self) -> impl Iterator<Item = &ProtocolId> {
        self.handlers.iter().map(|h| h.protocol_id())
    }
}
