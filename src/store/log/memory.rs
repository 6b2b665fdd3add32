//! The bytes of an in-memory segment: held in memory, except entry payloads that were read
//! from a file which stays open and unchanged (the log an audit replays), and which the
//! segment refers to there instead of copying ("holes"). Reads assemble the same bytes
//! either way, so frames, the reader and the iterator cannot tell the difference; an audit's
//! memory then follows the frame headers (about 40 bytes an event), not the log's size.
//!
//! A payload becomes a hole only when its bytes in the file are the payload's. The caller
//! either says it read them there itself and gives their hash ([`Lift::read`]: the ledger's
//! own import of a log file, which hashes each item as it reads it), or they are read back
//! and compared as the batch is appended (one read per batch), and a wrong offset leaves the
//! payload held. Each hole keeps a 64-bit XXH3 of its payload, and every read of it is
//! checked against it: a file that changed after its bytes were read (or a wrong offset
//! said to be right) is an `InvalidData` error when the hole is read, never bytes other
//! than those appended.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

/// A payload to leave in `source` at `offset`, for the segment bytes from `at` on.
#[derive(Clone, Debug)]
pub struct Lift<'a> {
    /// The index of its entry in the batch.
    pub entry: usize,
    /// Its bytes, as read (compared with the source's before it is left there, unless
    /// [`Lift::read`] vouches for them).
    pub payload: &'a [u8],
    /// Segment offset of the payload.
    pub at: u64,
    /// The file it was read from.
    pub source: Arc<File>,
    /// Where it is in that file.
    pub offset: u64,
    /// The XXH3-64 of `payload`, when the caller read it from `source` at `offset` itself:
    /// it is then taken as the file's bytes without being read again to be compared.
    /// `None`: it is compared first.
    pub read: Option<u64>,
}

/// One payload left in its source.
#[derive(Clone, Copy, Debug)]
struct Hole {
    /// Segment offset of the payload.
    at: u64,
    /// Bytes of all the holes before this one.
    before: u64,
    /// Where the payload is in its source.
    offset: u64,
    len: u32,
    /// Index into `sources`.
    source: u32,
    /// XXH3-64 of the payload, checked at every read.
    hash: u64,
}

impl Hole {
    fn end(&self) -> u64 {
        self.at + u64::from(self.len)
    }
}

/// Bytes the comparison of a batch's lifted payloads reads at once: past it, each payload is
/// read alone.
const COMPARE_SPAN: u64 = 16 << 20;

/// An in-memory segment's bytes.
pub(crate) struct MemorySegment {
    /// The segment's bytes, holes cut out.
    held: Vec<u8>,
    /// Ascending by offset, none overlapping.
    holes: Vec<Hole>,
    /// The files holes refer to.
    sources: Vec<Arc<File>>,
    /// Where [`matching`] reads the sources, kept from batch to batch (at most
    /// [`COMPARE_SPAN`] bytes).
    compare: Vec<u8>,
}

