//! `scope_ref` (PROFILE §3): where an event lives.

use crate::canonical::{Json, Object};
use crate::did::only_keys;
use crate::error::{schema, Rejection};
use crate::id::{RealmId, SidecarId};

/// The closed, tagged `scope_ref` object.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ScopeRef {
    /// `{"kind":"realm_genesis"}`: only `ak.realm.create`.
    RealmGenesis,
    /// `{"kind":"realm","realm_id"}`.
    Realm {
        /// The realm.
        realm_id: RealmId,
    },
    /// `{"kind":"sidecar","realm_id","sidecar_id"}`.
    Sidecar {
        /// The realm holding the sidecar.
        realm_id: RealmId,
        /// The sidecar.
        sidecar_id: SidecarId,
    },
}

impl ScopeRef {
    /// The realm named by the scope, if any.
    pub fn realm_id(&self) -> Option<RealmId> {
        match *self {
            ScopeRef::RealmGenesis => None,
            ScopeRef::Realm { realm_id } | ScopeRef::Sidecar { realm_id, .. } => Some(realm_id),
        }
    }

    /// The sidecar named by the scope, if any.
    pub fn sidecar_id(&self) -> Option<SidecarId> {
        match *self {
            ScopeRef::Sidecar { sidecar_id, .. } => Some(sidecar_id),
            _ => None,
        }
    }

    /// Reads the closed object form.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("scope_ref must be an object"))?;
        let realm = |obj: &Object| -> Result<RealmId, Rejection> {
            RealmId::parse(
                obj.get("realm_id")
                    .and_then(Json::as_str)
                    .unwrap_or_default(),
            )
        };
        match obj.get("kind").and_then(Json::as_str) {
            Some("realm_genesis") => {
                only_keys(obj, &["kind"], "scope_ref")?;
                Ok(ScopeRef::RealmGenesis)
            }
            Some("realm") => {
                only_keys(obj, &["kind", "realm_id"], "scope_ref")?;
                Ok(ScopeRef::Realm {
                    realm_id: realm(obj)?,
                })
            }
            Some("sidecar") => {
                only_keys(obj, &["kind", "realm_id", "sidecar_id"], "scope_ref")?;
                let sidecar = obj
                    .get("sidecar_id")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                Ok(ScopeRef::Sidecar {
                    realm_id: realm(obj)?,
                    sidecar_id: SidecarId::parse(sidecar)?,
                })
            }
            _ => Err(schema(
                "scope_ref.kind must be realm_genesis, realm or sidecar",
            )),
        }
    }

    /// Appends the canonical bytes of [`ScopeRef::to_json`] to `out`, without building the
    /// value (the AAD of every seal and open writes one; a test holds the two to the same
    /// bytes).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        match self {
            ScopeRef::RealmGenesis => out.extend_from_slice(b"{\"kind\":\"realm_genesis\"}"),
            ScopeRef::Realm { realm_id } => {
                out.extend_from_slice(b"{\"kind\":\"realm\",\"realm_id\":");
                realm_id.write_json(out);
                out.push(b'}');
            }
            ScopeRef::Sidecar {
                realm_id,
                sidecar_id,
            } => {
                out.extend_from_slice(b"{\"kind\":\"sidecar\",\"realm_id\":");
                realm_id.write_json(out);
                out.extend_from_slice(b",\"sidecar_id\":");
                sidecar_id.write_json(out);
                out.push(b'}');
            }
        }
    }

    /// The closed object form.
    pub fn to_json(&self) -> Json {
        match self {
            ScopeRef::RealmGenesis => Object::new().with("kind", "realm_genesis".into()).into(),
            ScopeRef::Realm { realm_id } => Object::new()
                .with("kind", "realm".into())
                .with("realm_id", realm_id.to_string().into())
                .into(),
            ScopeRef::Sidecar {
                realm_id,
                sidecar_id,
            } => Object::new()
                .with("kind", "sidecar".into())
                .with("realm_id", realm_id.to_string().into())
                .with("sidecar_id", sidecar_id.to_string().into())
                .into(),
        }
    }
}
