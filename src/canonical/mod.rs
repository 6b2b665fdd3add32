//! Canonical JSON (PROFILE §2): the one byte form that identity, signatures and AAD are
//! computed over.
//!
//! [`Json`] is the value model: integers only, objects with unique keys kept in UTF-16
//! code-unit order. [`parse_canonical`] is the strict ingress check (parse, re-serialize,
//! require the same bytes); [`to_canonical`] is the only writer. Both are pure.
//!
//! Parsing uses `serde_json` for the grammar; this module adds what canonical JSON needs on
//! top: duplicate keys, floats, out-of-range integers, depth, NFC and byte-order marks are
//! rejected while the value is built, and the byte comparison catches whitespace, key order
//! and escape spellings.

mod parse;
mod value;
mod write;

pub use parse::{parse_canonical, parse_value};
pub use value::{Json, Object};
pub use write::{to_canonical, write_canonical};

#[cfg(test)]
mod tests;
