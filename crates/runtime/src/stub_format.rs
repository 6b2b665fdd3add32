//! The stub connection's record format (the AEA stub connection, `TO,SENDER,PROTOCOL_ID,
//! MESSAGE,`): finding records in the bytes of a file, decoding one, encoding one. Pure.
//!
//! Facts from the reference (`aea/helpers/file_io.py` of aea 1.2.5, and its stub
//! connection): `write_envelope` writes the fields joined by `,` and ended by `,`, with no
//! newline, under an exclusive `flock`; decoding splits on `,`: at least five parts, the last
//! empty or a newline; `to` is stripped of white space and leading NULs, `sender` and the
//! protocol id of white space; the message is everything between the third and the last
//! comma, commas included; a message holding `\x` is escape-decoded ([`super::escapes`]).
//! The reference's reader cuts what it read at the *last* comma, so records written back
//! to back (a burst) merge into one.
//!
//! Here a record ends where its message does, and the message's own framing says where:
//! - a protobuf message (what every AEA protocol sends) ends at the first field boundary
//!   followed by `,` ([`super::protobuf::frame`]): `,` can never begin a field, and bytes
//!   inside a length-delimited field are skipped by their length, so records written back
//!   to back split exactly, and no payload (newlines, commas, a whole forged record) can end
//!   a message early;
//! - a JSON object or array (the exchange bridge's messages) ends where the value does;
//! - anything else (a line typed with `echo`, literal escapes included) ends at the first
//!   `,` followed by a newline.
//!
//! White space and NULs between records are skipped; a line that is no record's header is
//! skipped and reported. Every byte is looked at a bounded number of times per call, so a
//! call is linear in its input. Records are written with a newline after the final comma,
//! which the reference's reader accepts.

use super::envelope::{Envelope, ProtocolId};
use super::escapes::{needs_unescape, unescape, EscapeError};
use super::protobuf::{frame, Frame};
use crate::limits::{MAX_ENVELOPE_HEADER_FIELD_BYTES, MAX_STUB_RECORD_BYTES};

/// The field separator.
pub const SEPARATOR: u8 = b',';

/// What [`split_records`] found in a buffer.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Split {
    /// Byte ranges of complete records, in order (each with its trailing newline, if any).
    pub records: Vec<std::ops::Range<usize>>,
    /// Bytes before this offset are done with: the records, the white space between them and
    /// anything skipped ([`Split::skipped`]). The rest is an incomplete record.
    pub consumed: usize,
    /// Ranges skipped: lines that are no record's header, or bytes in which no record ended
    /// within [`MAX_STUB_RECORD_BYTES`].
    pub skipped: Vec<std::ops::Range<usize>>,
}

/// Finds the complete records in `data` (bytes read from the current input position on).
pub fn split_records(data: &[u8]) -> Split {
    let mut split = Split::default();
    let mut start = 0;
    while let Some(&b) = data.get(start) {
        if b.is_ascii_whitespace() || b == 0 {
            start += 1;
            split.consumed = start;
            continue;
        }
        let rest = data.get(start..).unwrap_or_default();
        let found = match header(rest) {
            Header::Message(at) => message_end(rest, at),
            Header::Bad => Found::Bad,
            Header::Wait => Found::Wait,
        };
        match found {
            Found::Record(len) => {
                split.records.push(start..start + len);
                start += len;
            }
            Found::Bad => {
                // Not a record: skip the line (one range for lines skipped in a row).
                let line = memchr(b'\n', rest).map_or(rest.len(), |n| n + 1);
                match split.skipped.last_mut() {
                    Some(last) if last.end == start => last.end = start + line,
                    _ => split.skipped.push(start..start + line),
                }
                start += line;
            }
            Found::Wait if rest.len() > MAX_STUB_RECORD_BYTES => {
                split.skipped.push(start..data.len());
                start = data.len();
            }
            Found::Wait => break,
        }
        split.consumed = start;
    }
    split
}

/// What the front of some bytes holds.
enum Header {
    /// Three comma-ended fields on one line within the header bound, the third a protocol
    /// id; the message starts at this offset.
    Message(usize),
    /// No record's header.
    Bad,
    /// Too few bytes to tell.
    Wait,
}

