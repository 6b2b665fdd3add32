//! One-pass canonical ingress (PROFILE §2): reads bytes that must already be canonical JSON
//! and checks their spelling while it builds the value — no whitespace, keys in strictly
//! increasing UTF-16 order, integers spelled `-?(0|[1-9][0-9]*)` within ±(2^53−1) and never
//! `-0`, only the escapes the canonical writer produces, NFC strings without U+FEFF, depth
//! and size bounds — so nothing is re-serialized to compare. It accepts exactly the bytes
//! that `to_canonical(parse_value(b)) == b` accepts (a property test holds it to that).
//!
//! It also reports where each top-level member lies in the input, so an event's preimage is
//! assembled from the input's own bytes. Its [`Reader`] also walks a document of a known
//! shape member by member (the event envelope's direct reader), under the same rules.

use std::borrow::Cow;
use std::ops::Range;

use super::keys::known;
use super::parse::{check_size, string_rule};
use super::value::{utf16_cmp, Json, Object};
use crate::error::{schema, Rejection};
use crate::limits::{MAX_JSON_DEPTH, MAX_SAFE_INTEGER};

/// A canonical document and the byte range of each top-level member (`"key":value`), in
/// order; empty unless the document is an object.
pub struct Canonical {
    /// The value.
    pub value: Json,
    /// Byte ranges of the top-level members.
    pub members: Vec<Range<usize>>,
}

/// Parses `bytes`, which must be canonical JSON of at most
/// [`MAX_EVENT_BYTES`](crate::limits::MAX_EVENT_BYTES), in one pass.
pub fn parse_strict(bytes: &[u8]) -> Result<Canonical, Rejection> {
    let mut reader = Reader::over(bytes)?;
    let value = reader.value(0)?;
    if !reader.finished() {
        return Err(reader.spelling("bytes after the value"));
    }
    Ok(Canonical {
        value,
        members: reader.members,
    })
}

