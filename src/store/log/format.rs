//! Byte-level format of the segment log: limits, file header, frames and record headers.
//!
//! Everything here is pure (no IO). Parsing never panics on arbitrary input: all slicing
//! goes through `get`, all arithmetic on lengths read from disk is checked.

use ciborium::value::{Integer, Value};

/// File magic at offset 0 of every segment.
pub const MAGIC: [u8; 5] = *b"AKLOG";
/// Format version new segments are written with (frame checksums in XXH3-128). Segments of
/// version 1 (blake3 frame checksums) are still read, and appended to while one is the
/// active segment; any other version is refused.
pub const FORMAT_VERSION: u8 = NEW_SEGMENT_SEALING.version();
/// How the frames of segments created by this build are checksummed (format 2).
pub const NEW_SEGMENT_SEALING: Sealing = Sealing::Xxh3;
/// Size of the segment file header; the first frame starts here.
pub const FILE_HEADER_LEN: u64 = 32;
/// Length of a frame checksum and of the batch digest (128 bits).
pub const CHECKSUM_LEN: usize = 16;
/// Frame prefix: body length (u32 LE) + checksum.
pub const FRAME_PREFIX_LEN: usize = 4 + CHECKSUM_LEN;
/// Largest entry payload: the ledger caps an event's canonical bytes at 1 MiB.
pub const MAX_PAYLOAD: usize = 1 << 20;
/// Room for the CBOR record header in front of a payload (the largest header is < 48 bytes).
pub const MAX_RECORD_HEADER: usize = 64;
/// Largest frame body accepted: a longer length field can only be damage.
pub const MAX_BODY: usize = MAX_PAYLOAD + MAX_RECORD_HEADER;
/// Most entries in one batch: bounds the positions vector and per-batch bookkeeping.
pub const MAX_BATCH_ENTRIES: usize = 1 << 16;
/// Largest encoded batch: a batch is written with one write and read back whole, so this
/// bounds the memory of the writer and of readers.
pub const MAX_BATCH_BYTES: u64 = 256 << 20;
/// Default rotation size of a segment.
pub const DEFAULT_SEGMENT_SIZE: u64 = 64 << 20;
/// Default bytes of a durable log's newest writes left in the page cache once synced
/// ([`super::LogOptions::cached_tail`]): about 30 000 events of 1 KiB, what replication,
/// sync and the sidecar read back soon after writing, while a bulk import keeps reusing
/// the same 32 MiB of pages instead of filling the cache with a log nobody reads yet.
pub const DEFAULT_CACHED_TAIL: u64 = 32 << 20;
/// Default bytes of the last segment recovery reads at a time while a writer's open scans
/// it ([`super::LogOptions::scan_window`]): a few import batches of 1000 events. One
/// buffer reused for the whole segment instead of the whole segment in fresh memory: the
/// writer's open of a ledger whose last segment holds 63 MB took 60–70 ms and 78 MB peak,
/// most of it faulting in the buffer's pages.
pub const DEFAULT_SCAN_WINDOW: u64 = 8 << 20;
/// Largest configurable rotation size: recovery reads the last segment whole into memory
/// when it finds damage there.
pub const MAX_SEGMENT_SIZE: u64 = 1 << 30;
/// Largest segment file the writer can produce (a batch larger than the rotation size gets
/// a segment of its own); a bigger file is not ours.
pub const MAX_SEGMENT_FILE: u64 = MAX_SEGMENT_SIZE + FILE_HEADER_LEN + MAX_BATCH_BYTES;

const TAG_BEGIN: u64 = 0;
/// The tag of an entry record (docs/format.md).
pub const TAG_ENTRY: u64 = 1;
const TAG_COMMIT: u64 = 2;

/// Decoded segment file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Segment number; must match the file name.
    pub segment: u32,
    /// Seq of the last batch committed before this segment (0 if none).
    pub base_seq: u64,
    /// How the segment's frames are checksummed, named by the header's format version.
    pub sealing: Sealing,
}

/// Why a file header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than [`FILE_HEADER_LEN`] bytes.
    Short,
    /// All header bytes are zero (a file whose header never reached the disk).
    Zeroed,
    /// The file does not start with `AKLOG`.
    BadMagic,
    /// An unknown format version.
    BadVersion(u8),
    /// The header checksum does not match.
    BadChecksum,
}

impl HeaderError {
    /// A human description.
    pub fn describe(self) -> String {
        match self {
            HeaderError::Short => "file shorter than the segment header".into(),
            HeaderError::Zeroed => "segment header is all zeros".into(),
            HeaderError::BadMagic => "bad magic (not an AKLOG segment)".into(),
            HeaderError::BadVersion(v) => format!("unsupported format version {v}"),
            HeaderError::BadChecksum => "segment header checksum mismatch".into(),
        }
    }
}

