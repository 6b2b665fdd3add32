//! `semantic_refs` items (PROFILE §3): `{"id","role","critical"}`.
//!
//! Roles `after` and `parent_event` are causal: they are DAG edges and their ids must be
//! event ids. Every other role is stored and returned but means nothing to this engine, so
//! such a role marked `critical` is refused with `unsupported_feature` (fail closed).

use crate::canonical::{Json, Object};
use crate::did::only_keys;
use crate::error::{schema, Code, Rejection};
use crate::id::EventId;
use crate::limits::MAX_REF_ID_BYTES;

/// The roles that are causal edges.
pub const CAUSAL_ROLES: [&str; 2] = ["after", "parent_event"];

/// One semantic ref.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SemanticRef {
    /// The referenced id, as written.
    pub id: String,
    /// The role (`^[a-z][a-z0-9_]{0,63}$`).
    pub role: String,
    /// Whether a receiver that does not understand the role must refuse the event.
    pub critical: bool,
}

impl SemanticRef {
    /// An `after` ref to `id` (critical).
    pub fn after(id: EventId) -> Self {
        SemanticRef {
            id: id.to_string(),
            role: "after".into(),
            critical: true,
        }
    }

    /// True for `after` and `parent_event`.
    pub fn is_causal(&self) -> bool {
        CAUSAL_ROLES.contains(&self.role.as_str())
    }

    /// The event id of a causal ref (validated at parse time).
    pub fn causal_target(&self) -> Option<EventId> {
        if self.is_causal() {
            EventId::parse(&self.id).ok()
        } else {
            None
        }
    }

    /// Reads and validates one item.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        SemanticRef::read(v).map(|(item, _)| item)
    }

    /// [`SemanticRef::from_json`], with the target of a causal ref, decoded once.
    pub(crate) fn read(v: &Json) -> Result<(Self, Option<EventId>), Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("semantic_refs item must be an object"))?;
        only_keys(obj, &["critical", "id", "role"], "semantic_refs item")?;
        let id = obj
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| schema("ref id must be a string"))?;
        let role = obj
            .get("role")
            .and_then(Json::as_str)
            .ok_or_else(|| schema("ref role must be a string"))?;
        let critical = obj
            .get("critical")
            .and_then(Json::as_bool)
            .ok_or_else(|| schema("ref critical must be a boolean"))?;
        SemanticRef::from_parts(id, role, critical)
    }

    /// Validates one item's members (however they were read): the role's spelling, a causal
    /// ref's event id (returned, decoded), a non-causal ref's id length, and no `critical`
    /// on a role this engine does not understand.
    pub(crate) fn from_parts(
        id: &str,
        role: &str,
        critical: bool,
    ) -> Result<(Self, Option<EventId>), Rejection> {
        if !is_code(role) {
            return Err(schema(format!("ref role {role:?} is not a lowercase name")));
        }
        let item = SemanticRef {
            id: id.to_owned(),
            role: role.to_owned(),
            critical,
        };
        if item.is_causal() {
            return Ok((item, Some(EventId::parse(id)?)));
        } else {
            if critical {
                return Err(Rejection::new(
                    Code::UnsupportedFeature,
                    format!("critical ref role {role:?} is not supported"),
                ));
            }
            if id.is_empty() || id.len() > MAX_REF_ID_BYTES {
                return Err(schema("ref id must be 1..=512 bytes"));
            }
        }
        Ok((item, None))
    }

    /// The closed object form.
    pub fn to_json(&self) -> Json {
        Object::new()
            .with("critical", self.critical.into())
            .with("id", self.id.as_str().into())
            .with("role", self.role.as_str().into())
            .into()
    }
}

/// `^[a-z][a-z0-9_]{0,63}$`: ref roles, reason codes and track names.
pub fn is_code(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(c) if c.is_ascii_lowercase())
        && b.len() <= 64
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}
