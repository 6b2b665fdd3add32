//! The append-only, checksummed segment log: the ledger's source of truth.
//!
//! Every accepted event's canonical bytes are appended here, in batches, and kept for
//! ever. Payloads are opaque bytes tagged with a `kind` byte. sled only holds indexes
//! that can be rebuilt by iterating this log.
//!
//! # Layout
//!
//! A log is a directory of segment files `<20-digit segment number>.log`, numbered from
//! 0 without gaps. Other files in the directory are ignored. The writer rotates to a new
//! segment when the next batch would push the active one past
//! [`LogOptions::segment_size`]; a batch never spans two segments (a batch larger than
//! the rotation size gets a segment of its own). Creating a segment writes and syncs its
//! header, then syncs the directory. Sealed segments are never written again.
//!
//! # Grammar (format version 2; byte diagrams in `docs/format.md`)
//!
//! ```text
//! segment := file_header batch*
//! file_header := "AKLOG" version:u8 reserved:u16=0 segment:u32le base_seq:u64le
//!                blake3(previous 20 bytes)[..12]                         (32 bytes)
//! batch  := frame(BatchBegin{seq, count, len}) frame(Entry{kind} ++ payload){count}
//!           frame(BatchCommit{seq, count, digest})
//! frame  := len:u32le checksum:[u8;16] body[len]
//! body   := cbor_record_header payload
//! checksum = XXH3-128(segment:u32le ++ offset:u64le ++ len:u32le ++ body)   (version 2,
//!            big-endian; version 1: blake3(the same bytes)[..16])
//! digest   = blake3(checksum(begin) ++ checksum(entry_0) ++ ...)[..16]
//! ```
//!
//! Segments of version 1 are read and, while one is the last segment, appended to in
//! version 1; segments created by this build are version 2 ([`format::Sealing`]).
//!
//! Record headers are CBOR arrays: `[0, seq, count, len]` (BatchBegin; `len` = bytes of
//! the rest of the batch), `[1, kind]` (Entry), `[2, seq, count, digest:bstr(16)]`
//! (BatchCommit). Batch seqs start at 1 and increase by exactly 1 across the whole log;
//! `base_seq` in a segment header is the seq of the last batch before that segment.
//! Checksums are bound to the frame's position, so a frame verifies only where it was
//! written. The commit digest chains the batch's frames together; a batch is visible
//! (to readers, iteration and recovery) only once its commit frame is present and valid.
//!
//! # Positions
//!
//! [`LogPos`] `{segment, offset}` is the byte offset of an entry's frame within its
//! segment file; it is stable for ever and orders like the log.
//!
//! # Durability
//!
//! [`Durability::Sync`] (default): each batch is one `pwrite` followed by one
//! `fdatasync`; `append_batch` returns only after both. The batch's writeback starts right
//! after the write, and the caller's work of [`SegmentLog::append_batch_from`] runs before
//! the `fdatasync`, which then waits for less (in a 1 M-event import, 0.56 s of syncs in
//! all instead of 1.18 s). [`Durability::Buffered`] skips
//! the fdatasync (call [`SegmentLog::sync`]): a crash may lose the unsynced tail but never
//! what was synced. Its batches' writeback starts right after the write too, so the
//! `fdatasync` that seals a full segment waits for little (an `audit --on-disk` of 1 M
//! events, whose scratch ledger is buffered, took 0.94 × the time: each of its rotations
//! waited about 36 ms for the segment's dirty pages). Entries are visible to readers as
//! soon as `append_batch` returns.
//! After any failed write or sync the log is poisoned and refuses appends (fail-stop):
//! the state of the file after a failed fsync is unknown, so only reopening (which
//! re-runs recovery) is safe.
//!
//! # Recovery: torn tail versus corruption
//!
//! Opening checks every segment header, the numbering, and scans the last segment whole
//! (all segments with [`LogOptions::verify_on_open`]; otherwise older segments are
//! verified as they are read). The first damage met in the last segment is a **torn
//! tail** if all of these hold:
//!
//! 1. it is damage an interrupted write can leave: a truncated frame, a length field out
//!    of range, a checksum mismatch, or end of file inside a batch; and
//! 2. no BatchBegin or BatchCommit frame verifies anywhere after the damaged byte.
//!
//! A torn tail is cut off at the end of the last complete batch (the file is truncated
//! and synced) and reported in [`RecoveryReport`]. Everything else is
//! [`LogError::Corrupt`] naming the file and byte offset: damage in a sealed segment,
//! damage followed by a valid batch frame (so a later write completed, or the batch's
//! own commit frame survived: it may have been acknowledged), a checksum-valid frame
//! that breaks the grammar, a digest or seq mismatch, bad magic/version/header checksum,
//! or a missing segment. A last segment with a zero or short header and nothing valid in
//! it (crash while creating it) is removed; if it was the only one a fresh log starts.
//!
//! Consequences worth knowing: under `Sync`, a damaged commit frame of the final batch
//! is indistinguishable from an interrupted write, so the log alone would drop that batch
//! (reported). [`LogOptions::acknowledged`] tells recovery how far the log was
//! acknowledged: a tail at or before that mark is never cut, and a log ending before it is
//! [`LogError::BehindAcknowledged`]. [`LogOptions::read_only`] recovers without writing,
//! and when the acknowledged mark lies in the last segment and ends a verifying commit
//! frame of its batch, it scans from the mark on: the batches before it were synced before
//! the mark was written (they cannot be torn), and their checksums are checked when they
//! are read; any damage met sends it back to the whole-segment scan. A writer still scans
//! the last segment whole, so its open stops at damage anywhere in it. It reads the
//! segment a window at a time into one buffer ([`LogOptions::scan_window`]); damage met
//! there sends it to a read of the whole segment, where it is judged as above.
//! Under `Buffered`, if the OS wrote unsynced pages out of order and a later batch
//! reached the disk while an earlier one did not, open reports `Corrupt` rather than
//! silently dropping the completed later batch.