fn hash_prefix<const N: usize>(hash: &blake3::Hash) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(hash.as_bytes()) {
        *o = *b;
    }
    out
}

/// The 32 header bytes of a segment.
pub fn encode_file_header(h: FileHeader) -> [u8; FILE_HEADER_LEN as usize] {
    let mut out = [0u8; FILE_HEADER_LEN as usize];
    out[..5].copy_from_slice(&MAGIC);
    out[5] = h.sealing.version();
    // 6..8 reserved, zero.
    out[8..12].copy_from_slice(&h.segment.to_le_bytes());
    out[12..20].copy_from_slice(&h.base_seq.to_le_bytes());
    let sum: [u8; 12] = hash_prefix(&blake3::hash(&out[..20]));
    out[20..32].copy_from_slice(&sum);
    out
}

/// Reads and checks a segment header.
pub fn decode_file_header(buf: &[u8]) -> Result<FileHeader, HeaderError> {
    let h = buf
        .get(..FILE_HEADER_LEN as usize)
        .ok_or(HeaderError::Short)?;
    if h.iter().all(|&b| b == 0) {
        return Err(HeaderError::Zeroed);
    }
    if h.get(..5) != Some(&MAGIC[..]) {
        return Err(HeaderError::BadMagic);
    }
    let version = h.get(5).copied().unwrap_or(0);
    let sealing = Sealing::of_version(version).ok_or(HeaderError::BadVersion(version))?;
    let sum: [u8; 12] = hash_prefix(&blake3::hash(h.get(..20).unwrap_or_default()));
    if h.get(20..32) != Some(&sum[..]) || h.get(6..8) != Some(&[0, 0][..]) {
        return Err(HeaderError::BadChecksum);
    }
    let segment = u32::from_le_bytes(le_array(h.get(8..12)));
    let base_seq = u64::from_le_bytes(le_array(h.get(12..20)));
    Ok(FileHeader {
        segment,
        base_seq,
        sealing,
    })
}

fn le_array<const N: usize>(bytes: Option<&[u8]>) -> [u8; N] {
    bytes.and_then(|b| b.try_into().ok()).unwrap_or([0u8; N])
}

/// Record header: the CBOR array at the start of every frame body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Opens batch `seq` of `count` entries; `len` is the byte length of the rest of the
    /// batch (its entry frames and commit frame).
    BatchBegin {
        /// The batch seq (previous + 1).
        seq: u64,
        /// Number of entries.
        count: u32,
        /// Bytes of the rest of the batch.
        len: u64,
    },
    /// One entry; the payload follows the record header in the same body.
    /// One entry; its payload follows the record header.
    Entry {
        /// The entry kind byte.
        kind: u8,
    },
    /// Closes batch `seq`; `digest` covers the checksums of all earlier frames of the batch.
    BatchCommit {
        /// The batch seq (equal to its begin frame's).
        seq: u64,
        /// Number of entries in the batch.
        count: u32,
        /// Digest chaining the checksums of the batch's frames.
        digest: [u8; CHECKSUM_LEN],
    },
}

fn int(v: u64) -> Value {
    Value::Integer(Integer::from(v))
}

/// Appends the CBOR encoding of `r` to `out`.
pub fn encode_record(r: &Record, out: &mut Vec<u8>) {
    // Fast path for the hot record: the same bytes ciborium writes for `[1, kind]`
    // (a 2-array, the tag, and a small or 1-byte-extended unsigned int).
    if let Record::Entry { kind } = *r {
        out.extend_from_slice(&[0x82, TAG_ENTRY as u8]);
        if kind >= 24 {
            out.push(0x18);
        }
        out.push(kind);
        return;
    }
    let value = match *r {
        Record::BatchBegin { seq, count, len } => {
            Value::Array(vec![int(TAG_BEGIN), int(seq), int(count.into()), int(len)])
        }
        Record::Entry { kind } => Value::Array(vec![int(TAG_ENTRY), int(kind.into())]),
        Record::BatchCommit { seq, count, digest } => Value::Array(vec![
            int(TAG_COMMIT),
            int(seq),
            int(count.into()),
            Value::Bytes(digest.to_vec()),
        ]),
    };
    // Writing a small Value into a Vec cannot fail.
    let _ = ciborium::into_writer(&value, out);
}

fn as_u64(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Integer(i) => u64::try_from(*i).ok(),
        _ => None,
    }
}

