//! The ledger tree (PROFILE §13), kept as events are admitted: the RFC 9162 tree over the
//! admitted events' 33-byte binary ids in admission order, its stored hashes in the
//! stored-hash order of [`crate::tlog`] (in the derived file `DIR/tree`, or in memory for an
//! in-memory ledger), and the right edge in memory for the current root. An in-memory
//! ledger (what an audit replays into) builds its tree only when it is first read, and
//! brings it up to the admitted events at each read after that
//! ([`Ledger::tree_now`]): an audit that never asks for a root or a proof hashes nothing
//! and keeps no stored hashes.
//!
//! Appending leaf n stores `1 + trailing_ones(n)` hashes; the earlier hashes that costs are
//! the right edge's subtree roots, so an append reads nothing from disk: O(1) amortised
//! hashing and one positioned write per batch. Roots of earlier sizes and proofs read
//! O(log n) stored hashes by offset. Resident cost: the edge (at most 64 hashes), nothing
//! per event on disk.
//!
//! The file is derived from the admission order (the id table): an open checks its header,
//! its length and the hashes of its last [`TREE_TAIL_CHECK`](crate::limits::TREE_TAIL_CHECK) leaves, cuts what the log no longer
//! holds, adds what it lacks, and rebuilds a file that fails a check; [`Ledger::check`]
//! recomputes every stored hash. The byte layout is in `docs/format.md`.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::RwLockReadGuard;

use crate::ed25519_dalek::SigningKey;
use crate::error::Error;
use crate::id::EventId;
use crate::limits::{TREE_CHUNK as CHUNK, TREE_TAIL_CHECK as TAIL_CHECK};
use crate::tlog::{
    self, append_hashes, leaf_hash, stored_hash_count, stored_hash_index, Checkpoint,
    ConsistencyProof, Hash, HashReader, InclusionProof, NotStored, NoteSigner, TreeError,
    HASH_SIZE,
};

use super::Ledger;

/// The tree file's first bytes: its name and format version.
pub(super) const MAGIC: &[u8; 8] = b"AKTREE\0\x01";
/// Bytes before the first stored hash.
const HEADER: u64 = MAGIC.len() as u64;
/// The prefix of the default origin, followed by the first admitted event's token.
pub const DEFAULT_ORIGIN_PREFIX: &str = "akledger/";

/// Where the stored hashes live.
enum Store {
    /// An in-memory ledger's, or a read-only open's whose file could not be used.
    Memory(Vec<Hash>),
    /// `DIR/tree`, hash `i` at byte `HEADER + 32·i`.
    File { file: File, path: PathBuf },
}

/// The tree: its size, its right edge and its stored hashes.
pub(super) struct Tree {
    size: u64,
    /// The right edge: the roots of the perfect subtrees the tree splits into, largest
    /// first, each with its stored-hash index (so ascending indexes).
    edge: Vec<(u64, Hash)>,
    store: Store,
    /// Built from the admitted ids when read, not as they are admitted (an in-memory
    /// ledger's: [`Tree::lazy`]).
    lazy: bool,
}

/// The right edge as a [`HashReader`]: it answers exactly the hashes an append reads.
struct Edge<'a>(&'a [(u64, Hash)]);

impl HashReader for Edge<'_> {
    type Error = NotStored;

    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, NotStored> {
        indexes
            .iter()
            .map(|&index| {
                self.0
                    .binary_search_by_key(&index, |e| e.0)
                    .ok()
                    .and_then(|i| self.0.get(i))
                    .map(|e| e.1)
                    .ok_or(NotStored { index })
            })
            .collect()
    }
}

/// The stored hashes as a [`HashReader`], read by offset from the file.
struct Stored<'a>(&'a Store);

