//! The core's integration tests, one binary: known-answer vectors made by independent
//! tools, every rejection with its PROFILE code, and the DAG index against a naive oracle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
// The core does no IO; its tests may (crates/core/clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod dag_oracle;
mod rejections;
mod vectors;
