//! Admission (PROFILE §5, §6, §10): decides, for each verified event of a batch, whether it
//! is admitted, a duplicate, pending on missing dependencies, or rejected — and releases
//! pending events, in causal order, the moment their last dependency is admitted.
//!
//! Pure: it reads the committed [`State`] and writes only to the batch's [`Staged`] changes.
//! Log replay runs the same code on the same order, so the state derived from the log is
//! the state the live engine had.

use std::collections::{BTreeSet, HashMap};

use crate::dag::Pos;
use crate::envelope::{Body, ScopeRef};
use crate::error::{Code, Rejection};
use crate::event::Event;
use crate::id::{EventId, RealmId, SidecarId};

use crate::did::DidCoreId;
use crate::store::log::LogPos;

use super::state::{Admission, SidecarEntry, Staged, State, Where};

/// What happened to one appended event.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Appended {
    /// Admitted now.
    Admitted(EventId),
    /// Already stored with the same bytes (admitted or pending): nothing changed.
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

/// The events an event depends on: its causal refs, then its scope's create event.
pub fn dependencies(event: &Event) -> Vec<EventId> {
    let mut deps = event.envelope().causal_refs();
    let scope_dep = match event.scope() {
        ScopeRef::RealmGenesis => None,
        ScopeRef::Realm { realm_id } => Some(realm_id.retype()),
        ScopeRef::Sidecar { sidecar_id, .. } => Some(sidecar_id.retype()),
    };
    if let Some(dep) = scope_dep {
        if !deps.contains(&dep) {
            deps.push(dep);
        }
    }
    deps
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
    staged: Staged,
    new_pos: HashMap<EventId, Pos>,
    realms: HashMap<RealmId, Pos>,
    sidecars: HashMap<SidecarId, SidecarEntry>,
    pending: HashMap<EventId, (Event, Where)>,
    waiting: HashMap<EventId, BTreeSet<EventId>>,
    /// Bound on pending events and bytes for new events (`None` for replay).
    pending_limit: Option<(usize, usize)>,
    /// Bytes of the events in `pending`.
    pending_bytes: usize,
}

impl<'s> Decider<'s> {
    /// A decider over `state`.
    pub fn new(state: &'s State) -> Self {
        Decider {
            state,
            staged: Staged::default(),
            new_pos: HashMap::new(),
            realms: HashMap::new(),
            sidecars: HashMap::new(),
            pending: HashMap::new(),
            waiting: HashMap::new(),
            pending_limit: None,
            pending_bytes: 0,
        }
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
        let bytes = self.state.pending_bytes + self.pending_bytes + event.bytes().len();
        (events > max_events || bytes > max_bytes).then(|| {
            Rejection::new(
                Code::PendingLimitExceeded,
                format!(
                    "the ledger already holds its limit of pending events ({max_events} events or {max_bytes} bytes); admit their dependencies or drop some first"
                ),
            )
        })
    }

    /// The staged changes.
    pub fn finish(self) -> Staged {
        self.staged
    }

    fn pos(&self, id: &EventId) -> Option<Pos> {
        self.state
            .pos_of
            .get(id)
            .or_else(|| self.new_pos.get(id))
            .copied()
    }

    fn stamp(&self, pos: Pos) -> u64 {
        match pos.index().checked_sub(self.state.len()) {
            Some(i) => self
                .staged
                .admitted
                .get(i)
                .map(|a| a.event.created_at().millis()),
            None => self.state.stamps.get(pos.index()).copied(),
        }
        .unwrap_or_default()
    }

    fn pending_event(&self, id: &EventId) -> Option<(&Event, Where)> {
        if self.staged.released.contains(id) {
            return None;
        }
        self.pending.get(id).map(|(e, w)| (e, *w)).or_else(|| {
            self.state
                .pending
                .get(id)
                .map(|p| (&p.event, Where::At(p.at)))
        })
    }

