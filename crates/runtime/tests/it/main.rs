//! The sidecar runtime's integration tests, one binary: the stub connection on real files,
//! the refusal of an in-memory ledger, what the exchange bridge reads of a skill, and the `stub_envelope` fuzz corpus replayed.
//! (The runtime as a process, `akledger sidecar run`, is tested by the CLI's tests.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod bridge;
mod builtin_skills;
mod connections;
mod fuzz_stub_envelope;
mod in_memory;
mod sidecar_stub;
mod skills;
mod support;
