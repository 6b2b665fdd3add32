//! The verifiable log's errors: [`TlogError`], an audit or proof outcome with its §13 code
//! (`checkpoint_invalid`, `checkpoint_mismatch`, `proof_invalid`), and [`TreeError`], what
//! computing over stored hashes can meet (a caller's impossible request, or its reader's
//! failure).
//!
//! Neither is an event rejection (PROFILE §10): no event is refused for them. Messages are
//! plain words and never carry key material; a signature that does not verify says only
//! whose it was.

use std::fmt;

use crate::error::{Code, Fault};

/// A checkpoint, note or proof that fails, with its PROFILE §13 code and a message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TlogError {
    code: Code,
    message: String,
}

impl TlogError {
    /// An error with `code` (one of the §13 codes) and a message for humans.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        TlogError {
            code,
            message: message.into(),
        }
    }

    /// The PROFILE §10 code: `checkpoint_invalid`, `checkpoint_mismatch` or `proof_invalid`.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The human explanation.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        self.code.fault()
    }
}

impl fmt::Display for TlogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for TlogError {}

/// A `checkpoint_invalid` error: a note, checkpoint, key or signature that does not hold.
pub(crate) fn invalid_checkpoint(message: impl Into<String>) -> TlogError {
    TlogError::new(Code::CheckpointInvalid, message)
}

/// A `proof_invalid` error: a proof that is malformed or does not verify.
pub(crate) fn invalid_proof(message: impl Into<String>) -> TlogError {
    TlogError::new(Code::ProofInvalid, message)
}

/// Why a computation over stored hashes (roots, proofs, tiles, appends) failed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TreeError<E> {
    /// The request names no such leaf, tree, proof or tile (an index not below the size, an
    /// old size above the new one, a size over [`crate::limits::MAX_TREE_SIZE`]): the
    /// caller's mistake, found before anything is read.
    Misuse(String),
    /// The hash reader failed.
    Read(E),
    /// The hash reader answered with another number of hashes than it was asked for.
    WrongCount {
        /// Hashes asked for.
        asked: usize,
        /// Hashes returned.
        got: usize,
    },
}

impl<E> TreeError<E> {
    /// Who is at fault: the caller for [`TreeError::Misuse`]; for a reader's failure, the IO
    /// behind it (a reader that knows better maps its own error); for a short answer, the
    /// stored data.
    pub fn fault(&self) -> Fault {
        match self {
            TreeError::Misuse(_) => Fault::CallerMisuse,
            TreeError::Read(_) => Fault::Io,
            TreeError::WrongCount { .. } => Fault::Corruption,
        }
    }
}

impl<E: fmt::Display> fmt::Display for TreeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::Misuse(m) => f.write_str(m),
            TreeError::Read(e) => write!(f, "reading stored hashes: {e}"),
            TreeError::WrongCount { asked, got } => write!(
                f,
                "the hash reader returned {got} hashes for {asked} indexes"
            ),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for TreeError<E> {}
