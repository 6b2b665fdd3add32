//! The two small files at a ledger's root: the directory lock and the acknowledged marker.
//!
//! * `lock`: a writer holds an exclusive `flock` on it from before it touches anything
//!   until it is dropped; a read-only open holds a shared one when it can. So one writer
//!   at a time, and a writer never starts (recovers, cuts a torn tail, rebuilds derived
//!   files) under a locked reader. A reader that finds the writer lock held reads beside
//!   the writer, unlocked, from what the writer only ever appends or replaces whole.
//! * `acked`: how far the log was acknowledged (batch seq, its end, entries up to it), in
//!   two checksummed slots written alternately (byte layout in `docs/format.md`). It is
//!   written after a batch is durable in the log, so it never claims more than the log
//!   held; on open the log must reach it, or acknowledged events are missing.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::log::{HighWater, LogPos};
use crate::layout;
use crate::limits::LOCK_PATIENCE;
use std::time::Duration;

/// Bytes of one marker slot.
pub const SLOT_LEN: usize = 32;
/// Bytes of the slot covered by its checksum.
const SLOT_BODY: usize = 28;

/// Why the root lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another open ledger holds it (exclusively, or shared when we want to write).
    Held,
    /// The OS failed.
    Io(PathBuf, std::io::Error),
}

/// A held lock on `DIR/lock`; released on drop.
#[derive(Debug)]
pub struct RootLock {
    _file: Option<File>,
}

impl RootLock {
    /// The exclusive writer lock (the file is created if missing).
    pub fn exclusive(dir: &Path) -> Result<RootLock, LockError> {
        let path = dir.join(layout::LOCK);
        let file = open_or_create(&path).map_err(|e| LockError::Io(path.clone(), e))?;
        with_patience(LOCK_PATIENCE, || {
            fs2::FileExt::try_lock_exclusive(&file).map_err(|e| contended(&path, e))
        })?;
        Ok(RootLock { _file: Some(file) })
    }

    /// A shared reader lock, waiting up to `patience` while it is held: `Held` after that
    /// means a writer holds the ledger (a read-only open then reads beside it, see
    /// `ledger/open.rs`). A ledger with no lock file (never opened for writing since lock
    /// files exist, or on media where none can be created) is read unlocked.
    pub fn shared(dir: &Path, patience: Duration) -> Result<RootLock, LockError> {
        let path = dir.join(layout::LOCK);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(RootLock { _file: None }),
            Err(e) => return Err(LockError::Io(path, e)),
        };
        with_patience(patience, || {
            fs2::FileExt::try_lock_shared(&file).map_err(|e| contended(&path, e))
        })?;
        Ok(RootLock { _file: Some(file) })
    }
}

/// Opens `path` for reading and writing, creating it empty when missing.
fn open_or_create(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

fn contended(path: &Path, e: std::io::Error) -> LockError {
    if e.kind() == fs2::lock_contended_error().kind() || e.kind() == ErrorKind::WouldBlock {
        LockError::Held
    } else {
        LockError::Io(path.to_owned(), e)
    }
}

/// Tries `take` until it is not `Held`, for at most `patience`: a lock can be held for a
/// moment by a process that did not open the ledger — a child forked by the process that
/// did keeps the lock's open file until it execs — and that must not look like a second
/// writer. A real second writer still gets `Held` once the patience is spent.
fn with_patience(
    patience: Duration,
    mut take: impl FnMut() -> Result<(), LockError>,
) -> Result<(), LockError> {
    let deadline = std::time::Instant::now() + patience;
    loop {
        match take() {
            Err(LockError::Held) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// What the marker says: the log was acknowledged up to `high` holding `entries` entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked {
    /// The last acknowledged batch and where it ends.
    pub high: HighWater,
    /// Log entries in batches `1..=high.seq`.
    pub entries: u64,
}

/// Reads the marker: the valid slot with the higher seq, `None` when there is none.
pub fn read_acked(dir: &Path) -> Result<Option<Acked>, (PathBuf, std::io::Error)> {
    let path = dir.join(layout::ACKED);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((path, e)),
    };
    Ok(bytes
        .chunks(SLOT_LEN)
        .filter_map(decode_slot)
        .max_by_key(|a| a.high.seq))
}

/// The marker file, open for writing.
#[derive(Debug)]
pub struct AckWriter {
    path: PathBuf,
    file: File,
}

impl AckWriter {
    /// Opens (creating) `DIR/acked`.
    pub fn open(dir: &Path) -> Result<AckWriter, (PathBuf, std::io::Error)> {
        let path = dir.join(layout::ACKED);
        let file = open_or_create(&path).map_err(|e| (path.clone(), e))?;
        Ok(AckWriter { path, file })
    }

    /// Records `acked` in the slot its seq's parity selects (the other slot keeps the
    /// previous mark, so a torn write loses at most this one). Not synced: the log
    /// batch it describes already is, so the marker never claims more than the disk holds.
    pub fn write(&self, acked: Acked) -> Result<(), (PathBuf, std::io::Error)> {
        let offset = (acked.high.seq % 2) * SLOT_LEN as u64;
        self.file
            .write_all_at(&encode_slot(acked), offset)
            .map_err(|e| (self.path.clone(), e))
    }

    /// Makes the marker durable.
    pub fn sync(&self) -> Result<(), (PathBuf, std::io::Error)> {
        self.file.sync_data().map_err(|e| (self.path.clone(), e))
    }
}

fn encode_slot(acked: Acked) -> [u8; SLOT_LEN] {
    let mut slot = [0u8; SLOT_LEN];
    let fields = acked
        .high
        .seq
        .to_le_bytes()
        .into_iter()
        .chain(acked.high.end.segment.to_le_bytes())
        .chain(acked.high.end.offset.to_le_bytes())
        .chain(acked.entries.to_le_bytes());
    for (byte, value) in slot.iter_mut().zip(fields) {
        *byte = value;
    }
    let sum = checksum(slot.get(..SLOT_BODY).unwrap_or_default());
    for (byte, value) in slot.iter_mut().skip(SLOT_BODY).zip(sum) {
        *byte = value;
    }
    slot
}

fn checksum(body: &[u8]) -> [u8; 4] {
    let hash = blake3::hash(body);
    let mut out = [0u8; 4];
    out.copy_from_slice(hash.as_bytes().get(..4).unwrap_or(&[0; 4]));
    out
}

fn decode_slot(slot: &[u8]) -> Option<Acked> {
    let body = slot.get(..SLOT_BODY)?;
    if slot.get(SLOT_BODY..SLOT_LEN)? != checksum(body) || body.iter().all(|&b| b == 0) {
        return None;
    }
    let u64_at = |at: usize| Some(u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?));
    let segment = u32::from_le_bytes(body.get(8..12)?.try_into().ok()?);
    Some(Acked {
        high: HighWater {
            seq: u64_at(0)?,
            end: LogPos::new(segment, u64_at(12)?),
        },
        entries: u64_at(20)?,
    })
}
