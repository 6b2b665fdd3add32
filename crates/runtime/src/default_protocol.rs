//! The AEA default protocol, `fetchai/default:1.0.0` (seed 002): `bytes`, `error` and
//! `end` performatives, protobuf-encoded as AEA does, and the consistency rule that makes
//! a decoded message valid. Pure.
//!
//! Facts from the reference (`packages/fetchai/protocols/default/default.proto`,
//! `serialization.py`, and AEA's `DialogueMessage` / `Message` wrapping): the published
//! bytes are a `Message` whose field 2 (`dialogue_message`) is a `DialogueMessage`
//! {`message_id` = 1 (int32), `dialogue_starter_reference` = 2, `dialogue_responder_reference`
//! = 3 (strings), `target` = 4 (int32), `content` = 5 (bytes)}, and `content` is a
//! `DefaultMessage` whose `performative` oneof is `bytes` = 5 {`content` = 1},
//! `end` = 6 {}, `error` = 7 {`error_code` = 1 (`ErrorCode` {`error_code` = 1, enum}),
//! `error_msg` = 2, `error_data` = 3 (map<string, bytes>)}. Error codes:
//! UNSUPPORTED_PROTOCOL 0, DECODING_ERROR 1, INVALID_MESSAGE 2, UNSUPPORTED_SKILL 3,
//! INVALID_DIALOGUE 4. Encoding follows proto3: zero scalars and empty strings are left
//! out, a set sub-message is written even when empty; map entries are written in key
//! order (protobuf leaves the order open).

use std::collections::BTreeMap;

use super::protobuf::{
    fields, int32, put_bytes, put_int32, put_scalar_bytes, string, Value, WireError,
};

/// The protocol id.
pub const DEFAULT_PROTOCOL_ID: &str = "fetchai/default:1.0.0";

/// The default protocol's error codes (AEA's `ErrorCode`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ErrorCode {
    /// No codec for the envelope's protocol.
    UnsupportedProtocol = 0,
    /// The message does not decode under its protocol.
    DecodingError = 1,
    /// The message decodes but is not a valid message of its protocol.
    InvalidMessage = 2,
    /// No handler (skill) for the protocol.
    UnsupportedSkill = 3,
    /// The message does not fit its dialogue.
    InvalidDialogue = 4,
}

impl ErrorCode {
    /// The code for its wire value.
    pub fn from_value(v: i32) -> Option<ErrorCode> {
        Some(match v {
            0 => ErrorCode::UnsupportedProtocol,
            1 => ErrorCode::DecodingError,
            2 => ErrorCode::InvalidMessage,
            3 => ErrorCode::UnsupportedSkill,
            4 => ErrorCode::InvalidDialogue,
            _ => return None,
        })
    }

    /// The AEA name (`UNSUPPORTED_PROTOCOL`, …).
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::UnsupportedProtocol => "UNSUPPORTED_PROTOCOL",
            ErrorCode::DecodingError => "DECODING_ERROR",
            ErrorCode::InvalidMessage => "INVALID_MESSAGE",
            ErrorCode::UnsupportedSkill => "UNSUPPORTED_SKILL",
            ErrorCode::InvalidDialogue => "INVALID_DIALOGUE",
        }
    }
}

/// What a default-protocol message says.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Performative {
    /// `bytes`: opaque content.
    Bytes(Vec<u8>),
    /// `error`: a code, a text and data.
    Error {
        /// The code.
        code: ErrorCode,
        /// A human text.
        message: String,
        /// Named data (for example the offending envelope's bytes).
        data: BTreeMap<String, Vec<u8>>,
    },
    /// `end`: the dialogue is over.
    End,
}

/// A default-protocol message with its dialogue fields.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DefaultMessage {
    /// Position in the dialogue, from 1.
    pub message_id: i32,
    /// (starter reference, responder reference).
    pub dialogue_reference: (String, String),
    /// The message this one answers (0 for the first).
    pub target: i32,
    /// The performative and its content.
    pub performative: Performative,
}

