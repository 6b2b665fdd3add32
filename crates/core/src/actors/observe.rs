//! Observation grants and observer feeds (PROFILE §14.4): the controller lets an observer
//! watch the exchanges of one skill, through a filter on what it sees (each change of the
//! projection, or PNCP messages of one kind). Grants and revokes are sealed like controls;
//! this module reads them, decides which exchanges a grant applies to, and lists the
//! observer's items. Pure: the caller supplies the exchanges' items and fold outcomes and
//! the causality they were folded with.

use crate::canonical::{Json, Object};
use crate::did::{ActorId, DidCoreId};
use crate::encrypted::EncryptedEnvelope;
use crate::envelope::Body;
use crate::error::{schema, Rejection};
use crate::event::{Event, Verified};
use crate::exchange::classify::{decrypt, ExchangeItem, Fact};
use crate::exchange::fold::ExchangeOutcome;
use crate::exchange::history::{exchange_history, Verdict};
use crate::exchange::plaintext::Role;
use crate::exchange::{Causality, ExchangeId, SidecarInfo};
use crate::id::EventId;
use crate::keyring::Keyring;
use crate::time::Timestamp;

use super::model::{filter as read_filter, EntityId};
use super::pncp::PncpKind;

/// Event kind of a grant.
pub const GRANT_KIND: &str = "ak.observation.grant";
/// Event kind of a revoke.
pub const REVOKE_KIND: &str = "ak.observation.revoke";
/// `schema` of a grant's plaintext.
pub const GRANT_SCHEMA: &str = "ak.schema.observation_grant.v1";
/// `schema` of a revoke's plaintext.
pub const REVOKE_SCHEMA: &str = "ak.schema.observation_revoke.v1";
/// Content type of a sealed grant.
pub const GRANT_CONTENT_TYPE: &str = "application/vnd.arkret.observation-grant+json";
/// Content type of a sealed revoke (PROFILE names the grant's; the revoke's follows it).
pub const REVOKE_CONTENT_TYPE: &str = "application/vnd.arkret.observation-revoke+json";

/// What a grant lets its observer see of each exchange it applies to.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Filter {
    /// Each change of the exchange's projection: every folded message and applied control.
    Skill,
    /// Every folded or listed message of the exchange with a `pncp` of this kind (any kind
    /// when `None`).
    Pncp(Option<PncpKind>),
}

impl Filter {
    /// Parses `Skill`, `Pncp` or `Pncp:KIND`.
    pub fn parse(text: &str) -> Result<Filter, Rejection> {
        match text.split_once(':') {
            None if text == "Skill" => Ok(Filter::Skill),
            None if text == "Pncp" => Ok(Filter::Pncp(None)),
            Some(("Pncp", kind)) => Filter::from_json(
                &Object::new()
                    .with("kind", "Pncp".into())
                    .with("pncp", Json::str(kind))
                    .into(),
            ),
            _ => Err(schema(format!(
                "filter {text:?} is not Skill, Pncp or Pncp:KIND"
            ))),
        }
    }

    /// Reads seed 000's ObservationMessageFilter.
    pub fn from_json(value: &Json) -> Result<Filter, Rejection> {
        let (kind, pncp) = read_filter(value, "filter")?;
        if kind == "Skill" {
            return Ok(Filter::Skill);
        }
        pncp.map(|p| PncpKind::parse(&p))
            .transpose()
            .map(Filter::Pncp)
    }

    /// The filter as JSON.
    pub fn to_json(&self) -> Json {
        match self {
            Filter::Skill => Object::new().with("kind", "Skill".into()).into(),
            Filter::Pncp(None) => Object::new().with("kind", "Pncp".into()).into(),
            Filter::Pncp(Some(k)) => Object::new()
                .with("kind", "Pncp".into())
                .with("pncp", Json::str(k.as_str()))
                .into(),
        }
    }
}

/// The plaintext of an `ak.observation.grant`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Grant {
    /// `obs_id`: the controller's name for the observation.
    pub obs_id: String,
    /// Who observes.
    pub observer: ActorId,
    /// The skill's subject.
    pub subject: String,
    /// The skill's action.
    pub action: String,
    /// When present, only exchanges whose requester's entity (as seen from the request)
    /// is this one.
    pub requester: Option<EntityId>,
    /// When present, only exchanges whose coordinator's entity (as seen from the request)
    /// is this one.
    pub fulfiller: Option<EntityId>,
    /// What the observer sees.
    pub filter: Filter,
}

