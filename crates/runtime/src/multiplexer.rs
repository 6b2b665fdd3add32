//! The multiplexer and main loop (seed 002) with the ledger as InBox and OutBox: a
//! [`Runtime`] takes envelopes from a [`Connection`], makes each an `ak.message.create`
//! event of the sidecar (sealed, PROFILE §6–§7) *before* any handler sees it, dispatches
//! it to the handler of its protocol (the exchange bridge, a registered handler, or the
//! error skill), makes every outbound envelope an event *before* writing it to the
//! connection, lets the decision maker author its controls, and records its progress.
//!
//! **Exactly once across crashes.** Each step is durable before the next starts: the
//! inbox batch is in the ledger before handling, each action carries its `(cause,
//! effect)` tag ([`super::records`]), outbox events are in the ledger before they are
//! written, and the progress marker ([`super::progress`]) is written last. On start the
//! runtime scans the ledger after the marker's position: inbox records give the input
//! position to resume at; outbox records are compared with what the output holds after the
//! marker's length, so the ones already written are not written again and a torn one is
//! cut and rewritten; every inbox event is handled again with the tags already present
//! skipped, so an action taken before the crash is not taken twice and one not taken yet
//! is taken now.
//!
//! **Test hook.** `AKLEDGER_RUNTIME_CRASH_AT=<step>[:<n>]` aborts the process (as a crash
//! would) the n-th time (default: the first) it reaches `<step>`: `received` (envelopes read, nothing appended),
//! `inbox` (inbox batch appended, nothing handled), `bridged` (a bridge request or
//! response appended, its report not), `outbox` (outbox events appended, none written),
//! `sent` (the first outbound envelope written, the marker not), `decided` (a control
//! appended, its report not), `marker` (the marker written; the first one is written by
//! the recovery that opens every run). It is compiled in always
//! so that the crash tests exercise the shipped binary; unset, it costs one comparison.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand_core::OsRng;

use super::bridge::{self, exchange_protocol_id, projection_message};
use super::config::RuntimeConfig;
use super::default_protocol::{DefaultMessage, ErrorCode, Performative};
use super::envelope::{Connection, Envelope, Received};
use super::handlers::{
    default_protocol_id, error_reply, Handler, HandlerRegistry, Inbound, Refusal,
};
use super::policy::{decide, Completing, OpenExchange};
use super::progress::Progress;
use super::records::{inbox_body, outbox_body, read_record, Record, Tag};
use crate::limits::{MAX_INBOX_BATCH, STUB_POLL_INTERVAL_MS};
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

/// The environment variable of the crash test hook (see the module doc).
pub const CRASH_AT_ENV: &str = "AKLEDGER_RUNTIME_CRASH_AT";

/// Aborts the process at a configured step (the crash test hook): `<step>` or
/// `<step>:<n>` (the n-th time the step is reached, from 1).
#[derive(Debug, Default)]
struct CrashHook {
    step: Option<String>,
    nth: u64,
    seen: std::cell::Cell<u64>,
}

impl CrashHook {
    fn from_env() -> Self {
        let Ok(spec) = std::env::var(CRASH_AT_ENV) else {
            return CrashHook::default();
        };
        let (step, nth) = match spec.split_once(':') {
            Some((step, n)) => (step.to_string(), n.parse().unwrap_or(1)),
            None => (spec, 1),
        };
        CrashHook {
            step: Some(step),
            nth,
            seen: std::cell::Cell::new(0),
        }
    }

    fn at(&self, step: &str) {
        if self.step.as_deref() == Some(step) {
            self.seen.set(self.seen.get() + 1);
            if self.seen.get() == self.nth {
                eprintln!("akledger: sidecar: {CRASH_AT_ENV}: aborting at {step} (test hook)");
                std::process::abort();
            }
        }
    }
}

/// The actions one cause (an inbox event, a control) takes, numbered in order; a handler
/// run again after a crash gets the same numbers, and actions already in the ledger are
/// skipped.
#[derive(Debug)]
pub struct Effects<'r> {
    cause: EventId,
    next: u32,
    taken: &'r HashSet<Tag>,
    sends: &'r mut Vec<(Tag, Envelope)>,
    crash: &'r CrashHook,
}

impl Effects<'_> {
    /// The next action's tag.
    pub(super) fn next(&mut self) -> Tag {
        let tag = Tag {
            cause: self.cause,
            effect: self.next,
        };
        self.next += 1;
        tag
    }

    /// True when the action is already in the ledger.
    pub(super) fn taken(&self, tag: Tag) -> bool {
        self.taken.contains(&tag)
    }

    /// Queues `envelope` to be sent (made an outbox event, then written) unless sent
    /// already.
    pub(super) fn send(&mut self, envelope: Envelope) {
        let tag = self.next();
        if !self.taken(tag) {
            self.sends.push((tag, envelope));
        }
    }

    /// The crash test hook.
    pub(super) fn crash_point(&self, step: &str) {
        self.crash.at(step);
    }
}

