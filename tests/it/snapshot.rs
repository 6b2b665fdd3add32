//! The state snapshot (`DIR/snapshot`): a closed ledger reopens from it and replays only
//! the log after it; a damaged, foreign or stale snapshot is ignored (and said so), never
//! trusted over the log; a read-only open uses it and changes no file.

use akledger_testkit as common;

use std::path::Path;

use akledger::workload::realm_dag;
use akledger::{Config, Ledger};

use common::{copy_dir, files};

/// Appends `events` events of `realm_dag(seed, …)` (the first `held` of them after the
/// rest, so that some wait) in batches of 500, and returns them.
fn fill(dir: &Path, seed: u64, events: usize, interval: u64) -> Vec<Vec<u8>> {
    let all = common::realm_dag_bytes(seed, events, 6, 16);
    let ledger = Ledger::open_with(Config::new(dir).snapshot_interval(interval)).unwrap();
    for chunk in all.chunks(500) {
        ledger.append_batch(chunk).unwrap();
    }
    ledger.close().unwrap();
    all
}

/// Heads, admitted count, pending list and a clean `check()`.
fn assert_consistent(ledger: &Ledger, admitted: usize) -> Vec<akledger::EventId> {
    assert_eq!(ledger.len(), admitted);
    let report = ledger.check().unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);
    ledger.heads()
}

/// The index's mark is the log's: every committed batch's index writes are on disk.
fn assert_index_at_log(ledger: &Ledger, why: &str) {
    let (index, log) = akledger::internals::index_and_log_marks(ledger).unwrap();
    assert_eq!(index, Some(log), "{why}");
}

/// The ledger in `dir` opens with nothing to replay from the log and is consistent.
fn assert_reopens_without_replay(dir: &std::path::Path, admitted: usize) {
    let reopened = Ledger::open(dir).unwrap();
    assert_eq!(reopened.open_report().replayed, 0);
    assert_consistent(&reopened, admitted);
}

#[test]
fn a_closed_ledger_reopens_from_its_snapshot_and_replays_only_what_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let all = fill(tmp.path(), 1, 6_000, 1 << 20);
    assert!(tmp.path().join("snapshot").is_file(), "close writes one");
    let ledger = Ledger::open(tmp.path()).unwrap();
    let report = ledger.open_report().clone();
    assert!(report.snapshot.is_some(), "{report:?}");
    assert_eq!(report.replayed, 0);
    assert!(report.actions().is_empty(), "{:?}", report.actions());
    let heads = assert_consistent(&ledger, all.len());
    // More appends, then a crash-like drop without a new snapshot (fewer than the
    // close threshold): the next open loads the old snapshot and replays the rest.
    let more: Vec<Vec<u8>> = realm_dag(1, 6_300, 6, 16).unwrap()[6_001..]
        .iter()
        .map(|e| e.bytes().to_vec())
        .collect();
    ledger.append_batch(&more).unwrap();
    drop(ledger);
    let again = Ledger::open(tmp.path()).unwrap();
    assert!(again.open_report().snapshot.is_some());
    assert_eq!(again.open_report().replayed, 300, "one log entry per event");
    assert_ne!(assert_consistent(&again, all.len() + more.len()), heads);
}

#[test]
fn a_damaged_or_foreign_snapshot_is_ignored_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let all = fill(tmp.path(), 2, 5_000, 1 << 20);
    let path = tmp.path().join("snapshot");
    let good = std::fs::read(&path).unwrap();
    // One flipped byte anywhere: the checksum refuses it.
    let mut bad = good.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x10;
    std::fs::write(&path, &bad).unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let report = ledger.open_report().clone();
    assert!(report.snapshot.is_none());
    let why = report.snapshot_ignored.clone().unwrap();
    assert!(why.contains("checksum"), "{why}");
    assert!(report
        .actions()
        .iter()
        .any(|a| a.contains("ignored the state snapshot")));
    assert_consistent(&ledger, all.len());
    drop(ledger);

    // A snapshot of another ledger whose log is as long: it does not fit this log.
    let other = tempfile::tempdir().unwrap();
    fill(other.path(), 3, 5_000, 1 << 20);
    std::fs::copy(other.path().join("snapshot"), &path).unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let why = ledger.open_report().snapshot_ignored.clone().unwrap();
    assert!(
        why.contains("does not hold") || why.contains("log ends"),
        "{why}"
    );
    assert_consistent(&ledger, all.len());
}