impl HashReader for Stored<'_> {
    type Error = String;

    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, String> {
        match self.0 {
            Store::Memory(hashes) => hashes.read_hashes(indexes).map_err(|e| e.to_string()),
            Store::File { file, path } => indexes
                .iter()
                .map(|&index| {
                    let mut buf = [0u8; HASH_SIZE];
                    file.read_exact_at(&mut buf, offset_of(index))
                        .map_err(|e| format!("{}: stored hash {index}: {e}", path.display()))?;
                    Ok(Hash(buf))
                })
                .collect(),
        }
    }
}

/// The byte offset of stored hash `index` in the file.
fn offset_of(index: u64) -> u64 {
    HEADER.saturating_add(index.saturating_mul(HASH_SIZE as u64))
}

/// The stored hashes that leaves `ids` add to a tree with right edge `edge` and `size`
/// leaves, in storage order, handed to `emit` leaf by leaf; `edge` and `size` advance.
fn extend(
    edge: &mut Vec<(u64, Hash)>,
    size: &mut u64,
    ids: &[[u8; 33]],
    mut emit: impl FnMut(&[Hash]),
) -> Result<(), String> {
    for raw in ids {
        let n = *size;
        let hashes = append_hashes(n, leaf_hash(raw), &Edge(edge)).map_err(|e| e.to_string())?;
        let completes = n.trailing_ones() as usize;
        edge.truncate(edge.len().saturating_sub(completes));
        let top = stored_hash_index(0, n).saturating_add(completes as u64);
        if let Some(root) = hashes.last() {
            edge.push((top, *root));
        }
        emit(&hashes);
        *size = n + 1;
    }
    Ok(())
}

/// The stored-hash indexes of the right edge of a tree of `size` leaves, largest first.
fn edge_indexes(size: u64) -> Vec<u64> {
    let mut start = 0u64;
    let mut out = Vec::new();
    for level in (0..64u32).rev() {
        if size & (1u64 << level) != 0 {
            out.push(stored_hash_index(level, start >> level));
            start += 1u64 << level;
        }
    }
    out
}

fn to_bytes(hashes: &[Hash]) -> Vec<u8> {
    hashes.iter().flat_map(|h| h.0).collect()
}

/// A request for a proof or a root that cannot be answered (code `proof_invalid`).
fn no_proof(message: String) -> Error {
    Error::NoProof(message)
}

impl Tree {
    /// An empty tree whose stored hashes are kept in memory.
    pub(super) fn in_memory() -> Tree {
        Tree {
            size: 0,
            edge: Vec::new(),
            store: Store::Memory(Vec::new()),
            lazy: false,
        }
    }

    /// An in-memory ledger's empty tree, built from the admitted ids when it is read
    /// ([`Tree::catch_up`]) instead of as they are admitted.
    pub(super) fn lazy() -> Tree {
        Tree {
            lazy: true,
            ..Tree::in_memory()
        }
    }

    /// Whether the tree is built when read ([`Tree::lazy`]): admitting events leaves it as
    /// it is.
    pub(super) fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Appends the admitted `ids` (all of them, in admission order) that the tree lacks.
    fn catch_up(&mut self, ids: &[[u8; 33]]) -> Result<(), Error> {
        let from = usize::try_from(self.size).unwrap_or(usize::MAX);
        match ids.get(from..) {
            Some(lacking) if !lacking.is_empty() => self.append(lacking),
            _ => Ok(()),
        }
    }

