//! The event envelope (PROFILE §3): a closed JSON object, read into typed fields.
//!
//! [`Envelope`] is everything the producer signs; the preimage of the id is its canonical
//! JSON. [`ProducerProof`] is the detached signature object (PROFILE §4), verified in
//! [`crate::proof`]. Reading is pure and total: any shape error is a [`Rejection`].

mod body;
pub(crate) mod direct;
mod refs;
mod scope;

pub use body::{
    Attach, Body, ModelVersion, ACTOR_MODEL, ACTOR_MODEL_SCHEMA, CONTEXT_ATTACH, EXCHANGE_CONTROL,
    MESSAGE_CREATE, REALM_CREATE, SIDECAR_CREATE, STRAND_CREATE,
};
pub(crate) use direct::{read_direct, Direct};
pub use refs::{is_code, SemanticRef, CAUSAL_ROLES};
pub use scope::ScopeRef;

use crate::canonical::{write_canonical, write_string, Json, Object};
use crate::did::{only_keys, str_member, ActorId};
use crate::error::{schema, Rejection};
use crate::id::{EventId, RealmId};
use crate::limits::{MAX_KIND_BYTES, MAX_SEMANTIC_REFS};
use crate::time::{Timestamp, TIMESTAMP_LEN};

/// The signed fields of an event.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Envelope {
    /// `^ak\.[a-z0-9_]+(\.[a-z0-9_]+)*$`.
    pub kind: String,
    /// Present on every kind but `ak.realm.create`; equals the scope's realm.
    pub realm_id: Option<RealmId>,
    /// Where the event lives.
    pub scope: ScopeRef,
    /// Who authored it.
    pub actor: ActorId,
    /// When the producer says it was made.
    pub created_at: Timestamp,
    /// Semantic refs (empty means the field is omitted).
    pub refs: Vec<SemanticRef>,
    /// The kind-specific payload (an object).
    pub payload: Json,
}

/// The detached-JWS producer proof (PROFILE §4).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ProducerProof {
    /// `did:key:<mb>#<mb>`.
    pub verification_method: String,
    /// `<suite>:<hex>` of the preimage.
    pub event_digest: String,
    /// Equal to the envelope's `created_at`.
    pub created_at: Timestamp,
    /// Compact JWS with detached payload.
    pub jws: String,
}

/// Room for a typical preimage (a sealed message of a few hundred bytes): one allocation.
const PREIMAGE_CAPACITY: usize = 2048;

const ENVELOPE_KEYS: [&str; 9] = [
    "actor_id",
    "created_at",
    "event_id",
    "kind",
    "payload",
    "producer_proof",
    "realm_id",
    "scope_ref",
    "semantic_refs",
];

impl Envelope {
    /// Reads a parsed event object into the envelope, the stated id and the proof.
    pub fn read(obj: Object) -> Result<(Envelope, EventId, ProducerProof), Rejection> {
        Envelope::read_parts(obj).map(|(envelope, id, proof, _)| (envelope, id, proof))
    }

    /// [`Envelope::read`], with [`Envelope::causal_refs`] decoded once, as the refs are read.
    pub(crate) fn read_parts(
        mut obj: Object,
    ) -> Result<(Envelope, EventId, ProducerProof, Vec<EventId>), Rejection> {
        if let Some(extra) = obj.keys().find(|k| !ENVELOPE_KEYS.contains(k)) {
            return Err(schema(format!("unknown top-level field {extra:?}")));
        }
        let event_id = EventId::parse(str_member(&obj, "event_id")?)?;
        // Strings kept in the envelope and the proof are moved out of the object, not copied.
        let kind = match obj.remove("kind") {
            Some(Json::Str(kind)) => kind,
            _ => return Err(schema("kind must be a string")),
        };
        check_kind(&kind)?;
        let scope = ScopeRef::from_json(obj.get("scope_ref").unwrap_or(&Json::Null))?;
        let realm_id = match obj.get("realm_id") {
            None => None,
            Some(v) => Some(RealmId::parse(v.as_str().unwrap_or_default())?),
        };
        check_realm(&kind, realm_id, &scope)?;
        let actor = ActorId::from_json(obj.get("actor_id").unwrap_or(&Json::Null))?;
        let created_at = Timestamp::parse(str_member(&obj, "created_at")?)?;
        let (refs, causal) = read_refs(obj.get("semantic_refs"))?;
        let proof = ProducerProof::take(obj.remove("producer_proof").unwrap_or(Json::Null))?;
        let payload = obj
            .remove("payload")
            .ok_or_else(|| schema("payload is required"))?;
        check_payload(&payload)?;
        let envelope = Envelope {
            kind,
            realm_id,
            scope,
            actor,
            created_at,
            refs,
            payload,
        };
        Ok((envelope, event_id, proof, causal))
    }

