//! The exchange fold kept up to date inside the ledger (PROFILE §8).
//!
//! Per sidecar, the ledger keeps each admitted message and control classified once
//! ([`crate::exchange::classify()`]) and each exchange's fold outcome. A sidecar's state is
//! built on first use (classifying its events from the log with the configured keyring —
//! projections depend on keys, which are configuration, so they are derived rather than
//! persisted) and from then on maintained incrementally: an admitted event is classified,
//! and only the exchange it names is refolded — and an agent message is folded into that
//! exchange's outcome ([`crate::exchange::incremental`]) rather than refolding it. This is
//! exact because a fold reads only its exchange's items and ancestry, which later
//! admissions never change, and admission is in causal order.
//! [`Ledger::check`] proves it by comparing with a full refold.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::actors::observe::{read_observation, ObservationRead};
use crate::actors::ActorModel;
use crate::dag::Pos;
use crate::did::DidCoreId;
use crate::error::Error;
use crate::event::Event;
use crate::exchange::{
    classify, exchange_history, fold_added_message, fold_exchange, fold_sidecar, preview, Added,
    Causality, Classified, ContextAttach, ExchangeHistory, ExchangeId, ExchangeItem,
    ExchangeOutcome, NotFolded, Preview, Projection, SidecarFold, SidecarInfo, Status,
};
use crate::id::{EventId, SidecarId};
use crate::keyring::Keyring;
use crate::store::log::SegmentReader;

use super::feed::{ExchangeFeed, ExchangeSender};
use super::state::State;
use super::stored::Stored;
use super::Ledger;

/// Causal questions answered by the ledger's DAG index; with the log's reader, also the
/// actor models the fold's PROFILE §14.2 checks ask for.
pub struct StateCausality<'a> {
    state: &'a State,
    models: Option<&'a SegmentReader>,
    /// Models read so far, by the position of their event: a fold asks for the same few
    /// models over and over (each read was a log read and a parse).
    read: RefCell<HashMap<Pos, ActorModel>>,
}

impl<'a> StateCausality<'a> {
    /// Causality only: the fold applies no §14.2 check.
    pub fn new(state: &'a State) -> Self {
        StateCausality {
            state,
            models: None,
            read: RefCell::default(),
        }
    }

    /// With the actor models whose events `reader` holds.
    pub fn with_models(state: &'a State, reader: &'a SegmentReader) -> Self {
        StateCausality {
            state,
            models: Some(reader),
            read: RefCell::default(),
        }
    }

    fn positions(&self, ids: &[EventId]) -> Vec<Pos> {
        ids.iter().filter_map(|id| self.state.ids.get(id)).collect()
    }
}

impl Causality for StateCausality<'_> {
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool {
        match self.state.ids.get(x) {
            Some(x) => self.state.dag.covers(&self.positions(basis), x),
            None => false,
        }
    }

    fn heads_of(&self, set: &[EventId]) -> Vec<EventId> {
        let mut ids: Vec<EventId> = self
            .state
            .dag
            .heads_of(&self.positions(set))
            .into_iter()
            .filter_map(|p| self.state.id_at(p))
            .collect();
        ids.sort_unstable();
        ids
    }

    fn is_admitted(&self, id: &EventId) -> bool {
        self.state.ids.contains(id)
    }

    fn covered_among(&self, basis: &[EventId], candidates: &[EventId]) -> Vec<EventId> {
        let basis = self.positions(basis);
        let known: Vec<(EventId, Pos)> = candidates
            .iter()
            .filter_map(|x| self.state.ids.get(x).map(|p| (*x, p)))
            .collect();
        let at: Vec<Pos> = known.iter().map(|(_, p)| *p).collect();
        // One closure of the basis answers every candidate (see `DagIndex::covers_all`).
        known
            .iter()
            .zip(self.state.dag.covers_all(&basis, &at))
            .filter(|(_, covered)| *covered)
            .map(|((x, _), _)| *x)
            .collect()
    }

    fn knows_models(&self) -> bool {
        self.models.is_some()
    }

    fn current_model(&self, did: &DidCoreId, seen_from: &EventId) -> Option<ActorModel> {
        let reader = self.models?;
        let seen = self.state.ids.get(seen_from)?;
        let pos =
            crate::actors::current_model_at(&self.state.dag, self.state.actors.get(did)?, seen)?;
        if let Some(model) = self.read.borrow().get(&pos) {
            return Some(model.clone());
        }
        let at = self.state.at.get(pos.index())?;
        let model = super::actor_models::model_of(&reader.event(at).ok()?).ok()?;
        self.read.borrow_mut().insert(pos, model.clone());
        Some(model)
    }
}

