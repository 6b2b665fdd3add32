//! Kind-specific payload rules (PROFILE §6) and the typed view of what a payload means.

use crate::actors::observe::{GRANT_KIND, REVOKE_KIND};
use crate::actors::{ActorModel, EntityId};
use crate::canonical::{Json, Object};
use crate::did::only_keys;
use crate::encrypted::EncryptedEnvelope;
use crate::error::{schema, Code, Rejection};
use crate::id::{EventId, SidecarId, StrandId};

use super::ScopeRef;

/// Kind of realm creation events.
pub const REALM_CREATE: &str = "ak.realm.create";
/// Kind of sidecar creation events.
pub const SIDECAR_CREATE: &str = "ak.sidecar.create";
/// Kind of message events.
pub const MESSAGE_CREATE: &str = "ak.message.create";
/// Kind of exchange controls.
pub const EXCHANGE_CONTROL: &str = "ak.agent.sidecar.exchange.control";
/// Kind of strand creation events.
pub const STRAND_CREATE: &str = "ak.strand.create";
/// Kind of the event binding a sidecar to its private strand.
pub const CONTEXT_ATTACH: &str = "ak.sidecar.context.attach";
/// Kind of an actor's versioned model (PROFILE §14.1).
pub const ACTOR_MODEL: &str = "ak.actor.model";
/// `schema` of an `ak.actor.model` payload.
pub const ACTOR_MODEL_SCHEMA: &str = "ak.schema.actor_model.v1";

/// What an event's payload means to this engine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Body {
    /// `ak.realm.create`; the payload is opaque.
    RealmCreate,
    /// `ak.sidecar.create` with payload `{}`.
    SidecarCreate,
    /// `ak.strand.create` in realm scope; the payload is opaque.
    StrandCreate,
    /// `ak.sidecar.context.attach`: binds the sidecar to its private strand (PROFILE §6).
    ContextAttach(Attach),
    /// `ak.actor.model` in realm scope: one version of an actor's model (PROFILE §14.1),
    /// checked against seed 000's definitions.
    ActorModel(ModelVersion),
    /// `ak.message.create` in sidecar scope: an encrypted message.
    SidecarMessage {
        /// The encrypted plaintext `{"body", "sidecar_exchange_binding"?}`.
        encrypted: EncryptedEnvelope,
    },
    /// `ak.agent.sidecar.exchange.control`.
    ExchangeControl {
        /// The outer `sidecar_id` (equal to the scope's).
        sidecar_id: SidecarId,
        /// `source_context_ref.strand_id`.
        strand_id: StrandId,
        /// The encrypted control plaintext.
        encrypted: EncryptedEnvelope,
    },
    /// `ak.observation.grant` in sidecar scope: the controller's sealed grant (§14.4).
    ObservationGrant {
        /// The encrypted grant plaintext.
        encrypted: EncryptedEnvelope,
    },
    /// `ak.observation.revoke` in sidecar scope: the controller's sealed revoke (§14.4).
    ObservationRevoke {
        /// The encrypted revoke plaintext.
        encrypted: EncryptedEnvelope,
    },
    /// Anything else: stored, indexed and returned, not interpreted.
    Other,
}

