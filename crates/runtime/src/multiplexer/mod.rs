//! The multiplexer and main loop (seed 002) with the ledger as InBox and OutBox: a
//! [`Runtime`] polls the named connections of its [`Multiplexer`], makes each envelope
//! taken in an `ak.message.create` event of the sidecar (sealed, PROFILE §6–§7) *before*
//! any handler sees it, and each step runs seed 002's main loop: `act()` (the skills'
//! behaviours that are due, each tick recorded before its envelopes are sent), `react()`
//! (each envelope to the exchange bridge, relayed to the connection its address is routed
//! to, or to every skill handling its protocol, else the error skill), `update()` (the
//! decision maker authors its controls and hands each to the skills as an internal
//! message). Every outbound envelope is an event *before* it is written to its
//! connection, and the progress marker is written last.
//!
//! **Exactly once across crashes.** Each step is durable before the next starts: each
//! run of the inbox batch is in the ledger before its envelopes are handled (the next run
//! is signed meanwhile), each action carries its `(cause,
//! effect)` tag ([`super::records`]), outbox events are in the ledger before they are
//! written, and the progress marker ([`super::progress`]) is written last. On start the
//! runtime scans the ledger after the marker's position: inbox records give each
//! connection's input position to resume at; outbox records not written at the checkpoint
//! (per lane) or written after it are compared with what their connection's output holds,
//! so the ones already written are not written again and a torn one is cut and rewritten;
//! every recorded input (envelope, tick, control) is handed to the skills again in ledger
//! order with the tags already present skipped, so an action taken before the crash is not
//! taken twice and one not taken yet is taken now.
//!
//! **Stages.** [`Runtime::on_stage`] installs an observer called at each [`Stage`] a step
//! passes (envelopes received, inbox appended, bridged, outbox appended, sent, decided,
//! marker written): the moments between which a crash must lose and repeat nothing.
//!
//! **Withholding.** The record of an envelope whose seed-000 skill declares redacted
//! fields holds a commitment where its message would be (PROFILE §14.3); the message goes
//! to the ledger's disclosure store before the record is appended, and recovery reads it
//! back from there (`withholding.rs`). The
//! `akledger` binary's crash test hook (`AKLEDGER_RUNTIME_CRASH_AT`) is such an observer;
//! the library itself never reads the environment.

mod behaviours;
mod connections;
mod decisions;
mod effects;
mod freeing;
mod inbox;
mod outbox;
mod recovery;
mod stage;
mod withholding;

pub use connections::Multiplexer;
use decisions::Decider;
pub use effects::Effects;
use effects::Outgoing;
pub use stage::Stage;
use stage::StageObserver;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand_core::OsRng;

use super::bridge::{self, exchange_protocol_id, projection_message};
use super::config::RuntimeConfig;
use super::default_protocol::{DefaultMessage, ErrorCode, Performative};
use super::envelope::{Envelope, InputCursor, Received};
use super::handlers::{default_protocol_id, error_reply, Inbound, Refusal};
use super::policy::{decide, Completing, OpenExchange};
use super::progress::Progress;
use super::records::{inbox_body, outbox_body, read_record, tick_body, Record, Tag};
use super::skills::registry::Skills;
use super::skills::Skill;
use crate::limits::{SIGN_STREAM, STUB_POLL_INTERVAL_MS};
use akledger::did::DidCoreId;
use akledger::envelope::{Body, MESSAGE_CREATE};
use akledger::error::Error;
use akledger::event::Event;
use akledger::exchange::classify::decrypt;
use akledger::exchange::{
    Act, ExchangeId, MessagePlaintext, Projection, Role, SidecarAuthor, Status,
};
use akledger::id::EventId;
use akledger::ledger::{Appended, ExchangeChange, ExchangeFeed, Ledger};
use akledger::time::Timestamp;

/// What one [`Runtime::step`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct StepReport {
    /// Envelopes taken in.
    pub received: usize,
    /// Envelopes the connection wrote.
    pub sent: usize,
    /// Controls the decision maker authored.
    pub controls: usize,
    /// Behaviour ticks recorded.
    pub ticks: usize,
}

