//! What the fold would do with one more event (PROFILE §8), asked before it is appended.
//!
//! [`preview`] classifies a candidate event and folds its exchange with the candidate added
//! on top of the admitted graph ([`OnTop`]: the admitted causality plus one event whose
//! parents are admitted). The verdict is read off that fold, so the rules live in one place:
//! the fold. Pure: the caller passes the exchange's items, the keys and the causality.

use crate::error::Code;
use crate::event::{Event, Verified};
use crate::id::EventId;
use crate::keyring::Keyring;

use super::causality::Causality;
use super::classify::{classify, Classified, ExchangeItem, SidecarInfo};
use super::fold::{fold_exchange, ExchangeOutcome};
use super::incremental::{fold_added, Added};
use super::report::{Projection, Reason};

/// The fold's verdict on a candidate event.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Preview {
    /// The candidate folds: the exchange's projection with it.
    Folds(Box<Projection>),
    /// The candidate would be listed as not folded, for this reason.
    NotFolded(Reason),
    /// The candidate is no exchange event of this sidecar (a plain message, an attach, or
    /// an event of another sidecar): the fold has nothing to say.
    NotExchangeEvent,
}

/// The PROFILE §10 code admission gives an event that does not fold for `reason`, where
/// admission refuses it at all: only a control by anyone but the controller.
pub fn admission_code(reason: Reason) -> Option<Code> {
    match reason {
        Reason::ControlNotByController => Some(Code::SidecarExchangeControlForbidden),
        _ => None,
    }
}

/// Folds `candidate`'s exchange as it would be once `candidate` is admitted.
/// `known(exchange)` gives that exchange's items admitted so far (items of other exchanges
/// are skipped by the fold) and, when the caller keeps it, their fold: then an agent
/// message is folded in incrementally ([`super::incremental`]) instead of refolding the
/// exchange. `causality` answers over the admitted events, which must include every
/// dependency of `candidate`.
pub fn preview<'i>(
    sidecar: &SidecarInfo,
    known: impl FnOnce(&super::ExchangeId) -> (&'i [ExchangeItem], Option<&'i ExchangeOutcome>),
    candidate: &Event<Verified>,
    keyring: &Keyring,
    causality: &impl Causality,
) -> Preview {
    let item = match classify(sidecar, candidate, keyring) {
        Some(Classified::Exchange(item)) => *item,
        Some(Classified::Unbound(n)) => return Preview::NotFolded(n.reason),
        Some(Classified::Attach(_) | Classified::Plain(_)) | None => {
            return Preview::NotExchangeEvent
        }
    };
    let exchange = item.exchange_id.clone();
    let (items, folded) = known(&exchange);
    let on_top = OnTop {
        base: causality,
        id: candidate.id(),
        parents: candidate.dependencies().to_vec(),
    };
    if let Some(folded) = folded {
        let mut outcome = folded.clone();
        if fold_added(sidecar, items, &item, &mut outcome, &on_top) != Added::Refold {
            return verdict(outcome, candidate.id());
        }
    }
    let mut all: Vec<ExchangeItem> = items
        .iter()
        .filter(|i| i.exchange_id == exchange)
        .cloned()
        .collect();
    all.push(item);
    verdict(
        fold_exchange(sidecar, &exchange, &all, &on_top),
        candidate.id(),
    )
}

/// The verdict on `candidate` read off its exchange's outcome.
pub fn verdict(outcome: ExchangeOutcome, candidate: EventId) -> Preview {
    if let Some(n) = outcome.not_folded.iter().find(|n| n.event_id == candidate) {
        return Preview::NotFolded(n.reason);
    }
    match outcome.projection {
        Some(p) => Preview::Folds(Box::new(p)),
        // Every exchange item folds or gets a reason; without a projection it got one.
        None => Preview::NotFolded(Reason::UnknownRequest),
    }
}

/// An admitted graph plus one event `id` on top of it, with admitted `parents`.
pub struct OnTop<'a, C> {
    /// The admitted graph.
    pub base: &'a C,
    /// The extra event.
    pub id: EventId,
    /// Its dependencies (all in `base`).
    pub parents: Vec<EventId>,
}

impl<C: Causality> OnTop<'_, C> {
    /// `basis` with the extra event replaced by its parents, and whether it was there.
    fn lower(&self, basis: &[EventId]) -> (Vec<EventId>, bool) {
        let mut had = false;
        let mut lowered = Vec::with_capacity(basis.len() + self.parents.len());
        for id in basis {
            if *id == self.id {
                had = true;
                lowered.extend_from_slice(&self.parents);
            } else {
                lowered.push(*id);
            }
        }
        (lowered, had)
    }
}

impl<C: Causality> Causality for OnTop<'_, C> {
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool {
        let (lowered, had) = self.lower(basis);
        if *x == self.id {
            return had;
        }
        self.base.covers(&lowered, x)
    }

    fn heads_of(&self, set: &[EventId]) -> Vec<EventId> {
        if !set.contains(&self.id) {
            return self.base.heads_of(set);
        }
        // Nothing admitted covers the extra event; it covers what its parents cover.
        let others: Vec<EventId> = set.iter().filter(|x| **x != self.id).copied().collect();
        let heads = self.base.heads_of(&others);
        let covered = self.base.covered_among(&self.parents, &heads);
        let mut out: Vec<EventId> = heads.into_iter().filter(|h| !covered.contains(h)).collect();
        out.push(self.id);
        out.sort_unstable();
        out
    }

    fn is_admitted(&self, id: &EventId) -> bool {
        *id == self.id || self.base.is_admitted(id)
    }

    fn knows_models(&self) -> bool {
        self.base.knows_models()
    }

    /// As seen from the extra event: the greatest version any of its parents sees.
    fn current_model(
        &self,
        did: &crate::did::DidCoreId,
        seen_from: &EventId,
    ) -> Option<crate::actors::ActorModel> {
        if *seen_from != self.id {
            return self.base.current_model(did, seen_from);
        }
        self.parents
            .iter()
            .filter_map(|p| self.base.current_model(did, p))
            .max_by_key(|m| m.entity.version())
    }

    fn covered_among(&self, basis: &[EventId], candidates: &[EventId]) -> Vec<EventId> {
        let (lowered, had) = self.lower(basis);
        let below = self.base.covered_among(&lowered, candidates);
        candidates
            .iter()
            .filter(|x| (had && **x == self.id) || below.contains(x))
            .copied()
            .collect()
    }
}