/// Why bytes are not a default-protocol message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DecodeError {
    /// Not protobuf.
    Wire(WireError),
    /// No `dialogue_message`, or no performative set.
    NoPerformative,
    /// An error code outside the enum.
    UnknownErrorCode(i32),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Wire(e) => write!(f, "not a protobuf message: {e}"),
            DecodeError::NoPerformative => f.write_str("no performative set"),
            DecodeError::UnknownErrorCode(c) => write!(f, "unknown error code {c}"),
        }
    }
}

impl From<WireError> for DecodeError {
    fn from(e: WireError) -> Self {
        DecodeError::Wire(e)
    }
}

impl DefaultMessage {
    /// A `bytes` message opening a dialogue (message 1, target 0).
    pub fn bytes(starter_reference: &str, content: Vec<u8>) -> DefaultMessage {
        DefaultMessage {
            message_id: 1,
            dialogue_reference: (starter_reference.to_string(), String::new()),
            target: 0,
            performative: Performative::Bytes(content),
        }
    }

    /// An `error` message opening a dialogue (message 1, target 0).
    pub fn error(
        starter_reference: &str,
        code: ErrorCode,
        message: &str,
        data: BTreeMap<String, Vec<u8>>,
    ) -> DefaultMessage {
        DefaultMessage {
            message_id: 1,
            dialogue_reference: (starter_reference.to_string(), String::new()),
            target: 0,
            performative: Performative::Error {
                code,
                message: message.to_string(),
                data,
            },
        }
    }

    /// The wire bytes (the envelope's message).
    pub fn encode(&self) -> Vec<u8> {
        let mut performative = Vec::new();
        match &self.performative {
            Performative::Bytes(content) => {
                let mut inner = Vec::new();
                put_scalar_bytes(&mut inner, 1, content);
                put_bytes(&mut performative, 5, &inner);
            }
            Performative::End => put_bytes(&mut performative, 6, &[]),
            Performative::Error {
                code,
                message,
                data,
            } => {
                let mut code_msg = Vec::new();
                put_int32(&mut code_msg, 1, *code as i32);
                let mut inner = Vec::new();
                put_bytes(&mut inner, 1, &code_msg);
                put_scalar_bytes(&mut inner, 2, message.as_bytes());
                for (key, value) in data {
                    let mut entry = Vec::new();
                    put_bytes(&mut entry, 1, key.as_bytes());
                    put_bytes(&mut entry, 2, value);
                    put_bytes(&mut inner, 3, &entry);
                }
                put_bytes(&mut performative, 7, &inner);
            }
        }
        let mut dialogue = Vec::new();
        put_int32(&mut dialogue, 1, self.message_id);
        put_scalar_bytes(&mut dialogue, 2, self.dialogue_reference.0.as_bytes());
        put_scalar_bytes(&mut dialogue, 3, self.dialogue_reference.1.as_bytes());
        put_int32(&mut dialogue, 4, self.target);
        put_scalar_bytes(&mut dialogue, 5, &performative);
        let mut message = Vec::new();
        put_bytes(&mut message, 2, &dialogue);
        message
    }

    /// Reads wire bytes. Unknown fields are skipped and a repeated sub-message is merged,
    /// as protobuf parsers do.
    pub fn decode(bytes: &[u8]) -> Result<DefaultMessage, DecodeError> {
        let (_, dialogue) = merged(bytes, |n| n == 2)?.ok_or(DecodeError::NoPerformative)?;
        let mut message_id = 0;
        let mut target = 0;
        let mut starter = String::new();
        let mut responder = String::new();
        let mut content = Vec::new();
        for (number, value) in fields(&dialogue)? {
            match (number, value) {
                (1, Value::Varint(v)) => message_id = int32(v),
                (2, Value::Bytes(b)) => starter = string(b)?,
                (3, Value::Bytes(b)) => responder = string(b)?,
                (4, Value::Varint(v)) => target = int32(v),
                (5, Value::Bytes(b)) => content = b.to_vec(),
                _ => {}
            }
        }
        let performative = performative(&content)?;
        Ok(DefaultMessage {
            message_id,
            dialogue_reference: (starter, responder),
            target,
            performative,
        })
    }

