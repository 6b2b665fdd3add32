//! Unit tests of the segment log: round trips, rotation, torn tails, corruption, poison.

#[allow(unused_imports)]
use akledger::*;

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use akledger::store::log::format::FILE_HEADER_LEN;
use akledger::store::log::*;

fn opts(segment_size: u64) -> LogOptions {
    LogOptions {
        segment_size,
        ..LogOptions::default()
    }
}

fn seg_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(segment_file_name(n))
}

fn open(dir: &Path, o: &LogOptions) -> (SegmentLog, RecoveryReport) {
    match SegmentLog::open(dir, o.clone()) {
        Ok(x) => x,
        Err(e) => panic!("open failed: {e}"),
    }
}

fn all(log: &SegmentLog) -> Vec<LogEntry> {
    log.iter().collect::<Result<Vec<_>, _>>().expect("iterate")
}

/// Deterministic payload of `len` bytes.
fn payload(tag: u64, len: usize) -> Vec<u8> {
    let mut x = tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

type Batch = Vec<(u8, Vec<u8>)>;

fn append(log: &mut SegmentLog, batch: &Batch) -> Vec<LogPos> {
    let refs: Vec<(u8, &[u8])> = batch.iter().map(|(k, p)| (*k, p.as_slice())).collect();
    log.append_batch(&refs).expect("append")
}

/// Checks that the log holds exactly `batches` (seq 1..) and that positions read back.
fn check_contents(log: &SegmentLog, batches: &[Batch]) {
    let got = all(log);
    let want: Vec<(u64, u8, &Vec<u8>)> = batches
        .iter()
        .enumerate()
        .flat_map(|(i, b)| b.iter().map(move |(k, p)| (i as u64 + 1, *k, p)))
        .collect();
    assert_eq!(got.len(), want.len());
    // One buffer for every positioned read into it: what a longer frame left in it must not
    // show through a shorter one's.
    let reader = log.reader();
    let mut reused = Vec::new();
    for (e, (seq, kind, p)) in got.iter().zip(want) {
        assert_eq!((e.seq, e.kind, &e.payload), (seq, kind, p));
        let (k, bytes) = log.read(e.pos).expect("read by position");
        assert_eq!((k, &bytes), (kind, p));
        let (k, bytes) = reader.read_into(e.pos, &mut reused).expect("read into");
        assert_eq!((k, bytes), (kind, p.as_slice()));
    }
    // All of them read together (runs of neighbours in one read each), forwards, then
    // backwards and with repeats (runs cut where the offsets stop ascending).
    let read_each = |positions: &[LogPos]| {
        let mut out = Vec::new();
        reader
            .read_each(
                positions,
                &mut reused_each(),
                |e| e,
                |k, p| {
                    out.push((k, p.to_vec()));
                    Ok(())
                },
            )
            .expect("read each");
        out
    };
    let forwards: Vec<LogPos> = got.iter().map(|e| e.pos).collect();
    let want: Vec<(u8, Vec<u8>)> = got.iter().map(|e| (e.kind, e.payload.clone())).collect();
    assert_eq!(read_each(&forwards), want);
    let mixed: Vec<LogPos> = forwards.iter().rev().chain(&forwards).copied().collect();
    let want_mixed: Vec<(u8, Vec<u8>)> = want.iter().rev().chain(&want).cloned().collect();
    assert_eq!(read_each(&mixed), want_mixed);
    assert_eq!(log.high_water().seq, batches.len() as u64);
}

/// A reused buffer as a caller would hand it over: holding older bytes.
fn reused_each() -> Vec<u8> {
    vec![0xAB; 3000]
}

fn corrupt_at(err: LogError) -> (PathBuf, u64) {
    match err {
        LogError::Corrupt { file, offset, .. } => (file, offset),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn round_trip_varied_sizes_and_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let batches: Vec<Batch> = vec![
        vec![(0, vec![])],
        vec![(7, payload(1, MAX_PAYLOAD))],
        (0..10)
            .map(|i| (i as u8, payload(i, i as usize * 37)))
            .collect(),
        vec![
            (255, payload(9, 512)),
            (1, vec![]),
            (2, payload(3, MAX_PAYLOAD)),
        ],
        // A batch of many frames, some of them empty.
        (0..1500u64)
            .map(|i| ((i % 256) as u8, payload(100 + i, (i as usize * 7) % 300)))
            .collect(),
    ];
    let (mut log, report) = open(dir.path(), &LogOptions::default());
    assert!(report.created);
    let mut positions = Vec::new();
    for b in &batches {
        positions.push(append(&mut log, b));
    }
    assert!(positions.iter().flatten().is_sorted());
    check_contents(&log, &batches);
    let hw = log.high_water();
    drop(log);
    let (log, report) = open(dir.path(), &LogOptions::default());
    assert_eq!(report.high_water, hw);
    assert_eq!(report.bytes_dropped, 0);
    assert!(report.torn_tail.is_none());
    check_contents(&log, &batches);
    // Positions handed out by append are the ones iteration reports.
    let iter_pos: Vec<LogPos> = all(&log).iter().map(|e| e.pos).collect();
    assert_eq!(iter_pos, positions.concat());
}

#[test]
fn empty_batch_is_a_no_op_and_limits_are_enforced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    assert_eq!(log.append_batch(&[]).expect("empty"), vec![]);
    assert_eq!(log.high_water().seq, 0);
    let big = vec![0u8; MAX_PAYLOAD + 1];
    assert!(matches!(
        log.append_batch(&[(1, &big)]),
        Err(LogError::TooLarge { .. })
    ));
    assert!(!log.is_poisoned());
    append(&mut log, &vec![(1, b"ok".to_vec())]);
    assert_eq!(log.high_water().seq, 1);
}

#[test]
fn rotation_with_tiny_segments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = opts(300);
    let (mut log, _) = open(dir.path(), &o);
    let batches: Vec<Batch> = (0..40u64)
        .map(|i| {
            (0..(i % 3 + 1))
                .map(|j| (j as u8, payload(i * 10 + j, (i * 13 % 90) as usize)))
                .collect()
        })
        .collect();
    for b in &batches {
        append(&mut log, b);
    }
    let hw = log.high_water();
    assert!(
        hw.end.segment > 5,
        "expected many segments, got {}",
        hw.end.segment + 1
    );
    check_contents(&log, &batches);
    // Every segment respects the size limit unless it holds a single oversized batch.
    let entries = all(&log);
    for n in 0..=hw.end.segment {
        let len = fs::metadata(seg_path(dir.path(), n)).expect("meta").len();
        let mut seqs: Vec<u64> = entries
            .iter()
            .filter(|e| e.pos.segment == n)
            .map(|e| e.seq)
            .collect();
        seqs.dedup();
        assert!(!seqs.is_empty(), "segment {n} holds no batch");
        assert!(
            len <= 300 || seqs.len() == 1,
            "segment {n}: {len} bytes, {} batches",
            seqs.len()
        );
    }
    drop(log);
    let verify = LogOptions {
        verify_on_open: true,
        ..o.clone()
    };
    let (mut log, report) = open(dir.path(), &verify);
    assert_eq!(report.high_water, hw);
    assert_eq!(report.segments, hw.end.segment + 1);
    check_contents(&log, &batches);
    // iter_from a batch boundary in the middle resumes exactly there.
    let entries = all(&log);
    let mid = &entries[entries.len() / 2];
    let resumed: Vec<LogEntry> = log
        .iter_from(mid.batch_end)
        .map(|e| e.expect("entry"))
        .collect();
    let expected: Vec<LogEntry> = entries
        .iter()
        .filter(|e| e.seq > mid.seq)
        .cloned()
        .collect();
    assert_eq!(resumed, expected);
    // A batch bigger than the segment size gets a segment of its own.
    let big: Batch = vec![(1, payload(77, 1000))];
    let pos = append(&mut log, &big);
    assert_eq!(pos[0].segment, hw.end.segment + 1);
    assert_eq!(log.iter_from(log.high_water().end).count(), 0);
}

