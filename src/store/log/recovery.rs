//! Opening a log directory: listing segments, checking headers, scanning the last segment
//! and cutting a torn tail (see the module doc of `store::log` for the rule).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backing::Backing;
use super::format::{
    decode_file_header, encode_file_header, find_marker_after, parse_frame, FileHeader,
    HeaderError, Record, Sealing, FILE_HEADER_LEN, MAX_SEGMENT_FILE, NEW_SEGMENT_SEALING,
};
use super::scan::{scan_from, scan_segment, SegmentScan};
use super::{
    HighWater, LogError, LogOptions, LogPos, RecoveryReport, SegRef, SegmentFile, TornTail,
};

/// File name of segment `n`: 20-digit zero-padded number + `.log`.
pub fn segment_file_name(n: u32) -> String {
    format!("{n:020}.log")
}

fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".log")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| LogError::io(dir, e))
}

/// Creates segment `number` with its header, syncs it and the directory.
pub fn create_segment(dir: &Path, number: u32, base_seq: u64) -> Result<SegmentFile, LogError> {
    let path = dir.join(segment_file_name(number));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| LogError::io(&path, e))?;
    let header = encode_file_header(FileHeader {
        segment: number,
        base_seq,
        sealing: NEW_SEGMENT_SEALING,
    });
    file.write_all_at(&header, 0)
        .and_then(|()| file.sync_all())
        .map_err(|e| LogError::io(&path, e))?;
    sync_dir(dir)?;
    Ok(SegmentFile {
        number,
        path,
        file: Backing::File(file, NEW_SEGMENT_SEALING),
        base_seq,
    })
}

/// Segment `number` of an in-memory log, holding its header; named like a file for
/// messages, though no file exists.
/// Room for `capacity` bytes is reserved (address space: pages are touched as written).
pub fn memory_segment(number: u32, base_seq: u64, capacity: u64) -> SegmentFile {
    let header = encode_file_header(FileHeader {
        segment: number,
        base_seq,
        sealing: Sealing::Unchecked,
    });
    SegmentFile {
        number,
        path: PathBuf::from(segment_file_name(number)),
        file: Backing::memory(&header, capacity),
        base_seq,
    }
}

fn list_segments(dir: &Path) -> Result<Vec<u32>, LogError> {
    let mut numbers = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| LogError::io(dir, e))? {
        let entry = entry.map_err(|e| LogError::io(dir, e))?;
        let name = entry.file_name();
        let Some(n) = name.to_str().and_then(parse_segment_name) else {
            continue; // not a segment file: ignored
        };
        let n = u32::try_from(n)
            .map_err(|_| LogError::corrupt(entry.path(), 0, "segment number beyond u32 range"))?;
        numbers.push(n);
    }
    numbers.sort_unstable();
    for (i, &n) in numbers.iter().enumerate() {
        if n as usize != i {
            let missing = dir.join(segment_file_name(i as u32));
            return Err(LogError::corrupt(missing, 0, "missing segment"));
        }
    }
    Ok(numbers)
}