    /// AEA's consistency rule for a decoded message (the generated message's "light
    /// protocol rule 3"): the first message of a dialogue targets nothing. Everything else
    /// about ids, targets and references is the dialogue's to judge ([`crate::dialogue`]).
    /// `Err` says what is wrong (an `INVALID_MESSAGE`).
    pub fn check(&self) -> Result<(), String> {
        if self.message_id == 1 && self.target != 0 {
            return Err(format!(
                "the first message has target {}, not 0",
                self.target
            ));
        }
        Ok(())
    }
}

/// The sub-message in the last-set member of a oneof whose members `member` picks: its
/// bytes, with repeated occurrences of the same member concatenated (protobuf merges them).
fn merged(
    bytes: &[u8],
    member: impl Fn(u32) -> bool,
) -> Result<Option<(u32, Vec<u8>)>, DecodeError> {
    let mut current: Option<(u32, Vec<u8>)> = None;
    for (number, value) in fields(bytes)? {
        if let (true, Value::Bytes(b)) = (member(number), value) {
            match &mut current {
                Some((n, acc)) if *n == number => acc.extend_from_slice(b),
                _ => current = Some((number, b.to_vec())),
            }
        }
    }
    Ok(current)
}

/// The `DefaultMessage` oneof.
fn performative(content: &[u8]) -> Result<Performative, DecodeError> {
    let Some((number, inner)) = merged(content, |n| (5..=7).contains(&n))? else {
        return Err(DecodeError::NoPerformative);
    };
    let inner = &inner[..];
    Ok(match number {
        5 => {
            let mut out = Vec::new();
            for (n, v) in fields(inner)? {
                if let (1, Value::Bytes(b)) = (n, v) {
                    out = b.to_vec();
                }
            }
            Performative::Bytes(out)
        }
        6 => Performative::End,
        _ => {
            let mut code = 0;
            let mut message = String::new();
            let mut data = BTreeMap::new();
            for (n, v) in fields(inner)? {
                match (n, v) {
                    (1, Value::Bytes(b)) => {
                        for (m, w) in fields(b)? {
                            if let (1, Value::Varint(c)) = (m, w) {
                                code = int32(c);
                            }
                        }
                    }
                    (2, Value::Bytes(b)) => message = string(b)?,
                    (3, Value::Bytes(b)) => {
                        let (mut key, mut value) = (String::new(), Vec::new());
                        for (m, w) in fields(b)? {
                            match (m, w) {
                                (1, Value::Bytes(k)) => key = string(k)?,
                                (2, Value::Bytes(x)) => value = x.to_vec(),
                                _ => {}
                            }
                        }
                        data.insert(key, value);
                    }
                    _ => {}
                }
            }
            Performative::Error {
                code: ErrorCode::from_value(code).ok_or(DecodeError::UnknownErrorCode(code))?,
                message,
                data,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of the AEA docs' echo demo, as bytes.
    const PUBLISHED: &[u8] = b"\x12\x10\x08\x01\x12\x011*\t*\x07\n\x05hello";

    #[test]
    fn the_published_bytes_decode_to_the_documented_message() {
        let m = DefaultMessage::decode(PUBLISHED).unwrap();
        assert_eq!(m.message_id, 1);
        assert_eq!(m.dialogue_reference, ("1".to_string(), String::new()));
        assert_eq!(m.target, 0);
        assert_eq!(m.performative, Performative::Bytes(b"hello".to_vec()));
        assert_eq!(m.check(), Ok(()));
    }

    #[test]
    fn encoding_the_documented_message_gives_the_published_bytes() {
        assert_eq!(
            DefaultMessage::bytes("1", b"hello".to_vec()).encode(),
            PUBLISHED
        );
    }

    #[test]
    fn error_and_end_known_answers() {
        // Known answers from Python's protobuf runtime (google.protobuf 7.36) with
        // descriptors built from the reference .proto files; the same script reproduces
        // the published bytes above.
        let error = DefaultMessage::error(
            "1",
            ErrorCode::UnsupportedSkill,
            "x",
            BTreeMap::from([("k".to_string(), b"v".to_vec())]),
        );
        let expected: &[u8] = b"\x12\x18\x08\x01\x12\x011\x2a\x11\x3a\x0f\x0a\x02\x08\x03\x12\x01x\x1a\x06\x0a\x01k\x12\x01v";
        assert_eq!(error.encode(), expected);
        assert_eq!(DefaultMessage::decode(expected).unwrap(), error);
        // Code 0 still writes the (empty) ErrorCode sub-message.
        let zero = DefaultMessage::error("1", ErrorCode::UnsupportedProtocol, "", BTreeMap::new());
        assert_eq!(
            zero.encode(),
            b"\x12\x0b\x08\x01\x12\x011\x2a\x04\x3a\x02\x0a\x00"
        );
        assert_eq!(DefaultMessage::decode(&zero.encode()).unwrap(), zero);
        let end = DefaultMessage {
            message_id: 2,
            dialogue_reference: ("1".into(), "2".into()),
            target: 1,
            performative: Performative::End,
        };
        assert_eq!(
            end.encode(),
            b"\x12\x0e\x08\x02\x12\x011\x1a\x012\x20\x01\x2a\x02\x32\x00"
        );
        assert_eq!(DefaultMessage::decode(&end.encode()).unwrap(), end);
    }

    #[test]
    fn not_a_default_message_is_a_decoding_error() {
        assert_eq!(
            DefaultMessage::decode(b""),
            Err(DecodeError::NoPerformative)
        );
        assert_eq!(
            DefaultMessage::decode(b"hello"),
            Err(DecodeError::Wire(WireError::WireType))
        );
        // A dialogue message without a performative.
        assert_eq!(
            DefaultMessage::decode(b"\x12\x02\x08\x01"),
            Err(DecodeError::NoPerformative)
        );
        // Error code 9 is not in the enum.
        assert_eq!(
            DefaultMessage::decode(b"\x12\x08\x2a\x06\x3a\x04\x0a\x02\x08\x09"),
            Err(DecodeError::UnknownErrorCode(9))
        );
    }

    #[test]
    fn only_a_first_message_with_a_target_is_inconsistent() {
        let mut m = DefaultMessage::bytes("1", b"x".to_vec());
        m.target = 3;
        assert!(m.check().is_err());
        // A responder's messages count down (AEA 1.x), and a later message's target and
        // references are its dialogue's to judge.
        for (message_id, target) in [(-1, 1), (2, -1), (-2, 2), (0, 0), (7, 3)] {
            let mut later = DefaultMessage::bytes("", b"x".to_vec());
            later.message_id = message_id;
            later.target = target;
            assert_eq!(later.check(), Ok(()), "{message_id} {target}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = DefaultMessage::decode(&bytes);
        }

        #[test]
        fn encode_decode_round_trips(
            id in 1i32..1000, target in 0i32..1000, starter in "[a-z0-9]{1,8}", responder in "[a-z0-9]{0,8}",
            content in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        ) {
            let m = DefaultMessage {
                message_id: id,
                dialogue_reference: (starter, responder),
                target,
                performative: Performative::Bytes(content),
            };
            proptest::prop_assert_eq!(DefaultMessage::decode(&m.encode()).unwrap(), m);
        }
    }
}
