//! The canonical writer: the only code that turns a [`Json`] into bytes.

use super::value::Json;

/// Canonical bytes of `value`.
pub fn to_canonical(value: &Json) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    out
}

/// Appends the canonical bytes of `value` to `out`.
pub fn write_canonical(value: &Json, out: &mut Vec<u8>) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Json::Str(s) => write_string(s, out),
        Json::Array(items) => {
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Json::Object(obj) => {
            out.push(b'{');
            for (n, (k, v)) in obj.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
    }
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Appends `s` as a canonical JSON string, with the escapes of PROFILE §2: the six short
/// escapes, other control characters as lowercase `\u00xx`, everything else raw UTF-8.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = s.as_bytes();
    // Fast path: copy whole 32-byte blocks that need no escape (a branch-free test the
    // compiler vectorizes); the byte loop below handles the rest.
    let clean = bytes
        .chunks_exact(32)
        .take_while(|block| !block.iter().fold(false, |any, &b| any | needs_escape(b)))
        .count()
        * 32;
    out.extend_from_slice(bytes.get(..clean).unwrap_or_default());
    let mut start = clean;
    for (i, &b) in bytes.iter().enumerate().skip(clean) {
        let short = match b {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            0x08 => Some(b'b'),
            0x09 => Some(b't'),
            0x0a => Some(b'n'),
            0x0c => Some(b'f'),
            0x0d => Some(b'r'),
            _ => None,
        };
        if short.is_none() && b >= 0x20 {
            continue;
        }
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        start = i + 1;
        match short {
            Some(c) => out.extend_from_slice(&[b'\\', c]),
            None => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
        }
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}
