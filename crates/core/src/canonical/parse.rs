//! Strict ingress: bytes → [`Json`], rejecting anything canonical JSON forbids.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use super::strict::parse_strict;
use super::value::{Json, Object};
#[cfg(doc)]
use super::write::to_canonical;
use crate::error::{schema, Code, Rejection};
use crate::limits::{MAX_EVENT_BYTES, MAX_JSON_DEPTH, MAX_SAFE_INTEGER};

/// Parses `bytes` and requires them to be canonical JSON (PROFILE §2): at most
/// [`MAX_EVENT_BYTES`], no byte-order mark, and spelled exactly as [`to_canonical`] writes
/// the value (checked in one pass while parsing).
pub fn parse_canonical(bytes: &[u8]) -> Result<Json, Rejection> {
    parse_strict(bytes).map(|c| c.value)
}

/// Parses `bytes` with every value rule of canonical JSON (no floats, integers within
/// ±(2^53−1), unique keys, NFC strings, no U+FEFF, depth ≤ 64, size ≤ 1 MiB) but without
/// requiring canonical spelling. Used for files that are not hashed (keyrings, plaintexts).
pub fn parse_value(bytes: &[u8]) -> Result<Json, Rejection> {
    check_size(bytes)?;
    if bytes.windows(3).any(|w| w == [0xEF, 0xBB, 0xBF]) {
        return Err(schema("byte-order mark (U+FEFF) is not allowed"));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Seed { depth: 0 }.deserialize(&mut de).map_err(from_serde)?;
    de.end().map_err(from_serde)?;
    Ok(value)
}

/// Refuses input over [`MAX_EVENT_BYTES`] (`payload_too_large`), before parsing.
pub(crate) fn check_size(bytes: &[u8]) -> Result<(), Rejection> {
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(Rejection::new(
            Code::PayloadTooLarge,
            format!(
                "{} bytes exceeds the {MAX_EVENT_BYTES}-byte limit",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

/// Maps a parse failure to a rejection, keeping a message that names the rule.
fn from_serde(e: serde_json::Error) -> Rejection {
    schema(format!("invalid JSON: {e}"))
}

/// Checks one string: NFC and no U+FEFF (the byte scan misses escaped `\ufeff`).
fn check_string<E: de::Error>(s: &str) -> Result<(), E> {
    string_rule(s).map_err(E::custom)
}

/// The string rule of PROFILE §2: NFC and no U+FEFF; `Err` names the broken rule.
pub(super) fn string_rule(s: &str) -> Result<(), &'static str> {
    // ASCII is always NFC and cannot hold U+FEFF; most strings take this path.
    if s.is_ascii() {
        return Ok(());
    }
    if s.contains('\u{feff}') {
        return Err("byte-order mark (U+FEFF) is not allowed");
    }
    let nfc = match is_nfc_quick(s.chars()) {
        IsNormalized::Yes => true,
        IsNormalized::No => false,
        IsNormalized::Maybe => s.chars().eq(s.nfc()),
    };
    if nfc {
        Ok(())
    } else {
        Err("string is not in Unicode normalization form C")
    }
}

fn check_int<E: de::Error>(v: i128) -> Result<Json, E> {
    if v.unsigned_abs() > MAX_SAFE_INTEGER.unsigned_abs().into() {
        return Err(E::custom("integer outside ±(2^53−1)"));
    }
    i64::try_from(v)
        .map(Json::Int)
        .map_err(|_| E::custom("integer outside ±(2^53−1)"))
}

/// Builds a [`Json`] while tracking nesting depth.
struct Seed {
    depth: usize,
}

impl Seed {
    fn nested<E: de::Error>(&self) -> Result<Seed, E> {
        let depth = self.depth + 1;
        if depth > MAX_JSON_DEPTH {
            return Err(E::custom(format!("nesting deeper than {MAX_JSON_DEPTH}")));
        }
        Ok(Seed { depth })
    }
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Json;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a canonical JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        check_int(v.into())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        check_int(v.into())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Json, E> {
        Err(E::custom(
            "numbers must be integers (no fraction or exponent)",
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        check_string(v)?;
        Ok(Json::Str(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        check_string(&v)?;
        Ok(Json::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let inner = self.nested()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed { depth: inner.depth })? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let inner = self.nested()?;
        let mut obj = Object::new();
        while let Some(key) = map.next_key::<String>()? {
            check_string(&key)?;
            let value = map.next_value_seed(Seed { depth: inner.depth })?;
            if !obj.insert(key.clone(), value) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
        }
        Ok(Json::Object(obj))
    }
}
