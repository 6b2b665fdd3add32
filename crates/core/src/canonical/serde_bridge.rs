//! [`Json`] meets the serde ecosystem: conversion to and from `serde_json::Value`,
//! `Serialize`, and `Display` as canonical text.
//!
//! Every `Json` is a valid `serde_json::Value`; the way back runs the value through
//! [`parse_value`], so a float, an out-of-range integer or a non-NFC string is refused with
//! its PROFILE code rather than silently changed.

use std::fmt;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::{parse_value, to_canonical, Json};
use crate::error::{schema, Rejection};

impl From<&Json> for serde_json::Value {
    fn from(json: &Json) -> Self {
        match json {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => serde_json::Value::Bool(*b),
            Json::Int(i) => serde_json::Value::Number((*i).into()),
            Json::Str(s) => serde_json::Value::String(s.clone()),
            Json::Array(items) => serde_json::Value::Array(items.iter().map(Into::into).collect()),
            Json::Object(obj) => serde_json::Value::Object(
                obj.iter().map(|(k, v)| (k.to_owned(), v.into())).collect(),
            ),
        }
    }
}

impl From<Json> for serde_json::Value {
    fn from(json: Json) -> Self {
        (&json).into()
    }
}

impl TryFrom<&serde_json::Value> for Json {
    type Error = Rejection;

    /// Applies every value rule of canonical JSON (PROFILE §2).
    fn try_from(value: &serde_json::Value) -> Result<Self, Rejection> {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| schema(format!("value cannot be written as JSON: {e}")))?;
        parse_value(&bytes)
    }
}

impl TryFrom<serde_json::Value> for Json {
    type Error = Rejection;

    fn try_from(value: serde_json::Value) -> Result<Self, Rejection> {
        Json::try_from(&value)
    }
}

impl Serialize for Json {
    /// Members in canonical (UTF-16 key) order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Int(i) => s.serialize_i64(*i),
            Json::Str(text) => s.serialize_str(text),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(obj) => {
                let mut map = s.serialize_map(Some(obj.len()))?;
                for (k, v) in obj.iter() {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl fmt::Display for Json {
    /// The canonical text (PROFILE §2): the exact bytes identity is computed over.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&to_canonical(self)))
    }
}
