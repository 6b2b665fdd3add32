//! The ledger tree (PROFILE §13) kept as events are admitted: it equals the core's
//! `tlog::tree_hash` recomputed from `Ledger::iter()`'s ids after appends in many batch
//! shapes (pending events released included), in memory (built when read), after a
//! reopen, after the tree file is deleted, cut or damaged, after an index rebuild and on a
//! read-only open; proofs verify with the core's verifiers; bad requests are
//! `proof_invalid`.

use akledger_testkit::copy_dir;
use std::path::Path;

use akledger::ed25519_dalek::SigningKey;
use akledger::event::Unverified;
use akledger::tlog::{self, Checkpoint, Hash, NoteSigner};
use akledger::workload::realm_dag;
use akledger::{Code, Config, Durability, Error, Event, EventId, Ledger};

/// A realm and `n - 1` events in it.
fn events(n: usize) -> Vec<Event<Unverified>> {
    realm_dag(11, n - 1, 4, 8).unwrap()
}

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).unwrap()
}

/// The stored hashes recomputed from the ledger's own admission order, one leaf at a time.
fn recomputed(ledger: &Ledger) -> (Vec<EventId>, Vec<Hash>) {
    let ids: Vec<EventId> = ledger.iter().map(|e| e.unwrap().id()).collect();
    let mut stored = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let more = tlog::append_hashes(n as u64, tlog::leaf_hash(id.bytes()), &stored).unwrap();
        stored.extend(more);
    }
    (ids, stored)
}

/// The tree agrees with a recomputation at every size, and `check` finds nothing.
fn assert_tree(ledger: &Ledger) {
    let (ids, stored) = recomputed(ledger);
    let n = ids.len() as u64;
    assert_eq!(ledger.tree_size(), n);
    assert_eq!(ledger.len() as u64, n);
    assert_eq!(ledger.root().unwrap(), tlog::tree_hash(n, &stored).unwrap());
    for size in [0, 1, 2, 3, n / 3, n / 2, n.saturating_sub(1), n] {
        let size = size.min(n);
        assert_eq!(
            ledger.root_at(size).unwrap(),
            tlog::tree_hash(size, &stored).unwrap(),
            "root at {size}"
        );
    }
    let report = ledger.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.differences);
}

fn proof_code(result: Result<impl std::fmt::Debug, Error>) -> Code {
    let err = result.expect_err("a bad request is refused");
    assert!(err.to_string().contains("proof_invalid"), "{err}");
    err.code().expect("coded")
}

