//! Admission (PROFILE §5, §6, §10): decides, for each verified event of a batch, whether it
//! is admitted, a duplicate, pending on missing dependencies, or rejected — and releases
//! pending events, in causal order, the moment their last dependency is admitted.
//!
//! Pure: it reads the committed [`State`] and writes only to the batch's [`Staged`] changes.
//! Log replay runs the same code on the same order, so the state derived from the log is
//! the state the live engine had.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::collections::{BTreeSet, HashMap};

use crate::error::Error;

use crate::dag::Pos;
use crate::envelope::{Body, ScopeRef};
use crate::error::{Code, Rejection};
use crate::event::Event;
use crate::id::{EventId, RealmId, SidecarId, StrandId};

use crate::did::{ActorId, DidCoreId};
use crate::envelope::{Attach, ModelVersion};
use crate::store::log::LogPos;

use super::id_table::Vacancy;
use super::state::{
    add_model_version, Admission, AttachEntry, Filed, SidecarEntry, Staged, State, Where,
};
use super::stored::Stored;

/// What happened to one appended event.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Appended {
    /// Admitted now.
    Admitted(EventId),
    /// Already admitted with the same bytes: nothing changed. (Re-sending an event that is
    /// still pending returns [`Appended::Pending`] again, with what it still misses.)
    Duplicate(EventId),
    /// Stored durably; waits for these dependencies (`dependency_missing`).
    Pending {
        /// The event.
        id: EventId,
        /// Dependencies not admitted yet, in canonical order.
        missing: Vec<EventId>,
    },
    /// Refused; nothing was written.
    Rejected {
        /// The event's id, when the bytes got far enough to have one.
        id: Option<EventId>,
        /// Why.
        rejection: Rejection,
    },
}

impl Appended {
    /// The PROFILE code of a rejection (or `dependency_missing` for pending).
    pub fn code(&self) -> Option<Code> {
        match self {
            Appended::Rejected { rejection, .. } => Some(rejection.code()),
            Appended::Pending { .. } => Some(Code::DependencyMissing),
            _ => None,
        }
    }
}

/// Where an event comes from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Source {
    /// Submitted now: admitted or pending events become new log entries.
    New,
    /// Read back from the log during replay: nothing is written.
    Log(LogPos),
}

/// Decides a batch against the committed state.
pub struct Decider<'s> {
    state: &'s State,
    /// Committed events: pending ones read back when they may be released, admitted ones
    /// compared with a resent copy.
    stored: &'s dyn Stored,
    staged: Staged,
    new_pos: HashMap<EventId, Pos>,
    realms: HashMap<RealmId, Pos>,
    sidecars: HashMap<SidecarId, SidecarEntry>,
    strands: HashMap<StrandId, RealmId>,
    attaches: HashMap<Pos, AttachEntry>,
    contexts: HashMap<SidecarId, Vec<Pos>>,
    /// Actor model versions admitted in this batch (see `State::actors`).
    actors: HashMap<DidCoreId, Vec<(u64, Pos)>>,
    /// Pending events new in this batch.
    pending: HashMap<EventId, (Event, Where)>,
    /// Pending events (new, or committed and refiled) by the dependency they are filed under
    /// now; adds to the committed state's `waiting`.
    waiting: HashMap<EventId, BTreeSet<EventId>>,
    /// Where each pending event new or refiled in this batch is filed now.
    filed: HashMap<EventId, Filed>,
    /// A committed pending event could not be read back: the batch fails.
    failure: Option<Error>,
    /// Bound on pending events and bytes for new events (`None` for replay).
    pending_limit: Option<(usize, usize)>,
    /// Bytes of the events in `pending`.
    pending_bytes: usize,
}

impl<'s> Decider<'s> {
    /// A decider over `state`, whose events `stored` holds.
    pub fn new(state: &'s State, stored: &'s dyn Stored) -> Self {
        Decider {
            state,
            stored,
            staged: Staged::default(),
            new_pos: HashMap::new(),
            realms: HashMap::new(),
            sidecars: HashMap::new(),
            strands: HashMap::new(),
            attaches: HashMap::new(),
            contexts: HashMap::new(),
            actors: HashMap::new(),
            pending: HashMap::new(),
            waiting: HashMap::new(),
            filed: HashMap::new(),
            failure: None,
            pending_limit: None,
            pending_bytes: 0,
        }
    }