fn header(rest: &[u8]) -> Header {
    let mut at = 0;
    for field in 0..3 {
        let window = rest.get(at..).unwrap_or_default();
        let window = window
            .get(..=MAX_ENVELOPE_HEADER_FIELD_BYTES)
            .unwrap_or(window);
        let Some(len) = window.iter().position(|&b| b == SEPARATOR || b == b'\n') else {
            return if window.len() > MAX_ENVELOPE_HEADER_FIELD_BYTES {
                Header::Bad
            } else {
                Header::Wait
            };
        };
        let value = window.get(..len).unwrap_or_default();
        if window.get(len) == Some(&b'\n') {
            return Header::Bad;
        }
        if field == 2 {
            let id = std::str::from_utf8(value)
                .ok()
                .and_then(|p| ProtocolId::parse(p.trim_matches(is_py_space)));
            if id.is_none() {
                return Header::Bad;
            }
        }
        at += len + 1;
    }
    Header::Message(at)
}

/// Where a record whose message starts at `at` of `rest` ends.
enum Found {
    /// The record is `rest[..n]`.
    Record(usize),
    /// No record.
    Bad,
    /// Not yet known.
    Wait,
}

fn message_end(rest: &[u8], at: usize) -> Found {
    let message = rest.get(at..).unwrap_or_default();
    let framed = match frame(message, SEPARATOR, aea_message_field) {
        Frame::Invalid => json_end(message),
        other => other,
    };
    let comma = match framed {
        // A message framed by its encoding ends where the next record begins (or the bytes
        // do); text that merely parses as a prefix of one is not taken for it.
        Frame::Ends(n) => match next_starts(message.get(n + 1..).unwrap_or_default()) {
            Some(true) => Some(n),
            Some(false) => line_end(message),
            None => return Found::Wait,
        },
        // Not (yet) a whole protobuf or JSON message: a line typed by hand.
        Frame::Incomplete | Frame::Invalid => line_end(message),
    };
    match comma {
        Some(n) => {
            let end = at + n + 1;
            Found::Record(end + usize::from(rest.get(end) == Some(&b'\n')))
        }
        None if message.len() > MAX_STUB_RECORD_BYTES => Found::Bad,
        None => Found::Wait,
    }
}

/// The top-level fields of an AEA 1.x message (`aea.mail.base_pb2.Message`, which every
/// protocol's serializer writes): `body` = 1 or `dialogue_message` = 2, length-delimited.
fn aea_message_field(number: u64, wire_type: u64) -> bool {
    matches!(number, 1 | 2) && wire_type == 2
}

/// Whether `after` (what follows a message's closing comma) is a record boundary: the end
/// of the bytes, or, past white space and lines without a comma (skipped as garbage), the
/// start of a record's header. `None` while too few bytes tell.
fn next_starts(after: &[u8]) -> Option<bool> {
    let mut rest = after;
    loop {
        let Some(start) = rest
            .iter()
            .position(|&b| !(b.is_ascii_whitespace() || b == 0))
        else {
            return Some(true);
        };
        rest = rest.get(start..).unwrap_or_default();
        let line = memchr(b'\n', rest);
        let text = rest.get(..line.unwrap_or(rest.len())).unwrap_or_default();
        if memchr(SEPARATOR, text).is_none() {
            // A line without a comma (garbage before the next record), or the start of one.
            rest = rest.get(line? + 1..).unwrap_or_default();
            continue;
        }
        return match header(rest) {
            Header::Message(_) => Some(true),
            Header::Wait => None,
            Header::Bad => Some(false),
        };
    }
}

/// Where a line typed by hand ends: at the first `,` that ends the bytes, or that a newline
/// and then a record's whole header follow (so a comma and a newline inside a message do not
/// end it). `None` when no comma ends it yet.
fn line_end(message: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = message
        .get(from..)
        .and_then(|m| memchr(SEPARATOR, m))
        .map(|i| from + i)
    {
        match message.get(i + 1) {
            None => return Some(i),
            // Only a whole header after the newline makes the comma an end: a line typed by
            // hand may hold a comma, a newline and more text (the reference's own tests
            // do), and a record begun after it waits until its header is whole.
            Some(b'\n') if next_starts(message.get(i + 2..).unwrap_or_default()) == Some(true) => {
                return Some(i);
            }
            Some(_) => {}
        }
        from = i + 1;
    }
    None
}

