//! Errors: every rejection carries its PROFILE §10 code and says who is at fault.
//!
//! [`Rejection`] is what the pure core returns for an event it will not take: the code, a
//! human message, and nothing secret (crypto failures are deliberately coarse). [`Error`] is
//! the engine-wide error: a rejection, or an IO / corruption / misuse failure of the shell.

use std::fmt;
use std::path::PathBuf;

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
}

impl Code {
    /// Every code, in PROFILE order.
    pub const ALL: [Code; 12] = [
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
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Who is at fault when an event is rejected with this code.
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
pub(crate) fn schema(message: impl Into<String>) -> Rejection {
    Rejection::new(Code::SchemaViolation, message)
}

/// The engine-wide error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input event or file was rejected; carries the PROFILE code.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// The operating system failed an operation on `path`.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Stored data is damaged at `path`, byte `offset`.
    #[error("{path}: corrupt at byte {offset}: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset of the damage within the file.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The caller used the API wrongly (or asked about something that is not there). The
    /// message is a sentence for people; [`Error::fault`] carries the classification.
    #[error("{0}")]
    Misuse(String),
    /// The caller named an event that is not admitted here.
    #[error("{0} is not an admitted event")]
    NotFound(crate::id::EventId),
    /// The caller named a sidecar that no admitted `ak.sidecar.create` event made.
    #[error("{0} is not a sidecar of this ledger")]
    UnknownSidecar(crate::id::SidecarId),
    /// A sidecar action the exchange fold would not apply (PROFILE §8), refused by a
    /// checked [`SidecarHandle`](crate::ledger::SidecarHandle) before anything is written.
    #[error("{action} on exchange {exchange_id}: the exchange fold would not apply it ({reason})")]
    WouldNotFold {
        /// What was asked: `request`, `respond`, `close`, `cancel`, `fail`, `reassign`.
        action: &'static str,
        /// The exchange.
        exchange_id: crate::exchange::ExchangeId,
        /// Why the fold would list the event as not folded (PROFILE §8.6).
        reason: crate::exchange::Reason,
        /// The PROFILE §10 code when admission would refuse the event as well; `None`
        /// when the event would be admitted and simply not fold (the caller's mistake).
        code: Option<Code>,
    },
    /// Reading a log ([`crate::Ledger::append_log`]) failed in the item starting at byte
    /// `offset` of the input; batches before it stay committed.
    #[error("reading the log at byte {offset}: {source}")]
    ReadLog {
        /// Byte offset in the input of the item being read.
        offset: u64,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An earlier write failure stopped the ledger; reopen it to recover.
    #[error("ledger is poisoned by an earlier write failure; reopen it")]
    Poisoned,
    /// Another open ledger (in this process or another) holds the directory's lock.
    #[error(
        "{}: the ledger is already open for writing elsewhere (or, to write, it is being read); close the other user and retry",
        path.display()
    )]
    AlreadyOpen {
        /// The ledger directory.
        path: PathBuf,
    },
    /// The ledger was opened read-only; nothing can be appended.
    #[error("{}: the ledger was opened read-only; open it for writing to append", path.display())]
    ReadOnly {
        /// The ledger directory.
        path: PathBuf,
    },
}

impl Error {
    /// The PROFILE code, when this is a rejection.
    pub fn code(&self) -> Option<Code> {
        match self {
            Error::Rejected(r) => Some(r.code()),
            Error::WouldNotFold { code, .. } => *code,
            _ => None,
        }
    }

    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            Error::Rejected(r) => r.fault(),
            Error::Io { .. } => Fault::Io,
            Error::Corrupt { .. } => Fault::Corruption,
            Error::Misuse(_) | Error::NotFound(_) | Error::UnknownSidecar(_) => Fault::CallerMisuse,
            Error::WouldNotFold { code, .. } => code.map_or(Fault::CallerMisuse, Code::fault),
            Error::ReadLog { .. } => Fault::Io,
            Error::Poisoned => Fault::Io,
            Error::AlreadyOpen { .. } => Fault::Io,
            Error::ReadOnly { .. } => Fault::CallerMisuse,
        }
    }
}
