//! Canonical JSON (PROFILE §2): the one byte form that identity, signatures and AAD are
//! computed over.
//!
//! [`Json`] is the value model: integers only, objects with unique keys kept in UTF-16
//! code-unit order. [`parse_canonical`] is the strict ingress check: one pass that parses and
//! checks the canonical spelling as it goes (`strict.rs`), never re-serializing; it accepts
//! exactly the bytes `to_canonical(parse_value(b)) == b` accepts. [`to_canonical`] is the
//! only writer. All are pure.
//!
//! [`parse_value`] (files that are not hashed: keyrings, plaintexts) uses `serde_json` for
//! the grammar and adds the value rules on top: duplicate keys, floats, out-of-range
//! integers, depth, NFC and byte-order marks are rejected while the value is built.

pub(crate) mod keys;
mod parse;
mod serde_bridge;
pub(crate) mod strict;
pub(crate) mod value;
mod write;

pub(crate) use parse::check_size;
pub use parse::{parse_canonical, parse_value};
pub(crate) use strict::Reader;
pub use strict::{parse_strict, Canonical};
pub use value::{Json, Object};
pub use write::{to_canonical, write_canonical, write_string};