/// The canonical reader. [`parse_strict`] reads a whole document with it; a reader of a
/// known shape (the event envelope) walks it member by member with [`Reader::eat`],
/// [`Reader::text`], [`Reader::member_value`] and [`Reader::boolean`], which check the same
/// spelling rules.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    /// `bytes`, known to be UTF-8.
    text: &'a str,
    /// The whole document is ASCII (so every string is NFC and free of U+FEFF).
    ascii: bool,
    at: usize,
    members: Vec<Range<usize>>,
    /// Members of the objects being read, innermost last.
    stack: Vec<(Cow<'static, str>, Json)>,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`, after the document-wide checks: size, no leading
    /// byte-order mark, UTF-8.
    pub(crate) fn over(bytes: &'a [u8]) -> Result<Self, Rejection> {
        check_size(bytes)?;
        // A U+FEFF inside a string is refused by the string rule; anywhere else it is not
        // JSON. A leading one gets its own message.
        if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            return Err(schema("byte-order mark (U+FEFF) is not allowed"));
        }
        // Validated once here, so each string is cut from `text` without a second check.
        let text = std::str::from_utf8(bytes)
            .map_err(|_| schema("invalid JSON: the bytes are not UTF-8"))?;
        Ok(Reader {
            bytes,
            text,
            ascii: text.is_ascii(),
            at: 0,
            members: Vec::new(),
            stack: Vec::new(),
        })
    }

    /// Where the reader is (bytes read so far).
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// True once every byte is read.
    pub(crate) fn finished(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// Reads `spelling` if the input continues with exactly it (punctuation and member
    /// names the caller knows are canonical); false, reading nothing, otherwise.
    pub(crate) fn eat(&mut self, spelling: &[u8]) -> bool {
        let end = self.at + spelling.len();
        let matched = self.bytes.get(self.at..end) == Some(spelling);
        if matched {
            self.at = end;
        }
        matched
    }

    /// A member's value (of a top-level object's member: nesting counts from there).
    pub(crate) fn member_value(&mut self) -> Result<Json, Rejection> {
        self.value(1)
    }

    /// `true` or `false`.
    pub(crate) fn boolean(&mut self) -> Result<bool, Rejection> {
        if self.eat(b"true") {
            Ok(true)
        } else if self.eat(b"false") {
            Ok(false)
        } else {
            Err(self.spelling("expected true or false"))
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        self.at += 1;
        b
    }

    fn expect(&mut self, want: u8) -> Result<(), Rejection> {
        match self.next() {
            Some(b) if b == want => Ok(()),
            _ => Err(self.spelling(&format!("expected '{}'", want as char))),
        }
    }

    /// A rejection for input that is not canonical JSON (or not JSON), with its position.
    fn spelling(&self, why: &str) -> Rejection {
        schema(format!(
            "not canonical JSON at byte {}: {why}",
            self.at.saturating_sub(1)
        ))
    }

    fn value(&mut self, depth: usize) -> Result<Json, Rejection> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            _ => {
                self.at += 1;
                Err(self.spelling("expected a value"))
            }
        }
    }

    fn nest(&self, depth: usize) -> Result<(), Rejection> {
        if depth > MAX_JSON_DEPTH {
            return Err(schema(format!(
                "invalid JSON: nesting deeper than {MAX_JSON_DEPTH}"
            )));
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Json, Rejection> {
        self.nest(depth)?;
        self.expect(b'{')?;
        // Members collect on the reader's stack (nested objects above them, taken off before
        // they return), so each object is one allocation of exactly its size.
        let base = self.stack.len();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(Object::from_sorted(Vec::new())));
        }
        loop {
            let start = self.at;
            let key = self.key()?;
            if let Some((last, _)) = self.stack.get(base..).and_then(<[_]>::last) {
                match utf16_cmp(last, &key) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => {
                        return Err(schema(format!("invalid JSON: duplicate key {key:?}")))
                    }
                    std::cmp::Ordering::Greater => {
                        return Err(self.spelling("keys out of UTF-16 order"))
                    }
                }
            }
            self.expect(b':')?;
            let value = self.value(depth)?;
            if depth == 1 {
                self.members.push(start..self.at);
            }
            self.stack.push((key, value));
            match self.next() {
                Some(b',') => {}
                Some(b'}') => {
                    let members = self.stack.drain(base..).collect();
                    return Ok(Json::Object(Object::from_sorted(members)));
                }
                _ => return Err(self.spelling("expected ',' or '}'")),
            }
        }
    }

    /// An object key: one of the schemas' member names (ASCII, no escapes) is borrowed
    /// from [`known`], any other is read as a string.
    fn key(&mut self) -> Result<Cow<'static, str>, Rejection> {
        if self.peek() == Some(b'"') {
            let rest = self.bytes.get(self.at + 1..).unwrap_or_default();
            if let Some(stop) = special_byte(rest).filter(|&i| rest.get(i) == Some(&b'"')) {
                let name = self.text.get(self.at + 1..self.at + 1 + stop);
                if let Some(name) = name.and_then(known) {
                    self.at += stop + 2;
                    return Ok(Cow::Borrowed(name));
                }
            }
        }
        self.string().map(Cow::Owned)
    }

    fn array(&mut self, depth: usize) -> Result<Json, Rejection> {
        self.nest(depth)?;
        self.expect(b'[')?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            match self.next() {
                Some(b',') => {}
                Some(b']') => return Ok(Json::Array(items)),
                _ => return Err(self.spelling("expected ',' or ']'")),
            }
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json, Rejection> {
        let end = self.at + word.len();
        if self.bytes.get(self.at..end) != Some(word) {
            self.at += 1;
            return Err(self.spelling("expected true, false or null"));
        }
        self.at = end;
        Ok(value)
    }

    fn number(&mut self) -> Result<Json, Rejection> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits_start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = self.bytes.get(digits_start..self.at).unwrap_or_default();
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return Err(schema(
                "invalid JSON: numbers must be integers (no fraction or exponent)",
            ));
        }
        match digits {
            [] => return Err(self.spelling("expected digits")),
            [b'0', _, ..] => return Err(self.spelling("leading zero")),
            [b'0'] if negative => return Err(self.spelling("-0")),
            _ => {}
        }
        let magnitude = digits.iter().try_fold(0i64, |n, d| {
            n.checked_mul(10)?
                .checked_add(i64::from(d - b'0'))
                .filter(|n| *n <= MAX_SAFE_INTEGER)
        });
        match magnitude {
            Some(n) => Ok(Json::Int(if negative { -n } else { n })),
            None => Err(schema("invalid JSON: integer outside ±(2^53−1)")),
        }
    }

    fn string(&mut self) -> Result<String, Rejection> {
        self.text().map(Cow::into_owned)
    }

    /// A string, with only the canonical writer's escapes: `\"` `\\` `\b` `\t` `\n` `\f`
    /// `\r`, and `\u00xx` (lowercase hex) for the other control characters. Borrowed from
    /// the input unless it has escapes.
    pub(crate) fn text(&mut self) -> Result<Cow<'a, str>, Rejection> {
        self.expect(b'"')?;
        let mut out = String::new();
        let mut run = self.at;
        loop {
            let rest = self.bytes.get(self.at..).unwrap_or_default();
            let Some(stop) = special_byte(rest) else {
                self.at = self.bytes.len();
                return Err(self.spelling("unterminated string"));
            };
            self.at += stop;
            match self.next().unwrap_or_default() {
                b'"' => break,
                b'\\' => {
                    out.push_str(self.cut(run, self.at - 1)?);
                    out.push(char::from(self.escape()?));
                    run = self.at;
                }
                _ => return Err(self.spelling("raw control character in a string")),
            }
        }
        // Quotes and backslashes are ASCII, so `run` and the closing quote lie on
        // character boundaries of `text`.
        let last = self.cut(run, self.at - 1)?;
        let text = if out.is_empty() {
            Cow::Borrowed(last)
        } else {
            out.push_str(last);
            Cow::Owned(out)
        };
        if !self.ascii {
            string_rule(&text).map_err(|why| schema(format!("invalid JSON: {why}")))?;
        }
        Ok(text)
    }

    /// `text[from..to]`; both ends follow ASCII bytes, so they are character boundaries.
    fn cut(&self, from: usize, to: usize) -> Result<&'a str, Rejection> {
        self.text
            .get(from..to)
            .ok_or_else(|| self.spelling("a string cut off inside a character"))
    }

    fn escape(&mut self) -> Result<u8, Rejection> {
        let decoded = match self.next() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'b') => 0x08,
            Some(b't') => 0x09,
            Some(b'n') => 0x0a,
            Some(b'f') => 0x0c,
            Some(b'r') => 0x0d,
            Some(b'u') => {
                let hex = self.bytes.get(self.at..self.at + 4);
                self.at += 4;
                let lower = |b: &u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
                let value = hex
                    .filter(|h| h.iter().all(lower))
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match value {
                    Some(c) if c < 0x20 && !matches!(c, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) => c,
                    _ => return Err(self.spelling("a \\u escape the canonical form does not use")),
                }
            }
            _ => return Err(self.spelling("an escape the canonical form does not use")),
        };
        Ok(decoded)
    }
}

/// The index of the first `"`, `\\` or control byte (below 0x20) of `bytes`: what ends a
/// run of ordinary string bytes. Eight bytes are tested at a time (a SWAR scan: a byte is
/// flagged when subtracting from it borrows into its top bit; borrows only start at a
/// flagged byte, so the lowest flag is exact).
pub fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOPS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & TOPS;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flags = zero_byte(w ^ (ONES * u64::from(b'"')))
            | zero_byte(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & TOPS);
        if flags != 0 {
            return Some(base + (flags.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| base + i)
}
