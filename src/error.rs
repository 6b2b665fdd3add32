//! The engine's error: a rejection of the core (with its PROFILE §10 code), or an IO,
//! corruption or misuse failure of the shell, each saying who is at fault.

use std::path::PathBuf;

pub use akledger_core::error::{Code, Fault, Rejection};

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
    /// A root or proof asked of the ledger tree that it cannot give (an event not
    /// admitted, or admitted at or after the size asked, a size past the tree, an old size
    /// above the new one): code `proof_invalid`, the caller's mistake (PROFILE §13).
    #[error("proof_invalid: {0}")]
    NoProof(String),
    /// A checkpoint, note or proof that fails (PROFILE §13), with its code.
    #[error(transparent)]
    Tlog(akledger_core::tlog::TlogError),
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
            Error::NoProof(_) => Some(Code::ProofInvalid),
            Error::Tlog(e) => Some(e.code()),
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
            Error::NoProof(_) => Fault::CallerMisuse,
            Error::Tlog(e) => e.fault(),
        }
    }
}
