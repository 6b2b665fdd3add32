//! `heads-of` on a closed ledger answers from the graph file when it is current, and from
//! the ledger itself when the graph file is stale or damaged: the same answer every time.
//! (The graph file's own checks are the engine's `graph_file` tests.)

use akledger::{Config, EventId, Ledger};

use crate::support::{run_ok, stdout};

/// `akledger heads-of IDS --dir DIR`, one id per line.
fn heads_of(dir: &std::path::Path, query: &[EventId]) -> Vec<String> {
    let mut args = vec!["heads-of".to_owned()];
    args.extend(query.iter().map(ToString::to_string));
    args.extend(["--dir".to_owned(), dir.to_str().unwrap().to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    stdout(&run_ok(&args, 0))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The answer of the ledger itself, opened read-only.
fn want(dir: &std::path::Path, query: &[EventId]) -> Vec<String> {
    let ledger = Ledger::open_with(Config::new(dir).read_only(true)).unwrap();
    let heads = ledger.heads_of(query).unwrap();
    heads.iter().map(ToString::to_string).collect()
}

#[test]
fn heads_of_answers_alike_from_a_current_a_stale_and_a_damaged_graph_file() {
    let tmp = tempfile::tempdir().unwrap();
    let all = akledger_testkit::realm_dag_bytes(4, 5_000, 6, 16);
    let ledger = Ledger::open(tmp.path()).unwrap();
    ledger.append_batch(&all[..4_800]).unwrap();
    ledger.close().unwrap();
    let graph = tmp.path().join("graph");
    assert!(graph.is_file());
    let ids: Vec<EventId> = Ledger::open_with(Config::new(tmp.path()).read_only(true))
        .unwrap()
        .iter()
        .map(|e| e.unwrap().id())
        .collect();
    let query: Vec<EventId> = ids.iter().rev().step_by(7).take(30).copied().collect();
    assert_eq!(heads_of(tmp.path(), &query), want(tmp.path(), &query));

    // 200 more events, fewer than a close's snapshot threshold: the graph file is stale.
    let ledger = Ledger::open(tmp.path()).unwrap();
    ledger.append_batch(&all[4_800..]).unwrap();
    drop(ledger);
    let (old, newest) = (ids[100], ids[4_700]);
    let query = [old, newest];
    assert_eq!(heads_of(tmp.path(), &query), want(tmp.path(), &query));
    assert_eq!(heads_of(tmp.path(), &query), [newest.to_string()]);

    // A damaged graph file: the ledger answers.
    let mut bad = std::fs::read(&graph).unwrap();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x20;
    std::fs::write(&graph, &bad).unwrap();
    assert_eq!(heads_of(tmp.path(), &query), want(tmp.path(), &query));
}
