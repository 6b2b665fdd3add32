//! Principals (PROFILE §1): `did_core_id`, [`ActorId`], and the self-certifying `key` method
//! (`ak:did_core:key:z…` ⇄ `did:key:z…` ⇄ an Ed25519 public key).

use std::fmt;

use ed25519_dalek::VerifyingKey;

use crate::canonical::{write_string, Json, Object};
use crate::error::{schema, Rejection};
use crate::limits::MAX_DID_CORE_ID_BYTES;

/// The prefix of the self-certifying `key` method (PROFILE §1).
const SELF_CERTIFYING_PREFIX: &str = "ak:did_core:key:";

/// Multicodec prefix of an Ed25519 public key (`ed25519-pub`, varint 0xed).
const ED25519_MULTICODEC: [u8; 2] = [0xED, 0x01];

/// A `did_core_id`: `ak:did_core:<method>:<core>`, compared byte for byte.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DidCoreId(String);

impl DidCoreId {
    /// Parses and validates `^ak:did_core:[a-z0-9]+:[^\s/?#]+$`, at most 512 bytes.
    pub fn parse(s: &str) -> Result<Self, Rejection> {
        if s.len() > MAX_DID_CORE_ID_BYTES {
            return Err(schema("did_core_id longer than 512 bytes"));
        }
        let rest = s
            .strip_prefix("ak:did_core:")
            .ok_or_else(|| schema("did_core_id must start with ak:did_core:"))?;
        let (method, core) = rest
            .split_once(':')
            .ok_or_else(|| schema("did_core_id needs <method>:<core>"))?;
        let method_ok = !method.is_empty()
            && method
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let core_ok = !core.is_empty()
            && !core
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '/' | '?' | '#'));
        if method_ok && core_ok {
            Ok(DidCoreId(s.to_owned()))
        } else {
            Err(schema(format!("malformed did_core_id {s:?}")))
        }
    }

    /// The `ak:did_core:key:` principal of an Ed25519 key.
    pub fn for_key(key: &VerifyingKey) -> Self {
        DidCoreId(format!("{SELF_CERTIFYING_PREFIX}{}", multibase_of(key)))
    }

    /// True for a `key`-method principal: self-certifying, bound to its own key alone
    /// (PROFILE §4, §11), so no keyring entry may widen it.
    pub fn is_self_certifying(&self) -> bool {
        self.0.starts_with(SELF_CERTIFYING_PREFIX)
    }

    /// The Ed25519 key of a `key`-method principal, if this is one.
    pub fn key(&self) -> Option<VerifyingKey> {
        self.0
            .strip_prefix(SELF_CERTIFYING_PREFIX)
            .and_then(|mb| key_of_multibase(mb).ok())
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for DidCoreId {
    type Err = Rejection;

    fn from_str(s: &str) -> Result<Self, Rejection> {
        DidCoreId::parse(s)
    }
}

impl fmt::Display for DidCoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for DidCoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// `z` + base58btc(0xED 0x01 ‖ key): the multibase text shared by `did:key` and
/// `ak:did_core:key:`.
pub fn multibase_of(key: &VerifyingKey) -> String {
    let mut bytes = Vec::with_capacity(34);
    bytes.extend_from_slice(&ED25519_MULTICODEC);
    bytes.extend_from_slice(key.as_bytes());
    format!("z{}", bs58::encode(bytes).into_string())
}

/// Decodes the multibase text of an Ed25519 key.
pub fn key_of_multibase(mb: &str) -> Result<VerifyingKey, Rejection> {
    let b58 = mb
        .strip_prefix('z')
        .ok_or_else(|| schema("multibase key must start with z"))?;
    let bytes = bs58::decode(b58)
        .into_vec()
        .map_err(|_| schema("multibase key is not base58btc"))?;
    let key = bytes
        .strip_prefix(&ED25519_MULTICODEC)
        .ok_or_else(|| schema("multibase key is not an Ed25519 key"))?;
    let key: [u8; 32] = key
        .try_into()
        .map_err(|_| schema("Ed25519 key must be 32 bytes"))?;
    VerifyingKey::from_bytes(&key).map_err(|_| schema("Ed25519 key is not a valid point"))
}

/// `did:key:<mb>` of an Ed25519 key.
pub fn did_key(key: &VerifyingKey) -> String {
    format!("did:key:{}", multibase_of(key))
}

/// The verification method `did:key:<mb>#<mb>` of an Ed25519 key (PROFILE §4).
pub fn verification_method(key: &VerifyingKey) -> String {
    let mb = multibase_of(key);
    format!("did:key:{mb}#{mb}")
}

/// The key named by a `did:key:<mb>` or `did:key:<mb>#<mb>` text.
pub fn key_of_did_key(text: &str) -> Result<VerifyingKey, Rejection> {
    let rest = text
        .strip_prefix("did:key:")
        .ok_or_else(|| schema("expected did:key:"))?;
    let mb = match rest.split_once('#') {
        Some((mb, fragment)) if mb == fragment => mb,
        Some(_) => return Err(schema("did:key fragment must repeat the key")),
        None => rest,
    };
    key_of_multibase(mb)
}

/// Who authored an event (PROFILE §1): a closed tagged object.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ActorId {
    /// A person's account at a station.
    Account {
        /// The account's principal.
        principal_id: DidCoreId,
        /// The station holding the account.
        station_id: DidCoreId,
    },
    /// A service.
    Service {
        /// The service's principal.
        service_id: DidCoreId,
    },
}

