//! Scenario tests of the exchange fold, one per rule of PROFILE §8, over real signed and
//! sealed events built with the authoring helpers.

mod crypto;
mod props;
mod rules;

use ed25519_dalek::SigningKey;
use rand_core::OsRng;

use akledger_core::canonical::Json;
use akledger_core::did::{ActorId, DidCoreId};
use akledger_core::encrypted::SidecarKey;
use akledger_core::error::Rejection;
use akledger_core::event::{Event, Unverified, Verified};
use akledger_core::exchange::*;
use akledger_core::id::{DigestSuite, EventId, StrandId};
use akledger_core::keyring::Keyring;
use akledger_core::proof::Verifier;
use akledger_core::time::Timestamp;

/// Controller, agents A/B/C, one sidecar, and the admitted events so far.
pub(super) struct World {
    pub controller: SidecarAuthor,
    pub agents: Vec<SidecarAuthor>,
    pub sidecar: SidecarInfo,
    pub keyring: Keyring,
    pub events: Vec<Event<Verified>>,
    pub strand: StrandId,
}

pub(super) fn at() -> Timestamp {
    Timestamp::parse("2026-11-29T12:00:00.000Z").unwrap()
}

pub(super) fn xid(n: u32) -> ExchangeId {
    ExchangeId::parse(&format!("exchange-{n:016}")).unwrap()
}

/// A cancel with no responses whose basis is the request alone.
pub(super) fn empty_cancel(x: &ExchangeId, request: EventId) -> ControlPlaintext {
    ControlPlaintext {
        exchange_id: x.clone(),
        request_event_id: request,
        basis_event_ids: vec![request],
        action: Action::Terminal {
            kind: TerminalKind::Cancel,
            response_event_ids: vec![],
        },
    }
}

pub(super) fn verify(e: Result<Event<Unverified>, Rejection>) -> Event<Verified> {
    e.unwrap().verify(&Verifier::new(Keyring::new())).unwrap()
}

pub(super) fn signer(seed: u8) -> (SigningKey, ActorId) {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let actor = ActorId::service_for_key(&key.verifying_key());
    (key, actor)
}

impl World {
    pub fn new() -> Self {
        let (ck, ca) = signer(1);
        let realm = verify(create_realm(&ck, ca.clone(), at()));
        let realm_id = realm.id().retype();
        let private = create_private_sidecar(&ck, ca.clone(), realm_id, None, at()).unwrap();
        let sidecar = private.info.clone();
        let strand = private.strand_id();
        let [create, strand_create, attach] = private.events().map(|e| verify(Ok(e.clone())));
        let mut keyring = Keyring::new();
        keyring.add_sidecar_key(sidecar.sidecar_id, 1, SidecarKey::from_bytes([9; 32]));
        let author = |seed| {
            let (k, a) = signer(seed);
            SidecarAuthor::from_keyring(k, a, sidecar.clone(), &keyring, 1).unwrap()
        };
        World {
            controller: author(1),
            agents: vec![author(2), author(3), author(4)],
            sidecar: sidecar.clone(),
            keyring: keyring.clone(),
            events: vec![realm, create, strand_create, attach],
            strand,
        }
    }

    pub fn agent(&self, n: usize) -> DidCoreId {
        self.agents[n].principal().clone()
    }

    pub fn add(&mut self, e: Result<Event<Unverified>, Rejection>) -> EventId {
        let e = verify(e);
        self.events.push(e.clone());
        e.id()
    }

    pub fn graph(&self) -> MemoryGraph {
        MemoryGraph::from_events(&self.events)
    }

    pub fn fold(&self) -> SidecarFold {
        fold_sidecar(&self.sidecar, &self.events, &self.keyring, &self.graph())
    }

    pub fn projection(&self, x: &ExchangeId) -> Projection {
        let fold = self.fold();
        fold.projections
            .into_iter()
            .find(|p| p.exchange_id == *x)
            .unwrap()
    }

    /// The timeline of `x`: its items classified and folded as `fold_sidecar` does.
    pub fn history(&self, x: &ExchangeId) -> akledger_core::exchange::ExchangeHistory {
        let items: Vec<akledger_core::exchange::ExchangeItem> = self
            .events
            .iter()
            .filter_map(|e| {
                match akledger_core::exchange::classify(&self.sidecar, e, &self.keyring) {
                    Some(akledger_core::exchange::Classified::Exchange(item)) => Some(*item),
                    _ => None,
                }
            })
            .collect();
        let graph = self.graph();
        let outcome = akledger_core::exchange::fold_exchange(&self.sidecar, x, &items, &graph);
        akledger_core::exchange::exchange_history(
            self.sidecar.sidecar_id,
            x,
            &items,
            &outcome,
            &graph,
        )
    }

    /// The reason `id` did not fold, or `None` when it is not listed.
    pub fn reason(&self, id: EventId) -> Option<Reason> {
        let fold = self.fold();
        let mut hits = fold.not_folded.iter().filter(|n| n.event_id == id);
        let first = hits.next().map(|n| n.reason);
        assert!(hits.next().is_none(), "{id} listed twice");
        first
    }

    pub fn context(&self, addressed: &[usize], coordinator: Option<usize>) -> RequestContext {
        let track = TrackRef {
            realm_id: self.sidecar.realm_id,
            strand_id: self.strand,
            track_name: "main".into(),
        };
        let addressed = addressed.iter().map(|&n| self.agent(n)).collect();
        RequestContext::new(track, "k1", addressed, coordinator.map(|n| self.agent(n))).unwrap()
    }

    pub fn request(
        &mut self,
        x: &ExchangeId,
        addressed: &[usize],
        coordinator: Option<usize>,
    ) -> EventId {
        let ctx = self.context(addressed, coordinator);
        let e = self
            .controller
            .request(x, ctx, Json::str("do it"), at(), &mut OsRng);
        self.add(e)
    }

    pub fn respond(&mut self, agent: usize, x: &ExchangeId, request: EventId) -> EventId {
        let e = self.agents[agent].respond(x, request, None, Json::str("done"), at(), &mut OsRng);
        self.add(e)
    }

    /// A response with `after` refs to the request and to `also`.
    pub fn respond_after(
        &mut self,
        agent: usize,
        x: &ExchangeId,
        request: EventId,
        also: EventId,
    ) -> EventId {
        let binding = Binding {
            exchange_id: x.clone(),
            role: Role::Response {
                request_event_id: request,
                completes: None,
            },
        };
        let mut after = vec![request, also];
        after.dedup();
        let e =
            self.agents[agent].message(Some(binding), Json::str("done"), &after, at(), &mut OsRng);
        self.add(e)
    }

    pub fn internal(&mut self, agent: usize, x: &ExchangeId, request: EventId) -> EventId {
        let e = self.agents[agent].internal(x, request, Json::str("thinking"), at(), &mut OsRng);
        self.add(e)
    }

    /// A controller control over the current projection.
    pub fn control(&mut self, x: &ExchangeId, act: Act) -> EventId {
        let view = ExchangeView::of(&self.projection(x));
        self.control_from(&view, act)
    }

    pub fn control_from(&mut self, view: &ExchangeView, act: Act) -> EventId {
        let e = self
            .controller
            .control(view, act, &self.graph(), at(), &mut OsRng);
        self.add(e)
    }

    /// A controller control sealing `plaintext` with `after` refs and the request's strand.
    pub fn raw_control(&mut self, plaintext: &ControlPlaintext, after: &[EventId]) -> EventId {
        let e =
            self.controller
                .control_raw(self.strand, &plaintext.to_json(), after, at(), &mut OsRng);
        self.add(e)
    }
}