impl Grant {
    /// Reads a grant plaintext: closed, with the members of PROFILE §14.4.
    pub fn from_json(value: &Json) -> Result<Grant, Rejection> {
        let o = closed(
            value,
            "observation grant",
            &[
                "schema",
                "obs_id",
                "observer",
                "subject",
                "action",
                "requester",
                "fulfiller",
                "filter",
            ],
        )?;
        expect_schema(o, GRANT_SCHEMA)?;
        let entity = |key: &str| match o.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .ok_or_else(|| schema(format!("observation grant {key} must be an entity id")))
                .and_then(EntityId::parse)
                .map(Some),
        };
        Ok(Grant {
            obs_id: text(o, "obs_id")?.to_owned(),
            observer: ActorId::from_json(o.get("observer").unwrap_or(&Json::Null))?,
            subject: text(o, "subject")?.to_owned(),
            action: text(o, "action")?.to_owned(),
            requester: entity("requester")?,
            fulfiller: entity("fulfiller")?,
            filter: Filter::from_json(o.get("filter").unwrap_or(&Json::Null))?,
        })
    }

    /// The plaintext as JSON.
    pub fn to_json(&self) -> Json {
        let mut o = Object::new()
            .with("schema", GRANT_SCHEMA.into())
            .with("obs_id", Json::str(self.obs_id.clone()))
            .with("observer", self.observer.to_json())
            .with("subject", Json::str(self.subject.clone()))
            .with("action", Json::str(self.action.clone()))
            .with("filter", self.filter.to_json());
        if let Some(e) = &self.requester {
            o.insert("requester", Json::str(e.to_string()));
        }
        if let Some(e) = &self.fulfiller {
            o.insert("fulfiller", Json::str(e.to_string()));
        }
        o.into()
    }
}

/// The plaintext of an `ak.observation.revoke`: the grant it ends.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Revoke {
    /// The grant event.
    pub grant_event_id: EventId,
}

impl Revoke {
    /// Reads a revoke plaintext: closed, `schema` and `grant_event_id`.
    pub fn from_json(value: &Json) -> Result<Revoke, Rejection> {
        let o = closed(value, "observation revoke", &["schema", "grant_event_id"])?;
        expect_schema(o, REVOKE_SCHEMA)?;
        Ok(Revoke {
            grant_event_id: EventId::parse(text(o, "grant_event_id")?)?,
        })
    }

    /// The plaintext as JSON.
    pub fn to_json(&self) -> Json {
        Object::new()
            .with("schema", REVOKE_SCHEMA.into())
            .with("grant_event_id", Json::str(self.grant_event_id.to_string()))
            .into()
    }
}

/// A grant or a revoke, as read from its event.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Observation {
    /// A grant.
    Grant(Grant),
    /// A revoke.
    Revoke(Revoke),
}

/// Why an observation event of the sidecar could not be read.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Unreadable {
    /// No key of the keyring opens it.
    NotDecryptable,
    /// It opens, but is not a well-formed grant or revoke of its kind.
    PlaintextInvalid,
}

/// An observation event as read: the grant or revoke, or why it could not be read.
pub type ObservationRead = Result<Observation, Unreadable>;

/// The grant or revoke `event` seals, when it is one of `sidecar` (admission already
/// held it to the controller); `None` for every other event.
pub fn read_observation(
    sidecar: &SidecarInfo,
    event: &Event<Verified>,
    keyring: &Keyring,
) -> Option<ObservationRead> {
    if event.scope().sidecar_id() != Some(sidecar.sidecar_id) {
        return None;
    }
    let (encrypted, grant): (&EncryptedEnvelope, bool) = match event.body() {
        Body::ObservationGrant { encrypted } => (encrypted, true),
        Body::ObservationRevoke { encrypted } => (encrypted, false),
        _ => return None,
    };
    let Ok(bytes) = decrypt(&sidecar.sidecar_id, event, keyring, encrypted) else {
        return Some(Err(Unreadable::NotDecryptable));
    };
    let content_type = if grant {
        GRANT_CONTENT_TYPE
    } else {
        REVOKE_CONTENT_TYPE
    };
    let read = || -> Result<Observation, Rejection> {
        if encrypted.content_type != content_type {
            return Err(schema("wrong content type"));
        }
        let value = crate::canonical::parse_canonical(&bytes)?;
        Ok(if grant {
            Observation::Grant(Grant::from_json(&value)?)
        } else {
            Observation::Revoke(Revoke::from_json(&value)?)
        })
    };
    Some(read().map_err(|_| Unreadable::PlaintextInvalid))
}

/// One item of an observer feed (PROFILE §14.4).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ObserverItem {
    /// The event.
    pub event_id: EventId,
    /// Its exchange.
    pub exchange_id: ExchangeId,
    /// The message's PNCP kind; for a control, `control` and its action
    /// (`control close`); for a message without `pncp`, its role.
    pub kind: String,
    /// Its author's principal.
    pub author: DidCoreId,
    /// Its `created_at`.
    pub created_at: Timestamp,
    /// The message's `pncp.data` as sealed (redacted fields are commitments), for folded
    /// messages only: a message that did not fold may hold a raw value where a commitment
    /// belongs, so no data of it is shown.
    pub data: Option<Object>,
}

