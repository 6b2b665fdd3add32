//! The exchange fold (PROFILE §8): the items of one exchange in, its projection and the
//! events that did not fold out. A pure function of the item set: input order and
//! duplicates do not matter.

use std::collections::HashSet;

use crate::did::DidCoreId;
use crate::id::EventId;

use super::causality::Causality;
use super::classify::{ExchangeItem, Fact, SidecarInfo};
use super::controls::{chain, static_check, Conflict, Control, Request, State};
use super::plaintext::{ExchangeId, Role};
use super::pncp_rules;
use super::report::{NotFolded, Projection, Reason, Status};

/// What folding one exchange gives.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ExchangeOutcome {
    /// `None` when the exchange has no canonical request.
    pub projection: Option<Projection>,
    /// Every item that did not fold, in canonical order of event id.
    pub not_folded: Vec<NotFolded>,
    /// The conflict losers (§8.4) with the controls that beat them, in canonical order of
    /// the loser; each is also in `not_folded` as `conflict_loser`.
    pub conflicts: Vec<Conflict>,
}

/// An agent message that passed its checks (§8.1).
pub(super) struct AgentMessage {
    pub id: EventId,
    pub author: DidCoreId,
    pub response: bool,
}

/// Folds the items of `exchange_id` (items of other exchanges are skipped).
pub fn fold_exchange(
    sidecar: &SidecarInfo,
    exchange_id: &ExchangeId,
    items: &[ExchangeItem],
    causality: &impl Causality,
) -> ExchangeOutcome {
    let mut items: Vec<&ExchangeItem> = items
        .iter()
        .filter(|i| i.exchange_id == *exchange_id)
        .collect();
    items.sort_by_key(|i| i.event_id);
    items.dedup_by_key(|i| i.event_id);
    let mut out = Vec::new();
    let mut skip = |item: &ExchangeItem, reason| {
        out.push(NotFolded {
            event_id: item.event_id,
            sidecar_id: sidecar.sidecar_id,
            exchange_id: Some(exchange_id.clone()),
            reason,
        });
    };
    let request = canonical_request(sidecar, &items, causality, &mut skip);
    let Some(request) = request else {
        for item in items.iter().filter(|i| !is_request(i)) {
            let reason = match item.fact {
                Fact::Control { .. } => Reason::ControlWrongRequest,
                Fact::Message(_) => Reason::UnknownRequest,
            };
            skip(item, reason);
        }
        return ExchangeOutcome {
            projection: None,
            not_folded: out,
            conflicts: Vec::new(),
        };
    };
    let messages: Vec<AgentMessage> = items
        .iter()
        .filter_map(|i| {
            check_message(i, &request, causality)
                .and_then(|m| match pncp_rules::answer_fault(i, &items, causality) {
                    Some(reason) if m.is_some() => Err(reason),
                    _ => Ok(m),
                })
                .map_err(|r| skip(i, r))
                .ok()?
        })
        .collect();
    let validated: Vec<EventId> = messages
        .iter()
        .filter(|m| m.response)
        .map(|m| m.id)
        .collect();
    let (state, mut conflicts) = run_controls(&items, &request, &validated, causality, &mut skip);
    let folded_messages = match &state.terminal {
        None => messages,
        Some(t) => {
            let ids: Vec<EventId> = messages.iter().map(|m| m.id).collect();
            let covered: HashSet<EventId> = causality
                .covered_among(&t.basis, &ids)
                .into_iter()
                .collect();
            let (inside, outside): (Vec<_>, Vec<_>) =
                messages.into_iter().partition(|m| covered.contains(&m.id));
            for m in outside {
                if let Some(item) = items.iter().find(|i| i.event_id == m.id) {
                    skip(item, Reason::AfterTerminal);
                }
            }
            inside
        }
    };
    out.sort();
    conflicts.sort_by_key(|c| c.loser);
    ExchangeOutcome {
        projection: Some(project(
            sidecar,
            exchange_id,
            &request,
            folded_messages,
            state,
            causality,
        )),
        not_folded: out,
        conflicts,
    }
}

fn is_request(item: &ExchangeItem) -> bool {
    matches!(item.fact, Fact::Message(Role::Request(_)))
}

/// §8.1: the canonical request; reports requests not by the controller and retries.
fn canonical_request<'a>(
    sidecar: &SidecarInfo,
    items: &[&'a ExchangeItem],
    causality: &impl Causality,
    skip: &mut impl FnMut(&ExchangeItem, Reason),
) -> Option<Request<'a>> {
    let mut valid = Vec::new();
    for item in items {
        if let Fact::Message(Role::Request(context)) = &item.fact {
            let track = context.source_track_ref();
            if !item.by_controller {
                skip(item, Reason::RequestNotByController);
            } else if track.realm_id != sidecar.realm_id
                || sidecar.current_context(&item.event_id, causality) != Some(track.strand_id)
            {
                skip(item, Reason::RequestContextNotCurrent);
            } else if let Some(reason) = pncp_rules::request_fault(item, context, causality) {
                skip(item, reason);
            } else {
                valid.push(Request {
                    id: item.event_id,
                    context,
                });
            }
        }
    }
    let ids: Vec<EventId> = valid.iter().map(|r| r.id).collect();
    let earliest = |r: &Request<'_>| {
        ids.iter()
            .all(|o| *o == r.id || !causality.covers(&[r.id], o))
    };
    let winner = valid
        .iter()
        .filter(|r| earliest(r))
        .max_by_key(|r| r.id.digest())
        .map(|r| r.id);
    let mut canonical = None;
    for r in valid {
        if Some(r.id) == winner {
            canonical = Some(r);
        } else if let Some(item) = items.iter().find(|i| i.event_id == r.id) {
            skip(item, Reason::RetryRequest);
        }
    }
    canonical
}