#[test]
fn the_tree_follows_admission_in_many_batch_shapes() {
    let events = events(700);
    for (shape, sizes) in [
        ("one by one", vec![1; 90]),
        (
            "uneven",
            vec![1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 2],
        ),
        (
            "powers of two",
            vec![1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 188],
        ),
        ("one batch", vec![700]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let ledger = open(tmp.path());
        // An in-memory ledger's tree is built when read: read here between some appends
        // (then caught up with what came since), there only at the end.
        let memory = Ledger::open_with(Config::in_memory()).unwrap();
        let mut at = 0;
        for size in sizes {
            let end = (at + size).min(events.len());
            let batch: Vec<&[u8]> = events[at..end].iter().map(|e| e.bytes()).collect();
            ledger.append_batch(&batch).unwrap();
            memory.append_batch(&batch).unwrap();
            at = end;
            if at % 7 == 0 {
                assert_eq!(ledger.tree_size(), ledger.len() as u64, "{shape}");
                assert_eq!(memory.root().unwrap(), ledger.root().unwrap(), "{shape}");
            }
        }
        assert_tree(&ledger);
        assert_tree(&memory);
        assert_eq!(memory.root().unwrap(), ledger.root().unwrap(), "{shape}");
        drop(ledger);
        let reopened = open(tmp.path());
        assert!(
            reopened.open_report().tree.is_none(),
            "{shape}: {:?}",
            reopened.open_report().tree
        );
        assert_tree(&reopened);
    }
}

#[test]
fn pending_events_get_their_number_when_admitted() {
    let events = events(300);
    let tmp = tempfile::tempdir().unwrap();
    let ledger = open(tmp.path());
    // Children first: they wait, and join the tree in the order they are released.
    let mut order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    order[1..120].reverse();
    for chunk in order.chunks(17) {
        ledger.append_batch(chunk).unwrap();
    }
    assert_eq!(ledger.len(), 300);
    assert_tree(&ledger);
    let memory = Ledger::open_with(Config::in_memory()).unwrap();
    for chunk in order.chunks(17) {
        memory.append_batch(chunk).unwrap();
    }
    assert_eq!(memory.root().unwrap(), ledger.root().unwrap());
    assert_tree(&memory);
}

#[test]
fn a_missing_cut_or_damaged_tree_file_is_rebuilt_and_an_index_rebuild_keeps_it() {
    let events = events(2600);
    let tmp = tempfile::tempdir().unwrap();
    let root = {
        let ledger = open(tmp.path());
        for chunk in events.chunks(250) {
            let batch: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
            ledger.append_batch(&batch).unwrap();
        }
        assert_tree(&ledger);
        ledger.root().unwrap()
    };
    let path = tmp.path().join(akledger::layout::TREE);

    // Deleted: rebuilt from the admission order.
    std::fs::remove_file(&path).unwrap();
    let ledger = reopened_saying(tmp.path(), "rebuilt");
    assert_eq!(ledger.root().unwrap(), root);
    assert_tree(&ledger);
    drop(ledger);

    // Cut mid-hash: the whole hashes kept, the rest added.
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 32 * 700 - 5).unwrap();
    drop(file);
    let ledger = reopened_saying(tmp.path(), "added");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert_tree(&ledger);
    drop(ledger);

    // A flipped byte near the end: found by the open's tail check, rebuilt.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 32 * 40;
    bytes[at] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let ledger = reopened_saying(tmp.path(), "rebuilt");
    assert_tree(&ledger);
    drop(ledger);

    // A flipped byte far from the end: the open does not look there, `check` does.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8 + 32 * 10] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let ledger = open(tmp.path());
    let report = ledger.check().unwrap();
    assert!(
        report
            .differences
            .iter()
            .any(|d| d.contains("stored hash 10")),
        "{:?}",
        report.differences
    );
    drop(ledger);
    std::fs::write(&path, b"not a tree file").unwrap();
    let ledger = open(tmp.path());
    assert!(ledger
        .open_report()
        .tree
        .as_deref()
        .unwrap()
        .contains("header"));
    assert_tree(&ledger);
    drop(ledger);

    // The index rebuilt from the log: the same order, so the same tree, file untouched.
    let before = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    std::fs::remove_file(tmp.path().join("snapshot")).ok();
    let ledger = open(tmp.path());
    assert!(ledger.open_report().rebuilt.is_some());
    assert!(ledger.open_report().tree.is_none());
    assert_eq!(ledger.root().unwrap(), root);
    assert_tree(&ledger);
    drop(ledger);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // Read-only with the file gone: built in memory, nothing written.
    std::fs::remove_file(&path).unwrap();
    let ro = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
    assert!(ro.open_report().tree.as_deref().unwrap().contains("memory"));
    assert_eq!(ro.root().unwrap(), root);
    assert!(!path.exists());
}

#[test]
fn proofs_verify_with_the_core_and_checkpoints_open() {
    let events = events(333);
    let tmp = tempfile::tempdir().unwrap();
    let ledger = open(tmp.path());
    let batch: Vec<&[u8]> = events[..200].iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&batch).unwrap();
    let old_root = ledger.root().unwrap();
    let batch: Vec<&[u8]> = events[200..].iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&batch).unwrap();
    let (ids, _) = recomputed(&ledger);
    let root = ledger.root().unwrap();

    let origin = ledger.origin().unwrap();
    assert_eq!(
        origin,
        format!("akledger/{}", ids[0].token().as_str()),
        "the default origin names the first admitted event"
    );
    for (i, id) in ids.iter().enumerate().step_by(17) {
        let proof = ledger.inclusion_proof(id, None).unwrap();
        assert_eq!((proof.leaf_index(), proof.tree_size()), (i as u64, 333));
        proof.verify(&root).unwrap();
        tlog::verify_inclusion(
            &tlog::leaf_hash(id.bytes()),
            i as u64,
            333,
            proof.hashes(),
            &root,
        )
        .unwrap();
        if i < 200 {
            ledger
                .inclusion_proof(id, Some(200))
                .unwrap()
                .verify(&old_root)
                .unwrap();
        }
        let json = proof.to_json();
        assert_eq!(tlog::InclusionProof::from_json(&json).unwrap(), proof);
    }
    let consistency = ledger.consistency_proof(200, None).unwrap();
    consistency.verify(&old_root, &root).unwrap();
    tlog::verify_consistency(200, 333, consistency.hashes(), &old_root, &root).unwrap();
    assert!(consistency.verify(&root, &old_root).is_err());

    let key = SigningKey::from_bytes(&[9; 32]);
    let note = ledger.checkpoint(&key).unwrap();
    let signer = NoteSigner::new(&origin, key.clone()).unwrap();
    let checkpoint = Checkpoint::open(note.as_bytes(), signer.verifier_key()).unwrap();
    assert_eq!((checkpoint.size(), *checkpoint.root()), (333, root));
    ledger
        .inclusion_proof(&ids[5], None)
        .unwrap()
        .verify_against(&checkpoint)
        .unwrap();

    // A configured origin names the key and the proofs.
    drop(ledger);
    let named = Ledger::open_with(Config::new(tmp.path()).origin("example.org/ledger")).unwrap();
    let note = named.checkpoint(&key).unwrap();
    assert!(note.starts_with("example.org/ledger\n333\n"), "{note}");
    assert_eq!(
        named.consistency_proof(1, Some(2)).unwrap().origin(),
        "example.org/ledger"
    );
}