#[test]
fn an_index_removed_behind_the_snapshot_is_rewritten_from_it_not_rebuilt_from_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let all = fill(tmp.path(), 4, 5_000, 1 << 20);
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    let heads = {
        let ledger = Ledger::open(tmp.path()).unwrap();
        let report = ledger.open_report().clone();
        assert!(
            report.rebuilt.is_none()
                && report.snapshot.is_some()
                && report.index_from_snapshot.is_some(),
            "{report:?}"
        );
        assert!(report
            .actions()
            .iter()
            .any(|a| a.contains("rewrote the index from the state snapshot")));
        assert_consistent(&ledger, all.len())
    };
    // The rewritten index loads on its own: without the snapshot, nothing is rebuilt.
    std::fs::remove_file(tmp.path().join("snapshot")).unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let report = ledger.open_report().clone();
    assert!(
        report.rebuilt.is_none() && report.snapshot.is_none(),
        "{report:?}"
    );
    assert_eq!(assert_consistent(&ledger, all.len()), heads);
}

#[test]
fn an_index_restored_behind_the_snapshot_wins_over_it_and_the_gap_is_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let backup = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(9, 6_000, 6, 16);
    let (early, late) = all.split_at(3_000);
    for (part, save) in [(early, true), (late, false)] {
        let ledger = Ledger::open(tmp.path()).unwrap();
        for chunk in part.chunks(500) {
            ledger.append_batch(chunk).unwrap();
        }
        ledger.close().unwrap();
        if save {
            copy_dir(&tmp.path().join("index"), &backup.path().join("index"));
        }
    }
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    copy_dir(&backup.path().join("index"), &tmp.path().join("index"));
    let ledger = Ledger::open(tmp.path()).unwrap();
    let report = ledger.open_report().clone();
    assert!(
        report.snapshot.is_none()
            && report.index_from_snapshot.is_none()
            && report.rebuilt.is_none()
            && report.replayed as usize == all.len() - early.len(),
        "{report:?}"
    );
    assert!(report
        .snapshot_ignored
        .unwrap()
        .contains("covers batch 6 only"));
    assert_consistent(&ledger, all.len());
}

#[test]
fn a_read_only_open_uses_the_snapshot_and_changes_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let all = fill(tmp.path(), 5, 5_000, 1_000);
    let before = files(tmp.path());
    let reader = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
    assert!(reader.open_report().snapshot.is_some());
    assert_eq!(reader.len(), all.len());
    let heads = reader.heads();
    drop(reader);
    assert_eq!(files(tmp.path()), before, "a read-only open changed files");
    let writer = Ledger::open(tmp.path()).unwrap();
    assert_eq!(assert_consistent(&writer, all.len()), heads);
}

/// Copies the ledger's log and snapshot (what a crash leaves of them) to a new directory.
fn crash_copy(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    std::fs::create_dir(to.path().join("log")).unwrap();
    for entry in std::fs::read_dir(from.join("log")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.path().join("log").join(path.file_name().unwrap())).unwrap();
    }
    if from.join("snapshot").exists() {
        std::fs::copy(from.join("snapshot"), to.path().join("snapshot")).unwrap();
    }
    to
}