/// One sidecar's classified events and fold outcomes.
#[derive(Debug)]
pub struct SidecarExchanges {
    pub(super) info: SidecarInfo,
    pub(super) items: BTreeMap<ExchangeId, Vec<ExchangeItem>>,
    unbound: BTreeSet<NotFolded>,
    pub(super) outcomes: BTreeMap<ExchangeId, Folded>,
    /// The sidecar's observation grants and revokes (PROFILE §14.4), by event.
    pub(super) observations: BTreeMap<EventId, ObservationRead>,
}

/// An exchange's fold outcome and how many of its items (a prefix) it has folded.
#[derive(Debug, Default)]
pub(super) struct Folded {
    pub(super) outcome: ExchangeOutcome,
    items: usize,
}

impl SidecarExchanges {
    fn new(info: SidecarInfo) -> Self {
        SidecarExchanges {
            info,
            items: BTreeMap::new(),
            unbound: BTreeSet::new(),
            outcomes: BTreeMap::new(),
            observations: BTreeMap::new(),
        }
    }

    /// Classifies `event`; returns the exchange to refold, if any.
    fn add(&mut self, event: &Event, keyring: &Keyring) -> Option<ExchangeId> {
        let read = Read::of(&self.info, event, keyring);
        self.apply(event.id(), read)
    }

    /// Takes in what `event` (`id`) was read as; returns the exchange to refold, if any.
    fn apply(&mut self, id: EventId, read: Read) -> Option<ExchangeId> {
        let classified = match read {
            Read::Observation(observation) => {
                self.observations.insert(id, observation);
                return None;
            }
            Read::Classified(classified) => classified,
        };
        match classified? {
            Classified::Exchange(item) => {
                let id = item.exchange_id.clone();
                self.items.entry(id.clone()).or_default().push(*item);
                Some(id)
            }
            Classified::Unbound(n) => {
                self.unbound.insert(n);
                None
            }
            Classified::Attach(a) => {
                self.info.attaches.push(a);
                None
            }
            Classified::Plain(_) => None,
        }
    }

    /// Brings `exchange`'s outcome up to its items: agent messages added since the last
    /// fold are folded in one by one where the shortcut applies, otherwise the exchange is
    /// refolded. Returns true when the projection changed.
    fn refold(&mut self, exchange: &ExchangeId, causality: &impl Causality) -> bool {
        let items = self
            .items
            .get(exchange)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let folded = self.outcomes.entry(exchange.clone()).or_default();
        let mut changed = false;
        while folded.items > 0 && folded.items < items.len() {
            let upto = items.get(..=folded.items).unwrap_or_default();
            match fold_added_message(&self.info, upto, &mut folded.outcome, causality) {
                Added::Refold => break,
                Added::Unchanged => {}
                Added::Changed => changed = true,
            }
            folded.items += 1;
        }
        if folded.items == items.len() {
            return changed;
        }
        let outcome = fold_exchange(&self.info, exchange, items, causality);
        changed |= folded.outcome.projection != outcome.projection;
        *folded = Folded {
            outcome,
            items: items.len(),
        };
        changed
    }

    /// The fold of the whole sidecar, as maintained.
    pub fn fold(&self) -> SidecarFold {
        let projections = self
            .outcomes
            .values()
            .filter_map(|f| f.outcome.projection.clone())
            .collect();
        let mut not_folded: Vec<NotFolded> = self.unbound.iter().cloned().collect();
        not_folded.extend(
            self.outcomes
                .values()
                .flat_map(|f| f.outcome.not_folded.iter().cloned()),
        );
        not_folded.sort();
        not_folded.dedup();
        SidecarFold {
            projections,
            not_folded,
        }
    }
}