mod backing;
mod cached_tail;
mod error;
pub mod format;
pub mod memory;
mod reader;
mod recovery;
mod scan;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use error::LogError;
pub use format::{
    DEFAULT_CACHED_TAIL, DEFAULT_SCAN_WINDOW, DEFAULT_SEGMENT_SIZE, MAX_BATCH_BYTES,
    MAX_BATCH_ENTRIES, MAX_PAYLOAD, MAX_SEGMENT_FILE, MAX_SEGMENT_SIZE,
};
pub use reader::{BatchEntry, LogBatch, LogBatches, LogEntry, LogIter, SegmentReader};
pub use recovery::segment_file_name;

use format::{frame_len, write_frame, Payload, Record, CHECKSUM_LEN, FILE_HEADER_LEN};

/// Where the payloads of a batch given to [`SegmentLog::append_batch_from`] were read from.
#[derive(Clone, Copy, Debug)]
pub struct ReadFrom<'a> {
    /// The file, which must not change while the log is open.
    pub source: &'a Arc<File>,
    /// Entry `i`'s payload is at `offsets[i]` in it, when that is `Some`.
    pub offsets: &'a [Option<u64>],
    /// The XXH3-64 of each payload (one per entry), when the caller read the payloads at
    /// their offsets itself and hashed them as it read them: an in-memory log then takes
    /// them as the file's bytes instead of reading them again to compare. Either way, every
    /// later read of a payload left in the file is checked against its hash.
    pub hashes: Option<&'a [u64]>,
}

/// Position of an entry: its frame's byte offset in segment file `segment`.
/// Stable for ever; `Ord` follows log order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogPos {
    /// Segment number.
    pub segment: u32,
    /// Byte offset of the entry's frame in the segment file.
    pub offset: u64,
}