#[test]
fn iter_from_rejects_a_position_inside_a_batch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let pos = append(&mut log, &vec![(1, b"a".to_vec()), (2, b"b".to_vec())]);
    let first = log.iter_from(pos[1]).next().expect("one item");
    assert!(
        matches!(first, Err(LogError::InvalidPosition { .. })),
        "{first:?}"
    );
    assert!(matches!(
        log.read(LogPos::new(0, 3)),
        Err(LogError::InvalidPosition { .. })
    ));
    assert!(matches!(
        log.read(LogPos::new(9, 40)),
        Err(LogError::InvalidPosition { .. })
    ));
    assert!(
        log.read(LogPos::new(0, FILE_HEADER_LEN)).is_err(),
        "a BatchBegin is no entry"
    );
}

/// Builds a log of `batches` in `dir`; returns the high-water mark after each batch.
fn build(dir: &Path, o: &LogOptions, batches: &[Batch]) -> Vec<HighWater> {
    let (mut log, _) = open(dir, o);
    batches
        .iter()
        .map(|b| {
            append(&mut log, b);
            log.high_water()
        })
        .collect()
}

fn sample_batches() -> Vec<Batch> {
    vec![
        vec![(1, payload(1, 40)), (2, payload(2, 0))],
        vec![(3, payload(3, 64))],
        vec![(4, payload(4, 30)), (5, payload(5, 1)), (6, payload(6, 25))],
    ]
}

