//! `Ledger::append_log`: one call ingests a JSON Lines or CBOR log in batches cut by count
//! and bytes, reporting every item's outcome and position; junk (over-long lines too) is an
//! outcome, not a failure.

use akledger::ledger::LogReport;
use akledger::limits::{LOG_BATCH_BYTES, LOG_BATCH_EVENTS, MAX_EVENT_BYTES};
use akledger::log_format::{write_item, LogFormat};
use akledger::{Appended, Code, Config, Durability, Error, Event, Ledger, Unverified};

fn open(dir: &std::path::Path) -> Ledger {
    Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).unwrap()
}

/// A realm and `n` notes in it of about `size` bytes each.
/// A realm and `n` notes of about `size` bytes each.
fn events(n: usize, size: usize) -> Vec<Event<Unverified>> {
    akledger_testkit::notes(n, size)
}

fn log_of(events: &[Event<Unverified>], format: LogFormat) -> Vec<u8> {
    let mut log = Vec::new();
    for e in events {
        write_item(&mut log, format, e.bytes()).unwrap();
    }
    log
}

fn code(outcome: &Appended) -> Option<Code> {
    match outcome {
        Appended::Rejected { rejection, .. } => Some(rejection.code()),
        _ => None,
    }
}

#[test]
fn large_events_import_in_batches_cut_by_bytes() {
    let events = events(40, 900_000);
    let log = log_of(&events, LogFormat::JsonLines);
    let total: usize = events.iter().map(|e| e.bytes().len()).sum();
    assert!(events.len() < LOG_BATCH_EVENTS, "so only bytes can cut");
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let LogReport {
        summary, outcomes, ..
    } = ledger.append_log(&log[..]).unwrap();
    assert_eq!(summary.format, LogFormat::JsonLines);
    assert_eq!(summary.admitted, events.len());
    assert_eq!(summary.rejected, 0);
    assert_eq!(summary.batches, total.div_ceil(LOG_BATCH_BYTES));
    assert!(summary.batches > 1);
    assert_eq!(ledger.len(), events.len());
    // Positions: line n+1 starts where the n first lines end.
    let mut byte = 0u64;
    for (i, (o, e)) in outcomes.iter().zip(&events).enumerate() {
        assert_eq!(o.position.index, i);
        assert_eq!(o.position.line, Some(i + 1));
        assert_eq!(o.position.byte, byte);
        assert_eq!(o.outcome, Appended::Admitted(e.id()));
        byte += e.bytes().len() as u64 + 1;
    }
}

#[test]
fn over_long_and_junk_lines_are_outcomes_not_failures() {
    let events = events(3, 100);
    let mut log = Vec::new();
    write_item(&mut log, LogFormat::JsonLines, events[0].bytes()).unwrap();
    let junk_at = log.len() as u64;
    log.extend(std::iter::repeat_n(b'{', MAX_EVENT_BYTES + 300_000));
    log.push(b'\n');
    let short_junk_at = log.len() as u64;
    log.extend_from_slice(b"{\"hello\":1}\n");
    let after = log.len() as u64;
    for e in &events[1..] {
        write_item(&mut log, LogFormat::JsonLines, e.bytes()).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let report = ledger.append_log(&log[..]).unwrap();
    let got: Vec<(Option<usize>, u64, Option<Code>)> = report
        .outcomes
        .iter()
        .map(|o| (o.position.line, o.position.byte, code(&o.outcome)))
        .collect();
    assert_eq!(
        got[..4],
        [
            (Some(1), 0, None),
            (Some(2), junk_at, Some(Code::PayloadTooLarge)),
            (Some(3), short_junk_at, Some(Code::SchemaViolation)),
            (Some(4), after, None),
        ]
    );
    assert_eq!(report.summary.items, 2 + events.len());
    assert_eq!(report.summary.admitted, events.len());
    assert_eq!(report.summary.rejected, 2);
    assert_eq!(ledger.len(), events.len());
}

#[test]
fn cbor_is_detected_and_pending_events_are_released() {
    let events = events(4, 10); // a realm and 4 notes
                                // Notes first: pending on their realm, released when it arrives last.
    let mut order: Vec<Event<Unverified>> = events[1..].to_vec();
    order.push(events[0].clone());
    let log = log_of(&order, LogFormat::CborSeq);
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let report = ledger.append_log(&log[..]).unwrap();
    let s = &report.summary;
    assert_eq!(s.format, LogFormat::CborSeq);
    assert_eq!((s.pending, s.admitted, s.batches), (4, 1, 1));
    assert_eq!(s.released.len(), 4);
    assert!(report.outcomes.iter().all(|o| o.position.line.is_none()));
    assert_eq!(ledger.len(), 5);
    // Sent again: duplicates.
    let again = ledger.append_log(&log[..]).unwrap().summary;
    assert_eq!(again.duplicates, 5);
}

#[test]
fn a_log_of_neither_format_is_refused_and_a_callback_can_stop_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    match ledger.append_log(&b"\x01junk"[..]) {
        Err(Error::Rejected(r)) => assert_eq!(r.code(), Code::SchemaViolation),
        other => panic!("{other:?}"),
    }
    let log = log_of(&events(2, 10), LogFormat::JsonLines);
    let mut seen = 0;
    let stopped = ledger.append_log_with(&log[..], |_| {
        seen += 1;
        Err(Error::Misuse("enough".into()))
    });
    assert!(matches!(stopped, Err(Error::Misuse(m)) if m == "enough"));
    assert_eq!(seen, 1);
}

#[test]
fn batches_are_delivered_in_order_and_a_stop_keeps_only_whole_committed_batches() {
    // Six batches: more than the pipeline keeps verifying ahead on disk, so the stop below
    // falls while later batches are still being verified.
    let events = events(5 * LOG_BATCH_EVENTS + 500, 10);
    let log = log_of(&events, LogFormat::JsonLines);
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let LogReport {
        summary, outcomes, ..
    } = ledger.append_log(&log[..]).unwrap();
    assert_eq!(summary.batches, 6);
    let ids: Vec<Appended> = events.iter().map(|e| Appended::Admitted(e.id())).collect();
    let got: Vec<Appended> = outcomes.into_iter().map(|o| o.outcome).collect();
    assert_eq!(got, ids);

    // Stopping inside the second batch's outcomes: that batch is committed (outcomes are
    // handed over only once their batch is), the batches still being verified are not.
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let mut seen = 0;
    let stopped = ledger.append_log_with(&log[..], |item| {
        seen += 1;
        assert_eq!(item.position.index, seen - 1, "in log order");
        match item.position.index {
            1500 => Err(Error::Misuse("stop".into())),
            _ => Ok(()),
        }
    });
    assert!(matches!(stopped, Err(Error::Misuse(_))));
    assert_eq!(ledger.len(), 2 * LOG_BATCH_EVENTS);
    drop(ledger);
    assert_eq!(open(dir.path()).len(), 2 * LOG_BATCH_EVENTS);

    // Every item is handed over with its own bytes, though each batch's buffer is used
    // again for a later batch once delivered.
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let mut checked = 0;
    ledger
        .append_log_with(&log[..], |item| {
            assert_eq!(item.bytes, events[item.position.index].bytes());
            checked += 1;
            Ok::<(), Error>(())
        })
        .unwrap();
    assert_eq!(checked, events.len());
}
