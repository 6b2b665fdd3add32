//! Errors of the segment log.

use std::path::PathBuf;

use super::LogPos;

/// Everything that can go wrong in the segment log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An IO call failed on `file` (a segment or the log directory).
    #[error("io error on {}: {source}", file.display())]
    Io {
        /// The file or directory.
        file: PathBuf,
        #[source]
        /// The OS error.
        source: std::io::Error,
    },
    /// Damage that is not a torn tail: the log refuses to guess.
    #[error("corrupt segment log: {} at byte {offset}: {reason}", file.display())]
    Corrupt {
        /// The damaged segment file.
        file: PathBuf,
        /// Byte offset of the damage in that file.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A payload, a batch or an option exceeds a documented limit.
    #[error("too large: {what} is {size}, limit {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A position that is not an entry (or batch boundary) of the committed log.
    #[error("invalid log position {pos}: {reason}")]
    InvalidPosition {
        /// The position asked for.
        pos: LogPos,
        /// Why it is not an entry.
        reason: &'static str,
    },
    /// The log holds less than was acknowledged: the batches after `log_seq` up to
    /// `acknowledged_seq` are gone (a damaged or deleted tail, a rolled-back file).
    #[error(
        "{}: the log ends at batch {log_seq} (byte {offset}) but batches up to {acknowledged_seq} were acknowledged",
        file.display()
    )]
    BehindAcknowledged {
        /// The segment where the log now ends (or the missing segment).
        file: PathBuf,
        /// Where the log's committed part ends in that file (or where the damage is).
        offset: u64,
        /// The last complete batch in the log.
        log_seq: u64,
        /// The last acknowledged batch.
        acknowledged_seq: u64,
    },
    /// The log was opened read-only.
    #[error("the segment log was opened read-only")]
    ReadOnly,
    /// A write or sync failed earlier; the log refuses further appends (fail-stop).
    /// Reopen the log to recover.
    #[error("segment log is poisoned by an earlier write or sync failure; reopen it")]
    Poisoned,
}

impl LogError {
    pub(crate) fn io(file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LogError::Io {
            file: file.into(),
            source,
        }
    }

    pub(crate) fn corrupt(
        file: impl Into<PathBuf>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        LogError::Corrupt {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }
}
