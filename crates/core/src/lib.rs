//! # akledger-core
//!
//! The pure core of akledger: what an event is and what a set of events means, with no IO,
//! no threads, no clock and no randomness drawn (callers pass times, nonces and RNGs). The
//! engine (`akledger`) stores, indexes and replays on top of it; an auditor's program can
//! check events with this crate alone.
//!
//! The normative rules ship with the engine as `docs/PROFILE.md` (AK ledger profile v1.2);
//! every "PROFILE §n" or "§n" in these docs is section n of that file.
//!
//! - [`canonical`]: the JSON value model, strict canonical ingress and the only writer (§2);
//! - [`id`], [`did`], [`time`]: ids, actors and timestamps (§1);
//! - [`envelope`], [`proof`], [`event`]: the closed envelope, producer proofs and the
//!   `Event<Unverified>` → `Event<Verified>` typestate (§3, §4);
//! - [`encrypted`], [`keyring`]: the encrypted envelope and the keys that open it (§7, §11);
//! - [`dag`]: the causal index on dense positions (§5);
//! - [`exchange`]: the sidecar exchange fold (§8);
//! - [`tlog`]: the verifiable log: the tree over event ids, checkpoints, proofs, tiles (§13);
//! - [`limits`], [`error`]: every bound of the core, and the §10 codes;
//! - [`workload`]: deterministic generators for tests, benchmarks and demos.
//!
//! The `clock` feature (off by default) adds `Timestamp::now`, the core's only clock read.
//!
//! ```
//! use akledger_core::{ActorId, Event, EventBuilder, Keyring, ScopeRef, Timestamp, Verifier};
//!
//! let key = ed25519_dalek::SigningKey::from_bytes(&[1; 32]);
//! let me = ActorId::service_for_key(&key.verifying_key());
//! let at = Timestamp::parse("2026-11-29T12:00:00.000Z")?;
//! let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, me, at).sign(&key)?;
//!
//! // A receiver checks untrusted bytes and gets a verified event or a coded rejection.
//! let verifier = Verifier::new(Keyring::new());
//! let event = Event::from_bytes(realm.bytes(), &verifier)?;
//! assert_eq!(event.id(), realm.id());
//! let mut tampered = realm.bytes().to_vec();
//! tampered[20] ^= 1;
//! assert!(Event::from_bytes(&tampered, &verifier).is_err());
//! # Ok::<(), akledger_core::Rejection>(())
//! ```
#![deny(missing_docs)]
// The core does no IO (crates/core/clippy.toml lists what it may not call); its tests may.
#![cfg_attr(test, allow(clippy::disallowed_methods, clippy::disallowed_types))]

pub mod actors;
pub mod canonical;
#[cfg(feature = "clock")]
mod clock;
pub mod codec;
pub mod dag;
pub mod did;
pub mod encrypted;
pub mod envelope;
pub mod error;
pub mod event;
pub mod exchange;
pub mod id;
pub mod id_prefix;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
pub mod keyring;
pub mod limits;
pub mod proof;
pub mod time;
pub mod tlog;
pub mod workload;

/// The signature crate whose key types the API takes and returns.
pub use ed25519_dalek;
/// The randomness traits [`SidecarKey::generate`] and key generation take.
pub use rand_core;

pub use canonical::{Json, Object};
pub use did::{ActorId, DidCoreId};
pub use encrypted::{EncryptedEnvelope, SidecarKey};
pub use envelope::{Body, Envelope, ScopeRef, SemanticRef};
pub use error::{Code, Fault, Rejection};
pub use event::{Event, EventBuilder, Unverified, Verified};
pub use exchange::{
    fold_exchange, fold_sidecar, Causality, ExchangeId, MemoryGraph, NotFolded, Projection, Reason,
    SidecarAuthor, SidecarFold, SidecarInfo, Status,
};
pub use id::{DigestSuite, EventId, RealmId, SidecarId, StrandId};
pub use keyring::Keyring;
pub use proof::Verifier;
pub use time::Timestamp;
