//! Errors: every rejection carries its PROFILE §10 code and says who is at fault.
//!
//! [`Rejection`] is what the pure core returns for an event it will not take: the code, a
//! human message, and nothing secret (crypto failures are deliberately coarse). The engine
//! wraps it in its own error (`akledger::Error`), beside IO, corruption and misuse failures
//! of the shell. The verifiable log's outcomes (§13: `checkpoint_invalid`,
//! `checkpoint_mismatch`, `proof_invalid`) are codes here too, but they are not event
//! rejections: they travel in [`crate::tlog::TlogError`].

use std::fmt;

/// The error codes of PROFILE §10.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[non_exhaustive]
pub enum Code {
    /// The bytes or the object do not have the required shape.
    SchemaViolation,
    /// The event id is not the digest of the event's preimage.
    EventIdDigestMismatch,
    /// The id names a digest suite this engine does not accept.
    UnsupportedDigestAlgorithm,
    /// The producer proof does not verify, or its key is not authorized for the actor.
    SignatureInvalid,
    /// Some dependency is not admitted yet: the event is pending, not rejected.
    DependencyMissing,
    /// Another event with the same id but different bytes is already stored.
    DuplicateConflict,
    /// `created_at` is earlier than a causal parent's.
    CreatedAtBeforeCausalPredecessor,
    /// A second sidecar for the same (realm, controller).
    SidecarSingletonConflict,
    /// An exchange control by anyone but the controller, or with a malformed outer payload.
    SidecarExchangeControlForbidden,
    /// A critical feature (for example an unknown critical ref role) this engine lacks.
    UnsupportedFeature,
    /// Input over a size limit.
    PayloadTooLarge,
    /// The ledger's bound on pending events or bytes is reached (v1.1); nothing written.
    PendingLimitExceeded,
    /// A second, different `ak.actor.model` for an entity id (actor and version) already
    /// admitted (v1.2, §14.1).
    ActorVersionConflict,
    /// A checkpoint note does not parse, or no signature by the given key verifies (v1.2,
    /// §13). An audit outcome, not an event rejection.
    CheckpointInvalid,
    /// The log's tree does not have the checkpoint's root at the checkpoint's size (v1.2,
    /// §13): a log that is shorter, reordered or missing an event. An audit outcome.
    CheckpointMismatch,
    /// An inclusion or consistency proof is malformed or does not verify (v1.2, §13).
    ProofInvalid,
}

impl Code {
    /// Every code, in PROFILE order.
    pub const ALL: [Code; 16] = [
        Code::SchemaViolation,
        Code::EventIdDigestMismatch,
        Code::UnsupportedDigestAlgorithm,
        Code::SignatureInvalid,
        Code::DependencyMissing,
        Code::DuplicateConflict,
        Code::CreatedAtBeforeCausalPredecessor,
        Code::SidecarSingletonConflict,
        Code::SidecarExchangeControlForbidden,
        Code::UnsupportedFeature,
        Code::PayloadTooLarge,
        Code::PendingLimitExceeded,
        Code::ActorVersionConflict,
        Code::CheckpointInvalid,
        Code::CheckpointMismatch,
        Code::ProofInvalid,
    ];

    /// The wire spelling of the code.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::SchemaViolation => "schema_violation",
            Code::EventIdDigestMismatch => "event_id_digest_mismatch",
            Code::UnsupportedDigestAlgorithm => "unsupported_digest_algorithm",
            Code::SignatureInvalid => "signature_invalid",
            Code::DependencyMissing => "dependency_missing",
            Code::DuplicateConflict => "duplicate_conflict",
            Code::CreatedAtBeforeCausalPredecessor => "created_at_before_causal_predecessor",
            Code::SidecarSingletonConflict => "sidecar_singleton_conflict",
            Code::SidecarExchangeControlForbidden => "sidecar_exchange_control_forbidden",
            Code::UnsupportedFeature => "unsupported_feature",
            Code::PayloadTooLarge => "payload_too_large",
            Code::PendingLimitExceeded => "pending_limit_exceeded",
            Code::ActorVersionConflict => "actor_version_conflict",
            Code::CheckpointInvalid => "checkpoint_invalid",
            Code::CheckpointMismatch => "checkpoint_mismatch",
            Code::ProofInvalid => "proof_invalid",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Who is at fault when an event is rejected with this code (or, for the §13 codes, when
    /// an audit or a proof fails with it: the checkpoint, the log or the proof is against
    /// the protocol).
    pub const fn fault(self) -> Fault {
        match self {
            Code::SchemaViolation
            | Code::UnsupportedDigestAlgorithm
            | Code::UnsupportedFeature
            | Code::PayloadTooLarge
            | Code::PendingLimitExceeded => Fault::BadInput,
            _ => Fault::ProtocolViolation,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// Who caused a failure (the rustls split).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Fault {
    /// Malformed bytes: not canonical, wrong shape, too large, unknown suite.
    BadInput,
    /// Well-formed but against the protocol: bad proof, wrong digest, forbidden author.
    ProtocolViolation,
    /// The caller used the API wrongly (for example an unknown position or a bad argument).
    CallerMisuse,
    /// The operating system failed us (files, disks).
    Io,
    /// Stored data is damaged.
    Corruption,
}

/// An event the engine will not take, with its PROFILE code and a human message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Rejection {
    code: Code,
    message: String,
}

impl Rejection {
    /// A rejection with `code` and a message for humans.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Rejection {
            code,
            message: message.into(),
        }
    }

    /// The PROFILE §10 code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The human explanation (never secret material).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        self.code.fault()
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Rejection {}

/// Shorthand for a `schema_violation` rejection.
pub fn schema(message: impl Into<String>) -> Rejection {
    Rejection::new(Code::SchemaViolation, message)
}
