#![forbid(unsafe_code)]
//! `akledger`: event-sourced ledger engine.

pub mod dag;