/// What one event is to a sidecar, read without changing anything (so reads of a batch's
/// events can run in parallel): an observation grant or revoke, or what the fold's
/// classification made of it.
enum Read {
    Observation(ObservationRead),
    Classified(Option<Classified>),
}

impl Read {
    fn of(info: &SidecarInfo, event: &Event, keyring: &Keyring) -> Read {
        match read_observation(info, event, keyring) {
            Some(observation) => Read::Observation(observation),
            None => Read::Classified(classify(info, event, keyring)),
        }
    }
}

/// Below this many events of built sidecars in one batch, they are read on the committing
/// thread alone.
const PARALLEL_READS_MIN: usize = 64;

/// The per-sidecar exchange states that have been built, and the change-feed subscribers.
#[derive(Default)]
pub struct Exchanges {
    sidecars: HashMap<SidecarId, SidecarExchanges>,
    watchers: Vec<(SidecarId, ExchangeSender)>,
}

impl Exchanges {
    /// Sends a change to `sidecar`'s feeds, forgetting feeds whose subscriber is gone.
    fn announce(&mut self, sidecar: &SidecarId, previous: Option<Status>, projection: &Projection) {
        self.watchers
            .retain(|(s, tx)| s != sidecar || tx.announce(previous, projection));
    }

    /// Classifies freshly admitted events of built sidecars and refolds what they touch,
    /// notifying watchers of changed projections.
    pub fn on_admitted(
        &mut self,
        events: &[Event],
        state: &State,
        keyring: &Keyring,
        reader: &SegmentReader,
        threads: usize,
    ) {
        let mut dirty: BTreeSet<(SidecarId, ExchangeId)> = BTreeSet::new();
        let ours: Vec<(&Event, SidecarId)> = events
            .iter()
            .filter_map(|e| Some((e, e.scope().sidecar_id()?)))
            .filter(|(_, sidecar)| self.sidecars.contains_key(sidecar))
            .collect();
        // Decrypting and reading sealed events is most of the work: done on `threads`
        // threads, then taken in, in order. A read depends on the sidecar's id, realm and
        // controller only (its attaches are the fold's to read), which no event changes, so
        // the reads of a batch are independent of each other.
        let reads = if ours.len() >= PARALLEL_READS_MIN && threads > 1 {
            let sidecars = &self.sidecars;
            crate::workload::in_parallel(ours.clone(), threads, |(event, sidecar)| {
                Ok(sidecars
                    .get(&sidecar)
                    .map(|sx| Read::of(&sx.info, event, keyring)))
            })
            .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut reads = reads.into_iter();
        for (event, sidecar) in ours {
            let early = reads.next().flatten();
            let Some(sx) = self.sidecars.get_mut(&sidecar) else {
                continue;
            };
            let read = early.unwrap_or_else(|| Read::of(&sx.info, event, keyring));
            if let Some(exchange) = sx.apply(event.id(), read) {
                dirty.insert((sidecar, exchange));
            }
        }
        let causality = StateCausality::with_models(state, reader);
        for (sidecar, exchange) in dirty {
            let Some(sx) = self.sidecars.get_mut(&sidecar) else {
                continue;
            };
            let previous = sx
                .outcomes
                .get(&exchange)
                .and_then(|f| f.outcome.projection.as_ref())
                .map(|p| p.status);
            if !sx.refold(&exchange, &causality)
                || !self.watchers.iter().any(|(s, _)| *s == sidecar)
            {
                continue;
            }
            let Some(projection) = sx
                .outcomes
                .get(&exchange)
                .and_then(|f| f.outcome.projection.clone())
            else {
                continue;
            };
            self.announce(&sidecar, previous, &projection);
        }
    }
}

impl Ledger {
    /// Builds `sidecar`'s exchange state if needed and runs `f` on it.
    pub(super) fn with_sidecar<T>(
        &self,
        sidecar: &SidecarId,
        f: impl FnOnce(&State, &SidecarExchanges, &mut Exchanges) -> T,
    ) -> Result<T, Error> {
        let state = self.read_state()?;
        let mut exchanges = self.exchanges.lock().map_err(|_| Error::Poisoned)?;
        if !exchanges.sidecars.contains_key(sidecar) {
            let built = self.build_sidecar(&state, sidecar)?;
            exchanges.sidecars.insert(*sidecar, built);
        }
        let sx = exchanges
            .sidecars
            .remove(sidecar)
            .ok_or_else(|| Error::Misuse("sidecar state vanished".into()))?;
        let out = f(&state, &sx, &mut exchanges);
        exchanges.sidecars.insert(*sidecar, sx);
        Ok(out)
    }

