//! Concurrent readers: positioned reads and iteration over committed batches.
//!
//! A [`SegmentReader`] is a cheap clone of the log's shared segment table. Iteration reads a
//! whole batch at a time ([`LogBatches`], entries borrowed from the batch's bytes);
//! [`LogIter`] hands its entries out one by one, each payload copied out. Reads use
//! `read_at` on shared file handles, so any number of threads read while the single
//! writer appends. Readers only ever see committed batches: the committed end of the
//! active segment is published after the batch (and, in `Sync` mode, its fdatasync).
//! Checksums are verified on every read of a segment file; an in-memory log's frames
//! carry none ([`Sealing::Unchecked`](super::format::Sealing)).

use std::collections::VecDeque;
use std::sync::{Arc, RwLock};

use super::format::{parse_frame, FrameError, Record, FILE_HEADER_LEN, FRAME_PREFIX_LEN, MAX_BODY};
use super::scan::{parse_batch, ParsedEntry};
use super::{HighWater, LogError, LogPos, SegRef, Shared};

/// Bytes the first read of an entry takes (fewer at the end of a segment): a frame's
/// prefix and, for entries up to about this size (events are about a kilobyte), the whole
/// frame, in one system call.
const FIRST_READ: usize = 4 << 10;

/// Bytes one read of neighbouring entries takes at most ([`SegmentReader::read_each`]): a
/// sync frame's worth of events is a few of them.
const RUN_READ: usize = 1 << 20;

/// Makes `buf` at least `len` bytes long (contents unspecified: the caller reads over
/// them), without clearing what a reused buffer already holds.
fn fill(buf: &mut Vec<u8>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0);
    }
}

/// A read handle on the log; `Clone + Send + Sync`.
#[derive(Clone)]
pub struct SegmentReader {
    pub(crate) shared: Arc<RwLock<Shared>>,
}

/// One committed entry, as yielded by [`LogIter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Seq of the batch this entry was appended in.
    pub seq: u64,
    /// Where the entry is.
    pub pos: LogPos,
    /// The entry kind byte.
    pub kind: u8,
    /// The entry payload.
    pub payload: Vec<u8>,
    /// Position just past this entry's batch: where the next batch starts. Persist
    /// `(seq, batch_end)` as a high-water mark after applying the whole batch.
    pub batch_end: LogPos,
}

impl SegmentReader {
    fn segment(&self, n: u32) -> Option<(SegRef, bool)> {
        let shared = self.shared.read().unwrap_or_else(|e| e.into_inner());
        let last = shared.segments.len().checked_sub(1)?;
        let idx = n as usize;
        shared.segments.get(idx).map(|s| (s.clone(), idx == last))
    }

    /// Last committed batch seq and the committed end of the log.
    pub fn high_water(&self) -> HighWater {
        let shared = self.shared.read().unwrap_or_else(|e| e.into_inner());
        shared.high_water()
    }

    /// Reads the entry at `pos`, verifying its checksum. Returns `(kind, payload)`.
    pub fn read(&self, pos: LogPos) -> Result<(u8, Vec<u8>), LogError> {
        let mut buf = Vec::new();
        let (kind, payload) = self.read_into(pos, &mut buf)?;
        Ok((kind, payload.to_vec()))
    }