impl StepReport {
    /// True when the step did nothing.
    pub fn is_idle(&self) -> bool {
        *self == StepReport::default()
    }
}

/// A sidecar runtime over one ledger and the connections of a [`Multiplexer`].
///
/// # Examples
///
/// ```
/// use akledger::prelude::*;
/// use akledger_runtime::{bootstrap, skills::Skill, EchoHandler, Runtime, StubConnection};
///
/// let dir = tempfile::tempdir()?;
/// let ledger = Ledger::open(dir.path().join("ledger"))?;
/// // A realm, a sidecar with the controller's private strand, and the sidecar key.
/// let config = bootstrap(&ledger, SigningKey::generate(&mut OsRng))?;
/// let (input, output) = (dir.path().join("in"), dir.path().join("out"));
/// std::fs::write(&input, b"my_first_aea,sender_aea,fetchai/default:1.0.0,\\x12\\x10\\x08\\x01\\x12\\x011*\\t*\\x07\\n\\x05hello,\n")?;
///
/// let mut runtime = Runtime::new(&ledger, StubConnection::open(&input, &output)?, config)?;
/// runtime.add_skill(Skill::new("echo")?.handler(EchoHandler::default())?)?;
/// runtime.step(Timestamp::now())?;
///
/// // The echo went back to the sender, and both envelopes are events of the sidecar.
/// let out = std::fs::read(&output)?;
/// assert!(out.starts_with(b"sender_aea,my_first_aea,fetchai/default:1.0.0,"));
/// assert_eq!(ledger.len(), 4 + 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Runtime<'l> {
    ledger: &'l Ledger,
    dir: PathBuf,
    connections: Multiplexer,
    config: RuntimeConfig,
    controller: SidecarAuthor,
    skills: Skills,
    /// Tags of actions in the ledger after the last checkpoint.
    taken: HashSet<Tag>,
    /// The outbox events queued to a connection and not written yet: admission position
    /// (the token the connection was given) to connection and lane.
    unwritten: BTreeMap<u64, (usize, String)>,
    decider: Decider,
    /// `created_at` floor of the runtime's events (the sidecar's creation).
    floor: Timestamp,
    stage: Option<StageObserver>,
    /// True once the first step recovered.
    recovered: bool,
    /// `created_at` of the events appended in this step: the outbox events they cause are
    /// dated from them without reading them back.
    made: HashMap<EventId, Timestamp>,
    /// Threads the runtime's events are signed on (the machine's cores, at most the
    /// ledger's verify threads' limit).
    sign_threads: usize,
    /// Where the committing thread hands the events it appended, to be freed.
    freeing: freeing::Freeing<Vec<Event>>,
}

impl std::fmt::Debug for Runtime<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("dir", &self.dir)
            .field("sidecar", &self.config.sidecar)
            .field("connections", &self.connections)
            .field("skills", &self.skills)
            .finish_non_exhaustive()
    }
}

fn io_error(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: PathBuf::from(what),
        source,
    }
}

