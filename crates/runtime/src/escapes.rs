//! The escape decoding the AEA stub connection applies to a message that contains the two
//! bytes `\x` (so that a line typed with `echo` and literal escapes, as the AEA docs do,
//! carries the bytes it spells). Facts from the reference (`aea/helpers/file_io.py`): the
//! message is decoded with Python's `unicode_escape` codec and the resulting text is
//! encoded as UTF-8. Pure.
//!
//! So every byte that is not part of an escape stands for the code point of the same
//! value (Latin-1), and the result is UTF-8: `\x41` gives `A`, `\x80` gives the two bytes
//! `C2 80`, and a raw byte `0xE9` gives `C3 A9`. Escapes: `\\`, `\'`, `\"`, `\a`, `\b`,
//! `\f`, `\n`, `\r`, `\t`, `\v`, a backslash before a newline (dropped), one to three octal
//! digits, `\xHH`, `\uHHHH`, `\UHHHHHHHH`. Any other character after a backslash keeps
//! the backslash. Errors, where the reference raises and drops the line: a truncated
//! `\x`/`\u`/`\U`, a code point above U+10FFFF or a surrogate (not encodable as UTF-8), a
//! trailing lone backslash, and a `\N{…}` that is malformed or names no character. `\N{NAME}`
//! takes a Unicode character name or name alias, in any case, as Python's does
//! (`unicode_names2` holds the names).

/// Why an escaped message does not decode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EscapeError {
    /// `\x`, `\u` or `\U` without enough hex digits.
    Truncated,
    /// A code point that UTF-8 cannot carry (above U+10FFFF or a surrogate).
    NotEncodable,
    /// A backslash at the very end.
    TrailingBackslash,
    /// `\N` not followed by `{NAME}`.
    MalformedName,
    /// `\N{NAME}` with a name no character has.
    UnknownName,
}

impl std::fmt::Display for EscapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EscapeError::Truncated => "truncated \\x, \\u or \\U escape",
            EscapeError::NotEncodable => "escape names a code point UTF-8 cannot carry",
            EscapeError::TrailingBackslash => "\\ at end of message",
            EscapeError::MalformedName => "malformed \\N character escape",
            EscapeError::UnknownName => "unknown Unicode character name",
        })
    }
}

/// True when the reference would decode `message` (it contains `\x`).
pub fn needs_unescape(message: &[u8]) -> bool {
    message.windows(2).any(|w| w == b"\\x")
}

