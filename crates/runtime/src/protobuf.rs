//! The few protobuf wire-format pieces the default protocol needs (varints and
//! length-delimited fields, proto3 rules), written by hand instead of pulling a protobuf
//! toolchain: a writer, and a field reader over untrusted bytes that never panics, never
//! over-allocates, and stops after [`MAX_PROTOBUF_FIELDS`] fields. Pure.

use crate::limits::MAX_PROTOBUF_FIELDS;

/// Why bytes are not a protobuf message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WireError {
    /// A varint longer than ten bytes or cut short.
    Varint,
    /// A length-delimited field longer than the bytes left.
    Length,
    /// Wire type 3, 4 (groups) or 6, 7, or field number 0.
    WireType,
    /// More than [`MAX_PROTOBUF_FIELDS`] fields.
    TooManyFields,
    /// A string field that is not UTF-8.
    Utf8,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WireError::Varint => "a varint is malformed",
            WireError::Length => "a length-delimited field runs past the end",
            WireError::WireType => "unsupported wire type or field number 0",
            WireError::TooManyFields => "too many fields",
            WireError::Utf8 => "a string field is not UTF-8",
        })
    }
}

/// One field's value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (skipped by the default protocol).
    Fixed64,
    /// Wire type 2.
    Bytes(&'a [u8]),
    /// Wire type 5 (skipped by the default protocol).
    Fixed32,
}

/// Reads `bytes` as a sequence of `(field number, value)`.
pub fn fields(bytes: &[u8]) -> Result<Vec<(u32, Value<'_>)>, WireError> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        if out.len() == MAX_PROTOBUF_FIELDS {
            return Err(WireError::TooManyFields);
        }
        let key = varint(&mut rest)?;
        let number = u32::try_from(key >> 3).map_err(|_| WireError::WireType)?;
        if number == 0 {
            return Err(WireError::WireType);
        }
        let value = match key & 7 {
            0 => Value::Varint(varint(&mut rest)?),
            1 => {
                rest = rest.get(8..).ok_or(WireError::Length)?;
                Value::Fixed64
            }
            2 => {
                let len = usize::try_from(varint(&mut rest)?).map_err(|_| WireError::Length)?;
                let (field, after) = rest.split_at_checked(len).ok_or(WireError::Length)?;
                rest = after;
                Value::Bytes(field)
            }
            5 => {
                rest = rest.get(4..).ok_or(WireError::Length)?;
                Value::Fixed32
            }
            _ => return Err(WireError::WireType),
        };
        out.push((number, value));
    }
    Ok(out)
}

/// Reads one varint from the front of `rest`.
fn varint(rest: &mut &[u8]) -> Result<u64, WireError> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let (&b, after) = rest.split_first().ok_or(WireError::Varint)?;
        *rest = after;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError::Varint)
}

/// A proto3 `int32` from its varint (protobuf keeps the low 32 bits).
pub fn int32(v: u64) -> i32 {
    v as u32 as i32
}

/// A proto3 `string` field's text.
pub fn string(bytes: &[u8]) -> Result<String, WireError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| WireError::Utf8)
}

/// Appends `v` as a varint: protobuf's are LEB128, written in their shortest form as the
/// engine's own index records write theirs (reading differs: protobuf accepts longer forms,
/// which `varint` above does).
pub use akledger::codec::put_varint;

/// Appends a varint field (`int32` values are sign-extended to 64 bits, as protobuf does);
/// proto3 leaves a zero out.
pub fn put_int32(out: &mut Vec<u8>, number: u32, v: i32) {
    if v != 0 {
        put_varint(out, u64::from(number) << 3);
        put_varint(out, i64::from(v) as u64);
    }
}