fn read_whole(path: &Path, file: &File) -> Result<Vec<u8>, LogError> {
    let len = file.metadata().map_err(|e| LogError::io(path, e))?.len();
    if len > MAX_SEGMENT_FILE {
        return Err(LogError::corrupt(
            path,
            MAX_SEGMENT_FILE,
            format!("segment is {len} bytes, larger than any the writer produces"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| LogError::io(path, e))?;
    Ok(buf)
}

/// Longer than any BatchCommit frame (prefix, and a CBOR array of the tag, seq, count and
/// a 16-byte digest: at most 53 bytes).
const MAX_COMMIT_FRAME: u64 = 64;

/// Whether a verifying BatchCommit frame of batch `seq` ends exactly at file offset `end`;
/// `buf` holds segment `segment` from file offset `base`, which is at least
/// [`MAX_COMMIT_FRAME`] bytes before `end` or the end of the segment header.
fn commit_ends_at(
    buf: &[u8],
    sealing: Sealing,
    base: u64,
    segment: u32,
    seq: u64,
    end: u64,
) -> bool {
    (base..end).any(|start| {
        let at = usize::try_from(start - base).unwrap_or(usize::MAX);
        matches!(
            parse_frame(buf, sealing, at, segment, base),
            Ok(f) if base + f.end as u64 == end
                && matches!(f.record, Record::BatchCommit { seq: s, .. } if s == seq)
        )
    })
}

/// The first [`FILE_HEADER_LEN`] bytes of a segment file (fewer if it is shorter).
fn read_header(path: &Path, file: &File) -> Result<Vec<u8>, LogError> {
    let mut buf = vec![0u8; FILE_HEADER_LEN as usize];
    let got = file
        .read_at(&mut buf, 0)
        .map_err(|e| LogError::io(path, e))?;
    buf.truncate(got);
    Ok(buf)
}

/// Bytes `from..to` of a segment file.
fn read_range(path: &Path, file: &File, from: u64, to: u64) -> Result<Vec<u8>, LogError> {
    let mut buf = Vec::new();
    read_range_into(path, file, from, to, &mut buf)?;
    Ok(buf)
}

/// Bytes `from..to` of a segment file into `buf`, whose memory is reused.
fn read_range_into(
    path: &Path,
    file: &File,
    from: u64,
    to: u64,
    buf: &mut Vec<u8>,
) -> Result<(), LogError> {
    let len = usize::try_from(to.saturating_sub(from))
        .map_err(|_| LogError::corrupt(path, from, "segment range beyond memory"))?;
    buf.resize(len, 0);
    file.read_exact_at(buf, from)
        .map_err(|e| LogError::io(path, e))
}

/// Address space reserved for the window buffer of [`scan_in_windows`], of which only the
/// window's pages are touched: more than glibc's largest dynamic mmap threshold (32 MiB),
/// so that freeing the buffer does not raise the threshold. A buffer of 8 MiB did: the
/// open's later allocations of up to that size then came from the heap, and an open 1 M-event
/// ledger held 5.7 MB more (85.2 MB anonymous memory before, 90.9 MB).
const WINDOW_RESERVE: usize = (32 << 20) + (1 << 20);

/// Scans the batches of segment `segment` (`len` bytes, frames sealed as `sealing`) after
/// its header, as [`scan_segment`] does on the whole file, reading `window` bytes at a time
/// into one buffer. A window that ends inside a batch is followed by one starting at that
/// batch; a batch longer than the window is read in a window doubled until it holds it.
/// `None` when the scan meets damage the end of the file does not explain away: the caller
/// then reads the file whole and judges it there.
fn scan_in_windows(
    path: &Path,
    file: &File,
    (sealing, segment, base_seq): (Sealing, u32, u64),
    len: u64,
    window: u64,
) -> Result<Option<SegmentScan>, LogError> {
    let mut scan = SegmentScan {
        last_seq: base_seq,
        committed_end: FILE_HEADER_LEN,
        batches: 0,
        damage: None,
    };
    let mut window = window.max(1);
    let mut buf = Vec::with_capacity(WINDOW_RESERVE);
    while scan.committed_end < len {
        let start = scan.committed_end;
        let end = start.saturating_add(window).min(len);
        read_range_into(path, file, start, end, &mut buf)?;
        let part = scan_from(&buf, sealing, start, segment, scan.last_seq);
        scan.last_seq = part.last_seq;
        scan.committed_end = part.committed_end;
        scan.batches += part.batches;
        if part.damage.is_some() {
            if end == len {
                return Ok(None);
            }
            if part.committed_end == start {
                window = window.saturating_mul(2);
            }
        }
    }
    Ok(Some(scan))
}

fn checked_header(path: &Path, buf: &[u8], number: u32) -> Result<FileHeader, LogError> {
    let h = decode_file_header(buf).map_err(|e| LogError::corrupt(path, 0, e.describe()))?;
    if h.segment != number {
        let reason = format!("header names segment {}, file name {number}", h.segment);
        return Err(LogError::corrupt(path, 8, reason));
    }
    // Batch seqs start at 1, so the first segment follows batch 0. Checked on every open
    // (not only with `verify_on_open`), so a lenient open and a verifying one agree.
    if number == 0 && h.base_seq != 0 {
        return Err(LogError::corrupt(
            path,
            12,
            "the first segment's base seq must be 0",
        ));
    }
    Ok(h)
}

/// A last segment whose header never made it to disk (crash during creation): no header,
/// and no batch frame that verifies in any format version (the header would have said
/// which).
fn is_torn_creation(buf: &[u8], number: u32) -> bool {
    matches!(
        decode_file_header(buf),
        Err(HeaderError::Short) | Err(HeaderError::Zeroed)
    ) && Sealing::CHECKED
        .iter()
        .all(|sealing| find_marker_after(buf, *sealing, 0, number, 0).is_none())
}

pub struct Recovered {
    pub segments: Vec<SegRef>,
    pub last_seq: u64,
    pub report: RecoveryReport,
}

pub fn recover(dir: &Path, opts: &LogOptions) -> Result<Recovered, LogError> {
    if !opts.read_only {
        fs::create_dir_all(dir).map_err(|e| LogError::io(dir, e))?;
    }
    let mut numbers = list_segments(dir)?;
    let mut report = RecoveryReport::default();

    // A torn segment creation (no header, nothing valid) is removed, or reset if it is the
    // only segment. Only a last segment whose header is short or zeroed is read whole here.
    if let Some(&last) = numbers.last() {
        let path = dir.join(segment_file_name(last));
        let file = File::open(&path).map_err(|e| LogError::io(&path, e))?;
        let header = read_header(&path, &file)?;
        let torn_creation = matches!(
            decode_file_header(&header),
            Err(HeaderError::Short) | Err(HeaderError::Zeroed)
        ) && is_torn_creation(&read_whole(&path, &file)?, last);
        if torn_creation {
            numbers.pop();
            let len = file.metadata().map_err(|e| LogError::io(&path, e))?.len();
            if opts.read_only {
                report.torn_tail_left = Some(TornTail {
                    file: path,
                    offset: 0,
                    reason: "segment header never reached the disk; file ignored".into(),
                });
            } else {
                fs::remove_file(&path).map_err(|e| LogError::io(&path, e))?;
                sync_dir(dir)?;
                report.bytes_dropped = len;
                report.torn_tail = Some(TornTail {
                    file: path,
                    offset: 0,
                    reason: "segment header never reached the disk; file removed".into(),
                });
            }
        }
    }

    if numbers.is_empty() && opts.read_only {
        let missing = dir.join(segment_file_name(0));
        return Err(LogError::io(
            missing,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no segment log here (a read-only open creates nothing)",
            ),
        ));
    }
    if numbers.is_empty() {
        let seg = create_segment(dir, 0, 0)?;
        report.created = true;
        report.segments = 1;
        report.high_water = HighWater {
            seq: 0,
            end: LogPos::new(0, FILE_HEADER_LEN),
        };
        let segments = vec![SegRef {
            file: Arc::new(seg),
            end: FILE_HEADER_LEN,
        }];
        return Ok(Recovered {
            segments,
            last_seq: 0,
            report,
        });
    }

    let last_number = numbers.len() as u32 - 1;
    let mut segments = Vec::with_capacity(numbers.len());
    let mut prev_base = 0u64;
    let mut prev_last_seq: Option<u64> = Some(0);
    for &n in numbers.iter().take(numbers.len().saturating_sub(1)) {
        let path = dir.join(segment_file_name(n));
        let file = File::open(&path).map_err(|e| LogError::io(&path, e))?;
        let len = file.metadata().map_err(|e| LogError::io(&path, e))?.len();
        let (header, end) = if opts.verify_on_open {
            let buf = read_whole(&path, &file)?;
            let h = checked_header(&path, &buf, n)?;
            if Some(h.base_seq) != prev_last_seq {
                return Err(LogError::corrupt(
                    &path,
                    12,
                    "base seq breaks batch continuity",
                ));
            }
            let scan = scan_segment(&buf, h.sealing, n, h.base_seq);
            if let Some(d) = scan.damage {
                return Err(LogError::corrupt(&path, d.offset, d.reason));
            }
            prev_last_seq = Some(scan.last_seq);
            (h, scan.committed_end)
        } else {
            let h = checked_header(&path, &read_header(&path, &file)?, n)?;
            if len > MAX_SEGMENT_FILE {
                return Err(LogError::corrupt(
                    &path,
                    MAX_SEGMENT_FILE,
                    "segment too large",
                ));
            }
            (h, len)
        };
        if header.base_seq < prev_base {
            return Err(LogError::corrupt(&path, 12, "base seq goes backwards"));
        }
        prev_base = header.base_seq;
        segments.push(SegRef {
            file: Arc::new(SegmentFile {
                number: n,
                path,
                file: Backing::File(file, header.sealing),
                base_seq: header.base_seq,
            }),
            end,
        });
    }

    // The last segment: scanned (from the acknowledged mark when it lies here); a torn
    // tail is cut away.
    let path = dir.join(segment_file_name(last_number));
    let file = OpenOptions::new()
        .read(true)
        .write(!opts.read_only)
        .open(&path)
        .map_err(|e| LogError::io(&path, e))?;
    let header = checked_header(&path, &read_header(&path, &file)?, last_number)?;
    if header.base_seq < prev_base {
        return Err(LogError::corrupt(&path, 12, "base seq goes backwards"));
    }
    if opts.verify_on_open && Some(header.base_seq) != prev_last_seq {
        return Err(LogError::corrupt(
            &path,
            12,
            "base seq breaks batch continuity",
        ));
    }
    let len = file.metadata().map_err(|e| LogError::io(&path, e))?.len();
    if len > MAX_SEGMENT_FILE {
        return Err(LogError::corrupt(
            &path,
            MAX_SEGMENT_FILE,
            format!("segment is {len} bytes, larger than any the writer produces"),
        ));
    }
    // A read-only open starts the scan at an acknowledged mark in this segment: the
    // batches before it were synced before the mark was written, so they cannot be torn,
    // and their checksums are checked when they are read, like a sealed segment's. The
    // mark must end a verifying commit frame of its batch (or, at the segment's start,
    // follow the batch the header names). A writer scans the segment whole, so damage
    // anywhere in it stops the writer's open. Whenever the check or the scan from the mark
    // meets damage the whole segment is scanned instead, so a damaged log is judged as it
    // always was.
    let from_mark = opts
        .acknowledged
        .filter(|a| {
            opts.read_only
                && !opts.verify_on_open
                && a.end.segment == last_number
                && (FILE_HEADER_LEN..=len).contains(&a.end.offset)
        })
        .and_then(|a| {
            let from = a
                .end
                .offset
                .saturating_sub(MAX_COMMIT_FRAME)
                .max(FILE_HEADER_LEN);
            let tail = read_range(&path, &file, from, len).ok()?;
            let marked = if a.end.offset == FILE_HEADER_LEN {
                header.base_seq == a.seq
            } else {
                commit_ends_at(
                    &tail,
                    header.sealing,
                    from,
                    last_number,
                    a.seq,
                    a.end.offset,
                )
            };
            let after = tail.get(usize::try_from(a.end.offset - from).ok()?..)?;
            let scan = scan_from(after, header.sealing, a.end.offset, last_number, a.seq);
            (marked && scan.damage.is_none()).then_some(scan)
        });
    let seg = (header.sealing, last_number, header.base_seq);
    let (scan, buf) = match from_mark {
        Some(scan) => (scan, Vec::new()),
        None => match scan_in_windows(&path, &file, seg, len, opts.scan_window)? {
            Some(scan) => (scan, Vec::new()),
            None => {
                let buf = read_whole(&path, &file)?;
                (
                    scan_segment(&buf, header.sealing, last_number, header.base_seq),
                    buf,
                )
            }
        },
    };
    if let Some(d) = scan.damage {
        if !d.may_be_torn {
            return Err(LogError::corrupt(&path, d.offset, d.reason));
        }
        let after = usize::try_from(d.offset)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        if let Some(marker) = find_marker_after(&buf, header.sealing, after, last_number, 0) {
            let reason = format!(
                "{}, followed by a valid batch frame at byte {marker}",
                d.reason
            );
            return Err(LogError::corrupt(&path, d.offset, reason));
        }
        if let Some(acked) = opts.acknowledged.filter(|a| a.seq > scan.last_seq) {
            // The damaged bytes may be an acknowledged batch: never cut them.
            return Err(LogError::BehindAcknowledged {
                file: path,
                offset: d.offset,
                log_seq: scan.last_seq,
                acknowledged_seq: acked.seq,
            });
        }
        let torn = TornTail {
            file: path.clone(),
            offset: scan.committed_end,
            reason: format!("{} at byte {}", d.reason, d.offset),
        };
        if opts.read_only {
            report.torn_tail_left = Some(torn);
        } else {
            file.set_len(scan.committed_end)
                .and_then(|()| file.sync_all())
                .map_err(|e| LogError::io(&path, e))?;
            report.bytes_dropped = report
                .bytes_dropped
                .saturating_add(buf.len() as u64 - scan.committed_end);
            report.batches_dropped = 1;
            report.torn_tail = Some(torn);
        }
    }
    if let Some(acked) = opts.acknowledged.filter(|a| a.seq > scan.last_seq) {
        let (file, offset) = if acked.end.segment > last_number {
            (dir.join(segment_file_name(acked.end.segment)), 0)
        } else {
            (path, scan.committed_end)
        };
        return Err(LogError::BehindAcknowledged {
            file,
            offset,
            log_seq: scan.last_seq,
            acknowledged_seq: acked.seq,
        });
    }
    segments.push(SegRef {
        file: Arc::new(SegmentFile {
            number: last_number,
            path,
            file: Backing::File(file, header.sealing),
            base_seq: header.base_seq,
        }),
        end: scan.committed_end,
    });
    report.segments = last_number + 1;
    report.high_water = HighWater {
        seq: scan.last_seq,
        end: LogPos::new(last_number, scan.committed_end),
    };
    Ok(Recovered {
        segments,
        last_seq: scan.last_seq,
        report,
    })
}