impl LogPos {
    /// The position of the frame at `offset` in segment `segment`.
    pub const fn new(segment: u32, offset: u64) -> Self {
        LogPos { segment, offset }
    }
}

impl std::fmt::Display for LogPos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "segment {} byte {}", self.segment, self.offset)
    }
}

/// The committed extent of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HighWater {
    /// Seq of the last committed batch (0 for an empty log).
    pub seq: u64,
    /// Where the next batch will start (modulo rotation); pass it to `iter_from` to
    /// replay everything after this mark.
    pub end: LogPos,
}

impl Default for HighWater {
    /// The high-water mark of an empty log.
    fn default() -> Self {
        HighWater {
            seq: 0,
            end: LogPos::new(0, FILE_HEADER_LEN),
        }
    }
}

impl std::fmt::Display for HighWater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "batch {} ending at {}", self.seq, self.end)
    }
}

/// When appended batches reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// One fdatasync per batch before `append_batch` returns.
    #[default]
    Sync,
    /// No fdatasync; a crash may lose the unsynced tail, never corrupt what was synced.
    Buffered,
}

/// Options for [`SegmentLog::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOptions {
    /// Rotation size in bytes (at most [`MAX_SEGMENT_SIZE`]); tiny values are fine for tests.
    pub segment_size: u64,
    /// Whether each batch is fdatasynced before `append_batch` returns.
    pub durability: Durability,
    /// Scan and verify every segment at open, not just the last one.
    pub verify_on_open: bool,
    /// Open without writing anything: a torn tail is reported but not cut, a torn segment
    /// creation is ignored but not removed, no segment is created, appends fail.
    pub read_only: bool,
    /// The batches up to this mark were acknowledged: recovery refuses to end the log
    /// before it ([`LogError::BehindAcknowledged`]) instead of cutting or accepting less.
    pub acknowledged: Option<HighWater>,
    /// Under [`Durability::Sync`], bytes of the newest synced writes left in the page
    /// cache: older synced bytes are dropped from it as batches are appended, so a long
    /// import reuses the same pages (default [`DEFAULT_CACHED_TAIL`]). `None` leaves
    /// everything to the kernel, as `Buffered` logs always do.
    pub cached_tail: Option<u64>,
    /// Bytes of the last segment read at a time while recovery scans it (default
    /// [`DEFAULT_SCAN_WINDOW`]); a window grows to hold a longer batch. Recovery reads the
    /// segment whole only when it meets damage, and judges the damage on the whole file as
    /// before. Tiny values are fine for tests.
    pub scan_window: u64,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            segment_size: DEFAULT_SEGMENT_SIZE,
            durability: Durability::Sync,
            verify_on_open: false,
            read_only: false,
            acknowledged: None,
            cached_tail: Some(DEFAULT_CACHED_TAIL),
            scan_window: DEFAULT_SCAN_WINDOW,
        }
    }
}

/// What recovery found and did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Segment files in the log after recovery.
    pub segments: u32,
    /// The committed extent after recovery.
    pub high_water: HighWater,
    /// Bytes cut off as a torn tail (or a removed torn segment).
    pub bytes_dropped: u64,
    /// Incomplete batches dropped with the torn tail (0 or 1).
    pub batches_dropped: u32,
    /// Where a torn tail was cut, if one was.
    pub torn_tail: Option<TornTail>,
    /// The directory held no log; a new one was created.
    pub created: bool,
    /// A torn tail found by a read-only open: ignored, but left on disk.
    pub torn_tail_left: Option<TornTail>,
}

/// Where a torn tail was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// The segment that was cut.
    pub file: PathBuf,
    /// The file now ends here.
    pub offset: u64,
    /// Why the tail was judged torn.
    pub reason: String,
}

pub(crate) struct SegmentFile {
    pub(crate) number: u32,
    pub(crate) path: PathBuf,
    pub(crate) file: backing::Backing,
    pub(crate) base_seq: u64,
}

