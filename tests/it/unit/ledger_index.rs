use akledger::internals::index::*;
use akledger::internals::record::Record;
use akledger::internals::record::Role;
use akledger::ledger::{Config, Durability, Ledger};
use akledger::store::log::LogPos;
use akledger::store::tables::{WriteBatch, META};
use akledger::workload::realm_dag;
#[allow(unused_imports)]
use akledger::*;
use std::path::Path;

/// A crash in the middle of `clear` (before a rebuild) leaves some of its steps done;
/// every such index must still open to the state of the log.
#[test]
fn an_index_cleared_partway_still_opens_to_the_log_state() {
    let events = realm_dag(5, 60, 3, 8).unwrap();
    for done in 0..=CLEAR_STEPS {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::new(dir.path()).durability(Durability::Buffered);
        {
            let ledger = Ledger::open_with(config.clone()).unwrap();
            // The last ten wait on event 50 (pending rows), then the rest is admitted.
            let late: Vec<&[u8]> = events[51..].iter().map(|e| e.bytes()).collect();
            ledger.append_batch(&late).unwrap();
            let early: Vec<&[u8]> = events[..40].iter().map(|e| e.bytes()).collect();
            ledger.append_batch(&early).unwrap();
            assert_eq!((ledger.len(), ledger.pending().len()), (40, 10));
        }
        {
            let index = Index::open(&dir.path().join("index")).unwrap();
            for step in 0..done {
                index.clear_step(step).unwrap();
            }
        }
        let ledger = Ledger::open_with(config).unwrap();
        assert_eq!(
            (ledger.len(), ledger.pending().len()),
            (40, 10),
            "after {done} clear steps: {:?}",
            ledger.open_report()
        );
        assert!(ledger.check().unwrap().is_clean());
    }
}

/// A ledger of `realm_dag(seed, events, 3, 8)` appended in batches of `batch`, closed
/// (with a state snapshot); returns its directory, config and heads.
fn written(seed: u64, events: usize, batch: usize) -> (tempfile::TempDir, Config, Vec<EventId>) {
    let events = realm_dag(seed, events, 3, 8).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(dir.path()).durability(Durability::Buffered);
    let ledger = Ledger::open_with(config.clone()).unwrap();
    for part in events.chunks(batch) {
        let bytes: Vec<&[u8]> = part.iter().map(|e| e.bytes()).collect();
        ledger.append_batch(&bytes).unwrap();
    }
    let heads = ledger.heads();
    ledger.close().unwrap();
    (dir, config, heads)
}

/// A ledger of 61 events in batches of 20, without a state snapshot; returns its
/// directory and config.
fn closed_ledger() -> (tempfile::TempDir, Config) {
    let (dir, config, _) = written(5, 60, 20);
    std::fs::remove_file(dir.path().join("snapshot")).unwrap();
    (dir, config)
}

/// The key (first position) of every `event_batches` row of the ledger in `dir`.
fn row_firsts(dir: &Path) -> Vec<u32> {
    let index = Index::open(&dir.join("index")).unwrap();
    let rows = index.store.tree(&EVENT_BATCHES).unwrap();
    rows.iter().map(|r| r.unwrap().0).collect()
}

fn reopened_rebuilt(config: Config) -> String {
    let ledger = Ledger::open_with(config).unwrap();
    assert_eq!(ledger.len(), 61);
    assert!(ledger.check().unwrap().is_clean());
    ledger.open_report().rebuilt.clone().unwrap_or_default()
}

#[test]
fn a_batch_row_holds_a_batch_and_the_index_loads_without_a_rebuild() {
    let (dir, config) = closed_ledger();
    assert_eq!(row_firsts(dir.path()), [0, 20, 40, 60]);
    let ledger = Ledger::open_with(config).unwrap();
    assert_eq!(ledger.len(), 61);
    assert_eq!(ledger.open_report().rebuilt, None);
    assert_eq!(ledger.open_report().replayed, 0);
}

#[test]
fn a_large_batch_is_split_into_rows_of_at_most_row_records() {
    let events = 2 * ROW_RECORDS + 53;
    let (dir, config, _) = written(2, events - 1, events);
    std::fs::remove_file(dir.path().join("snapshot")).unwrap();
    let rows = ROW_RECORDS as u32;
    assert_eq!(row_firsts(dir.path()), [0, rows, 2 * rows]);
    let ledger = Ledger::open_with(config).unwrap();
    assert_eq!(ledger.len(), events);
    assert_eq!(ledger.open_report().rebuilt, None);
    assert!(ledger.check().unwrap().is_clean());
}