    /// The tree of the admitted `ids` (in admission order) from `DIR/tree`: checked, cut to
    /// the ids, extended by those it lacks, or rebuilt (read-only: built in memory when the
    /// file cannot be used as it is). Returns what was done, if anything, for the open
    /// report.
    pub(super) fn open(
        dir: &Path,
        ids: &[[u8; 33]],
        read_only: bool,
    ) -> Result<(Tree, Option<String>), Error> {
        let path = dir.join(crate::layout::TREE);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let n = ids.len() as u64;
        // A new ledger's file is made without a word; one missing under events is news.
        let quiet = n == 0 && std::fs::metadata(&path).map_or(true, |m| m.len() == 0);
        let file = if read_only {
            match File::open(&path) {
                Ok(file) => Some(file),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(io(e)),
            }
        } else {
            Some(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(io)?,
            )
        };
        let found = match file {
            Some(file) => Self::usable(file, &path, ids),
            None => Err("is missing".to_string()),
        };
        match found {
            Ok((tree, None)) => Ok((tree, None)),
            Ok((mut tree, Some(lacking))) if !read_only => {
                let from = usize::try_from(tree.size).unwrap_or(usize::MAX);
                tree.append(ids.get(from..).unwrap_or_default())?;
                Ok((tree, Some(lacking)))
            }
            Ok((_, Some(why))) | Err(why) if read_only => {
                let tree = Tree::rebuilt(dir, ids, true)?;
                let report = format!(
                    "built the tree of {n} events in memory: the tree file {why} (read-only open; left as it is)"
                );
                Ok((tree, (!quiet).then_some(report)))
            }
            Ok((_, Some(why))) | Err(why) => {
                let tree = Tree::rebuilt(dir, ids, false)?;
                let report = format!(
                    "rebuilt the tree file from the admission order ({n} events): the file {why}"
                );
                Ok((tree, (!quiet).then_some(report)))
            }
        }
    }

    /// The tree of `ids` computed anew: written over `DIR/tree`, or in memory for a
    /// read-only open.
    pub(super) fn rebuilt(dir: &Path, ids: &[[u8; 33]], read_only: bool) -> Result<Tree, Error> {
        if read_only {
            let mut tree = Tree::in_memory();
            tree.append(ids)?;
            return Ok(tree);
        }
        let path = dir.join(crate::layout::TREE);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        file.set_len(0).map_err(io)?;
        file.write_all_at(MAGIC, 0).map_err(io)?;
        let mut tree = Tree {
            size: 0,
            edge: Vec::new(),
            store: Store::File {
                file,
                path: path.clone(),
            },
            lazy: false,
        };
        tree.append(ids)?;
        Ok(tree)
    }

    /// The tree in `file` when its header, length and tail hold for `ids`: cut to them
    /// (never on a read-only open: a longer file is only read up to them), and with
    /// `Some(what)` when it lacks some; `Err(why)` when it must be rebuilt.
    fn usable(file: File, path: &Path, ids: &[[u8; 33]]) -> Result<(Tree, Option<String>), String> {
        let len = file
            .metadata()
            .map_err(|e| format!("cannot be read ({e})"))?
            .len();
        let mut magic = [0u8; 8];
        if len < HEADER || file.read_exact_at(&mut magic, 0).is_err() || &magic != MAGIC {
            return Err("has no tree file header".into());
        }
        let whole = (len - HEADER) / HASH_SIZE as u64;
        let n = ids.len() as u64;
        // The largest tree the file holds whole (a torn tail is cut), at most the ids'.
        // (2s − popcount(s) ≤ whole gives s ≤ (whole + 64) / 2.)
        let mut size = (whole.saturating_add(64) / 2).min(n);
        while size > 0 && stored_hash_count(size) > whole {
            size -= 1;
        }
        let mut tree = Tree {
            size,
            edge: Vec::new(),
            store: Store::File {
                file,
                path: path.to_owned(),
            },
            lazy: false,
        };
        let indexes = edge_indexes(size);
        let roots = Stored(&tree.store)
            .read_hashes(&indexes)
            .map_err(|e| format!("cannot be read ({e})"))?;
        tree.edge = indexes.into_iter().zip(roots).collect();
        tree.check_tail(ids)?;
        let exact = HEADER + stored_hash_count(size) * HASH_SIZE as u64;
        if len != exact {
            if let Store::File { file, .. } = &tree.store {
                // A read-only file is left as it is: only its first `size` leaves are used.
                let _ = file.set_len(exact);
            }
        }
        let lacking = (size < n).then(|| {
            format!(
                "the tree file held {size} of the {n} admitted events; the {} after them were added",
                n - size
            )
        });
        Ok((tree, lacking))
    }