    /// The preimage object: every signed field, without `event_id` and `producer_proof`.
    pub fn preimage(&self) -> Object {
        let mut obj = Object::new()
            .with("actor_id", self.actor.to_json())
            .with("created_at", self.created_at.to_string().into())
            .with("kind", self.kind.as_str().into())
            .with("payload", self.payload.clone())
            .with("scope_ref", self.scope.to_json());
        if let Some(realm) = self.realm_id {
            obj.insert("realm_id", realm.to_string().into());
        }
        if !self.refs.is_empty() {
            obj.insert(
                "semantic_refs",
                Json::Array(self.refs.iter().map(SemanticRef::to_json).collect()),
            );
        }
        obj
    }

    /// The canonical bytes of [`Envelope::preimage`], written without building the value,
    /// and where an event's `event_id` and `producer_proof` members go in them: after
    /// `created_at`, and after `payload` (the members sort so). A test holds the bytes to
    /// `to_canonical` of the value.
    pub fn preimage_bytes(&self) -> (Vec<u8>, [usize; 2]) {
        let mut out = Vec::with_capacity(PREIMAGE_CAPACITY);
        out.extend_from_slice(b"{\"actor_id\":");
        self.actor.write_canonical(&mut out);
        out.extend_from_slice(b",\"created_at\":");
        write_string(self.created_at.text_in(&mut [0; TIMESTAMP_LEN]), &mut out);
        let after_created_at = out.len();
        out.extend_from_slice(b",\"kind\":");
        write_string(&self.kind, &mut out);
        out.extend_from_slice(b",\"payload\":");
        write_canonical(&self.payload, &mut out);
        let after_payload = out.len();
        if let Some(realm) = self.realm_id {
            out.extend_from_slice(b",\"realm_id\":");
            realm.write_json(&mut out);
        }
        out.extend_from_slice(b",\"scope_ref\":");
        self.scope.write_canonical(&mut out);
        if !self.refs.is_empty() {
            out.extend_from_slice(b",\"semantic_refs\":[");
            for (n, r) in self.refs.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_canonical(&r.to_json(), &mut out);
            }
            out.push(b']');
        }
        out.push(b'}');
        (out, [after_created_at, after_payload])
    }

    /// The causal parents named by refs (`after`, `parent_event`), deduplicated, in ref order.
    pub fn causal_refs(&self) -> Vec<EventId> {
        dedup_in_order(self.refs.iter().filter_map(SemanticRef::causal_target))
    }

    /// True when a causal `after` ref names `id`.
    pub fn has_after(&self, id: &EventId) -> bool {
        self.refs
            .iter()
            .any(|r| r.role == "after" && r.causal_target().as_ref() == Some(id))
    }
}