/// Decodes the record header at the start of `body`; returns it and its encoded length.
pub fn decode_record(body: &[u8]) -> Option<(Record, usize)> {
    // Fast path for entries, byte-identical to what `encode_record` writes.
    match body.get(..4) {
        Some([0x82, 0x01, kind, _]) | Some([0x82, 0x01, kind]) if *kind < 24 => {
            return Some((Record::Entry { kind: *kind }, 3));
        }
        Some([0x82, 0x01, 0x18, kind]) if *kind >= 24 => {
            return Some((Record::Entry { kind: *kind }, 4));
        }
        _ => {}
    }
    let mut rest = body;
    let mut scratch = [0u8; MAX_RECORD_HEADER];
    let value: Value = ciborium::de::from_reader_with_buffer(&mut rest, &mut scratch).ok()?;
    let header_len = body.len().checked_sub(rest.len())?;
    if header_len > MAX_RECORD_HEADER {
        return None;
    }
    let Value::Array(items) = value else {
        return None;
    };
    let record = match (as_u64(items.first())?, items.len()) {
        (TAG_BEGIN, 4) => Record::BatchBegin {
            seq: as_u64(items.get(1))?,
            count: u32::try_from(as_u64(items.get(2))?).ok()?,
            len: as_u64(items.get(3))?,
        },
        (TAG_ENTRY, 2) => Record::Entry {
            kind: u8::try_from(as_u64(items.get(1))?).ok()?,
        },
        (TAG_COMMIT, 4) => Record::BatchCommit {
            seq: as_u64(items.get(1))?,
            count: u32::try_from(as_u64(items.get(2))?).ok()?,
            digest: match items.get(3)? {
                Value::Bytes(b) => b.as_slice().try_into().ok()?,
                _ => return None,
            },
        },
        _ => return None,
    };
    Some((record, header_len))
}

/// How a segment's frames are checksummed. A file segment's header names it by its format
/// version; every frame of the segment uses it. An in-memory log's frames carry none
/// (their checksum bytes are zero, and so is each batch digest): memory neither tears nor
/// rots, and the only reader of those frames is the process that wrote them, so hashing
/// every event once more would buy nothing. Lengths and the batch grammar are checked
/// alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sealing {
    /// Format 1: blake3 of the position-bound frame, its first 16 bytes.
    Blake3,
    /// Format 2: XXH3-128 of the position-bound frame, in its canonical (big-endian) byte
    /// order. The checksum only has to catch torn and rotten bytes (the events inside are
    /// signed and content-addressed); XXH3 does that at a fifteenth of blake3's cost on
    /// event-sized frames, where blake3 cannot use its SIMD lanes.
    Xxh3,
    /// Frames carry zero checksum bytes; reads do not look at them.
    Unchecked,
}

impl Sealing {
    /// The sealings of file segments, one per format version this build reads.
    pub const CHECKED: [Sealing; 2] = [Sealing::Blake3, Sealing::Xxh3];

    /// The checksummed sealing of segment format `version`, if it is one this build reads.
    pub fn of_version(version: u8) -> Option<Sealing> {
        match version {
            1 => Some(Sealing::Blake3),
            2 => Some(Sealing::Xxh3),
            _ => None,
        }
    }

    /// The format version written in the header of a segment sealed this way (an
    /// in-memory segment's header says the current version; nothing reads it back).
    pub const fn version(self) -> u8 {
        match self {
            Sealing::Blake3 => 1,
            Sealing::Xxh3 => 2,
            Sealing::Unchecked => NEW_SEGMENT_SEALING.version(),
        }
    }

    /// Whether frames sealed this way carry checksums that reads verify.
    pub fn is_checked(self) -> bool {
        self != Sealing::Unchecked
    }

    /// The position-bound checksum of a frame whose body is the concatenation of `parts`,
    /// at byte `offset` of segment `segment`: the hash of
    /// `segment LE32 ‖ offset LE64 ‖ len LE32 ‖ body`, 16 bytes (zeros when unchecked).
    /// Binding the position means a frame verifies only where it was written: copies of
    /// frames inside payloads or stale bytes never verify at another offset.
    pub fn frame_checksum(self, segment: u32, offset: u64, parts: &[&[u8]]) -> [u8; CHECKSUM_LEN] {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let position = frame_position(segment, offset, len);
        match self {
            Sealing::Blake3 => {
                let mut h = blake3::Hasher::new();
                h.update(&position);
                for p in parts {
                    h.update(p);
                }
                hash_prefix(&h.finalize())
            }
            Sealing::Xxh3 => {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                h.update(&position);
                for p in parts {
                    h.update(p);
                }
                h.digest128().to_be_bytes()
            }
            Sealing::Unchecked => [0; CHECKSUM_LEN],
        }
    }

