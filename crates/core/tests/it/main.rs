//! The core's integration tests, one binary: known-answer vectors made by independent
//! tools, every rejection with its PROFILE code, and the DAG index against a naive oracle.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod dag_oracle;
mod rejections;
mod vectors;