    /// Room for a batch of `events` decisions, so that the batch's lookup table and staged
    /// lists do not grow (and rehash or copy) as it is decided.
    pub fn expecting(mut self, events: usize) -> Self {
        self.new_pos.reserve(events);
        self.staged.admitted.reserve(events);
        self.staged.entries.reserve(events);
        self
    }

    /// Refuses new events that would make more than `events` pending events, or more than
    /// `bytes` bytes of them, with `pending_limit_exceeded`.
    pub fn limit_pending(mut self, events: usize, bytes: usize) -> Self {
        self.pending_limit = Some((events, bytes));
        self
    }

    /// The refusal of a new pending event past the bound, if it is past it.
    fn over_pending_limit(&self, event: &Event, source: Source) -> Option<Rejection> {
        let (max_events, max_bytes) = self.pending_limit.filter(|_| source == Source::New)?;
        let events = self.state.pending.len() + self.pending.len() + 1;
        let bytes = self.state.pending.bytes() + self.pending_bytes + event.bytes().len();
        (events > max_events || bytes > max_bytes).then(|| {
            Rejection::new(
                Code::PendingLimitExceeded,
                format!(
                    "the ledger already holds its limit of pending events ({max_events} events or {max_bytes} bytes); admit their dependencies or drop some first"
                ),
            )
        })
    }

    /// The staged changes, or why the batch cannot be committed.
    /// New log entries staged so far (each decision stages at most one: its own event).
    pub fn staged_entries(&self) -> usize {
        self.staged.entries.len()
    }

