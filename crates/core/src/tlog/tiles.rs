//! C2SP `tlog-tiles` names and bytes, pure (the engine writes the files, PROFILE §13): tile
//! paths `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`, which tiles a tree of a size
//! has, a hash tile's bytes from stored hashes, and entry bundles.
//!
//! A tile at level `L` holds up to 256 consecutive hashes of the tree's level `8·L` (so
//! level-0 tiles hold leaf hashes); tile `N` of a level starts at hash `256·N` there. A tree
//! of `s` leaves has `s / 256^L` hashes at tile level `L`: full tiles of 256, then one
//! partial tile of the rest when it is not zero. Entry bundles follow the level-0 tiles,
//! holding the entries themselves, each behind a 16-bit big-endian length.

use std::fmt::Write as _;

use super::error::TreeError;
use super::hash::HASH_SIZE;
use super::stored::{read_exactly, stored_hash_index, HashReader};
use crate::limits::MAX_TREE_SIZE;

/// Tree levels per tile level: a tile is a subtree of height 8.
pub const TILE_HEIGHT: u32 = 8;

/// Hashes in a full tile (entries in a full bundle).
pub const TILE_WIDTH: u32 = 1 << TILE_HEIGHT;

/// Highest tile level a path may name (C2SP: 0 to 63).
const MAX_PATH_LEVEL: u8 = 63;

/// What a tile holds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum TileKind {
    /// Hashes of the tree's level `8 · level`.
    Hashes {
        /// The tile level.
        level: u8,
    },
    /// An entry bundle: the entries under the level-0 tile of the same index.
    Entries,
}

/// One tile or entry bundle: what it holds, its index within its level, and its width (256
/// for a full tile, 1 to 255 for a partial one).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Tile {
    /// Hashes of a level, or entries.
    pub kind: TileKind,
    /// The index within its level.
    pub index: u64,
    /// How many hashes or entries it holds: 1 to 256.
    pub width: u32,
}

impl Tile {
    /// Whether it holds the full 256.
    pub fn is_full(&self) -> bool {
        self.width == TILE_WIDTH
    }

    /// The tile's path below the log's prefix: `tile/<L>/<N>[.p/<W>]` or
    /// `tile/entries/<N>[.p/<W>]`, with `N` in 3-digit groups, all but the last prefixed with
    /// `x` (index 1234067 is `x001/x234/067`).
    pub fn path(&self) -> String {
        let mut out = String::from("tile/");
        match self.kind {
            TileKind::Hashes { level } => {
                let _ = write!(out, "{level}/");
            }
            TileKind::Entries => out.push_str("entries/"),
        }
        // Three-digit groups, least significant first.
        let mut groups = vec![self.index % 1000];
        let mut n = self.index / 1000;
        while n > 0 {
            groups.push(n % 1000);
            n /= 1000;
        }
        if let Some((last, leading)) = groups.split_first() {
            for group in leading.iter().rev() {
                let _ = write!(out, "x{group:03}/");
            }
            let _ = write!(out, "{last:03}");
        }
        if !self.is_full() {
            let _ = write!(out, ".p/{}", self.width);
        }
        out
    }

    /// Parses a path [`Tile::path`] writes, and only those: a level 0–63 without leading
    /// zeros (or `entries`), an index in `x`-prefixed 3-digit groups without a leading `x000`
    /// group, and for a partial tile a width 1–255 without leading zeros.
    pub fn parse_path(path: &str) -> Option<Tile> {
        let rest = path.strip_prefix("tile/")?;
        let (level, rest) = rest.split_once('/')?;
        let kind = if level == "entries" {
            TileKind::Entries
        } else {
            let level = u8::try_from(canonical_decimal(level)?).ok()?;
            if level > MAX_PATH_LEVEL {
                return None;
            }
            TileKind::Hashes { level }
        };
        let (index_path, width) = match rest.split_once(".p/") {
            Some((index_path, width)) => {
                let width = u32::try_from(canonical_decimal(width)?).ok()?;
                if width == 0 || width >= TILE_WIDTH {
                    return None;
                }
                (index_path, width)
            }
            None => (rest, TILE_WIDTH),
        };
        let groups: Vec<&str> = index_path.split('/').collect();
        let (last, leading) = groups.split_last()?;
        let mut index: u64 = 0;
        for (i, group) in leading.iter().enumerate() {
            let digits = group.strip_prefix('x')?;
            let value = three_digits(digits)?;
            if i == 0 && value == 0 {
                return None;
            }
            index = index.checked_mul(1000)?.checked_add(value)?;
        }
        index = index.checked_mul(1000)?.checked_add(three_digits(last)?)?;
        Some(Tile { kind, index, width })
    }

