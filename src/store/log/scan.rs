//! Parsing whole batches and whole segments out of in-memory buffers (no IO).
//!
//! Shared by recovery (the last segment is scanned at open), verification and the
//! iterator (which reads one batch with one positioned read and parses it here).

use std::ops::Range;

use super::format::{
    parse_frame, Record, Sealing, CHECKSUM_LEN, FILE_HEADER_LEN, MAX_BATCH_BYTES, MAX_BATCH_ENTRIES,
};

/// One entry of a parsed batch.
#[derive(Debug, Clone)]
pub struct ParsedEntry {
    /// File offset of the entry's frame (its `LogPos::offset`).
    pub offset: u64,
    pub kind: u8,
    /// Range of the payload in the parsed buffer.
    pub payload: Range<usize>,
}

/// A fully verified batch (begin, entries, commit and digest all checked).
#[derive(Debug, Clone)]
pub struct ParsedBatch {
    pub seq: u64,
    pub entries: Vec<ParsedEntry>,
    /// Buffer index just past the commit frame.
    pub end: usize,
}

/// Where and why a batch or segment failed to parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// File offset of the offending frame.
    pub offset: u64,
    pub reason: String,
    /// True if an interrupted write can produce this damage (truncation, bad length,
    /// checksum mismatch); false for damage under valid checksums (grammar, digest, seq).
    pub may_be_torn: bool,
}

fn damage(base: u64, at: usize, reason: impl Into<String>, may_be_torn: bool) -> Damage {
    Damage {
        offset: base.saturating_add(at as u64),
        reason: reason.into(),
        may_be_torn,
    }
}

/// Parses and verifies the batch whose begin frame starts at `buf[at]`.
/// `buf[0]` is file offset `base` of segment `segment`; `sealing` says whether its frames
/// carry checksums (a segment file's do).
pub fn parse_batch(
    buf: &[u8],
    sealing: Sealing,
    at: usize,
    segment: u32,
    base: u64,
) -> Result<ParsedBatch, Damage> {
    let frame_err =
        |at: usize, e: super::format::FrameError| damage(base, at, e.describe(), e.may_be_torn());
    let begin = parse_frame(buf, sealing, at, segment, base).map_err(|e| frame_err(at, e))?;
    let Record::BatchBegin { seq, count, len } = begin.record else {
        return Err(damage(base, at, "expected a BatchBegin frame", false));
    };
    if count == 0 || count as usize > MAX_BATCH_ENTRIES || len > MAX_BATCH_BYTES {
        return Err(damage(
            base,
            at,
            "BatchBegin count or length out of range",
            false,
        ));
    }
    let mut sums: Vec<[u8; CHECKSUM_LEN]> = Vec::with_capacity(count as usize + 1);
    sums.push(begin.checksum);
    let mut entries = Vec::with_capacity(count as usize);
    let mut cursor = begin.end;
    for _ in 0..count {
        let f =
            parse_frame(buf, sealing, cursor, segment, base).map_err(|e| frame_err(cursor, e))?;
        let Record::Entry { kind } = f.record else {
            return Err(damage(base, cursor, "expected an Entry frame", false));
        };
        let start = f.end - f.payload.len();
        entries.push(ParsedEntry {
            offset: base.saturating_add(cursor as u64),
            kind,
            payload: start..f.end,
        });
        sums.push(f.checksum);
        cursor = f.end;
    }
    let commit =
        parse_frame(buf, sealing, cursor, segment, base).map_err(|e| frame_err(cursor, e))?;
    let Record::BatchCommit {
        seq: c_seq,
        count: c_count,
        digest,
    } = commit.record
    else {
        return Err(damage(base, cursor, "expected a BatchCommit frame", false));
    };
    if c_seq != seq || c_count != count {
        return Err(damage(
            base,
            cursor,
            "BatchCommit does not match its BatchBegin",
            false,
        ));
    }
    if digest != sealing.digest(&sums) {
        return Err(damage(base, cursor, "batch digest mismatch", false));
    }
    if (commit.end - begin.end) as u64 != len {
        return Err(damage(
            base,
            at,
            "batch length differs from BatchBegin",
            false,
        ));
    }
    Ok(ParsedBatch {
        seq,
        entries,
        end: commit.end,
    })
}

/// Result of scanning a whole segment buffer (header included, not re-checked here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentScan {
    /// Seq of the last valid batch, or the header's base seq if none.
    pub last_seq: u64,
    /// File offset just past the last valid batch.
    pub committed_end: u64,
    pub batches: u64,
    /// First damage met, if any; everything from `committed_end` on is unverified.
    pub damage: Option<Damage>,
}

/// Scans the batches of a whole segment file image, checking seq continuity from `base_seq`.
pub fn scan_segment(file: &[u8], sealing: Sealing, segment: u32, base_seq: u64) -> SegmentScan {
    let batches = file.get(FILE_HEADER_LEN as usize..).unwrap_or_default();
    scan_from(batches, sealing, FILE_HEADER_LEN, segment, base_seq)
}

/// Scans the batches in `buf`, which holds segment `segment` from file offset `base` (a
/// batch boundary after batch `base_seq`) to its end, checking seq continuity and each
/// frame's checksum as `sealing` (the segment header's) says.
pub fn scan_from(
    buf: &[u8],
    sealing: Sealing,
    base: u64,
    segment: u32,
    base_seq: u64,
) -> SegmentScan {
    let mut at = 0;
    let mut scan = SegmentScan {
        last_seq: base_seq,
        committed_end: base,
        batches: 0,
        damage: None,
    };
    while at < buf.len() {
        match parse_batch(buf, sealing, at, segment, base) {
            Ok(batch) => {
                if Some(batch.seq) != scan.last_seq.checked_add(1) {
                    let reason = format!(
                        "batch seq {} where {} was expected",
                        batch.seq,
                        scan.last_seq.saturating_add(1)
                    );
                    scan.damage = Some(damage(base, at, reason, false));
                    break;
                }
                scan.last_seq = batch.seq;
                scan.batches += 1;
                at = batch.end;
                scan.committed_end = base.saturating_add(at as u64);
            }
            Err(d) => {
                scan.damage = Some(d);
                break;
            }
        }
    }
    scan
}