#[test]
fn snapshots_taken_while_appending_agree_with_the_live_state() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(6, 3_000, 5, 8);
    // A snapshot every 700 entries, newest events first: snapshots land between batches
    // with pending events in them.
    let ledger = Ledger::open_with(Config::new(tmp.path()).snapshot_interval(700)).unwrap();
    let (first, rest) = all.split_at(1);
    let mut loaded = 0;
    for chunk in rest.rchunks(300) {
        ledger.append_batch(chunk).unwrap();
        // A snapshot taken by this batch is written on a thread of its own: on disk now.
        akledger::internals::finish_snapshot_write(&ledger).unwrap();
        let copy = crash_copy(tmp.path());
        let reopened = Ledger::open_with(Config::new(copy.path()).read_only(true)).unwrap();
        loaded += usize::from(reopened.open_report().snapshot.is_some());
        assert_eq!(reopened.pending(), ledger.pending());
        assert_eq!(reopened.len(), ledger.len());
    }
    assert!(loaded >= 3, "snapshots loaded: {loaded}");
    ledger.append(&first[0]).unwrap();
    assert_consistent(&ledger, all.len());
    let copy = crash_copy(tmp.path());
    let reopened = Ledger::open(copy.path()).unwrap();
    let report = reopened.open_report();
    assert!(
        report.snapshot.is_some() && report.index_from_snapshot.is_some(),
        "no index: rewritten from the snapshot (pending events included): {report:?}"
    );
    assert_consistent(&reopened, all.len());
    drop(reopened);
    std::fs::remove_file(copy.path().join("snapshot")).unwrap();
    let reopened = Ledger::open(copy.path()).unwrap();
    assert!(reopened.open_report().rebuilt.is_none());
    assert_consistent(&reopened, all.len());
}

#[test]
fn a_log_rolled_back_behind_its_snapshot_is_refused_even_with_the_acked_marker_emptied() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ledger");
    let events = common::realm_dag_bytes(61, 1_000, 6, 16);
    let ledger = Ledger::open(&dir).unwrap();
    ledger.append_batch(&events[..500]).unwrap();
    let first_batch_only = tmp.path().join("log-after-the-first-batch");
    copy_dir(&dir.join("log"), &first_batch_only);
    ledger.append_batch(&events[500..]).unwrap();
    ledger.close().unwrap();

    // The log rolled back one batch, and the marker that would have said so emptied.
    std::fs::remove_dir_all(dir.join("log")).unwrap();
    copy_dir(&first_batch_only, &dir.join("log"));
    std::fs::write(dir.join("acked"), b"").unwrap();
    for read_only in [false, true] {
        let err = Ledger::open_with(Config::new(&dir).read_only(read_only)).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, akledger::Error::Corrupt { .. })
                && text.contains("lost acknowledged events")
                && text.contains(&format!("{} events were admitted", events.len())),
            "{text}"
        );
    }
    // Moving the snapshot away opens what the log still holds, as the message says.
    std::fs::rename(dir.join("snapshot"), tmp.path().join("snapshot.kept")).unwrap();
    assert_eq!(Ledger::open(&dir).unwrap().len(), 500);
}

/// Snapshots while appending are `interval` entries apart until a quarter of the ledger is
/// more: each rewrites the whole state, so fixed spacing would make a long import quadratic.
#[test]
fn snapshots_spread_out_as_the_ledger_grows() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(21, 3_000, 4, 8).unwrap();
    let ledger = Ledger::open_with(Config::new(tmp.path()).snapshot_interval(100)).unwrap();
    let path = tmp.path().join("snapshot");
    let mut taken = Vec::new();
    let mut last = None;
    let mut written = 0;
    for chunk in events.chunks(50) {
        let bytes: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
        ledger.append_batch(&bytes).unwrap();
        akledger::internals::finish_snapshot_write(&ledger).unwrap();
        written += chunk.len();
        let now = std::fs::read(&path).ok().map(|b| blake3::hash(&b));
        if now.is_some() && now != last {
            taken.push(written);
            last = now;
        }
    }
    // 100 apart up to 400 entries, then about a quarter of the ledger apart.
    assert_eq!(taken[..4], [100, 200, 300, 400], "{taken:?}");
    for pair in taken.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= 100 && gap >= pair[1] / 4 - 50, "{taken:?}");
    }
    assert!(taken.len() < 15, "{} snapshots: {taken:?}", taken.len());
    assert_eq!(ledger.len(), events.len());
}

