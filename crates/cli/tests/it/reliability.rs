//! Nothing acknowledged is lost, hidden or locked away: damaged tails, rolled-back logs,
//! deleted segments, read-only opens, the root lock and a self-healing index, each done to
//! real files (and, where the machine allows, real mounts).

use akledger_testkit as common;

use std::path::{Path, PathBuf};

use common::files;
use std::process::{Command, Output};

use akledger::store::log::segment_file_name;
use akledger::store::root::read_acked;
use akledger::{Config, Durability, Error, EventId, Fault, Ledger};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
}

fn cli(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run akledger")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn segment(dir: &Path, n: u32) -> PathBuf {
    dir.join("log").join(segment_file_name(n))
}

/// A ledger of 61 events appended in three batches of 21, 20 and 20; returns them.
fn build(config: Config) -> Vec<Vec<u8>> {
    let events = common::realm_dag_bytes(3, 60, 3, 8);
    let ledger = Ledger::open_with(config.clone()).unwrap();
    for chunk in [&events[..21], &events[21..41], &events[41..]] {
        ledger.append_batch(chunk).unwrap();
    }
    assert_eq!(ledger.len(), 61);
    events
}

/// The open fails as corruption naming `file`, counting `missing` events, and changes
/// nothing on disk; `check` reports it with exit 1 and `heads` fails, both read-only.
fn assert_refused(dir: &Path, file: &Path, missing: usize) {
    let before = files(dir);
    let err = Ledger::open(dir).unwrap_err();
    assert_eq!(err.fault(), Fault::Corruption, "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&file.display().to_string())
            && message.contains(&format!("{missing} acknowledged events are missing")),
        "{message}"
    );
    let check = cli(dir, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stderr));
    assert!(
        text(&check.stdout).contains("acknowledged events are missing"),
        "{}",
        text(&check.stdout)
    );
    let heads = cli(dir, &["heads"]);
    assert_eq!(heads.status.code(), Some(2));
    assert!(text(&heads.stderr).contains("acknowledged"));
    assert_eq!(files(dir), before, "a refused open changed files");
}

#[test]
fn a_flipped_byte_in_the_last_commit_frame_is_refused_not_cut() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()));
    let seg = segment(tmp.path(), 0);
    let mut bytes = std::fs::read(&seg).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01; // inside the final commit frame's digest
    std::fs::write(&seg, &bytes).unwrap();
    assert_refused(tmp.path(), &seg, 20);
}

#[test]
fn a_log_rolled_back_by_one_batch_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let events = common::realm_dag_bytes(4, 30, 3, 8);
    let seg = segment(tmp.path(), 0);
    {
        let ledger = Ledger::open(tmp.path()).unwrap();
        ledger.append_batch(&events[..20]).unwrap();
        let saved = std::fs::read(&seg).unwrap();
        ledger.append_batch(&events[20..]).unwrap();
        drop(ledger);
        std::fs::write(&seg, saved).unwrap();
    }
    assert_refused(tmp.path(), &seg, 11);
}

#[test]
fn a_deleted_last_segment_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()).segment_size(8 << 10));
    let count = std::fs::read_dir(tmp.path().join("log")).unwrap().count() as u32;
    assert!(count >= 3, "{count} segments");
    let last = segment(tmp.path(), count - 1);
    let kept = std::fs::read(&last).unwrap();
    std::fs::remove_file(&last).unwrap();
    let err = Ledger::open(tmp.path()).unwrap_err();
    assert_eq!(err.fault(), Fault::Corruption, "{err}");
    assert!(
        err.to_string().contains("acknowledged events are missing"),
        "{err}"
    );
    // Put back, the ledger is whole again.
    std::fs::write(&last, kept).unwrap();
    assert_eq!(Ledger::open(tmp.path()).unwrap().len(), 61);
}

#[test]
fn a_torn_tail_past_the_acknowledged_end_is_cut_and_reported_but_not_by_readers() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()));
    let seg = segment(tmp.path(), 0);
    let acked_len = std::fs::metadata(&seg).unwrap().len();
    // An interrupted write: the start of a frame that never completed.
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes.extend_from_slice(&[0x40, 0, 0, 0, 9, 9, 9]);
    std::fs::write(&seg, &bytes).unwrap();

    // Read commands leave it on disk, say so on stderr, and change no file at all.
    let before = files(tmp.path());
    let head = cli(tmp.path(), &["heads"]);
    assert_eq!(head.status.code(), Some(0), "{}", text(&head.stderr));
    let stderr = text(&head.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("ignored a torn tail"), "{stderr}");
    let first = text(&head.stdout).lines().next().unwrap().to_string();
    for args in [
        vec!["show", first.as_str()],
        vec!["export"],
        vec!["exchanges"],
        vec!["check"],
    ] {
        let out = cli(tmp.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert_eq!(files(tmp.path()), before, "a read command changed files");

    // A writer cuts it and reports the cut.
    let ledger = Ledger::open(tmp.path()).unwrap();
    let actions = ledger.open_report().actions();
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert!(actions[0].contains("cut a torn tail"), "{actions:?}");
    assert_eq!(ledger.len(), 61);
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), acked_len);
}