impl ObserverItem {
    /// `{event_id, exchange_id, kind, author, created_at, data}`; `data` is `null` when
    /// there is none.
    pub fn to_json(&self) -> Json {
        Object::new()
            .with("event_id", Json::str(self.event_id.to_string()))
            .with("exchange_id", Json::str(self.exchange_id.as_str()))
            .with("kind", Json::str(self.kind.clone()))
            .with("author", Json::str(self.author.as_str()))
            .with("created_at", Json::str(self.created_at.to_string()))
            .with(
                "data",
                self.data.clone().map(Json::Object).unwrap_or(Json::Null),
            )
            .into()
    }
}

/// A grant as admitted: its event and plaintext, and the revokes of it.
#[derive(Clone, Debug)]
pub struct GrantInForce<'g> {
    /// The grant event.
    pub event_id: EventId,
    /// Its plaintext.
    pub grant: &'g Grant,
    /// Every admitted revoke of it.
    pub revokes: &'g [EventId],
}

impl GrantInForce<'_> {
    /// Whether the grant applies to the exchange of `request` (its canonical request): the
    /// request covers the grant and no revoke of it.
    pub fn applies(&self, request: &EventId, causality: &impl Causality) -> bool {
        causality.covers(&[*request], &self.event_id)
            && causality
                .covered_among(&[*request], self.revokes)
                .is_empty()
    }

    /// Whether the exchange opened by `request` matches the grant: its `pncp` names the
    /// grant's skill and, where the grant names them, the requester's and the
    /// coordinator's entities as seen from the request are the grant's.
    pub fn matches(&self, request: &ExchangeItem, causality: &impl Causality) -> bool {
        let Some(pncp) = &request.pncp else {
            return false;
        };
        let Fact::Message(Role::Request(context)) = &request.fact else {
            return false;
        };
        let entity_is = |did: &DidCoreId, want: &Option<EntityId>| match want {
            None => true,
            Some(want) => causality
                .current_model(did, &request.event_id)
                .is_some_and(|m| m.entity == *want),
        };
        pncp.kind == PncpKind::Request
            && pncp.subject == self.grant.subject
            && pncp.action == self.grant.action
            && entity_is(&request.author, &self.grant.requester)
            && entity_is(context.coordinator(), &self.grant.fulfiller)
    }

    /// The observer's items of one exchange: nothing unless the grant applies to it and it
    /// matches; else, in the exchange's timeline order, what the filter lets through of the
    /// events that cover the grant.
    pub fn items(
        &self,
        sidecar: &SidecarInfo,
        exchange_id: &ExchangeId,
        items: &[ExchangeItem],
        outcome: &ExchangeOutcome,
        causality: &impl Causality,
    ) -> Vec<ObserverItem> {
        let Some(projection) = &outcome.projection else {
            return Vec::new();
        };
        let request = projection.request_event_id;
        let Some(request_item) = items.iter().find(|i| i.event_id == request) else {
            return Vec::new();
        };
        if !self.applies(&request, causality) || !self.matches(request_item, causality) {
            return Vec::new();
        }
        let history = exchange_history(sidecar.sidecar_id, exchange_id, items, outcome, causality);
        let mut out = Vec::new();
        for entry in history.entries {
            let Some(item) = items.iter().find(|i| i.event_id == entry.event_id) else {
                continue;
            };
            let folded = !matches!(entry.verdict, Verdict::Ignored { .. });
            let shown = match self.grant.filter {
                Filter::Skill => folded,
                Filter::Pncp(kind) => item
                    .pncp
                    .as_ref()
                    .is_some_and(|p| kind.is_none_or(|k| k == p.kind)),
            };
            if !shown || !causality.covers(&[entry.event_id], &self.event_id) {
                continue;
            }
            let kind = match &item.pncp {
                Some(p) => p.kind.as_str().to_owned(),
                None => entry.step.text(),
            };
            out.push(ObserverItem {
                event_id: entry.event_id,
                exchange_id: exchange_id.clone(),
                kind,
                author: entry.author,
                created_at: entry.created_at,
                data: item
                    .pncp
                    .as_ref()
                    .filter(|_| folded)
                    .and_then(|p| p.data.clone()),
            });
        }
        out
    }
}

fn closed<'a>(value: &'a Json, what: &str, members: &[&str]) -> Result<&'a Object, Rejection> {
    let o = value
        .as_object()
        .ok_or_else(|| schema(format!("{what} must be an object")))?;
    if let Some(k) = o.keys().find(|k| !members.contains(k)) {
        return Err(schema(format!("{what} has an unknown member {k:?}")));
    }
    Ok(o)
}

fn expect_schema(o: &Object, want: &str) -> Result<(), Rejection> {
    match o.get("schema").and_then(Json::as_str) {
        Some(s) if s == want => Ok(()),
        _ => Err(schema(format!("schema must be {want:?}"))),
    }
}

fn text<'a>(o: &'a Object, key: &str) -> Result<&'a str, Rejection> {
    o.get(key)
        .and_then(Json::as_str)
        .ok_or_else(|| schema(format!("{key} must be a string")))
}
