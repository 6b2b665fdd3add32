//! Redaction before sealing (PROFILE §14.3): a field whose SchemaRef says `redacted: true`
//! never reaches the ledger. In its place the data holds a placeholder with a salted
//! blake3 commitment to the value; the author keeps the disclosure (salt and value) in a
//! local store, and anyone given the disclosure and the sealed event can recompute the
//! commitment.
//!
//! Pure: the salt is the caller's (32 random bytes, fresh per field instance), so this
//! module draws no randomness.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::canonical::{to_canonical, Json, Object};
use crate::error::{schema, Rejection};
use crate::exchange::ExchangeId;
use crate::id::{hex, EventId};

/// The placeholder's `alg`.
pub const ALG: &str = "blake3-salted-v1";
/// The `context` member of the committed object.
pub const CONTEXT: &str = "ak.redaction.v1";
/// The member that marks a placeholder.
pub const MARKER: &str = "ak_redacted";
/// Prefix of a commitment's text.
const COMMITMENT_PREFIX: &str = "blake3:";

/// A disclosure's salt: 32 bytes the author drew at random for one field instance.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Salt(pub [u8; 32]);

impl Salt {
    /// Unpadded base64url, as the committed object spells it.
    pub fn to_text(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.0)
    }

    /// Parses the unpadded base64url of exactly 32 bytes.
    pub fn parse(text: &str) -> Result<Salt, Rejection> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| schema(format!("salt {text:?} is not unpadded base64url")))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| schema(format!("salt {text:?} is not 32 bytes")))?;
        Ok(Salt(bytes))
    }
}

impl std::fmt::Debug for Salt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Salt({})", self.to_text())
    }
}

/// The commitment to `value` in field `field` of exchange `exchange`: `blake3:` and the hex
/// digest of the canonical JSON of `{"context", "exchange_id", "field", "salt", "value"}`.
pub fn commitment(exchange: &ExchangeId, field: &str, salt: &Salt, value: &Json) -> String {
    let committed = Object::new()
        .with("context", Json::str(CONTEXT))
        .with("exchange_id", Json::str(exchange.as_str()))
        .with("field", Json::str(field))
        .with("salt", Json::str(salt.to_text()))
        .with("value", value.clone());
    let digest = blake3::hash(&to_canonical(&Json::Object(committed)));
    format!("{COMMITMENT_PREFIX}{}", hex(digest.as_bytes()))
}

/// The placeholder that stands in the data for a redacted value:
/// `{"ak_redacted": {"alg": "blake3-salted-v1", "commitment": C}}`.
pub fn placeholder(commitment: &str) -> Json {
    let inner = Object::new()
        .with("alg", Json::str(ALG))
        .with("commitment", Json::str(commitment));
    Json::Object(Object::new().with(MARKER, Json::Object(inner)))
}

/// The commitment a well-formed placeholder holds; `None` for anything else (a raw value,
/// or a placeholder of another shape or algorithm).
pub fn placeholder_commitment(value: &Json) -> Option<&str> {
    let outer = value.as_object().filter(|o| o.len() == 1)?;
    let inner = outer.get(MARKER)?.as_object().filter(|o| o.len() == 2)?;
    if inner.get("alg")?.as_str()? != ALG {
        return None;
    }
    let commitment = inner.get("commitment")?.as_str()?;
    let digits = commitment.strip_prefix(COMMITMENT_PREFIX)?;
    let well_formed = digits.len() == 64
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    well_formed.then_some(commitment)
}

/// What the author keeps of one redacted field instance, and hands to whoever may see it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Disclosure {
    /// The sealed event whose data holds the placeholder.
    pub event_id: EventId,
    /// The field (the SchemaRef `name`).
    pub field: String,
    /// The salt.
    pub salt: Salt,
    /// The value that was kept off the ledger.
    pub value: Json,
}

impl Disclosure {
    /// `{"event_id", "field", "salt", "value"}`.
    pub fn to_json(&self) -> Json {
        Json::Object(
            Object::new()
                .with("event_id", Json::str(self.event_id.to_string()))
                .with("field", Json::str(self.field.clone()))
                .with("salt", Json::str(self.salt.to_text()))
                .with("value", self.value.clone()),
        )
    }

    /// Reads a disclosure object (exactly the four members).
    pub fn from_json(value: &Json) -> Result<Disclosure, Rejection> {
        let o = value.as_object().filter(|o| o.len() == 4).ok_or_else(|| {
            schema("a disclosure is an object of event_id, field, salt and value")
        })?;
        let text = |key: &str| {
            o.get(key)
                .and_then(Json::as_str)
                .ok_or_else(|| schema(format!("disclosure member {key:?} must be a string")))
        };
        Ok(Disclosure {
            event_id: EventId::parse(text("event_id")?)?,
            field: text("field")?.to_owned(),
            salt: Salt::parse(text("salt")?)?,
            value: o
                .get("value")
                .cloned()
                .ok_or_else(|| schema("disclosure member \"value\" is missing"))?,
        })
    }

    /// Whether this disclosure opens `placeholder`, a field of exchange `exchange`.
    pub fn opens(&self, exchange: &ExchangeId, placeholder: &Json) -> bool {
        placeholder_commitment(placeholder)
            .is_some_and(|c| c == commitment(exchange, &self.field, &self.salt, &self.value))
    }
}