    /// Recomputes the stored hashes of the last [`TREE_TAIL_CHECK`](crate::limits::TREE_TAIL_CHECK) leaves of the tree (and of
    /// the subtrees they complete) from `ids` and the hashes stored before them.
    fn check_tail(&self, ids: &[[u8; 33]]) -> Result<(), String> {
        let from = self.size.saturating_sub(TAIL_CHECK);
        let reader = Stored(&self.store);
        for leaf in from..self.size {
            let raw = usize::try_from(leaf)
                .ok()
                .and_then(|i| ids.get(i))
                .ok_or("is longer than the admission order")?;
            let want = append_hashes(leaf, leaf_hash(raw), &reader)
                .map_err(|e| format!("cannot be read ({e})"))?;
            let first = stored_hash_index(0, leaf);
            let indexes: Vec<u64> = (first..first + want.len() as u64).collect();
            let have = reader
                .read_hashes(&indexes)
                .map_err(|e| format!("cannot be read ({e})"))?;
            if have != want {
                return Err(format!(
                    "does not hold event {leaf}'s hashes as the admission order gives them"
                ));
            }
        }
        Ok(())
    }

    /// Appends the admitted `ids` (the next in admission order), writing their stored hashes
    /// in one write per [`TREE_CHUNK`](crate::limits::TREE_CHUNK) leaves. On failure the tree is as it was.
    pub(super) fn append(&mut self, ids: &[[u8; 33]]) -> Result<(), Error> {
        for chunk in ids.chunks(CHUNK) {
            let mut edge = self.edge.clone();
            let mut size = self.size;
            let mut out = Vec::with_capacity(chunk.len() * 2);
            extend(&mut edge, &mut size, chunk, |h| out.extend_from_slice(h))
                .map_err(Error::Misuse)?;
            match &mut self.store {
                Store::Memory(hashes) => hashes.extend_from_slice(&out),
                Store::File { file, path } => {
                    let at = offset_of(stored_hash_count(self.size));
                    file.write_all_at(&to_bytes(&out), at)
                        .map_err(|source| Error::Io {
                            path: path.clone(),
                            source,
                        })?;
                }
            }
            self.edge = edge;
            self.size = size;
        }
        Ok(())
    }

    /// The number of leaves.
    pub(super) fn size(&self) -> u64 {
        self.size
    }

    /// The current root, from the edge.
    pub(super) fn root(&self) -> Hash {
        let roots = self.edge.iter().map(|e| e.1).collect();
        tlog::Frontier::from_roots(self.size, roots)
            .map(|f| f.root())
            .unwrap_or_else(tlog::empty_root)
    }

    /// The root of the tree of the first `size` leaves (`size` at most the tree's).
    pub(super) fn root_at(&self, size: u64) -> Result<Hash, TreeError<String>> {
        if size == self.size {
            return Ok(self.root());
        }
        tlog::tree_hash(size, &self.reader())
    }

    /// The bytes of a hash tile, from the stored hashes.
    pub(super) fn read_tile(&self, tile: &tlog::Tile) -> Result<Vec<u8>, String> {
        tlog::read_tile(tile, &self.reader()).map_err(|e| e.to_string())
    }

