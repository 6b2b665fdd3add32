//! Typed sled trees: the only module that names `sled`.
//!
//! In the spirit of redb's `TableDefinition`, a [`Table<K, V>`] is a `const` name plus key
//! and value codecs. The ledger declares its concrete tables; this module stays generic.
//!
//! * Keys implement [`Key`]. Integers are big-endian so byte order is numeric order;
//!   tuples concatenate their parts, all but the last of fixed width ([`FixedKey`]), so a
//!   tuple's first parts are a usable scan prefix.
//! * Values implement [`Value`]; [`Cbor<T>`] stores any serde type as CBOR.
//!
//! # Guarantees
//!
//! [`Store::apply`] applies a [`WriteBatch`] spanning several tables in one sled
//! transaction: other readers see all of it or none of it, and after a crash sled recovers
//! either all of it or none of it. Nothing is durable until [`Store::flush`] returns (sled
//! also flushes in the background every `flush_every_ms`). Single-key `insert`/`remove`
//! on a [`TypedTree`] are atomic per key only.
//!
//! The tables are indexes rebuildable from the segment log: the ledger writes the log
//! high-water mark ([`Store::set_high_water`]) in the same batch as the index updates it
//! covers, so after a crash it replays the log from that mark.

use std::marker::PhantomData;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use sled::transaction::Transactional;

use super::log::{HighWater, LogPos};

/// Errors of the typed store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}", sled_text(.0))]
    /// sled failed.
    Sled(#[from] sled::Error),
    /// Stored bytes that do not decode as the table's key or value type.
    #[error("table {table}: cannot decode {what}: {reason}")]
    Codec {
        /// The table.
        table: &'static str,
        /// What did not decode (key, value).
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// sled's failure as a sentence (its own `Display` carries Debug text for corruption).
fn sled_text(e: &sled::Error) -> String {
    match e {
        sled::Error::Corruption { .. } => "the sled database files are damaged".into(),
        sled::Error::Io(io) => format!("sled: {io}"),
        sled::Error::Unsupported(what) => format!("sled: unsupported: {what}"),
        sled::Error::ReportableBug(what) => format!("sled failed: {what}"),
        sled::Error::CollectionNotFound(_) => "sled: a table is missing".into(),
    }
}

impl StoreError {
    /// The operating-system error behind this failure, if it is one (a full disk, a
    /// directory locked by another open database), as opposed to damaged data.
    pub fn os_error(&self) -> Option<std::io::Error> {
        match self {
            StoreError::Sled(sled::Error::Io(e)) => {
                Some(std::io::Error::new(e.kind(), e.to_string()))
            }
            _ => None,
        }
    }
}

/// Why bytes did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodecError(pub String);

impl CodecError {
    fn width(expected: usize, got: usize) -> Self {
        CodecError(format!("expected {expected} bytes, got {got}"))
    }
}

/// A key codec. Encodings must be order-preserving where range scans matter.
pub trait Key: Sized {
    /// Appends the encoding to `out`.
    fn encode_into(&self, out: &mut Vec<u8>);
    /// Decodes a whole encoding.
    fn decode(bytes: &[u8]) -> Result<Self, CodecError>;
    /// The encoding.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}

/// A key of fixed encoded width, usable in front of other parts of a tuple key.
pub trait FixedKey: Key {
    /// Encoded width in bytes.
    const WIDTH: usize;
}

/// A value codec.
pub trait Value: Sized {
    /// The encoding.
    fn encode(&self) -> Vec<u8>;
    /// Decodes a whole encoding.
    fn decode(bytes: &[u8]) -> Result<Self, CodecError>;
}

macro_rules! be_int {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn encode_into(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
                let arr = bytes
                    .try_into()
                    .map_err(|_| CodecError::width(Self::WIDTH, bytes.len()))?;
                Ok(<$t>::from_be_bytes(arr))
            }
        }
        impl FixedKey for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
        }
        impl Value for $t {
            fn encode(&self) -> Vec<u8> {
                Key::encode(self)
            }
            fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
                <$t as Key>::decode(bytes)
            }
        }
    )*};
}
be_int!(u8, u16, u32, u64);

