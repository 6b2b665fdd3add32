//! Persistent storage of the ledger: one of only two places in the crate that do IO.
//!
//! The store owns two things and nothing else:
//!
//! * [`log`]: the append-only, checksummed segment log. It is the source of truth: every
//!   accepted event's canonical bytes are kept there for ever.
//! * [`tables`]: typed sled trees holding indexes derived from the log. They are rebuildable
//!   from the log at any time; a high-water mark in the `meta` table tells how far they go.
//! * [`root`]: the ledger root's lock file and its acknowledged-up-to marker.
//! * [`atomic`]: small files (keyring, replication marker) replaced atomically.
//! * `page_cache`: advice to the kernel on the cached pages of files written in bulk.
//!
//! All are deliberately ignorant of what an event is: they store opaque bytes and positions.

pub mod atomic;
pub mod log;
pub(crate) mod page_cache;
pub mod root;
pub mod tables;