#[test]
fn bad_proof_requests_are_proof_invalid_and_write_nothing() {
    let events = events(40);
    let tmp = tempfile::tempdir().unwrap();
    let ledger = open(tmp.path());
    assert_eq!(ledger.root().unwrap(), tlog::empty_root());
    assert_eq!(proof_code(ledger.origin()), Code::ProofInvalid);
    let batch: Vec<&[u8]> = events[..30].iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&batch).unwrap();
    let unknown = events[35].id();
    let known = events[20].id();
    assert_eq!(
        proof_code(ledger.inclusion_proof(&unknown, None)),
        Code::ProofInvalid
    );
    assert_eq!(
        proof_code(ledger.inclusion_proof(&known, Some(20))),
        Code::ProofInvalid
    );
    assert_eq!(
        proof_code(ledger.inclusion_proof(&known, Some(31))),
        Code::ProofInvalid
    );
    assert_eq!(
        proof_code(ledger.consistency_proof(5, Some(4))),
        Code::ProofInvalid
    );
    assert_eq!(
        proof_code(ledger.consistency_proof(5, Some(31))),
        Code::ProofInvalid
    );
    assert_eq!(proof_code(ledger.root_at(31)), Code::ProofInvalid);
    let err = ledger.inclusion_proof(&unknown, None).unwrap_err();
    assert_eq!(err.fault(), akledger::Fault::CallerMisuse);
    assert!(err.to_string().contains("not an admitted event"), "{err}");
    // A name no note key may have.
    let bad = Ledger::open_with(Config::in_memory().origin("two words")).unwrap();
    let err = bad
        .checkpoint(&SigningKey::from_bytes(&[1; 32]))
        .unwrap_err();
    assert_eq!(err.code(), Some(Code::CheckpointInvalid), "{err}");
    assert_eq!(ledger.tree_size(), 30);
    assert_tree(&ledger);
}

fn append_all(ledger: &Ledger, events: &[Event<Unverified>], batch: usize) {
    for chunk in events.chunks(batch) {
        let bytes: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
        ledger.append_batch(&bytes).unwrap();
    }
}

fn mismatch(result: Result<Ledger, Error>) -> String {
    let err = result.expect_err("a rolled-back log is refused");
    assert_eq!(err.code(), Some(Code::CheckpointMismatch), "{err}");
    err.to_string()
}