#[test]
fn a_second_writer_is_refused_even_with_the_index_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let events = build(Config::new(tmp.path()));
    let first = Ledger::open(tmp.path()).unwrap();
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    let err = Ledger::open(tmp.path()).unwrap_err();
    assert!(matches!(err, Error::AlreadyOpen { .. }), "{err}");
    assert!(!format!("{err}").contains("Os {"), "{err}");
    // The CLI says the same in a sentence.
    let out = cli(tmp.path(), &["init"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("already open"),
        "{}",
        text(&out.stderr)
    );
    drop(first);
    let ledger = Ledger::open(tmp.path()).unwrap();
    assert_eq!(ledger.len(), events.len());
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn a_damaged_index_is_rebuilt_from_the_log_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()));
    // Garbage over sled's database file and an empty snapshot left by a full disk.
    let index = tmp.path().join("index");
    let db = index.join("db");
    let len = std::fs::metadata(&db).unwrap().len() as usize;
    std::fs::write(&db, vec![0xa5; len.max(4096)]).unwrap();
    std::fs::write(index.join("snap.0000000000000000.generating"), b"").unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    assert!(
        ledger.open_report().rebuilt.is_some(),
        "{:?}",
        ledger.open_report()
    );
    assert!(ledger
        .open_report()
        .actions()
        .iter()
        .any(|a| a.contains("rebuilt the index")));
    assert_eq!(ledger.len(), 61);
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn buffered_appends_are_marked_acknowledged_on_close() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()).durability(Durability::Buffered));
    let seg = segment(tmp.path(), 0);
    let len = std::fs::metadata(&seg).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let err = Ledger::open(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("20 acknowledged"), "{err}");
}

/// A rebuild parses log batches on several threads and applies them in log order: the
/// ledger it opens to is the same whatever the number of threads.
#[test]
fn a_rebuild_on_any_number_of_parsing_threads_opens_to_the_same_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()));
    let order = |threads: usize| {
        std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
        let _ = std::fs::remove_file(tmp.path().join("snapshot"));
        let ledger = Ledger::open_with(Config::new(tmp.path()).verify_threads(threads)).unwrap();
        assert!(ledger.open_report().rebuilt.is_some());
        assert!(ledger.check().unwrap().is_clean());
        let ids: Vec<EventId> = ledger.iter().map(|e| e.unwrap().id()).collect();
        (ids, ledger.heads())
    };
    let one = order(1);
    assert_eq!(one.0.len(), 61);
    for threads in [2, 3, 5] {
        assert_eq!(order(threads), one, "{threads} threads");
    }
}

/// A damaged entry in the middle of the log stops a rebuild with the file it is in,
/// whichever parsing thread meets it, instead of hanging or skipping it. (Segments are
/// small, so the damage is in a segment before the last: recovery leaves it to the replay.)
#[test]
fn a_damaged_entry_mid_log_stops_a_rebuild_on_any_number_of_parsing_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::new(tmp.path()).segment_size(4096);
    let events = build(config.clone());
    std::fs::remove_dir_all(tmp.path().join("index")).unwrap();
    let _ = std::fs::remove_file(tmp.path().join("snapshot"));
    // An event of the second batch: its frame checksum no longer matches.
    let target = &events[30];
    let seg = (0..)
        .map(|n| segment(tmp.path(), n))
        .take_while(|p| p.exists())
        .find(|p| {
            let bytes = std::fs::read(p).unwrap();
            bytes.windows(target.len()).any(|w| w == target.as_slice())
        })
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes
        .windows(target.len())
        .position(|w| w == target.as_slice())
        .unwrap();
    bytes[at + target.len() / 2] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    let name = seg.file_name().unwrap().to_string_lossy().into_owned();
    for threads in [1, 2, 3] {
        let err = Ledger::open_with(config.clone().verify_threads(threads))
            .err()
            .unwrap_or_else(|| panic!("{threads} threads: opened over a damaged entry"));
        assert_eq!(err.fault(), Fault::Corruption, "{err}");
        assert!(err.to_string().contains(&name), "{threads} threads: {err}");
    }
}

/// A log without an acknowledged marker (a ledger from before the marker existed) is made
/// durable and marked by the next writer that opens it, even if it appends nothing, so
/// later opens count entries from the mark instead of reading the whole log.
#[test]
fn a_writer_marks_a_log_that_has_no_acknowledged_marker() {
    let tmp = tempfile::tempdir().unwrap();
    build(Config::new(tmp.path()));
    let marker = tmp.path().join("acked");
    let marked = read_acked(tmp.path()).unwrap().unwrap();
    assert_eq!(marked.entries, 61);
    std::fs::remove_file(&marker).unwrap();
    {
        let ledger = Ledger::open_with(Config::new(tmp.path()).read_only(true)).unwrap();
        assert_eq!(ledger.len(), 61);
    }
    assert!(!marker.exists(), "a read-only open wrote the marker");
    let ledger = Ledger::open(tmp.path()).unwrap();
    assert_eq!(ledger.len(), 61);
    drop(ledger);
    assert_eq!(read_acked(tmp.path()).unwrap(), Some(marked));
}
