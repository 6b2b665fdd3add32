//! Base85 in the RFC 1924 alphabet, as Python's `base64.b85encode` writes it (what the AEA
//! error skill quotes an offending envelope in). Its alphabet holds no backslash and no
//! comma, so quoted bytes can never turn into an escape the AEA reader decodes, nor end a
//! stub record. Pure.

/// RFC 1924's 85 characters.
const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// `bytes` in base85: each 4-byte group (big-endian, the last padded with zeros) as five
/// characters, the last group's output cut by as many characters as it was padded.
pub fn encode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut group = [0u8; 4];
        for (slot, &b) in group.iter_mut().zip(chunk) {
            *slot = b;
        }
        let mut value = u32::from_be_bytes(group);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET.get((value % 85) as usize).copied().unwrap_or(b'0');
            value /= 85;
        }
        out.extend_from_slice(digits.get(..chunk.len() + 1).unwrap_or(&digits));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_python_does() {
        // Known answers from CPython 3.11's base64.b85encode.
        let cases: [(&[u8], &[u8]); 10] = [
            (b"", b""),
            (b"\x00", b"00"),
            (b"a", b"VE"),
            (b"ab", b"VPX"),
            (b"abc", b"VPaz"),
            (b"abcd", b"VPa!s"),
            (b"abcde", b"VPa!sWd"),
            (b"\xff\xff\xff\xff", b"|NsC0"),
            (b"hello, world\n", b"Xk~0{Z!92pZ*pv83I"),
            (
                b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13",
                b"009C61O)~M2nh-c3=Iws5D^j+",
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(encode(bytes), want, "{bytes:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_a_backslash_or_a_comma(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let text = encode(&bytes);
            proptest::prop_assert!(!text.contains(&b'\\') && !text.contains(&b','));
            proptest::prop_assert_eq!(text.len(), bytes.len() + bytes.len().div_ceil(4));
        }
    }
}