/// A rewrite from the snapshot killed part way leaves rows and no high-water mark:
/// the next open clears them and rewrites the index again.
#[test]
fn rows_left_without_a_mark_by_an_interrupted_rewrite_are_rewritten() {
    let (dir, config, heads) = written(4, 200, 201);
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    {
        // The first transaction of a rewrite, with a damaged second row for good
        // measure: nothing may be read from tables without a mark.
        let index = Index::open(&dir.path().join("index")).unwrap();
        let mut batch = WriteBatch::new();
        batch.insert(&EVENT_BATCHES, &0, &encode_records(0, &[]));
        batch.insert(&EVENT_BATCHES, &64, &vec![0xff; 7]);
        index.store.apply(&batch).unwrap();
    }
    let ledger = Ledger::open_with(config).unwrap();
    let report = ledger.open_report();
    assert!(report.index_from_snapshot.is_some(), "{report:?}");
    assert_eq!(ledger.heads(), heads);
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn a_ledger_that_recorded_nothing_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_with(Config::new(dir.path())).unwrap();
    let check = ledger.check().unwrap();
    assert!(check.is_clean(), "{check:?}");
}

#[test]
fn an_index_in_the_one_row_per_event_layout_is_rebuilt_and_its_rows_removed() {
    let (dir, config) = closed_ledger();
    {
        let index = Index::open(&dir.path().join("index")).unwrap();
        let mut batch = WriteBatch::new();
        batch.remove(&META, &FORMAT_KEY.to_string());
        batch.insert(&EVENTS_V1, &0, &vec![1, 2, 3]);
        index.store.apply(&batch).unwrap();
    }
    assert!(reopened_rebuilt(config).contains("older layout"));
    let index = Index::open(&dir.path().join("index")).unwrap();
    assert!(index.store.tree(&EVENTS_V1).unwrap().is_empty());
    assert!(index.check_format().is_ok());
}

#[test]
fn an_index_in_the_fixed_width_layout_is_rebuilt_in_the_current_one() {
    let (dir, config) = closed_ledger();
    {
        // Layout 2 kept the same rows with records of fixed widths: version 2 in `meta`.
        let index = Index::open(&dir.path().join("index")).unwrap();
        let mut batch = WriteBatch::new();
        batch.insert(&META, &FORMAT_KEY.to_string(), &2u32.to_le_bytes().to_vec());
        index.store.apply(&batch).unwrap();
    }
    assert!(reopened_rebuilt(config).contains("another layout"));
    let index = Index::open(&dir.path().join("index")).unwrap();
    assert!(index.check_format().is_ok());
    drop(index);
    assert_eq!(row_firsts(dir.path()), [0, 20, 40, 60]);
}

#[test]
fn a_damaged_batch_row_makes_the_index_rebuilt() {
    let (dir, config) = closed_ledger();
    {
        let index = Index::open(&dir.path().join("index")).unwrap();
        let rows = index.store.tree(&EVENT_BATCHES).unwrap();
        let mut row = rows.get(&20).unwrap().unwrap();
        row.pop();
        rows.insert(&20, &row).unwrap();
    }
    assert!(reopened_rebuilt(config).contains("index row 20 is damaged"));
}

#[test]
fn batch_rows_decode_exactly_what_was_encoded_and_nothing_else() {
    let events = realm_dag(1, 6, 1, 2).unwrap();
    let records: Vec<Record> = events
        .iter()
        .enumerate()
        .map(|(i, e)| Record {
            id: e.id(),
            at: LogPos {
                segment: 1,
                offset: 100 * i as u64,
            },
            stamp: i as u64,
            parents: (0..i as u32).map(akledger::dag::Pos::new).collect(),
            role: Role::Plain,
        })
        .collect();
    let bytes = encode_records(7, &records);
    assert_eq!(decode_records(7, &bytes), Some(records.clone()));
    assert_eq!(decode_records(7, &encode_records(7, &[])), Some(Vec::new()));
    for cut in 0..bytes.len() {
        assert_eq!(decode_records(7, &bytes[..cut]), None, "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(decode_records(7, &longer), None);
    let mut more = bytes;
    more[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(decode_records(7, &more), None);
}
