//! The CLI's tests, one binary: the real `akledger` binary on real files, with a module per
//! command family, plus the processes it runs for others (`serve` and `sync` peers,
//! `replicate --follow` against a `nats-server` of the test's own, `sidecar run`), killed
//! and restarted where a test is about crashes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod aea;
mod aea_network;
mod bounded_input;
mod cli;
mod cli_actors;
mod cli_audit;
mod cli_tlog;
mod cli_views;
mod crash;
mod graph_file;
mod io;
mod json_contract;
mod keyrings;
mod mounts;
mod reliability;
#[cfg(feature = "nats")]
mod replicate;
mod sidecar_runtime;
mod support;
mod sync;