fn torn_tail_at_every_cut(o: &LogOptions) {
    let src = tempfile::tempdir().expect("tempdir");
    let batches = sample_batches();
    let marks = build(src.path(), o, &batches);
    let (prev, last) = (marks[1].end, marks[2].end);
    let last_file = seg_path(src.path(), last.segment);
    let bytes = fs::read(&last_file).expect("read");
    assert_eq!(bytes.len() as u64, last.offset);
    // If the last batch opened a new segment, cuts start at its header.
    let first_cut = if prev.segment == last.segment {
        prev.offset
    } else {
        FILE_HEADER_LEN
    };
    for cut in first_cut..last.offset {
        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..=last.segment {
            fs::copy(seg_path(src.path(), n), seg_path(dir.path(), n)).expect("copy");
        }
        fs::write(seg_path(dir.path(), last.segment), &bytes[..cut as usize]).expect("cut");
        let (mut log, report) = open(dir.path(), o);
        assert_eq!(report.high_water.seq, 2, "cut at {cut}");
        assert_eq!(report.bytes_dropped, cut - first_cut, "cut at {cut}");
        assert_eq!(
            report.batches_dropped,
            u32::from(cut > first_cut),
            "cut at {cut}"
        );
        assert_eq!(report.torn_tail.is_some(), cut > first_cut);
        check_contents(&log, &batches[..2]);
        let extra: Batch = vec![(9, payload(cut, 33))];
        append(&mut log, &extra);
        drop(log);
        let (log, report) = open(dir.path(), o);
        assert!(report.torn_tail.is_none(), "cut at {cut}: {report:?}");
        let mut want = batches[..2].to_vec();
        want.push(extra);
        check_contents(&log, &want);
    }
}

#[test]
fn torn_tail_cut_at_every_byte_of_the_last_batch() {
    torn_tail_at_every_cut(&LogOptions::default());
}

#[test]
fn torn_tail_in_a_freshly_rotated_segment() {
    // Segment size so small that every batch gets its own segment.
    torn_tail_at_every_cut(&opts(FILE_HEADER_LEN + 1));
}

#[test]
fn torn_tail_found_through_windows_smaller_than_a_batch() {
    torn_tail_at_every_cut(&LogOptions {
        scan_window: 16,
        ..LogOptions::default()
    });
}

#[test]
fn zeroed_tail_is_torn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let batches = sample_batches();
    let marks = build(dir.path(), &LogOptions::default(), &batches);
    let path = seg_path(dir.path(), 0);
    let mut bytes = fs::read(&path).expect("read");
    bytes.extend_from_slice(&[0u8; 4096]);
    fs::write(&path, &bytes).expect("write");
    let (log, report) = open(dir.path(), &LogOptions::default());
    assert_eq!(report.bytes_dropped, 4096);
    assert_eq!(report.high_water, marks[2]);
    check_contents(&log, &batches);
}

fn flip(path: &Path, offset: u64) {
    let mut bytes = fs::read(path).expect("read");
    bytes[offset as usize] ^= 0x40;
    fs::write(path, bytes).expect("write");
}

#[test]
fn flip_in_a_middle_batch_is_corrupt_with_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let batches = sample_batches();
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let mut positions = Vec::new();
    for b in &batches {
        positions.push(append(&mut log, b));
    }
    drop(log);
    let target = positions[1][0];
    flip(&seg_path(dir.path(), 0), target.offset + 30);
    let err = SegmentLog::open(dir.path(), LogOptions::default())
        .err()
        .expect("must fail");
    let (file, offset) = corrupt_at(err);
    assert_eq!(file, seg_path(dir.path(), 0));
    assert_eq!(offset, target.offset);
}

#[test]
fn flip_in_the_last_batch_follows_the_rule() {
    let batches = sample_batches();
    // An entry of the final, committed batch: its commit frame survives → Corrupt.
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    for b in &batches[..2] {
        append(&mut log, b);
    }
    let positions = append(&mut log, &batches[2]);
    let end = log.high_water().end;
    drop(log);
    flip(&seg_path(dir.path(), 0), positions[1].offset + 22);
    let (_, offset) = corrupt_at(
        SegmentLog::open(dir.path(), LogOptions::default())
            .err()
            .expect("fail"),
    );
    assert_eq!(offset, positions[1].offset);
    // Undo, then damage the commit frame (the last bytes): indistinguishable from a torn
    // write, so the batch is dropped and reported.
    flip(&seg_path(dir.path(), 0), positions[1].offset + 22);
    flip(&seg_path(dir.path(), 0), end.offset - 3);
    let (log, report) = open(dir.path(), &LogOptions::default());
    assert_eq!(report.batches_dropped, 1);
    assert_eq!(report.high_water.seq, 2);
    check_contents(&log, &batches[..2]);
}

