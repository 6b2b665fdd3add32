//! The ledger's in-memory derived state: the DAG index, id ⇄ position maps, the realm and
//! sidecar registry, and the pending set. Pure data; built from sled on open or from the
//! log by replay, changed only by [`State::apply`] with a staged batch.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::dag::{DagError, DagIndex, Pos};

use super::record::{Record, Role};
use crate::did::ActorId;
use crate::error::Rejection;
use crate::event::Event;
use crate::id::{EventId, RealmId, SidecarId, StrandId};
use crate::store::log::LogPos;

/// A sidecar known to the ledger.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SidecarEntry {
    /// The realm it lives in.
    pub realm: RealmId,
    /// The controller: the create event's complete actor (PROFILE §1, §6).
    pub controller: ActorId,
    /// Position of its create event.
    pub pos: Pos,
}

/// An admitted `ak.sidecar.context.attach` (PROFILE §6).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct AttachEntry {
    /// The sidecar it binds.
    pub sidecar: SidecarId,
    /// The strand it binds the sidecar to.
    pub strand: StrandId,
    /// Its version.
    pub version: u64,
}

/// An accepted event still waiting for dependencies.
#[derive(Clone, Debug)]
pub struct PendingEntry {
    /// The verified event.
    pub event: Event,
    /// Where the log holds it.
    pub at: LogPos,
}

/// Everything derived about admitted and pending events.
#[derive(Default, Debug)]
pub struct State {
    pub dag: DagIndex,
    pub ids: Vec<EventId>,
    pub pos_of: HashMap<EventId, Pos>,
    pub at: Vec<LogPos>,
    pub stamps: Vec<u64>,
    pub realms: HashMap<RealmId, Pos>,
    pub sidecars: HashMap<SidecarId, SidecarEntry>,
    pub singletons: HashMap<(RealmId, ActorId), SidecarId>,
    /// Created strands and their realm.
    pub strands: HashMap<StrandId, RealmId>,
    /// Admitted context attaches, by position.
    pub attaches: HashMap<Pos, AttachEntry>,
    /// Positions of each sidecar's attaches, in admission order.
    pub contexts: HashMap<SidecarId, Vec<Pos>>,
    pub pending: BTreeMap<EventId, PendingEntry>,
    /// Bytes of the events in `pending`.
    pub pending_bytes: usize,
    pub waiting: HashMap<EventId, BTreeSet<EventId>>,
    pub released_rejections: BTreeMap<EventId, Rejection>,
    pub by_sidecar: HashMap<SidecarId, Vec<Pos>>,
    pub heads: Vec<EventId>,
}

/// Where a staged event's bytes are in the log.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Where {
    /// Already in the log (released from pending, or read by replay).
    At(LogPos),
    /// The n-th new entry of this batch; its position is known once the batch is written.
    Entry(usize),
}

impl Where {
    /// The log position, once the batch's entries have positions.
    pub fn resolve(self, entry_at: &[LogPos]) -> Option<LogPos> {
        match self {
            Where::At(at) => Some(at),
            Where::Entry(i) => entry_at.get(i).copied(),
        }
    }
}

/// One admission, staged until its batch commits.
#[derive(Clone, Debug)]
pub struct Admission {
    pub event: Event,
    pub parents: Vec<Pos>,
    pub at: Where,
}

/// A batch's changes, applied at once after the log commit.
#[derive(Default, Debug)]
pub struct Staged {
    pub admitted: Vec<Admission>,
    pub new_pending: Vec<(Event, Where)>,
    pub released: BTreeSet<EventId>,
    pub rejected_on_release: Vec<(EventId, Rejection)>,
    /// The new events to write to the log, in processing order.
    pub entries: Vec<Event>,
}

impl State {
    /// Number of admitted events.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The id at a position.
    pub fn id_at(&self, pos: Pos) -> Option<EventId> {
        self.ids.get(pos.index()).copied()
    }