impl<const N: usize> Key for [u8; N] {
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        bytes
            .try_into()
            .map_err(|_| CodecError::width(N, bytes.len()))
    }
}

impl<const N: usize> FixedKey for [u8; N] {
    const WIDTH: usize = N;
}

impl<const N: usize> Value for [u8; N] {
    fn encode(&self) -> Vec<u8> {
        self.to_vec()
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        <[u8; N] as Key>::decode(bytes)
    }
}

impl Key for Vec<u8> {
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        Ok(bytes.to_vec())
    }
}

impl Value for Vec<u8> {
    fn encode(&self) -> Vec<u8> {
        self.clone()
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        Ok(bytes.to_vec())
    }
}

impl Key for String {
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        String::from_utf8(bytes.to_vec()).map_err(|e| CodecError(e.to_string()))
    }
}

impl Value for () {
    fn encode(&self) -> Vec<u8> {
        Vec::new()
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        if bytes.is_empty() {
            Ok(())
        } else {
            Err(CodecError::width(0, bytes.len()))
        }
    }
}

/// `LogPos` as a key or value: segment (u32 BE) then offset (u64 BE), ordered like the log.
impl Key for LogPos {
    fn encode_into(&self, out: &mut Vec<u8>) {
        self.segment.encode_into(out);
        self.offset.encode_into(out);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (segment, offset) = <(u32, u64) as Key>::decode(bytes)?;
        Ok(LogPos { segment, offset })
    }
}

impl FixedKey for LogPos {
    const WIDTH: usize = 12;
}

impl Value for LogPos {
    fn encode(&self) -> Vec<u8> {
        Key::encode(self)
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        <LogPos as Key>::decode(bytes)
    }
}

fn split<A: FixedKey>(bytes: &[u8]) -> Result<(A, &[u8]), CodecError> {
    let head = bytes
        .get(..A::WIDTH)
        .ok_or_else(|| CodecError::width(A::WIDTH, bytes.len()))?;
    let rest = bytes.get(A::WIDTH..).unwrap_or_default();
    Ok((A::decode(head)?, rest))
}

impl<A: FixedKey, B: Key> Key for (A, B) {
    fn encode_into(&self, out: &mut Vec<u8>) {
        self.0.encode_into(out);
        self.1.encode_into(out);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (a, rest) = split::<A>(bytes)?;
        Ok((a, B::decode(rest)?))
    }
}

impl<A: FixedKey, B: FixedKey> FixedKey for (A, B) {
    const WIDTH: usize = A::WIDTH + B::WIDTH;
}

impl<A: FixedKey, B: FixedKey, C: Key> Key for (A, B, C) {
    fn encode_into(&self, out: &mut Vec<u8>) {
        self.0.encode_into(out);
        self.1.encode_into(out);
        self.2.encode_into(out);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (a, rest) = split::<A>(bytes)?;
        let (b, rest) = split::<B>(rest)?;
        Ok((a, b, C::decode(rest)?))
    }
}

/// A serde value stored as CBOR.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cbor<T>(pub T);

impl<T: Serialize + DeserializeOwned> Value for Cbor<T> {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Serializing into a Vec only fails for types serde cannot represent in CBOR,
        // which is a programming error caught by the table's tests.
        if let Err(e) = ciborium::into_writer(&self.0, &mut out) {
            debug_assert!(false, "CBOR encoding failed: {e}");
        }
        out
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        ciborium::from_reader(bytes)
            .map(Cbor)
            .map_err(|e| CodecError(e.to_string()))
    }
}

/// `HighWater` stored as seq (u64 BE) ‖ segment (u32 BE) ‖ offset (u64 BE).
impl Value for HighWater {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20);
        self.seq.encode_into(&mut out);
        self.end.encode_into(&mut out);
        out
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let (seq, end) = <(u64, LogPos) as Key>::decode(bytes)?;
        Ok(HighWater { seq, end })
    }
}

/// A table definition: a sled tree name and its key/value types. Declare as `const`.
pub struct Table<K, V> {
    name: &'static str,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Table<K, V> {
    /// A table stored in the sled tree `name`.
    pub const fn new(name: &'static str) -> Self {
        Table {
            name,
            _types: PhantomData,
        }
    }

