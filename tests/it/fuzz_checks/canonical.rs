//! `canonical`: arbitrary bytes through the canonical JSON parser.

use akledger::canonical::{parse_canonical, parse_value, to_canonical};

/// Accepted input re-serializes to itself; `parse_value` never panics, and whatever it
/// accepts re-serializes to canonical bytes that parse back to the same value.
pub fn check(data: &[u8]) {
    if let Ok(v) = parse_canonical(data) {
        assert_eq!(to_canonical(&v), data, "accepted non-canonical bytes");
    }
    if let Ok(v) = parse_value(data) {
        let canon = to_canonical(&v);
        let back = parse_canonical(&canon).expect("canonical form of a parsed value must parse");
        assert_eq!(back, v, "canonical form does not round-trip");
    }
}
