//! Where a segment's bytes live: its file, or — for an in-memory log
//! ([`SegmentLog::in_memory`](super::SegmentLog::in_memory), which an audit replays into
//! so that reading a log writes nothing) — memory, save the payloads it may leave in the
//! file they were read from ([`super::memory`]). Both hold the same frames, so the reader
//! and the iterator work alike on either; only a file's frames carry checksums, of the
//! kind its header names ([`Sealing`]: memory neither tears nor rots, and its only reader
//! is the process that wrote it).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::RwLock;

use super::format::Sealing;
use super::memory::{Lift, MemorySegment};
use crate::store::page_cache;

/// A segment's bytes.
pub(crate) enum Backing {
    /// A segment file on disk, and how its frames are checksummed (its header's version).
    File(File, Sealing),
    /// The bytes of a segment of an in-memory log.
    Memory(RwLock<MemorySegment>),
}

impl Backing {
    /// An in-memory segment holding `header`, with room reserved for `capacity` bytes so
    /// that appends never copy what is there.
    pub(crate) fn memory(header: &[u8], capacity: u64) -> Backing {
        Backing::Memory(RwLock::new(MemorySegment::new(header, capacity)))
    }

    /// Whether this segment's frames carry checksums.
    pub(crate) fn sealing(&self) -> Sealing {
        match self {
            Backing::File(_, sealing) => *sealing,
            Backing::Memory(_) => Sealing::Unchecked,
        }
    }

    /// Bytes a positioned read of one frame may take beyond the frame: a file's reads cost
    /// a system call each, so reading ahead saves the second one; memory's cost nothing,
    /// and past the frame they could reach the file of another entry's payload.
    pub(crate) fn read_ahead(&self, wanted: usize) -> usize {
        match self {
            Backing::File(..) => wanted,
            Backing::Memory(_) => 0,
        }
    }

    /// Fills `buf` from `offset`; reading past the end is `UnexpectedEof`, as for a file.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        match self {
            Backing::File(file, _) => file.read_exact_at(buf, offset),
            Backing::Memory(segment) => segment
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .read_exact_at(buf, offset),
        }
    }

    /// Appends what `encode` writes at `offset`, the segment's committed end: into
    /// `scratch` (cleared first) and then to the file with one positioned write, or, in
    /// memory, straight into the segment's bytes, with no copy, leaving the payloads of
    /// `lifts` that match their source there (`encode` is told which entries to write
    /// without their payloads). A file holds every byte: `lifts` are for memory only. In
    /// memory the log only ever appends, so `offset` must be where the bytes end (anything
    /// else would be a bug: `InvalidInput`, nothing written).
    pub(crate) fn append<T>(
        &self,
        offset: u64,
        scratch: &mut Vec<u8>,
        encode: impl FnOnce(&mut Vec<u8>, &[bool]) -> T,
        lifts: &[Lift<'_>],
    ) -> io::Result<T> {
        match self {
            Backing::File(file, _) => {
                scratch.clear();
                let out = encode(scratch, &[]);
                file.write_all_at(scratch, offset)?;
                Ok(out)
            }
            Backing::Memory(segment) => segment
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .append(offset, encode, lifts),
        }
    }

    /// Bytes this segment holds in memory: 0 for a file.
    pub(crate) fn in_memory(&self) -> u64 {
        match self {
            Backing::File(..) => 0,
            Backing::Memory(segment) => segment.read().map_or(0, |s| s.held()),
        }
    }

    /// Asks the kernel to drop the cached pages wholly inside bytes `[from, to)` of a
    /// segment file, which must be synced (clean pages only: nothing is lost, the bytes are
    /// read from the disk when next asked for). Advice (`store::page_cache`). Memory has
    /// no cache to drop.
    pub(crate) fn drop_cached(&self, from: u64, to: u64) {
        if let Backing::File(file, _) = self {
            page_cache::drop_cached(file, from, to);
        }
    }

    /// Starts writing bytes `[from, to)` of a segment file back to the disk without waiting
    /// for them, so that the [`Backing::sync_data`] that follows mostly waits for what is
    /// left. Advice (`store::page_cache`): where it starts nothing, the sync does all the
    /// writing.
    pub(crate) fn start_writeback(&self, from: u64, to: u64) {
        if let Backing::File(file, _) = self {
            page_cache::start_writeback(file, from, to);
        }
    }

    /// Makes written bytes durable; memory has nothing to make durable.
    pub(crate) fn sync_data(&self) -> io::Result<()> {
        match self {
            Backing::File(file, _) => file.sync_data(),
            Backing::Memory(_) => Ok(()),
        }
    }
}