#[test]
fn read_only_open_scans_from_the_acknowledged_mark() {
    let src = tempfile::tempdir().expect("tempdir");
    let batches = sample_batches();
    let marks = build(src.path(), &LogOptions::default(), &batches);
    let bytes = fs::read(seg_path(src.path(), 0)).expect("read");
    let read_only = |acked: Option<HighWater>| LogOptions {
        read_only: true,
        acknowledged: acked,
        ..LogOptions::default()
    };
    let copy = |image: &[u8]| {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(seg_path(dir.path(), 0), image).expect("write");
        dir
    };

    // Clean: the same high-water mark and contents, with the mark anywhere in the segment.
    for mark in &marks {
        let dir = copy(&bytes);
        let (log, report) = open(dir.path(), &read_only(Some(*mark)));
        assert_eq!(report.high_water, marks[2]);
        check_contents(&log, &batches);
    }

    // Damage before the mark is not seen by the open, only by the read of that batch; a
    // writer's open (and a read-only one without the mark) still refuses it.
    let dir = copy(&bytes);
    flip(&seg_path(dir.path(), 0), FILE_HEADER_LEN + 30);
    let (log, report) = open(dir.path(), &read_only(Some(marks[1])));
    assert_eq!(report.high_water, marks[2]);
    assert!(log.iter().any(|e| e.is_err()));
    for o in [read_only(None), LogOptions::default()] {
        corrupt_at(SegmentLog::open(dir.path(), o).err().expect("must fail"));
    }

    // A torn tail after the mark is judged as a whole-segment scan judges it.
    for cut in marks[1].end.offset + 1..marks[2].end.offset {
        let dir = copy(&bytes[..cut as usize]);
        let (_, from_mark) = open(dir.path(), &read_only(Some(marks[1])));
        let (_, whole) = open(dir.path(), &read_only(None));
        assert_eq!(from_mark.high_water, marks[1], "cut at {cut}");
        assert_eq!(
            from_mark.torn_tail_left.map(|t| t.offset),
            whole.torn_tail_left.map(|t| t.offset),
            "cut at {cut}"
        );
    }

    // A damaged commit frame of the marked batch, or a mark that does not end a commit of
    // its batch, sends the open back to the whole-segment scan: the first is a log behind
    // what was acknowledged, the second opens as the whole scan reads it.
    let behind = |dir: &Path, mark: HighWater| {
        let err = SegmentLog::open(dir, read_only(Some(mark)))
            .err()
            .expect("must fail");
        assert!(
            matches!(err, LogError::BehindAcknowledged { .. }),
            "{err:?}"
        );
    };
    let dir = copy(&bytes);
    flip(&seg_path(dir.path(), 0), marks[2].end.offset - 3);
    behind(dir.path(), marks[2]);
    let dir = copy(&bytes);
    let wrong_seq = HighWater { seq: 1, ..marks[1] };
    let (_, report) = open(dir.path(), &read_only(Some(wrong_seq)));
    assert_eq!(report.high_water, marks[2]);

    // A mark past the end of the file: the log is behind what was acknowledged.
    let dir = copy(&bytes[..marks[1].end.offset as usize]);
    behind(dir.path(), marks[2]);
}

#[test]
fn damage_in_a_sealed_segment_is_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = opts(FILE_HEADER_LEN + 1);
    let batches = sample_batches();
    build(dir.path(), &o, &batches);
    flip(&seg_path(dir.path(), 1), FILE_HEADER_LEN + 25);
    // Lazily: open succeeds (headers are fine), iteration reports the damage.
    let (log, _) = open(dir.path(), &o);
    let items: Vec<_> = log.iter().collect();
    assert!(items[0].is_ok() && items[1].is_ok());
    let err = items.into_iter().find_map(Result::err).expect("an error");
    let (file, offset) = corrupt_at(err);
    assert_eq!((file, offset), (seg_path(dir.path(), 1), FILE_HEADER_LEN));
    drop(log);
    // Eagerly with verify_on_open.
    let verify = LogOptions {
        verify_on_open: true,
        ..o
    };
    let (file, _) = corrupt_at(SegmentLog::open(dir.path(), verify).err().expect("fail"));
    assert_eq!(file, seg_path(dir.path(), 1));
}