/// `ids` without repeats, in first-seen order. Refs are few (bounded by
/// `MAX_SEMANTIC_REFS`): a scan dedups them faster than a hash set.
fn dedup_in_order(ids: impl Iterator<Item = EventId>) -> Vec<EventId> {
    let mut out: Vec<EventId> = Vec::new();
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// `kind` is a kind name ([`is_kind`]).
fn check_kind(kind: &str) -> Result<(), Rejection> {
    if !is_kind(kind) {
        return Err(schema(format!("kind {kind:?} is not ak.<name>(.<name>)*")));
    }
    Ok(())
}

/// `realm_id` is absent exactly on `ak.realm.create`, and otherwise names the scope's realm.
fn check_realm(kind: &str, realm_id: Option<RealmId>, scope: &ScopeRef) -> Result<(), Rejection> {
    match (kind, realm_id, scope.realm_id()) {
        (REALM_CREATE, Some(_), _) => Err(schema("ak.realm.create must not carry realm_id")),
        (REALM_CREATE, None, _) => Ok(()),
        (_, None, _) => Err(schema("realm_id is required")),
        (_, Some(r), Some(s)) if r != s => Err(schema("realm_id differs from scope_ref.realm_id")),
        _ => Ok(()),
    }
}

/// The payload is an object.
fn check_payload(payload: &Json) -> Result<(), Rejection> {
    if payload.as_object().is_none() {
        return Err(schema("payload must be an object"));
    }
    Ok(())
}

/// `semantic_refs` has `count` items: at least one (else it is omitted), at most
/// [`MAX_SEMANTIC_REFS`].
pub(crate) fn check_ref_count(count: usize) -> Result<(), Rejection> {
    if count == 0 {
        return Err(schema("semantic_refs must be omitted when empty"));
    }
    if count > MAX_SEMANTIC_REFS {
        return Err(schema(format!(
            "more than {MAX_SEMANTIC_REFS} semantic_refs"
        )));
    }
    Ok(())
}

/// The refs, and their causal targets deduplicated in ref order.
fn read_refs(v: Option<&Json>) -> Result<(Vec<SemanticRef>, Vec<EventId>), Rejection> {
    let Some(v) = v else {
        return Ok((Vec::new(), Vec::new()));
    };
    let items = v
        .as_array()
        .ok_or_else(|| schema("semantic_refs must be an array"))?;
    check_ref_count(items.len())?;
    // Every item is read before any two are compared, so an invalid item is named before a
    // repeated one.
    let read = items
        .iter()
        .map(SemanticRef::read)
        .collect::<Result<Vec<_>, _>>()?;
    let mut refs = RefList::with_capacity(read.len());
    for item in read {
        refs.push(item)?;
    }
    Ok(refs.into_parts())
}

/// Refs as they are read: the refs, and their causal targets deduplicated in ref order.
pub(crate) struct RefList {
    refs: Vec<SemanticRef>,
    causal: Vec<EventId>,
}

impl RefList {
    /// Room for `n` refs; the causal targets get room for the implied edges
    /// ([`crate::Event::dependencies`]) too.
    pub(crate) fn with_capacity(n: usize) -> Self {
        RefList {
            refs: Vec::with_capacity(n),
            causal: Vec::with_capacity(n + 3),
        }
    }

    /// Adds a read ref (with its decoded causal target); no two refs may share an id and a
    /// role.
    pub(crate) fn push(
        &mut self,
        (item, target): (SemanticRef, Option<EventId>),
    ) -> Result<(), Rejection> {
        // Refs are few (at most MAX_SEMANTIC_REFS): comparing each with those before it is
        // cheaper than hashing them.
        if self
            .refs
            .iter()
            .any(|earlier| earlier.id == item.id && earlier.role == item.role)
        {
            return Err(schema("two semantic_refs with the same id and role"));
        }
        self.refs.push(item);
        if let Some(target) = target.filter(|t| !self.causal.contains(t)) {
            self.causal.push(target);
        }
        Ok(())
    }

    /// The refs and their causal targets.
    pub(crate) fn into_parts(self) -> (Vec<SemanticRef>, Vec<EventId>) {
        (self.refs, self.causal)
    }
}

/// `^ak\.[a-z0-9_]+(\.[a-z0-9_]+)*$`, at most [`MAX_KIND_BYTES`].
pub fn is_kind(kind: &str) -> bool {
    kind.len() <= MAX_KIND_BYTES
        && kind.strip_prefix("ak.").is_some_and(|rest| {
            rest.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            })
        })
}

/// The proof's `kind` is `detached_jws`, the one kind PROFILE §4 defines.
fn check_proof_kind(kind: &str) -> Result<(), Rejection> {
    if kind != "detached_jws" {
        return Err(schema("producer_proof.kind must be detached_jws"));
    }
    Ok(())
}

impl ProducerProof {
    /// Reads the closed proof object.
    pub fn read(v: &Json) -> Result<Self, Rejection> {
        ProducerProof::take(v.clone())
    }

    /// [`ProducerProof::read`], moving its strings out of `v`.
    fn take(v: Json) -> Result<Self, Rejection> {
        let Json::Object(mut obj) = v else {
            return Err(schema("producer_proof must be an object"));
        };
        only_keys(
            &obj,
            &[
                "created_at",
                "event_digest",
                "jws",
                "kind",
                "verification_method",
            ],
            "producer_proof",
        )?;
        let mut take = |key: &str| match obj.remove(key) {
            Some(Json::Str(text)) => Ok(text),
            _ => Err(schema(format!("producer_proof.{key} must be a string"))),
        };
        let kind = take("kind")?;
        check_proof_kind(&kind)?;
        Ok(ProducerProof {
            verification_method: take("verification_method")?,
            event_digest: take("event_digest")?,
            created_at: Timestamp::parse(&take("created_at")?)?,
            jws: take("jws")?,
        })
    }

    /// Appends the canonical bytes of [`ProducerProof::to_json`] to `out`, without building
    /// the value (every signature writes one; a test holds the two to the same bytes).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"created_at\":");
        write_string(&self.created_at.to_string(), out);
        out.extend_from_slice(b",\"event_digest\":");
        write_string(&self.event_digest, out);
        out.extend_from_slice(b",\"jws\":");
        write_string(&self.jws, out);
        out.extend_from_slice(b",\"kind\":\"detached_jws\",\"verification_method\":");
        write_string(&self.verification_method, out);
        out.push(b'}');
    }

    /// The closed proof object.
    pub fn to_json(&self) -> Json {
        Object::new()
            .with("created_at", self.created_at.to_string().into())
            .with("event_digest", self.event_digest.as_str().into())
            .with("jws", self.jws.as_str().into())
            .with("kind", "detached_jws".into())
            .with(
                "verification_method",
                self.verification_method.as_str().into(),
            )
            .into()
    }
}
