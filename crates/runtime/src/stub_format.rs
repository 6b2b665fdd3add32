//! The stub connection's record format (the AEA stub connection, `TO,SENDER,PROTOCOL_ID,
//! MESSAGE,`): finding records in the bytes of a growing file, decoding one, encoding one.
//! Pure.
//!
//! Facts from the reference (`packages/fetchai/connections/stub/connection.py`,
//! `aea/helpers/file_io.py`): a record is the fields joined by `,` and ended by `,`, with
//! an optional newline after it. Decoding splits on `,`: at least five parts, the last
//! empty or a newline; `to` is stripped of white space and leading NULs, `sender` and the
//! protocol id of white space; the message is everything between the third and the last
//! comma, commas included (protobuf bytes may hold commas and newlines); a message holding
//! `\x` is escape-decoded ([`super::escapes`]). A record that does not decode is logged
//! and skipped.
//!
//! Where this differs, and why: the reference reads whatever the file holds, takes it as
//! *one* record through its last comma, and truncates the file, so two envelopes read in
//! one go merge into one garbled envelope and a half-written line is lost. Here the file
//! is followed by offset and never truncated, and a record ends at a comma that is either
//! the end of the bytes read or followed by a newline and the start of another record
//! (`to,sender,author/name:version,`, or a beginning that can still become one), possibly
//! after lines without any comma (garbage before a header, logged and skipped). Several envelopes per read
//! and partial lines therefore work; a message that itself holds a comma, a newline and a
//! complete valid header is the one ambiguity, as it is for the reference. Records are written with a newline after the final comma (the reference
//! writes none) so that an output file of several envelopes stays readable by both.

use super::envelope::{Envelope, ProtocolId};
use super::escapes::{needs_unescape, unescape, EscapeError};
use crate::limits::{MAX_ENVELOPE_HEADER_FIELD_BYTES, MAX_STUB_RECORD_BYTES};

/// The field separator.
pub const SEPARATOR: u8 = b',';

/// What [`split_records`] found in a buffer.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Split {
    /// Byte ranges of complete records, in order (each with its trailing newline, if any).
    pub records: Vec<std::ops::Range<usize>>,
    /// Bytes before this offset are done with: the records, and any oversized garbage
    /// skipped ([`Split::skipped`]). The rest is an incomplete record.
    pub consumed: usize,
    /// Ranges skipped: lines without a comma before a record, or bytes in which no record
    /// ended within [`MAX_STUB_RECORD_BYTES`].
    pub skipped: Vec<std::ops::Range<usize>>,
}

/// Finds the complete records in `data` (bytes read from the current input position on).
pub fn split_records(data: &[u8]) -> Split {
    let mut split = Split {
        records: Vec::new(),
        consumed: 0,
        skipped: Vec::new(),
    };
    let mut start = 0;
    'records: while start < data.len() {
        // Lines without a comma before a complete header are not part of any record.
        if let Some(skip) = data.get(start..).and_then(garbage_lines) {
            let garbage = data.get(start..start + skip).unwrap_or_default();
            if garbage.iter().any(|b| !b.is_ascii_whitespace()) {
                split.skipped.push(start..start + skip);
            }
            start += skip;
            split.consumed = start;
        }
        let mut commas = 0;
        let mut i = start;
        while let Some(offset) = data.get(i..).and_then(|rest| memchr(SEPARATOR, rest)) {
            let comma = i + offset;
            commas += 1;
            i = comma + 1;
            if comma + 1 - start > MAX_STUB_RECORD_BYTES {
                break;
            }
            if commas < 4 {
                continue;
            }
            let end = match (data.get(comma + 1), data.get(comma + 2..)) {
                (None, _) => Some(comma + 1),
                (Some(b'\n'), Some(rest)) if rest.is_empty() || header_starts(rest) => {
                    Some(comma + 2)
                }
                (Some(b'\n'), Some(rest)) if garbage_lines(rest).is_some() => Some(comma + 2),
                _ => None,
            };
            if let Some(end) = end {
                split.records.push(start..end);
                start = end;
                split.consumed = end;
                continue 'records;
            }
        }
        // No record ends here: wait for more bytes, unless the record is already too long.
        if data.len() - start > MAX_STUB_RECORD_BYTES {
            split.skipped.push(start..data.len());
            split.consumed = data.len();
        }
        break;
    }
    split
}

/// When `rest` begins with lines that hold no comma and are followed by a complete header,
/// their length (newlines included).
fn garbage_lines(rest: &[u8]) -> Option<usize> {
    let first_comma = memchr(SEPARATOR, rest).unwrap_or(rest.len());
    let head = rest.get(..first_comma)?;
    let mut last = None;
    for (i, &b) in head.iter().enumerate() {
        if b == b'\n' && rest.get(i + 1..).is_some_and(header_complete) {
            last = Some(i + 1);
        }
    }
    last
}

/// True when `rest` begins with three comma-ended fields on one line (a record's header
/// in shape; its protocol id may still be invalid, which decoding then reports).
fn header_complete(rest: &[u8]) -> bool {
    let mut fields = rest.splitn(4, |&b| b == SEPARATOR);
    let one_line = |f: &[u8]| f.len() <= MAX_ENVELOPE_HEADER_FIELD_BYTES && !f.contains(&b'\n');
    matches!(
        (fields.next(), fields.next(), fields.next(), fields.next()),
        (Some(a), Some(b), Some(c), Some(_)) if one_line(a) && one_line(b) && one_line(c)
    )
}

/// The byte offset of the first `needle` in `hay`.
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

/// True when `rest` begins with `to,sender,protocol_id,`: addresses on one line and a
/// valid protocol id.
fn header_starts(rest: &[u8]) -> bool {
    let mut fields = rest.splitn(4, |&b| b == SEPARATOR);
    let (Some(to), Some(sender), Some(protocol), Some(_)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let address_ok = |f: &[u8]| f.len() <= MAX_ENVELOPE_HEADER_FIELD_BYTES && !f.contains(&b'\n');
    address_ok(to)
        && address_ok(sender)
        && std::str::from_utf8(protocol)
            .ok()
            .and_then(|p| ProtocolId::parse(p.trim_matches(is_py_space)))
            .is_some()
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