#[test]
fn bad_files_give_clear_errors() {
    // Garbage as the only segment.
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(
        seg_path(dir.path(), 0),
        b"this is not a segment log at all, sorry",
    )
    .expect("w");
    let (file, offset) = corrupt_at(
        SegmentLog::open(dir.path(), LogOptions::default())
            .err()
            .expect("fail"),
    );
    assert_eq!((file, offset), (seg_path(dir.path(), 0), 0));

    // Bad magic on an otherwise valid log.
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &LogOptions::default(), &sample_batches());
    flip(&seg_path(dir.path(), 0), 1);
    let (_, offset) = corrupt_at(
        SegmentLog::open(dir.path(), LogOptions::default())
            .err()
            .expect("fail"),
    );
    assert_eq!(offset, 0);

    // Missing middle segment.
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &opts(FILE_HEADER_LEN + 1), &sample_batches());
    fs::remove_file(seg_path(dir.path(), 1)).expect("rm");
    let (file, _) = corrupt_at(
        SegmentLog::open(dir.path(), LogOptions::default())
            .err()
            .expect("fail"),
    );
    assert_eq!(file, seg_path(dir.path(), 1));

    // Zero-length middle segment.
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &opts(FILE_HEADER_LEN + 1), &sample_batches());
    fs::write(seg_path(dir.path(), 1), b"").expect("truncate");
    let (file, _) = corrupt_at(
        SegmentLog::open(dir.path(), LogOptions::default())
            .err()
            .expect("fail"),
    );
    assert_eq!(file, seg_path(dir.path(), 1));
}

#[test]
fn empty_last_segment_is_a_torn_creation() {
    // Only segment, zero bytes: a fresh log.
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(seg_path(dir.path(), 0), b"").expect("w");
    let (mut log, report) = open(dir.path(), &LogOptions::default());
    assert!(report.created && report.torn_tail.is_some());
    append(&mut log, &vec![(1, b"x".to_vec())]);

    // Zero-length segment after valid ones: removed, the log continues.
    let dir = tempfile::tempdir().expect("tempdir");
    let batches = sample_batches();
    let marks = build(dir.path(), &opts(FILE_HEADER_LEN + 1), &batches);
    let next = marks[2].end.segment + 1;
    fs::write(seg_path(dir.path(), next), [0u8; 20]).expect("w");
    let (mut log, report) = open(dir.path(), &opts(FILE_HEADER_LEN + 1));
    assert_eq!(report.bytes_dropped, 20);
    assert_eq!(report.high_water, marks[2]);
    assert!(!seg_path(dir.path(), next).exists() || log.high_water().end.segment == next);
    let extra: Batch = vec![(1, b"after".to_vec())];
    append(&mut log, &extra);
    let mut want = batches.clone();
    want.push(extra);
    check_contents(&log, &want);
}

/// A log in a new directory, holding one batch (returned too).
fn log_of_one_batch() -> (tempfile::TempDir, SegmentLog, Batch) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let first: Batch = vec![(1, b"kept".to_vec())];
    append(&mut log, &first);
    (dir, log, first)
}

/// `work` run while `fault` (one of the failures `internals` injects) is set on this thread.
fn injected<T>(
    fault: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    work: impl FnOnce() -> T,
) -> T {
    fault.with(|f| f.set(true));
    let out = work();
    fault.with(|f| f.set(false));
    out
}

#[test]
fn failed_write_poisons_the_log() {
    let (dir, mut log, first) = log_of_one_batch();
    let res = injected(&akledger::internals::FAIL_LOG_WRITES, || {
        log.append_batch(&[(1, b"lost")])
    });
    assert!(matches!(res, Err(LogError::Io { .. })), "{res:?}");
    assert!(log.is_poisoned());
    assert!(matches!(
        log.append_batch(&[(1, b"x")]),
        Err(LogError::Poisoned)
    ));
    assert!(matches!(log.sync(), Err(LogError::Poisoned)));
    // Readers still see the committed data; reopening recovers and appends again.
    check_contents(&log, std::slice::from_ref(&first));
    drop(log);
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let second: Batch = vec![(2, b"again".to_vec())];
    append(&mut log, &second);
    check_contents(&log, &[first, second]);
}

#[test]
fn meanwhile_runs_once_the_batch_is_written_and_before_readers_see_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let first: Batch = vec![(1, b"first".to_vec())];
    append(&mut log, &first);
    let reader = log.reader();
    let (positions, (given, seen)) = log
        .append_batch_from(&[(1, b"second"), (2, b"third")], None, |at| {
            (at.to_vec(), reader.iter().count())
        })
        .expect("append");
    assert_eq!(given, positions);
    assert_eq!(seen, 1, "the batch was visible before its sync");
    assert_eq!(reader.iter().count(), 3);
    // An empty batch takes no seq, and still runs `meanwhile`.
    let (none, ran) = log
        .append_batch_from(&[], None, |at| at.is_empty())
        .expect("empty");
    assert!(none.is_empty() && ran);
    check_contents(
        &log,
        &[first, vec![(1, b"second".to_vec()), (2, b"third".to_vec())]],
    );
}

