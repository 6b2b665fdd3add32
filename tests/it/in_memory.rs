//! The in-memory ledger (`Config::in_memory`), what `akledger audit` replays into: the same
//! answers as a ledger on disk for the same arrivals (the on-disk one is the oracle), log
//! segments rotating in memory, and the uses that need a directory refused.

use akledger::workload::realm_dag;
use akledger::{Appended, Config, Durability, Error, EventId, Ledger};

/// Appends `events` in batches of `batch`, and returns every outcome.
fn feed(ledger: &Ledger, events: &[&[u8]], batch: usize) -> Vec<Appended> {
    events
        .chunks(batch)
        .flat_map(|chunk| ledger.append_batch(chunk).unwrap())
        .collect()
}

fn snapshot_of(ledger: &Ledger) -> (Vec<EventId>, Vec<EventId>, usize, Vec<Vec<u8>>) {
    let events: Vec<Vec<u8>> = ledger.iter().map(|e| e.unwrap().bytes().to_vec()).collect();
    let pending = ledger.pending_causes().into_iter().map(|p| p.id).collect();
    (ledger.heads(), pending, ledger.len(), events)
}

#[test]
fn in_memory_answers_as_on_disk_for_the_same_arrivals() {
    let events = realm_dag(7, 600, 4, 16).unwrap();
    // Children first for a third of them: they wait, pending, and are released later.
    let mut order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    order[1..200].reverse();
    // The last event never arrives, so whatever depends on it stays pending.
    order.retain(|b| *b != events[599].bytes());
    order.push(events[3].bytes()); // a duplicate

    let tmp = tempfile::tempdir().unwrap();
    let disk = Ledger::open_with(Config::new(tmp.path()).durability(Durability::Buffered)).unwrap();
    // Tiny segments: the in-memory log rotates many times.
    let memory = Ledger::open_with(Config::in_memory().segment_size(16 << 10)).unwrap();
    assert!(memory.config().is_in_memory());

    let on_disk = feed(&disk, &order, 64);
    let in_memory = feed(&memory, &order, 64);
    assert_eq!(format!("{in_memory:?}"), format!("{on_disk:?}"));
    assert!(in_memory
        .iter()
        .any(|o| matches!(o, Appended::Pending { .. })));
    assert_eq!(snapshot_of(&memory), snapshot_of(&disk));
    for event in &events[..599] {
        let got = memory.get(&event.id()).unwrap().expect("admitted");
        assert_eq!(got.bytes(), event.bytes());
    }
    assert!(memory.check().unwrap().is_clean());
}

#[test]
fn an_in_memory_ledger_cannot_be_read_only() {
    let refused = Ledger::open_with(Config::in_memory().read_only(true));
    assert!(matches!(refused, Err(Error::Misuse(_))), "{refused:?}");
}

/// Writes `events` as a log file of `format`; returns the file.
fn log_file(events: &[&[u8]], format: akledger::log_format::LogFormat) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for bytes in events {
        akledger::log_format::write_item(&mut file, format, bytes).unwrap();
    }
    file
}

/// A log file replayed into an in-memory ledger (what `akledger audit` does) leaves the
/// events in the file: the ledger holds their frames' headers, not their bytes, and every
/// event still reads back whole, pending ones released from the file included. The same
/// log read as a stream is held whole, and both ledgers answer alike.
#[test]
fn a_log_file_replayed_in_memory_stays_in_the_file() {
    use akledger::internals::log_bytes_in_memory;
    use akledger::log_format::LogFormat;
    let events = realm_dag(9, 1_500, 4, 16).unwrap();
    let mut order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    order[1..300].reverse(); // children first: pending, then released
    order.push(events[10].bytes()); // a duplicate
    order.push(b"{\"not\":\"an event\"}"); // rejected
    for format in [LogFormat::JsonLines, LogFormat::CborSeq] {
        let file = log_file(&order, format);
        let size = std::fs::metadata(file.path()).unwrap().len();
        let lifted = Ledger::open_with(Config::in_memory().segment_size(64 << 10)).unwrap();
        let opened = std::fs::File::open(file.path()).unwrap();
        let mut outcomes = Vec::new();
        let summary = lifted
            .append_log_file_with(opened, |item| {
                outcomes.push(format!("{:?}", item.outcome));
                Ok::<(), Error>(())
            })
            .unwrap();
        assert_eq!(summary.rejected, 1, "{format:?}");
        assert!(
            summary.pending > 0 && !summary.released.is_empty(),
            "{format:?}"
        );
        assert_eq!(lifted.len(), events.len());
        let held = Ledger::open_with(Config::in_memory().segment_size(64 << 10)).unwrap();
        let streamed = held
            .append_log(std::io::BufReader::new(
                std::fs::File::open(file.path()).unwrap(),
            ))
            .unwrap();
        let streamed: Vec<String> = streamed
            .outcomes
            .iter()
            .map(|o| format!("{:?}", o.outcome))
            .collect();
        assert_eq!(outcomes, streamed, "{format:?}");
        assert_eq!(snapshot_of(&lifted), snapshot_of(&held), "{format:?}");
        for event in &events {
            let got = lifted.get(&event.id()).unwrap().expect("admitted");
            assert_eq!(got.bytes(), event.bytes());
        }
        assert!(lifted.check().unwrap().is_clean());
        // ~1 KB events: the frames around them are a few dozen bytes each.
        let (kept, whole) = (log_bytes_in_memory(&lifted), log_bytes_in_memory(&held));
        assert!(whole > size * 9 / 10, "{format:?}: {whole} of {size}");
        assert!(kept < size / 10, "{format:?}: {kept} of {size} held");
    }
}

