//! [`Pipeline`]: one caller's stream of batches, verified on the ledger's pool while the
//! previous batch is committed, so verification overlaps the log write and the index update.
//!
//! Each batch keeps [`Ledger::append_batch`]'s contract: decided in order after everything
//! committed before it, written with one fdatasync, made visible at once (readers never see
//! half a batch). Batches commit in the order they were pushed.

use std::sync::Arc;

use crate::error::Error;

use super::pool::Ticket;
use super::{check_batch_bounds, AppendReport, Appended, Ledger};

/// Streams batches into a ledger two stages deep. Made by [`Ledger::pipeline`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let ledger = akledger::Ledger::open(dir.path()).unwrap();
/// # let batches: Vec<Vec<std::sync::Arc<[u8]>>> = Vec::new();
/// let mut pipeline = ledger.pipeline();
/// for batch in batches {
///     if let Some(outcomes) = pipeline.push(batch)? {
///         // the outcomes of the batch pushed before this one
///     }
/// }
/// let last = pipeline.finish()?; // the outcomes of the last batch
/// # Ok::<(), akledger::Error>(())
/// ```
pub struct Pipeline<'l> {
    ledger: &'l Ledger,
    verifying: Option<Ticket>,
}

impl<'l> Pipeline<'l> {
    pub(super) fn new(ledger: &'l Ledger) -> Self {
        Pipeline {
            ledger,
            verifying: None,
        }
    }

    /// Starts verifying `batch`, then commits the batch pushed before it and returns that
    /// batch's outcomes (one per item, in order); `None` on the first push. An oversized
    /// batch is refused as caller misuse before any work (the previous batch still waits);
    /// a failed commit acknowledges nothing and poisons the ledger, as in `append_batch`.
    pub fn push(&mut self, batch: Vec<Arc<[u8]>>) -> Result<Option<Vec<Appended>>, Error> {
        self.push_report(batch)
            .map(|r| r.map(|report| report.outcomes))
    }

    /// [`Pipeline::push`], with the whole [`AppendReport`] of the batch committed.
    pub fn push_report(&mut self, batch: Vec<Arc<[u8]>>) -> Result<Option<AppendReport>, Error> {
        check_batch_bounds(batch.len(), batch.iter().map(|b| b.len()).sum())?;
        self.ledger.check_writable()?;
        let ticket = self.ledger.pool.submit(batch);
        self.verifying
            .replace(ticket)
            .map(|previous| self.ledger.decide_and_commit(previous.wait()))
            .transpose()
    }

    /// Commits the last pushed batch and returns its outcomes (`None` if nothing was pushed).
    /// Dropping a pipeline without `finish` leaves its last batch uncommitted.
    pub fn finish(self) -> Result<Option<Vec<Appended>>, Error> {
        self.finish_report()
            .map(|r| r.map(|report| report.outcomes))
    }

    /// [`Pipeline::finish`], with the whole [`AppendReport`] of the last batch.
    pub fn finish_report(mut self) -> Result<Option<AppendReport>, Error> {
        self.verifying
            .take()
            .map(|last| self.ledger.decide_and_commit(last.wait()))
            .transpose()
    }
}