#[test]
fn a_failed_sync_poisons_the_log_and_hides_the_batch_a_failed_write_runs_nothing() {
    let (_dir, mut log, first) = log_of_one_batch();
    let mut ran = false;
    let res = injected(&akledger::internals::FAIL_LOG_SYNCS, || {
        log.append_batch_from(&[(1, b"unsure")], None, |_| ran = true)
    });
    assert!(ran, "meanwhile runs before the sync");
    assert!(matches!(res, Err(LogError::Io { .. })), "{res:?}");
    assert!(log.is_poisoned());
    check_contents(&log, std::slice::from_ref(&first));

    let (_dir, mut log, _) = log_of_one_batch();
    let mut ran = false;
    let res = injected(&akledger::internals::FAIL_LOG_WRITES, || {
        log.append_batch_from(&[(1, b"lost")], None, |_| ran = true)
    });
    assert!(res.is_err() && !ran, "meanwhile ran after a failed write");
}

#[test]
fn real_write_failure_poisons_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    // A read-only handle on the active segment: the OS refuses the pwrite.
    log.make_active_segment_read_only().unwrap();
    assert!(matches!(
        log.append_batch(&[(1, b"x")]),
        Err(LogError::Io { .. })
    ));
    assert!(matches!(
        log.append_batch(&[(1, b"x")]),
        Err(LogError::Poisoned)
    ));
}

#[test]
fn buffered_mode_round_trips_after_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = LogOptions {
        durability: Durability::Buffered,
        segment_size: 500,
        ..LogOptions::default()
    };
    let (mut log, _) = open(dir.path(), &o);
    let batches: Vec<Batch> = (0..20).map(|i| vec![(1, payload(i, 60))]).collect();
    for b in &batches {
        append(&mut log, b);
    }
    log.sync().expect("sync");
    drop(log);
    let (log, _) = open(dir.path(), &o);
    check_contents(&log, &batches);
}

#[test]
fn readers_run_concurrently_with_the_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &opts(2000));
    let reader = log.reader();
    let handle = std::thread::spawn(move || {
        let mut seen = 0;
        for _ in 0..200 {
            let entries: Vec<LogEntry> = reader.iter().collect::<Result<_, _>>().expect("iter");
            assert!(entries.len() >= seen, "committed entries never disappear");
            for (i, e) in entries.iter().enumerate() {
                assert_eq!(e.seq, i as u64 + 1);
                assert_eq!(e.payload, payload(e.seq, 50));
            }
            seen = entries.len();
        }
    });
    for i in 1..=100u64 {
        append(&mut log, &vec![(0, payload(i, 50))]);
    }
    handle.join().expect("reader thread");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bytes as a segment file never make open (or iteration) panic.
    #[test]
    fn arbitrary_segment_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(seg_path(dir.path(), 0), &bytes).expect("w");
        if let Ok((log, _)) = SegmentLog::open(dir.path(), LogOptions::default()) {
            for item in log.iter() {
                let _ = item;
            }
        }
    }

    /// Random damage (byte flips, truncation, appended junk) to a valid log never panics
    /// and never yields data that was not written.
    #[test]
    fn damaged_valid_log_never_panics(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..4),
        cut in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let batches = sample_batches();
        build(dir.path(), &LogOptions::default(), &batches);
        let path = seg_path(dir.path(), 0);
        let mut bytes = fs::read(&path).expect("read");
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        let keep = cut.index(bytes.len() + 1);
        bytes.truncate(keep);
        bytes.extend_from_slice(&junk);
        fs::write(&path, &bytes).expect("write");
        if let Ok((log, _)) = SegmentLog::open(dir.path(), LogOptions::default()) {
            let written: Vec<(u8, Vec<u8>)> = batches.concat();
            for item in log.iter() {
                let Ok(e) = item else { break };
                prop_assert!(written.contains(&(e.kind, e.payload.clone())));
            }
        }
    }
}

