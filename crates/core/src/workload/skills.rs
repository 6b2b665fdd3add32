//! The seed-000 part of a generated sidecar ([`super::SidecarSpec::skills`]): each agent
//! publishes an actor model offering `orders/place` (the card redacted on the way in, the
//! address on the way out), the controller grants one observer the exchanges' responses,
//! and requests and responses are PNCP messages whose redacted fields are commitments.

use ed25519_dalek::SigningKey;

use crate::actors::observe::{Filter, Grant};
use crate::actors::{publish_model, ActorModel, Disclosure, EntityId, PncpKind, Withheld};
use crate::canonical::{parse_value, Json, Object};
use crate::did::{ActorId, DidCoreId};
use crate::error::Rejection;
use crate::event::{Event, Unverified};
use crate::exchange::{Binding, PncpDraft, RequestContext, Role, SidecarAuthor};
use crate::id::{EventId, RealmId};

use super::sidecar::Gen;
use super::writer_key;

/// The skill every generated agent offers.
pub const SUBJECT: &str = "orders";
/// Its action.
pub const ACTION: &str = "place";

/// The agents' published models and the observer's grant.
pub(super) struct Skills {
    /// Each agent's model: its event and what it says.
    models: Vec<(EventId, ActorModel)>,
    /// The controller's grant.
    pub(super) grant: EventId,
    /// The observer.
    pub(super) observer: DidCoreId,
    /// Every value kept off the ledger, with the event whose commitment it opens.
    pub(super) disclosures: Vec<Disclosure>,
}

/// Version 1 of `did`'s model offering `orders/place`.
fn model_text(did: &DidCoreId) -> String {
    format!(
        r#"{{"id":"{did}#1","skills":{{"skills":[{{"subject":"{SUBJECT}","actions":[{{"action":"{ACTION}",
        "input":[{{"name":"item","optional":false,"redacted":false}},{{"name":"card","optional":false,"redacted":true}}],
        "output":[{{"name":"receipt","optional":false,"redacted":false}},{{"name":"address","optional":true,"redacted":true}}]}}]}}]}}}}"#
    )
}

/// Publishes each agent's model, then the controller's grant to a generated observer.
pub(super) fn publish(
    g: &mut Gen,
    seed: u64,
    realm: RealmId,
    agents: &[SigningKey],
    boss: &SidecarAuthor,
) -> Result<Skills, Rejection> {
    let mut models = Vec::with_capacity(agents.len());
    for key in agents {
        let actor = ActorId::service_for_key(&key.verifying_key());
        let did = actor.principal().clone();
        let text = model_text(&did);
        let json = parse_value(text.as_bytes())?;
        let at = g.tick()?;
        let event = publish_model(key, actor, realm, &json, None, at)?;
        let model = ActorModel::parse(&json, &EntityId::new(did, 1)?)?;
        models.push((g.push(event), model));
    }
    let observer = ActorId::service_for_key(&writer_key(seed, 3_000_000).verifying_key());
    let grant = Grant {
        obs_id: "responses".into(),
        observer: observer.clone(),
        subject: SUBJECT.into(),
        action: ACTION.into(),
        requester: None,
        fulfiller: None,
        filter: Filter::Pncp(Some(PncpKind::Response)),
    };
    let sidecar = boss.sidecar_id().retype();
    let at = g.tick()?;
    let event = boss.grant_observation(&grant, &[sidecar], at, &mut g.nonces)?;
    Ok(Skills {
        models,
        grant: g.push(event),
        observer: observer.principal().clone(),
        disclosures: Vec::new(),
    })
}

impl Skills {
    /// The model of the agent `did`.
    fn model_of(&self, did: &DidCoreId) -> Option<&(EventId, ActorModel)> {
        self.models.iter().find(|(_, m)| m.entity.did() == did)
    }

    /// A PNCP request for `orders/place`, its card committed to.
    pub(super) fn request(
        &mut self,
        g: &mut Gen,
        boss: &SidecarAuthor,
        exchange: &crate::exchange::ExchangeId,
        context: RequestContext,
        body: Json,
        attach: EventId,
    ) -> Result<Event<Unverified>, Rejection> {
        let mut after: Vec<EventId> = context
            .addressed()
            .iter()
            .filter_map(|d| self.model_of(d).map(|(id, _)| *id))
            .collect();
        after.push(self.grant);
        let input = self
            .model_of(context.coordinator())
            .and_then(|(_, m)| m.action(SUBJECT, ACTION))
            .and_then(|a| a.input.clone());
        let n = g.clock;
        let data = Object::new()
            .with("item", Json::str(format!("item-{n}")))
            .with("card", Json::str(format!("4000-{n:012}")));
        let binding = Binding {
            exchange_id: exchange.clone(),
            role: Role::Request(context),
        };
        self.seal(
            g,
            boss,
            binding,
            PncpKind::Request,
            data,
            input,
            after,
            body,
            &[attach],
        )
    }

    /// `agent`'s PNCP response, its address committed to.
    pub(super) fn respond(
        &mut self,
        g: &mut Gen,
        agent: &SidecarAuthor,
        exchange: &crate::exchange::ExchangeId,
        role: Role,
        body: Json,
        request: EventId,
    ) -> Result<Event<Unverified>, Rejection> {
        let (model, output) = match self.model_of(agent.principal()) {
            Some((id, m)) => (
                vec![*id],
                m.action(SUBJECT, ACTION).and_then(|a| a.output.clone()),
            ),
            None => (Vec::new(), None),
        };
        let n = g.clock;
        let data = Object::new()
            .with("receipt", Json::str(format!("receipt-{n}")))
            .with("address", Json::str(format!("{n} Generated Street")));
        let binding = Binding {
            exchange_id: exchange.clone(),
            role,
        };
        self.seal(
            g,
            agent,
            binding,
            PncpKind::Response,
            data,
            output,
            model,
            body,
            &[request],
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn seal(
        &mut self,
        g: &mut Gen,
        author: &SidecarAuthor,
        binding: Binding,
        kind: PncpKind,
        data: Object,
        model: Option<crate::actors::DataModel>,
        after_models: Vec<EventId>,
        body: Json,
        after: &[EventId],
    ) -> Result<Event<Unverified>, Rejection> {
        let draft = PncpDraft {
            kind,
            subject: SUBJECT.into(),
            action: ACTION.into(),
            question_id: None,
            data,
            model: model.as_ref(),
            after: after_models,
        };
        let at = g.tick()?;
        let (event, withheld) =
            author.pncp_message(binding, body, draft, after, at, &mut g.nonces)?;
        let id = event.id();
        self.disclosures
            .extend(
                withheld
                    .into_iter()
                    .map(|Withheld { field, salt, value }| Disclosure {
                        event_id: id,
                        field,
                        salt,
                        value,
                    }),
            );
        Ok(event)
    }
}
