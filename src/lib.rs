//! akledger: an event-sourced exchange ledger engine.
#![forbid(unsafe_code)]

pub mod store;
