//! Content identifiers (PROFILE §1): digest suites, [`EventId`], the derived object ids
//! (`ak:realm:`, `ak:sidecar:`, `ak:strand:`) and the `<suite>:<hex>` digest text.
//!
//! An id is parsed strictly: lexical check, base64url decode to exactly 33 bytes, re-encode
//! and compare, then the suite header. Ids order by their UTF-8 string (the canonical order
//! of PROFILE §5); [`EventId::digest`] exposes the digest bytes for the §8 tie-breaks.

use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::Digest as _;

use crate::error::{schema, Code, Rejection};

/// A digest suite (the low nibble of an id's header byte).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DigestSuite {
    /// SHA-256, header `0x01`.
    Sha256,
    /// BLAKE3, header `0x02`; what this engine writes by default.
    Blake3,
}

impl DigestSuite {
    /// The header byte of ids in this suite.
    pub const fn header(self) -> u8 {
        match self {
            DigestSuite::Sha256 => 0x01,
            DigestSuite::Blake3 => 0x02,
        }
    }

    /// The suite named by a header byte.
    pub fn from_header(byte: u8) -> Result<Self, Rejection> {
        if byte & 0xF0 != 0 {
            return Err(schema(format!(
                "id header 0x{byte:02x}: high nibble must be 0"
            )));
        }
        match byte {
            0x01 => Ok(DigestSuite::Sha256),
            0x02 => Ok(DigestSuite::Blake3),
            other => Err(Rejection::new(
                Code::UnsupportedDigestAlgorithm,
                format!("digest suite 0x{other:x} is not accepted"),
            )),
        }
    }

    /// The name used in digest text (`sha256`, `blake3`).
    pub const fn name(self) -> &'static str {
        match self {
            DigestSuite::Sha256 => "sha256",
            DigestSuite::Blake3 => "blake3",
        }
    }

    /// Digest of `bytes` in this suite.
    pub fn digest(self, bytes: &[u8]) -> [u8; 32] {
        match self {
            DigestSuite::Sha256 => sha2::Sha256::digest(bytes).into(),
            DigestSuite::Blake3 => *blake3::hash(bytes).as_bytes(),
        }
    }

    /// Digest of the concatenation of `parts`, without joining them first.
    pub fn digest_parts<'a>(self, parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
        match self {
            DigestSuite::Sha256 => {
                let mut hasher = sha2::Sha256::new();
                parts.into_iter().for_each(|part| hasher.update(part));
                hasher.finalize().into()
            }
            DigestSuite::Blake3 => {
                let mut hasher = blake3::Hasher::new();
                parts.into_iter().for_each(|part| {
                    hasher.update(part);
                });
                *hasher.finalize().as_bytes()
            }
        }
    }

    /// `<suite>:<lowercase hex>` text of a digest.
    pub fn digest_text(self, digest: &[u8; 32]) -> String {
        self.digest_text_in(digest, &mut [0; DIGEST_TEXT_LEN])
            .to_owned()
    }

    /// [`DigestSuite::digest_text`], written into `buf` (no allocation).
    pub(crate) fn digest_text_in<'b>(
        self,
        digest: &[u8; 32],
        buf: &'b mut [u8; DIGEST_TEXT_LEN],
    ) -> &'b str {
        let text = self.name().bytes().chain([b':']).chain(hex_digits(digest));
        for (slot, byte) in buf.iter_mut().zip(text) {
            *slot = byte;
        }
        // Suite names and hex digits are ASCII.
        std::str::from_utf8(buf).unwrap_or_default()
    }
}

/// Length of a digest text: a six-letter suite name, `:`, 64 hex digits.
pub(crate) const DIGEST_TEXT_LEN: usize = 71;

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    hex_digits(bytes).map(char::from).collect()
}

/// The lowercase hex digits of `bytes`, as ASCII bytes, high nibble first.
fn hex_digits(bytes: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let digit = |n: u8| if n < 10 { b'0' + n } else { b'a' + n - 10 };
    bytes
        .iter()
        .flat_map(move |b| [digit(b >> 4), digit(b & 0xf)])
}

/// Length of the base64url token of a 33-byte id.
pub const TOKEN_LEN: usize = 44;