    /// The stored-hash indexes of a hash tile's hashes, in order: `None` for an entry
    /// bundle, a width outside 1–256, or a tile whose hashes reach past a tree of
    /// [`MAX_TREE_SIZE`] leaves.
    pub fn hash_indexes(&self) -> Option<Vec<u64>> {
        let TileKind::Hashes { level } = self.kind else {
            return None;
        };
        if self.width == 0 || self.width > TILE_WIDTH {
            return None;
        }
        let tree_level = u32::from(level) * TILE_HEIGHT;
        let first = self.index.checked_mul(u64::from(TILE_WIDTH))?;
        let end = first.checked_add(u64::from(self.width))?;
        // The leaves under the tile's last hash end at end · 2^tree_level.
        let leaves = end
            .checked_shl(tree_level)
            .filter(|l| l >> tree_level == end)?;
        if tree_level >= 63 || leaves > MAX_TREE_SIZE {
            return None;
        }
        Some(
            (first..end)
                .map(|n| stored_hash_index(tree_level, n))
                .collect(),
        )
    }
}

/// The hash tiles of a tree of `size` leaves, level by level from 0, each level's full tiles
/// then its partial one. (A tree of 70,000 leaves: 273 full tiles and one of width 112 at
/// level 0, one full and one of width 17 at level 1, one of width 1 at level 2.)
pub fn hash_tiles(size: u64) -> impl Iterator<Item = Tile> {
    (0..=MAX_PATH_LEVEL)
        .map(move |level| (level, hashes_at(size, level)))
        .take_while(|&(_, count)| count > 0)
        .flat_map(|(level, count)| tiles_of(TileKind::Hashes { level }, count, 0))
}

/// The entry bundles of a tree of `size` leaves: full ones, then the partial one.
pub fn entry_bundles(size: u64) -> impl Iterator<Item = Tile> {
    tiles_of(TileKind::Entries, size, 0)
}

/// The tiles and bundles a tree grown from `old_size` to `new_size` leaves has that the old
/// tree did not have with the same contents: at each level, from the tile that held the old
/// tree's partial hashes (or the first new one) on. These are the files to write (none when
/// `new_size` is not larger).
pub fn changed_tiles(old_size: u64, new_size: u64) -> impl Iterator<Item = Tile> {
    let old_size = old_size.min(new_size);
    let hash_levels = (0..=MAX_PATH_LEVEL)
        .map(move |level| {
            (
                TileKind::Hashes { level },
                hashes_at(new_size, level),
                hashes_at(old_size, level),
            )
        })
        .take_while(|&(_, count, _)| count > 0);
    std::iter::once((TileKind::Entries, new_size, old_size))
        .chain(hash_levels)
        .flat_map(|(kind, count, old_count)| {
            let from = if count == old_count {
                // Nothing new at this level.
                count.div_ceil(u64::from(TILE_WIDTH))
            } else {
                old_count / u64::from(TILE_WIDTH)
            };
            tiles_of(kind, count, from)
        })
}

/// The bytes of a hash tile: its hashes, 32 bytes each, read from stored hashes.
pub fn read_tile<R: HashReader + ?Sized>(
    tile: &Tile,
    reader: &R,
) -> Result<Vec<u8>, TreeError<R::Error>> {
    let indexes = tile.hash_indexes().ok_or_else(|| {
        TreeError::Misuse(format!(
            "{} is not a hash tile of a supported tree",
            tile.path()
        ))
    })?;
    let hashes = read_exactly(reader, &indexes)?;
    let mut out = Vec::with_capacity(hashes.len() * HASH_SIZE);
    for h in &hashes {
        out.extend_from_slice(h.as_bytes());
    }
    Ok(out)
}

/// An entry bundle of `entries`: each entry's length as 16 big-endian bits, then the entry.
/// `None` when an entry is longer than 65,535 bytes.
pub fn encode_entry_bundle<'a>(entries: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for entry in entries {
        let len = u16::try_from(entry.len()).ok()?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(entry);
    }
    Some(out)
}

/// The entries of an entry bundle, in order; `None` unless the bytes are exactly a sequence
/// of length-prefixed entries.
pub fn decode_entry_bundle(bundle: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut rest = bundle;
    while !rest.is_empty() {
        let (len, tail) = rest.split_first_chunk::<2>()?;
        let len = usize::from(u16::from_be_bytes(*len));
        if tail.len() < len {
            return None;
        }
        let (entry, tail) = tail.split_at(len);
        out.push(entry);
        rest = tail;
    }
    Some(out)
}

/// How many hashes of tile level `level` a tree of `size` leaves has: `size / 256^level`.
fn hashes_at(size: u64, level: u8) -> u64 {
    size.checked_shr(TILE_HEIGHT * u32::from(level))
        .unwrap_or(0)
}

/// The tiles of one level holding `count` hashes, from tile `from` on.
fn tiles_of(kind: TileKind, count: u64, from: u64) -> impl Iterator<Item = Tile> {
    let width = u64::from(TILE_WIDTH);
    let full = count / width;
    let partial = count % width;
    let partial = (partial > 0).then_some(Tile {
        kind,
        index: full,
        width: u32::try_from(partial).unwrap_or(TILE_WIDTH),
    });
    (from..full)
        .map(move |index| Tile {
            kind,
            index,
            width: TILE_WIDTH,
        })
        .chain(partial.filter(|t| t.index >= from))
}

/// A decimal without sign or leading zeros.
fn canonical_decimal(s: &str) -> Option<u64> {
    super::checkpoint::parse_decimal(s)
}

/// Exactly three decimal digits.
fn three_digits(s: &str) -> Option<u64> {
    (s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}
