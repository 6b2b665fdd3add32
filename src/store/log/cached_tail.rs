//! How much of a durable log stays in the page cache after it is written.
//!
//! Every appended byte passes through the page cache on its way to the disk. Once a batch
//! is synced its pages are clean: the kernel could drop them at any time, but keeps them
//! until memory runs short, so a 1 GB import would leave 1 GB of log cached and take a
//! fresh page for every page it writes. [`CachedTail`] drops the synced bytes behind the
//! newest [`LogOptions::cached_tail`](super::LogOptions::cached_tail) of the log
//! (`POSIX_FADV_DONTNEED`), so the log's writes keep reusing the same pages: recent events,
//! which readers ask for most, stay cached; older ones are read from the disk, and cached
//! again, when asked for. Only synced bytes are dropped: a dirty page is never thrown away,
//! and dropping a clean one loses nothing.
//!
//! Measured on a 2-core KVM guest whose host reclaims the guest's free memory: taking a
//! fresh page costs the guest a host page fault, and importing 1 M events (1.09 GB) took
//! 1.8–2.9 s of system time (6.0 s in a cold run) with everything left cached, against
//! 1.1–1.4 s with the cached tail (`docs/performance.md`).

use std::collections::VecDeque;
use std::sync::Arc;

use super::SegmentFile;
use crate::store::page_cache::ALIGN;

/// The synced bytes of a log still in the page cache, oldest first, and how many to keep.
pub(crate) struct CachedTail {
    /// Bytes of the newest synced writes to leave cached; `None` keeps everything.
    keep: Option<u64>,
    /// Synced and not yet dropped: one span per segment, oldest first.
    spans: VecDeque<Span>,
}

/// Bytes `[from, to)` of one segment.
struct Span {
    segment: Arc<SegmentFile>,
    from: u64,
    to: u64,
}

impl CachedTail {
    /// Keeps the newest `keep` synced bytes cached (`None`: all of them).
    pub(crate) fn new(keep: Option<u64>) -> Self {
        CachedTail {
            keep,
            spans: VecDeque::new(),
        }
    }

    /// Bytes `[from, to)` of `segment` are synced: records them and drops from the cache
    /// whatever falls out of the kept tail. Dropping is advice: its failure is ignored.
    pub(crate) fn synced(&mut self, segment: &Arc<SegmentFile>, from: u64, to: u64) {
        let Some(keep) = self.keep else {
            return;
        };
        if to <= from {
            return;
        }
        match self.spans.back_mut() {
            Some(last) if Arc::ptr_eq(&last.segment, segment) && last.to == from => last.to = to,
            _ => self.spans.push_back(Span {
                segment: Arc::clone(segment),
                from,
                to,
            }),
        }
        while let Some(excess) = self.held().checked_sub(keep).filter(|&excess| excess > 0) {
            let Some(oldest) = self.spans.front_mut() else {
                break;
            };
            let cut = oldest.to.min(oldest.from.saturating_add(excess));
            oldest
                .segment
                .file
                .drop_cached(oldest.from & !(ALIGN - 1), cut);
            oldest.from = cut;
            if oldest.from == oldest.to {
                self.spans.pop_front();
            }
        }
    }

    /// The synced bytes left cached, as this tracks them.
    pub(crate) fn held(&self) -> u64 {
        self.spans.iter().map(|span| span.to - span.from).sum()
    }
}