/// The 6-bit value of each base64url character; [`NOT_BASE64URL`] for every other byte.
// Evaluated at compile time: an index out of bounds would fail the build.
#[allow(clippy::indexing_slicing)]
const BASE64URL_VALUES: [u8; 256] = {
    let mut table = [NOT_BASE64URL; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut i = 0;
    while i < alphabet.len() {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Marks a byte that is not a base64url character.
const NOT_BASE64URL: u8 = 0xFF;

/// The 33 bytes of a 44-character base64url token (four characters to three bytes, no
/// padding); `None` when a character is not base64url. The same bytes a general decoder
/// gives (a property test holds it to that), without its bookkeeping: ids are decoded
/// several times per event.
pub fn decode_token(text: &[u8; TOKEN_LEN]) -> Option<[u8; 33]> {
    let mut raw = [0u8; 33];
    for (quad, out) in text.chunks_exact(4).zip(raw.chunks_exact_mut(3)) {
        let mut bits = 0u32;
        for &c in quad {
            let value = *BASE64URL_VALUES.get(usize::from(c))?;
            if value == NOT_BASE64URL {
                return None;
            }
            bits = bits << 6 | u32::from(value);
        }
        out.copy_from_slice(&bits.to_be_bytes()[1..]);
    }
    Some(raw)
}

/// The 44-character token shared by an event id and the object ids derived from it.
/// Equality reads the 33 bytes only (the text is a function of them), hashing eight of
/// them.
#[derive(Copy, Clone)]
pub struct Token {
    text: [u8; TOKEN_LEN],
    raw: [u8; 33],
}

impl Token {
    /// Builds the token of a suite and digest.
    pub fn new(suite: DigestSuite, digest: &[u8; 32]) -> Self {
        let mut raw = [0u8; 33];
        raw[0] = suite.header();
        raw[1..].copy_from_slice(digest);
        let mut text = [0u8; TOKEN_LEN];
        // 33 bytes always encode to exactly 44 characters.
        let _ = URL_SAFE_NO_PAD.encode_slice(raw, &mut text);
        Token { text, raw }
    }

    /// Parses a 44-character token strictly (PROFILE §1).
    pub fn parse(token: &str) -> Result<Self, Rejection> {
        // 44 characters are exactly 264 bits: every such token decodes to 33 bytes, and
        // nothing else encodes to it, so no re-encoding is needed to prove it canonical.
        let (text, raw) = <[u8; TOKEN_LEN]>::try_from(token.as_bytes())
            .ok()
            .and_then(|text| Some((text, decode_token(&text)?)))
            .ok_or_else(|| schema("id token must be 44 base64url characters"))?;
        DigestSuite::from_header(raw[0])?;
        Ok(Token { text, raw })
    }

    /// The token text.
    pub fn as_str(&self) -> &str {
        // Only base64url ASCII is ever stored.
        std::str::from_utf8(&self.text).unwrap_or_default()
    }

    /// The digest suite.
    pub fn suite(&self) -> DigestSuite {
        if self.raw[0] == DigestSuite::Sha256.header() {
            DigestSuite::Sha256
        } else {
            DigestSuite::Blake3
        }
    }

    /// The 32 digest bytes.
    pub fn digest(&self) -> [u8; 32] {
        let mut d = [0u8; 32];
        d.copy_from_slice(&self.raw[1..]);
        d
    }

    /// The 33 id bytes (header + digest).
    pub fn bytes(&self) -> &[u8; 33] {
        &self.raw
    }

    /// Rebuilds a token from its 33 bytes (as stored by this engine).
    pub fn from_bytes(raw: &[u8; 33]) -> Result<Self, Rejection> {
        let suite = DigestSuite::from_header(raw[0])?;
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&raw[1..]);
        Ok(Token::new(suite, &digest))
    }
}

impl PartialEq for Token {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Token {}

impl std::hash::Hash for Token {
    /// Eight digest bytes: a digest is uniform already, equality compares all 33 bytes,
    /// and a keyed hasher (the standard one) keeps a crafted prefix unpredictable. Hashing
    /// the whole id cost the admission of every event several SipHash rounds per lookup.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut prefix = [0u8; 8];
        if let Some(digest) = self.raw.get(1..9) {
            prefix.copy_from_slice(digest);
        }
        state.write_u64(u64::from_le_bytes(prefix));
    }
}

impl Ord for Token {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(&other.text)
    }
}

impl PartialOrd for Token {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A kind of content-derived identifier: its prefix.
pub trait IdKind: Copy + Eq + Ord + std::hash::Hash + fmt::Debug {
    /// The id prefix, for example `ak:event:`.
    const PREFIX: &'static str;
}

macro_rules! id_kinds {
    ($($(#[$doc:meta])* $name:ident => $prefix:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub enum $name {}
        impl IdKind for $name {
            const PREFIX: &'static str = $prefix;
        }
    )*};
}

id_kinds! {
    /// Marker of event ids.
    EventKind => "ak:event:";
    /// Marker of realm ids.
    RealmKind => "ak:realm:";
    /// Marker of sidecar ids.
    SidecarKind => "ak:sidecar:";
    /// Marker of strand ids.
    StrandKind => "ak:strand:";
}

/// A content-derived identifier: a prefix plus the token of the creating event.
/// All id kinds order by their full string, which (the prefix being fixed) is token order.
pub struct Id<K: IdKind> {
    token: Token,
    _kind: PhantomData<K>,
}

/// `ak:event:` ids.
pub type EventId = Id<EventKind>;
/// `ak:realm:` ids (retyped from the `ak.realm.create` event id).
pub type RealmId = Id<RealmKind>;
/// `ak:sidecar:` ids (retyped from the `ak.sidecar.create` event id).
pub type SidecarId = Id<SidecarKind>;
/// `ak:strand:` ids.
pub type StrandId = Id<StrandKind>;

impl<K: IdKind> Id<K> {
    /// The id with this token.
    pub fn from_token(token: Token) -> Self {
        Id {
            token,
            _kind: PhantomData,
        }
    }

    /// Parses `ak:<kind>:<token>` strictly.
    pub fn parse(s: &str) -> Result<Self, Rejection> {
        let token = s
            .strip_prefix(K::PREFIX)
            .ok_or_else(|| schema(format!("expected an id starting with {}", K::PREFIX)))?;
        Token::parse(token).map(Self::from_token)
    }

    /// The shared token.
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// The same token under another prefix (PROFILE §1 retyping).
    pub fn retype<L: IdKind>(&self) -> Id<L> {
        Id::from_token(self.token)
    }

    /// The 32 digest bytes (used for the §8 greatest-digest tie-breaks).
    pub fn digest(&self) -> [u8; 32] {
        self.token.digest()
    }

    /// The digest suite.
    pub fn suite(&self) -> DigestSuite {
        self.token.suite()
    }

    /// `<suite>:<hex>` digest text.
    pub fn digest_text(&self) -> String {
        self.suite().digest_text(&self.digest())
    }

    /// [`Id::digest_text`], written into `buf` (no allocation).
    pub(crate) fn digest_text_in<'b>(&self, buf: &'b mut [u8; DIGEST_TEXT_LEN]) -> &'b str {
        self.suite().digest_text_in(&self.digest(), buf)
    }

    /// The 33 id bytes.
    pub fn bytes(&self) -> &[u8; 33] {
        self.token.bytes()
    }

    /// Writes this id as a canonical JSON string: its text between quotes, which is what
    /// escaping it would give (a fixed `ak:<kind>:` prefix and base64url, no character that
    /// JSON escapes), without formatting it into a `String` first.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        out.extend_from_slice(K::PREFIX.as_bytes());
        out.extend_from_slice(&self.token.text);
        out.push(b'"');
    }

    /// Rebuilds an id from its 33 stored bytes.
    pub fn from_bytes(raw: &[u8; 33]) -> Result<Self, Rejection> {
        Token::from_bytes(raw).map(Self::from_token)
    }
}