    /// The stored hashes' reader.
    fn reader(&self) -> Stored<'_> {
        Stored(&self.store)
    }

    /// Compares every stored hash with a recomputation from `ids` (a rebuild's admission
    /// order), and the size; the first difference as a sentence.
    pub(super) fn compare(&self, ids: &[[u8; 33]]) -> Result<Option<String>, Error> {
        if self.size != ids.len() as u64 {
            return Ok(Some(format!(
                "the tree holds {} events but the log admits {}",
                self.size,
                ids.len()
            )));
        }
        let (mut edge, mut size) = (Vec::new(), 0u64);
        let mut next = 0u64;
        for chunk in ids.chunks(CHUNK) {
            let mut want = Vec::with_capacity(chunk.len() * 2);
            extend(&mut edge, &mut size, chunk, |h| want.extend_from_slice(h))
                .map_err(Error::Misuse)?;
            let indexes: Vec<u64> = (next..next + want.len() as u64).collect();
            let have = match self.reader().read_hashes(&indexes) {
                Ok(have) => have,
                Err(e) => return Ok(Some(format!("the tree's stored hashes: {e}"))),
            };
            if let Some(i) = (0..want.len()).find(|&i| have.get(i) != want.get(i)) {
                return Ok(Some(format!(
                    "the tree's stored hash {} differs from a recomputation from the admission order",
                    next + i as u64
                )));
            }
            next += want.len() as u64;
        }
        if self.root()
            != tlog::Frontier::from_roots(size, edge.iter().map(|e| e.1).collect())
                .map(|f| f.root())
                .unwrap_or_else(tlog::empty_root)
        {
            return Ok(Some(
                "the tree's current root differs from a recomputation".into(),
            ));
        }
        Ok(None)
    }
}

/// Maps a computation over stored hashes to the engine's error.
fn tree_error(path: &Path, e: TreeError<String>) -> Error {
    match e {
        TreeError::Misuse(m) => no_proof(m),
        other => Error::Corrupt {
            path: path.join(crate::layout::TREE),
            offset: 0,
            reason: format!("{other}; remove the tree file and reopen to rebuild it"),
        },
    }
}

