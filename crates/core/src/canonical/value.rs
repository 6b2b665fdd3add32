//! The canonical JSON value model.

use std::borrow::Cow;
use std::cmp::Ordering;

/// A JSON value as canonical JSON allows it: no floats, unique keys.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer within ±(2^53 − 1).
    Int(i64),
    /// An NFC string.
    Str(String),
    /// An array; order is significant.
    Array(Vec<Json>),
    /// An object with unique keys in UTF-16 order.
    Object(Object),
}

/// A JSON object whose members are kept sorted by UTF-16 code units of the key. Keys that
/// are member names of the event schemas are borrowed, not allocated.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Object {
    members: Vec<(Cow<'static, str>, Json)>,
}

/// Objects up to this many members are searched by a scan rather than a binary search.
const SCAN_MEMBERS: usize = 8;

/// Orders two keys by their UTF-16 code units (PROFILE §2).
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    // Bytes and UTF-16 units order alike up to the first difference; when both differing
    // bytes are ASCII (nearly always: keys are ASCII) they decide. A string that is a
    // prefix of the other ends on a character boundary, so it is less in both orders.
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match x.iter().zip(y).position(|(p, q)| p != q) {
        None => x.len().cmp(&y.len()),
        Some(i) => match (x.get(i), y.get(i)) {
            (Some(&p), Some(&q)) if p.is_ascii() && q.is_ascii() => p.cmp(&q),
            _ => a.encode_utf16().cmp(b.encode_utf16()),
        },
    }
}

impl Object {
    /// An object of members already in strictly increasing UTF-16 key order (the strict
    /// parser checks that order as it reads).
    pub(super) fn from_sorted(members: Vec<(Cow<'static, str>, Json)>) -> Self {
        debug_assert!(members
            .windows(2)
            .all(|w| matches!(w, [a, b] if utf16_cmp(&a.0, &b.0).is_lt())));
        Object { members }
    }

    /// An empty object.
    pub fn new() -> Self {
        Object::default()
    }

    /// Inserts a member; returns `false` (and changes nothing) when the key exists.
    pub fn insert(&mut self, key: impl Into<String>, value: Json) -> bool {
        let key = key.into();
        match self.members.binary_search_by(|(k, _)| utf16_cmp(k, &key)) {
            Ok(_) => false,
            Err(at) => {
                self.members.insert(at, (Cow::Owned(key), value));
                true
            }
        }
    }

    /// Builder form of [`Object::insert`]; a repeated key keeps the first value.
    pub fn with(mut self, key: impl Into<String>, value: Json) -> Self {
        self.insert(key, value);
        self
    }

    /// The member named `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.position(key)
            .and_then(|i| self.members.get(i))
            .map(|(_, v)| v)
    }

    /// Removes and returns the member named `key`.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let at = self.position(key)?;
        Some(self.members.remove(at).1)
    }

    /// Where the member named `key` is. Most objects are small, and comparing for
    /// equality down a few members costs less than ordering comparisons in a binary search.
    fn position(&self, key: &str) -> Option<usize> {
        if self.members.len() <= SCAN_MEMBERS {
            return self.members.iter().position(|(k, _)| k.as_ref() == key);
        }
        self.members
            .binary_search_by(|(k, _)| utf16_cmp(k, key))
            .ok()
    }

    /// Members in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.members.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Member names in canonical order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_ref())
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when there are no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

impl Json {
    /// A string value.
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Canonical bytes of this value.
    pub fn to_bytes(&self) -> Vec<u8> {
        super::to_canonical(self)
    }
}

impl From<Object> for Json {
    fn from(o: Object) -> Self {
        Json::Object(o)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::Str(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::Str(s)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

impl From<Vec<Json>> for Json {
    fn from(a: Vec<Json>) -> Self {
        Json::Array(a)
    }
}