    /// Classifies every admitted event of `sidecar` and folds every exchange.
    fn build_sidecar(&self, state: &State, sidecar: &SidecarId) -> Result<SidecarExchanges, Error> {
        let entry = state
            .sidecars
            .get(sidecar)
            .ok_or(Error::UnknownSidecar(*sidecar))?;
        let info = SidecarInfo::new(*sidecar, entry.realm, entry.controller.clone());
        let mut sx = SidecarExchanges::new(info);
        let positions = state
            .by_sidecar
            .get(sidecar)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let keyring = self.verifier.keyring();
        let keyring = &*keyring;
        let mut touched = BTreeSet::new();
        for pos in positions {
            let Some(at) = state.at.get(pos.index()) else {
                continue;
            };
            let event = self.reader.event(at)?;
            touched.extend(sx.add(&event, keyring));
        }
        let causality = StateCausality::with_models(state, &self.reader);
        for exchange in touched {
            sx.refold(&exchange, &causality);
        }
        Ok(sx)
    }

    /// The projection of one exchange, if it has a canonical request.
    pub fn exchange(
        &self,
        sidecar: &SidecarId,
        exchange_id: &ExchangeId,
    ) -> Result<Option<Projection>, Error> {
        self.with_sidecar(sidecar, |_, sx, _| {
            sx.outcomes
                .get(exchange_id)
                .and_then(|f| f.outcome.projection.clone())
        })
    }

    /// The timeline of one exchange (PROFILE §8): each of its items with time, author, role
    /// or action and what the fold made of it; `None` when no admitted item names it.
    ///
    /// ```
    /// use akledger::exchange::{Step, Verdict};
    /// use akledger::workload::{sidecar_workload, SidecarSpec};
    /// use akledger::{Config, Ledger};
    ///
    /// let w = sidecar_workload(5, SidecarSpec { exchanges: 3, agents: 2, forgeries: false, skills: false })?;
    /// let dir = tempfile::tempdir()?;
    /// let ledger = Ledger::open_with(Config::new(dir.path()).keyring(w.keyring.clone()))?;
    /// for event in &w.events {
    ///     ledger.append(event.bytes())?;
    /// }
    /// for x in ledger.exchange_ids(&w.sidecar)? {
    ///     let history = ledger.exchange_history(&w.sidecar, &x)?.expect("admitted items");
    ///     let first = &history.entries[0];
    ///     assert_eq!((&first.step, &first.verdict), (&Step::Request, &Verdict::Folded));
    ///     for entry in &history.entries {
    ///         println!("{} {} {}: {}", entry.created_at, entry.author, entry.describe(), entry.verdict.text());
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exchange_history(
        &self,
        sidecar: &SidecarId,
        exchange_id: &ExchangeId,
    ) -> Result<Option<ExchangeHistory>, Error> {
        self.with_sidecar(sidecar, |state, sx, _| {
            let items = sx.items.get(exchange_id)?;
            let outcome = &sx.outcomes.get(exchange_id)?.outcome;
            Some(exchange_history(
                *sidecar,
                exchange_id,
                items,
                outcome,
                &StateCausality::with_models(state, &self.reader),
            ))
        })
    }

    /// The ids of the exchanges of `sidecar` that have admitted items, in order.
    pub fn exchange_ids(&self, sidecar: &SidecarId) -> Result<Vec<ExchangeId>, Error> {
        self.with_sidecar(sidecar, |_, sx, _| sx.items.keys().cloned().collect())
    }

