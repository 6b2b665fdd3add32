//! Tile paths, tile sets, tile bytes and entry bundles.

use super::*;

fn hashes(level: u8, index: u64, width: u32) -> Tile {
    Tile {
        kind: TileKind::Hashes { level },
        index,
        width,
    }
}

#[test]
fn paths_round_trip_and_only_canonical_ones_parse() {
    for (tile, path) in [
        (hashes(0, 0, 256), "tile/0/000"),
        (hashes(1, 5, 17), "tile/1/005.p/17"),
        (hashes(2, 1000, 256), "tile/2/x001/000"),
        (hashes(63, 1_234_067, 1), "tile/63/x001/x234/067.p/1"),
        (
            hashes(0, u64::MAX, 256),
            "tile/0/x018/x446/x744/x073/x709/x551/615",
        ),
        (
            Tile {
                kind: TileKind::Entries,
                index: 1_234_067,
                width: 255,
            },
            "tile/entries/x001/x234/067.p/255",
        ),
    ] {
        assert_eq!(tile.path(), path);
        assert_eq!(Tile::parse_path(path), Some(tile), "{path}");
    }
    for bad in [
        "tile/00/000",
        "tile/64/000",
        "tile/0/00",
        "tile/0/0000",
        "tile/0/x000/001",
        "tile/0/001/002",
        "tile/0/x1/002",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/017",
        "tile/0/000.p/",
        "tile/0/x018/x446/x744/x073/x709/x551/616",
        "tile/data/000",
        "tile/8/0/000",
        "tiles/0/000",
        "tile/0/000/",
        "tile/0/-01",
    ] {
        assert_eq!(Tile::parse_path(bad), None, "{bad}");
    }
}

#[test]
fn tile_sets_by_size() {
    assert_eq!(hash_tiles(0).count(), 0);
    assert_eq!(entry_bundles(0).count(), 0);
    assert_eq!(hash_tiles(1).collect::<Vec<_>>(), [hashes(0, 0, 1)]);
    assert_eq!(
        hash_tiles(513).collect::<Vec<_>>(),
        [
            hashes(0, 0, 256),
            hashes(0, 1, 256),
            hashes(0, 2, 1),
            hashes(1, 0, 2)
        ]
    );
    assert_eq!(
        hash_tiles(65_537).last().map(|t| t.kind),
        Some(TileKind::Hashes { level: 2 })
    );
    // A tree of 2^24 leaves: 65,536 full tiles at level 0, and its top hash alone at level
    // 3. (This asked for `hash_tiles(u64::MAX).last()` once, which finished only where the
    // optimizer removed the walk over 2^56 tiles; unoptimized it ran for minutes.)
    assert_eq!(
        hash_tiles(1 << 24).last(),
        Some(Tile {
            kind: TileKind::Hashes { level: 3 },
            index: 0,
            width: 1
        })
    );
}

#[test]
fn changed_tiles_are_exactly_the_new_or_grown_ones() {
    let all = |n: u64| -> Vec<Tile> { entry_bundles(n).chain(hash_tiles(n)).collect() };
    let sizes = [
        0u64, 1, 2, 255, 256, 257, 511, 512, 700, 65_535, 65_536, 65_537, 70_000,
    ];
    for &old in &sizes {
        for &new in &sizes {
            if old > new {
                continue;
            }
            let before = all(old);
            let mut expected: Vec<Tile> = all(new)
                .into_iter()
                .filter(|t| !before.contains(t))
                .collect();
            let mut got: Vec<Tile> = changed_tiles(old, new).collect();
            expected.sort();
            got.sort();
            assert_eq!(got, expected, "{old} -> {new}");
        }
    }
}

#[test]
fn tile_bytes_are_the_stored_hashes_of_their_level() {
    let leaves = leaves(600);
    let stored = stored_of(&leaves);
    let level0 = read_tile(&hashes(0, 1, 88), &stored).unwrap();
    let expected: Vec<u8> = leaves[256..344].iter().flat_map(|h| h.0).collect();
    assert_eq!(level0, expected);
    // Level 1 holds hashes of 256-leaf subtrees.
    let level1 = read_tile(&hashes(1, 0, 2), &stored).unwrap();
    let expected: Vec<u8> = [mth(&leaves[..256]), mth(&leaves[256..512])]
        .iter()
        .flat_map(|h| h.0)
        .collect();
    assert_eq!(level1, expected);
    assert!(matches!(
        read_tile(&hashes(8, 0, 1), &stored),
        Err(TreeError::Misuse(_))
    ));
    assert!(matches!(
        read_tile(
            &Tile {
                kind: TileKind::Entries,
                index: 0,
                width: 1
            },
            &stored
        ),
        Err(TreeError::Misuse(_))
    ));
    // A level-7 tile's hashes cover 2^56 leaves each: 64 of them reach the largest tree.
    assert_eq!(hashes(7, 0, 64).hash_indexes().map(|i| i.len()), Some(64));
    assert!(hashes(7, 0, 65).hash_indexes().is_none());
    assert!(hashes(8, 0, 1).hash_indexes().is_none());
    assert!(hashes(0, u64::MAX, 1).hash_indexes().is_none());
    assert!(hashes(0, 0, 0).hash_indexes().is_none());
    assert!(hashes(0, 0, 257).hash_indexes().is_none());
}

#[test]
fn entry_bundles_round_trip_and_refuse_malformed_bytes() {
    let entries: Vec<&[u8]> = vec![b"", b"a", &[7; 33], &[1; 65_535]];
    let bundle = encode_entry_bundle(entries.iter().copied()).unwrap();
    assert_eq!(&bundle[..3], &[0, 0, 0]);
    assert_eq!(decode_entry_bundle(&bundle).unwrap(), entries);
    assert_eq!(decode_entry_bundle(&[]).unwrap(), Vec::<&[u8]>::new());
    assert_eq!(decode_entry_bundle(&[0]), None);
    assert_eq!(decode_entry_bundle(&[0, 2, 1]), None);
    assert_eq!(decode_entry_bundle(&bundle[..bundle.len() - 1]), None);
    assert_eq!(encode_entry_bundle([[0u8; 65_536].as_slice()]), None);
}