impl Ledger {
    /// The tree to read: a lazy one ([`Tree::lazy`]) is first brought up to the admitted
    /// events. (Locks in the order commits take them: the state, then the tree.)
    pub(super) fn tree_now(&self) -> Result<RwLockReadGuard<'_, Tree>, Error> {
        {
            let tree = self.tree.read().map_err(|_| Error::Poisoned)?;
            if !tree.is_lazy() {
                return Ok(tree);
            }
        }
        let state = self.read_state()?;
        {
            let tree = self.tree.read().map_err(|_| Error::Poisoned)?;
            if tree.size() == state.ids.raw().len() as u64 {
                return Ok(tree);
            }
        }
        self.tree
            .write()
            .map_err(|_| Error::Poisoned)?
            .catch_up(state.ids.raw())?;
        drop(state);
        self.tree.read().map_err(|_| Error::Poisoned)
    }

    /// The number of events in the ledger tree: the admitted events (PROFILE §13).
    pub fn tree_size(&self) -> u64 {
        match self.tree.read() {
            // A lazy tree's size is what it will have when read: every admitted event.
            Ok(tree) if tree.is_lazy() => {
                drop(tree);
                self.read_state().map_or(0, |s| s.ids.raw().len() as u64)
            }
            Ok(tree) => tree.size(),
            Err(_) => 0,
        }
    }

    /// The root of the current tree (the empty tree's hash while nothing is admitted).
    pub fn root(&self) -> Result<Hash, Error> {
        Ok(self.tree_now()?.root())
    }

    /// The root of the tree of the first `size` admitted events (`size` at most
    /// [`Ledger::tree_size`]; otherwise `proof_invalid`).
    pub fn root_at(&self, size: u64) -> Result<Hash, Error> {
        let tree = self.tree_now()?;
        check_size("a tree", size, tree.size())?;
        tree.root_at(size)
            .map_err(|e| tree_error(&self.config.dir, e))
    }

    /// The ledger's origin (PROFILE §13): [`Config::origin`](super::Config::origin) when
    /// set, otherwise `akledger/` followed by the token of the first admitted event.
    /// `proof_invalid` for an empty ledger without a configured origin.
    pub fn origin(&self) -> Result<String, Error> {
        if let Some(origin) = &self.config.origin {
            return Ok(origin.clone());
        }
        let state = self.read_state()?;
        let first = state
            .ids
            .raw()
            .first()
            .and_then(|raw| EventId::from_bytes(raw).ok())
            .ok_or_else(|| {
                no_proof(
                    "the ledger admits no event yet, so it has no default origin; set one".into(),
                )
            })?;
        Ok(format!("{DEFAULT_ORIGIN_PREFIX}{}", first.token().as_str()))
    }

    /// The signed checkpoint note of the current tree (PROFILE §13), signed with `key` under
    /// the ledger's [`Ledger::origin`] (the key's name). `checkpoint_invalid` when the origin
    /// is not a valid key name.
    pub fn checkpoint(&self, key: &SigningKey) -> Result<String, Error> {
        let origin = self.origin()?;
        let signer = NoteSigner::new(&origin, key.clone())?;
        let (size, root) = {
            let tree = self.tree_now()?;
            (tree.size(), tree.root())
        };
        Ok(Checkpoint::new(&origin, size, root)?.sign(&signer)?)
    }

    /// The proof that the admitted event `id` is in the tree of the first `size` events
    /// (the current tree when `None`). `proof_invalid` when the event is not admitted, was
    /// admitted at or after `size`, or `size` is past the tree.
    pub fn inclusion_proof(
        &self,
        id: &EventId,
        size: Option<u64>,
    ) -> Result<InclusionProof, Error> {
        let origin = self.origin()?;
        let index = {
            let state = self.read_state()?;
            state.ids.get(id).map(|p| p.index() as u64)
        }
        .ok_or_else(|| no_proof(format!("{id} is not an admitted event of this ledger")))?;
        let tree = self.tree_now()?;
        let size = size.unwrap_or(tree.size());
        check_size("a tree", size, tree.size())?;
        if index >= size {
            return Err(no_proof(format!(
                "{id} is event number {index}, not in the tree of the first {size} events"
            )));
        }
        let hashes = tlog::inclusion_proof(index, size, &tree.reader())
            .map_err(|e| tree_error(&self.config.dir, e))?;
        Ok(InclusionProof::new(&origin, size, index, *id, hashes)?)
    }

    /// The proof that the tree of `new_size` events (the current tree when `None`) extends
    /// the tree of `old_size`. `proof_invalid` when `old_size > new_size` or `new_size` is
    /// past the tree.
    pub fn consistency_proof(
        &self,
        old_size: u64,
        new_size: Option<u64>,
    ) -> Result<ConsistencyProof, Error> {
        let origin = self.origin()?;
        let tree = self.tree_now()?;
        let new_size = new_size.unwrap_or(tree.size());
        check_size("a tree", new_size, tree.size())?;
        if old_size > new_size {
            return Err(no_proof(format!(
                "no consistency proof from {old_size} events to fewer, {new_size}"
            )));
        }
        let hashes = tlog::consistency_proof(old_size, new_size, &tree.reader())
            .map_err(|e| tree_error(&self.config.dir, e))?;
        Ok(ConsistencyProof::new(&origin, old_size, new_size, hashes)?)
    }

    /// For [`Ledger::check`]: the tree against a recomputation from `ids`.
    pub(super) fn compare_tree(
        &self,
        ids: &[[u8; 33]],
        diffs: &mut Vec<String>,
    ) -> Result<(), Error> {
        let tree = self.tree_now()?;
        if let Some(d) = tree.compare(ids)? {
            diffs.push(d);
        }
        Ok(())
    }
}

/// Refuses a size past the tree.
fn check_size(what: &str, size: u64, tree_size: u64) -> Result<(), Error> {
    if size > tree_size {
        return Err(no_proof(format!(
            "{what} of {size} events is past the ledger's tree of {tree_size}"
        )));
    }
    Ok(())
}

impl From<tlog::TlogError> for Error {
    fn from(e: tlog::TlogError) -> Self {
        Error::Tlog(e)
    }
}