    /// Every exchange projection of `sidecar` and every exchange event that did not fold.
    pub fn exchanges(&self, sidecar: &SidecarId) -> Result<SidecarFold, Error> {
        self.with_sidecar(sidecar, |_, sx, _| sx.fold())
    }

    /// What the fold would do with `candidate`, an event of `sidecar` not appended yet
    /// whose dependencies are admitted ([`crate::exchange::preview()`]).
    pub(super) fn preview(&self, sidecar: &SidecarId, candidate: &Event) -> Result<Preview, Error> {
        let keyring = self.verifier.keyring();
        self.with_sidecar(sidecar, |state, sx, _| {
            // The maintained fold, when it is up to date with the items.
            let known = |exchange: &ExchangeId| {
                let items = sx
                    .items
                    .get(exchange)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let folded = sx
                    .outcomes
                    .get(exchange)
                    .filter(|f| f.items == items.len())
                    .map(|f| &f.outcome);
                (items, folded)
            };
            preview(
                &sx.info,
                known,
                candidate,
                &keyring,
                &StateCausality::with_models(state, &self.reader),
            )
        })
    }

    /// The sidecar as the fold and the authoring helpers see it: realm, controller and every
    /// admitted context attach (PROFILE §6); `None` when it is not an admitted sidecar.
    pub fn sidecar_info(&self, sidecar: &SidecarId) -> Result<Option<SidecarInfo>, Error> {
        let state = self.read_state()?;
        let Some(entry) = state.sidecars.get(sidecar) else {
            return Ok(None);
        };
        let mut info = SidecarInfo::new(*sidecar, entry.realm, entry.controller.clone());
        for pos in state.contexts.get(sidecar).into_iter().flatten() {
            if let (Some(a), Some(event_id)) = (state.attaches.get(pos), state.id_at(*pos)) {
                info.attaches.push(ContextAttach {
                    event_id,
                    strand_id: a.strand,
                    version: a.version,
                });
            }
        }
        Ok(Some(info))
    }

    /// The admitted sidecars, in canonical order.
    pub fn sidecars(&self) -> Vec<SidecarId> {
        let mut ids: Vec<SidecarId> = self
            .read_state()
            .map(|s| s.sidecars.keys().copied().collect())
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// A change feed of `sidecar`'s exchanges: every projection that changes from now on,
    /// with the status it had before (see [`ExchangeFeed`] for the subscribe-then-read
    /// order and the bound). The sidecar need not exist yet: once its create event is
    /// admitted, its exchanges arrive on the feed. The feed may be dropped at any time.
    ///
    /// # Examples
    ///
    /// ```
    /// use akledger::ledger::ExchangeChange;
    /// use akledger::workload::{sidecar_workload, SidecarSpec};
    /// use akledger::{Config, Ledger};
    ///
    /// let w = sidecar_workload(5, SidecarSpec { exchanges: 2, agents: 1, forgeries: false, skills: false })?;
    /// let dir = tempfile::tempdir()?;
    /// let ledger = Ledger::open_with(Config::new(dir.path()).keyring(w.keyring.clone()))?;
    /// let feed = ledger.exchange_feed(&w.sidecar)?; // before the sidecar exists
    /// for event in &w.events {
    ///     ledger.append(event.bytes())?;
    /// }
    /// let mut seen = 0;
    /// while let Some(change) = feed.try_next() {
    ///     match change {
    ///         ExchangeChange::Changed { previous, projection } => {
    ///             seen += 1;
    ///             assert_ne!(previous, Some(projection.status));
    ///         }
    ///         // Fell behind: re-read `ledger.exchanges(..)` and carry on.
    ///         ExchangeChange::Lagged => seen = 0,
    ///         _ => {}
    ///     }
    /// }
    /// assert!(seen >= 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exchange_feed(&self, sidecar: &SidecarId) -> Result<ExchangeFeed, Error> {
        let (tx, rx) = super::feed::exchange_feed();
        let state = self.read_state()?;
        let mut exchanges = self.exchanges.lock().map_err(|_| Error::Poisoned)?;
        if state.sidecars.contains_key(sidecar) && !exchanges.sidecars.contains_key(sidecar) {
            let built = self.build_sidecar(&state, sidecar)?;
            exchanges.sidecars.insert(*sidecar, built);
        }
        exchanges.watchers.push((*sidecar, tx));
        Ok(rx)
    }

