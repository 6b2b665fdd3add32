//! Causal queries on the ledger (PROFILE §5), by event id. Ids are mapped to dense DAG
//! positions once at the boundary; every walk runs on positions. Every list is returned in
//! canonical order (UTF-8 bytes of the id) unless said otherwise.

use std::collections::BTreeSet;

use crate::dag::Pos;
use crate::error::Error;
use crate::event::Event;
use crate::id::EventId;

use super::state::State;
use super::Ledger;

fn unknown(id: &EventId) -> Error {
    Error::NotFound(*id)
}

impl State {
    fn position(&self, id: &EventId) -> Result<Pos, Error> {
        self.pos_of.get(id).copied().ok_or_else(|| unknown(id))
    }

    fn positions(&self, ids: &[EventId]) -> Result<Vec<Pos>, Error> {
        ids.iter().map(|id| self.position(id)).collect()
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
        self.read_state()
            .map(|s| s.heads.clone())
            .unwrap_or_default()
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

    /// Events covered by `a` and not by `b` (what a peer at heads `b` is missing).
    pub fn difference(&self, a: &[EventId], b: &[EventId]) -> Result<Vec<EventId>, Error> {
        let state = self.read_state()?;
        let (a, b) = (state.positions(a)?, state.positions(b)?);
        Ok(state.sorted_ids(state.dag.difference(&a, &b)))
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

    /// Pending events with the dependencies they still miss, in canonical order.
    pub fn pending(&self) -> Vec<(EventId, Vec<EventId>)> {
        let Ok(state) = self.read_state() else {
            return Vec::new();
        };
        state
            .pending
            .iter()
            .map(|(id, p)| {
                let mut missing: Vec<EventId> = super::admit::dependencies(&p.event)
                    .into_iter()
                    .filter(|d| !state.pos_of.contains_key(d))
                    .collect();
                missing.sort_unstable();
                (*id, missing)
            })
            .collect()
    }

    /// The pending event with this id (`None` when it is admitted, unknown or not pending).
    pub fn pending_event(&self, id: &EventId) -> Option<Event> {
        let state = self.read_state().ok()?;
        state.pending.get(id).map(|p| p.event.clone())
    }

    /// The root cause of a pending event: the ids it waits for transitively that are
    /// neither admitted nor pending themselves — what must arrive before `id` can be
    /// decided. Missing dependencies that are pending are followed to what *they* miss.
    /// Canonical order; `None` when `id` is not pending.
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
            for dep in super::admit::dependencies(&entry.event) {
                if !state.pos_of.contains_key(&dep) && seen.insert(dep) {
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
