//! The ledger's sled tables: what makes reopening fast. Everything here is derived from the
//! segment log and is rebuilt from it when missing, behind, ahead, or damaged.
//!
//! | table | key | value |
//! | --- | --- | --- |
//! | `event_batches` | admission position of the row's first record (u32 BE) | up to `ROW_RECORDS` (1024) consecutive [`Record`]s of one batch, each encoded against the one before it (see `docs/format.md`) |
//! | `pending` | event id (33 bytes) | log position of its bytes, size, the dependency it waits for |
//! | `rejected_on_release` | event id (33 bytes) | code `\n` message |
//! | `meta` | `log_high_water`, `index_format` | last log batch the tables cover; this layout's version |
//!
//! Each batch's rows and its high-water mark are written in one atomic multi-table batch,
//! so after a crash the tables are exactly those of some committed batch. A bulk append
//! gathers the writes of its batches ([`Held`]) and writes them together, with the mark of
//! the last, every [`crate::limits::BULK_INDEX_RECORDS`] records and when it ends. A ledger batch's
//! records share `event_batches` rows of up to `ROW_RECORDS`: sled's cost is per key, and
//! a 1000-event batch then writes one key instead of a thousand.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{Code, Error, Rejection};
use crate::id::{DigestSuite, EventId};
use crate::layout;
use crate::store::log::{HighWater, LogPos};
use crate::store::tables::{
    CodecError, Key, Store, StoreError, StoreOptions, Table, Value, WriteBatch, META,
};

use super::record::{Record, RowContext};
use super::state::{PendingEntry, Staged, State};
use crate::codec::{put_u32, Reader};

pub const EVENT_BATCHES: Table<u32, Vec<u8>> = Table::new("event_batches");
/// The one-row-per-event table of layout 1 (such an index is removed on open).
#[cfg(feature = "internals")]
pub const EVENTS_V1: Table<u32, Vec<u8>> = Table::new("events");
/// `meta` key of the layout version; an index without it (or with another) is rebuilt.
pub const FORMAT_KEY: &str = "index_format";
/// The layout described above (1: one `events` row per record; 2: rows of records of
/// fixed widths, each behind its length, about twice the bytes).
const FORMAT: u32 = 3;
/// Index records per `event_batches` row, at most: a whole batch of `append_log`
/// ([`crate::limits::LOG_BATCH_EVENTS`]) in one row, about 47 KiB. sled's cost is per key:
/// against rows of 64 records (16 keys a batch, each leaf under sled's 128 KiB blob
/// threshold), an import of 1 M events took 0.967 × the wall, and its index 90 MB instead
/// of 119 MB. sled keeps a leaf over 128 KiB as a blob file of its own (about 110 of them
/// at a million events); a writer's open, warm or cold, took the same time either way.
pub const ROW_RECORDS: usize = 1024;
/// Index records per sled transaction when the tables are rewritten from a snapshot.
const SEED_TRANSACTION: usize = 64 * ROW_RECORDS;
const PENDING: Table<[u8; 33], PendingEntry> = Table::new("pending");
const REJECTED: Table<[u8; 33], Vec<u8>> = Table::new("rejected_on_release");

/// A `pending` row: log position (segment `u32` BE ‖ offset `u64` BE) ‖ size `u32` BE ‖
/// the 33 bytes of the missing dependency it is filed under. 49 bytes.
impl Value for PendingEntry {
    fn encode(&self) -> Vec<u8> {
        let mut out = Key::encode(&self.at);
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.waits_for);
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (at, size, waits_for) = <(LogPos, u32, [u8; 33]) as Key>::decode(bytes)?;
        DigestSuite::from_header(waits_for[0]).map_err(|e| CodecError(e.to_string()))?;
        Ok(PendingEntry {
            at,
            size,
            waits_for,
        })
    }
}

/// Number of [`Index::clear_step`]s.
pub const CLEAR_STEPS: usize = 4;

/// The index changes of one batch besides the admitted records.
#[derive(Debug, Default)]
pub struct Changes {
    pending_added: Vec<(EventId, PendingEntry)>,
    released: Vec<EventId>,
    rejected: Vec<(EventId, Rejection)>,
}

impl Changes {
    /// The changes of `staged`, whose new entries were written at `entry_at`.
    pub fn of(staged: &Staged, entry_at: &[LogPos]) -> Changes {
        Changes {
            pending_added: staged
                .filed
                .iter()
                .filter_map(|f| {
                    let at = f.at.resolve(entry_at)?;
                    Some((f.id, PendingEntry::new(at, f.size, f.waits_for)))
                })
                .collect(),
            released: staged.released.iter().copied().collect(),
            rejected: staged.rejected_on_release.clone(),
        }
    }