/// A segment and its committed length.
#[derive(Clone)]
pub(crate) struct SegRef {
    pub(crate) file: Arc<SegmentFile>,
    pub(crate) end: u64,
}

pub(crate) struct Shared {
    pub(crate) segments: Vec<SegRef>,
    pub(crate) last_seq: u64,
}

impl Shared {
    fn high_water(&self) -> HighWater {
        let end = self
            .segments
            .last()
            .map(|s| LogPos::new(s.file.number, s.end))
            .unwrap_or(LogPos::new(0, FILE_HEADER_LEN));
        HighWater {
            seq: self.last_seq,
            end,
        }
    }
}

/// Refuses a rotation size above [`MAX_SEGMENT_SIZE`].
fn check_segment_size(opts: &LogOptions) -> Result<(), LogError> {
    if opts.segment_size > MAX_SEGMENT_SIZE {
        return Err(LogError::TooLarge {
            what: "segment_size option",
            size: opts.segment_size,
            limit: MAX_SEGMENT_SIZE,
        });
    }
    Ok(())
}

/// The single writer of a segment log (wrap it in a `Mutex` to share); readers are
/// obtained with [`SegmentLog::reader`].
pub struct SegmentLog {
    /// Empty for an in-memory log.
    dir: PathBuf,
    in_memory: bool,
    opts: LogOptions,
    reader: SegmentReader,
    active: Arc<SegmentFile>,
    end: u64,
    last_seq: u64,
    poisoned: bool,
    buf: Vec<u8>,
    /// The synced bytes left in the page cache ([`LogOptions::cached_tail`]).
    cached: cached_tail::CachedTail,
}

impl SegmentLog {
    /// Opens (or creates) the log in `dir`, running recovery.
    pub fn open(
        dir: impl AsRef<Path>,
        opts: LogOptions,
    ) -> Result<(Self, RecoveryReport), LogError> {
        check_segment_size(&opts)?;
        let dir = dir.as_ref().to_path_buf();
        let rec = recovery::recover(&dir, &opts)?;
        let last = rec
            .segments
            .last()
            .cloned()
            .ok_or_else(|| LogError::corrupt(&dir, 0, "recovery produced no segment"))?;
        let shared = Shared {
            segments: rec.segments,
            last_seq: rec.last_seq,
        };
        let log = SegmentLog {
            dir,
            in_memory: false,
            reader: SegmentReader {
                shared: Arc::new(RwLock::new(shared)),
            },
            active: last.file,
            end: last.end,
            last_seq: rec.last_seq,
            poisoned: false,
            buf: Vec::new(),
            // Fed only by synced appends (`append_batch_from`): a `Buffered` log drops nothing.
            cached: cached_tail::CachedTail::new(opts.cached_tail),
            opts,
        };
        Ok((log, rec.report))
    }

    /// An empty log that lives in memory only: the same frames as on disk but without
    /// checksums ([`format::Sealing::Unchecked`]), no file, nothing durable
    /// (`opts.durability` is ignored). What an audit replays into.
    pub fn in_memory(opts: LogOptions) -> Result<Self, LogError> {
        check_segment_size(&opts)?;
        let first = Arc::new(recovery::memory_segment(0, 0, opts.segment_size));
        let shared = Shared {
            segments: vec![SegRef {
                file: Arc::clone(&first),
                end: FILE_HEADER_LEN,
            }],
            last_seq: 0,
        };
        Ok(SegmentLog {
            dir: PathBuf::new(),
            in_memory: true,
            opts,
            reader: SegmentReader {
                shared: Arc::new(RwLock::new(shared)),
            },
            active: first,
            end: FILE_HEADER_LEN,
            last_seq: 0,
            poisoned: false,
            buf: Vec::new(),
            cached: cached_tail::CachedTail::new(None),
        })
    }

    /// The log directory (empty for an in-memory log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A read handle usable from other threads concurrently with appends.
    pub fn reader(&self) -> SegmentReader {
        self.reader.clone()
    }