/// The canonical JSON text of the closed object.
impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_json().to_bytes()))
    }
}

impl ActorId {
    /// The principal: `principal_id` of an account, `service_id` of a service.
    pub fn principal(&self) -> &DidCoreId {
        match self {
            ActorId::Account { principal_id, .. } => principal_id,
            ActorId::Service { service_id } => service_id,
        }
    }

    /// A service actor whose principal is the `key` principal of `key`.
    pub fn service_for_key(key: &VerifyingKey) -> Self {
        ActorId::Service {
            service_id: DidCoreId::for_key(key),
        }
    }

    /// Reads the closed object form.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("actor_id must be an object"))?;
        match obj.get("kind").and_then(Json::as_str) {
            Some("account") => {
                only_keys(obj, &["kind", "account_id"], "actor_id")?;
                let acc = obj
                    .get("account_id")
                    .and_then(Json::as_object)
                    .ok_or_else(|| schema("actor_id.account_id must be an object"))?;
                only_keys(acc, &["principal_id", "station_id"], "account_id")?;
                Ok(ActorId::Account {
                    principal_id: did_member(acc, "principal_id")?,
                    station_id: did_member(acc, "station_id")?,
                })
            }
            Some("service") => {
                only_keys(obj, &["kind", "service_id"], "actor_id")?;
                Ok(ActorId::Service {
                    service_id: did_member(obj, "service_id")?,
                })
            }
            _ => Err(schema("actor_id.kind must be account or service")),
        }
    }

    /// The closed object form.
    pub fn to_json(&self) -> Json {
        match self {
            ActorId::Account {
                principal_id,
                station_id,
            } => Object::new()
                .with("kind", "account".into())
                .with(
                    "account_id",
                    Object::new()
                        .with("principal_id", principal_id.as_str().into())
                        .with("station_id", station_id.as_str().into())
                        .into(),
                )
                .into(),
            ActorId::Service { service_id } => Object::new()
                .with("kind", "service".into())
                .with("service_id", service_id.as_str().into())
                .into(),
        }
    }

    /// Appends the canonical bytes of [`ActorId::to_json`] to `out`, without building the
    /// value (a test holds the two to the same bytes).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        match self {
            ActorId::Account {
                principal_id,
                station_id,
            } => {
                out.extend_from_slice(b"{\"account_id\":{\"principal_id\":");
                write_string(principal_id.as_str(), out);
                out.extend_from_slice(b",\"station_id\":");
                write_string(station_id.as_str(), out);
                out.extend_from_slice(b"},\"kind\":\"account\"}");
            }
            ActorId::Service { service_id } => {
                out.extend_from_slice(b"{\"kind\":\"service\",\"service_id\":");
                write_string(service_id.as_str(), out);
                out.push(b'}');
            }
        }
    }
}

/// Requires that `obj` has exactly the members `keys` (all present, nothing else).
pub(crate) fn only_keys(obj: &Object, keys: &[&str], what: &str) -> Result<(), Rejection> {
    if let Some(extra) = obj.keys().find(|k| !keys.contains(k)) {
        return Err(schema(format!("{what}: unknown member {extra:?}")));
    }
    if let Some(missing) = keys.iter().find(|k| obj.get(k).is_none()) {
        return Err(schema(format!("{what}: missing member {missing:?}")));
    }
    Ok(())
}

/// The string member `key` of `obj`, or a schema rejection naming it.
pub(crate) fn str_member<'o>(obj: &'o Object, key: &str) -> Result<&'o str, Rejection> {
    obj.get(key)
        .and_then(Json::as_str)
        .ok_or_else(|| schema(format!("{key} must be a string")))
}

fn did_member(obj: &Object, key: &str) -> Result<DidCoreId, Rejection> {
    DidCoreId::parse(str_member(obj, key)?)
}