impl MemorySegment {
    /// A segment holding `header`, with room reserved for `capacity` bytes so that appends
    /// never copy what is there.
    pub(crate) fn new(header: &[u8], capacity: u64) -> MemorySegment {
        let mut held = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0).max(header.len()));
        held.extend_from_slice(header);
        MemorySegment {
            held,
            holes: Vec::new(),
            sources: Vec::new(),
            compare: Vec::new(),
        }
    }

    /// Bytes of all holes.
    fn hole_bytes(&self) -> u64 {
        self.holes.last().map_or(0, |h| h.before + u64::from(h.len))
    }

    /// Bytes held in memory (holes excluded).
    pub(crate) fn held(&self) -> u64 {
        self.held.len() as u64
    }

    /// The segment's length.
    pub(crate) fn len(&self) -> u64 {
        self.held.len() as u64 + self.hole_bytes()
    }

    /// Fills `buf` from segment offset `offset`; past the end is `UnexpectedEof`.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let eof = || io::Error::from(io::ErrorKind::UnexpectedEof);
        let end = offset.checked_add(buf.len() as u64).ok_or_else(eof)?;
        if end > self.len() {
            return Err(eof());
        }
        let mut at = offset;
        let mut i = self.holes.partition_point(|h| h.end() <= at);
        while at < end {
            let from = usize::try_from(at - offset).map_err(|_| eof())?;
            let hole = self.holes.get(i);
            let piece_end = match hole {
                Some(h) if h.at <= at => h.end(),
                Some(h) => h.at,
                None => end,
            }
            .min(end);
            let to = usize::try_from(piece_end - offset).map_err(|_| eof())?;
            let dst = buf.get_mut(from..to).ok_or_else(eof)?;
            match hole {
                Some(h) if h.at <= at => {
                    let source = self.sources.get(h.source as usize).ok_or_else(eof)?;
                    read_hole(source, h, at - h.at, dst)?;
                    i += 1;
                }
                _ => {
                    let skipped = hole.map_or_else(|| self.hole_bytes(), |h| h.before);
                    let start = usize::try_from(at - skipped).map_err(|_| eof())?;
                    let src = self.held.get(start..start + dst.len()).ok_or_else(eof)?;
                    dst.copy_from_slice(src);
                }
            }
            at = piece_end;
        }
        Ok(())
    }

    /// Appends what `encode` writes at `offset`, which must be the segment's end
    /// (`InvalidInput` otherwise, nothing written), straight into the held bytes. The
    /// payloads of `lifts` that match their source stay there: `encode` is told to write
    /// those entries without their payloads (by entry index), and each becomes a hole.
    pub(crate) fn append<T>(
        &mut self,
        offset: u64,
        encode: impl FnOnce(&mut Vec<u8>, &[bool]) -> T,
        lifts: &[Lift<'_>],
    ) -> io::Result<T> {
        if self.len() != offset {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        if lifts.is_empty() {
            return Ok(encode(&mut self.held, &[]));
        }
        // The matching lifts, as holes (each with its length): they ascend and never
        // overlap, and a lift out of that order stays held.
        let mut holes = Vec::new();
        let mut left_out = Vec::new();
        let mut end = offset;
        for (lift, _) in lifts
            .iter()
            .zip(matching(lifts, &mut self.compare))
            .filter(|(_, ok)| *ok)
        {
            let Ok(len) = u32::try_from(lift.payload.len()) else {
                continue;
            };
            if lift.at < end {
                continue;
            }
            end = lift.at.saturating_add(u64::from(len));
            if left_out.len() <= lift.entry {
                left_out.resize(lift.entry + 1, false);
            }
            if let Some(slot) = left_out.get_mut(lift.entry) {
                *slot = true;
            }
            holes.push((lift, len));
        }
        let out = encode(&mut self.held, &left_out);
        for (lift, len) in holes {
            let source = self.source_index(&lift.source);
            debug_assert!(lift.read.is_none_or(|h| h == xxh3_64(lift.payload)));
            self.holes.push(Hole {
                at: lift.at,
                before: self.hole_bytes(),
                offset: lift.offset,
                len,
                source,
                hash: lift.read.unwrap_or_else(|| xxh3_64(lift.payload)),
            });
        }
        Ok(out)
    }

    /// The index of `source` among the files holes refer to, added when new.
    fn source_index(&mut self, source: &Arc<File>) -> u32 {
        let known = self.sources.iter().position(|s| Arc::ptr_eq(s, source));
        let index = known.unwrap_or_else(|| {
            self.sources.push(Arc::clone(source));
            self.sources.len() - 1
        });
        u32::try_from(index).unwrap_or(u32::MAX)
    }
}

/// Fills `dst` from byte `from` of hole `h`'s payload in `source`, once the whole payload
/// read there is found to hash as it did when it was appended.
fn read_hole(source: &File, h: &Hole, from: u64, dst: &mut [u8]) -> io::Result<()> {
    let changed = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the {} bytes at offset {} of the file an event was read from are not what was read there: the file changed while the in-memory log referred to it",
                h.len, h.offset
            ),
        )
    };
    // A read of the whole payload lands in `dst`; a read of part of it, in a buffer of its
    // own, from which the part is copied once the whole is checked.
    let len = h.len as usize;
    let whole = from == 0 && dst.len() == len;
    let mut payload = if whole { Vec::new() } else { vec![0u8; len] };
    let read: &mut [u8] = if whole { dst } else { &mut payload };
    source.read_exact_at(read, h.offset)?;
    if xxh3_64(read) != h.hash {
        return Err(changed());
    }
    if !whole {
        let part = usize::try_from(from)
            .ok()
            .and_then(|from| payload.get(from..from.checked_add(dst.len())?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        dst.copy_from_slice(part);
    }
    Ok(())
}

/// For each lift, whether its payload is exactly what its source holds at its offset: a
/// lift [`Lift::read`] is taken at its word, the others are compared. Lifts of one
/// source close together are compared from one read, into `buf`.
fn matching(lifts: &[Lift<'_>], buf: &mut Vec<u8>) -> Vec<bool> {
    let mut out: Vec<bool> = lifts.iter().map(|l| l.read.is_some()).collect();
    let mut i = 0;
    while let Some(first) = lifts.get(i) {
        if first.read.is_some() {
            i += 1;
            continue;
        }
        // The run of lifts from `first` that one read of their source can cover.
        let lo = first.offset;
        let mut hi = lo;
        let mut j = i;
        while let Some(l) = lifts.get(j) {
            let end = l.offset.saturating_add(l.payload.len() as u64);
            if l.read.is_some()
                || !Arc::ptr_eq(&l.source, &first.source)
                || l.offset < lo
                || end.saturating_sub(lo) > COMPARE_SPAN
            {
                break;
            }
            hi = hi.max(end);
            j += 1;
        }
        let j = j.max(i + 1);
        let want = usize::try_from(hi - lo).unwrap_or(0);
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let read = buf.get_mut(..want).unwrap_or_default();
        let span = first.source.read_exact_at(read, lo).is_ok();
        for (k, l) in lifts.iter().enumerate().take(j).skip(i) {
            let ok = if span {
                let stored = usize::try_from(l.offset - lo)
                    .ok()
                    .and_then(|s| read.get(s..s.checked_add(l.payload.len())?));
                stored == Some(l.payload)
            } else {
                // Something in the span is unreadable: each on its own.
                let mut alone = vec![0u8; l.payload.len()];
                l.source.read_exact_at(&mut alone, l.offset).is_ok() && alone == l.payload
            };
            if let Some(slot) = out.get_mut(k) {
                *slot = ok;
            }
        }
        i = j;
    }
    out
}
