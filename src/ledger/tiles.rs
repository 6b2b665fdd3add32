//! The ledger tree as a static C2SP `tlog-tiles` directory (PROFILE §13): its signed
//! `checkpoint`, the hash tiles `tile/<L>/<N>[.p/<W>]` read from the stored hashes, and the
//! entry bundles `tile/entries/<N>[.p/<W>]` of the admitted events' 33-byte ids, so that
//! any tlog-tiles client can check the ledger. Names and bytes come from
//! [`crate::tlog`]; this module writes them.

use std::path::Path;

use crate::ed25519_dalek::SigningKey;
use crate::error::Error;
use crate::tlog::{self, encode_entry_bundle, Checkpoint, NoteSigner, Tile, TileKind, TILE_WIDTH};

use super::Ledger;

/// What [`Ledger::write_tiles`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilesReport {
    /// The tree size the tiles and the checkpoint describe.
    pub tree_size: u64,
    /// Hash tiles written.
    pub hash_tiles: u64,
    /// Entry bundles written.
    pub entry_bundles: u64,
    /// The signed checkpoint note written as `checkpoint`.
    pub checkpoint: String,
}

impl Ledger {
    /// The bytes of one tile of the tree of the first `size` events: a hash tile's hashes
    /// (32 bytes each), or an entry bundle's ids (each behind its 16-bit big-endian length).
    /// `proof_invalid` for a tile the tree of that size does not have whole.
    pub fn tile(&self, tile: &Tile, size: u64) -> Result<Vec<u8>, Error> {
        let width = u64::from(TILE_WIDTH);
        let first = tile.index.saturating_mul(width);
        let end = first.saturating_add(u64::from(tile.width));
        let (level_size, what) = match tile.kind {
            TileKind::Entries => (size, "entries"),
            TileKind::Hashes { level } => (
                size.checked_shr(8 * u32::from(level)).unwrap_or(0),
                "hashes",
            ),
        };
        if end > level_size || size > self.tree_size() || tile.width == 0 {
            return Err(Error::NoProof(format!(
                "the tree of {size} events has no tile {} ({what} {first}..{end})",
                tile.path()
            )));
        }
        match tile.kind {
            TileKind::Entries => {
                let state = self.read_state()?;
                let ids = usize::try_from(first)
                    .ok()
                    .zip(usize::try_from(end).ok())
                    .and_then(|(a, b)| state.ids.raw().get(a..b))
                    .ok_or_else(|| Error::NoProof(format!("no entries {first}..{end}")))?;
                encode_entry_bundle(ids.iter().map(|id| &id[..]))
                    .ok_or_else(|| Error::Misuse("an id longer than an entry".into()))
            }
            TileKind::Hashes { .. } => {
                let tree = self.tree_now()?;
                tree.read_tile(tile).map_err(|e| Error::Corrupt {
                    path: self.config.dir.join(crate::layout::TREE),
                    offset: 0,
                    reason: e,
                })
            }
        }
    }

    /// Writes the current tree as a C2SP `tlog-tiles` directory at `out` (created when
    /// missing; files there are replaced): every hash tile and entry bundle of the tree, then
    /// `checkpoint`, its note signed with `key` under the ledger's origin. Returns what it
    /// wrote.
    pub fn write_tiles(&self, out: &Path, key: &SigningKey) -> Result<TilesReport, Error> {
        let size = self.tree_size();
        let origin = self.origin()?;
        let signer = NoteSigner::new(&origin, key.clone())?;
        let note = Checkpoint::new(&origin, size, self.root_at(size)?)?.sign(&signer)?;
        let write = |relative: &str, bytes: &[u8]| -> Result<(), Error> {
            let path = out.join(relative);
            let io = |source| Error::Io {
                path: path.clone(),
                source,
            };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            crate::store::atomic::replace_unsynced(&path, bytes, None).map_err(io)
        };
        let mut report = TilesReport {
            tree_size: size,
            hash_tiles: 0,
            entry_bundles: 0,
            checkpoint: note.clone(),
        };
        for tile in tlog::hash_tiles(size) {
            write(&tile.path(), &self.tile(&tile, size)?)?;
            report.hash_tiles += 1;
        }
        for bundle in tlog::entry_bundles(size) {
            write(&bundle.path(), &self.tile(&bundle, size)?)?;
            report.entry_bundles += 1;
        }
        // Last: a client that finds the checkpoint finds every tile it names.
        write("checkpoint", note.as_bytes())?;
        Ok(report)
    }
}