    /// Builds the watched sidecars that the last commit created (their feeds were opened
    /// before they existed) and announces their exchanges. Called under the state lock.
    pub(super) fn build_watched(&self, state: &State, exchanges: &mut Exchanges) {
        let waiting: BTreeSet<SidecarId> = exchanges
            .watchers
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| state.sidecars.contains_key(s) && !exchanges.sidecars.contains_key(s))
            .collect();
        for sidecar in waiting {
            if let Ok(built) = self.build_sidecar(state, &sidecar) {
                announce_differences(exchanges, &sidecar, None, &built);
                exchanges.sidecars.insert(sidecar, built);
            }
        }
    }

    /// Rebuilds `sidecar`'s exchange state with the current keyring (after a key was
    /// added) and notifies its watchers of every projection that changed. A sidecar not
    /// built yet is left to be built on first use, with the new key.
    pub(super) fn refold_sidecar(&self, sidecar: &SidecarId) -> Result<(), Error> {
        let state = self.read_state()?;
        let mut exchanges = self.exchanges.lock().map_err(|_| Error::Poisoned)?;
        let Some(old) = exchanges.sidecars.remove(sidecar) else {
            return Ok(());
        };
        let new = self.build_sidecar(&state, sidecar)?;
        announce_differences(&mut exchanges, sidecar, Some(&old), &new);
        exchanges.sidecars.insert(*sidecar, new);
        Ok(())
    }

    /// Compares every maintained sidecar state with a full refold over `fresh`.
    pub(crate) fn compare_exchanges(
        &self,
        fresh: &State,
        diffs: &mut Vec<String>,
    ) -> Result<(), Error> {
        let exchanges = self.exchanges.lock().map_err(|_| Error::Poisoned)?;
        for (sidecar, sx) in &exchanges.sidecars {
            let positions = fresh
                .by_sidecar
                .get(sidecar)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let mut events = Vec::with_capacity(positions.len());
            for pos in positions {
                if let Some(at) = fresh.at.get(pos.index()) {
                    events.push(self.reader.event(at)?);
                }
            }
            let full = fold_sidecar(
                &sx.info,
                &events,
                &self.verifier.keyring(),
                &StateCausality::with_models(fresh, &self.reader),
            );
            if full != sx.fold() {
                diffs.push(format!(
                    "exchange projections of {sidecar} differ from a full refold"
                ));
            }
        }
        Ok(())
    }
}

/// Announces every projection of `new` that differs from `old`'s.
fn announce_differences(
    exchanges: &mut Exchanges,
    sidecar: &SidecarId,
    old: Option<&SidecarExchanges>,
    new: &SidecarExchanges,
) {
    for (exchange, folded) in &new.outcomes {
        let before = old
            .and_then(|o| o.outcomes.get(exchange))
            .and_then(|f| f.outcome.projection.as_ref());
        let now = folded.outcome.projection.as_ref();
        if let Some(projection) = now.filter(|p| Some(*p) != before) {
            exchanges.announce(sidecar, before.map(|p| p.status), projection);
        }
    }
}

/// The ledger answers the fold's causal questions (for authoring controls against it).
/// Ids that are not admitted are covered by nothing and cover nothing.
impl Causality for Ledger {
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool {
        self.read_state()
            .is_ok_and(|s| StateCausality::new(&s).covers(basis, x))
    }

    fn heads_of(&self, set: &[EventId]) -> Vec<EventId> {
        self.read_state()
            .map(|s| StateCausality::new(&s).heads_of(set))
            .unwrap_or_default()
    }

    fn is_admitted(&self, id: &EventId) -> bool {
        self.read_state().is_ok_and(|s| s.ids.contains(id))
    }

    fn covered_among(&self, basis: &[EventId], candidates: &[EventId]) -> Vec<EventId> {
        self.read_state()
            .map(|s| StateCausality::new(&s).covered_among(basis, candidates))
            .unwrap_or_default()
    }
}