/// What an open of a copy of `files` (segment bytes, in order) gives: the report or the
/// error (as text, the copy's directory written `DIR`), every entry, and the files as
/// recovery left them.
fn open_copy(files: &[Vec<u8>], o: &LogOptions) -> (String, Vec<LogEntry>, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (n, bytes) in files.iter().enumerate() {
        fs::write(seg_path(dir.path(), n as u32), bytes).expect("write");
    }
    let (report, entries) = match SegmentLog::open(dir.path(), o.clone()) {
        Ok((log, report)) => {
            let entries = log.iter().map_while(Result::ok).collect();
            (format!("{report:?}"), entries)
        }
        Err(e) => (format!("{e}"), Vec::new()),
    };
    let report = report.replace(&dir.path().display().to_string(), "DIR");
    let after = (0..files.len())
        .map(|n| fs::read(seg_path(dir.path(), n as u32)).unwrap_or_default())
        .collect();
    (report, entries, after)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A writer's open that reads the last segment a window at a time, of any size, finds
    /// what a read of the whole segment finds, on valid and on damaged logs: the same
    /// report or error, the same entries, the same files afterwards.
    #[test]
    fn recovery_through_any_window_is_recovery_of_the_whole_segment(
        window in 1u64..700,
        sizes in proptest::collection::vec(proptest::collection::vec(0usize..90, 1..5), 1..7),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..3),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        junk in proptest::collection::vec(any::<u8>(), 0..48),
    ) {
        let src = tempfile::tempdir().expect("tempdir");
        let batches: Vec<Batch> = sizes
            .iter()
            .enumerate()
            .map(|(b, lens)| {
                lens.iter()
                    .enumerate()
                    .map(|(e, &len)| (e as u8, payload((b * 8 + e) as u64, len)))
                    .collect()
            })
            .collect();
        build(src.path(), &opts(400), &batches);
        let mut files: Vec<Vec<u8>> = (0..)
            .map(|n| fs::read(seg_path(src.path(), n)))
            .take_while(Result::is_ok)
            .map(Result::unwrap)
            .collect();
        let last = files.last_mut().expect("a segment");
        for (at, x) in flips {
            let i = at.index(last.len());
            last[i] ^= x;
        }
        if let Some(cut) = cut {
            let keep = cut.index(last.len() + 1);
            last.truncate(keep);
        }
        last.extend_from_slice(&junk);
        let whole = LogOptions { scan_window: u64::MAX, ..opts(400) };
        let windowed = LogOptions { scan_window: window, ..opts(400) };
        prop_assert_eq!(open_copy(&files, &windowed), open_copy(&files, &whole));
    }
}

/// The bytes of segment `n` of `log`, whatever backs it.
fn segment_bytes(log: &SegmentLog, n: u32) -> Vec<u8> {
    log.segment_bytes(n).expect("segment").0
}

#[test]
fn in_memory_frames_are_the_files_without_checksums() {
    use akledger::store::log::format::{parse_frame, Record, CHECKSUM_LEN, NEW_SEGMENT_SEALING};
    let dir = tempfile::tempdir().expect("tempdir");
    let o = opts(2048);
    let batches: Vec<Batch> = (0..12u64)
        .map(|b| {
            (0..=b % 4)
                .map(|i| (i as u8, payload(b * 10 + i, 150)))
                .collect()
        })
        .collect();
    let (mut disk, _) = open(dir.path(), &o);
    let mut memory = SegmentLog::in_memory(o.clone()).expect("in-memory log");
    for b in &batches {
        assert_eq!(append(&mut disk, b), append(&mut memory, b));
    }
    check_contents(&memory, &batches);
    let segments = disk.segment_bytes(0).expect("segment").1;
    assert!(segments > 2, "the batches span several segments");
    for n in 0..segments as u32 {
        // The file's frames with their checksums and batch digests zeroed are the
        // in-memory segment, byte for byte.
        let mut file = segment_bytes(&disk, n);
        let mut at = FILE_HEADER_LEN as usize;
        while at < file.len() {
            let frame = parse_frame(&file, NEW_SEGMENT_SEALING, at, n, 0).expect("frame");
            let (end, commit) = (
                frame.end,
                matches!(frame.record, Record::BatchCommit { .. }),
            );
            file[at + 4..at + 4 + CHECKSUM_LEN].fill(0);
            if commit {
                file[end - CHECKSUM_LEN..end].fill(0);
            }
            at = end;
        }
        assert_eq!(file, segment_bytes(&memory, n), "segment {n}");
    }
    // Nothing checks an in-memory frame's checksum bytes: they are zero, and reads succeed.
    let last = all(&memory).pop().expect("an entry");
    assert_eq!(memory.read(last.pos).expect("read").1, last.payload);
}

#[test]
fn batches_hold_the_entries_the_entry_iterator_yields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = opts(2048);
    let mut batches = sample_batches();
    batches.extend((0..9u64).map(|b| vec![(7, payload(b, 300)), (8, payload(b + 50, 10))]));
    let highs = build(dir.path(), &o, &batches);
    let (log, _) = open(dir.path(), &o);
    let reader = log.reader();
    let entries = all(&log);
    let read: Vec<LogBatch> = reader.batches().collect::<Result<_, _>>().expect("batches");
    assert_eq!(read.len(), batches.len());
    let mut flat = Vec::new();
    for (batch, high) in read.iter().zip(&highs) {
        assert_eq!((batch.seq, batch.end), (high.seq, high.end));
        assert!(!batch.is_empty());
        flat.extend(batch.entries().map(|e| LogEntry {
            seq: batch.seq,
            pos: e.pos,
            kind: e.kind,
            payload: e.payload.to_vec(),
            batch_end: batch.end,
        }));
    }
    assert_eq!(flat, entries);
    // From a batch boundary: the rest.
    let rest: Vec<u64> = reader
        .batches_from(highs[4].end)
        .map(|b| b.expect("batch").seq)
        .collect();
    assert_eq!(rest, (6..=batches.len() as u64).collect::<Vec<_>>());
}