    /// Applies a committed batch; `entry_at` maps batch entry indexes to log positions.
    /// Returns the index records of the admitted events, in admission order.
    pub fn apply(&mut self, staged: Staged, entry_at: &[LogPos]) -> Result<Vec<Record>, DagError> {
        let mut records = Vec::with_capacity(staged.admitted.len());
        for admission in staged.admitted {
            let at = admission.at.resolve(entry_at).ok_or(DagError::Full)?;
            let record = Record {
                id: admission.event.id(),
                at,
                stamp: admission.event.created_at().millis(),
                parents: admission.parents,
                role: Role::of(&admission.event),
            };
            self.admit(&record)?;
            records.push(record);
        }
        for (event, at) in staged.new_pending {
            if !staged.released.contains(&event.id()) {
                if let Some(at) = at.resolve(entry_at) {
                    self.add_pending(event, at);
                }
            }
        }
        for id in &staged.released {
            if let Some(gone) = self.pending.remove(id) {
                self.pending_bytes = self.pending_bytes.saturating_sub(gone.event.bytes().len());
            }
        }
        for (id, why) in staged.rejected_on_release {
            self.released_rejections.insert(id, why);
        }
        self.refresh_heads();
        Ok(records)
    }

    /// Records one admitted event (registry, maps, DAG).
    pub fn admit(&mut self, record: &Record) -> Result<Pos, DagError> {
        let pos = self.dag.insert(&record.parents, record.stamp)?;
        let id = record.id;
        self.ids.push(id);
        self.pos_of.insert(id, pos);
        self.at.push(record.at);
        self.stamps.push(record.stamp);
        self.waiting.remove(&id);
        match &record.role {
            Role::Plain => {}
            Role::RealmCreate => {
                self.realms.insert(id.retype(), pos);
            }
            Role::SidecarCreate { realm, controller } => {
                let sidecar: SidecarId = id.retype();
                self.singletons
                    .insert((*realm, controller.clone()), sidecar);
                self.sidecars.insert(
                    sidecar,
                    SidecarEntry {
                        realm: *realm,
                        controller: controller.clone(),
                        pos,
                    },
                );
            }
            Role::InSidecar(sidecar) => self.by_sidecar.entry(*sidecar).or_default().push(pos),
            Role::StrandCreate { realm } => {
                self.strands.insert(id.retype(), *realm);
            }
            Role::Attach {
                sidecar,
                strand,
                version,
            } => {
                self.by_sidecar.entry(*sidecar).or_default().push(pos);
                self.contexts.entry(*sidecar).or_default().push(pos);
                self.attaches.insert(
                    pos,
                    AttachEntry {
                        sidecar: *sidecar,
                        strand: *strand,
                        version: *version,
                    },
                );
            }
        }
        Ok(pos)
    }

    /// Records one pending event under each dependency it misses.
    pub fn add_pending(&mut self, event: Event, at: LogPos) {
        let id = event.id();
        for dep in super::admit::dependencies(&event) {
            if !self.pos_of.contains_key(&dep) {
                self.waiting.entry(dep).or_default().insert(id);
            }
        }
        self.pending_bytes += event.bytes().len();
        if let Some(old) = self.pending.insert(id, PendingEntry { event, at }) {
            self.pending_bytes = self.pending_bytes.saturating_sub(old.event.bytes().len());
        }
    }

    /// Forgets a pending event (an operator dropped it).
    pub fn drop_pending(&mut self, id: &EventId) {
        let Some(gone) = self.pending.remove(id) else {
            return;
        };
        self.pending_bytes = self.pending_bytes.saturating_sub(gone.event.bytes().len());
        for dep in super::admit::dependencies(&gone.event) {
            if let Some(waiters) = self.waiting.get_mut(&dep) {
                waiters.remove(id);
                if waiters.is_empty() {
                    self.waiting.remove(&dep);
                }
            }
        }
    }

    /// Recomputes the canonical-order head list from the DAG.
    pub fn refresh_heads(&mut self) {
        let mut heads: Vec<EventId> = self
            .dag
            .heads()
            .iter()
            .filter_map(|p| self.id_at(*p))
            .collect();
        heads.sort_unstable();
        self.heads = heads;
    }
}