impl<'l> Runtime<'l> {
    /// A runtime for `config.sidecar` of `ledger` over `connections` (one connection, or a
    /// [`Multiplexer`] of several). Its first [`Runtime::step`] (after the skills are
    /// added) recovers from the ledger and the progress marker in the ledger's directory
    /// (see the module doc): anything taken in but not handled is handled, anything handled
    /// but not sent is sent, and each connection resumes where its input was last taken in.
    pub fn new(
        ledger: &'l Ledger,
        connections: impl Into<Multiplexer>,
        config: RuntimeConfig,
    ) -> Result<Self, Error> {
        if ledger.config().is_in_memory() {
            return Err(Error::Misuse(
                "the sidecar runtime needs a ledger on disk, to keep its progress marker".into(),
            ));
        }
        let connections = connections.into();
        if connections.is_empty() {
            return Err(Error::Misuse(
                "the sidecar runtime needs a connection".into(),
            ));
        }
        let controller =
            ledger.sidecar_author(config.controller.key.clone(), config.sidecar, config.epoch)?;
        let sidecar_event = ledger
            .get(&config.sidecar.retype())?
            .ok_or(Error::UnknownSidecar(config.sidecar))?;
        let feed = ledger.exchange_feed(&config.sidecar)?;
        let mut runtime = Runtime {
            ledger,
            dir: ledger.config().dir().to_path_buf(),
            connections,
            config,
            controller,
            skills: Skills::default(),
            taken: HashSet::new(),
            unwritten: BTreeMap::new(),
            decider: Decider {
                feed,
                open: BTreeMap::new(),
                gone: BTreeSet::new(),
                refused: BTreeMap::new(),
            },
            floor: sidecar_event.created_at(),
            stage: None,
            recovered: false,
            made: HashMap::new(),
            sign_threads: std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(akledger::limits::MAX_VERIFY_THREADS),
            freeing: freeing::Freeing::start(),
        };
        for p in ledger.exchanges(&runtime.config.sidecar)?.projections {
            runtime.track(p)?;
        }
        Ok(runtime)
    }

    /// Calls `observe` at every [`Stage`] a step passes (replacing any observer installed
    /// before). For tests that crash the process between stages, and for progress.
    pub fn on_stage(&mut self, observe: impl FnMut(Stage) + 'static) {
        self.stage = Some(StageObserver(Box::new(observe)));
    }

    /// Tells the stage observer, if any, that `stage` was passed.
    fn passed(&mut self, stage: Stage) {
        if let Some(StageObserver(observe)) = self.stage.as_mut() {
            observe(stage);
        }
    }

    /// Adds a skill (its name unique among the runtime's skills). Skills are added before
    /// the first [`Runtime::step`], which hands them every input the ledger holds.
    pub fn add_skill(&mut self, skill: Skill) -> Result<(), Error> {
        if self.recovered {
            return Err(Error::Misuse(format!(
                "skill {}: skills are added before the first step",
                skill.name()
            )));
        }
        self.skills.add(skill)
    }

    /// The connections.
    pub fn connections(&self) -> &Multiplexer {
        &self.connections
    }

    /// One round of seed 002's main loop at `now`: `act()` (the behaviours that are due),
    /// `react()` (take in what every connection has, handle it, queue the answers),
    /// `update()` (the decision maker's controls, and its messages to the skills); then
    /// write what the connections' readers can take, and record the progress.
    pub fn step(&mut self, now: Timestamp) -> Result<StepReport, Error> {
        if !self.recovered {
            self.recover()?;
            self.recovered = true;
        }
        self.made.clear();
        let mut report = StepReport {
            ticks: self.act(now)?,
            ..StepReport::default()
        };
        for slot in 0..self.connections.len() {
            let received = match self.connections.at(slot) {
                Some(c) => c.receive().map_err(io_error("a connection's input"))?,
                None => continue,
            };
            let mut sends = Vec::new();
            for chunk in received.chunks(SIGN_STREAM) {
                report.received += chunk.len();
                self.passed(Stage::Received);
                self.take_in(slot, chunk, now, &mut sends)?;
            }
            self.send_all(sends)?;
        }
        report.controls = self.update(now)?;
        report.sent = self.deliver()?;
        if !report.is_idle() {
            self.checkpoint(false)?;
        }
        Ok(report)
    }

    /// Runs until `stop` is set, polling the connections every [`STUB_POLL_INTERVAL_MS`]
    /// when they had nothing; the marker is written durably when it stops.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), Error> {
        while !stop.load(Ordering::Acquire) {
            if self.step(Timestamp::now())?.is_idle() {
                std::thread::sleep(Duration::from_millis(STUB_POLL_INTERVAL_MS));
            }
        }
        self.checkpoint(true)
    }

    /// Writes the progress marker durably (what [`Runtime::run`] does when it stops); for a
    /// caller that drives [`Runtime::step`] itself.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.checkpoint(true)
    }

    /// Envelopes queued to a connection and not written yet (their reader has not taken
    /// the one before).
    pub fn unwritten(&self) -> usize {
        self.unwritten.len()
    }
}