impl Body {
    /// Checks the payload of `kind` in `scope` and returns its typed view.
    pub fn read(kind: &str, scope: &ScopeRef, payload: &Json) -> Result<Body, Rejection> {
        let obj = payload
            .as_object()
            .ok_or_else(|| schema("payload must be an object"))?;
        match (kind, scope) {
            (REALM_CREATE, ScopeRef::RealmGenesis) => Ok(Body::RealmCreate),
            (REALM_CREATE, _) => Err(schema("ak.realm.create must have scope realm_genesis")),
            (_, ScopeRef::RealmGenesis) => {
                Err(schema("only ak.realm.create may use realm_genesis"))
            }
            (SIDECAR_CREATE, ScopeRef::Realm { .. }) if obj.is_empty() => Ok(Body::SidecarCreate),
            (SIDECAR_CREATE, ScopeRef::Realm { .. }) => {
                Err(schema("ak.sidecar.create payload must be {}"))
            }
            (SIDECAR_CREATE, _) => Err(schema("ak.sidecar.create must have realm scope")),
            (STRAND_CREATE, ScopeRef::Realm { .. }) => Ok(Body::StrandCreate),
            (STRAND_CREATE, _) => Err(schema("ak.strand.create must have realm scope")),
            (CONTEXT_ATTACH, _) => Attach::read(scope, obj).map(Body::ContextAttach),
            (ACTOR_MODEL, ScopeRef::Realm { .. }) => ModelVersion::read(obj).map(Body::ActorModel),
            (ACTOR_MODEL, _) => Err(schema("ak.actor.model must have realm scope")),
            (MESSAGE_CREATE, ScopeRef::Sidecar { .. }) => {
                only_keys(obj, &["encrypted_payload"], "sidecar message payload")?;
                let e = obj.get("encrypted_payload").unwrap_or(&Json::Null);
                Ok(Body::SidecarMessage {
                    encrypted: EncryptedEnvelope::from_json(e)?,
                })
            }
            (GRANT_KIND | REVOKE_KIND, ScopeRef::Sidecar { sidecar_id, .. }) => {
                only_keys(
                    obj,
                    &["sidecar_id", "encrypted_payload"],
                    "observation payload",
                )?;
                if obj.get("sidecar_id").and_then(Json::as_str) != Some(&sidecar_id.to_string()) {
                    return Err(schema(
                        "observation payload: sidecar_id must be the scope's",
                    ));
                }
                let e = obj.get("encrypted_payload").unwrap_or(&Json::Null);
                let encrypted = EncryptedEnvelope::from_json(e)?;
                Ok(if kind == GRANT_KIND {
                    Body::ObservationGrant { encrypted }
                } else {
                    Body::ObservationRevoke { encrypted }
                })
            }
            (GRANT_KIND | REVOKE_KIND, _) => Err(schema(format!("{kind} must have sidecar scope"))),
            (EXCHANGE_CONTROL, _) => read_control(scope, payload).map_err(|why| {
                Rejection::new(
                    Code::SidecarExchangeControlForbidden,
                    format!("exchange control: {why}"),
                )
            }),
            _ => Ok(Body::Other),
        }
    }
}

/// The closed payload of `ak.sidecar.context.attach` (PROFILE §6).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Attach {
    /// The sidecar (equal to the scope's).
    pub sidecar_id: SidecarId,
    /// `source_context_ref.strand_id`: the private strand.
    pub strand_id: StrandId,
    /// `version`, at least 1.
    pub version: u64,
    /// `predecessor_event_ref`: present exactly when `version` > 1.
    pub predecessor: Option<EventId>,
}

impl Attach {
    /// Reads the payload; every failure is `schema_violation`.
    fn read(scope: &ScopeRef, obj: &Object) -> Result<Attach, Rejection> {
        let ScopeRef::Sidecar {
            sidecar_id: scope_sidecar,
            ..
        } = scope
        else {
            return Err(schema("ak.sidecar.context.attach must have sidecar scope"));
        };
        let required = ["sidecar_id", "source_context_ref", "version"];
        if obj.get("predecessor_event_ref").is_some() {
            only_keys(
                obj,
                &[
                    "predecessor_event_ref",
                    "sidecar_id",
                    "source_context_ref",
                    "version",
                ],
                "context attach payload",
            )?;
        } else {
            only_keys(obj, &required, "context attach payload")?;
        }
        let sidecar_id = SidecarId::parse(
            obj.get("sidecar_id")
                .and_then(Json::as_str)
                .unwrap_or_default(),
        )?;
        if sidecar_id != *scope_sidecar {
            return Err(schema(
                "payload.sidecar_id differs from the scope's sidecar",
            ));
        }
        let strand_id = strand_ref(obj).map_err(schema)?;
        let version = obj
            .get("version")
            .and_then(Json::as_i64)
            .and_then(|v| u64::try_from(v).ok())
            .filter(|v| *v >= 1)
            .ok_or_else(|| schema("payload.version must be an integer of at least 1"))?;
        let predecessor = obj
            .get("predecessor_event_ref")
            .map(|v| EventId::parse(v.as_str().unwrap_or_default()))
            .transpose()?;
        match (version, predecessor) {
            (1, Some(_)) => Err(schema("version 1 has no predecessor_event_ref")),
            (2.., None) => Err(schema("a version above 1 needs predecessor_event_ref")),
            _ => Ok(Attach {
                sidecar_id,
                strand_id,
                version,
                predecessor,
            }),
        }
    }
}

