//! The ledger's latest stored checkpoint (`DIR/checkpoint`, PROFILE §13): a signed
//! checkpoint note the ledger recorded of its own tree — every
//! [`Config::checkpoint_every`](super::Config::checkpoint_every) admitted events with the
//! configured key, or on [`Ledger::record_checkpoint`] (what `akledger checkpoint` does) —
//! and the check at every open that the log still extends it.
//!
//! A log that no longer extends its latest stored checkpoint (shorter than its size, or
//! with another root there: a restored older copy of `log/`, a log cut by whole batches
//! with its marker, another history) is refused with `checkpoint_mismatch`, by writers and
//! read-only opens alike, naming the size and root expected and what was found. The note's
//! signature is for others to check; the open compares size and root. The file is replaced
//! atomically and durably, and only after the log it describes is durable.

use std::path::Path;

use crate::ed25519_dalek::SigningKey;
use crate::error::{Code, Error};
use crate::layout;
use crate::store::log::Durability;
use crate::tlog::{leaf_hash, Checkpoint, Frontier, Hash, Note, TlogError};

use super::tree::Tree;
use super::{log_error, Ledger, Writer};

/// The latest stored checkpoint in `dir`, if there is one. A file that is not a checkpoint
/// note is `checkpoint_invalid`.
pub(super) fn read(dir: &Path) -> Result<Option<Checkpoint>, Error> {
    let path = dir.join(layout::CHECKPOINT);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path, source }),
    };
    let parsed = Note::parse(&bytes).and_then(|note| Checkpoint::parse(note.text()));
    parsed.map(Some).map_err(|e| {
        Error::Tlog(TlogError::new(
            Code::CheckpointInvalid,
            format!(
                "{}: the ledger's stored checkpoint is not a checkpoint note ({}); restore it, or remove it to accept the log as it is",
                path.display(),
                e.message()
            ),
        ))
    })
}

/// Refuses a tree that does not extend `checkpoint` (`checkpoint_mismatch`). Before it
/// refuses a tree of the admitted `ids` for another root, it recomputes that root from
/// the ids (a right edge in memory, nothing stored): when that one matches, the tree file
/// was damaged, not the log rolled back, and the tree is rebuilt (the report says so).
pub(super) fn check(
    dir: &Path,
    tree: &mut Tree,
    checkpoint: &Checkpoint,
    ids: &[[u8; 33]],
    read_only: bool,
    report: &mut Option<String>,
) -> Result<(), Error> {
    let (size, want) = (checkpoint.size(), checkpoint.root());
    let found = if tree.size() >= size {
        Some(tree.root_at(size).map_err(|e| Error::Corrupt {
            path: dir.join(layout::TREE),
            offset: 0,
            reason: e.to_string(),
        })?)
    } else {
        None
    };
    if found.is_some_and(|root| root != *want) && recomputed_root(ids, size) == Some(*want) {
        *tree = Tree::rebuilt(dir, ids, read_only)?;
        *report = Some(format!(
            "rebuilt the tree from the admission order ({} events): the tree file did not have the recorded checkpoint's root at size {size}, which the admission order does",
            ids.len()
        ));
        return Ok(());
    }
    let what = match found {
        Some(root) if root == *want => return Ok(()),
        Some(root) => format!("its tree of {size} events has root {}", root.to_base64()),
        None => format!("it holds {} events", tree.size()),
    };
    Err(Error::Tlog(TlogError::new(
        Code::CheckpointMismatch,
        format!(
            "{}: the log no longer extends the ledger's latest stored checkpoint (size {size}, root {}): {what}. The log was rolled back or replaced; the ledger was not opened and no event can be appended to it. Restore the log from a backup (or remove the checkpoint file to accept the log as it is)",
            dir.join(layout::CHECKPOINT).display(),
            want.to_base64()
        ),
    )))
}

/// The root of the tree of the first `size` of `ids`, hashed anew.
fn recomputed_root(ids: &[[u8; 33]], size: u64) -> Option<Hash> {
    let ids = ids.get(..usize::try_from(size).ok()?)?;
    let mut frontier = Frontier::new();
    for raw in ids {
        frontier.push(leaf_hash(raw));
    }
    Some(frontier.root())
}

impl Ledger {
    /// Signs the current tree's checkpoint with `key` (see [`Ledger::checkpoint`]) and
    /// stores it as the ledger's latest checkpoint, `DIR/checkpoint`, after making the log
    /// durable; returns the note. Every later open refuses a log that does not extend it.
    /// Misuse on an in-memory or read-only ledger.
    pub fn record_checkpoint(&self, key: &SigningKey) -> Result<String, Error> {
        self.check_writable()?;
        if self.config.in_memory {
            return Err(Error::Misuse(
                "an in-memory ledger has no directory to record checkpoints in".into(),
            ));
        }
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        if writer.poisoned {
            return Err(Error::Poisoned);
        }
        self.record_with(&mut writer, key)
    }

    /// With the writer held: the log made durable, then the note signed and stored.
    fn record_with(&self, writer: &mut Writer, key: &SigningKey) -> Result<String, Error> {
        if writer.log.durability() == Durability::Buffered {
            writer.log.sync().map_err(log_error)?;
        }
        let note = self.checkpoint(key)?;
        let path = self.config.dir.join(layout::CHECKPOINT);
        crate::store::atomic::replace(&path, note.as_bytes(), None)
            .map_err(|source| Error::Io { path, source })?;
        writer.checkpointed = self.tree_size();
        Ok(note)
    }

    /// After a commit: records a checkpoint when [`Config::checkpoint_every`] events were
    /// admitted since the last one (with the configured key).
    ///
    /// [`Config::checkpoint_every`]: super::Config::checkpoint_every
    pub(super) fn checkpoint_if_due(&self, writer: &mut Writer) -> Result<(), Error> {
        let Some((every, key)) = &self.config.checkpoint_every else {
            return Ok(());
        };
        if self.config.in_memory || self.tree_size() < writer.checkpointed.saturating_add(*every) {
            return Ok(());
        }
        self.record_with(writer, key).map(drop)
    }
}