/// §8.1 checks of an agent message; `Ok(None)` for items that are not agent messages.
/// Responses need all seven checks; `internal` messages only checks 1–4 and a
/// non-controller author (so an internal by a non-addressed agent still participates).
pub(super) fn check_message(
    item: &ExchangeItem,
    request: &Request<'_>,
    causality: &impl Causality,
) -> Result<Option<AgentMessage>, Reason> {
    let (request_event_id, response) = match &item.fact {
        Fact::Message(Role::Response {
            request_event_id, ..
        }) => (request_event_id, true),
        Fact::Message(Role::Internal { request_event_id }) => (request_event_id, false),
        _ => return Ok(None),
    };
    if *request_event_id != request.id {
        return Err(Reason::UnknownRequest);
    }
    if item.by_controller {
        return Err(pncp_rules::controller_fault(
            item,
            request.context,
            causality,
        ));
    }
    if response && !request.context.is_addressed(&item.author) {
        return Err(Reason::NotAddressed);
    }
    if response && !item.has_after(&request.id) {
        return Err(Reason::MissingAfterRef);
    }
    if let Some(reason) = pncp_rules::message_fault(item, causality) {
        return Err(reason);
    }
    Ok(Some(AgentMessage {
        id: item.event_id,
        author: item.author.clone(),
        response,
    }))
}

/// §8.3–§8.5: static validity, conflicts, chain order and transitions; the state the chain
/// drives and the conflict losers.
fn run_controls(
    items: &[&ExchangeItem],
    request: &Request<'_>,
    validated: &[EventId],
    causality: &impl Causality,
    skip: &mut impl FnMut(&ExchangeItem, Reason),
) -> (State, Vec<Conflict>) {
    // Exchange facts (§8.3): the request, messages whose valid binding names this exchange,
    // and this exchange's controls — every item here.
    let facts: HashSet<EventId> = items.iter().map(|i| i.event_id).collect();
    let mut valid = Vec::new();
    for item in items {
        if let Fact::Control {
            strand_id,
            plaintext,
        } = &item.fact
        {
            let control = Control {
                item,
                strand_id: *strand_id,
                plaintext,
            };
            match static_check(&control, request, validated, &facts, causality) {
                Ok(()) => valid.push(control),
                Err(reason) => skip(item, reason),
            }
        }
    }
    let (chain, losers) = chain(&valid, causality);
    for control in valid
        .iter()
        .filter(|c| losers.iter().any(|l| l.loser == c.item.event_id))
    {
        skip(control.item, Reason::ConflictLoser);
    }
    let mut state = State::new(request);
    for control in &chain {
        if let Err(reason) = state.apply(control, request) {
            skip(control.item, reason);
        }
    }
    (state, losers)
}

/// §8.6.
fn project(
    sidecar: &SidecarInfo,
    exchange_id: &ExchangeId,
    request: &Request<'_>,
    messages: Vec<AgentMessage>,
    state: State,
    causality: &impl Causality,
) -> Projection {
    let mut responses: Vec<EventId> = messages
        .iter()
        .filter(|m| m.response)
        .map(|m| m.id)
        .collect();
    responses.sort();
    let mut participants: Vec<DidCoreId> = messages.iter().map(|m| m.author.clone()).collect();
    participants.sort();
    participants.dedup();
    let mut folded: Vec<EventId> = messages.iter().map(|m| m.id).collect();
    folded.push(request.id);
    folded.extend(&state.applied);
    folded.sort();
    let status = match (&state.terminal, responses.is_empty()) {
        (None, true) => Status::Delivered,
        (None, false) => Status::Responding,
        (Some(t), _) if t.failure_code.is_some() => Status::Failed,
        (Some(_), _) => Status::Complete,
    };
    let terminal = state.terminal;
    Projection {
        exchange_id: exchange_id.clone(),
        sidecar_id: sidecar.sidecar_id,
        strand_id: request.context.source_track_ref().strand_id,
        request_event_id: request.id,
        addressed_agent_ids: request.context.addressed().to_vec(),
        coordinator_agent_id: state.coordinator,
        coordinator_assignment_event_id: state.assignment,
        participating_agent_ids: participants,
        user_facing_response_event_ids: responses,
        status,
        failure_reason_code: terminal.as_ref().and_then(|t| t.failure_code.clone()),
        terminal_event_id: terminal.map(|t| t.id),
        checkpoint_heads: causality.heads_of(&folded),
        folded_event_ids: folded,
    }
}