/// Appends a length-delimited field, even when empty (a set sub-message, a map entry's
/// member).
pub fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(number) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a proto3 `string` or `bytes` scalar field; empty ones are left out.
pub fn put_scalar_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    if !bytes.is_empty() {
        put_bytes(out, number, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_their_edges() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut rest = &out[..];
            assert_eq!(varint(&mut rest), Ok(v));
            assert!(rest.is_empty());
        }
        // 300 is AC 02 (the protobuf documentation's example).
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
    }

    #[test]
    fn negative_int32_takes_ten_bytes_and_reads_back() {
        let mut out = Vec::new();
        put_int32(&mut out, 1, -1);
        assert_eq!(out.len(), 11);
        let f = fields(&out).unwrap();
        assert_eq!(f.len(), 1);
        let (_, Value::Varint(v)) = f[0] else {
            panic!()
        };
        assert_eq!(int32(v), -1);
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert_eq!(fields(&[0x0a, 0x05, 1, 2]), Err(WireError::Length));
        assert_eq!(fields(&[0x08]), Err(WireError::Varint));
        assert_eq!(fields(&[0x08; 11]), Err(WireError::Varint));
        assert_eq!(fields(&[0x0b]), Err(WireError::WireType));
        assert_eq!(fields(&[0x02, 0x00]), Err(WireError::WireType));
        let many: Vec<u8> = std::iter::repeat_n([0x08, 0x01], MAX_PROTOBUF_FIELDS + 1)
            .flatten()
            .collect();
        assert_eq!(fields(&many), Err(WireError::TooManyFields));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = fields(&bytes);
        }
    }
}

/// Where a protobuf message that is followed by a `stop` byte ends, in bytes that may
/// hold more after it (the stub connection's records: the message, then `,`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Frame {
    /// The message is `bytes[..n]`: a field boundary with `stop` at `n`.
    Ends(usize),
    /// Every field so far is well formed, but the bytes end before a boundary followed by
    /// `stop` (more may come).
    Incomplete,
    /// Not a protobuf message.
    Invalid,
}

/// Finds the end of the protobuf message at the start of `bytes` that `stop` follows.
///
/// A field's key can never begin with a `stop` byte whose wire type is 3, 4, 6 or 7 (a
/// group, or no wire type at all), which `,` (field 5, wire type 4) is: so in a valid
/// message the first field boundary followed by `stop` is its end, and no byte inside a
/// length-delimited field, `stop`, newline or a whole forged record, can end it early.
/// Only fields whose `(number, wire type)` `accept` takes count; any other key makes the
/// bytes [`Frame::Invalid`]. Linear in the bytes walked; never reads past `bytes`.
pub fn frame(bytes: &[u8], stop: u8, accept: impl Fn(u64, u64) -> bool) -> Frame {
    debug_assert!(
        matches!(stop & 7, 3 | 4 | 6 | 7),
        "stop must not begin a valid key"
    );
    let mut at = 0;
    loop {
        match bytes.get(at) {
            None => return Frame::Incomplete,
            Some(&b) if b == stop => return Frame::Ends(at),
            Some(_) => {}
        }
        let Some(rest) = bytes.get(at..) else {
            return Frame::Incomplete;
        };
        let (key, len) = match varint_prefix(rest) {
            Prefix::Value(key, len) => (key, len),
            Prefix::Cut => return Frame::Incomplete,
            Prefix::Bad => return Frame::Invalid,
        };
        if key >> 3 == 0 || !accept(key >> 3, key & 7) {
            return Frame::Invalid;
        }
        at += len;
        let body = match key & 7 {
            0 => match bytes.get(at..).map(varint_prefix) {
                Some(Prefix::Value(_, len)) => len,
                Some(Prefix::Bad) => return Frame::Invalid,
                Some(Prefix::Cut) | None => return Frame::Incomplete,
            },
            1 => 8,
            2 => match bytes.get(at..).map(varint_prefix) {
                Some(Prefix::Value(n, len)) => match usize::try_from(n) {
                    Ok(n) if n <= MAX_FIELD_BYTES => len + n,
                    _ => return Frame::Invalid,
                },
                Some(Prefix::Bad) => return Frame::Invalid,
                Some(Prefix::Cut) | None => return Frame::Incomplete,
            },
            5 => 4,
            _ => return Frame::Invalid,
        };
        at += body;
    }
}

/// The longest length-delimited field [`frame`] believes: one stub record's bound, so a
/// length no record can hold marks the bytes as something else at once.
const MAX_FIELD_BYTES: usize = crate::limits::MAX_STUB_RECORD_BYTES;

/// A varint at the front of some bytes.
enum Prefix {
    /// Its value and length.
    Value(u64, usize),
    /// The bytes end inside it.
    Cut,
    /// Longer than ten bytes.
    Bad,
}

fn varint_prefix(bytes: &[u8]) -> Prefix {
    let mut value: u64 = 0;
    for i in 0..10 {
        let Some(&b) = bytes.get(i) else {
            return Prefix::Cut;
        };
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Prefix::Value(value, i + 1);
        }
    }
    Prefix::Bad
}