    /// The changes of pending events dropped by an operator.
    pub fn dropped(ids: Vec<EventId>) -> Changes {
        Changes {
            released: ids,
            ..Changes::default()
        }
    }

    /// These changes plus pending events dropped in the same log batch.
    pub fn and_dropped(mut self, ids: &[EventId]) -> Changes {
        self.released.extend_from_slice(ids);
        self
    }
}

/// The sled side of the ledger.
pub struct Index {
    pub store: Store,
}

fn store_error(path: &Path, e: StoreError) -> Error {
    // An OS failure (including "the directory is locked by another open ledger") is IO;
    // everything else sled or the codecs report means the tables are damaged.
    if let Some(source) = e.os_error() {
        return Error::Io {
            path: path.to_owned(),
            source,
        };
    }
    Error::Corrupt {
        path: path.to_owned(),
        offset: 0,
        reason: e.to_string(),
    }
}

impl Index {
    /// Opens (or creates) the index database in `path`.
    pub fn open(path: &Path) -> Result<Index, Error> {
        let store =
            Store::open(path, &StoreOptions::default()).map_err(|e| store_error(path, e))?;
        Ok(Index { store })
    }

    fn err(&self, e: StoreError) -> Error {
        store_error(Path::new(layout::INDEX), e)
    }

    /// Applies `batch` with the high-water mark `high` and the layout version, atomically.
    fn commit(&self, batch: &mut WriteBatch, high: HighWater) -> Result<(), Error> {
        Store::set_high_water(batch, high);
        batch.insert(
            &META,
            &FORMAT_KEY.to_string(),
            &FORMAT.to_le_bytes().to_vec(),
        );
        self.store.apply(batch).map_err(|e| self.err(e))
    }

    /// The log batch the tables cover, if any.
    pub fn high_water(&self) -> Result<Option<HighWater>, Error> {
        self.store.high_water().map_err(|e| self.err(e))
    }

    /// Writes one batch: records admitted at positions `first..`, the pending and rejection
    /// changes, and the new high-water mark, atomically.
    pub fn persist(
        &self,
        first: usize,
        records: &[Record],
        changes: &Changes,
        high: HighWater,
    ) -> Result<(), Error> {
        let mut held = Held::default();
        held.add(first, records, changes, high)?;
        self.write_held(&mut held)
    }

    /// Writes the batches `held` gathered, and the high-water mark of the last of them,
    /// atomically; `held` is then empty. On an error it keeps them, to be written again.
    pub fn write_held(&self, held: &mut Held) -> Result<(), Error> {
        let Some(high) = held.high else {
            return Ok(());
        };
        self.commit(&mut held.batch, high)?;
        *held = Held::default();
        Ok(())
    }

    /// Removes every row (before a rebuild from the log). Not atomic (sled clears a tree
    /// key by key, and may flush in between), so a crash can leave any prefix of
    /// [`Index::clear_step`]s done.
    pub fn clear(&self) -> Result<(), Error> {
        (0..CLEAR_STEPS).try_for_each(|step| self.clear_step(step))
    }

    /// One table of [`Index::clear`], in order.
    pub fn clear_step(&self, step: usize) -> Result<(), Error> {
        // The high-water mark goes first: without it the index is "empty" and is rebuilt
        // again, whatever rows a crash left behind. Cleared last, a crash after the rows
        // could leave a mark over missing rows, and open would silently skip those events.
        match step {
            0 => self.store.clear(&META),
            1 => self.store.clear(&EVENT_BATCHES),
            2 => self.store.clear(&PENDING),
            3 => self.store.clear(&REJECTED),
            _ => Ok(()),
        }
        .map_err(|e| self.err(e))
    }

    /// Loads the tables into `state` (pending rows are loaded as they are: the log is not
    /// read). `Err` says why the tables cannot be used (the caller rebuilds them from the log).
    pub fn load(&self, state: &mut State) -> Result<(), String> {
        self.check_format()?;
        let batches = self.store.tree(&EVENT_BATCHES).map_err(|e| e.to_string())?;
        for row in batches.iter() {
            let (first, bytes) = row.map_err(|e| e.to_string())?;
            if first as usize != state.len() {
                return Err(format!("index row {first} out of sequence"));
            }
            let records = decode_records(first, &bytes)
                .ok_or_else(|| format!("index row {first} is damaged"))?;
            for record in &records {
                state
                    .admit(record)
                    .map_err(|e| format!("index row {first}: {e}"))?;
            }
        }
        let pending = self.store.tree(&PENDING).map_err(|e| e.to_string())?;
        for row in pending.iter() {
            let (id, entry) = row.map_err(|e| e.to_string())?;
            if !state.pending.insert_raw(id, entry) {
                return Err("a pending row names an id of no known digest suite".into());
            }
        }
        let rejected = self.store.tree(&REJECTED).map_err(|e| e.to_string())?;
        for row in rejected.iter() {
            let (id, text) = row.map_err(|e| e.to_string())?;
            let (id, why) = decode_rejection(&id, &text).ok_or("damaged rejection row")?;
            state.released_rejections.insert(id, why);
        }
        Ok(())
    }