    /// [`Sealing::frame_checksum`] of a body that follows its position bytes
    /// ([`frame_position`]) in memory: `positioned` is the position ‖ the body, hashed in
    /// one pass. The same answer; a writer that lays the position where the frame's
    /// checksum goes saves the streaming hasher's copies of each body (0.8 % of the samples
    /// of a durable import).
    pub fn positioned_checksum(self, positioned: &[u8]) -> [u8; CHECKSUM_LEN] {
        match self {
            Sealing::Blake3 => hash_prefix(&blake3::hash(positioned)),
            Sealing::Xxh3 => xxhash_rust::xxh3::xxh3_128(positioned).to_be_bytes(),
            Sealing::Unchecked => [0; CHECKSUM_LEN],
        }
    }

    /// The digest of a batch's frame checksums, or zeros for unchecked frames.
    pub fn digest(self, checksums: &[[u8; CHECKSUM_LEN]]) -> [u8; CHECKSUM_LEN] {
        match self {
            Sealing::Blake3 | Sealing::Xxh3 => batch_digest(checksums),
            Sealing::Unchecked => [0; CHECKSUM_LEN],
        }
    }
}

/// What a frame's checksum binds it to, hashed before its body: `segment LE32 ‖ offset
/// LE64 ‖ len LE32`, `len` being the body's length. As long as the checksum, so a writer
/// can lay it where the checksum will go ([`Sealing::positioned_checksum`]).
pub fn frame_position(segment: u32, offset: u64, len: usize) -> [u8; CHECKSUM_LEN] {
    let mut position = [0u8; CHECKSUM_LEN];
    for (slot, byte) in position.iter_mut().zip(
        segment
            .to_le_bytes()
            .into_iter()
            .chain(offset.to_le_bytes())
            .chain((len as u32).to_le_bytes()),
    ) {
        *slot = byte;
    }
    position
}

/// Digest stored in a commit frame: blake3 of the concatenated checksums of the batch's
/// begin and entry frames, truncated to 16 bytes.
pub fn batch_digest(checksums: &[[u8; CHECKSUM_LEN]]) -> [u8; CHECKSUM_LEN] {
    let mut h = blake3::Hasher::new();
    for c in checksums {
        h.update(c);
    }
    hash_prefix(&h.finalize())
}

/// A frame's payload for [`write_frame`]: written, or left where it is.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// The payload's bytes follow the record header.
    Written(&'a [u8]),
    /// The frame's length and checksum cover these bytes, but they are not written: the
    /// `len()` bytes after the frame's head are their place (an in-memory segment leaves
    /// them in the file they were read from).
    LeftOut(&'a [u8]),
}

impl<'a> From<&'a [u8]> for Payload<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Payload::Written(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Payload<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Payload::Written(bytes)
    }
}

/// Appends one frame (prefix + record header + payload, but for a [`Payload::LeftOut`]'s
/// bytes) for position `offset` to `out`. Returns the frame's checksum (zeros when
/// `sealing` is [`Sealing::Unchecked`]).
pub fn write_frame<'a>(
    out: &mut Vec<u8>,
    sealing: Sealing,
    segment: u32,
    offset: u64,
    record: &Record,
    payload: impl Into<Payload<'a>>,
) -> [u8; CHECKSUM_LEN] {
    let (payload, with_payload) = match payload.into() {
        Payload::Written(bytes) => (bytes, true),
        Payload::LeftOut(bytes) => (bytes, false),
    };
    let start = out.len();
    out.extend_from_slice(&[0u8; FRAME_PREFIX_LEN]);
    encode_record(record, out);
    let head_end = out.len();
    let body_len = head_end - start - FRAME_PREFIX_LEN + payload.len();
    let sum = if with_payload {
        // The position goes where the checksum will, just before the body: one pass over
        // position ‖ head ‖ payload, then the checksum takes its place.
        out.extend_from_slice(payload);
        let positioned = start + FRAME_PREFIX_LEN - CHECKSUM_LEN;
        if let Some(slot) = out.get_mut(positioned..start + FRAME_PREFIX_LEN) {
            slot.copy_from_slice(&frame_position(segment, offset, body_len));
        }
        sealing.positioned_checksum(out.get(positioned..).unwrap_or_default())
    } else {
        let head = out
            .get(start + FRAME_PREFIX_LEN..head_end)
            .unwrap_or_default();
        sealing.frame_checksum(segment, offset, &[head, payload])
    };
    let len = (body_len as u32).to_le_bytes();
    if let Some(prefix) = out.get_mut(start..start + FRAME_PREFIX_LEN) {
        for (slot, byte) in prefix.iter_mut().zip(len.iter().chain(sum.iter())) {
            *slot = *byte;
        }
    }
    sum
}

