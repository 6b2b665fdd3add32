//! Replays every fuzz corpus and regression file through the same check the fuzz target
//! runs (`tests/it/fuzz_checks/`), on stable, so CI guards the corpora without cargo-fuzz.
//! The runtime's target (`stub_envelope`) is replayed by the runtime's tests.
//!
//! Layout: `fuzz/corpus/<target>/*` (seed corpora) and `tests/fuzz-regressions/<target>/*`
//! (inputs that once found a bug). See `fuzz/README.md`.

use crate::fuzz_checks;

/// Replays `target`'s corpus through its check.
fn replay(target: &str) -> usize {
    let check = fuzz_checks::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, f)| *f)
        .expect("known target");
    akledger_testkit::replay_corpus(target, check)
}

macro_rules! replay_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            let n = replay(stringify!($name));
            assert!(n > 0, "no corpus for {}", stringify!($name));
        }
    )*};
}

replay_tests!(
    canonical,
    event,
    event_mutation,
    log_reader,
    segment_recovery,
    admission_model,
    fold
);

#[test]
fn every_target_has_a_replay_test() {
    let names: Vec<&str> = fuzz_checks::TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "canonical",
            "event",
            "event_mutation",
            "log_reader",
            "segment_recovery",
            "admission_model",
            "fold"
        ]
    );
}

/// Regenerates the seed corpora under `fuzz/corpus/` (run by hand:
/// `cargo test -p akledger --test it -- --ignored write_seed_corpus`).
#[test]
#[ignore]
fn write_seed_corpus() {
    use akledger::log_format::{write_item, LogFormat};
    use akledger::store::log::{LogOptions, SegmentLog};
    use fuzz_checks::fixtures::valid_events;

    let root = akledger_testkit::workspace_root().join("fuzz/corpus");
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("corpus dir");
        std::fs::write(dir.join(name), bytes).expect("write seed");
    };
    let events: Vec<Vec<u8>> = valid_events()
        .iter()
        .map(|(e, _)| e.bytes().to_vec())
        .collect();

    for (i, e) in events.iter().enumerate() {
        put("canonical", &format!("event-{i}.json"), e);
        put("event", &format!("valid-{i}.json"), e);
    }
    for (name, text) in [
        ("empty-object", "{}"),
        (
            "escapes",
            "{\"a\":\"\\u0001\\n\\\"\\\\\",\"b\":[1,-2,9007199254740991]}",
        ),
        ("non-canonical", "{ \"b\": 1, \"a\": 1.5e3 }"),
        ("duplicate-key", "{\"a\":1,\"a\":2}"),
        ("deep", &format!("{}{}", "[".repeat(65), "]".repeat(65))),
        ("escaped-bom", "[\"\\ufeff\"]"),
        ("lone-surrogate", "[\"\\ud800\"]"),
    ] {
        put("canonical", name, text.as_bytes());
    }

    for pick in 0..events.len() as u8 {
        // Pick an event, then a few mutations (the bytes decode as `Mutation`s).
        put(
            "event_mutation",
            &format!("pick-{pick}"),
            &[pick, 0, 0, 0, 0, 40, 1],
        );
        put(
            "event_mutation",
            &format!("pick-{pick}-structural"),
            &[
                pick, 0x90, 0x90, 0x90, 0x90, 3, 5, 0xf0, 0xf0, 0xf0, 0xf0, 1,
            ],
        );
    }

    for format in [LogFormat::JsonLines, LogFormat::CborSeq] {
        let mut log = Vec::new();
        for e in &events {
            write_item(&mut log, format, e).expect("write");
        }
        put("log_reader", &format!("{format:?}.log"), &log);
        log.truncate(log.len() - 7);
        put("log_reader", &format!("{format:?}-truncated.log"), &log);
    }

    // Real segment files written by the engine: one segment, and two joined by the separator.
    for (name, segment_size) in [("one-segment", 1 << 20), ("two-segments", 900)] {
        let tmp = tempfile::tempdir().expect("tmp");
        let opts = LogOptions {
            segment_size,
            durability: akledger::Durability::Buffered,
            ..LogOptions::default()
        };
        let (mut log, _) = SegmentLog::open(tmp.path(), opts).expect("open");
        for e in events.iter().take(3) {
            log.append_batch(&[(1, e.as_slice()), (2, b"x".as_slice())])
                .expect("append");
        }
        drop(log);
        let mut joined = Vec::new();
        for n in 0..2 {
            let path = tmp.path().join(akledger::store::log::segment_file_name(n));
            if let Ok(bytes) = std::fs::read(path) {
                if n > 0 {
                    joined.extend_from_slice(fuzz_checks::segment_recovery::SEPARATOR);
                }
                joined.extend_from_slice(&bytes);
            }
        }
        put("segment_recovery", &format!("{name}.seg"), &joined);
        put(
            "segment_recovery",
            &format!("{name}-torn.seg"),
            &joined[..joined.len() - 5],
        );
    }

    // admission_model: an all-zero tag is `Append`, 0x80 is `Reopen`, 0xc0 `CrashReopen`.
    let mut in_order = Vec::new();
    let mut reversed = Vec::new();
    let mut crashes = Vec::new();
    for i in 0..24u8 {
        in_order.extend_from_slice(&[0, 0, 0, 0, i]);
        reversed.extend_from_slice(&[0, 0, 0, 0, 29 - i]);
        if i % 4 == 3 {
            crashes.extend_from_slice(&[0xc0, 0xc0, 0xc0, 0xc0, i, 0]);
        } else {
            crashes.extend_from_slice(&[0, 0, 0, 0, i * 7 % 30]);
        }
    }
    put("admission_model", "in-order", &in_order);
    put("admission_model", "reversed", &reversed);
    put("admission_model", "crashes", &crashes);

    // fold: pseudo-random bytes decode into arbitrary plaintext specs.
    let mut rng = akledger::workload::SplitMix::new(7);
    for n in 0..6 {
        let len = 256 << (n % 3);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        put("fold", &format!("random-{n}"), &bytes);
        put("admission_model", &format!("random-{n}"), &bytes[..200]);
    }
}
