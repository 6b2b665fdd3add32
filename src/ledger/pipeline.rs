//! [`Pipeline`]: one caller's stream of batches, verified on the ledger's pool while the
//! previous batch is committed, so verification overlaps the log write and the index update.
//!
//! Each batch keeps [`Ledger::append_batch`]'s contract: decided in order after everything
//! committed before it, written with one fdatasync, made visible at once (readers never see
//! half a batch). Batches commit in the order they were pushed.

use std::collections::VecDeque;
use std::fs::File;
use std::ops::Range;
use std::sync::Arc;

use crate::error::Error;

use super::pool::{Items, Ticket};
use super::{check_batch_bounds, AppendReport, Appended, Ledger};

/// Where a batch's items were read from: a file, and each item's offset in it (`None` for
/// one that is not a copy of the file's bytes). An in-memory ledger refers to the stored
/// events there instead of copying them (`store::log::memory`).
#[derive(Clone, Debug)]
pub struct Origins {
    /// The file, which must not change while the ledger is open.
    pub source: Arc<File>,
    /// One per item of the batch.
    pub offsets: Vec<Option<u64>>,
    /// The XXH3-64 of each item's bytes, one per item, when the caller read them from
    /// `source` at their offsets itself (as [`Ledger::append_log_file_with`] does): they
    /// are then not read there again to be compared; see [`crate::store::log::ReadFrom`].
    pub hashes: Option<Vec<u64>>,
}

/// Streams batches into a ledger: verified on the pool while earlier ones commit. Made by
/// [`Ledger::pipeline`] (two stages deep) or [`Ledger::pipeline_ahead`].
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
    /// Batches submitted and not yet committed, oldest first, with where their items came
    /// from when that is known.
    verifying: VecDeque<(Ticket, Option<Origins>)>,
    /// Batches kept verifying while one commits: 1 for [`Ledger::pipeline`].
    ahead: usize,
}

impl<'l> Pipeline<'l> {
    pub(super) fn new(ledger: &'l Ledger) -> Self {
        Pipeline::ahead(ledger, 1)
    }

    /// See [`Ledger::pipeline_ahead`].
    pub(super) fn ahead(ledger: &'l Ledger, ahead: usize) -> Self {
        Pipeline {
            ledger,
            verifying: VecDeque::new(),
            ahead: ahead.max(1),
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
        self.push_from(batch, None)
    }

    /// [`Pipeline::push_report`] of items read from a file, with their offsets in it
    /// ([`Origins`]; an in-memory ledger then keeps only references to them).
    pub fn push_from(
        &mut self,
        batch: Vec<Arc<[u8]>>,
        origins: Option<Origins>,
    ) -> Result<Option<AppendReport>, Error> {
        self.push_items(Items::Each(batch), origins)
    }

    /// [`Pipeline::push_report`] of items laid out in one buffer: item `i` is
    /// `buffer[spans[i]]`. Each event read from it keeps a share of the buffer instead of a
    /// copy of its bytes ([`crate::Event::parse_span`]), so the buffer lives until the
    /// batch's events are freed, a little after it commits. A span outside the buffer is
    /// an empty item, rejected as such.
    pub fn push_spans(
        &mut self,
        buffer: Arc<Vec<u8>>,
        spans: Vec<Range<usize>>,
    ) -> Result<Option<AppendReport>, Error> {
        self.push_items(Items::Spans { buffer, spans }, None)
    }

    /// [`Pipeline::push_from`] of items in one buffer ([`Items::Spans`]).
    pub(super) fn push_items(
        &mut self,
        batch: Items,
        origins: Option<Origins>,
    ) -> Result<Option<AppendReport>, Error> {
        check_batch_bounds(batch.len(), batch.bytes())?;
        self.ledger.check_writable()?;
        let origins = origins.filter(|o| {
            self.ledger.config.in_memory
                && o.offsets.len() == batch.len()
                && o.hashes.as_ref().is_none_or(|h| h.len() == batch.len())
        });
        self.verifying
            .push_back((self.ledger.pool.submit(batch, self.ahead), origins));
        if self.verifying.len() <= self.ahead {
            return Ok(None);
        }
        self.verifying
            .pop_front()
            .map(|(oldest, from)| self.ledger.decide_and_commit(oldest.wait(), from))
            .transpose()
    }

    /// Commits the last pushed batch and returns its outcomes (`None` if nothing was pushed).
    /// Dropping a pipeline without `finish` leaves its last batch uncommitted.
    pub fn finish(self) -> Result<Option<Vec<Appended>>, Error> {
        self.finish_report()
            .map(|r| r.map(|report| report.outcomes))
    }

    /// [`Pipeline::finish`], with the whole [`AppendReport`] of the last batch.
    pub fn finish_report(self) -> Result<Option<AppendReport>, Error> {
        Ok(self.finish_all()?.pop())
    }

    /// Commits every batch still in the pipeline, oldest first, and returns their reports
    /// (one per batch, in push order). A failed commit stops there: the batches after it
    /// are not committed.
    pub fn finish_all(mut self) -> Result<Vec<AppendReport>, Error> {
        let mut reports = Vec::with_capacity(self.verifying.len());
        while let Some((oldest, from)) = self.verifying.pop_front() {
            reports.push(self.ledger.decide_and_commit(oldest.wait(), from)?);
        }
        Ok(reports)
    }
}