/// Bytes of `file` in the page cache, as util-linux `fincore` counts them; `None` (saying
/// why) where it cannot run.
fn resident_bytes(file: &Path) -> Option<u64> {
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(file)
        .output();
    match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().parse().ok(),
        Ok(out) => {
            eprintln!(
                "skipped: fincore failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            None
        }
        Err(e) => {
            eprintln!("skipped: util-linux fincore cannot run here: {e}");
            None
        }
    }
}

/// Under `Sync`, the synced bytes behind the cached tail leave the page cache (as the
/// kernel itself reports) and every entry still reads back; with no tail set, what was
/// written stays cached.
#[test]
fn synced_bytes_behind_the_cached_tail_leave_the_page_cache() {
    let tail = 1u64 << 20;
    let batches: Vec<Batch> = (0..64u64)
        .map(|b| (0..16).map(|i| (1, payload(b * 16 + i, 8 << 10))).collect())
        .collect();
    for cached_tail in [Some(tail), None] {
        let dir = tempfile::tempdir().unwrap();
        let o = LogOptions {
            cached_tail,
            ..opts(64 << 20)
        };
        let (mut log, _) = open(dir.path(), &o);
        for batch in &batches {
            append(&mut log, batch);
        }
        let written = log.high_water().end.offset;
        assert!(written > 8 * tail, "{written}");
        assert_eq!(log.cached_tail_bytes(), cached_tail.unwrap_or(0));
        if let Some(resident) = resident_bytes(&seg_path(dir.path(), 0)) {
            match cached_tail {
                // The tail, and the partial pages left at the ends of what was dropped.
                Some(tail) => assert!(resident <= tail + (128 << 10), "{resident} of {written}"),
                None => assert!(resident + (64 << 10) >= written, "{resident} of {written}"),
            }
        }
        check_contents(&log, &batches);
    }
}

#[test]
fn bytes_between_counts_the_frames_of_each_segment_the_stretch_crosses() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = open(tmp.path(), &opts(4096));
    let start = log.high_water().end;
    // Each batch's bytes on disk, and the high-water mark after it.
    let mut marks = vec![start];
    for tag in 0..12u64 {
        append(
            &mut log,
            &vec![(1, payload(tag, 700)), (2, payload(tag + 100, 300))],
        );
        marks.push(log.high_water().end);
    }
    assert!(
        log.high_water().end.segment >= 2,
        "the batches span segments"
    );
    let reader = log.reader();
    // The frames' bytes, counted from the files: each segment's length less its header.
    let frames: u64 = (0..=log.high_water().end.segment)
        .map(|n| fs::metadata(seg_path(tmp.path(), n)).unwrap().len() - FILE_HEADER_LEN)
        .sum();
    assert_eq!(reader.bytes_between(start, log.high_water().end), frames);
    assert_eq!(
        reader.bytes_between(LogPos::new(0, 0), log.high_water().end),
        frames
    );
    // Any two marks: the sum of the batches between them, whichever segments they are in.
    for (i, &from) in marks.iter().enumerate() {
        for &to in &marks[i..] {
            let steps: u64 = marks
                .windows(2)
                .skip_while(|w| w[0] != from)
                .take_while(|w| w[0] != to)
                .map(|w| reader.bytes_between(w[0], w[1]))
                .sum();
            assert_eq!(reader.bytes_between(from, to), steps, "{from:?} .. {to:?}");
        }
    }
    // Backwards is nothing.
    assert_eq!(reader.bytes_between(log.high_water().end, start), 0);
}

/// A frame damaged after it was written is found by the read of its run: the entries
/// before it are handed out, and the error names the damaged frame's file and offset.
#[test]
fn a_damaged_frame_inside_a_run_is_corrupt_at_its_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &LogOptions::default());
    let batch: Batch = (0..20u64).map(|i| (1, payload(i, 200))).collect();
    let positions = append(&mut log, &batch);
    let damaged = positions[9];
    flip(&seg_path(dir.path(), 0), damaged.offset + 100);
    let mut handed = 0;
    let err = log
        .reader()
        .read_each(
            &positions,
            &mut Vec::new(),
            |e| e,
            |_, _| {
                handed += 1;
                Ok(())
            },
        )
        .expect_err("the damaged frame");
    assert_eq!(handed, 9);
    assert_eq!(corrupt_at(err), (seg_path(dir.path(), 0), damaged.offset));
}
