//! `Ledger::pipeline` (and `pipeline_ahead`): batches verified on the pool while earlier
//! ones commit give the outcomes and the state `append_batch` gives, commit in push order,
//! are never seen half done, and a batch not yet committed is not in the ledger.

use akledger_testkit as common;

use std::path::Path;
use std::sync::Arc;

use akledger::workload::{realm_dag, SplitMix};
use akledger::{Appended, Config, Durability, Event, EventId, Fault, Ledger, Unverified};

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(
        Config::new(dir)
            .durability(Durability::Buffered)
            .verify_threads(2),
    )
    .unwrap()
}

fn shared(events: &[Vec<u8>]) -> Vec<Arc<[u8]>> {
    events.iter().map(|b| Arc::from(b.as_slice())).collect()
}

fn admitted(ledger: &Ledger) -> Vec<EventId> {
    ledger.iter().map(|e| e.unwrap().id()).collect()
}

/// A shuffled DAG with duplicates, a conflicting duplicate and a forged signature mixed in,
/// so batches hold admissions, pendings released by later batches, duplicates and rejections.
fn messy_stream(seed: u64) -> Vec<Vec<u8>> {
    let events: Vec<Event<Unverified>> = realm_dag(seed, 400, 6, 24).unwrap();
    let mut bytes: Vec<Vec<u8>> = events.iter().map(|e| e.bytes().to_vec()).collect();
    let mut rng = SplitMix::new(seed);
    for i in (1..bytes.len()).rev() {
        let j = rng.below(i + 1);
        bytes.swap(i, j);
    }
    for n in (0..bytes.len()).step_by(41).collect::<Vec<_>>() {
        bytes.push(bytes[n].clone());
    }
    // A character in the middle of the signature (after the JWS's `..`) changes.
    let mut forged = events[17].bytes().to_vec();
    let at = forged.windows(2).position(|w| w == b"..").unwrap() + 20;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    bytes.insert(150, forged);
    bytes
}

#[test]
fn a_pipeline_gives_append_batch_outcomes_and_state() {
    for (seed, batch) in [(1u64, 64usize), (2, 1), (3, 333)] {
        let stream = messy_stream(seed);
        let serial_dir = tempfile::tempdir().unwrap();
        let serial = open(serial_dir.path());
        let mut expected: Vec<Appended> = Vec::new();
        for chunk in stream.chunks(batch) {
            expected.extend(serial.append_batch(chunk).unwrap());
        }
        // `pipeline_ahead(2)` (what `append_log` uses) too: outcomes come `ahead` pushes
        // late, and `finish_all` gives the rest.
        let dir = tempfile::tempdir().unwrap();
        let deeper = open(dir.path());
        let mut pipeline = deeper.pipeline_ahead(2);
        let mut got: Vec<Appended> = Vec::new();
        for (k, chunk) in stream.chunks(batch).enumerate() {
            match pipeline.push(shared(chunk)).unwrap() {
                Some(outcomes) => got.extend(outcomes),
                None => assert!(k < 2, "push {k} returns the outcomes of push {}", k - 2),
            }
        }
        let rest = pipeline.finish_all().unwrap();
        assert_eq!(rest.len(), 2.min(stream.len().div_ceil(batch)));
        got.extend(rest.into_iter().flat_map(|report| report.outcomes));
        assert_eq!(got, expected, "seed {seed}, batch {batch}, two ahead");
        assert_eq!(admitted(&deeper), admitted(&serial));
        assert!(deeper.check().unwrap().is_clean());

        // Batches pushed as spans of one buffer each (`push_spans`), three ahead.
        let dir = tempfile::tempdir().unwrap();
        let spanned = open(dir.path());
        let mut pipeline = spanned.pipeline_ahead(3);
        let mut got: Vec<Appended> = Vec::new();
        for chunk in stream.chunks(batch) {
            let (buffer, spans) = common::one_buffer(chunk, b"\n");
            let report = pipeline.push_spans(Arc::new(buffer), spans).unwrap();
            got.extend(report.into_iter().flat_map(|r| r.outcomes));
        }
        got.extend(
            pipeline
                .finish_all()
                .unwrap()
                .into_iter()
                .flat_map(|r| r.outcomes),
        );
        assert_eq!(got, expected, "seed {seed}, batch {batch}, spans");
        assert_eq!(admitted(&spanned), admitted(&serial));

        let dir = tempfile::tempdir().unwrap();
        let ledger = open(dir.path());
        let mut pipeline = ledger.pipeline();
        let mut got: Vec<Appended> = Vec::new();
        for chunk in stream.chunks(batch) {
            got.extend(pipeline.push(shared(chunk)).unwrap().unwrap_or_default());
        }
        got.extend(pipeline.finish().unwrap().unwrap_or_default());
        assert_eq!(got, expected, "seed {seed}, batch {batch}");
        assert!(got.iter().any(|o| matches!(o, Appended::Pending { .. })));
        assert!(got.iter().any(|o| matches!(o, Appended::Duplicate(_))));
        assert!(got
            .iter()
            .any(|o| o.code() == Some(akledger::Code::SignatureInvalid)));
        assert_eq!(admitted(&ledger), admitted(&serial));
        assert_eq!(ledger.heads(), serial.heads());
        assert_eq!(ledger.pending(), serial.pending());
        assert!(ledger.check().unwrap().is_clean());
        drop(ledger);
        assert_eq!(admitted(&open(dir.path())), admitted(&serial));
    }
}