impl EventId {
    /// The id of an event whose preimage digests to `digest` in `suite`.
    pub fn from_digest(suite: DigestSuite, digest: &[u8; 32]) -> Self {
        Id::from_token(Token::new(suite, digest))
    }

    /// The id of an event with these preimage bytes.
    pub fn of_preimage(suite: DigestSuite, preimage: &[u8]) -> Self {
        Self::from_digest(suite, &suite.digest(preimage))
    }

    /// [`Id::of_preimage`] of a preimage given as consecutive parts.
    pub fn of_preimage_parts<'a>(
        suite: DigestSuite,
        parts: impl IntoIterator<Item = &'a [u8]>,
    ) -> Self {
        Self::from_digest(suite, &suite.digest_parts(parts))
    }
}

impl<K: IdKind> Clone for Id<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: IdKind> Copy for Id<K> {}
impl<K: IdKind> PartialEq for Id<K> {
    fn eq(&self, other: &Self) -> bool {
        self.token == other.token
    }
}
impl<K: IdKind> Eq for Id<K> {}
impl<K: IdKind> std::hash::Hash for Id<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.token.hash(state);
    }
}
impl<K: IdKind> Ord for Id<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.token.cmp(&other.token)
    }
}
impl<K: IdKind> PartialOrd for Id<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: IdKind> fmt::Display for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(K::PREFIX)?;
        f.write_str(self.token.as_str())
    }
}
impl<K: IdKind> fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl<K: IdKind> std::str::FromStr for Id<K> {
    type Err = Rejection;
    fn from_str(s: &str) -> Result<Self, Rejection> {
        Self::parse(s)
    }
}
impl<K: IdKind> serde::Serialize for Id<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de, K: IdKind> serde::Deserialize<'de> for Id<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}
