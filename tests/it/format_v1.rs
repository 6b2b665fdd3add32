//! A ledger written by an earlier build, in segment-log format 1 (blake3 frame checksums;
//! `tests/data/format-v1/`): this build opens it, reads every frame, appends the rest of
//! its log to it, in format 1 while its segment is the last and in format 2 once it
//! rotates, and ends where a fresh import of the whole log ends.

use std::path::Path;

use akledger::store::log::format::{FILE_HEADER_LEN, FORMAT_VERSION};
use akledger::store::log::{segment_file_name, LogOptions, SegmentLog};
use akledger::{Config, Durability, Ledger};
use akledger_testkit::copy_dir;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/format-v1");

/// The format version in each segment header of the log under `ledger`, in order.
fn segment_versions(ledger: &Path) -> Vec<u8> {
    let log = ledger.join("log");
    (0u32..)
        .map(|n| log.join(segment_file_name(n)))
        .take_while(|path| path.exists())
        .map(|path| std::fs::read(path).unwrap()[5])
        .collect()
}

#[test]
fn a_format_1_ledger_opens_and_takes_the_rest_of_its_log_in_either_format() {
    let fixture = Path::new(FIXTURE);
    let log = std::fs::read(fixture.join("log.jsonl")).unwrap();
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = Ledger::open(fresh_dir.path()).unwrap();
    fresh.append_log(&log[..]).unwrap();
    assert_eq!(segment_versions(fresh_dir.path()), [FORMAT_VERSION]);

    // A read-only open (what queries use) of the fixture as it is.
    let untouched = tempfile::tempdir().unwrap();
    copy_dir(&fixture.join("ledger"), untouched.path());
    let reader = Ledger::open_with(Config::new(untouched.path()).read_only(true)).unwrap();
    assert_eq!(reader.len(), 35);
    assert!(reader.open_report().log.torn_tail_left.is_none());
    drop(reader);

    // The default rotation size keeps appending to the format 1 segment; a small one
    // rotates at once, so the rest of the log goes into format 2 segments after it.
    for (segment_size, versions) in [(64 << 20, vec![1]), (FILE_HEADER_LEN + 1, vec![1, 2])] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ledger");
        copy_dir(&fixture.join("ledger"), &dir);
        let config = || {
            Config::new(&dir)
                .durability(Durability::Sync)
                .segment_size(segment_size)
        };
        let ledger = Ledger::open_with(config()).unwrap();
        assert_eq!(ledger.len(), 35, "the fixture's events");
        let report = ledger.append_log(&log[..]).unwrap();
        assert_eq!(
            (report.summary.admitted, report.summary.rejected),
            (fresh.len() - 35, 0)
        );
        drop(ledger);
        let versions_now = segment_versions(&dir);
        assert_eq!(versions_now[0], 1, "a format 1 segment stays format 1");
        assert!(versions_now.iter().skip(1).all(|v| *v == FORMAT_VERSION));
        assert!(versions_now.starts_with(&versions), "{versions_now:?}");

        // Every frame of every segment verifies, as its own header's version says.
        let opts = LogOptions {
            verify_on_open: true,
            read_only: true,
            ..LogOptions::default()
        };
        let (segments, _) = SegmentLog::open(dir.join("log"), opts).unwrap();
        let entries = segments.iter().collect::<Result<Vec<_>, _>>().unwrap();
        assert!(entries.len() >= fresh.len());
        drop(segments);

        let reopened = Ledger::open_with(config()).unwrap();
        assert_eq!(reopened.len(), fresh.len());
        assert_eq!(reopened.heads(), fresh.heads());
        for id in fresh.heads() {
            assert!(reopened.get(&id).unwrap().is_some());
        }
    }
}
