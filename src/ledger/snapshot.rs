//! The state snapshot: the whole in-memory [`State`] (ids, log positions, stamps, the DAG
//! index, the registry's roles, pending events and rejections on release) as one file,
//! `DIR/snapshot`, so that opening loads a few arrays instead of decoding every sled row or
//! re-parsing the log. Byte layout in `docs/format.md`.
//!
//! It is derived and optional. It is written on a clean close and every
//! [`SNAPSHOT_INTERVAL`] admitted events, atomically (temporary file, rename). Before use it
//! must pass its checksum and fit the log it claims to describe (see [`Snapshot::fits`]);
//! a snapshot that fails is ignored, never trusted over the log, and the open says so.
//!
//! [`SNAPSHOT_INTERVAL`]: crate::limits::SNAPSHOT_INTERVAL
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::io::Write;
use std::path::Path;

use crate::codec::{put_u32, put_u64, put_u64s, Reader};
use crate::dag::{DagIndex, Pos};
use crate::event::Event;
use crate::layout;
use crate::store::log::{HighWater, LogPos, SegmentReader};
use crate::store::tables::Value;

use super::id_table::IdTable;
use super::index::{decode_rejection, encode_rejection};
use super::positions::{LogPositions, PackedPos};
use super::record::Role;
use super::stamps::Stamps;
use super::state::{PendingEntry, State};

/// File magic and format version.
const MAGIC: [u8; 8] = *b"AKSNAP\x00\x01";
/// Bytes before the body: the magic, then the body's blake3 checksum.
const HEADER_LEN: usize = MAGIC.len() + blake3::OUT_LEN;
/// Bytes of a pending row ([`PendingEntry`]'s table encoding).
const PENDING_ROW: usize = 49;

/// A decoded snapshot: the state after the log batch `high`.
pub struct Snapshot {
    pub state: State,
    pub high: HighWater,
}

impl State {
    /// The snapshot file's bytes for this state, taken after log batch `high`.
    pub fn encode_snapshot(&self, high: HighWater) -> Vec<u8> {
        // The body is written after room for the magic and its checksum, which go in last:
        // the file's bytes are made in one buffer, not copied into a second one.
        let mut body = Vec::with_capacity(self.len() * 110 + 1024);
        body.extend_from_slice(&[0; HEADER_LEN]);
        put_u64(&mut body, high.seq);
        put_u32(&mut body, high.end.segment);
        put_u64(&mut body, high.end.offset);
        put_u64(&mut body, self.ids.len() as u64);
        for raw in self.ids.raw() {
            body.extend_from_slice(raw);
        }
        put_u64(&mut body, self.at.len() as u64);
        for at in self.at.iter() {
            put_u32(&mut body, at.segment);
            put_u64(&mut body, at.offset);
        }
        let stamps = (0..self.len()).map(|i| {
            let pos = Pos::new(u32::try_from(i).unwrap_or(u32::MAX));
            self.stamp(pos).unwrap_or(0)
        });
        put_u64s(&mut body, stamps);
        self.dag.encode_into(&mut body);
        let roles = self.roles();
        put_u64(&mut body, roles.len() as u64);
        for (pos, role) in roles {
            put_u32(&mut body, pos.get());
            role.encode_into(&mut body);
        }
        put_u64(&mut body, self.pending.len() as u64);
        for (id, entry) in self.pending.sorted() {
            body.extend_from_slice(id.bytes());
            body.extend_from_slice(&entry.encode());
        }
        put_u64(&mut body, self.released_rejections.len() as u64);
        for (id, why) in &self.released_rejections {
            body.extend_from_slice(id.bytes());
            let text = encode_rejection(why);
            put_u32(&mut body, u32::try_from(text.len()).unwrap_or(u32::MAX));
            body.extend_from_slice(&text);
        }
        let sum = blake3::hash(body.get(HEADER_LEN..).unwrap_or_default());
        if let Some((magic, checksum)) = body
            .get_mut(..HEADER_LEN)
            .map(|header| header.split_at_mut(MAGIC.len()))
        {
            magic.copy_from_slice(&MAGIC);
            checksum.copy_from_slice(sum.as_bytes());
        }
        body
    }
}

