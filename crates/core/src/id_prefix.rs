//! Abbreviated ids (pure): a unique prefix of an id's text stands for the id, as git
//! resolves an abbreviated object name. `ak:event:AvW3IN7c`, `AvW3IN7c` and the labels the
//! HTML report and DOT graph print (`AvW3IN7cfBmr…`) all abbreviate the ids whose text
//! starts `ak:event:AvW3IN7c`. Matching is on the bits the characters spell, so it needs
//! the 33 bytes of each candidate, never its text.

use crate::error::{schema, Rejection};
use crate::id::IdKind;
use crate::limits::MIN_ID_PREFIX_CHARS;

/// Characters in the base64url of an id's 33 bytes.
const FULL_CHARS: usize = 44;

/// The leading bits of an id, read from an abbreviation of its text.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IdPrefix {
    /// The text as given, for messages.
    text: String,
    /// The bits, packed from the most significant end; the last byte's low bits are 0.
    bytes: Vec<u8>,
    /// How many bits of `bytes` count.
    bits: usize,
}

impl IdPrefix {
    /// Reads `text` as an abbreviation of an id of kind `K`: its `K::PREFIX` tag (optional)
    /// and at least [`MIN_ID_PREFIX_CHARS`] characters of base64url, shorter than a whole
    /// id; a trailing `…` is ignored.
    pub fn parse<K: IdKind>(text: &str) -> Result<IdPrefix, Rejection> {
        let given = text.trim_end_matches('…');
        let chars = given.strip_prefix(K::PREFIX).unwrap_or(given);
        let not = |why: &str| {
            schema(format!(
                "{text:?} is not an id ({}…) nor an abbreviation of one: {why}",
                K::PREFIX
            ))
        };
        if chars.contains(':') {
            return Err(not("it names another kind"));
        }
        if chars.len() < MIN_ID_PREFIX_CHARS {
            return Err(not(&format!(
                "an abbreviation gives at least {MIN_ID_PREFIX_CHARS} characters after the tag"
            )));
        }
        if chars.len() >= FULL_CHARS {
            return Err(not("it is as long as an id, and not a valid one"));
        }
        let mut bytes = Vec::with_capacity(chars.len() * 6 / 8 + 1);
        let (mut acc, mut held) = (0u32, 0usize);
        for c in chars.bytes() {
            let v = sextet(c).ok_or_else(|| not(&format!("{:?} is not base64url", c as char)))?;
            acc = (acc << 6) | u32::from(v);
            held += 6;
            if held >= 8 {
                held -= 8;
                bytes.push((acc >> held) as u8);
                acc &= (1 << held) - 1;
            }
        }
        if held > 0 {
            bytes.push((acc << (8 - held)) as u8);
        }
        Ok(IdPrefix {
            text: text.to_string(),
            bytes,
            bits: chars.len() * 6,
        })
    }

    /// Whether the id whose 33 bytes are `raw` starts with these bits.
    pub fn matches(&self, raw: &[u8; 33]) -> bool {
        let whole = self.bits / 8;
        let (Some(head), Some(prefix)) = (raw.get(..whole), self.bytes.get(..whole)) else {
            return false;
        };
        if head != prefix {
            return false;
        }
        let rest = self.bits % 8;
        if rest == 0 {
            return true;
        }
        let mask = 0xffu8 << (8 - rest);
        match (raw.get(whole), self.bytes.get(whole)) {
            (Some(a), Some(b)) => a & mask == b & mask,
            _ => false,
        }
    }

    /// The abbreviation as given.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The value of a base64url character.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}
