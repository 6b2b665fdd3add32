//! The current model of an actor as seen from an event (PROFILE §14.1), on the DAG index:
//! the greatest version whose event the given event covers. Resolved causally, the way a
//! sidecar's current context is, so every replica that holds the same events answers alike,
//! whatever order they arrived in.

use crate::dag::{DagIndex, Pos};

/// The position of the current model among `versions` (an actor's admitted model
/// versions and their positions, ascending by version) as seen from `seen`; `None` when
/// `seen` covers none of them.
#[inline]
pub fn current_model_at(dag: &DagIndex, versions: &[(u64, Pos)], seen: Pos) -> Option<Pos> {
    versions
        .iter()
        .rev()
        .map(|(_, pos)| *pos)
        .find(|pos| dag.covers(&[seen], *pos))
}