impl Snapshot {
    /// Decodes a snapshot file; `Err` says why it cannot be used.
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, &'static str> {
        let mut r = Reader::new(bytes);
        if r.array::<8>() != Some(MAGIC) {
            return Err("not a snapshot of this version");
        }
        let sum = r.array::<{ blake3::OUT_LEN }>().ok_or("truncated")?;
        let body = r
            .take(bytes.len().saturating_sub(HEADER_LEN))
            .ok_or("truncated")?;
        // The checksum is computed on another thread while the body is decoded (decoding
        // is total: damaged bytes give `None`, never a panic); the decoded state is used
        // only when the checksum matches.
        let (sum_matches, decoded) = std::thread::scope(|scope| {
            let checksum = scope.spawn(|| blake3::hash(body).as_bytes() == &sum);
            let decoded = decode_body(&mut Reader::new(body));
            (checksum.join().unwrap_or(false), decoded)
        });
        if !sum_matches {
            return Err("checksum mismatch");
        }
        decoded.ok_or("damaged contents")
    }

    /// Why the log `reader` reads (ending at `log_high`) lost events this snapshot saw
    /// admitted, if it did: the snapshot was taken after a later batch than the log holds,
    /// yet the log holds its first event where the snapshot says (it is this ledger's
    /// snapshot, not a stranger's). Snapshots are written only once the log they describe is
    /// durable, so a log behind one was rolled back or cut after the fact.
    pub fn outlived_by(&self, reader: &SegmentReader, log_high: HighWater) -> Option<String> {
        if self.high.seq <= log_high.seq {
            return None;
        }
        let first = Pos::new(0);
        let (Some(id), Some(at)) = (self.state.id_at(first), self.state.at.get(0)) else {
            return None;
        };
        if !log_holds(reader, at, &id) {
            return None;
        }
        Some(format!(
            "the log ends at batch {} but this ledger's state snapshot was taken after batch {}, when {} events were admitted: the log lost acknowledged events. Nothing was cut, rebuilt or changed; restore the log from a backup (or move `{}` away to open what the log still holds)",
            log_high.seq,
            self.high.seq,
            self.state.len(),
            crate::layout::SNAPSHOT
        ))
    }

    /// Whether this snapshot describes a prefix of the log `reader` reads, whose end is
    /// `log_high`: it ends at or before the log, and the last event it admitted is at its
    /// recorded position with bytes that hash to its id.
    pub fn fits(&self, reader: &SegmentReader, log_high: HighWater) -> Result<(), String> {
        let high = self.high;
        if high.seq > log_high.seq || (high.seq == log_high.seq && high != log_high) {
            return Err(format!(
                "it was taken after log batch {} but the log ends at batch {}",
                high.seq, log_high.seq
            ));
        }
        let last = self.state.len().checked_sub(1).map(|i| Pos::new(i as u32));
        let Some(last) = last else {
            return Ok(());
        };
        let (Some(id), Some(at)) = (self.state.id_at(last), self.state.at.get(last.index())) else {
            return Err("its last event is missing".into());
        };
        if log_holds(reader, at, &id) {
            Ok(())
        } else {
            Err(format!("the log does not hold {id} where it says"))
        }
    }
}

/// Whether the log holds the event `id` at `at`: bytes there that parse and hash to `id`.
/// How a derived file (this snapshot, the graph file) shows it describes this log.
pub(super) fn log_holds(reader: &SegmentReader, at: LogPos, id: &crate::id::EventId) -> bool {
    reader
        .read(at)
        .ok()
        .and_then(|(_, bytes)| Event::parse(&bytes).ok())
        .is_some_and(|event| event.id() == *id)
}

fn decode_body(r: &mut Reader<'_>) -> Option<Snapshot> {
    let high = HighWater {
        seq: r.u64()?,
        end: LogPos::new(r.u32()?, r.u64()?),
    };
    let n = r.count(33)?;
    let mut raw = Vec::with_capacity(n);
    for _ in 0..n {
        raw.push(r.array::<33>()?);
    }
    let ids = IdTable::from_raw(raw)?;
    let n_at = r.count(12)?;
    let mut at = LogPositions::with_capacity(n_at);
    for _ in 0..n_at {
        at.push(PackedPos::new(LogPos::new(r.u32()?, r.u64()?)).ok()?);
    }
    let written_stamps = r.u64s_in_place()?;
    let dag = DagIndex::decode_from(r)?;
    if at.len() != n || written_stamps.len() != n || dag.len() != n {
        return None;
    }
    let mut stamps = Stamps::with_capacity(n);
    for (i, stamp) in written_stamps.enumerate() {
        stamps.push(stamp, dag.generation(Pos::new(u32::try_from(i).ok()?))?);
    }
    let mut state = State {
        dag,
        ids,
        at,
        stamps,
        ..State::default()
    };
    let roles = r.count(5)?;
    let mut previous: Option<Pos> = None;
    for _ in 0..roles {
        let pos = Pos::new(r.u32()?);
        let role = Role::decode_from(r)?;
        if pos.index() >= n || previous.is_some_and(|p| p >= pos) {
            return None;
        }
        previous = Some(pos);
        let id = state.id_at(pos)?;
        state.register(pos, id, &role);
    }
    let pending = r.count(33 + PENDING_ROW)?;
    state.pending.reserve(pending);
    for _ in 0..pending {
        let id = r.array::<33>()?;
        let entry = PendingEntry::decode(r.take(PENDING_ROW)?).ok()?;
        if !state.pending.insert_raw(id, entry) {
            return None;
        }
    }
    let rejections = r.count(37)?;
    for _ in 0..rejections {
        let id = r.array::<33>()?;
        let len = r.u32()? as usize;
        let (id, why) = decode_rejection(&id, r.take(len)?)?;
        state.released_rejections.insert(id, why);
    }
    if !r.is_empty() {
        return None;
    }
    Some(Snapshot { state, high })
}

/// Reads `DIR/snapshot`: `Ok(None)` when there is none, `Err` when there is one that cannot
/// be used (and why).
pub fn read(dir: &Path) -> Result<Option<Snapshot>, String> {
    let bytes = match std::fs::read(dir.join(layout::SNAPSHOT)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    Snapshot::decode(&bytes).map(Some).map_err(str::to_owned)
}

/// Writes `DIR/name` atomically: a temporary `.name.*` file in `dir`, synced when `sync`,
/// renamed over it. Used for the derived files at the ledger root (this snapshot, the graph
/// file); one left unsynced may be old or damaged after a machine crash, which its checks
/// detect.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    if sync {
        file.as_file().sync_data()?;
    }
    file.persist(dir.join(name)).map_err(|e| e.error)?;
    Ok(())
}

/// Removes temporary files a writer killed while writing a derived file (the snapshot,
/// the graph file) left in `dir`.
pub fn remove_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefixes = [layout::SNAPSHOT, layout::GRAPH].map(|name| format!(".{name}."));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