#[test]
fn a_rolled_back_or_replaced_log_is_caught_at_open() {
    let events = events(260);
    let key = SigningKey::from_bytes(&[4; 32]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("books");
    let config = || Config::new(&dir).checkpoint_every(100, key.clone());
    {
        let ledger = Ledger::open_with(config()).unwrap();
        append_all(&ledger, &events[..120], 30);
    }
    let checkpoint = dir.join(akledger::layout::CHECKPOINT);
    let first = std::fs::read_to_string(&checkpoint).unwrap();
    assert!(
        first.contains("\n120\n"),
        "recorded after the batch that reached 100: {first}"
    );
    let backup = tmp.path().join("backup");
    copy_dir(&dir, &backup);
    let (root_at_240, recorded) = {
        let ledger = Ledger::open_with(config()).unwrap();
        append_all(&ledger, &events[120..], 30);
        (ledger.root_at(240).unwrap(), ledger.tree_size())
    };
    assert_eq!(recorded, 260);
    let latest = std::fs::read_to_string(&checkpoint).unwrap();
    assert!(
        latest.contains(&format!("\n240\n{}\n", root_at_240.to_base64())),
        "{latest}"
    );
    // The note is the ledger's own checkpoint, signed under its origin.
    let origin = latest.lines().next().unwrap();
    let signer = NoteSigner::new(origin, key.clone()).unwrap();
    Checkpoint::open(latest.as_bytes(), signer.verifier_key()).unwrap();

    // The older copy restored, the latest checkpoint kept: refused, writer and reader.
    let rolled = tmp.path().join("rolled");
    copy_dir(&backup, &rolled);
    std::fs::copy(&checkpoint, rolled.join(akledger::layout::CHECKPOINT)).unwrap();
    let log_bytes = || {
        let mut files: Vec<_> = std::fs::read_dir(rolled.join("log"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect::<Vec<_>>()
    };
    let log_before = log_bytes();
    let message = mismatch(Ledger::open(&rolled));
    assert!(
        message.contains("size 240")
            && message.contains(&root_at_240.to_base64())
            && message.contains("it holds 120 events"),
        "{message}"
    );
    let message = mismatch(Ledger::open_with(Config::new(&rolled).read_only(true)));
    assert!(message.contains("it holds 120 events"), "{message}");
    assert_eq!(log_bytes(), log_before, "nothing written");

    // Another history past the checkpoint's size: another root there.
    let fork = tmp.path().join("fork");
    copy_dir(&backup, &fork);
    {
        let ledger = Ledger::open(&fork).unwrap();
        append_all(&ledger, &realm_dag(99, 150, 3, 8).unwrap(), 50);
        assert!(ledger.tree_size() > 240);
    }
    std::fs::copy(&checkpoint, fork.join(akledger::layout::CHECKPOINT)).unwrap();
    let message = mismatch(Ledger::open(&fork));
    assert!(
        message.contains("its tree of 240 events has root"),
        "{message}"
    );

    // A damaged checkpoint file is not taken for none.
    std::fs::write(fork.join(akledger::layout::CHECKPOINT), "junk").unwrap();
    let err = Ledger::open(&fork).unwrap_err();
    assert_eq!(err.code(), Some(Code::CheckpointInvalid), "{err}");

    // The ledger itself opens, extends its checkpoint, and records on demand.
    let ledger = Ledger::open(&dir).unwrap();
    let note = ledger.record_checkpoint(&key).unwrap();
    assert!(note.contains("\n260\n"), "{note}");
    assert_eq!(std::fs::read_to_string(&checkpoint).unwrap(), note);
    let memory = Ledger::open_with(Config::in_memory()).unwrap();
    assert!(matches!(
        memory.record_checkpoint(&key),
        Err(Error::Misuse(_))
    ));
}

/// The hash of the tree node at `level` with index `k`, computed from the tile files only
/// (the tile level below it, hashed up), as a tlog-tiles client does.
fn node_from_tiles(out: &Path, size: u64, level: u32, k: u64) -> Hash {
    let tile_level = level / tlog::TILE_HEIGHT;
    let base = tile_level * tlog::TILE_HEIGHT;
    if level > base {
        let left = node_from_tiles(out, size, level - 1, 2 * k);
        let right = node_from_tiles(out, size, level - 1, 2 * k + 1);
        return tlog::node_hash(&left, &right);
    }
    let width = u64::from(tlog::TILE_WIDTH);
    let at_level = size >> base;
    let (tile_index, i) = (k / width, k % width);
    let tile = tlog::Tile {
        kind: tlog::TileKind::Hashes {
            level: tile_level as u8,
        },
        index: tile_index,
        width: (at_level - tile_index * width).min(width) as u32,
    };
    let bytes = std::fs::read(out.join(tile.path())).unwrap();
    Hash::from_slice(&bytes[i as usize * 32..(i as usize + 1) * 32]).unwrap()
}

#[test]
fn tiles_hold_the_stored_hashes_and_recompute_the_checkpoint_root() {
    let events = events(700);
    let tmp = tempfile::tempdir().unwrap();
    let ledger = open(&tmp.path().join("books"));
    append_all(&ledger, &events, 100);
    let (ids, stored) = recomputed(&ledger);
    let out = tmp.path().join("tiles");
    let key = SigningKey::from_bytes(&[6; 32]);
    let report = ledger.write_tiles(&out, &key).unwrap();
    // 700 leaves: level 0 has two full tiles and one of 188; level 1 one of 2 hashes.
    assert_eq!(
        (report.tree_size, report.hash_tiles, report.entry_bundles),
        (700, 4, 3)
    );
    for path in [
        "tile/0/000",
        "tile/0/001",
        "tile/0/002.p/188",
        "tile/1/000.p/2",
    ] {
        assert!(out.join(path).is_file(), "{path}");
    }
    // Tile bytes are the stored hashes.
    let tile = std::fs::read(out.join("tile/0/001")).unwrap();
    assert_eq!(tile.len(), 256 * 32);
    for i in [0u64, 1, 100, 255] {
        let leaf = 256 + i;
        let want = stored[tlog::stored_hash_index(0, leaf) as usize];
        assert_eq!(
            &tile[i as usize * 32..][..32],
            want.as_bytes(),
            "leaf {leaf}"
        );
    }
    let top = std::fs::read(out.join("tile/1/000.p/2")).unwrap();
    assert_eq!(
        &top[32..],
        stored[tlog::stored_hash_index(8, 1) as usize].as_bytes()
    );
    // Entry bundles hold the ids in admission order.
    let bundle = std::fs::read(out.join("tile/entries/002.p/188")).unwrap();
    let entries = tlog::decode_entry_bundle(&bundle).unwrap();
    assert_eq!(entries.len(), 188);
    assert_eq!(entries[5], &ids[512 + 5].bytes()[..]);
    // The checkpoint opens, and the tiles alone give its root: 700 = 512 + 128 + 32 + 16 +
    // 8 + 4, each perfect subtree from the tiles, folded from the right.
    let note = std::fs::read(out.join("checkpoint")).unwrap();
    let signer = NoteSigner::new(&ledger.origin().unwrap(), key).unwrap();
    let checkpoint = Checkpoint::open(&note, signer.verifier_key()).unwrap();
    assert_eq!(checkpoint.size(), 700);
    let mut start = 0u64;
    let mut roots = Vec::new();
    for level in (0..64u32).rev() {
        if 700 & (1u64 << level) != 0 {
            roots.push(node_from_tiles(&out, 700, level, start >> level));
            start += 1 << level;
        }
    }
    let from_tiles = tlog::Frontier::from_roots(700, roots).unwrap().root();
    assert_eq!(&from_tiles, checkpoint.root());
    assert_eq!(from_tiles, ledger.root().unwrap());
    // A tile the tree does not have is refused.
    let past = tlog::Tile::parse_path("tile/0/003").unwrap();
    assert_eq!(
        ledger.tile(&past, 700).unwrap_err().code(),
        Some(Code::ProofInvalid)
    );
}

#[test]
fn a_damaged_tree_file_is_not_taken_for_a_rolled_back_log() {
    let events = events(3200);
    let key = SigningKey::from_bytes(&[5; 32]);
    let tmp = tempfile::tempdir().unwrap();
    let config = || Config::new(tmp.path()).checkpoint_every(3000, key.clone());
    {
        let ledger = Ledger::open_with(config()).unwrap();
        append_all(&ledger, &events, 400);
    }
    let recorded = std::fs::read_to_string(tmp.path().join(akledger::layout::CHECKPOINT)).unwrap();
    assert!(recorded.contains("\n3200\n"), "{recorded}");
    // Damage before the last 1024 leaves: the open's tail check does not look there, but
    // the root at the checkpoint's size is then wrong. It is recomputed from the admission
    // order before the log is blamed, and the file rebuilt.
    let tree_file = tmp.path().join(akledger::layout::TREE);
    let mut bytes = std::fs::read(&tree_file).unwrap();
    // The root of the first 2048 events, which the root at 3200 (2048 + 1024 + 128) is made of: stored when
    // event 2047 was admitted, before the last 1024 leaves the open recomputes, and not
    // read by them (it is next read when event 4095 completes its parent).
    bytes[8 + 32 * tlog::stored_hash_index(11, 0) as usize] ^= 1;
    std::fs::write(&tree_file, &bytes).unwrap();
    let ro = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
    assert!(ro
        .open_report()
        .tree
        .as_deref()
        .unwrap()
        .contains("recorded checkpoint"));
    drop(ro);
    assert_eq!(
        std::fs::read(&tree_file).unwrap(),
        bytes,
        "a read-only open writes nothing"
    );
    let ledger = Ledger::open_with(config()).unwrap();
    let what = ledger.open_report().tree.clone().unwrap();
    assert!(
        what.contains("did not have the recorded checkpoint's root"),
        "{what}"
    );
    assert_tree(&ledger);
}

/// Opens the ledger in `dir` and requires the open's report on the tree file to say `word`.
fn reopened_saying(dir: &Path, word: &str) -> Ledger {
    let ledger = open(dir);
    let said = ledger.open_report().tree.clone().unwrap_or_default();
    assert!(said.contains(word), "{word:?} not in {said:?}");
    ledger
}