/// What an `ak.actor.model` payload says of its place in the actor's version chain (the
/// model itself was checked; it is read again, from the stored event, when it is needed).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ModelVersion {
    /// `entity_id`: the actor and this version.
    pub entity: EntityId,
    /// `predecessor_event_ref`: present exactly when the version is above 1.
    pub predecessor: Option<EventId>,
}

impl ModelVersion {
    /// Reads the closed payload `{"schema", "entity_id", "predecessor_event_ref"?,
    /// "model"}`; every failure is `schema_violation`.
    fn read(obj: &Object) -> Result<ModelVersion, Rejection> {
        let has_predecessor = obj.get("predecessor_event_ref").is_some();
        let keys: &[&str] = if has_predecessor {
            &["entity_id", "model", "predecessor_event_ref", "schema"]
        } else {
            &["entity_id", "model", "schema"]
        };
        only_keys(obj, keys, "actor model payload")?;
        if obj.get("schema").and_then(Json::as_str) != Some(ACTOR_MODEL_SCHEMA) {
            return Err(schema(format!(
                "actor model payload: schema must be {ACTOR_MODEL_SCHEMA:?}"
            )));
        }
        let entity = EntityId::parse(
            obj.get("entity_id")
                .and_then(Json::as_str)
                .ok_or_else(|| schema("actor model payload: entity_id must be a string"))?,
        )?;
        let predecessor = obj
            .get("predecessor_event_ref")
            .map(|v| EventId::parse(v.as_str().unwrap_or_default()))
            .transpose()?;
        match (entity.version(), &predecessor) {
            (1, Some(_)) => {
                return Err(schema("actor model version 1 has no predecessor_event_ref"))
            }
            (2.., None) => {
                return Err(schema(
                    "an actor model version above 1 needs predecessor_event_ref",
                ))
            }
            _ => {}
        }
        ActorModel::parse(obj.get("model").unwrap_or(&Json::Null), &entity)?;
        Ok(ModelVersion {
            entity,
            predecessor,
        })
    }
}

/// `source_context_ref` = `{"kind":"strand","strand_id"}`, closed.
fn strand_ref(obj: &Object) -> Result<StrandId, String> {
    let ctx = obj
        .get("source_context_ref")
        .and_then(Json::as_object)
        .ok_or("source_context_ref must be an object")?;
    only_keys(ctx, &["kind", "strand_id"], "source_context_ref")
        .map_err(|e| e.message().to_owned())?;
    if ctx.get("kind").and_then(Json::as_str) != Some("strand") {
        return Err("source_context_ref.kind must be strand".into());
    }
    ctx.get("strand_id")
        .and_then(Json::as_str)
        .and_then(|s| StrandId::parse(s).ok())
        .ok_or_else(|| "source_context_ref.strand_id must be a strand id".into())
}

/// The outer control payload; every failure is `sidecar_exchange_control_forbidden`.
fn read_control(scope: &ScopeRef, payload: &Json) -> Result<Body, String> {
    let ScopeRef::Sidecar {
        sidecar_id: scope_sidecar,
        ..
    } = scope
    else {
        return Err("must have sidecar scope".into());
    };
    let obj = payload.as_object().ok_or("payload must be an object")?;
    only_keys(
        obj,
        &["encrypted_payload", "sidecar_id", "source_context_ref"],
        "payload",
    )
    .map_err(|e| e.message().to_owned())?;
    let sidecar_id = obj
        .get("sidecar_id")
        .and_then(Json::as_str)
        .and_then(|s| SidecarId::parse(s).ok())
        .ok_or("payload.sidecar_id must be a sidecar id")?;
    if sidecar_id != *scope_sidecar {
        return Err("payload.sidecar_id differs from the scope's sidecar".into());
    }
    let strand_id = strand_ref(obj)?;
    let encrypted =
        EncryptedEnvelope::from_json(obj.get("encrypted_payload").unwrap_or(&Json::Null))
            .map_err(|e| e.message().to_owned())?;
    Ok(Body::ExchangeControl {
        sidecar_id,
        strand_id,
        encrypted,
    })
}