    /// Decides one event. `stored(pos, bytes)` tells whether the committed event at `pos`
    /// has exactly `bytes` (the caller reads the log).
    pub fn decide(
        &mut self,
        event: Event,
        source: Source,
        stored: impl Fn(Pos, &[u8]) -> bool,
    ) -> Appended {
        let id = event.id();
        if let Some(pos) = self.pos(&id) {
            let same = match pos.index().checked_sub(self.state.len()) {
                Some(i) => self
                    .staged
                    .admitted
                    .get(i)
                    .is_some_and(|a| a.event.bytes() == event.bytes()),
                None => stored(pos, event.bytes()),
            };
            return duplicate(id, same);
        }
        if let Some((waiting, _)) = self.pending_event(&id) {
            if waiting.bytes() != event.bytes() {
                return duplicate(id, false);
            }
            return Appended::Pending {
                id,
                missing: self.missing(&event),
            };
        }
        let missing = self.missing(&event);
        if !missing.is_empty() {
            if let Some(rejection) = self.over_pending_limit(&event, source) {
                return Appended::Rejected {
                    id: Some(id),
                    rejection,
                };
            }
            self.pending_bytes += event.bytes().len();
            for dep in &missing {
                self.waiting.entry(*dep).or_default().insert(id);
            }
            let at = self.place(&event, source);
            self.staged.new_pending.push((event.clone(), at));
            self.pending.insert(id, (event, at));
            return Appended::Pending { id, missing };
        }
        match self.check(&event) {
            Err(rejection) => Appended::Rejected {
                id: Some(id),
                rejection,
            },
            Ok(parents) => {
                let at = self.place(&event, source);
                self.record(event, parents, at);
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
        let mut missing: Vec<EventId> = dependencies(event)
            .into_iter()
            .filter(|d| self.pos(d).is_none())
            .collect();
        missing.sort_unstable();
        missing
    }

    /// Stages an admission and its registry effects.
    fn record(&mut self, event: Event, parents: Vec<Pos>, at: Where) {
        let id = event.id();
        let index = self.state.len() + self.staged.admitted.len();
        let pos = Pos::new(u32::try_from(index).unwrap_or(u32::MAX));
        self.new_pos.insert(id, pos);
        match event.body() {
            Body::RealmCreate => {
                self.realms.insert(id.retype(), pos);
            }
            Body::SidecarCreate => {
                if let Some(realm) = event.scope().realm_id() {
                    let controller = event.actor().principal().clone();
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
        self.staged.admitted.push(Admission { event, parents, at });
    }

    /// Admits (or rejects) every pending event whose last dependency was `admitted`, and so
    /// on transitively, taking waiters in canonical id order.
    fn release_waiters(&mut self, admitted: EventId) {
        let mut work = vec![admitted];
        while let Some(done) = work.pop() {
            let mut waiters = self.waiting.remove(&done).unwrap_or_default();
            if let Some(base) = self.state.waiting.get(&done) {
                waiters.extend(base.iter().copied());
            }
            let mut freed = Vec::new();
            for waiter in waiters {
                let Some((event, at)) = self.pending_event(&waiter).map(|(e, w)| (e.clone(), w))
                else {
                    continue;
                };
                if !self.missing(&event).is_empty() {
                    continue;
                }
                self.staged.released.insert(waiter);
                match self.check(&event) {
                    Ok(parents) => {
                        self.record(event, parents, at);
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

    fn singleton(&self, realm: RealmId, controller: &DidCoreId) -> Option<SidecarId> {
        let key = (realm, controller.clone());
        self.state.singletons.get(&key).copied().or_else(|| {
            self.sidecars
                .iter()
                .find(|(_, s)| s.realm == realm && &s.controller == controller)
                .map(|(id, _)| *id)
        })
    }

    /// The stateful rules, with every dependency admitted. Returns the DAG parents.
    fn check(&self, event: &Event) -> Result<Vec<Pos>, Rejection> {
        let parents: Vec<Pos> = dependencies(event)
            .iter()
            .filter_map(|d| self.pos(d))
            .collect();
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
        self.check_scope(event)?;
        Ok(parents)
    }

    fn check_scope(&self, event: &Event) -> Result<(), Rejection> {
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
                if let Body::SidecarCreate = event.body() {
                    let controller = event.actor().principal();
                    let mine: SidecarId = event.id().retype();
                    if let Some(existing) =
                        self.singleton(realm_id, controller).filter(|s| *s != mine)
                    {
                        return Err(Rejection::new(
                            Code::SidecarSingletonConflict,
                            format!("{controller} already controls {existing} in this realm"),
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
                if is_control && event.actor().principal() != &sidecar.controller {
                    return Err(fail("only the sidecar's controller may author controls"));
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
