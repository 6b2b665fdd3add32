//! The graph file (`DIR/graph`): a query on a closed ledger reads a few checked pages of it
//! and gives exactly the answer the opened ledger gives; a stale, damaged or locked one is
//! refused or answers nothing, and the query opens the ledger instead.

use akledger_testkit as common;

use std::path::Path;

use akledger::{Config, Error, EventId, GraphView, Ledger};
use proptest::prelude::*;

/// A closed ledger of a realm DAG of `events` events; returns their ids in admission order.
fn closed_ledger(dir: &Path, seed: u64, events: usize) -> Vec<EventId> {
    let all = common::realm_dag_bytes(seed, events, 6, 16);
    let ledger = Ledger::open(dir).unwrap();
    for chunk in all.chunks(500) {
        ledger.append_batch(chunk).unwrap();
    }
    let ids = ids_of(&ledger);
    ledger.close().unwrap();
    ids
}

/// The admitted ids, in admission order.
fn ids_of(ledger: &Ledger) -> Vec<EventId> {
    ledger.iter().map(|e| e.unwrap().id()).collect()
}

fn read_only(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir).read_only(true)).unwrap()
}

/// Any set of admitted ids, recent or old, dense or spread, of ledgers of four seeds: the
/// same heads and coverage as the ledger's chain-clock index (itself checked against a BFS oracle in
/// `dag_oracle`). The ledgers are built once; the cases vary the queries.
#[test]
fn heads_from_the_graph_file_are_the_ledgers() {
    let ledgers: Vec<(tempfile::TempDir, Vec<EventId>)> = (0..4)
        .map(|seed| {
            let tmp = tempfile::tempdir().unwrap();
            let ids = closed_ledger(tmp.path(), 17 * seed + 5, 1_200);
            (tmp, ids)
        })
        .collect();
    let queries = (
        0..ledgers.len(),
        proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
        any::<bool>(),
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
    let outcome = runner.run(&queries, |(which, picks, recent)| {
        let (tmp, ids) = &ledgers[which];
        let window = if recent { 60 } else { ids.len() };
        let query: Vec<EventId> = picks
            .iter()
            .map(|i| ids[ids.len() - window + i.index(window)])
            .collect();
        let view = GraphView::open(tmp.path()).unwrap();
        prop_assert_eq!(view.len(), ids.len());
        let quick = view.heads_of(&query).unwrap();
        let ledger = read_only(tmp.path());
        let full = ledger.heads_of(&query).unwrap();
        prop_assert_eq!(quick, Some(full));
        // And coverage: each picked id against the others as the basis.
        if let Some((x, basis)) = query.split_first() {
            let quick = view.covers(basis, x).unwrap();
            prop_assert_eq!(quick, Some(ledger.covers(basis, x).unwrap()));
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

#[test]
fn an_id_that_is_not_admitted_is_not_found_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let ids = closed_ledger(tmp.path(), 3, 700);
    let stranger = common::realm_dag_bytes(99, 2, 1, 4);
    let stranger = akledger::Event::parse(&stranger[1]).unwrap().id();
    let query = [ids[5], stranger];
    let view = GraphView::open(tmp.path()).unwrap();
    assert!(matches!(view.heads_of(&query), Err(Error::NotFound(id)) if id == stranger));
    assert!(matches!(
        read_only(tmp.path()).heads_of(&query),
        Err(Error::NotFound(id)) if id == stranger
    ));
    assert_eq!(view.heads_of(&[]).unwrap(), Some(Vec::new()));
}

#[test]
fn a_graph_file_older_than_the_log_is_refused_and_the_cli_opens_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(4, 5_000, 6, 16);
    let ledger = Ledger::open(tmp.path()).unwrap();
    ledger.append_batch(&all[..4_800]).unwrap();
    ledger.close().unwrap();
    let before = GraphView::open(tmp.path()).unwrap().high_water();
    // 200 more, and a drop: fewer than a close's snapshot threshold, so no new graph file.
    let ledger = Ledger::open(tmp.path()).unwrap();
    ledger.append_batch(&all[4_800..]).unwrap();
    drop(ledger);
    assert_eq!(
        GraphView::open(tmp.path()).unwrap_err(),
        "it is older than the log"
    );
    // A writer holds the lock: no view.
    let writer = Ledger::open(tmp.path()).unwrap();
    assert!(GraphView::open(tmp.path()).is_err());
    writer.close().unwrap();
    // The close wrote a current one (one entry or more since the last).
    assert_ne!(GraphView::open(tmp.path()).unwrap().high_water(), before);
}

#[test]
fn a_damaged_graph_file_never_gives_a_wrong_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let ids = closed_ledger(tmp.path(), 8, 900);
    let path = tmp.path().join("graph");
    let good = std::fs::read(&path).unwrap();
    let query: Vec<EventId> = ids.iter().rev().step_by(7).take(30).copied().collect();
    let want = read_only(tmp.path()).heads_of(&query).unwrap();
    let mut refused = 0;
    let mut declined = 0;
    for at in (0..good.len()).step_by(97) {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        match GraphView::open(tmp.path()) {
            Err(_) => refused += 1,
            Ok(view) => match view.heads_of(&query).unwrap() {
                None => declined += 1,
                Some(heads) => assert_eq!(heads, want, "byte {at} flipped"),
            },
        }
    }
    assert!(
        refused > 0 && declined > 0,
        "{refused} refused, {declined} declined"
    );
    std::fs::write(&path, &good[..good.len() - 1]).unwrap();
    assert!(GraphView::open(tmp.path()).is_err(), "a truncated file");
}

#[test]
fn checkpoints_skip_the_graph_file_and_the_close_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(6, 1_000, 6, 16);
    let ledger = Ledger::open_with(Config::new(tmp.path()).snapshot_interval(500)).unwrap();
    ledger.append_batch(&all[..500]).unwrap();
    ledger.append_batch(&all[500..]).unwrap();
    // Both batches reached a checkpoint: the snapshot is current once its thread has written
    // it, and there is no graph file.
    akledger::internals::finish_snapshot_write(&ledger).unwrap();
    assert!(tmp.path().join("snapshot").is_file());
    assert!(!tmp.path().join("graph").exists());
    ledger.close().unwrap();
    let view = GraphView::open(tmp.path()).unwrap();
    assert_eq!(view.len(), all.len());
}

/// Where the page table and the body start in a graph file of `pages` body pages: after the
/// 153-byte header and one 16-byte checksum per 4096 bytes of the page table.
fn table_and_body(pages: usize) -> (usize, usize) {
    let table = 153 + (pages * 16).div_ceil(4096) * 16;
    (table, table + pages * 16)
}

/// Rewrites the page table, its chunk checksums and the header checksum of the graph file
/// `bytes` after a change to its body, as `docs/format.md` lays them out (what a forger
/// would do).
fn reseal(bytes: &mut [u8]) {
    let pages = u64::from_le_bytes(bytes[145..153].try_into().unwrap()) as usize;
    let (table, body) = table_and_body(pages);
    for page in 0..pages {
        let end = (body + (page + 1) * 4096).min(bytes.len());
        let sum = xxhash_rust::xxh3::xxh3_128(&bytes[body + page * 4096..end]);
        bytes[table + page * 16..table + (page + 1) * 16].copy_from_slice(&sum.to_le_bytes());
    }
    for chunk in 0..(pages * 16).div_ceil(4096) {
        let end = (table + (chunk + 1) * 4096).min(body);
        let sum = xxhash_rust::xxh3::xxh3_128(&bytes[table + chunk * 4096..end]);
        bytes[153 + chunk * 16..153 + (chunk + 1) * 16].copy_from_slice(&sum.to_le_bytes());
    }
    let header = blake3::hash(&bytes[40..table]);
    bytes[8..40].copy_from_slice(header.as_bytes());
}

#[test]
fn check_finds_a_graph_file_changed_and_resealed() {
    let tmp = tempfile::tempdir().unwrap();
    let ids = closed_ledger(tmp.path(), 9, 300);
    let path = tmp.path().join("graph");
    let mut bytes = std::fs::read(&path).unwrap();
    // Two concurrent events, the later one's chain and sequence number given to the earlier
    // one at sequence number 1 (below it on its chain), and the file sealed again.
    let last = ids.len() - 1;
    let truth_of = |b: usize| {
        read_only(tmp.path())
            .heads_of(&[ids[last], ids[b]])
            .unwrap()
    };
    let b = (0..last).rev().find(|&b| truth_of(b).len() == 2).unwrap();
    let n = u64::from_le_bytes(bytes[60..68].try_into().unwrap()) as usize;
    let m = u64::from_le_bytes(bytes[68..76].try_into().unwrap()) as usize;
    let pages = u64::from_le_bytes(bytes[145..153].try_into().unwrap()) as usize;
    let chain_seq = table_and_body(pages).1 + 16_384 + 49 * n + 4 + 4 * m;
    let chain_of_last = bytes[chain_seq + 8 * last..][..4].to_vec();
    bytes[chain_seq + 8 * b..][..4].copy_from_slice(&chain_of_last);
    bytes[chain_seq + 8 * b + 4..][..4].copy_from_slice(&1u32.to_le_bytes());
    reseal(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();

    // The checksums pass, and a query believes it: the earlier event is covered.
    let query = [ids[last], ids[b]];
    let truth = truth_of(b);
    let told = GraphView::open(tmp.path())
        .unwrap()
        .heads_of(&query)
        .unwrap();
    assert_ne!(told, Some(truth), "the forgery changed no answer");
    // `check` compares the file with a rebuild and says so.
    let ledger = Ledger::open(tmp.path()).unwrap();
    let report = ledger.check().unwrap();
    assert!(
        report.differences.iter().any(|d| d.contains("graph file")),
        "{report:?}"
    );
    // An untouched file is no difference.
    drop(ledger);
    let clean = tempfile::tempdir().unwrap();
    closed_ledger(clean.path(), 9, 300);
    assert!(Ledger::open(clean.path())
        .unwrap()
        .check()
        .unwrap()
        .is_clean());
}

#[test]
fn a_writer_close_writes_a_graph_file_that_is_missing_or_of_another_version() {
    let tmp = tempfile::tempdir().unwrap();
    let ids = closed_ledger(tmp.path(), 12, 400);
    let path = tmp.path().join("graph");
    let good = std::fs::read(&path).unwrap();
    let mut older = good.clone();
    older[7] = 2; // the magic of an earlier version
    for (what, bytes) in [("missing", None), ("of another version", Some(older))] {
        match &bytes {
            None => std::fs::remove_file(&path).unwrap(),
            Some(bytes) => std::fs::write(&path, bytes).unwrap(),
        }
        assert!(GraphView::open(tmp.path()).is_err(), "{what}");
        // Opened and closed with nothing written: the close writes it.
        Ledger::open(tmp.path()).unwrap().close().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), good, "{what}");
        let view = GraphView::open(tmp.path()).unwrap();
        assert_eq!(view.heads_of(&ids[..1]).unwrap(), Some(vec![ids[0]]));
    }
    // A current one is left alone by a close that wrote nothing.
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    Ledger::open(tmp.path()).unwrap().close().unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
}