#[test]
fn the_last_pushed_batch_commits_only_on_finish() {
    let events = realm_dag(4, 20, 2, 8).unwrap();
    let bytes: Vec<Vec<u8>> = events.iter().map(|e| e.bytes().to_vec()).collect();
    let dir = tempfile::tempdir().unwrap();
    {
        let ledger = open(dir.path());
        let mut pipeline = ledger.pipeline();
        assert_eq!(pipeline.push(shared(&bytes[..10])).unwrap(), None);
        assert_eq!(ledger.len(), 0, "verifying is not committing");
        let first = pipeline.push(shared(&bytes[10..])).unwrap().unwrap();
        assert_eq!(first.len(), 10);
        assert_eq!(ledger.len(), 10);
        drop(pipeline);
        assert_eq!(
            ledger.len(),
            10,
            "a dropped pipeline's last batch is not committed"
        );
    }
    let ledger = open(dir.path());
    assert_eq!(ledger.len(), 10);
    let mut pipeline = ledger.pipeline();
    assert_eq!(pipeline.push(shared(&bytes[10..])).unwrap(), None);
    let last = pipeline.finish().unwrap().unwrap();
    assert!(last.iter().all(|o| matches!(o, Appended::Admitted(_))));
    assert_eq!(ledger.len(), events.len());
}

#[test]
fn an_oversized_push_is_misuse_and_the_previous_batch_still_commits() {
    let events = realm_dag(6, 5, 1, 8).unwrap();
    let bytes: Vec<Vec<u8>> = events.iter().map(|e| e.bytes().to_vec()).collect();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let mut pipeline = ledger.pipeline();
    pipeline.push(shared(&bytes)).unwrap();
    let big: Arc<[u8]> = vec![b'x'; 1 << 20].into();
    let err = pipeline.push(vec![big; 200]).unwrap_err();
    assert_eq!(err.fault(), Fault::CallerMisuse, "{err}");
    assert_eq!(pipeline.finish().unwrap().unwrap().len(), bytes.len());
    assert_eq!(ledger.len(), bytes.len());
}

#[test]
fn readers_never_see_part_of_a_pipelined_batch() {
    const BATCH: usize = 50;
    let events = realm_dag(10, 40 * BATCH, 4, 8).unwrap();
    let bytes: Vec<Vec<u8>> = events.iter().map(|e| e.bytes().to_vec()).collect();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(&bytes[0]).unwrap();
    common::assert_readers_see_whole_batches(&ledger, BATCH, || {
        let mut pipeline = ledger.pipeline();
        for chunk in bytes[1..].chunks(BATCH) {
            pipeline.push(shared(chunk)).unwrap();
        }
        pipeline.finish().unwrap();
    });
    assert_eq!(ledger.len(), events.len());
}
