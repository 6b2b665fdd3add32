//! The causal questions the fold asks (PROFILE §5), behind the [`Causality`] trait, and
//! [`MemoryGraph`], a plain in-memory answer for tests, benches and standalone callers.
//!
//! The ledger answers the same questions over its dense DAG index; the fold never sees
//! which implementation it runs on.

use std::collections::{HashMap, HashSet};

use crate::event::{Event, Verified};
use crate::id::EventId;

/// Coverage, maximal heads and admission over the admitted events (PROFILE §5).
pub trait Causality {
    /// True when `x` is in `basis` or is an ancestor of some member of `basis`.
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool;

    /// The members of `set` that no other member covers, in canonical order.
    fn heads_of(&self, set: &[EventId]) -> Vec<EventId>;

    /// True when `id` is an admitted event.
    fn is_admitted(&self, id: &EventId) -> bool;

    /// Whether this causality knows actor models (PROFILE §14.1): when it does not (the
    /// default), the fold applies no §14.2 check to PNCP messages.
    fn knows_models(&self) -> bool {
        false
    }

    /// The current actor model of `did` as seen from the event `seen_from` (the greatest
    /// version `seen_from` covers); `None` when it covers none, or models are not known.
    fn current_model(
        &self,
        did: &crate::did::DidCoreId,
        seen_from: &EventId,
    ) -> Option<crate::actors::ActorModel> {
        let _ = (did, seen_from);
        None
    }

    /// The members of `candidates` covered by `basis`, in their input order. Override when
    /// one walk can answer for all candidates.
    fn covered_among(&self, basis: &[EventId], candidates: &[EventId]) -> Vec<EventId> {
        candidates
            .iter()
            .filter(|x| self.covers(basis, x))
            .copied()
            .collect()
    }
}

/// Parents per event: causal refs plus the scope edge.
#[derive(Clone, Debug, Default)]
pub struct MemoryGraph {
    parents: HashMap<EventId, Vec<EventId>>,
}

impl MemoryGraph {
    /// An empty graph.
    pub fn new() -> Self {
        MemoryGraph::default()
    }

    /// The graph of `events` (each treated as admitted).
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event<Verified>>) -> Self {
        let mut graph = MemoryGraph::new();
        for event in events {
            graph.insert(event);
        }
        graph
    }

    /// Adds `event` with its edges ([`Event::dependencies`]): `after` / `parent_event` refs
    /// and the implied edges of PROFILE §5.
    pub fn insert(&mut self, event: &Event<Verified>) {
        self.parents
            .insert(event.id(), event.dependencies().to_vec());
    }

    /// Every event reachable from `from` (inclusive).
    fn closure(&self, from: &[EventId]) -> HashSet<EventId> {
        let mut seen: HashSet<EventId> = from.iter().copied().collect();
        let mut stack: Vec<EventId> = from.to_vec();
        while let Some(id) = stack.pop() {
            for parent in self.parents.get(&id).into_iter().flatten() {
                if seen.insert(*parent) {
                    stack.push(*parent);
                }
            }
        }
        seen
    }
}

impl Causality for MemoryGraph {
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool {
        basis.contains(x) || self.closure(basis).contains(x)
    }

    fn heads_of(&self, set: &[EventId]) -> Vec<EventId> {
        let parents: Vec<EventId> = set
            .iter()
            .flat_map(|id| self.parents.get(id).into_iter().flatten().copied())
            .collect();
        let below = self.closure(&parents);
        let mut heads: Vec<EventId> = set
            .iter()
            .filter(|id| !below.contains(id))
            .copied()
            .collect();
        heads.sort();
        heads.dedup();
        heads
    }

    fn is_admitted(&self, id: &EventId) -> bool {
        self.parents.contains_key(id)
    }

    fn covered_among(&self, basis: &[EventId], candidates: &[EventId]) -> Vec<EventId> {
        let closure = self.closure(basis);
        candidates
            .iter()
            .filter(|x| closure.contains(x))
            .copied()
            .collect()
    }
}