/// What one [`Runtime::step`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct StepReport {
    /// Envelopes taken in.
    pub received: usize,
    /// Envelopes sent.
    pub sent: usize,
    /// Controls the decision maker authored.
    pub controls: usize,
}

impl StepReport {
    /// True when the step did nothing.
    pub fn is_idle(&self) -> bool {
        *self == StepReport::default()
    }
}

/// The decision maker's view: the open exchanges and the agents declared gone.
#[derive(Debug)]
struct Decider {
    feed: ExchangeFeed,
    open: BTreeMap<ExchangeId, OpenExchange>,
    gone: BTreeSet<DidCoreId>,
    /// The folded-set digest at which a decision for an exchange was refused, so it is
    /// not tried again until the exchange changes.
    refused: BTreeMap<ExchangeId, String>,
}

/// A sidecar runtime over one ledger and one connection.
///
/// # Examples
///
/// ```
/// use akledger::prelude::*;
/// use akledger_runtime::{bootstrap, EchoHandler, Runtime, StubConnection};
///
/// let dir = tempfile::tempdir()?;
/// let ledger = Ledger::open(dir.path().join("ledger"))?;
/// // A realm, a sidecar with the controller's private strand, and the sidecar key.
/// let config = bootstrap(&ledger, SigningKey::generate(&mut OsRng))?;
/// let (input, output) = (dir.path().join("in"), dir.path().join("out"));
/// std::fs::write(&input, b"my_first_aea,sender_aea,fetchai/default:1.0.0,\\x12\\x10\\x08\\x01\\x12\\x011*\\t*\\x07\\n\\x05hello,\n")?;
///
/// let mut runtime = Runtime::new(&ledger, StubConnection::open(&input, &output)?, config)?;
/// runtime.register(Box::new(EchoHandler::default()));
/// runtime.step(Timestamp::now())?;
///
/// // The echo went back to the sender, and both envelopes are events of the sidecar.
/// let out = std::fs::read(&output)?;
/// assert!(out.starts_with(b"sender_aea,my_first_aea,fetchai/default:1.0.0,"));
/// assert_eq!(ledger.len(), 4 + 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Runtime<'l, C: Connection> {
    ledger: &'l Ledger,
    dir: PathBuf,
    connection: C,
    config: RuntimeConfig,
    controller: SidecarAuthor,
    handlers: HandlerRegistry,
    /// Tags of actions in the ledger after the last checkpoint.
    taken: HashSet<Tag>,
    decider: Decider,
    /// `created_at` floor of the runtime's events (the sidecar's creation).
    floor: Timestamp,
    crash: CrashHook,
    /// True once the first step recovered.
    recovered: bool,
}

impl<C: Connection> std::fmt::Debug for Runtime<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("dir", &self.dir)
            .field("sidecar", &self.config.sidecar)
            .field("handlers", &self.handlers)
            .finish_non_exhaustive()
    }
}

fn io_error(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: PathBuf::from(what),
        source,
    }
}

