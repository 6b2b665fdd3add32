//! Causal queries on the ledger (PROFILE §5), by event id. Ids are mapped to dense DAG
//! positions once at the boundary; every walk runs on positions. Every list is returned in
//! canonical order (UTF-8 bytes of the id) unless said otherwise.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::dag::Pos;
use crate::error::Error;
use crate::event::Event;
use crate::id::EventId;
use crate::id_prefix::IdPrefix;

use super::state::{PendingEntry, State};
use super::Ledger;

fn unknown(id: &EventId) -> Error {
    Error::NotFound(*id)
}

impl State {
    fn position(&self, id: &EventId) -> Result<Pos, Error> {
        self.ids.get(id).ok_or_else(|| unknown(id))
    }

    fn positions(&self, ids: &[EventId]) -> Result<Vec<Pos>, Error> {
        ids.iter().map(|id| self.position(id)).collect()
    }

    /// The positions `a` covers and `b` does not, in admission order.
    fn difference(&self, a: &[EventId], b: &[EventId]) -> Result<Vec<Pos>, Error> {
        let (a, b) = (self.positions(a)?, self.positions(b)?);
        Ok(self.dag.difference(&a, &b))
    }

    fn sorted_ids(&self, positions: impl IntoIterator<Item = Pos>) -> Vec<EventId> {
        let mut ids: Vec<EventId> = positions
            .into_iter()
            .filter_map(|p| self.id_at(p))
            .collect();
        ids.sort_unstable();
        ids
    }
}

impl Ledger {
    /// The ledger heads: maximal heads of all admitted events.
    pub fn heads(&self) -> Vec<EventId> {
        self.read_state().map(|s| s.heads()).unwrap_or_default()
    }

    /// The admitted realms, by id.
    pub fn realms(&self) -> Vec<crate::id::RealmId> {
        let mut realms: Vec<crate::id::RealmId> = self
            .read_state()
            .map(|s| s.realms.keys().copied().collect())
            .unwrap_or_default();
        realms.sort_unstable();
        realms
    }

    /// Whether `id` is admitted here.
    pub fn contains(&self, id: &EventId) -> bool {
        self.read_state().is_ok_and(|s| s.ids.contains(id))
    }

    /// The admission position of the admitted event `id`: its index in admission order,
    /// as `iter_from` and `watch_events` count.
    pub fn position(&self, id: &EventId) -> Option<u64> {
        let state = self.read_state().ok()?;
        state.ids.get(id).map(|p| p.index() as u64)
    }

    /// The admitted and pending events whose ids start with `prefix` (an abbreviation, as
    /// git resolves one), at most `limit` of them: one id when the abbreviation is unique.
    /// A scan of the 33-byte ids (about 33 MB at a million events), no text built.
    pub fn ids_starting_with(&self, prefix: &IdPrefix, limit: usize) -> Vec<EventId> {
        let Ok(state) = self.read_state() else {
            return Vec::new();
        };
        let admitted = state.ids.raw().iter().filter(|raw| prefix.matches(raw));
        let mut found: Vec<EventId> = admitted
            .filter_map(|raw| EventId::from_bytes(raw).ok())
            .take(limit)
            .collect();
        if found.len() < limit {
            let pending = state.pending.sorted().into_iter().map(|(id, _)| id);
            found.extend(
                pending
                    .filter(|id| prefix.matches(id.bytes()))
                    .take(limit - found.len()),
            );
        }
        found
    }

    /// Whether `id` is stored here as pending.
    pub fn is_pending(&self, id: &EventId) -> bool {
        self.read_state().is_ok_and(|s| s.pending.contains(id))
    }

