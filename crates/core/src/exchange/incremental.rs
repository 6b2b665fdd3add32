//! The incremental fold (PROFILE §8): one more agent message folded into an exchange's
//! outcome without refolding the exchange, so an exchange with n responses costs O(n)
//! to follow instead of O(n²).
//!
//! Why this is exact. The new message `m` is, by precondition, newest: no other item of
//! the exchange covers it (a ledger admits in causal order, so a freshly admitted event is
//! an ancestor of nothing admitted before it). Then `m` changes nothing the rest of the
//! fold read: it is no request, so the canonical request stands; no control's basis
//! covers it, so every control's static check, the chain and the state stand; the
//! terminal's basis does not cover it, so after a terminal it is after the terminal; and
//! the heads of the folded set gain `m` and lose only what `m` covers. What remains is
//! `m`'s own §8.1 checks, which read only `m` and the request. Anything else (a request, a
//! control, no canonical request, a repeated id, a control whose basis was not admitted
//! when it was folded) is left to [`super::fold_exchange`]. The ledger's `check()` and
//! the property tests compare the result with a full refold.

use super::causality::Causality;
use super::classify::{ExchangeItem, Fact, SidecarInfo};
use super::controls::Request;
use super::fold::{check_message, ExchangeOutcome};
use super::plaintext::Role;
use super::report::{NotFolded, Projection, Reason, Status};
use crate::id::EventId;

/// What [`fold_added_message`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Added {
    /// The shortcut does not apply; `outcome` is untouched and the caller refolds.
    Refold,
    /// Folded in; the projection is unchanged (only `not_folded` may have grown).
    Unchanged,
    /// Folded in; the projection changed.
    Changed,
}

/// Folds the last of `items` (this exchange's items, the new one last) into `outcome`, the
/// fold of the items before it. Precondition: no other item covers the new one.
pub fn fold_added_message(
    sidecar: &SidecarInfo,
    items: &[ExchangeItem],
    outcome: &mut ExchangeOutcome,
    causality: &impl Causality,
) -> Added {
    let Some((item, before)) = items.split_last() else {
        return Added::Refold;
    };
    fold_added(sidecar, before, item, outcome, causality)
}

/// [`fold_added_message`] with the new item apart from the items before it (`outcome` is
/// the fold of `before`).
pub fn fold_added(
    sidecar: &SidecarInfo,
    before: &[ExchangeItem],
    item: &ExchangeItem,
    outcome: &mut ExchangeOutcome,
    causality: &impl Causality,
) -> Added {
    let Some(projection) = outcome.projection.as_mut() else {
        return Added::Refold;
    };
    if !matches!(
        item.fact,
        Fact::Message(Role::Response { .. } | Role::Internal { .. })
    ) || item.exchange_id != projection.exchange_id
        || before.iter().any(|i| i.event_id == item.event_id)
        || outcome
            .not_folded
            .iter()
            .any(|n| n.reason == Reason::ControlBasisNotAdmitted)
    {
        return Added::Refold;
    }
    let request = before.iter().find_map(|i| match &i.fact {
        Fact::Message(Role::Request(context)) if i.event_id == projection.request_event_id => {
            Some(Request {
                id: i.event_id,
                context,
            })
        }
        _ => None,
    });
    let Some(request) = request else {
        return Added::Refold;
    };
    // An answer is judged against the exchange's questions: the full fold has them.
    if causality.knows_models()
        && item
            .pncp
            .as_ref()
            .is_some_and(|p| p.kind == crate::actors::PncpKind::Answer)
    {
        return Added::Refold;
    }
    let reason = match check_message(item, &request, causality) {
        Err(reason) => Some(reason),
        Ok(None) => return Added::Refold,
        Ok(Some(_)) if projection.terminal_event_id.is_some() => Some(Reason::AfterTerminal),
        Ok(Some(message)) => {
            add_to_projection(projection, &message, item, causality);
            None
        }
    };
    match reason {
        Some(reason) => {
            let skipped = NotFolded {
                event_id: item.event_id,
                sidecar_id: sidecar.sidecar_id,
                exchange_id: Some(item.exchange_id.clone()),
                reason,
            };
            let at = outcome.not_folded.partition_point(|n| *n < skipped);
            outcome.not_folded.insert(at, skipped);
            Added::Unchanged
        }
        None => Added::Changed,
    }
}

/// §8.6 for one more folded agent message (`item`, read as `message`) of an exchange with
/// no terminal.
fn add_to_projection(
    projection: &mut Projection,
    message: &super::fold::AgentMessage,
    item: &ExchangeItem,
    causality: &impl Causality,
) {
    if message.response {
        insert_sorted(&mut projection.user_facing_response_event_ids, message.id);
        projection.status = Status::Responding;
    }
    insert_sorted(
        &mut projection.participating_agent_ids,
        message.author.clone(),
    );
    let covered = heads_covered(projection, item, causality);
    for head in &covered {
        if let Ok(at) = projection.checkpoint_heads.binary_search(head) {
            projection.checkpoint_heads.remove(at);
        }
    }
    insert_sorted(&mut projection.folded_event_ids, message.id);
    insert_sorted(&mut projection.checkpoint_heads, message.id);
}

/// The checkpoint heads (the maximal folded events) that the new `item` covers, read off
/// its `after` refs where they settle it: a ref to a head covers that head and no other
/// (heads never cover each other); a ref to a folded event that is no head covers no head
/// (a head it covered would be covered by a folded event, so not maximal); and the
/// sidecar's create event, an ancestor of every exchange event, covers none. Only refs to
/// events outside the fold, and edges other than `after` refs, go to the causal index, so
/// a response that cites its request costs two binary searches, not a look at every head.
fn heads_covered(
    projection: &Projection,
    item: &ExchangeItem,
    causality: &impl Causality,
) -> Vec<EventId> {
    let heads = &projection.checkpoint_heads;
    if item.other_edges {
        return causality.covered_among(&[item.event_id], heads);
    }
    let mut covered = Vec::new();
    let mut outside = Vec::new();
    for target in &item.after {
        if heads.binary_search(target).is_ok() {
            covered.push(*target);
        } else if projection.folded_event_ids.binary_search(target).is_err() {
            outside.push(*target);
        }
    }
    if !outside.is_empty() {
        covered.extend(causality.covered_among(&outside, heads));
    }
    covered
}

/// Inserts `x` into the ascending `v` unless it is there.
fn insert_sorted<T: Ord>(v: &mut Vec<T>, x: T) {
    if let Err(at) = v.binary_search(&x) {
        v.insert(at, x);
    }
}