/// Encoded frame length of `record` with a payload of `payload_len` bytes.
pub fn frame_len(record: &Record, payload_len: usize) -> usize {
    if let Record::Entry { kind } = *record {
        return FRAME_PREFIX_LEN + if kind < 24 { 3 } else { 4 } + payload_len;
    }
    let mut header = Vec::with_capacity(48);
    encode_record(record, &mut header);
    FRAME_PREFIX_LEN + header.len() + payload_len
}

/// Why a frame did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The frame runs past the end of the available bytes.
    Truncated,
    /// The length field exceeds [`MAX_BODY`] or is too small for a record header.
    BadLength(u32),
    /// The checksum does not match.
    Checksum,
    /// The checksum matches but the record header does not decode: never a torn write.
    BadRecord,
}

impl FrameError {
    /// True for damage a torn (interrupted) write can produce.
    pub fn may_be_torn(self) -> bool {
        !matches!(self, FrameError::BadRecord)
    }

    /// A human description.
    pub fn describe(self) -> String {
        match self {
            FrameError::Truncated => "truncated frame".into(),
            FrameError::BadLength(n) => format!("frame length {n} out of range"),
            FrameError::Checksum => "frame checksum mismatch".into(),
            FrameError::BadRecord => "undecodable record header under a valid checksum".into(),
        }
    }
}

/// A parsed frame; `payload` borrows from the parsed buffer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// The decoded record header.
    pub record: Record,
    /// The bytes after the record header.
    pub payload: &'a [u8],
    /// The frame's checksum.
    pub checksum: [u8; CHECKSUM_LEN],
    /// Buffer index just past this frame.
    pub end: usize,
}

/// Parses the frame starting at `buf[at]`; `buf[0]` is file offset `base` of `segment`.
pub fn parse_frame(
    buf: &[u8],
    sealing: Sealing,
    at: usize,
    segment: u32,
    base: u64,
) -> Result<Frame<'_>, FrameError> {
    let prefix_end = at
        .checked_add(FRAME_PREFIX_LEN)
        .ok_or(FrameError::Truncated)?;
    let prefix = buf.get(at..prefix_end).ok_or(FrameError::Truncated)?;
    let len = u32::from_le_bytes(le_array(prefix.get(..4)));
    let stored: [u8; CHECKSUM_LEN] = le_array(prefix.get(4..));
    if len as usize > MAX_BODY || len < 2 {
        return Err(FrameError::BadLength(len));
    }
    let end = prefix_end
        .checked_add(len as usize)
        .ok_or(FrameError::Truncated)?;
    let body = buf.get(prefix_end..end).ok_or(FrameError::Truncated)?;
    let offset = base.checked_add(at as u64).ok_or(FrameError::Truncated)?;
    if sealing.is_checked() && sealing.frame_checksum(segment, offset, &[body]) != stored {
        return Err(FrameError::Checksum);
    }
    let (record, header_len) = decode_record(body).ok_or(FrameError::BadRecord)?;
    let payload = body.get(header_len..).ok_or(FrameError::BadRecord)?;
    let payload_ok = match record {
        Record::Entry { .. } => payload.len() <= MAX_PAYLOAD,
        _ => payload.is_empty(),
    };
    if !payload_ok {
        return Err(FrameError::BadRecord);
    }
    Ok(Frame {
        record,
        payload,
        checksum: stored,
        end,
    })
}

/// Offset of the first frame at or after `buf[from]` that verifies (sealed as `sealing`, a
/// checked sealing) and is a batch marker
/// (BatchBegin or BatchCommit, or undecodable under a valid checksum). Used to tell a torn
/// tail (no marker after the damage) from corruption (a later marker proves the damaged
/// bytes were followed by a completed write).
pub fn find_marker_after(
    buf: &[u8],
    sealing: Sealing,
    from: usize,
    segment: u32,
    base: u64,
) -> Option<usize> {
    let mut at = from;
    while at
        .checked_add(FRAME_PREFIX_LEN + 2)
        .is_some_and(|e| e <= buf.len())
    {
        // Cheap prefilter: a marker body starts with a CBOR array of 4 items.
        if buf.get(at + FRAME_PREFIX_LEN).copied() == Some(0x84) {
            match parse_frame(buf, sealing, at, segment, base) {
                Ok(f) if !matches!(f.record, Record::Entry { .. }) => return Some(at),
                Err(FrameError::BadRecord) => return Some(at),
                _ => {}
            }
        }
        at += 1;
    }
    None
}
