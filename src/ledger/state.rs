//! The ledger's in-memory derived state: the DAG index, id ⇄ position maps, the realm and
//! sidecar registry, and the pending set. Pure data; built from sled on open or from the
//! log by replay, changed only by [`State::apply`] with a staged batch.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::dag::{DagIndex, Pos};

use super::id_table::{IdTable, Vacancy};
use super::pending_set::PendingSet;
use super::positions::{LogPositions, PackedPos};
use super::record::{Record, Role};
use super::stamps::Stamps;
use crate::did::{ActorId, DidCoreId};
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

/// An accepted event still waiting for dependencies. Compact on purpose: its bytes stay in
/// the log (read back only when it may be released), and it is filed under ONE missing
/// dependency at a time, so a pending event costs the same memory whatever it names.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct PendingEntry {
    /// Where the log holds its bytes.
    pub at: LogPos,
    /// Its size in bytes (for the pending-bytes bound).
    pub size: u32,
    /// The missing dependency it is filed under in the state's waiting set: when that one is
    /// admitted, the event is read back and either released or filed under the next one.
    /// (Its 33 id bytes: entries are loaded by the thousand, and an id's text is built only
    /// when asked for.)
    pub waits_for: [u8; 33],
}

impl PendingEntry {
    /// The entry of an event `size` bytes long stored at `at`, filed under `waits_for`.
    pub fn new(at: LogPos, size: usize, waits_for: EventId) -> Self {
        PendingEntry {
            at,
            size: u32::try_from(size).unwrap_or(u32::MAX),
            waits_for: *waits_for.bytes(),
        }
    }

    /// The dependency it waits for.
    pub fn waits_for(&self) -> Option<EventId> {
        EventId::from_bytes(&self.waits_for).ok()
    }
}

/// Everything derived about admitted and pending events.
#[derive(Default, Debug)]
pub struct State {
    pub dag: DagIndex,
    /// Admitted ids by position, and back.
    pub ids: IdTable,
    /// Where the log holds each admitted event.
    pub at: LogPositions,
    /// Each admitted event's `created_at` milliseconds (`stamps.rs`).
    pub stamps: Stamps,
    pub realms: HashMap<RealmId, Pos>,
    pub sidecars: HashMap<SidecarId, SidecarEntry>,
    pub singletons: HashMap<(RealmId, ActorId), SidecarId>,
    /// Created strands and their realm.
    pub strands: HashMap<StrandId, RealmId>,
    /// Admitted context attaches, by position.
    pub attaches: HashMap<Pos, AttachEntry>,
    /// Positions of each sidecar's attaches, in admission order.
    pub contexts: HashMap<SidecarId, Vec<Pos>>,
    /// Each actor's admitted model versions (PROFILE §14.1) and their positions, by
    /// ascending version.
    pub actors: HashMap<DidCoreId, Vec<(u64, Pos)>>,
    /// Pending events, by id and by the one missing dependency each is filed under.
    pub pending: PendingSet,
    pub released_rejections: BTreeMap<EventId, Rejection>,
    pub by_sidecar: HashMap<SidecarId, Vec<Pos>>,
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
    /// Where the decision's lookup of the id in the id table stopped, for the insert to
    /// start from (`id_table.rs`).
    pub vacancy: Option<Vacancy>,
}

/// A pending event as a batch leaves it: new, or refiled under another missing dependency.
#[derive(Copy, Clone, Debug)]
pub struct Filed {
    pub id: EventId,
    pub at: Where,
    pub size: usize,
    pub waits_for: EventId,
}

/// A batch's changes, applied at once after the log commit.
#[derive(Default, Debug)]
pub struct Staged {
    pub admitted: Vec<Admission>,
    /// Pending events new in this batch, or refiled because the dependency they were filed
    /// under was admitted (none released by the batch).
    pub filed: Vec<Filed>,
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

    /// The `created_at` milliseconds of the event at a position.
    pub fn stamp(&self, pos: Pos) -> Option<u64> {
        self.stamps.get(pos, &self.dag)
    }

    /// The id at a position.
    pub fn id_at(&self, pos: Pos) -> Option<EventId> {
        self.ids.id_at(pos)
    }

    /// Applies a committed batch; `entry_at` maps batch entry indexes to log positions.
    /// Returns the index records of the admitted events, in admission order.
    pub fn apply(&mut self, staged: Staged, entry_at: &[LogPos]) -> Result<Vec<Record>, String> {
        let mut records = Vec::with_capacity(staged.admitted.len());
        for admission in staged.admitted {
            let at = admission
                .at
                .resolve(entry_at)
                .ok_or("an admission names a batch entry that was not written")?;
            let record = Record {
                id: admission.event.id(),
                at,
                stamp: admission.event.created_at().millis(),
                parents: admission.parents,
                role: Role::of(&admission.event),
            };
            self.admit_at(&record, admission.vacancy)?;
            records.push(record);
        }
        for filed in staged.filed {
            if let Some(at) = filed.at.resolve(entry_at) {
                self.add_pending(filed.id, PendingEntry::new(at, filed.size, filed.waits_for));
            }
        }
        for id in &staged.released {
            self.drop_pending(id);
        }
        for (id, why) in staged.rejected_on_release {
            self.released_rejections.insert(id, why);
        }
        Ok(records)
    }