/// Payloads whose bytes at the offset given do not match are held, never referred to: the
/// log reads back what was appended.
#[test]
fn a_payload_whose_offset_is_wrong_stays_in_memory() {
    use akledger::store::log::{LogOptions, ReadFrom, SegmentLog};
    use std::sync::Arc;
    let payloads: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 100 + usize::from(i)]).collect();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let mut offsets = Vec::new();
    let mut at = 0u64;
    for p in &payloads {
        std::io::Write::write_all(&mut file, p).unwrap();
        offsets.push(Some(at));
        at += p.len() as u64;
    }
    // Every third offset one byte off; one past the end of the file.
    for (i, o) in offsets.iter_mut().enumerate() {
        if i % 3 == 0 {
            *o = o.map(|o| o + 1);
        }
    }
    offsets[39] = Some(at + 10);
    let source = Arc::new(std::fs::File::open(file.path()).unwrap());
    let mut log = SegmentLog::in_memory(LogOptions::default()).unwrap();
    let entries: Vec<(u8, &[u8])> = payloads.iter().map(|p| (7, p.as_slice())).collect();
    let at = log
        .append_batch_from(
            &entries,
            Some(ReadFrom {
                source: &source,
                offsets: &offsets,
                hashes: None,
            }),
            |_| (),
        )
        .unwrap()
        .0;
    let reader = log.reader();
    for (pos, p) in at.iter().zip(&payloads) {
        assert_eq!(reader.read(*pos).unwrap(), (7, p.clone()));
    }
    let read: Vec<Vec<u8>> = log.iter().map(|e| e.unwrap().payload).collect();
    assert_eq!(read, payloads);
    // Held: the 14 mismatched payloads and the frames; the other 26 stay in the file.
    let mismatched: u64 = payloads
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0 || *i == 39)
        .map(|(_, p)| p.len() as u64)
        .sum();
    let held = reader.bytes_in_memory();
    assert!(
        held >= mismatched && held < mismatched + 2_000,
        "{held} vs {mismatched}"
    );
}

/// Writes `events` as a JSON Lines file after `prefix`; returns the file and where each
/// event's line starts.
fn log_file_after(prefix: &[u8], events: &[&[u8]]) -> (tempfile::NamedTempFile, Vec<usize>) {
    let mut bytes = prefix.to_vec();
    let mut starts = Vec::new();
    for event in events {
        starts.push(bytes.len());
        bytes.extend_from_slice(event);
        bytes.push(b'\n');
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    (file, starts)
}

/// A log file replayed from where the file stands, not from its start, is left in the file
/// all the same: offsets count from there, and every event reads back whole.
#[test]
fn a_log_file_replayed_from_its_current_position_stays_in_the_file() {
    use akledger::internals::log_bytes_in_memory;
    use std::io::{Seek, SeekFrom};
    let events = realm_dag(13, 300, 4, 16).unwrap();
    let order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let prefix = b"{\"not\":\"the log\"}\n".repeat(20);
    let (file, _) = log_file_after(&prefix, &order);
    let mut opened = std::fs::File::open(file.path()).unwrap();
    opened.seek(SeekFrom::Start(prefix.len() as u64)).unwrap();
    let ledger = Ledger::open_with(Config::in_memory()).unwrap();
    let summary = ledger
        .append_log_file_with(opened, |_| Ok::<(), Error>(()))
        .unwrap();
    assert_eq!(
        (summary.items, summary.admitted),
        (events.len(), events.len())
    );
    for event in &events {
        let got = ledger.get(&event.id()).unwrap().expect("admitted");
        assert_eq!(got.bytes(), event.bytes());
    }
    let size = std::fs::metadata(file.path()).unwrap().len();
    let kept = log_bytes_in_memory(&ledger);
    assert!(kept < size / 10, "{kept} of {size} held");
}

/// A log file that changes after it was replayed in memory is an error where its changed
/// bytes are read, never bytes other than those verified and admitted; what did not change
/// still reads.
#[test]
fn a_log_file_changed_after_its_replay_is_an_error_where_it_changed() {
    let events = realm_dag(11, 50, 4, 16).unwrap();
    let order: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let (file, starts) = log_file_after(b"", &order);
    let ledger = Ledger::open_with(Config::in_memory()).unwrap();
    ledger
        .append_log_file_with(std::fs::File::open(file.path()).unwrap(), |_| {
            Ok::<(), Error>(())
        })
        .unwrap();
    assert_eq!(ledger.len(), events.len());
    // One character of the eighth event's signature, changed in place: the line still
    // parses, so only the check of the bytes read can tell.
    let mut bytes = std::fs::read(file.path()).unwrap();
    let line = &bytes[starts[7]..starts[8]];
    let jws = line
        .windows(5)
        .position(|w| w == b"In0..")
        .expect("a detached JWS");
    let at = starts[7] + jws + 5;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::write(file.path(), &bytes).unwrap();
    let changed = ledger.get(&events[7].id());
    let message = format!("{changed:?}");
    assert!(changed.is_err(), "{message}");
    assert!(message.contains("changed"), "{message}");
    let unchanged = ledger.get(&events[6].id()).unwrap().expect("admitted");
    assert_eq!(unchanged.bytes(), events[6].bytes());
}
