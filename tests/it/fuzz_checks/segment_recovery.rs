//! `segment_recovery`: arbitrary bytes as segment files, then `SegmentLog::open`.

use std::path::Path;

use akledger::store::log::format::{Sealing, CHECKSUM_LEN, FRAME_PREFIX_LEN};
use akledger::store::log::{segment_file_name, LogEntry, LogOptions, SegmentLog};

/// Separates segment files inside one fuzz input.
pub const SEPARATOR: &[u8] = b"\xffNEXTSEG\xff";

fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut files = Vec::new();
    let mut rest = data;
    while files.len() < 3 {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(i) => {
                files.push(&rest[..i]);
                rest = &rest[i + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    files.push(rest);
    files
}

/// The entry's frame, read from the raw file, must verify where it lies (sealed as its
/// segment header's version says) and hold exactly the payload the log returned: whatever
/// recovery yields was really written.
fn frame_verifies(dir: &Path, entry: &LogEntry) {
    let raw = std::fs::read(dir.join(segment_file_name(entry.pos.segment))).expect("segment");
    let at = usize::try_from(entry.pos.offset).expect("offset");
    let prefix = &raw[at..at + FRAME_PREFIX_LEN];
    let len = u32::from_le_bytes(prefix[..4].try_into().expect("len")) as usize;
    let stored: [u8; CHECKSUM_LEN] = prefix[4..].try_into().expect("checksum");
    let body = &raw[at + FRAME_PREFIX_LEN..at + FRAME_PREFIX_LEN + len];
    let sealing = Sealing::of_version(raw[5]).expect("a version the log opened");
    assert_eq!(
        sealing.frame_checksum(entry.pos.segment, entry.pos.offset, &[body]),
        stored,
        "yielded an entry whose frame does not verify"
    );
    assert!(body.ends_with(&entry.payload), "payload is not the frame's");
}

fn entries(log: &SegmentLog) -> Option<Vec<LogEntry>> {
    log.iter().collect::<Result<Vec<_>, _>>().ok()
}

/// Writes the files, opens (recovery), iterates; then appends a probe batch and reopens
/// with full verification: recovery must leave a log that takes appends and reopens clean.
pub fn check(data: &[u8]) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("log");
    std::fs::create_dir_all(&dir).expect("log dir");
    for (n, bytes) in split(data).into_iter().enumerate() {
        std::fs::write(dir.join(segment_file_name(n as u32)), bytes).expect("write segment");
    }
    let opts = LogOptions {
        durability: akledger::Durability::Buffered,
        ..LogOptions::default()
    };
    let Ok((mut log, _report)) = SegmentLog::open(&dir, opts.clone()) else {
        return;
    };
    let mut seen = Vec::new();
    let mut clean = true;
    for entry in log.iter() {
        match entry {
            Ok(entry) => {
                frame_verifies(&dir, &entry);
                seen.push(entry);
            }
            Err(_) => {
                clean = false;
                break;
            }
        }
    }
    if !clean {
        return;
    }
    log.append_batch(&[(7, b"probe".as_slice())])
        .expect("a recovered log takes appends");
    drop(log);
    let verify = LogOptions {
        verify_on_open: true,
        ..opts
    };
    let (log, report) = SegmentLog::open(&dir, verify).expect("reopen after a probe append");
    assert!(report.torn_tail.is_none(), "torn tail after a clean append");
    let after = entries(&log).expect("iterate after reopen");
    assert_eq!(after.len(), seen.len() + 1, "entries lost or invented");
    for (a, b) in after.iter().zip(&seen) {
        assert_eq!((a.pos, a.kind, &a.payload), (b.pos, b.kind, &b.payload));
    }
    let last = after.last().expect("probe");
    assert_eq!(
        (last.kind, last.payload.as_slice()),
        (7, b"probe".as_slice())
    );
}