    /// Records one admitted event (registry, maps, DAG).
    pub fn admit(&mut self, record: &Record) -> Result<Pos, String> {
        self.admit_at(record, None)
    }

    /// [`State::admit`], the id's insert into the id table started at `vacancy`.
    fn admit_at(&mut self, record: &Record, vacancy: Option<Vacancy>) -> Result<Pos, String> {
        let id = record.id;
        let at = PackedPos::new(record.at)?;
        // One probe of the id table both refuses a repeat and places the id.
        let Some(pos) = self.ids.push_at(&id, vacancy) else {
            return Err(format!(
                "{id} is admitted twice, or positions are exhausted"
            ));
        };
        let inserted = self
            .dag
            .insert(&record.parents, record.stamp)
            .map_err(|e| e.to_string())?;
        if inserted != pos {
            return Err("the id table and the DAG disagree on positions".into());
        }
        self.at.push(at);
        let gen = self.dag.generation(pos).unwrap_or(record.stamp);
        self.stamps.push(record.stamp, gen);
        self.register(pos, id, &record.role);
        Ok(pos)
    }

    /// The registry effects of the event `id` admitted at `pos` with `role`.
    pub fn register(&mut self, pos: Pos, id: EventId, role: &Role) {
        match role {
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
            Role::ActorModel { did, version } => {
                add_model_version(self.actors.entry(did.clone()).or_default(), *version, pos);
            }
        }
    }

    /// The roles that [`State::register`] recorded, by position: what rebuilds the
    /// registry on top of the ids and the DAG.
    pub fn roles(&self) -> Vec<(Pos, Role)> {
        let mut roles: Vec<(Pos, Role)> = Vec::new();
        roles.extend(self.realms.values().map(|p| (*p, Role::RealmCreate)));
        roles.extend(self.sidecars.values().map(|s| {
            let role = Role::SidecarCreate {
                realm: s.realm,
                controller: s.controller.clone(),
            };
            (s.pos, role)
        }));
        roles.extend(self.strands.iter().filter_map(|(strand, realm)| {
            let pos = self.ids.get(&strand.retype())?;
            Some((pos, Role::StrandCreate { realm: *realm }))
        }));
        roles.extend(self.attaches.iter().map(|(p, a)| {
            let role = Role::Attach {
                sidecar: a.sidecar,
                strand: a.strand,
                version: a.version,
            };
            (*p, role)
        }));
        for (did, versions) in &self.actors {
            roles.extend(versions.iter().map(|(version, pos)| {
                let role = Role::ActorModel {
                    did: did.clone(),
                    version: *version,
                };
                (*pos, role)
            }));
        }
        for (sidecar, list) in &self.by_sidecar {
            let plain = list.iter().filter(|p| !self.attaches.contains_key(p));
            roles.extend(plain.map(|p| (*p, Role::InSidecar(*sidecar))));
        }
        roles.sort_unstable_by_key(|(p, _)| *p);
        roles
    }

    /// The index record of every admitted event, by position: the record a replay of the
    /// log admitted it with (ids, log positions, stamps and parents from the arrays, roles
    /// from the registry). `None` where the arrays disagree on the count.
    pub fn records(&self) -> impl Iterator<Item = Option<Record>> + '_ {
        let mut roles = self.roles().into_iter().peekable();
        (0..self.len()).map(move |i| {
            let pos = Pos::new(u32::try_from(i).ok()?);
            let role = match roles.next_if(|(p, _)| *p == pos) {
                Some((_, role)) => role,
                None => Role::Plain,
            };
            Some(Record {
                id: self.id_at(pos)?,
                at: self.at.get(i)?,
                stamp: self.stamp(pos)?,
                parents: self.dag.parents(pos).to_vec(),
                role,
            })
        })
    }

    /// Records (or refiles) one pending event under the dependency it waits for.
    pub fn add_pending(&mut self, id: EventId, entry: PendingEntry) {
        self.pending.insert(id, entry);
    }

    /// Forgets a pending event (released, or an operator dropped it).
    pub fn drop_pending(&mut self, id: &EventId) {
        self.pending.remove(id);
    }

    /// The maximal heads of every admitted event, in canonical order: worked out from the
    /// DAG index's heads when asked for, not kept up to date by each commit (a ledger of many
    /// exchanges has a head per answer, and sorting them all at every commit made commits
    /// slower as the ledger grew).
    pub fn heads(&self) -> Vec<EventId> {
        let mut heads: Vec<EventId> = self
            .dag
            .heads()
            .iter()
            .filter_map(|p| self.id_at(*p))
            .collect();
        heads.sort_unstable();
        heads
    }
}

/// Files `version` at `pos` in an actor's versions, kept ascending (admission lets one
/// event hold each version; a repeated version keeps its first position).
pub(super) fn add_model_version(versions: &mut Vec<(u64, Pos)>, version: u64, pos: Pos) {
    if let Err(at) = versions.binary_search_by_key(&version, |(v, _)| *v) {
        versions.insert(at, (version, pos));
    }
}