    /// Maximal heads of `ids` (all must be admitted).
    pub fn heads_of(&self, ids: &[EventId]) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        let set = state.positions(ids)?;
        Ok(state.sorted_ids(state.dag.heads_of(&set)))
    }

    /// Whether `x` is covered by `basis`: in it, or an ancestor of a member.
    pub fn covers(&self, basis: &[EventId], x: &EventId) -> Result<bool, Error> {
        let state = self.read_state()?;
        Ok(state
            .dag
            .covers(&state.positions(basis)?, state.position(x)?))
    }

    /// [`Ledger::covers`] for many targets against one basis, in input order.
    pub fn covers_all(&self, basis: &[EventId], xs: &[EventId]) -> Result<Vec<bool>, Error> {
        let state = self.read_state()?;
        Ok(state
            .dag
            .covers_all(&state.positions(basis)?, &state.positions(xs)?))
    }

    /// Whether `a` is a strict ancestor of `b`.
    pub fn is_ancestor(&self, a: &EventId, b: &EventId) -> Result<bool, Error> {
        let state = self.read_state()?;
        Ok(state
            .dag
            .is_ancestor(state.position(a)?, state.position(b)?))
    }

    /// Whether neither of `a`, `b` covers the other.
    pub fn concurrent(&self, a: &EventId, b: &EventId) -> Result<bool, Error> {
        let state = self.read_state()?;
        Ok(state.dag.concurrent(state.position(a)?, state.position(b)?))
    }

    /// The strict ancestors of `x`.
    pub fn ancestors(&self, x: &EventId) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        let pos = state.position(x)?;
        Ok(state.sorted_ids(state.dag.ancestors(pos)))
    }

    /// Every event covered by `set` (members included).
    pub fn ancestors_of(&self, set: &[EventId]) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        let set = state.positions(set)?;
        Ok(state.sorted_ids(state.dag.ancestors_of(&set)))
    }

    /// Events covered by `a` and not by `b` (what a peer at heads `b` is missing), sorted
    /// by id.
    pub fn difference(&self, a: &[EventId], b: &[EventId]) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        Ok(state.sorted_ids(state.difference(a, b)?))
    }

    /// [`Ledger::difference`] in admission order (a causal order: what a peer can admit
    /// in this order without pending), without sorting by id.
    pub fn difference_in_admission_order(
        &self,
        a: &[EventId],
        b: &[EventId],
    ) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        Ok(state
            .difference(a, b)?
            .into_iter()
            .filter_map(|p| state.id_at(p))
            .collect())
    }

    /// A deterministic linear extension of all admitted events: among events whose
    /// parents are all listed, the smallest id comes first. Not sorted by id.
    pub fn causal_order(&self) -> Vec<EventId> {
        let Ok(state) = self.read_state() else {
            return Vec::new();
        };
        let order = state.dag.causal_order(|p| state.id_at(p));
        order.into_iter().filter_map(|p| state.id_at(p)).collect()
    }

    /// The positions of the events `a` covers and `b` does not, newest first (reverse
    /// admission order). For a session's have rounds, which turn only the positions they
    /// ask about into ids ([`Ledger::ids_at`]).
    pub(crate) fn difference_newest_first(
        &self,
        a: &[EventId],
        b: &[EventId],
    ) -> Result<Vec<Pos>, Error> {
        let mut order = self.read_state()?.difference(a, b)?;
        order.reverse();
        Ok(order)
    }

    /// The ids at `positions` (positions this ledger handed out), in their order.
    pub(crate) fn ids_at(&self, positions: &[Pos]) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        Ok(positions.iter().filter_map(|&p| state.id_at(p)).collect())
    }

    /// Where the log holds each of `ids` that is admitted here, in their order, under one
    /// look at the state: for [`Ledger::read_stored_each`].
    pub(crate) fn stored_at(
        &self,
        ids: &[EventId],
    ) -> Result<Vec<crate::store::log::LogPos>, Error> {
        let state = self.read_state()?;
        Ok(ids
            .iter()
            .filter_map(|id| state.ids.get(id).and_then(|p| state.at.get(p.index())))
            .collect())
    }

    /// The stored bytes of the events at `at` (from [`Ledger::stored_at`]), in order, handed
    /// to `each`: events the log holds side by side are read together (see
    /// `SegmentReader::read_each`).
    pub(crate) fn read_stored_each<E: From<Error>>(
        &self,
        at: &[crate::store::log::LogPos],
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.reader.read_each(
            at,
            &mut Vec::new(),
            |e| E::from(super::log_error(e)),
            |_, payload| each(payload),
        )
    }

    /// The stored bytes of an admitted event, as the log holds them (not re-parsed: they
    /// were checked before they were written to the checksummed log).
    pub fn stored_bytes(&self, id: &EventId) -> Result<Option<Vec<u8>>, Error> {
        self.admitted_at(id)?
            .map(|at| {
                self.reader
                    .read(at)
                    .map(|(_, bytes)| bytes)
                    .map_err(super::log_error)
            })
            .transpose()
    }

    /// Number of pending events (without reading them back, as [`Ledger::pending`] does).
    pub fn pending_count(&self) -> usize {
        self.read_state().map_or(0, |s| s.pending.len())
    }

    /// Pending events with the dependencies they still miss, in canonical order. (Pending
    /// events are kept compact in memory: this reads each one back from the log.)
    pub fn pending(&self) -> Vec<(EventId, Vec<EventId>)> {
        let entries: Vec<(EventId, PendingEntry)> = match self.read_state() {
            Ok(state) => state.pending.sorted(),
            Err(_) => return Vec::new(),
        };
        let deps: Vec<(EventId, Vec<EventId>)> = entries
            .iter()
            .map(|(id, entry)| (*id, self.pending_dependencies(entry)))
            .collect();
        let Ok(state) = self.read_state() else {
            return Vec::new();
        };
        deps.into_iter()
            .map(|(id, deps)| {
                let mut missing: Vec<EventId> = deps
                    .into_iter()
                    .filter(|d| !state.ids.contains(d))
                    .collect();
                missing.sort_unstable();
                (id, missing)
            })
            .collect()
    }

    /// The dependencies of a pending event, read back from the log; if it cannot be read
    /// (a damaged log, which `check` reports), the one it is known to wait for.
    fn pending_dependencies(&self, entry: &PendingEntry) -> Vec<EventId> {
        self.read_event(entry.at)
            .map(|event| event.dependencies().to_vec())
            .unwrap_or_else(|_| entry.waits_for().into_iter().collect())
    }

    /// The pending event with this id (`None` when it is admitted, unknown or not pending).
    pub fn pending_event(&self, id: &EventId) -> Option<Event> {
        let at = self.read_state().ok()?.pending.get(id)?.at;
        self.read_event(at).ok()
    }

    /// The root cause of a pending event: the ids it waits for transitively that are
    /// neither admitted nor pending themselves — what must arrive before `id` can be
    /// decided (see [`PendingCause::root_missing`]). Missing dependencies that are pending
    /// are followed to what *they* miss. Canonical order; `None` when `id` is not pending.
    pub fn pending_root_missing(&self, id: &EventId) -> Option<Vec<EventId>> {
        let state = self.read_state().ok()?;
        state.pending.get(id)?;
        let mut roots = BTreeSet::new();
        let mut seen = BTreeSet::from([*id]);
        let mut todo = vec![*id];
        while let Some(next) = todo.pop() {
            let Some(entry) = state.pending.get(&next) else {
                roots.insert(next);
                continue;
            };
            for dep in self.pending_dependencies(&entry) {
                if !state.ids.contains(&dep) && seen.insert(dep) {
                    todo.push(dep);
                }
            }
        }
        Some(roots.into_iter().collect())
    }

    /// Events that were stored as pending and rejected when their dependencies arrived.
    pub fn rejected_on_release(&self) -> Vec<(EventId, crate::error::Rejection)> {
        self.read_state()
            .map(|s| {
                s.released_rejections
                    .iter()
                    .map(|(id, r)| (*id, r.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A pending event with what it waits for: `missing`, its dependencies not admitted (some
/// may be pending themselves), and `root_missing`, the transitive root cause — the events
/// it waits for, directly or through pending dependencies, that are neither admitted nor
/// pending (never seen, or rejected). Both in canonical order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PendingCause {
    /// The pending event.
    pub id: EventId,
    /// Its dependencies that are not admitted.
    pub missing: Vec<EventId>,
    /// What it ultimately waits for: missing events that are not pending themselves.
    pub root_missing: Vec<EventId>,
}

impl Ledger {
    /// Every pending event with its direct and root causes, in canonical order; one walk
    /// shared by all (a chain of pending events is walked once, not once per member).
    pub fn pending_causes(&self) -> Vec<PendingCause> {
        pending_causes(self.pending())
    }
}

/// [`PendingCause`]s of a pending list (`(event, its missing dependencies)`, as
/// [`Ledger::pending`] returns it), computed over that list alone: an audit's replay or a
/// ledger's pending set.
pub fn pending_causes(pending: Vec<(EventId, Vec<EventId>)>) -> Vec<PendingCause> {
    let waiting: HashMap<EventId, &[EventId]> =
        pending.iter().map(|(i, m)| (*i, m.as_slice())).collect();
    let mut memo = HashMap::new();
    let roots: Vec<Arc<[EventId]>> = pending
        .iter()
        .map(|(id, _)| root_missing(&waiting, *id, &mut memo))
        .collect();
    drop(waiting);
    pending
        .into_iter()
        .zip(roots)
        .map(|((id, missing), roots)| PendingCause {
            id,
            missing,
            root_missing: roots.to_vec(),
        })
        .collect()
}

/// The root missing events of `start`: a post-order walk over pending events without
/// recursion (a chain may be as long as the log), memoized in `memo`. A pending event with
/// one pending dependency and nothing else missing shares that dependency's list. Ids are
/// content hashes, so the waits cannot form a cycle; should hostile state ever hold one,
/// the edge back into the walk is skipped rather than followed forever.
fn root_missing(
    waiting: &HashMap<EventId, &[EventId]>,
    start: EventId,
    memo: &mut HashMap<EventId, Arc<[EventId]>>,
) -> Arc<[EventId]> {
    let mut on_path: HashSet<EventId> = HashSet::new();
    let mut stack = vec![(start, false)];
    while let Some((node, expanded)) = stack.pop() {
        if memo.contains_key(&node) {
            continue;
        }
        let deps = waiting.get(&node).copied().unwrap_or_default();
        if !expanded {
            on_path.insert(node);
            stack.push((node, true));
            for d in deps {
                if waiting.contains_key(d) && !memo.contains_key(d) && !on_path.contains(d) {
                    stack.push((*d, false));
                }
            }
            continue;
        }
        on_path.remove(&node);
        let direct: Vec<EventId> = deps
            .iter()
            .filter(|d| !waiting.contains_key(d))
            .copied()
            .collect();
        let through: Vec<&Arc<[EventId]>> = deps.iter().filter_map(|d| memo.get(d)).collect();
        let roots = match (direct.is_empty(), through.as_slice()) {
            (true, [only]) => Arc::clone(only),
            _ => {
                let set: BTreeSet<EventId> = direct
                    .into_iter()
                    .chain(through.iter().flat_map(|r| r.iter().copied()))
                    .collect();
                set.into_iter().collect()
            }
        };
        memo.insert(node, roots);
    }
    memo.get(&start).cloned().unwrap_or_else(|| Arc::from([]))
}
