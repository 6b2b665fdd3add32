//! The engine's integration tests, one binary with a module per subject: the ledger and
//! its derived files, pending events, pipelines, snapshots, the graph file, crash
//! consistency with real kills (`crash` and `crash_bulk` re-run this binary as the child
//! they kill, through `child_process`), published vectors through the ledger, property
//! tests against naive oracles, and the fuzz corpora replayed (`fuzz_checks`, shared with
//! the cargo-fuzz targets).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod actors;
mod adversarial;
mod append_log;
mod arkret_published;
mod child_process;
mod crash;
mod crash_bulk;
mod exchanges;
mod format_v1;
mod fuzz_checks;
mod fuzz_regressions;
mod graph_file;
mod in_memory;
mod ledger;
mod observers;
mod pending;
mod pending_order;
mod pipeline;
mod pncp_messages;
mod profile;
mod properties;
mod seed_fidelity;
mod sidecar_handle;
mod snapshot;
mod tree;
mod unit;
mod watch_events;
mod zip215;
