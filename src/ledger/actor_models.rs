//! Actor models on the ledger (PROFILE §14.1): each actor's admitted versions, and its
//! current model as seen from an event, answered from the registry and the DAG index: the
//! greatest version whose event the given event covers.

use crate::actors::ActorModel;
use crate::dag::Pos;
use crate::did::DidCoreId;
use crate::envelope::Body;
use crate::error::{Code, Error, Rejection};
use crate::id::EventId;

use super::state::State;
use super::Ledger;

impl State {
    /// The position of `did`'s current model as seen from `seen` (PROFILE §14.1).
    fn current_model_at(&self, did: &DidCoreId, seen: Pos) -> Option<Pos> {
        crate::actors::current_model_at(&self.dag, self.actors.get(did)?, seen)
    }
}

impl Ledger {
    /// Every admitted model version of `did`, ascending, with its event.
    pub fn actor_models(&self, did: &DidCoreId) -> Vec<(u64, EventId)> {
        let Ok(state) = self.read_state() else {
            return Vec::new();
        };
        state
            .actors
            .get(did)
            .into_iter()
            .flatten()
            .filter_map(|(version, pos)| Some((*version, state.id_at(*pos)?)))
            .collect()
    }

    /// The event of `did`'s current model as seen from the admitted event `as_seen_from`:
    /// the greatest version among its admitted models that `as_seen_from` covers; `None`
    /// when it covers none.
    pub fn current_model_event(
        &self,
        did: &DidCoreId,
        as_seen_from: &EventId,
    ) -> Result<Option<EventId>, Error> {
        let state = self.read_state()?;
        let seen = state
            .ids
            .get(as_seen_from)
            .ok_or(Error::NotFound(*as_seen_from))?;
        Ok(state
            .current_model_at(did, seen)
            .and_then(|pos| state.id_at(pos)))
    }

    /// `did`'s current model as seen from `as_seen_from` (see
    /// [`Ledger::current_model_event`]), read from the log, with its event.
    pub fn current_model(
        &self,
        did: &DidCoreId,
        as_seen_from: &EventId,
    ) -> Result<Option<(EventId, ActorModel)>, Error> {
        match self.current_model_event(did, as_seen_from)? {
            Some(id) => Ok(Some((id, self.actor_model(&id)?))),
            None => Ok(None),
        }
    }

    /// Whether `did`'s current model as seen from `as_seen_from` offers (subject, action).
    pub fn offers(
        &self,
        did: &DidCoreId,
        subject: &str,
        action: &str,
        as_seen_from: &EventId,
    ) -> Result<bool, Error> {
        Ok(self
            .current_model(did, as_seen_from)?
            .is_some_and(|(_, model)| model.offers(subject, action)))
    }

    /// `did`'s latest admitted model (its greatest version), read from the log, with its
    /// event; `None` while it has published none.
    pub fn latest_model(&self, did: &DidCoreId) -> Result<Option<(EventId, ActorModel)>, Error> {
        let latest = {
            let state = self.read_state()?;
            let versions = state.actors.get(did);
            versions
                .and_then(|v| v.last())
                .and_then(|(_, pos)| state.id_at(*pos))
        };
        match latest {
            Some(id) => Ok(Some((id, self.actor_model(&id)?))),
            None => Ok(None),
        }
    }

    /// The model an admitted `ak.actor.model` event holds.
    pub fn actor_model(&self, id: &EventId) -> Result<ActorModel, Error> {
        model_of(&self.get(id)?.ok_or(Error::NotFound(*id))?)
    }
}

/// The model an `ak.actor.model` event holds.
pub(super) fn model_of(event: &crate::event::Event) -> Result<ActorModel, Error> {
    let id = event.id();
    let Body::ActorModel(version) = event.body() else {
        return Err(Error::Misuse(format!(
            "{id} is not an ak.actor.model event"
        )));
    };
    let model = event
        .envelope()
        .payload
        .as_object()
        .and_then(|o| o.get("model"))
        .ok_or_else(|| {
            Error::Rejected(Rejection::new(
                Code::SchemaViolation,
                format!("{id}: an actor model payload without its model"),
            ))
        })?;
    ActorModel::parse(model, &version.entity).map_err(Error::Rejected)
}