impl<'l, C: Connection> Runtime<'l, C> {
    /// A runtime for `config.sidecar` of `ledger`. Its first [`Runtime::step`] (after the
    /// handlers are registered) recovers from the ledger and the progress marker in the
    /// ledger's directory (see the module doc): anything taken in but not handled is
    /// handled, anything handled but not sent is sent, and the connection resumes where the
    /// input was last taken in.
    pub fn new(ledger: &'l Ledger, connection: C, config: RuntimeConfig) -> Result<Self, Error> {
        if ledger.config().is_in_memory() {
            return Err(Error::Misuse(
                "the sidecar runtime needs a ledger on disk, to keep its progress marker".into(),
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
            connection,
            config,
            controller,
            handlers: HandlerRegistry::new(),
            taken: HashSet::new(),
            decider: Decider {
                feed,
                open: BTreeMap::new(),
                gone: BTreeSet::new(),
                refused: BTreeMap::new(),
            },
            floor: sidecar_event.created_at(),
            crash: CrashHook::from_env(),
            recovered: false,
        };
        for p in ledger.exchanges(&runtime.config.sidecar)?.projections {
            runtime.track(p)?;
        }
        Ok(runtime)
    }

    /// Registers a handler for its protocol (the exchange bridge's protocol stays the
    /// bridge's).
    pub fn register(&mut self, handler: Box<dyn Handler>) {
        self.handlers.register(handler);
    }

    /// The connection.
    pub fn connection(&self) -> &C {
        &self.connection
    }

    /// Recovers (see [`Runtime::new`]); runs once before the first step.
    fn recover(&mut self) -> Result<(), Error> {
        let marker = Progress::load(&self.dir)?;
        let (from, output_from) = match &marker {
            Some(p) => (p.ledger_position, Some(p.output_length)),
            None => (0, None),
        };
        if let Some(p) = &marker {
            self.decider.gone.clone_from(&p.gone);
        }
        let mut input = marker.as_ref().map_or(0, |p| p.input_offset);
        let mut inbox = Vec::new();
        let mut outbox = Vec::new();
        let mut controls = Vec::new();
        for event in self.ledger.iter_from(from) {
            let event = event?;
            if event.scope().sidecar_id() != Some(self.config.sidecar) {
                continue;
            }
            if let Body::ExchangeControl { .. } = event.body() {
                if *event.actor() == *self.controller.actor() {
                    controls.push(event.id());
                }
                continue;
            }
            match self.record(&event) {
                Some(Record::Inbox { envelope, end, .. }) => {
                    input = input.max(end);
                    inbox.push((event.id(), envelope));
                }
                Some(Record::Outbox { tag, envelope }) => {
                    self.taken.insert(tag);
                    outbox.push(envelope);
                }
                Some(Record::Bridge { tag }) => {
                    self.taken.insert(tag);
                }
                None => {}
            }
        }
        // Outbox events the output does not hold yet are written now; without a marker
        // (no step ever finished) there is nothing to compare with, and none are resent.
        let written = match output_from {
            Some(from) => self
                .connection
                .already_sent(from, &outbox)
                .map_err(io_error("the connection's output"))?,
            None => outbox.len(),
        };
        for envelope in outbox.get(written..).unwrap_or_default() {
            self.connection
                .send(envelope)
                .map_err(io_error("the connection's output"))?;
        }
        self.connection
            .flush()
            .map_err(io_error("the connection's output"))?;
        let mut sends = Vec::new();
        for (id, envelope) in &inbox {
            self.dispatch(*id, envelope, &mut sends)?;
        }
        for id in controls {
            let tag = Tag {
                cause: id,
                effect: 0,
            };
            if !self.taken.contains(&tag) {
                if let Some(envelope) = self.control_report(id)? {
                    sends.push((tag, envelope));
                }
            }
        }
        self.send_all(sends)?;
        self.connection
            .resume_at(input)
            .map_err(io_error("the connection's input"))?;
        self.checkpoint()
    }

    /// The runtime record an event of the sidecar holds (decrypted with the ledger's
    /// keyring), if it is one of the runtime's.
    fn record(&self, event: &Event) -> Option<Record> {
        if event.kind() != MESSAGE_CREATE {
            return None;
        }
        let body = self.plaintext(event)?.body;
        read_record(&body)
    }

    fn plaintext(&self, event: &Event) -> Option<MessagePlaintext> {
        let Body::SidecarMessage { encrypted } = event.body() else {
            return None;
        };
        let keyring = self.ledger.verifier().keyring();
        let bytes = decrypt(&self.config.sidecar, event, &keyring, encrypted).ok()?;
        MessagePlaintext::parse(&bytes).ok()
    }

    /// One round: take in what arrived, handle it, send the answers, let the decision
    /// maker act at `now`, and record the progress.
    pub fn step(&mut self, now: Timestamp) -> Result<StepReport, Error> {
        if !self.recovered {
            self.recover()?;
            self.recovered = true;
        }
        let mut report = StepReport::default();
        let received = self
            .connection
            .receive()
            .map_err(io_error("the connection's input"))?;
        let mut sends = Vec::new();
        for chunk in received.chunks(MAX_INBOX_BATCH) {
            report.received += chunk.len();
            self.crash.at("received");
            let ids = self.append_inbox(chunk, now)?;
            self.crash.at("inbox");
            for (id, r) in ids.iter().zip(chunk) {
                self.dispatch(*id, &r.envelope, &mut sends)?;
            }
        }
        report.sent += sends.len();
        self.send_all(sends)?;
        let (controls, sends) = self.decide(now)?;
        report.controls = controls;
        report.sent += sends.len();
        self.send_all(sends)?;
        if !report.is_idle() {
            self.checkpoint()?;
        }
        Ok(report)
    }

    /// Runs until `stop` is set, polling the connection every
    /// [`STUB_POLL_INTERVAL_MS`] when it had nothing.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), Error> {
        while !stop.load(Ordering::Acquire) {
            if self.step(Timestamp::now())?.is_idle() {
                std::thread::sleep(Duration::from_millis(STUB_POLL_INTERVAL_MS));
            }
        }
        self.checkpoint()
    }

    /// Makes each received envelope an inbox event, in one batch.
    fn append_inbox(&self, received: &[Received], now: Timestamp) -> Result<Vec<EventId>, Error> {
        let at = now.max(self.floor);
        let mut events = Vec::with_capacity(received.len());
        for r in received {
            let body = inbox_body(&r.envelope, r.start, r.end);
            events.push(self.controller.message(None, body, &[], at, &mut OsRng)?);
        }
        self.append(&events)
    }

    /// Appends authored events; every one must be admitted.
    fn append(&self, events: &[Event<akledger::event::Unverified>]) -> Result<Vec<EventId>, Error> {
        let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
        let mut ids = Vec::with_capacity(events.len());
        for outcome in self.ledger.append_batch(&bytes)? {
            match outcome {
                Appended::Admitted(id) | Appended::Duplicate(id) => ids.push(id),
                Appended::Rejected { rejection, .. } => return Err(Error::Rejected(rejection)),
                Appended::Pending { id, .. } => {
                    return Err(Error::Misuse(format!(
                        "the runtime's event {id} is pending (a parent is not admitted)"
                    )))
                }
                other => {
                    return Err(Error::Misuse(format!(
                        "the runtime's event was not admitted: {other:?}"
                    )))
                }
            }
        }
        Ok(ids)
    }

    /// Hands one inbox event to its handler; the answers go to `sends`.
    fn dispatch(
        &mut self,
        id: EventId,
        envelope: &Envelope,
        sends: &mut Vec<(Tag, Envelope)>,
    ) -> Result<(), Error> {
        let inbound = Inbound {
            envelope,
            event_id: id,
        };
        let mut effects = Effects {
            cause: id,
            next: 0,
            taken: &self.taken,
            sends,
            crash: &self.crash,
        };
        let outcome = if envelope.protocol_id == exchange_protocol_id() {
            bridge::handle(
                self.ledger,
                &self.config,
                &mut self.decider.gone,
                inbound,
                &mut effects,
            )?
        } else {
            match self.handlers.get_mut(&envelope.protocol_id) {
                Some(handler) => handler.handle(inbound).map(|out| {
                    for e in out {
                        effects.send(e);
                    }
                }),
                None if envelope.protocol_id == default_protocol_id() => Err(Refusal::new(
                    ErrorCode::UnsupportedSkill,
                    "no handler for the default protocol",
                )),
                None => Err(Refusal::new(
                    ErrorCode::UnsupportedProtocol,
                    format!("unsupported protocol {}", envelope.protocol_id),
                )),
            }
        };
        if let Err(refusal) = outcome {
            eprintln!(
                "akledger: sidecar: envelope from {:?} ({}): {}: {}",
                envelope.sender,
                envelope.protocol_id,
                refusal.code.name(),
                refusal.message
            );
            // Errors are not answered with errors (two runtimes would never stop).
            let is_error = envelope.protocol_id == default_protocol_id()
                && matches!(
                    DefaultMessage::decode(&envelope.message),
                    Ok(DefaultMessage {
                        performative: Performative::Error { .. },
                        ..
                    })
                );
            if !is_error {
                effects.send(error_reply(envelope, id, &refusal));
            }
        }
        Ok(())
    }

    /// Makes each queued envelope an outbox event (one batch), then writes them.
    fn send_all(&mut self, sends: Vec<(Tag, Envelope)>) -> Result<(), Error> {
        for chunk in sends.chunks(MAX_INBOX_BATCH) {
            let at = Timestamp::now().max(self.floor);
            let mut events = Vec::with_capacity(chunk.len());
            for (tag, envelope) in chunk {
                let at = at.max(self.ledger.now_after(&[tag.cause])?);
                events.push(self.controller.message(
                    None,
                    outbox_body(*tag, envelope),
                    &[tag.cause],
                    at,
                    &mut OsRng,
                )?);
            }
            self.append(&events)?;
            for (tag, _) in chunk {
                self.taken.insert(*tag);
            }
            self.crash.at("outbox");
            for (_, envelope) in chunk {
                self.connection
                    .send(envelope)
                    .map_err(io_error("the connection's output"))?;
                self.crash.at("sent");
            }
        }
        self.connection
            .flush()
            .map_err(io_error("the connection's output"))
    }

    /// Records the progress (after a step that did something).
    fn checkpoint(&mut self) -> Result<(), Error> {
        let progress = Progress {
            input_offset: self.connection.input_position(),
            output_length: self
                .connection
                .output_position()
                .map_err(io_error("the connection's output"))?,
            ledger_position: self.ledger.len() as u64,
            gone: self.decider.gone.clone(),
        };
        progress.save(&self.dir)?;
        self.crash.at("marker");
        self.taken.clear();
        Ok(())
    }

    /// Follows the exchange feed, then authors the policy's controls; returns how many
    /// were authored and the reports to send.
    fn decide(&mut self, now: Timestamp) -> Result<(usize, Vec<(Tag, Envelope)>), Error> {
        for change in self.decider.feed.drain() {
            match change {
                ExchangeChange::Changed { projection, .. } => self.track(*projection)?,
                _ => {
                    for p in self.ledger.exchanges(&self.config.sidecar)?.projections {
                        self.track(p)?;
                    }
                }
            }
        }
        let open: Vec<OpenExchange> = self.decider.open.values().cloned().collect();
        let decisions = decide(&open, now, &self.decider.gone, &self.config.policy);
        let handle = self.ledger.sidecar(&self.controller);
        let mut sends = Vec::new();
        for d in decisions {
            let Some(current) = self.decider.open.get(&d.exchange_id) else {
                continue;
            };
            let digest = current.projection.event_set_digest();
            if self.decider.refused.get(&d.exchange_id) == Some(&digest) {
                continue;
            }
            let authored = match &d.act {
                Act::Close => handle.close(&d.exchange_id),
                Act::Cancel => handle.cancel(&d.exchange_id),
                Act::Fail(code) => handle.fail(&d.exchange_id, code),
                Act::Reassign { expected, new }
                    if *expected == current.projection.coordinator_agent_id =>
                {
                    handle.reassign(&d.exchange_id, new.clone())
                }
                Act::Reassign { .. } => continue,
            };
            match authored {
                Ok(id) => {
                    self.crash.at("decided");
                    if let Some(envelope) = self.control_report(id)? {
                        sends.push((
                            Tag {
                                cause: id,
                                effect: 0,
                            },
                            envelope,
                        ));
                    }
                }
                Err(e @ (Error::WouldNotFold { .. } | Error::Rejected(_) | Error::Misuse(_))) => {
                    eprintln!("akledger: sidecar: decision maker: {e}");
                    self.decider.refused.insert(d.exchange_id.clone(), digest);
                }
                Err(e) => return Err(e),
            }
        }
        Ok((sends.len(), sends))
    }

    /// The report of a control the controller authored: the exchange's projection, to
    /// the controller's address.
    fn control_report(&self, control: EventId) -> Result<Option<Envelope>, Error> {
        let Some(event) = self.ledger.get(&control)? else {
            return Ok(None);
        };
        let Body::ExchangeControl { encrypted, .. } = event.body() else {
            return Ok(None);
        };
        let keyring = self.ledger.verifier().keyring();
        let Ok(bytes) = decrypt(&self.config.sidecar, &event, &keyring, encrypted) else {
            return Ok(None);
        };
        let Ok(plaintext) = akledger::exchange::ControlPlaintext::parse(&bytes) else {
            return Ok(None);
        };
        let Some(p) = self
            .ledger
            .exchange(&self.config.sidecar, &plaintext.exchange_id)?
        else {
            return Ok(None);
        };
        Ok(Some(Envelope::new(
            &self.config.controller.address,
            &self.config.address,
            exchange_protocol_id(),
            projection_message(&p),
        )))
    }

    /// Keeps the decision maker's view of one exchange.
    fn track(&mut self, p: Projection) -> Result<(), Error> {
        if matches!(p.status, Status::Complete | Status::Failed) {
            self.decider.open.remove(&p.exchange_id);
            self.decider.refused.remove(&p.exchange_id);
            return Ok(());
        }
        let opened_at = self
            .ledger
            .get(&p.request_event_id)?
            .ok_or(Error::NotFound(p.request_event_id))?
            .created_at();
        let mut completing = Vec::new();
        for id in &p.user_facing_response_event_ids {
            let Some(event) = self.ledger.get(id)? else {
                continue;
            };
            let binding = self.plaintext(&event).and_then(|m| m.binding);
            if let Some(Role::Response {
                completes: Some(assignment),
                ..
            }) = binding.map(|b| b.role)
            {
                completing.push(Completing {
                    author: event.actor().principal().clone(),
                    assignment,
                });
            }
        }
        self.decider.open.insert(
            p.exchange_id.clone(),
            OpenExchange {
                projection: p,
                opened_at,
                completing,
            },
        );
        Ok(())
    }
}