    pub fn finish(mut self) -> Result<Staged, Error> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let released = &self.staged.released;
        let mut filed: Vec<Filed> = self
            .filed
            .into_values()
            .filter(|f| !released.contains(&f.id))
            .collect();
        filed.sort_unstable_by_key(|f| f.id);
        self.staged.filed = filed;
        Ok(self.staged)
    }

    /// The batch's own admissions first: most dependencies are recent, and the batch's
    /// small table is in cache where a miss in the ledger's large one costs a probe there.
    fn pos(&self, id: &EventId) -> Option<Pos> {
        self.new_pos
            .get(id)
            .copied()
            .or_else(|| self.state.ids.get(id))
    }

    fn stamp(&self, pos: Pos) -> u64 {
        match pos.index().checked_sub(self.state.len()) {
            Some(i) => self
                .staged
                .admitted
                .get(i)
                .map(|a| a.event.created_at().millis()),
            None => self.state.stamp(pos),
        }
        .unwrap_or_default()
    }

    /// Whether `id` is pending (new in this batch or committed) and not released yet, and
    /// its size.
    fn pending_size(&self, id: &EventId) -> Option<usize> {
        if self.staged.released.contains(id) {
            return None;
        }
        match self.pending.get(id) {
            Some((event, _)) => Some(event.bytes().len()),
            None => self.state.pending.get(id).map(|p| p.size as usize),
        }
    }

    /// A pending event not released yet, read back from the log when it is committed.
    fn pending_event(&mut self, id: &EventId) -> Option<(Event, Where)> {
        if self.staged.released.contains(id) {
            return None;
        }
        if let Some((event, at)) = self.pending.get(id) {
            return Some((event.clone(), *at));
        }
        let at = self.state.pending.get(id)?.at;
        match self.stored.event(at) {
            Ok(event) => Some((event, Where::At(at))),
            Err(e) => {
                self.failure.get_or_insert(e);
                None
            }
        }
    }

    /// Files a pending event under its smallest missing dependency.
    fn file(&mut self, id: EventId, at: Where, size: usize, waits_for: EventId) {
        self.waiting.entry(waits_for).or_default().insert(id);
        self.filed.insert(
            id,
            Filed {
                id,
                at,
                size,
                waits_for,
            },
        );
    }

    /// Whether the committed event at `pos` has exactly `bytes`. Replay takes the log's own
    /// entries as they are and reads nothing back.
    fn holds(&self, pos: Pos, bytes: &[u8], source: Source) -> bool {
        match source {
            Source::Log(_) => true,
            Source::New => self
                .state
                .at
                .get(pos.index())
                .is_some_and(|at| self.stored.holds(at, bytes)),
        }
    }

    /// The outcome of `event`, whose id is already admitted at `pos` (committed or staged).
    fn repeat(&self, id: EventId, pos: Pos, event: &Event, source: Source) -> Appended {
        let same = match pos.index().checked_sub(self.state.len()) {
            Some(i) => self
                .staged
                .admitted
                .get(i)
                .is_some_and(|a| a.event.bytes() == event.bytes()),
            None => self.holds(pos, event.bytes(), source),
        };
        duplicate(id, same)
    }

    /// Decides one event.
    pub fn decide(&mut self, event: Event, source: Source) -> Appended {
        let id = event.id();
        // One lookup both finds a repeat and, for a new id, where its insert will start.
        let found = match self.new_pos.get(&id) {
            Some(&pos) => Ok(pos),
            None => self.state.ids.find_or_vacancy(&id),
        };
        let vacancy = match found {
            Ok(pos) => return self.repeat(id, pos, &event, source),
            Err(vacancy) => vacancy,
        };
        if let Some(size) = self.pending_size(&id) {
            let same = size == event.bytes().len()
                && self
                    .pending_event(&id)
                    .is_some_and(|(waiting, _)| waiting.bytes() == event.bytes());
            if !same {
                return duplicate(id, false);
            }
            return Appended::Pending {
                id,
                missing: self.missing(&event),
            };
        }
        let parents = match self.resolve(&event) {
            Ok(parents) => parents,
            Err(missing) => {
                if let Some(rejection) = self.over_pending_limit(&event, source) {
                    return Appended::Rejected {
                        id: Some(id),
                        rejection,
                    };
                }
                let size = event.bytes().len();
                self.pending_bytes += size;
                let at = self.place(&event, source);
                if let Some(first) = missing.first() {
                    self.file(id, at, size, *first);
                }
                self.pending.insert(id, (event, at));
                return Appended::Pending { id, missing };
            }
        };
        match self.check(&event, parents) {
            Err(rejection) => Appended::Rejected {
                id: Some(id),
                rejection,
            },
            Ok(parents) => {
                let at = self.place(&event, source);
                self.record(event, parents, at, vacancy);
                self.release_waiters(id);
                Appended::Admitted(id)
            }
        }
    }

    /// Where a newly stored event will be: a new log entry, or where replay read it.
    fn place(&mut self, event: &Event, source: Source) -> Where {
        match source {
            Source::Log(at) => Where::At(at),
            Source::New => {
                self.staged.entries.push(event.clone());
                Where::Entry(self.staged.entries.len() - 1)
            }
        }
    }

    fn missing(&self, event: &Event) -> Vec<EventId> {
        self.resolve(event).err().unwrap_or_default()
    }

    /// The positions of `event`'s dependencies, in order, when all are admitted (committed
    /// or staged); otherwise the ones that are not, in canonical order. Each is looked up
    /// once.
    fn resolve(&self, event: &Event) -> Result<Vec<Pos>, Vec<EventId>> {
        let dependencies = event.dependencies();
        let mut parents = Vec::with_capacity(dependencies.len());
        for (i, dependency) in dependencies.iter().enumerate() {
            match self.pos(dependency) {
                Some(pos) => parents.push(pos),
                None => {
                    // This one is missing; the ones after it are looked up once each.
                    let rest = dependencies.get(i + 1..).unwrap_or_default();
                    let mut missing = vec![*dependency];
                    missing.extend(rest.iter().filter(|d| self.pos(d).is_none()).copied());
                    missing.sort_unstable();
                    return Err(missing);
                }
            }
        }
        Ok(parents)
    }

    /// Stages an admission and its registry effects.
    fn record(&mut self, event: Event, parents: Vec<Pos>, at: Where, vacancy: Option<Vacancy>) {
        let id = event.id();
        let index = self.state.len() + self.staged.admitted.len();
        let pos = Pos::new(u32::try_from(index).unwrap_or(u32::MAX));
        self.new_pos.insert(id, pos);
        match event.body() {
            Body::RealmCreate => {
                self.realms.insert(id.retype(), pos);
            }
            Body::StrandCreate => {
                if let Some(realm) = event.scope().realm_id() {
                    self.strands.insert(id.retype(), realm);
                }
            }
            Body::ContextAttach(a) => {
                self.contexts.entry(a.sidecar_id).or_default().push(pos);
                self.attaches.insert(
                    pos,
                    AttachEntry {
                        sidecar: a.sidecar_id,
                        strand: a.strand_id,
                        version: a.version,
                    },
                );
            }
            Body::ActorModel(m) => add_model_version(
                self.actors.entry(m.entity.did().clone()).or_default(),
                m.entity.version(),
                pos,
            ),
            Body::SidecarCreate => {
                if let Some(realm) = event.scope().realm_id() {
                    let controller = event.actor().clone();
                    self.sidecars.insert(
                        id.retype(),
                        SidecarEntry {
                            realm,
                            controller,
                            pos,
                        },
                    );
                }
            }
            _ => {}
        }
        self.staged.admitted.push(Admission {
            event,
            parents,
            at,
            vacancy,
        });
    }

    /// Admits (or rejects) every pending event whose last dependency was `admitted`, and so
    /// on transitively, taking waiters in canonical id order. A waiter that still misses
    /// something is filed under its smallest missing dependency.
    fn release_waiters(&mut self, admitted: EventId) {
        if self.waiting.is_empty() && self.state.pending.is_empty() {
            // Nothing waits on anything.
            return;
        }
        let mut work = vec![admitted];
        while let Some(done) = work.pop() {
            let mut waiters = self.waiting.remove(&done).unwrap_or_default();
            waiters.extend(self.state.pending.waiters(&done));
            let mut freed = Vec::new();
            for waiter in waiters {
                let Some((event, at)) = self.pending_event(&waiter) else {
                    continue;
                };
                let parents = match self.resolve(&event) {
                    Ok(parents) => parents,
                    Err(missing) => {
                        if let Some(next) = missing.first() {
                            self.file(waiter, at, event.bytes().len(), *next);
                        }
                        continue;
                    }
                };
                self.staged.released.insert(waiter);
                match self.check(&event, parents) {
                    Ok(parents) => {
                        self.record(event, parents, at, None);
                        freed.push(waiter);
                    }
                    Err(why) => self.staged.rejected_on_release.push((waiter, why)),
                }
            }
            // Depth-first in canonical order: the smallest freed id is processed next.
            work.extend(freed.into_iter().rev());
        }
    }

    fn realm(&self, realm: &RealmId) -> bool {
        self.state.realms.contains_key(realm) || self.realms.contains_key(realm)
    }

    fn sidecar(&self, sidecar: &SidecarId) -> Option<&SidecarEntry> {
        self.state
            .sidecars
            .get(sidecar)
            .or_else(|| self.sidecars.get(sidecar))
    }

    fn strand_realm(&self, strand: &StrandId) -> Option<RealmId> {
        self.state
            .strands
            .get(strand)
            .or_else(|| self.strands.get(strand))
            .copied()
    }

    /// Where `did`'s admitted model `version` is, committed or staged in this batch.
    fn model_at(&self, did: &DidCoreId, version: u64) -> Option<Pos> {
        [self.state.actors.get(did), self.actors.get(did)]
            .into_iter()
            .flatten()
            .find_map(|versions| {
                let i = versions.binary_search_by_key(&version, |(v, _)| *v).ok()?;
                versions.get(i).map(|(_, pos)| *pos)
            })
    }

    /// PROFILE §14.1: one event per entity id (`actor_version_conflict`), and a version
    /// above 1 names the admitted model of the version before it, of the same actor.
    fn check_model(&self, model: &ModelVersion) -> Result<(), Rejection> {
        let (did, version) = (model.entity.did(), model.entity.version());
        if self.model_at(did, version).is_some() {
            return Err(Rejection::new(
                Code::ActorVersionConflict,
                format!(
                    "{} is already admitted as another ak.actor.model event",
                    model.entity
                ),
            ));
        }
        let Some(predecessor) = model.predecessor else {
            return Ok(());
        };
        let expected = self.model_at(did, version.saturating_sub(1));
        if expected.is_none() || self.pos(&predecessor) != expected {
            return Err(Rejection::new(
                Code::SchemaViolation,
                format!(
                    "predecessor_event_ref {predecessor} must name the admitted ak.actor.model of {did}#{}",
                    version.saturating_sub(1)
                ),
            ));
        }
        Ok(())
    }

    fn attach_at(&self, pos: Pos) -> Option<AttachEntry> {
        self.state
            .attaches
            .get(&pos)
            .or_else(|| self.attaches.get(&pos))
            .copied()
    }

    /// The DAG parents of a staged (not yet committed) position.
    fn staged_parents(&self, pos: Pos) -> Option<&[Pos]> {
        let i = pos.index().checked_sub(self.state.len())?;
        self.staged.admitted.get(i).map(|a| a.parents.as_slice())
    }

    /// True when an event with DAG parents `parents` covers `target` (PROFILE §5), across
    /// committed and staged admissions.
    fn covers(&self, parents: &[Pos], target: Pos) -> bool {
        let mut committed = Vec::new();
        let mut stack: Vec<Pos> = parents.to_vec();
        let mut seen = std::collections::HashSet::new();
        while let Some(p) = stack.pop() {
            if p == target {
                return true;
            }
            if !seen.insert(p) {
                continue;
            }
            match self.staged_parents(p) {
                Some(up) => stack.extend_from_slice(up),
                None => committed.push(p),
            }
        }
        target.index() < self.state.len() && self.state.dag.covers(&committed, target)
    }

    /// The sidecar's current context as seen from an event with DAG parents `parents`
    /// (PROFILE §6): the strand of the covered attach with the greatest version (ties: the
    /// greatest digest bytes).
    fn current_context(&self, sidecar: &SidecarId, parents: &[Pos]) -> Option<StrandId> {
        let mut candidates: Vec<(u64, [u8; 32], Pos, StrandId)> = self
            .state
            .contexts
            .get(sidecar)
            .into_iter()
            .chain(self.contexts.get(sidecar))
            .flatten()
            .filter_map(|p| {
                let a = self.attach_at(*p)?;
                let id = self.id_at(*p)?;
                Some((a.version, id.digest(), *p, a.strand))
            })
            .collect();
        candidates.sort_unstable_by_key(|c| std::cmp::Reverse((c.0, c.1)));
        candidates
            .into_iter()
            .find(|c| self.covers(parents, c.2))
            .map(|c| c.3)
    }

    fn id_at(&self, pos: Pos) -> Option<EventId> {
        match pos.index().checked_sub(self.state.len()) {
            Some(i) => self.staged.admitted.get(i).map(|a| a.event.id()),
            None => self.state.id_at(pos),
        }
    }

    /// PROFILE §6 referents of an attach: the strand lives in the sidecar's realm, and a
    /// version above 1 follows an attach of the same sidecar with the version before it.
    fn check_attach(&self, attach: &Attach, realm: RealmId) -> Result<(), Rejection> {
        let bad = |m: String| Rejection::new(Code::SchemaViolation, m);
        if self.strand_realm(&attach.strand_id) != Some(realm) {
            return Err(bad(format!(
                "{} is not an ak.strand.create of the sidecar's realm",
                attach.strand_id
            )));
        }
        if let Some(pred) = attach.predecessor {
            let entry = self.pos(&pred).and_then(|p| self.attach_at(p));
            let fits = entry.is_some_and(|e| {
                e.sidecar == attach.sidecar_id && e.version.checked_add(1) == Some(attach.version)
            });
            if !fits {
                return Err(bad(format!(
                    "predecessor_event_ref {pred} is not an attach of this sidecar with version {}",
                    attach.version.saturating_sub(1)
                )));
            }
        }
        Ok(())
    }

    fn singleton(&self, realm: RealmId, controller: &ActorId) -> Option<SidecarId> {
        let key = (realm, controller.clone());
        self.state.singletons.get(&key).copied().or_else(|| {
            self.sidecars
                .iter()
                .find(|(_, s)| s.realm == realm && &s.controller == controller)
                .map(|(id, _)| *id)
        })
    }

    /// The stateful rules, with every dependency admitted at `parents` (in dependency
    /// order). Returns the DAG parents.
    fn check(&self, event: &Event, parents: Vec<Pos>) -> Result<Vec<Pos>, Rejection> {
        let created = event.created_at().millis();
        if parents.iter().any(|p| self.stamp(*p) > created) {
            return Err(Rejection::new(
                Code::CreatedAtBeforeCausalPredecessor,
                format!(
                    "created_at {} is earlier than a causal parent's",
                    event.created_at()
                ),
            ));
        }
        self.check_scope(event, &parents)?;
        Ok(parents)
    }

    fn check_scope(&self, event: &Event, parents: &[Pos]) -> Result<(), Rejection> {
        let is_control = matches!(event.body(), Body::ExchangeControl { .. });
        let fail = |m: &str| {
            if is_control {
                Rejection::new(
                    Code::SidecarExchangeControlForbidden,
                    format!("exchange control: {m}"),
                )
            } else {
                Rejection::new(Code::SchemaViolation, m.to_owned())
            }
        };
        match *event.scope() {
            ScopeRef::RealmGenesis => Ok(()),
            ScopeRef::Realm { realm_id } => {
                if !self.realm(&realm_id) {
                    return Err(fail(
                        "scope names a realm whose id is not an ak.realm.create event",
                    ));
                }
                if let Body::ActorModel(model) = event.body() {
                    self.check_model(model)?;
                }
                if let Body::SidecarCreate = event.body() {
                    let controller = event.actor();
                    let mine: SidecarId = event.id().retype();
                    if let Some(existing) =
                        self.singleton(realm_id, controller).filter(|s| *s != mine)
                    {
                        return Err(Rejection::new(
                            Code::SidecarSingletonConflict,
                            format!("{} already controls {existing} in this realm", controller),
                        ));
                    }
                }
                Ok(())
            }
            ScopeRef::Sidecar {
                realm_id,
                sidecar_id,
            } => {
                let sidecar = self.sidecar(&sidecar_id).ok_or_else(|| {
                    fail("scope names a sidecar whose id is not an ak.sidecar.create event")
                })?;
                if sidecar.realm != realm_id {
                    return Err(fail("the sidecar lives in another realm"));
                }
                let by_controller = *event.actor() == sidecar.controller;
                match event.body() {
                    Body::ContextAttach(attach) => {
                        self.check_attach(attach, realm_id)?;
                        if !by_controller {
                            return Err(Rejection::new(
                                Code::SidecarExchangeControlForbidden,
                                "context attach: only the sidecar's controller (complete actor) may attach its strand",
                            ));
                        }
                    }
                    Body::ExchangeControl { strand_id, .. } => {
                        if !by_controller {
                            return Err(fail(
                                "only the sidecar's controller (complete actor) may author controls",
                            ));
                        }
                        if self.current_context(&sidecar_id, parents) != Some(*strand_id) {
                            return Err(fail(&format!(
                                "source_context_ref {strand_id} is not the sidecar's current context as seen from this control"
                            )));
                        }
                    }
                    Body::ObservationGrant { .. } | Body::ObservationRevoke { .. }
                        if !by_controller =>
                    {
                        return Err(Rejection::new(
                            Code::SidecarExchangeControlForbidden,
                            "observation grants and revokes: only the sidecar's controller (complete actor) may author them",
                        ));
                    }
                    _ => {}
                }
                Ok(())
            }
        }
    }
}

fn duplicate(id: EventId, same: bool) -> Appended {
    if same {
        Appended::Duplicate(id)
    } else {
        let rejection = Rejection::new(
            Code::DuplicateConflict,
            format!("{id} is stored with other bytes"),
        );
        Appended::Rejected {
            id: Some(id),
            rejection,
        }
    }
}