    /// Last committed batch seq and committed end.
    pub fn high_water(&self) -> HighWater {
        HighWater {
            seq: self.last_seq,
            end: LogPos::new(self.active.number, self.end),
        }
    }

    /// Synced bytes this log still leaves in the page cache under
    /// [`LogOptions::cached_tail`] (at most that; 0 when it keeps everything or is
    /// `Buffered`).
    pub fn cached_tail_bytes(&self) -> u64 {
        self.cached.held()
    }

    /// The durability this log was opened with.
    pub fn durability(&self) -> Durability {
        self.opts.durability
    }

    /// Swaps the active segment's handle for a read-only one, so that the OS refuses the
    /// next write: the workspace's tests' way to a real write failure.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn make_active_segment_read_only(&mut self) -> std::io::Result<()> {
        let active = &self.active;
        let read_only = std::fs::File::open(&active.path)?;
        self.active = Arc::new(SegmentFile {
            number: active.number,
            path: active.path.clone(),
            file: backing::Backing::File(read_only, active.file.sealing()),
            base_seq: active.base_seq,
        });
        Ok(())
    }

    /// The bytes of segment `n` as written, whatever backs it, and how many segments
    /// there are: for the workspace's tests.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn segment_bytes(&self, n: u32) -> Option<(Vec<u8>, usize)> {
        let shared = self.reader.shared.read().unwrap_or_else(|e| e.into_inner());
        let seg = shared.segments.get(n as usize)?;
        let mut bytes = vec![0u8; usize::try_from(seg.end).ok()?];
        seg.file.file.read_exact_at(&mut bytes, 0).ok()?;
        Some((bytes, shared.segments.len()))
    }

    /// True after a failed write or sync; appends then return [`LogError::Poisoned`].
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// Reads the entry at `pos`, verifying its checksum (a segment file's frames carry one).
    pub fn read(&self, pos: LogPos) -> Result<(u8, Vec<u8>), LogError> {
        self.reader.read(pos)
    }

    /// All committed entries in log order.
    pub fn iter(&self) -> LogIter {
        self.reader.iter()
    }

    /// Committed entries from batch boundary `start` on.
    pub fn iter_from(&self, start: LogPos) -> LogIter {
        self.reader.iter_from(start)
    }

    /// Appends one batch of `(kind, payload)` entries as a single write (plus one
    /// fdatasync under [`Durability::Sync`]); returns each entry's position. The batch
    /// gets seq `high_water().seq + 1`. An empty batch is a no-op and takes no seq.
    pub fn append_batch(&mut self, entries: &[(u8, &[u8])]) -> Result<Vec<LogPos>, LogError> {
        self.append_batch_from(entries, None, |_| ())
            .map(|(positions, ())| positions)
    }

    /// [`SegmentLog::append_batch`] of entries whose payloads were read from a file
    /// ([`ReadFrom`]), running `meanwhile` with the entries' positions once the batch is
    /// written and before it is synced. An in-memory log refers to those payloads there
    /// instead of keeping them ([`memory`]); a log on disk writes them as always. The file
    /// must not change while the log is open.
    ///
    /// The batch's writeback starts as soon as it is written (on Linux, through
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` of its range, which starts writing its dirty
    /// pages back without waiting and cannot drop them). Under [`Durability::Sync`] the
    /// disk so works while `meanwhile` runs and the `fdatasync` after it mostly waits for
    /// what is left: a caller with work to do before acknowledging the batch (the ledger
    /// applies it to its state, unseen until the sync succeeds) does it instead of sleeping
    /// through the sync. `meanwhile` does not run when the log refuses the batch or its write
    /// fails; when it ran and the sync then fails, the error is returned all the same.
    pub fn append_batch_from<T>(
        &mut self,
        entries: &[(u8, &[u8])],
        from: Option<ReadFrom<'_>>,
        meanwhile: impl FnOnce(&[LogPos]) -> T,
    ) -> Result<(Vec<LogPos>, T), LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        if self.opts.read_only {
            return Err(LogError::ReadOnly);
        }
        if entries.is_empty() {
            return Ok((Vec::new(), meanwhile(&[])));
        }
        if entries.len() > MAX_BATCH_ENTRIES {
            return Err(LogError::TooLarge {
                what: "batch entry count",
                size: entries.len() as u64,
                limit: MAX_BATCH_ENTRIES as u64,
            });
        }
        if let Some((_, big)) = entries.iter().find(|(_, p)| p.len() > MAX_PAYLOAD) {
            return Err(LogError::TooLarge {
                what: "entry payload",
                size: big.len() as u64,
                limit: MAX_PAYLOAD as u64,
            });
        }
        let seq = self.last_seq.checked_add(1).ok_or(LogError::TooLarge {
            what: "batch seq",
            size: u64::MAX,
            limit: u64::MAX - 1,
        })?;
        let count = entries.len() as u32;
        let commit_placeholder = Record::BatchCommit {
            seq,
            count,
            digest: [0; CHECKSUM_LEN],
        };
        let rest_len: u64 = entries
            .iter()
            .map(|(kind, p)| frame_len(&Record::Entry { kind: *kind }, p.len()) as u64)
            .sum::<u64>()
            + frame_len(&commit_placeholder, 0) as u64;
        let begin = Record::BatchBegin {
            seq,
            count,
            len: rest_len,
        };
        let total = frame_len(&begin, 0) as u64 + rest_len;
        if total > MAX_BATCH_BYTES {
            return Err(LogError::TooLarge {
                what: "encoded batch bytes",
                size: total,
                limit: MAX_BATCH_BYTES,
            });
        }
        if self.end > FILE_HEADER_LEN && self.end.saturating_add(total) > self.opts.segment_size {
            self.rotate().inspect_err(|_| self.poisoned = true)?;
        }

        let (segment, base) = (self.active.number, self.end);
        let sealing = self.active.file.sealing();
        let lifts = match from {
            Some(from) if self.in_memory => lifts(entries, base, &begin, from),
            _ => Vec::new(),
        };
        // Appends the batch's frames, which start at segment offset `base`, to `buf`;
        // without the payloads of the entries `left_out` marks (those stay in their source).
        let encode = |buf: &mut Vec<u8>, left_out: &[bool]| {
            let mut sums = Vec::with_capacity(entries.len() + 1);
            let mut positions = Vec::with_capacity(entries.len());
            sums.push(write_frame(buf, sealing, segment, base, &begin, &[]));
            let mut at = base + frame_len(&begin, 0) as u64;
            for (i, (kind, payload)) in entries.iter().enumerate() {
                positions.push(LogPos::new(segment, at));
                let entry = Record::Entry { kind: *kind };
                let framed = match left_out.get(i) {
                    Some(true) => Payload::LeftOut(payload),
                    _ => Payload::Written(payload),
                };
                sums.push(write_frame(buf, sealing, segment, at, &entry, framed));
                at += frame_len(&entry, payload.len()) as u64;
            }
            let commit = Record::BatchCommit {
                seq,
                count,
                digest: sealing.digest(&sums),
            };
            write_frame(buf, sealing, segment, at, &commit, &[]);
            debug_assert_eq!(at + frame_len(&commit, 0) as u64, base + total);
            positions
        };
        let mut buf = std::mem::take(&mut self.buf);
        let written = if self.fail_writes_for_test() {
            Err(std::io::Error::other("injected write failure"))
        } else {
            self.active.file.append(base, &mut buf, encode, &lifts)
        };
        self.buf = buf;
        let positions = written.map_err(|e| {
            self.poisoned = true;
            LogError::io(&self.active.path, e)
        })?;
        let sync = self.opts.durability == Durability::Sync;
        self.active.file.start_writeback(base, base + total);
        let done = meanwhile(&positions);
        if sync {
            self.sync_batch().map_err(|e| {
                self.poisoned = true;
                LogError::io(&self.active.path, e)
            })?;
            self.cached.synced(&self.active, base, base + total);
        }
        self.end = base + total;
        self.last_seq = seq;
        self.publish();
        Ok((positions, done))
    }

    /// Syncs the batch just written.
    fn sync_batch(&self) -> std::io::Result<()> {
        #[cfg(feature = "internals")]
        if crate::internals::FAIL_LOG_SYNCS.with(|f| f.get()) {
            return Err(std::io::Error::other("injected sync failure"));
        }
        self.active.file.sync_data()
    }

    #[cfg(not(feature = "internals"))]
    fn fail_writes_for_test(&self) -> bool {
        false
    }

    #[cfg(feature = "internals")]
    fn fail_writes_for_test(&self) -> bool {
        crate::internals::FAIL_LOG_WRITES.with(|f| f.get())
    }

    /// Makes everything appended so far durable (fdatasync of the active segment).
    pub fn sync(&mut self) -> Result<(), LogError> {
        if self.opts.read_only {
            return Ok(());
        }
        if self.poisoned {
            return Err(LogError::Poisoned);
        }
        self.active.file.sync_data().map_err(|e| {
            self.poisoned = true;
            LogError::io(&self.active.path, e)
        })
    }

    fn rotate(&mut self) -> Result<(), LogError> {
        // A sealed segment is complete on disk before the next one exists, even in
        // Buffered mode: damage in a sealed segment is then always corruption.
        self.active
            .file
            .sync_data()
            .map_err(|e| LogError::io(&self.active.path, e))?;
        let number = self
            .active
            .number
            .checked_add(1)
            .ok_or(LogError::TooLarge {
                what: "segment number",
                size: u64::from(u32::MAX) + 1,
                limit: u32::MAX.into(),
            })?;
        let seg = Arc::new(if self.in_memory {
            recovery::memory_segment(number, self.last_seq, self.opts.segment_size)
        } else {
            recovery::create_segment(&self.dir, number, self.last_seq)?
        });
        {
            let mut shared = self
                .reader
                .shared
                .write()
                .unwrap_or_else(|e| e.into_inner());
            shared.segments.push(SegRef {
                file: seg.clone(),
                end: FILE_HEADER_LEN,
            });
        }
        self.active = seg;
        self.end = FILE_HEADER_LEN;
        Ok(())
    }

    fn publish(&self) {
        let mut shared = self
            .reader
            .shared
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(last) = shared.segments.last_mut() {
            last.end = self.end;
        }
        shared.last_seq = self.last_seq;
    }
}

/// The payloads of `entries` (a batch appended at `base`, opened by `begin`) to leave in
/// `source`: those with an offset there.
fn lifts<'a>(
    entries: &[(u8, &'a [u8])],
    base: u64,
    begin: &Record,
    from: ReadFrom<'_>,
) -> Vec<memory::Lift<'a>> {
    let mut at = base + frame_len(begin, 0) as u64;
    let mut lifts = Vec::with_capacity(entries.len());
    for (i, (kind, payload)) in entries.iter().enumerate() {
        let entry = Record::Entry { kind: *kind };
        let payload_at = at + frame_len(&entry, 0) as u64;
        if let Some(Some(offset)) = from.offsets.get(i) {
            lifts.push(memory::Lift {
                entry: i,
                payload,
                at: payload_at,
                source: Arc::clone(from.source),
                offset: *offset,
                read: from.hashes.and_then(|h| h.get(i).copied()),
            });
        }
        at += frame_len(&entry, payload.len()) as u64;
    }
    lifts
}

impl Drop for SegmentLog {
    /// Best effort: in Buffered mode, sync what was appended.
    fn drop(&mut self) {
        if !self.poisoned && !self.opts.read_only && self.opts.durability == Durability::Buffered {
            let _ = self.active.file.sync_data();
        }
    }
}