/// A snapshot taken while appending is written on a thread of its own: the commit that took
/// it does not wait for the disk, and a write that failed is reported by the commit that
/// takes the next one (which poisons the ledger, as any failed commit does). The events
/// stay, and the next open replays them from the log.
#[test]
fn a_snapshot_whose_write_failed_on_its_thread_is_reported_by_the_next_one() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(7, 300, 6, 16);
    let ledger = Ledger::open_with(Config::new(tmp.path()).snapshot_interval(100)).unwrap();
    // Nothing can be renamed over a directory that holds a file.
    let in_the_way = tmp.path().join("snapshot");
    std::fs::create_dir_all(in_the_way.join("file")).unwrap();
    ledger.append_batch(&all[..100]).unwrap();
    ledger.append_batch(&all[100..150]).unwrap();
    let err = ledger.append_batch(&all[150..200]).unwrap_err();
    assert!(
        matches!(&err, akledger::Error::Io { path, .. } if *path == in_the_way),
        "{err}"
    );
    assert!(matches!(
        ledger.append_batch(&all[200..]),
        Err(akledger::Error::Poisoned)
    ));
    drop(ledger);
    std::fs::remove_dir_all(&in_the_way).unwrap();
    let reopened = Ledger::open(tmp.path()).unwrap();
    assert!(reopened.open_report().snapshot.is_none());
    assert_eq!(
        reopened.len(),
        200,
        "the batch whose commit reported it stays"
    );
    assert_consistent(&reopened, 200);
    let temporaries = files(tmp.path())
        .into_keys()
        .filter(|f| f.to_string_lossy().contains(".snapshot."))
        .count();
    assert_eq!(temporaries, 0);
}

#[test]
fn a_bulk_append_takes_no_snapshot_until_it_ends_and_a_crash_during_it_reopens_from_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(11, 4_300, 6, 16);
    let (early, rest) = all.split_at(1_200);
    let (bulk, last) = rest.split_at(3_000);
    let ledger = Ledger::open(tmp.path()).unwrap();
    for chunk in early.chunks(500) {
        ledger.append_batch(chunk).unwrap();
    }
    ledger.close().unwrap();
    let path = tmp.path().join("snapshot");
    let before_bulk = std::fs::read(&path).unwrap();
    // Snapshots due every 256 entries: a bulk append takes none of them.
    let ledger = Ledger::open_with(Config::new(tmp.path()).snapshot_interval(256)).unwrap();
    let lines = bulk.join(&b'\n');
    let report = ledger.append_log(&lines[..]).unwrap();
    assert_eq!(report.summary.admitted, bulk.len());
    akledger::internals::finish_snapshot_write(&ledger).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before_bulk,
        "a snapshot mid-bulk"
    );
    // Once it has ended, the next commit takes the snapshot that is due.
    ledger.append_batch(last).unwrap();
    akledger::internals::finish_snapshot_write(&ledger).unwrap();
    assert_ne!(
        std::fs::read(&path).unwrap(),
        before_bulk,
        "no snapshot after the bulk"
    );
    ledger.close().unwrap();
    // What a process that died during the bulk append leaves: the snapshot from before it,
    // the index flushed since. Replaying 3,100 events after a snapshot of 1,200 would take
    // longer than loading the index: the open loads the index.
    std::fs::write(&path, &before_bulk).unwrap();
    let reopened = Ledger::open(tmp.path()).unwrap();
    let report = reopened.open_report().clone();
    assert!(
        report.snapshot.is_none() && report.rebuilt.is_none() && report.replayed == 0,
        "{report:?}"
    );
    assert!(
        report
            .snapshot_ignored
            .as_deref()
            .is_some_and(|why| why.contains("loading the index is shorter")),
        "{report:?}"
    );
    assert_consistent(&reopened, all.len());
}

