//! White-box tests of the core's modules, moved out of the library so that `cargo test`
//! compiles the core once (a library's own `#[cfg(test)]` modules build it a second time).
mod canonical;
mod canonical_keys;
mod canonical_serde_bridge;
mod canonical_strict;
#[cfg(feature = "clock")]
mod clock;
mod codec;
mod dag_heads;
mod dag_running;
mod dag_snapshot;
mod did;
mod envelope_direct;
mod exchange;
mod exchange_preview;
mod id;
mod keyring;
mod proof;
mod sign_many;
mod time;
mod tlog;
