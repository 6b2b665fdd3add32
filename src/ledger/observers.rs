//! Observation grants and observer feeds (PROFILE §14.4) over the maintained exchange
//! state: [`Ledger::observations`], [`Ledger::observer_feed`] and the live
//! [`Ledger::observe`]. The rules (which exchanges a grant applies to, what its filter lets
//! through, that no redacted value is shown) are the core's (`actors::observe`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use akledger_core::actors::observe::{GrantInForce, Observation, ObservationRead, ObserverItem};

use crate::error::Error;
use crate::id::{EventId, SidecarId};

use super::exchanges::StateCausality;
use super::watch::{EventFeed, WatchedEvent};
use super::Ledger;

impl Ledger {
    /// The grants and revokes of `sidecar` (PROFILE §14.4), each with its event id, in
    /// canonical order of the ids; one the keyring cannot open, or whose plaintext is not
    /// a grant or revoke, is listed with why.
    pub fn observations(
        &self,
        sidecar: &SidecarId,
    ) -> Result<Vec<(EventId, ObservationRead)>, Error> {
        self.with_sidecar(sidecar, |_, sx, _| {
            sx.observations
                .iter()
                .map(|(id, o)| (*id, o.clone()))
                .collect()
        })
    }

    /// The observer feed of the grant `grant` (PROFILE §14.4): for each exchange of its
    /// sidecar that the grant applies to and that matches it, what its filter lets
    /// through, in exchange order and, within an exchange, in timeline order. Redacted
    /// fields are shown as the commitments sealed in their place, never as values. The
    /// same set of admitted events gives the same feed, whatever order they came in.
    ///
    /// Fails with [`Error::NotFound`] when `grant` is not an admitted, readable grant.
    pub fn observer_feed(&self, grant: &EventId) -> Result<Vec<ObserverItem>, Error> {
        let sidecar = self.sidecar_of(grant)?;
        self.feed_where(&sidecar, grant, |_, _| true)
    }

    /// The items of the exchanges for which `pick(exchange, number of its items)` holds.
    /// An exchange's items only change when one of its own events is admitted (what an
    /// admitted event covers never changes), so a follower that remembers each exchange's
    /// item count recomputes only the exchanges that grew.
    fn feed_where(
        &self,
        sidecar: &SidecarId,
        grant: &EventId,
        mut pick: impl FnMut(&crate::exchange::ExchangeId, usize) -> bool,
    ) -> Result<Vec<ObserverItem>, Error> {
        self.with_sidecar(sidecar, |state, sx, _| {
            let Some(Ok(Observation::Grant(plaintext))) = sx.observations.get(grant) else {
                return Err(Error::NotFound(*grant));
            };
            let revokes: Vec<EventId> = sx
                .observations
                .iter()
                .filter(
                    |(_, o)| matches!(o, Ok(Observation::Revoke(r)) if r.grant_event_id == *grant),
                )
                .map(|(id, _)| *id)
                .collect();
            let in_force = GrantInForce {
                event_id: *grant,
                grant: plaintext,
                revokes: &revokes,
            };
            let causality = StateCausality::with_models(state, &self.reader);
            let mut out = Vec::new();
            for (exchange, items) in &sx.items {
                let Some(folded) = sx.outcomes.get(exchange) else {
                    continue;
                };
                if !pick(exchange, items.len()) {
                    continue;
                }
                out.extend(in_force.items(&sx.info, exchange, items, &folded.outcome, &causality));
            }
            Ok(out)
        })?
    }

    /// A live observer feed of the grant `grant`: every item of [`Ledger::observer_feed`]
    /// now, then each new one as events are admitted. It follows a bounded
    /// [`Ledger::watch_events`] feed; when an event of the sidecar arrives (or when it fell
    /// behind) it recomputes the items of the exchanges that grew since its last look, so a
    /// slow reader loses nothing and a fast one pays for new events only. Each event is
    /// handed out once, as it was first seen.
    pub fn observe(&self, grant: &EventId) -> Result<ObserverFeed<'_>, Error> {
        let sidecar = self.sidecar_of(grant)?;
        let mut feed = ObserverFeed {
            ledger: self,
            sidecar,
            grant: *grant,
            events: self.watch_events(),
            shown: HashSet::new(),
            sizes: HashMap::new(),
            ready: VecDeque::new(),
        };
        feed.refresh()?;
        Ok(feed)
    }

    /// The sidecar whose scope the admitted event `id` is in.
    fn sidecar_of(&self, id: &EventId) -> Result<SidecarId, Error> {
        self.get(id)?
            .and_then(|e| e.scope().sidecar_id())
            .ok_or(Error::NotFound(*id))
    }
}

/// A grant's observer items as they come, from [`Ledger::observe`].
pub struct ObserverFeed<'l> {
    ledger: &'l Ledger,
    sidecar: SidecarId,
    grant: EventId,
    events: EventFeed,
    shown: HashSet<EventId>,
    /// Each exchange's item count at the last look.
    sizes: HashMap<crate::exchange::ExchangeId, usize>,
    ready: VecDeque<ObserverItem>,
}

impl ObserverFeed<'_> {
    /// The next item, waiting up to `timeout` for one; `None` when none came.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ObserverItem>, Error> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Ok(Some(item));
            }
            let left = until.saturating_duration_since(Instant::now());
            match self.events.next_timeout(left) {
                None => return Ok(None),
                Some(watched) if self.touches(&watched) => self.refresh()?,
                Some(_) => {}
            }
        }
    }

    /// The items ready now, without waiting.
    pub fn drain(&mut self) -> Result<Vec<ObserverItem>, Error> {
        let mut stale = false;
        while let Some(watched) = self.events.try_next() {
            stale |= self.touches(&watched);
        }
        if stale {
            self.refresh()?;
        }
        Ok(self.ready.drain(..).collect())
    }

    /// Whether `watched` may change the feed: an event of the sidecar, or a lag.
    fn touches(&self, watched: &WatchedEvent) -> bool {
        match watched {
            WatchedEvent::Admitted { event, .. } => {
                event.scope().sidecar_id() == Some(self.sidecar)
            }
            _ => true,
        }
    }

    fn refresh(&mut self) -> Result<(), Error> {
        let sizes = &mut self.sizes;
        let grown = self.ledger.feed_where(&self.sidecar, &self.grant, |x, n| {
            sizes.insert(x.clone(), n) != Some(n)
        })?;
        for item in grown {
            if self.shown.insert(item.event_id) {
                self.ready.push_back(item);
            }
        }
        Ok(())
    }
}