#[test]
fn a_bulk_append_writes_the_index_every_so_many_records_and_all_of_it_when_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(12, 6_500, 6, 16);
    let lines = all.join(&b'\n');
    // Seven batches of 1000 log items: the index is written after the second, fourth and
    // sixth, and at the end.
    let config = Config::new(tmp.path()).bulk_index_records(1_500);
    let ledger = Ledger::open_with(config.clone()).unwrap();
    let mut seen = Vec::new();
    ledger
        .append_log_with(&lines[..], |_| {
            seen.push(akledger::internals::index_and_log_marks(&ledger)?);
            Ok::<(), akledger::Error>(())
        })
        .unwrap();
    // Batch seqs (index, log) as the items were delivered: the index trails the log, by
    // fewer than 1,500 records, so never by more than one batch.
    seen.dedup();
    assert!(
        seen.iter()
            .all(|&(index, log)| log - index.unwrap_or(0) <= 1),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|&(index, log)| index.unwrap_or(0) < log),
        "the index never trailed the log: {seen:?}"
    );
    assert_index_at_log(&ledger, "the end of the append wrote what it held");
    drop(ledger);
    let reopened = Ledger::open_with(config).unwrap();
    let report = reopened.open_report().clone();
    assert!(
        report.rebuilt.is_none() && report.replayed == 0,
        "{report:?}"
    );
    assert_consistent(&reopened, all.len());
}

#[test]
fn a_bulk_append_that_fails_part_way_still_writes_the_index_of_what_it_committed() {
    let tmp = tempfile::tempdir().unwrap();
    // Six batches of 1000, three verified ahead of the one committing: the failure while
    // the second is delivered leaves two committed.
    let all = common::realm_dag_bytes(13, 5_500, 6, 16);
    let lines = all.join(&b'\n');
    let ledger = Ledger::open_with(Config::new(tmp.path()).bulk_index_records(100_000)).unwrap();
    let mut delivered = 0;
    let stopped = ledger.append_log_with(&lines[..], |_| {
        delivered += 1;
        if delivered == 1_500 {
            return Err(akledger::Error::Misuse("stop here".into()));
        }
        Ok(())
    });
    assert!(
        matches!(stopped, Err(akledger::Error::Misuse(_))),
        "{stopped:?}"
    );
    assert_index_at_log(
        &ledger,
        "the failed append wrote the index of what it committed",
    );
    let admitted = ledger.len();
    assert_eq!(admitted, 2_000);
    // A commit after the failed append writes its index row at once again.
    ledger.append_batch(&all[admitted..]).unwrap();
    assert_index_at_log(&ledger, "the commit after it wrote its index row at once");
    ledger.close().unwrap();
    assert_reopens_without_replay(tmp.path(), all.len());
}

#[test]
fn a_bulk_append_a_caller_holds_gathers_the_index_writes_of_its_pipeline() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(14, 3_000, 6, 16);
    let ledger = Ledger::open(tmp.path()).unwrap();
    let bulk = ledger.bulk_append();
    let mut pipeline = ledger.pipeline();
    for chunk in all.chunks(500) {
        pipeline
            .push(chunk.iter().map(|b| std::sync::Arc::from(&b[..])).collect())
            .unwrap();
    }
    pipeline.finish().unwrap();
    let (index, log) = akledger::internals::index_and_log_marks(&ledger).unwrap();
    assert_eq!(
        (index, log),
        (None, 7),
        "seven batches, their index writes held"
    );
    bulk.end().unwrap();
    assert_index_at_log(&ledger, "ending the bulk append wrote what it held");
    drop(ledger);
    assert_reopens_without_replay(tmp.path(), all.len());
}

#[test]
fn a_pending_event_dropped_during_a_bulk_append_stays_dropped_in_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::realm_dag_bytes(15, 40, 2, 16);
    let ledger = Ledger::open(tmp.path()).unwrap();
    let bulk = ledger.bulk_append();
    // Without the realm's creation, these wait as pending; their rows are gathered.
    ledger.append_batch(&all[1..6]).unwrap();
    let (dropped, _) = ledger.pending()[0];
    assert!(ledger.drop_pending(&dropped).unwrap());
    bulk.end().unwrap();
    assert_index_at_log(&ledger, "the index's mark is the drop's");
    let check = ledger.check().unwrap();
    assert!(check.is_clean(), "{check:?}");
    let pending_before: Vec<_> = ledger.pending().into_iter().map(|(id, _)| id).collect();
    ledger.close().unwrap();
    let reopened = Ledger::open(tmp.path()).unwrap();
    let pending_after: Vec<_> = reopened.pending().into_iter().map(|(id, _)| id).collect();
    assert_eq!(pending_after, pending_before);
    assert!(!pending_after.contains(&dropped));
}