    /// [`SegmentReader::read`] into `buf` (its contents replaced; its allocation reused
    /// by a caller reading many entries): returns the kind and the payload, a part of
    /// `buf`. In a segment file, one positioned read takes the frame's prefix and, for most
    /// entries, the whole frame (4 KiB at first); a longer frame takes a second read for
    /// the rest. In memory, the prefix is read, then the rest: nothing past the frame.
    pub fn read_into<'b>(
        &self,
        pos: LogPos,
        buf: &'b mut Vec<u8>,
    ) -> Result<(u8, &'b [u8]), LogError> {
        let (seg, _) = self.segment(pos.segment).ok_or(LogError::InvalidPosition {
            pos,
            reason: "no such segment",
        })?;
        let outside = LogError::InvalidPosition {
            pos,
            reason: "outside the committed log",
        };
        let prefix_end = pos.offset.checked_add(FRAME_PREFIX_LEN as u64);
        if pos.offset < FILE_HEADER_LEN || prefix_end.is_none_or(|e| e > seg.end) {
            return Err(outside);
        }
        let path = &seg.file.path;
        let first = usize::try_from(seg.end - pos.offset)
            .unwrap_or(FIRST_READ)
            .min(seg.file.file.read_ahead(FIRST_READ))
            .max(FRAME_PREFIX_LEN);
        fill(buf, first);
        seg.file
            .file
            .read_exact_at(buf.get_mut(..first).unwrap_or_default(), pos.offset)
            .map_err(|e| LogError::io(path, e))?;
        let len = buf
            .first_chunk::<4>()
            .map_or(0, |raw| u32::from_le_bytes(*raw) as usize);
        let frame_len = FRAME_PREFIX_LEN + len;
        if len > MAX_BODY || pos.offset.saturating_add(frame_len as u64) > seg.end {
            return Err(LogError::corrupt(
                path,
                pos.offset,
                "frame length out of range",
            ));
        }
        if frame_len > first {
            fill(buf, frame_len);
            seg.file
                .file
                .read_exact_at(
                    buf.get_mut(first..frame_len).unwrap_or_default(),
                    pos.offset + first as u64,
                )
                .map_err(|e| LogError::io(path, e))?;
        }
        let buf: &'b [u8] = buf.get(..frame_len).unwrap_or_default();
        let frame = parse_frame(buf, seg.file.file.sealing(), 0, pos.segment, pos.offset)
            .map_err(|e| LogError::corrupt(path, pos.offset, e.describe()))?;
        let Record::Entry { kind } = frame.record else {
            return Err(LogError::InvalidPosition {
                pos,
                reason: "not an entry frame",
            });
        };
        Ok((kind, frame.payload))
    }

    /// Reads the entries at `positions` in their order, handing each one's kind and payload
    /// to `each`; a read that fails becomes `E` through `fail`. Neighbouring entries
    /// (ascending offsets in one segment file, within 1 MiB of the run's first) are
    /// read with one positioned read, so a caller reading many entries appended together
    /// makes one system call, and copies each byte once, per run; any other entry is read as
    /// [`SegmentReader::read_into`] reads it. `buf` is reused throughout.
    pub fn read_each<E>(
        &self,
        positions: &[LogPos],
        buf: &mut Vec<u8>,
        fail: impl Fn(LogError) -> E,
        mut each: impl FnMut(u8, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = positions;
        while let Some(&first) = rest.first() {
            let (len, seg) = self.run(rest);
            let (run, later) = rest.split_at(len.clamp(1, rest.len()));
            rest = later;
            let Some(seg) = seg.filter(|_| run.len() > 1) else {
                let (kind, payload) = self.read_into(first, buf).map_err(&fail)?;
                each(kind, payload)?;
                continue;
            };
            let last = run.last().map_or(first.offset, |p| p.offset);
            let span =
                usize::try_from(last.saturating_add(FIRST_READ as u64).min(seg.end) - first.offset)
                    .unwrap_or(RUN_READ);
            fill(buf, span);
            seg.file
                .file
                .read_exact_at(buf.get_mut(..span).unwrap_or_default(), first.offset)
                .map_err(|e| fail(LogError::io(&seg.file.path, e)))?;
            let read = buf.get(..span).unwrap_or_default();
            let mut own = Vec::new();
            for &pos in run {
                let at = usize::try_from(pos.offset - first.offset).unwrap_or(span);
                match parse_frame(read, seg.file.file.sealing(), at, pos.segment, first.offset) {
                    Ok(frame) => {
                        let Record::Entry { kind } = frame.record else {
                            return Err(fail(LogError::InvalidPosition {
                                pos,
                                reason: "not an entry frame",
                            }));
                        };
                        each(kind, frame.payload)?;
                    }
                    // Longer than what the run's read took: read on its own, which also
                    // says what is wrong with a length that runs past the segment.
                    Err(FrameError::Truncated) => {
                        let (kind, payload) = self.read_into(pos, &mut own).map_err(&fail)?;
                        each(kind, payload)?;
                    }
                    Err(e) => {
                        return Err(fail(LogError::corrupt(
                            &seg.file.path,
                            pos.offset,
                            e.describe(),
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    /// How many of `positions`, from the first, one read can take ([`SegmentReader::
    /// read_each`]), and their segment: positions inside one segment file's committed
    /// frames, ascending, the last within [`RUN_READ`] of the first. `(1, None)` when the
    /// first is alone (in memory, or not inside a segment: `read_into` says why).
    fn run(&self, positions: &[LogPos]) -> (usize, Option<SegRef>) {
        let Some(first) = positions.first() else {
            return (0, None);
        };
        let Some((seg, _)) = self.segment(first.segment) else {
            return (1, None);
        };
        let inside = |p: &LogPos| {
            p.segment == first.segment
                && p.offset >= FILE_HEADER_LEN
                && p.offset.saturating_add(FRAME_PREFIX_LEN as u64) <= seg.end
        };
        if seg.file.file.read_ahead(RUN_READ) == 0 || !inside(first) {
            return (1, None);
        }
        let limit = first.offset.saturating_add((RUN_READ - FIRST_READ) as u64);
        let mut len = 1;
        let mut prev = first.offset;
        for p in positions.iter().skip(1) {
            if !inside(p) || p.offset <= prev || p.offset > limit {
                break;
            }
            prev = p.offset;
            len += 1;
        }
        (len, Some(seg))
    }

    /// Bytes of the log held in memory: 0 for a log on disk; for an in-memory log, its
    /// frames less the payloads it refers to in the file they were read from.
    pub fn bytes_in_memory(&self) -> u64 {
        let shared = self.shared.read().unwrap_or_else(|e| e.into_inner());
        shared
            .segments
            .iter()
            .map(|s| s.file.file.in_memory())
            .sum()
    }

    /// Bytes of committed frames from `from` to `to` (batch boundaries, `from` first),
    /// segment headers left out: what replaying that stretch of the log reads. 0 when `to`
    /// is not after `from`; a position past a segment's committed end counts to that end.
    pub fn bytes_between(&self, from: LogPos, to: LogPos) -> u64 {
        let shared = self.shared.read().unwrap_or_else(|e| e.into_inner());
        let frames = |n: u32, start: u64, end: u64| {
            shared.segments.get(n as usize).map_or(0, |s| {
                end.min(s.end).saturating_sub(start.max(FILE_HEADER_LEN))
            })
        };
        match from.segment.cmp(&to.segment) {
            std::cmp::Ordering::Greater => 0,
            std::cmp::Ordering::Equal => frames(from.segment, from.offset, to.offset),
            std::cmp::Ordering::Less => {
                let between: u64 = (from.segment.saturating_add(1)..to.segment)
                    .map(|n| frames(n, 0, u64::MAX))
                    .sum();
                frames(from.segment, from.offset, u64::MAX)
                    .saturating_add(between)
                    .saturating_add(frames(to.segment, 0, to.offset))
            }
        }
    }

    /// Iterates all committed entries from the start of the log.
    pub fn iter(&self) -> LogIter {
        self.iter_from(LogPos::new(0, FILE_HEADER_LEN))
    }

    /// Iterates committed entries from `start`, which must be a batch boundary: the start
    /// of the log, a `batch_end`, or a `HighWater::end`. Iteration stops at the committed
    /// end as of this call.
    pub fn iter_from(&self, start: LogPos) -> LogIter {
        LogIter {
            batches: self.batches_from(start),
            pending: VecDeque::new(),
        }
    }

    /// Iterates all committed batches from the start of the log.
    pub fn batches(&self) -> LogBatches {
        self.batches_from(LogPos::new(0, FILE_HEADER_LEN))
    }

    /// Iterates committed batches from `start` (a batch boundary, as for
    /// [`SegmentReader::iter_from`]), each as the bytes one read brought in: entries are
    /// borrowed from their batch instead of copied out one by one.
    pub fn batches_from(&self, start: LogPos) -> LogBatches {
        LogBatches {
            reader: self.clone(),
            pos: start,
            end: self.high_water().end,
            expected_seq: None,
            done: false,
        }
    }
}

/// One committed batch as it was read: its bytes and where each entry's payload is.
pub struct LogBatch {
    /// Seq of the batch.
    pub seq: u64,
    /// Position just past the batch: where the next one starts.
    pub end: LogPos,
    segment: u32,
    bytes: Vec<u8>,
    entries: Vec<ParsedEntry>,
}

/// One entry of a [`LogBatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// Where the entry is.
    pub pos: LogPos,
    /// The entry kind byte.
    pub kind: u8,
    /// The entry payload.
    pub payload: &'a [u8],
}

impl LogBatch {
    /// Number of entries (at least one: empty batches are never written).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Always false for a batch read from a log.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in log order.
    pub fn entries(&self) -> impl Iterator<Item = BatchEntry<'_>> + '_ {
        self.entries.iter().map(|e| BatchEntry {
            pos: LogPos::new(self.segment, e.offset),
            kind: e.kind,
            payload: self.bytes.get(e.payload.clone()).unwrap_or_default(),
        })
    }
}

/// Iterator over committed batches; yields `Err` once on damage, then stops.
pub struct LogBatches {
    reader: SegmentReader,
    pos: LogPos,
    end: LogPos,
    expected_seq: Option<u64>,
    done: bool,
}

/// Iterator over committed entries; yields `Err` once on damage, then stops.
pub struct LogIter {
    batches: LogBatches,
    pending: VecDeque<LogEntry>,
}

impl LogBatches {
    /// Reads the batch at `self.pos`; `None` when it only moved to the next segment or
    /// reached the end.
    fn read_batch(&mut self) -> Result<Option<LogBatch>, LogError> {
        let pos = self.pos;
        let (seg, is_last) = self
            .reader
            .segment(pos.segment)
            .ok_or(LogError::InvalidPosition {
                pos,
                reason: "no such segment",
            })?;
        let seg_end = if is_last && pos.segment == self.end.segment {
            self.end.offset
        } else {
            seg.end
        };
        if pos.offset >= seg_end {
            if pos.offset > seg_end || pos.segment >= self.end.segment {
                if pos.offset > seg_end {
                    return Err(LogError::InvalidPosition {
                        pos,
                        reason: "beyond the end of its segment",
                    });
                }
                self.done = true;
                return Ok(None);
            }
            // Move to the next segment; its header base seq must continue ours.
            let next = pos.segment + 1;
            let (next_seg, _) = self.reader.segment(next).ok_or(LogError::InvalidPosition {
                pos,
                reason: "no next segment",
            })?;
            if let Some(expected) = self.expected_seq {
                if next_seg.file.base_seq.checked_add(1) != Some(expected) {
                    return Err(LogError::corrupt(
                        &next_seg.file.path,
                        12,
                        "segment base seq breaks batch continuity",
                    ));
                }
            }
            self.pos = LogPos::new(next, FILE_HEADER_LEN);
            return Ok(None);
        }
        if pos.offset < FILE_HEADER_LEN {
            return Err(LogError::InvalidPosition {
                pos,
                reason: "inside the segment header",
            });
        }
        let path = &seg.file.path;
        let corrupt = |offset: u64, reason: String| LogError::corrupt(path, offset, reason);
        // The begin frame is at most ~50 bytes; read a little more to get it whole.
        let avail = seg_end - pos.offset;
        let mut head = vec![0u8; avail.min(128) as usize];
        seg.file
            .file
            .read_exact_at(&mut head, pos.offset)
            .map_err(|e| LogError::io(path, e))?;
        let begin = parse_frame(&head, seg.file.file.sealing(), 0, pos.segment, pos.offset)
            .map_err(|e| corrupt(pos.offset, e.describe()))?;
        let Record::BatchBegin { len, .. } = begin.record else {
            return Err(LogError::InvalidPosition {
                pos,
                reason: "not a batch boundary",
            });
        };
        let total = (begin.end as u64)
            .checked_add(len)
            .filter(|&t| t <= avail)
            .ok_or_else(|| corrupt(pos.offset, "batch runs past the end of its segment".into()))?;
        let mut buf = vec![0u8; total as usize];
        seg.file
            .file
            .read_exact_at(&mut buf, pos.offset)
            .map_err(|e| LogError::io(path, e))?;
        let batch = parse_batch(&buf, seg.file.file.sealing(), 0, pos.segment, pos.offset)
            .map_err(|d| corrupt(d.offset, d.reason))?;
        if let Some(expected) = self.expected_seq {
            if batch.seq != expected {
                let reason = format!("batch seq {} where {expected} was expected", batch.seq);
                return Err(corrupt(pos.offset, reason));
            }
        }
        self.expected_seq = batch.seq.checked_add(1);
        let end = LogPos::new(pos.segment, pos.offset + batch.end as u64);
        self.pos = end;
        Ok(Some(LogBatch {
            seq: batch.seq,
            end,
            segment: pos.segment,
            bytes: buf,
            entries: batch.entries,
        }))
    }
}

impl Iterator for LogBatches {
    type Item = Result<LogBatch, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done && self.pos < self.end {
            match self.read_batch() {
                Ok(Some(batch)) => return Some(Ok(batch)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl Iterator for LogIter {
    type Item = Result<LogEntry, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some(Ok(e));
            }
            let batch = match self.batches.next()? {
                Ok(batch) => batch,
                Err(e) => return Some(Err(e)),
            };
            self.pending.extend(batch.entries().map(|e| LogEntry {
                seq: batch.seq,
                pos: e.pos,
                kind: e.kind,
                payload: e.payload.to_vec(),
                batch_end: batch.end,
            }));
        }
    }
}