    /// Compares the tables with a rebuild from the log.
    pub fn compare(
        &self,
        records: &[Record],
        fresh: &State,
        high: HighWater,
        diffs: &mut Vec<String>,
    ) -> Result<(), Error> {
        // An index that has recorded nothing yet has no layout either.
        if let (Some(_), Err(why)) = (self.high_water()?, self.check_format()) {
            diffs.push(why);
        }
        let batches = self.store.tree(&EVENT_BATCHES).map_err(|e| self.err(e))?;
        let mut count = 0usize;
        for row in batches.iter() {
            let (first, bytes) = row.map_err(|e| self.err(e))?;
            if first as usize != count {
                diffs.push(format!("sled event_batches row {first} is out of sequence"));
            }
            let Some(stored) = decode_records(first, &bytes) else {
                diffs.push(format!("sled event_batches row {first} is damaged"));
                continue;
            };
            for record in &stored {
                if Some(record) != records.get(count) {
                    diffs.push(format!("sled index record {count} differs from the log"));
                }
                count += 1;
            }
        }
        if count != records.len() {
            diffs.push(format!(
                "sled holds {count} event rows, the log admits {}",
                records.len()
            ));
        }
        let pending = self.store.tree(&PENDING).map_err(|e| self.err(e))?;
        let stored: BTreeSet<([u8; 33], PendingEntry)> =
            pending.iter().filter_map(Result::ok).collect();
        let expected: BTreeSet<([u8; 33], PendingEntry)> = fresh
            .pending
            .sorted()
            .into_iter()
            .map(|(id, entry)| (*id.bytes(), entry))
            .collect();
        if stored != expected {
            diffs.push(format!(
                "sled pending set ({}) differs from the log's ({})",
                stored.len(),
                expected.len()
            ));
        }
        let rejected = self.store.tree(&REJECTED).map_err(|e| self.err(e))?;
        if rejected.len() != fresh.released_rejections.len() {
            diffs.push("sled rejected_on_release differs from the log".into());
        }
        let stored_high = self.high_water()?;
        if stored_high.unwrap_or_default() != high {
            diffs.push(format!(
                "sled high-water mark ({}) differs from the log's ({high})",
                stored_high.map_or("none".to_string(), |h| h.to_string())
            ));
        }
        Ok(())
    }
}

impl Index {
    /// Why the tables, holding rows, are in another layout than this version's; `None`
    /// for tables in this layout, and for empty ones.
    pub fn stale_layout(&self) -> Option<String> {
        match self.high_water() {
            Ok(None) => None,
            _ => self.check_format().err(),
        }
    }

    /// `Err` unless the tables are in this version's layout (`FORMAT`).
    pub fn check_format(&self) -> Result<(), String> {
        let meta = self.store.tree(&META).map_err(|e| e.to_string())?;
        let found = meta
            .get(&FORMAT_KEY.to_string())
            .map_err(|e| e.to_string())?;
        match found.as_deref() {
            Some(bytes) if bytes == FORMAT.to_le_bytes() => Ok(()),
            Some(_) => Err("the index was written in another layout".into()),
            None => Err("the index was written in an older layout (one row per event)".into()),
        }
    }

    /// Rewrites the tables from `state`, the state after log batch `high` (a state snapshot,
    /// when the index is empty): cleared first, then the rows 4096 records per transaction,
    /// and the high-water mark last, so a crash part-way leaves tables without a mark,
    /// which the next open rewrites or rebuilds again.
    pub fn seed(&self, state: &State, high: HighWater) -> Result<(), Error> {
        self.clear()?;
        let mut records = state.records();
        let mut first = 0usize;
        loop {
            let chunk = records
                .by_ref()
                .take(SEED_TRANSACTION)
                .collect::<Option<Vec<Record>>>()
                .ok_or_else(|| Error::Misuse("the state's arrays disagree".into()))?;
            if chunk.is_empty() {
                break;
            }
            let mut batch = WriteBatch::new();
            put_rows(&mut batch, first, &chunk)?;
            self.store.apply(&batch).map_err(|e| self.err(e))?;
            first += chunk.len();
        }
        let mut batch = WriteBatch::new();
        for (id, entry) in state.pending.sorted() {
            batch.insert(&PENDING, id.bytes(), &entry);
        }
        for (id, why) in &state.released_rejections {
            batch.insert(&REJECTED, id.bytes(), &encode_rejection(why));
        }
        self.commit(&mut batch, high)
    }
}

