//! Pending events are bounded, and an operator can drop one (recorded in the log, so every
//! replay agrees).

use std::path::Path;
use std::process::Command;

use akledger::error::Code;
use akledger::workload::realm_dag;
use akledger::{Appended, Config, Ledger};

fn log_len(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn new_pending_events_past_the_bound_are_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(31, 40, 2, 8).unwrap();
    // Everything after the realm's create event waits for it.
    let late: Vec<&[u8]> = events[1..10].iter().map(|e| e.bytes()).collect();
    {
        let ledger = Ledger::open_with(Config::new(tmp.path()).max_pending_events(5)).unwrap();
        let out = ledger.append_batch(&late[..5]).unwrap();
        assert!(out.iter().all(|o| matches!(o, Appended::Pending { .. })));
        let before = log_len(tmp.path());
        let out = ledger.append_batch(&late[5..7]).unwrap();
        for o in &out {
            assert_eq!(o.code(), Some(Code::PendingLimitExceeded), "{o:?}");
        }
        assert_eq!(log_len(tmp.path()), before, "a refused event was written");
        assert_eq!(ledger.pending().len(), 5);
        // An event that does not wait is still admitted, and releases the waiters.
        ledger.append(events[0].bytes()).unwrap();
        assert_eq!(ledger.pending().len(), 0);
    }
    // The byte bound, and replay never refuses what the log holds.
    let tmp = tempfile::tempdir().unwrap();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late[..5]).unwrap();
    }
    let tight = Config::new(tmp.path()).max_pending_bytes(late[0].len());
    let ledger = Ledger::open_with(tight).unwrap();
    assert_eq!(ledger.pending().len(), 5);
    let out = ledger.append(late[6]).unwrap();
    assert_eq!(out.code(), Some(Code::PendingLimitExceeded), "{out:?}");
}

#[test]
fn a_dropped_pending_event_stays_dropped_through_every_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let events = realm_dag(32, 40, 2, 8).unwrap();
    let late: Vec<&[u8]> = events[1..4].iter().map(|e| e.bytes()).collect();
    let victim = events[2].id();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late).unwrap();
        assert!(ledger.drop_pending(&victim).unwrap());
        assert!(!ledger.drop_pending(&victim).unwrap(), "dropped twice");
        assert_eq!(ledger.pending().len(), 2);
    }
    // Through the index, and through a full replay (read-only, and after the index is gone).
    let indexed = Ledger::open(tmp.path()).unwrap();
    assert_eq!(indexed.pending().len(), 2);
    assert!(indexed.check().unwrap().is_clean());
    drop(indexed);
    let replayed = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
    assert!(replayed.pending().iter().all(|(id, _)| *id != victim));
    drop(replayed);
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    let rebuilt = Ledger::open(tmp.path()).unwrap();
    assert_eq!(rebuilt.pending().len(), 2);
    // The realm arrives: the two kept are admitted, the dropped one is not; it can be sent
    // again.
    rebuilt.append(events[0].bytes()).unwrap();
    assert!(rebuilt.get(&victim).unwrap().is_none());
    assert_eq!(
        rebuilt.append(events[2].bytes()).unwrap(),
        Appended::Admitted(victim)
    );
    assert!(rebuilt.check().unwrap().is_clean());
    drop(rebuilt);

    // The CLI command.
    let tmp = tempfile::tempdir().unwrap();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late).unwrap();
    }
    let run = |id: &str| {
        Command::new(env!("CARGO_BIN_EXE_akledger"))
            .args(["drop-pending", id, "--dir"])
            .arg(tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&victim.to_string());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let again = run(&victim.to_string());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no such pending event"));
    assert_eq!(Ledger::open(tmp.path()).unwrap().pending().len(), 2);
}
