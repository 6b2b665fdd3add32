//! Kind-specific payload rules (PROFILE §6) and the typed view of what a payload means.

use crate::canonical::Json;
use crate::did::only_keys;
use crate::encrypted::EncryptedEnvelope;
use crate::error::{schema, Code, Rejection};
use crate::id::{SidecarId, StrandId};

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

/// What an event's payload means to this engine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Body {
    /// `ak.realm.create`; the payload is opaque.
    RealmCreate,
    /// `ak.sidecar.create` with payload `{}`.
    SidecarCreate,
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
            (MESSAGE_CREATE, ScopeRef::Sidecar { .. }) => {
                only_keys(obj, &["encrypted_payload"], "sidecar message payload")?;
                let e = obj.get("encrypted_payload").unwrap_or(&Json::Null);
                Ok(Body::SidecarMessage {
                    encrypted: EncryptedEnvelope::from_json(e)?,
                })
            }
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
    let ctx = obj
        .get("source_context_ref")
        .and_then(Json::as_object)
        .ok_or("source_context_ref must be an object")?;
    only_keys(ctx, &["kind", "strand_id"], "source_context_ref")
        .map_err(|e| e.message().to_owned())?;
    if ctx.get("kind").and_then(Json::as_str) != Some("strand") {
        return Err("source_context_ref.kind must be strand".into());
    }
    let strand_id = ctx
        .get("strand_id")
        .and_then(Json::as_str)
        .and_then(|s| StrandId::parse(s).ok())
        .ok_or("source_context_ref.strand_id must be a strand id")?;
    let encrypted =
        EncryptedEnvelope::from_json(obj.get("encrypted_payload").unwrap_or(&Json::Null))
            .map_err(|e| e.message().to_owned())?;
    Ok(Body::ExchangeControl {
        sidecar_id,
        strand_id,
        encrypted,
    })
}
