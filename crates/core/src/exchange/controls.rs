//! Controls of one exchange: static validity (PROFILE §8.3), conflict losers and the causal
//! chain (§8.4), and the transitions that chain drives (§8.5).

use std::collections::HashSet;

use crate::did::DidCoreId;
use crate::id::{EventId, StrandId};

use super::causality::Causality;
use super::classify::ExchangeItem;
use super::plaintext::{Action, ControlPlaintext, RequestContext};
use super::report::Reason;

/// The canonical request an exchange's controls are checked against.
pub(crate) struct Request<'a> {
    pub id: EventId,
    pub context: &'a RequestContext,
}

/// A decrypted controller control of this exchange.
#[derive(Copy, Clone)]
pub(crate) struct Control<'a> {
    pub item: &'a ExchangeItem,
    pub strand_id: StrandId,
    pub plaintext: &'a ControlPlaintext,
}

impl Control<'_> {
    fn id(&self) -> EventId {
        self.item.event_id
    }
}

/// §8.3: why `control` is not valid, if it is not. `validated` holds every validated
/// response of the exchange, `facts` its exchange facts.
pub(crate) fn static_check(
    control: &Control<'_>,
    request: &Request<'_>,
    validated: &[EventId],
    facts: &HashSet<EventId>,
    causality: &impl Causality,
) -> Result<(), Reason> {
    let p = control.plaintext;
    let basis = p.basis_event_ids.as_slice();
    if p.request_event_id != request.id {
        return Err(Reason::ControlWrongRequest);
    }
    if control.strand_id != request.context.source_track_ref().strand_id {
        return Err(Reason::ControlWrongStrand);
    }
    if !basis.iter().all(|b| causality.is_admitted(b)) {
        return Err(Reason::ControlBasisNotAdmitted);
    }
    if !basis.iter().all(|b| control.item.has_after(b)) {
        return Err(Reason::ControlMissingAfterRef);
    }
    if !basis.iter().all(|b| facts.contains(b)) {
        return Err(Reason::ControlBasisNotExchangeFact);
    }
    if causality.heads_of(basis).len() != basis.len() {
        return Err(Reason::ControlBasisNotMaximal);
    }
    if !causality.covers(basis, &request.id) {
        return Err(Reason::ControlRequestNotCovered);
    }
    if let Action::Terminal {
        response_event_ids, ..
    } = &p.action
    {
        if causality.covered_among(basis, validated) != *response_event_ids {
            return Err(Reason::ControlResponsesMismatch);
        }
    }
    Ok(())
}

/// A valid control that lost a conflict (§8.4), with the valid controls that beat it: those
/// concurrent with it whose digest bytes are greater, greatest first.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Conflict {
    /// The losing control.
    pub loser: EventId,
    /// The controls that beat it, greatest digest bytes first (never empty).
    pub beaten_by: Vec<EventId>,
}

/// §8.4: splits valid controls into the causal chain (in causal order) and the conflict
/// losers with what beat each.
pub(crate) fn chain<'a>(
    valid: &[Control<'a>],
    causality: &impl Causality,
) -> (Vec<Control<'a>>, Vec<Conflict>) {
    let concurrent = |a: &Control<'_>, b: &Control<'_>| {
        !causality.covers(&[a.id()], &b.id()) && !causality.covers(&[b.id()], &a.id())
    };
    let mut chain = Vec::new();
    let mut losers = Vec::new();
    for c in valid {
        let mut beaten_by: Vec<EventId> = valid
            .iter()
            .filter(|o| o.id().digest() > c.id().digest() && concurrent(c, o))
            .map(Control::id)
            .collect();
        if beaten_by.is_empty() {
            chain.push(*c);
        } else {
            beaten_by.sort_by_key(|b| std::cmp::Reverse(b.digest()));
            losers.push(Conflict {
                loser: c.id(),
                beaten_by,
            });
        }
    }
    // The chain is totally ordered by coverage: rank by how many members each covers.
    let ids: Vec<EventId> = chain.iter().map(Control::id).collect();
    chain.sort_by_cached_key(|c| causality.covered_among(&[c.id()], &ids).len());
    (chain, losers)
}

/// The control that ended the exchange.
pub(crate) struct Terminal {
    pub id: EventId,
    /// `None` for complete; the failure code for failed.
    pub failure_code: Option<String>,
    pub basis: Vec<EventId>,
}

/// The exchange state the chain drives (§8.5).
pub(crate) struct State {
    pub coordinator: DidCoreId,
    pub assignment: EventId,
    pub terminal: Option<Terminal>,
    /// Chain controls that took effect, in chain order.
    pub applied: Vec<EventId>,
}

impl State {
    /// The state right after the request.
    pub fn new(request: &Request<'_>) -> Self {
        State {
            coordinator: request.context.coordinator().clone(),
            assignment: request.id,
            terminal: None,
            applied: Vec::new(),
        }
    }

    /// Applies one chain control, or says why it is ignored.
    pub fn apply(&mut self, control: &Control<'_>, request: &Request<'_>) -> Result<(), Reason> {
        if self.terminal.is_some() {
            return Err(Reason::ControlAfterTerminal);
        }
        match &control.plaintext.action {
            Action::Reassign { expected, new } => {
                if *expected != self.coordinator {
                    return Err(Reason::CasMismatch);
                }
                if !request.context.is_addressed(new) {
                    return Err(Reason::CoordinatorNotAddressed);
                }
                self.coordinator = new.clone();
                self.assignment = control.id();
            }
            Action::Terminal {
                kind,
                response_event_ids,
            } => {
                self.terminal = Some(Terminal {
                    id: control.id(),
                    failure_code: response_event_ids
                        .is_empty()
                        .then(|| kind.empty_failure_code().to_owned()),
                    basis: control.plaintext.basis_event_ids.clone(),
                });
            }
        }
        self.applied.push(control.id());
        Ok(())
    }
}
