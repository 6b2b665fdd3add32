//! The core's integration tests, one binary: known-answer vectors made by independent
//! tools, every rejection with its PROFILE code, the DAG index against a naive oracle, and
//! the verifiable log (§13) against published vectors, a naive RFC 9162 and its fuzz corpora.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// The core does no IO; its tests may (crates/core/clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod actors;
mod codes;
mod dag_oracle;
mod fuzz_actors;
mod fuzz_tlog;
mod id_prefix;
mod rejections;
mod tlog_oracle;
mod tlog_vectors;
mod unit;
mod vectors;