    /// The tree name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<K, V> Clone for Table<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, V> Copy for Table<K, V> {}

/// The store's own bookkeeping: string keys, raw values.
pub const META: Table<String, Vec<u8>> = Table::new("meta");
const HIGH_WATER_KEY: &str = "log_high_water";

/// How long [`Store::open`] waits for a lock held by a just-dropped `Store` of this process.
pub const LOCK_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// Options for [`Store::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// sled page cache size in bytes.
    pub cache_bytes: u64,
    /// Background flush interval; `None` flushes only on [`Store::flush`].
    pub flush_every_ms: Option<u64>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            cache_bytes: 256 << 20,
            flush_every_ms: Some(500),
        }
    }
}

/// An open sled database.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
}

impl Store {
    /// Opens (or creates) the database at `path`.
    ///
    /// sled releases its file lock only when its last internal handle is gone, and its
    /// background threads may still hold one for a moment after the previous `Store` in
    /// this process was dropped; so a lock conflict is retried for up to
    /// [`LOCK_RETRY`] before it is reported.
    pub fn open(path: impl AsRef<Path>, opts: &StoreOptions) -> Result<Self, StoreError> {
        let config = sled::Config::new()
            .path(path.as_ref())
            .cache_capacity(opts.cache_bytes)
            .flush_every_ms(opts.flush_every_ms)
            .mode(sled::Mode::HighThroughput);
        let start = std::time::Instant::now();
        loop {
            match config.open() {
                Ok(db) => return Ok(Store { db }),
                Err(sled::Error::Io(e))
                    if start.elapsed() < LOCK_RETRY
                        && e.to_string().starts_with("could not acquire lock") =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A typed handle on `table` (created on first use).
    pub fn tree<K: Key, V: Value>(
        &self,
        table: &Table<K, V>,
    ) -> Result<TypedTree<K, V>, StoreError> {
        Ok(TypedTree {
            name: table.name,
            tree: self.db.open_tree(table.name)?,
            _types: PhantomData,
        })
    }

    /// Removes every key of `table` (for rebuilding an index from the log).
    pub fn clear<K: Key, V: Value>(&self, table: &Table<K, V>) -> Result<(), StoreError> {
        self.db.open_tree(table.name)?.clear()?;
        Ok(())
    }

    /// Applies `batch` atomically across all the tables it touches. A failed apply leaves
    /// the batch with its caller, to be applied again.
    pub fn apply(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        if batch.trees.is_empty() {
            return Ok(());
        }
        let mut trees = Vec::with_capacity(batch.trees.len());
        let mut batches = Vec::with_capacity(batch.trees.len());
        for (name, b) in &batch.trees {
            trees.push(self.db.open_tree(name)?);
            batches.push(b);
        }
        trees
            .as_slice()
            .transaction(|tx| {
                for (t, b) in tx.iter().zip(&batches) {
                    t.apply_batch(b)?;
                }
                Ok(())
            })
            .map_err(|e: sled::transaction::TransactionError<()>| match e {
                sled::transaction::TransactionError::Storage(e) => StoreError::Sled(e),
                sled::transaction::TransactionError::Abort(()) => {
                    StoreError::Sled(sled::Error::Unsupported("transaction aborted".into()))
                }
            })
    }

    /// Makes everything written so far durable; returns bytes flushed.
    pub fn flush(&self) -> Result<usize, StoreError> {
        Ok(self.db.flush()?)
    }

    /// The log high-water mark the indexes are known to cover (from the last `apply`
    /// that set it), or `None` for a fresh store.
    pub fn high_water(&self) -> Result<Option<HighWater>, StoreError> {
        let meta = self.tree(&META)?;
        match meta.get(&HIGH_WATER_KEY.to_string())? {
            None => Ok(None),
            Some(bytes) => HighWater::decode(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Codec {
                    table: META.name,
                    what: "high-water mark",
                    reason: e.0,
                }),
        }
    }

    /// Adds "the indexes now cover the log up to `hw`" to `batch`.
    pub fn set_high_water(batch: &mut WriteBatch, hw: HighWater) {
        batch.insert(&META, &HIGH_WATER_KEY.to_string(), &hw.encode());
    }
}

/// Writes to several tables, applied atomically by [`Store::apply`].
#[derive(Default)]
pub struct WriteBatch {
    trees: Vec<(&'static str, sled::Batch)>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        WriteBatch::default()
    }

    fn tree(&mut self, name: &'static str) -> &mut sled::Batch {
        if !self.trees.iter().any(|(n, _)| *n == name) {
            self.trees.push((name, sled::Batch::default()));
        }
        let found = self.trees.iter_mut().find(|(n, _)| *n == name);
        // The entry was just ensured; the fallback is unreachable.
        match found {
            Some((_, batch)) => batch,
            None => unreachable!("batch for {name} was just inserted"),
        }
    }

    /// Inserts (or replaces) `key` in `table`.
    pub fn insert<K: Key, V: Value>(&mut self, table: &Table<K, V>, key: &K, value: &V) {
        self.tree(table.name).insert(key.encode(), value.encode());
    }

    /// Removes `key` from `table`.
    pub fn remove<K: Key, V: Value>(&mut self, table: &Table<K, V>, key: &K) {
        self.tree(table.name).remove(key.encode());
    }

    /// True when nothing was written to the batch.
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }
}

/// A typed handle on one sled tree.
pub struct TypedTree<K, V> {
    name: &'static str,
    tree: sled::Tree,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for TypedTree<K, V> {
    fn clone(&self) -> Self {
        TypedTree {
            name: self.name,
            tree: self.tree.clone(),
            _types: PhantomData,
        }
    }
}

impl<K: Key, V: Value> TypedTree<K, V> {
    fn value(&self, bytes: &[u8]) -> Result<V, StoreError> {
        V::decode(bytes).map_err(|e| StoreError::Codec {
            table: self.name,
            what: "value",
            reason: e.0,
        })
    }

    fn pair(&self, item: sled::Result<(sled::IVec, sled::IVec)>) -> Result<(K, V), StoreError> {
        let (k, v) = item?;
        let key = K::decode(&k).map_err(|e| StoreError::Codec {
            table: self.name,
            what: "key",
            reason: e.0,
        })?;
        Ok((key, self.value(&v)?))
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Result<Option<V>, StoreError> {
        match self.tree.get(key.encode())? {
            Some(v) => Ok(Some(self.value(&v)?)),
            None => Ok(None),
        }
    }

    /// True when `key` is present.
    pub fn contains(&self, key: &K) -> Result<bool, StoreError> {
        Ok(self.tree.contains_key(key.encode())?)
    }

    /// Inserts; returns the previous value.
    pub fn insert(&self, key: &K, value: &V) -> Result<Option<V>, StoreError> {
        match self.tree.insert(key.encode(), value.encode())? {
            Some(v) => Ok(Some(self.value(&v)?)),
            None => Ok(None),
        }
    }

    /// Removes; returns the previous value.
    pub fn remove(&self, key: &K) -> Result<Option<V>, StoreError> {
        match self.tree.remove(key.encode())? {
            Some(v) => Ok(Some(self.value(&v)?)),
            None => Ok(None),
        }
    }

    /// All entries whose key starts with the encoding of `prefix`, in key order.
    pub fn scan_prefix<P: Key>(
        &self,
        prefix: &P,
    ) -> impl Iterator<Item = Result<(K, V), StoreError>> + '_ {
        self.tree
            .scan_prefix(prefix.encode())
            .map(|item| self.pair(item))
    }

    /// All entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = Result<(K, V), StoreError>> + '_ {
        self.tree.iter().map(|item| self.pair(item))
    }

    /// Entries with `start <= key`, in key order.
    pub fn range_from(&self, start: &K) -> impl Iterator<Item = Result<(K, V), StoreError>> + '_ {
        self.tree
            .range(start.encode()..)
            .map(|item| self.pair(item))
    }

    /// Number of rows (a full scan in sled).
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }
}