/// Committed batches' index writes not yet written to the tables: what a bulk append
/// gathers across [`crate::ledger::Config::bulk_index_records`] records, so that sled
/// applies one transaction where it would apply dozens (its cost is per transaction far
/// more than per byte). Later writes to a key replace earlier ones, as applying the
/// batches one by one would.
#[derive(Default)]
pub struct Held {
    batch: WriteBatch,
    records: usize,
    /// The log mark of the last batch added; `None` when none was.
    high: Option<HighWater>,
}

impl Held {
    /// Adds one committed batch's writes: records admitted at positions `first..`, its
    /// pending and rejection changes, and the log's mark after it.
    pub fn add(
        &mut self,
        first: usize,
        records: &[Record],
        changes: &Changes,
        high: HighWater,
    ) -> Result<(), Error> {
        let batch = &mut self.batch;
        put_rows(batch, first, records)?;
        for (id, at) in &changes.pending_added {
            batch.insert(&PENDING, id.bytes(), at);
        }
        for id in &changes.released {
            batch.remove(&PENDING, id.bytes());
        }
        for (id, why) in &changes.rejected {
            batch.insert(&REJECTED, id.bytes(), &encode_rejection(why));
        }
        self.records = self.records.saturating_add(records.len());
        self.high = Some(high);
        Ok(())
    }

    /// Index records gathered.
    pub fn records(&self) -> usize {
        self.records
    }
}

/// Adds `records`, admitted at positions `first..`, to `batch` as `event_batches` rows of
/// up to [`ROW_RECORDS`], each keyed by its first position.
fn put_rows(batch: &mut WriteBatch, first: usize, records: &[Record]) -> Result<(), Error> {
    if u32::try_from(first + records.len()).is_err() {
        return Err(Error::Misuse("more than 2^32 events".into()));
    }
    for (i, row) in records.chunks(ROW_RECORDS).enumerate() {
        let key = (first + i * ROW_RECORDS) as u32;
        batch.insert(&EVENT_BATCHES, &key, &encode_records(key, row));
    }
    Ok(())
}

/// An `event_batches` value for the records admitted at positions `first..`: their count
/// `u32` LE, then each record encoded against the one before it ([`Record::encode_in_row`]).
pub fn encode_records(first: u32, records: &[Record]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + records.len() * 56);
    put_u32(&mut out, records.len() as u32);
    let mut row = RowContext::default();
    for (i, record) in records.iter().enumerate() {
        // Past 2^32 positions a row does not decode: `put_rows` refuses such a batch.
        record.encode_in_row(first.wrapping_add(i as u32), &mut row, &mut out);
    }
    out
}

/// The records of the `event_batches` value of the row at position `first`; `None` unless
/// it decodes exactly (the count, every record, nothing after the last).
pub fn decode_records(first: u32, bytes: &[u8]) -> Option<Vec<Record>> {
    let mut reader = Reader::new(bytes);
    let count = reader.u32()? as usize;
    // Each record takes more than 33 bytes: a count the bytes cannot hold is damage.
    if count > bytes.len() / 33 {
        return None;
    }
    let mut records = Vec::with_capacity(count);
    let mut row = RowContext::default();
    for i in 0..count {
        let own = first.checked_add(u32::try_from(i).ok()?)?;
        records.push(Record::decode_in_row(&mut reader, own, &mut row)?);
    }
    reader.is_empty().then_some(records)
}

/// A rejection row's value: code `\n` message.
pub(super) fn encode_rejection(why: &Rejection) -> Vec<u8> {
    format!("{}\n{}", why.code(), why.message()).into_bytes()
}

pub(super) fn decode_rejection(id: &[u8; 33], text: &[u8]) -> Option<(EventId, Rejection)> {
    let id = EventId::from_bytes(id).ok()?;
    let text = std::str::from_utf8(text).ok()?;
    let (code, message) = text.split_once('\n')?;
    Some((id, Rejection::new(Code::parse(code)?, message)))
}
