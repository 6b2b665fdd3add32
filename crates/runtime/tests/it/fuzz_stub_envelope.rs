//! The fuzz target `stub_envelope`: arbitrary bytes as the sidecar runtime's stub input
//! file. `check` is shared with the cargo-fuzz target (`fuzz/fuzz_targets/stub_envelope.rs`),
//! and its corpus and regressions are replayed here on stable.

use akledger_runtime::escapes::needs_unescape;
use akledger_runtime::stub_format::{decode_record, encode_record, split_records};
use akledger_runtime::{DefaultMessage, DEFAULT_PROTOCOL_ID};

/// Splitting and decoding never panic; a decoded envelope written back reads back the same
/// (unless its message would be escape-decoded again); a default-protocol message that
/// decodes re-encodes to a message that decodes to the same.
pub fn check(data: &[u8]) {
    let split = split_records(data);
    assert!(split.consumed <= data.len());
    for range in split.records {
        let Ok(envelope) = decode_record(&data[range]) else {
            continue;
        };
        if !needs_unescape(&envelope.message) {
            let again = encode_record(&envelope);
            assert_eq!(
                decode_record(&again).as_ref(),
                Ok(&envelope),
                "record round trip"
            );
        }
        if envelope.protocol_id.as_str() == DEFAULT_PROTOCOL_ID {
            if let Ok(m) = DefaultMessage::decode(&envelope.message) {
                assert_eq!(
                    DefaultMessage::decode(&m.encode()).as_ref(),
                    Ok(&m),
                    "message round trip"
                );
            }
        }
    }
    let _ = DefaultMessage::decode(data);
}

#[cfg(test)]
#[test]
fn stub_envelope() {
    let n = akledger_testkit::replay_corpus("stub_envelope", check);
    assert!(n > 0, "no corpus for stub_envelope");
}
