//! The ledger's input and output commands on real files: `import` and `audit` of large
//! events, and `drop-pending`.

use akledger::workload::realm_dag;
use akledger::Ledger;

use crate::support::bin;

/// `import` and `audit` of a file of ~900 KB events: batches cut by bytes (the library's
/// side is the engine's `append_log` tests).
#[test]
fn the_cli_imports_and_audits_a_log_of_900_kb_events() {
    let events = akledger_testkit::notes(44, 900_000);
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("large.jsonl");
    std::fs::write(
        &log,
        events
            .iter()
            .flat_map(|e| [e.bytes(), b"\n"])
            .flatten()
            .copied()
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let cli = |args: &[&std::ffi::OsStr]| {
        let out = bin().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let data = tmp.path().join("data");
    let imported = cli(&[
        "import".as_ref(),
        log.as_ref(),
        "--json".as_ref(),
        "--dir".as_ref(),
        data.as_ref(),
    ]);
    assert_eq!(imported["admitted"], events.len());
    let audited = cli(&["audit".as_ref(), log.as_ref(), "--json".as_ref()]);
    assert_eq!(audited["summary"]["admitted"], events.len(), "{audited}");
}

/// `drop-pending` drops a pending event once; a second drop is an error (the library's
/// side is the engine's `pending` tests).
#[test]
fn drop_pending_drops_once_and_says_when_there_is_nothing_to_drop() {
    let events = realm_dag(32, 40, 2, 8).unwrap();
    let late: Vec<&[u8]> = events[1..4].iter().map(|e| e.bytes()).collect();
    let victim = events[2].id();
    let tmp = tempfile::tempdir().unwrap();
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&late).unwrap();
    }
    let run = |id: &str| {
        bin()
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