/// `message` decoded as Python's `unicode_escape`, then encoded as UTF-8.
pub fn unescape(message: &[u8]) -> Result<Vec<u8>, EscapeError> {
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while let Some(&b) = message.get(i) {
        i += 1;
        if b != b'\\' {
            out.push(char::from(b));
            continue;
        }
        let Some(&e) = message.get(i) else {
            return Err(EscapeError::TrailingBackslash);
        };
        i += 1;
        let simple = match e {
            b'\n' => Some(None),
            b'\\' => Some(Some('\\')),
            b'\'' => Some(Some('\'')),
            b'"' => Some(Some('"')),
            b'a' => Some(Some('\x07')),
            b'b' => Some(Some('\x08')),
            b'f' => Some(Some('\x0c')),
            b'n' => Some(Some('\n')),
            b'r' => Some(Some('\r')),
            b't' => Some(Some('\t')),
            b'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(c) = simple {
            out.extend(c);
            continue;
        }
        match e {
            b'0'..=b'7' => {
                let mut value = u32::from(e - b'0');
                for _ in 0..2 {
                    match message.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(code_point(value)?);
            }
            b'x' | b'u' | b'U' => {
                let digits = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = message.get(i..i + digits).ok_or(EscapeError::Truncated)?;
                let mut value: u32 = 0;
                for &h in hex {
                    let d = char::from(h).to_digit(16).ok_or(EscapeError::Truncated)?;
                    value = value.checked_mul(16).ok_or(EscapeError::NotEncodable)? + d;
                }
                i += digits;
                out.push(code_point(value)?);
            }
            b'N' => {
                let (c, used) = named(message.get(i..).unwrap_or_default())?;
                out.push(c);
                i += used;
            }
            other => {
                out.push('\\');
                out.push(char::from(other));
            }
        }
    }
    Ok(out.into_bytes())
}

/// `{NAME}` at the front of `rest`: the character and the bytes used.
fn named(rest: &[u8]) -> Result<(char, usize), EscapeError> {
    let inner = rest.strip_prefix(b"{").ok_or(EscapeError::MalformedName)?;
    let close = inner
        .iter()
        .take(MAX_NAME_BYTES + 1)
        .position(|&b| b == b'}')
        .ok_or(EscapeError::MalformedName)?;
    let name = inner.get(..close).unwrap_or_default();
    if name.is_empty() {
        return Err(EscapeError::MalformedName);
    }
    let name = std::str::from_utf8(name).map_err(|_| EscapeError::UnknownName)?;
    let c =
        unicode_names2::character(&name.to_ascii_uppercase()).ok_or(EscapeError::UnknownName)?;
    Ok((c, close + 2))
}

/// The longest Unicode character name (88 bytes in Unicode 16) with room to spare; a longer
/// `\N{…}` is no name, and looking for its `}` stops here.
const MAX_NAME_BYTES: usize = 256;

fn code_point(value: u32) -> Result<char, EscapeError> {
    char::from_u32(value).ok_or(EscapeError::NotEncodable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_echo_line_decodes_to_its_bytes() {
        let typed = br"\x12\x10\x08\x01\x12\x011*\t*\x07\n\x05hello";
        assert!(needs_unescape(typed));
        assert_eq!(
            unescape(typed).unwrap(),
            b"\x12\x10\x08\x01\x12\x011*\t*\x07\n\x05hello"
        );
    }

    #[test]
    fn high_bytes_and_code_points_come_out_as_utf8_as_the_reference_does() {
        // Python: codecs.decode(b"\\x80\xe9\\u20ac", "unicode-escape").encode("utf-8")
        assert_eq!(
            unescape(b"\\x80\xe9\\u20ac").unwrap(),
            b"\xc2\x80\xc3\xa9\xe2\x82\xac"
        );
    }

    #[test]
    fn octal_simple_and_unknown_escapes() {
        assert_eq!(unescape(b"\\101\\0\\7a").unwrap(), b"A\x00\x07a");
        assert_eq!(unescape(b"a\\qb\\\nc").unwrap(), b"a\\qbc");
        assert_eq!(unescape(b"\\\\x41").unwrap(), b"\\x41");
        assert_eq!(
            unescape(b"\\'\\\"\\r\\v\\f\\b").unwrap(),
            b"'\"\r\x0b\x0c\x08"
        );
    }

    #[test]
    fn named_characters_decode_as_python_decodes_them() {
        // Known answers from CPython 3.11: codecs.decode(typed, "unicode-escape").encode("utf-8")
        let cases: [(&[u8], &[u8]); 8] = [
            (b"\\N{LATIN SMALL LETTER A}", b"a"),
            (b"\\N{latin small letter a}", b"a"),
            (b"\\N{EM DASH}x", b"\xe2\x80\x94x"),
            (b"\\N{BEL}", b"\x07"),
            (b"\\N{NO-BREAK SPACE}", b"\xc2\xa0"),
            (b"\\N{HANGUL SYLLABLE GA}", b"\xea\xb0\x80"),
            (b"\\N{CJK UNIFIED IDEOGRAPH-4E00}", b"\xe4\xb8\x80"),
            (b"a\\N{SNOWMAN}b\\x41", b"a\xe2\x98\x83bA"),
        ];
        for (typed, want) in cases {
            assert_eq!(unescape(typed).as_deref(), Ok(want), "{typed:?}");
        }
    }

    #[test]
    fn malformed_escapes_are_errors_never_panics() {
        assert_eq!(unescape(b"\\x1"), Err(EscapeError::Truncated));
        assert_eq!(unescape(b"\\xzz"), Err(EscapeError::Truncated));
        assert_eq!(unescape(b"abc\\"), Err(EscapeError::TrailingBackslash));
        assert_eq!(unescape(b"\\ud800"), Err(EscapeError::NotEncodable));
        assert_eq!(unescape(b"\\UFFFFFFFF"), Err(EscapeError::NotEncodable));
        assert_eq!(unescape(b"\\N{DASH}"), Err(EscapeError::UnknownName));
        for malformed in [&b"\\N{"[..], b"\\Nx", b"\\N{LATIN SMALL LETTER A", b"\\N{}"] {
            assert_eq!(
                unescape(malformed),
                Err(EscapeError::MalformedName),
                "{malformed:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = unescape(&bytes);
        }

        #[test]
        fn escaping_every_byte_as_hex_round_trips_ascii(bytes in proptest::collection::vec(0u8..0x80, 0..64)) {
            let typed: String = bytes.iter().map(|b| format!("\\x{b:02x}")).collect();
            proptest::prop_assert_eq!(unescape(typed.as_bytes()).unwrap(), bytes);
        }
    }
}