/// The end of a JSON object or array at the front of `message` (strings and escapes
/// respected) when `,` follows it.
fn json_end(message: &[u8]) -> Frame {
    if !matches!(message.first(), Some(b'{' | b'[')) {
        return Frame::Invalid;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in message.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return match message.get(i + 1) {
                        Some(&SEPARATOR) => Frame::Ends(i + 1),
                        Some(_) => Frame::Invalid,
                        None => Frame::Incomplete,
                    };
                }
            }
            _ => {}
        }
    }
    Frame::Incomplete
}

/// The byte offset of the first `needle` in `hay`.
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

/// Why a record does not decode (the reference logs these and skips the record).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Malformed {
    /// Fewer than five comma-separated parts, or something after the last comma.
    Shape,
    /// `to` or `sender` is not UTF-8, or longer than the header bound.
    Address,
    /// The protocol id is not `author/name:version`.
    ProtocolId,
    /// The message holds `\x` and does not escape-decode.
    Escape(EscapeError),
    /// Longer than [`MAX_STUB_RECORD_BYTES`].
    TooLong,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::Shape => f.write_str(
                "expected at least 5 values separated by commas, the last one empty or a newline",
            ),
            Malformed::Address => f.write_str("to or sender is not a UTF-8 address"),
            Malformed::ProtocolId => f.write_str("the protocol id is not author/name:version"),
            Malformed::Escape(e) => write!(f, "the message does not escape-decode: {e}"),
            Malformed::TooLong => write!(f, "longer than {MAX_STUB_RECORD_BYTES} bytes"),
        }
    }
}

/// Python's `str.strip()` white space: Unicode White_Space plus the separators U+001C–U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn address(field: &[u8]) -> Result<&str, Malformed> {
    if field.len() > MAX_ENVELOPE_HEADER_FIELD_BYTES {
        return Err(Malformed::Address);
    }
    std::str::from_utf8(field)
        .map(|s| s.trim_matches(is_py_space))
        .map_err(|_| Malformed::Address)
}

/// Decodes one record.
pub fn decode_record(record: &[u8]) -> Result<Envelope, Malformed> {
    if record.len() > MAX_STUB_RECORD_BYTES {
        return Err(Malformed::TooLong);
    }
    let parts: Vec<&[u8]> = record.split(|&b| b == SEPARATOR).collect();
    let (Some(&last), true) = (parts.last(), parts.len() >= 5) else {
        return Err(Malformed::Shape);
    };
    if !(last.is_empty() || last == b"\n") {
        return Err(Malformed::Shape);
    }
    let field = |i: usize| parts.get(i).copied().ok_or(Malformed::Shape);
    let to = address(field(0)?)?.trim_start_matches('\0');
    let sender = address(field(1)?)?;
    let protocol = std::str::from_utf8(field(2)?).map_err(|_| Malformed::ProtocolId)?;
    let protocol_id =
        ProtocolId::parse(protocol.trim_matches(is_py_space)).ok_or(Malformed::ProtocolId)?;
    let message_parts = parts.get(3..parts.len() - 1).ok_or(Malformed::Shape)?;
    let mut message = message_parts.join(&SEPARATOR);
    if needs_unescape(&message) {
        message = unescape(&message).map_err(Malformed::Escape)?;
    }
    Ok(Envelope::new(to, sender, protocol_id, message))
}

/// Encodes one envelope as a record: `TO,SENDER,PROTOCOL_ID,MESSAGE,` and a newline.
pub fn encode_record(envelope: &Envelope) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(envelope.to.len() + envelope.sender.len() + envelope.message.len() + 48);
    out.extend_from_slice(envelope.to.as_bytes());
    out.push(SEPARATOR);
    out.extend_from_slice(envelope.sender.as_bytes());
    out.push(SEPARATOR);
    out.extend_from_slice(envelope.protocol_id.as_str().as_bytes());
    out.push(SEPARATOR);
    out.extend_from_slice(&envelope.message);
    out.push(SEPARATOR);
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests;
