//! The state snapshot: the whole in-memory [`State`] (ids, log positions, stamps, the DAG
//! index, the registry's roles, pending events and rejections on release) as one file,
//! `DIR/snapshot`, so that opening loads a few arrays instead of decoding every sled row or
//! re-parsing the log. Byte layout in `docs/format.md`.
//!
//! It is derived and optional. It is written on a clean close and every
//! [`SNAPSHOT_INTERVAL`] admitted events (but not during a bulk append, whose crash the
//! index covers: `open.rs` loads the index instead of a snapshot that far behind it),
//! atomically (temporary file, rename), as it is
//! encoded, a chunk at a time ([`super::derived`]). Before use it
//! must pass its checksum and fit the log it claims to describe (see [`Snapshot::fits`]);
//! a snapshot that fails is ignored, never trusted over the log, and the open says so.
//!
//! [`SNAPSHOT_INTERVAL`]: crate::limits::SNAPSHOT_INTERVAL
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::path::Path;

use crate::codec::{put_u32, put_u64, put_u64s, Out, Reader};
use crate::dag::{DagIndex, Pos};
use crate::event::Event;
use crate::layout;
use crate::store::log::{HighWater, LogPos, SegmentReader};
use crate::store::tables::Value;

use super::derived::Derived;
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
    /// The snapshot file's bytes for this state, taken after log batch `high`, held whole
    /// (what the tests compare [`State::write_snapshot`]'s file with).
    #[cfg(feature = "internals")]
    pub fn encode_snapshot(&self, high: HighWater) -> Vec<u8> {
        // The body is written after room for the header, which goes in last: the file's
        // bytes are made in one buffer, not copied into a second one.
        let mut file = Vec::with_capacity(self.len() * 110 + 1024);
        file.extend_from_slice(&[0; HEADER_LEN]);
        self.encode_snapshot_body(high, &mut file);
        let sum = blake3::hash(file.get(HEADER_LEN..).unwrap_or_default());
        if let Some(head) = file.get_mut(..HEADER_LEN) {
            head.copy_from_slice(&header(&sum));
        }
        file
    }

    /// Writes this state's snapshot, taken after log batch `high`, to a new temporary file
    /// in `dir` as it is encoded, a chunk at a time ([`Derived::stream`]): the same bytes
    /// as `encode_snapshot`, without holding them. The caller persists it.
    pub fn write_snapshot(&self, dir: &Path, high: HighWater) -> std::io::Result<Derived> {
        let file = Derived::create(dir, layout::SNAPSHOT)?;
        let mut sum = blake3::Hasher::new();
        file.stream(
            HEADER_LEN as u64,
            |chunk| {
                sum.update(chunk);
            },
            |out| self.encode_snapshot_body(high, out),
        )?;
        file.write_at(&header(&sum.finalize()), 0)?;
        Ok(file)
    }

    /// Appends the snapshot's body: everything after the header (see `docs/format.md`).
    fn encode_snapshot_body(&self, high: HighWater, body: &mut impl Out) {
        put_u64(body, high.seq);
        put_u32(body, high.end.segment);
        put_u64(body, high.end.offset);
        put_u64(body, self.ids.len() as u64);
        for raw in self.ids.raw() {
            body.put(raw);
        }
        put_u64(body, self.at.len() as u64);
        for at in self.at.iter() {
            put_u32(body, at.segment);
            put_u64(body, at.offset);
        }
        let stamps = (0..self.len()).map(|i| {
            let pos = Pos::new(u32::try_from(i).unwrap_or(u32::MAX));
            self.stamp(pos).unwrap_or(0)
        });
        put_u64s(body, stamps);
        self.dag.encode_into(body);
        let roles = self.roles();
        put_u64(body, roles.len() as u64);
        for (pos, role) in roles {
            put_u32(body, pos.get());
            role.encode_into(body);
        }
        put_u64(body, self.pending.len() as u64);
        for (id, entry) in self.pending.sorted() {
            body.put(id.bytes());
            body.put(&entry.encode());
        }
        put_u64(body, self.released_rejections.len() as u64);
        for (id, why) in &self.released_rejections {
            body.put(id.bytes());
            let text = encode_rejection(why);
            put_u32(body, u32::try_from(text.len()).unwrap_or(u32::MAX));
            body.put(&text);
        }
    }
}

/// The file's header for a body whose blake3 checksum is `sum`.
fn header(sum: &blake3::Hash) -> [u8; HEADER_LEN] {
    let mut head = [0; HEADER_LEN];
    let (magic, checksum) = head.split_at_mut(MAGIC.len());
    magic.copy_from_slice(&MAGIC);
    checksum.copy_from_slice(sum.as_bytes());
    head
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
