//! # akledger
//!
//! An embedded, append-only ledger of signed, content-addressed events, with a causal DAG
//! index and the Arkret sidecar exchange fold. See `ARCHITECTURE.md` for the code map and
//! `docs/format.md` for every byte on disk.
//!
//! The normative rules ship with the crate as `docs/PROFILE.md` (AK ledger profile v1.2);
//! every "PROFILE §n" or "§n" in these docs is section n of that file.
//! `use akledger::prelude::*;` imports what a sidecar program needs.
//!
//! This crate is the engine: the store ([`store`]), the ledger ([`ledger`]), sync over any
//! byte stream ([`sync`]) and log framing ([`log_format`]). The pure core — [`canonical`],
//! [`id`], [`did`], [`time`], [`envelope`], [`proof`], [`encrypted`], [`event`], [`dag`],
//! [`exchange`], [`tlog`] (the verifiable log's hashing, proofs and notes, PROFILE §13) — is
//! the crate `akledger_core`, re-exported here under the same paths; it
//! does no IO, reads no clock and draws no randomness.
//!
//! ```
//! use akledger::{ActorId, Event, EventBuilder, Keyring, ScopeRef, Timestamp, Verifier};
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
//! # Ok::<(), akledger::Rejection>(())
//! ```
#![deny(missing_docs)]
pub mod error;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
pub mod key_file;
pub mod layout;
pub mod ledger;
pub mod limits;
pub mod log_format;
pub mod store;
pub mod sync;
pub mod workload;

pub use akledger_core::{
    actors, canonical, codec, dag, did, encrypted, envelope, event, exchange, id, id_prefix,
    keyring, proof, time, tlog,
};

/// Everything a sidecar program needs in one import: `use akledger::prelude::*;`.
pub mod prelude {
    pub use crate::ed25519_dalek::{SigningKey, VerifyingKey};
    pub use crate::exchange::{
        create_private_sidecar, create_realm, ExchangeId, NotFolded, Projection, Reason,
        RequestContext, SidecarAuthor, SidecarFold, SidecarInfo, Status,
    };
    pub use crate::ledger::{
        EventFeed, ExchangeChange, ExchangeFeed, LogReport, SidecarHandle, WatchedEvent,
    };
    pub use crate::rand_core::OsRng;
    pub use crate::{
        ActorId, AppendReport, Appended, Config, DidCoreId, Error, Event, EventBuilder, EventId,
        Json, Keyring, Ledger, Object, RealmId, Rejection, ScopeRef, SidecarId, SidecarKey,
        StrandId, Timestamp,
    };
}

pub use akledger_core::{ed25519_dalek, rand_core};

pub use canonical::{Json, Object};
pub use did::{ActorId, DidCoreId};
pub use encrypted::{EncryptedEnvelope, SidecarKey};
pub use envelope::{Body, Envelope, ScopeRef, SemanticRef};
pub use error::{Code, Error, Fault, Rejection};
pub use event::{Event, EventBuilder, Unverified, Verified};
pub use exchange::{
    fold_exchange, fold_sidecar, Causality, ExchangeId, MemoryGraph, NotFolded, Projection, Reason,
    SidecarAuthor, SidecarFold, SidecarInfo, Status,
};
pub use id::{DigestSuite, EventId, RealmId, SidecarId, StrandId};
pub use keyring::Keyring;
pub use ledger::{
    AppendReport, Appended, BulkAppend, CheckReport, Config, Durability, GraphView, Ledger,
    OpenReport, PendingCause,
};
pub use proof::Verifier;
pub use time::Timestamp;
