//! The stub connection on real files: records written in pieces and back to back, the
//! input followed by identity (rotated, replaced while stopped, truncated, rewritten), the
//! writer's lock honoured, and the output written as AEA's reader takes it (one record at a
//! time, each once the file was emptied) or appended.

use crate::support::append;
use std::io::Write;

use akledger::prelude::*;
use akledger_runtime::limits::{MAX_INBOX_BATCH, SIGN_AHEAD_RUN};
use akledger_runtime::skills::Skill;
use akledger_runtime::stub_format::encode_record;
use akledger_runtime::{
    bootstrap, Connection, DefaultMessage, EchoHandler, Envelope, InputCursor, OutputMode,
    Performative, ProtocolId, Runtime, Stage, StubConnection,
};
use fs2::FileExt;

fn envelope(n: u8) -> Envelope {
    let protocol = ProtocolId::parse("fetchai/default:1.0.0").unwrap();
    Envelope::new("to", "from", protocol, vec![n, b',', b'\n', n])
}

fn received(stub: &mut StubConnection) -> Vec<Envelope> {
    stub.receive()
        .unwrap()
        .into_iter()
        .map(|r| r.envelope)
        .collect()
}

#[test]
fn records_written_in_pieces_arrive_whole_and_once() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let mut stub = StubConnection::open(&input, &output).unwrap();
    assert!(stub.receive().unwrap().is_empty());
    let one = encode_record(&envelope(1));
    let (head, tail) = one.split_at(9);
    append(&input, head);
    assert!(stub.receive().unwrap().is_empty(), "half a record waits");
    append(&input, tail);
    let got = stub.receive().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].envelope, envelope(1));
    assert_eq!((got[0].start, got[0].end.offset), (0, one.len() as u64));
    let after_one = got[0].end;
    for n in 2..5 {
        append(&input, &encode_record(&envelope(n)));
    }
    assert_eq!(
        received(&mut stub),
        (2..5).map(envelope).collect::<Vec<_>>()
    );
    assert!(stub.receive().unwrap().is_empty());
    assert_eq!(
        stub.input_cursor().offset,
        std::fs::metadata(&input).unwrap().len()
    );
    // Resuming at the second record's start reads it and the rest again.
    stub.resume_at(&after_one).unwrap();
    assert_eq!(stub.receive().unwrap().len(), 3);
}

#[test]
fn the_input_is_followed_by_identity() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let mut stub = StubConnection::open(&input, &output).unwrap();
    append(&input, &encode_record(&envelope(1)));
    assert_eq!(received(&mut stub), [envelope(1)]);

    // Truncated (an agent reopening its output with "wb+") and written again, past the
    // old position: read from its start.
    let two = [encode_record(&envelope(2)), encode_record(&envelope(3))].concat();
    std::fs::write(&input, &two).unwrap();
    assert_eq!(received(&mut stub), [envelope(2), envelope(3)]);

    // Rotated the way logrotate does (renamed; a new file at the path): what the writer
    // added to the old file is read first, then the new file from its start.
    let old = dir.path().join("in.1");
    std::fs::rename(&input, &old).unwrap();
    append(&old, &encode_record(&envelope(4)));
    append(&input, &encode_record(&envelope(5)));
    assert_eq!(received(&mut stub), [envelope(4), envelope(5)]);
    let cursor = stub.input_cursor();

    // Replaced while stopped: a cursor into the file that was there is read from the start
    // of what is there now.
    drop(stub);
    std::fs::remove_file(&input).unwrap();
    append(
        &input,
        &[encode_record(&envelope(6)), encode_record(&envelope(7))].concat(),
    );
    let mut stub = StubConnection::open(&input, &output).unwrap();
    stub.resume_at(&cursor).unwrap();
    assert_eq!(received(&mut stub), [envelope(6), envelope(7)]);
    // The same file, unchanged: resumed where it was.
    let cursor = stub.input_cursor();
    let mut again = StubConnection::open(&input, &output).unwrap();
    again.resume_at(&cursor).unwrap();
    assert!(again.receive().unwrap().is_empty());
    append(&input, &encode_record(&envelope(8)));
    assert_eq!(received(&mut again), [envelope(8)]);
    // A cursor naming no file (a record written before files were identified) is trusted
    // while the file is long enough.
    let mut legacy = StubConnection::open(&input, &output).unwrap();
    legacy
        .resume_at(&InputCursor {
            offset: cursor.offset,
            file: None,
        })
        .unwrap();
    assert_eq!(received(&mut legacy), [envelope(8)]);
}

#[test]
fn a_writer_holding_the_lock_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let mut stub = StubConnection::open(&input, &output).unwrap();
    let writer = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    writer.lock_exclusive().unwrap();
    (&writer).write_all(&encode_record(&envelope(1))).unwrap();
    assert!(
        stub.receive().unwrap().is_empty(),
        "not read under the lock"
    );
    writer.unlock().unwrap();
    assert_eq!(received(&mut stub), [envelope(1)]);
}

#[test]
fn a_hand_off_writes_one_record_at_a_time_each_once_the_reader_took_it() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let mut stub = StubConnection::open(&input, &output).unwrap();
    assert_eq!(stub.output_mode(), OutputMode::Handoff);
    for n in 1..=3 {
        stub.send(&envelope(n), 10 + u64::from(n)).unwrap();
    }
    assert_eq!(stub.deliver().unwrap(), Some(11));
    assert_eq!(stub.deliver().unwrap(), None, "the reader has not taken it");
    assert_eq!(stub.queued(), 2);
    assert_eq!(std::fs::read(&output).unwrap(), encode_record(&envelope(1)));
    // After a restart the record in the file is the one in flight, not to be written
    // again; a torn start of it is cut.
    assert_eq!(stub.already_sent(0, &[envelope(1)]).unwrap(), 1);
    assert_eq!(stub.already_sent(0, &[envelope(2)]).unwrap(), 0);
    assert_eq!(
        std::fs::read(&output).unwrap(),
        encode_record(&envelope(1)),
        "left alone"
    );
    // The reader takes it (reads it whole under the lock and empties the file).
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&output)
        .unwrap();
    reader.lock_exclusive().unwrap();
    assert_eq!(
        stub.deliver().unwrap(),
        None,
        "not written under the reader's lock"
    );
    reader.set_len(0).unwrap();
    reader.unlock().unwrap();
    assert_eq!(stub.deliver().unwrap(), Some(12));
    assert_eq!(std::fs::read(&output).unwrap(), encode_record(&envelope(2)));
    reader.set_len(0).unwrap();
    let torn = encode_record(&envelope(3));
    std::fs::write(&output, &torn[..5]).unwrap();
    assert_eq!(stub.already_sent(0, &[envelope(3)]).unwrap(), 0);
    assert_eq!(
        std::fs::read(&output).unwrap(),
        b"",
        "the torn start is cut"
    );
}

#[test]
fn append_mode_counts_whole_records_and_cuts_a_torn_one() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&output, b"earlier output\n").unwrap();
    let mut stub = StubConnection::open_with(&input, &output, OutputMode::Append).unwrap();
    let from = stub.output_position().unwrap();
    let sent = [envelope(1), envelope(2), envelope(3)];
    stub.send(&sent[0], 1).unwrap();
    assert_eq!(stub.deliver().unwrap(), Some(1));
    let second = encode_record(&sent[1]);
    append(&output, &second[..second.len() / 2]);
    assert_eq!(stub.already_sent(from, &sent).unwrap(), 1);
    let expected = [&b"earlier output\n"[..], &encode_record(&sent[0])].concat();
    assert_eq!(
        std::fs::read(&output).unwrap(),
        expected,
        "the torn record is cut"
    );
    // While the reader holds the file, nothing is written; then the backlog is, in order.
    let reader = std::fs::File::open(&output).unwrap();
    reader.lock_exclusive().unwrap();
    for (token, e) in (2..).zip(&sent[1..]) {
        stub.send(e, token).unwrap();
    }
    assert_eq!(stub.deliver().unwrap(), None, "the reader holds the lock");
    assert_eq!(std::fs::read(&output).unwrap(), expected);
    reader.unlock().unwrap();
    assert_eq!(
        (stub.deliver().unwrap(), stub.deliver().unwrap()),
        (Some(2), Some(3)),
        "each appended"
    );
    assert_eq!(stub.deliver().unwrap(), None, "nothing left");
    stub.flush().unwrap();
    assert_eq!(stub.already_sent(from, &sent).unwrap(), 3);
    let end = stub.output_position().unwrap();
    assert_eq!(stub.already_sent(end, &sent).unwrap(), 0);
}

/// A stub input file holding `n` echo requests from alice (each carrying its number), and a
/// bootstrapped ledger beside it whose keyring file keeps the sidecar's key from one open to
/// the next.
struct Backlog {
    dir: tempfile::TempDir,
    config: akledger_runtime::RuntimeConfig,
    n: usize,
}

impl Backlog {
    fn new(n: usize) -> Backlog {
        let dir = tempfile::tempdir().unwrap();
        let protocol = ProtocolId::parse("fetchai/default:1.0.0").unwrap();
        let mut records = Vec::new();
        for number in 0..n as u32 {
            let message = DefaultMessage::bytes(&number.to_string(), number.to_be_bytes().to_vec());
            let e = Envelope::new("my_first_aea", "alice", protocol.clone(), message.encode());
            records.extend(encode_record(&e));
        }
        append(&dir.path().join("in"), &records);
        let ledger = Backlog::open_in(dir.path());
        let config = bootstrap(&ledger, SigningKey::from_bytes(&[7; 32])).unwrap();
        Backlog { dir, config, n }
    }

    fn open_in(dir: &std::path::Path) -> Ledger {
        let config = Config::new(dir.join("ledger"));
        Ledger::open_with(config.keyring_file(dir.join("keyring.json"))).unwrap()
    }

    fn open(&self) -> Ledger {
        Backlog::open_in(self.dir.path())
    }

    /// A runtime over the stub files answering with the echo skill.
    fn echoing<'l>(&self, ledger: &'l Ledger) -> Runtime<'l> {
        let (input, output) = (self.dir.path().join("in"), self.dir.path().join("out"));
        let stub = StubConnection::open_with(&input, &output, OutputMode::Append).unwrap();
        let mut runtime = Runtime::new(ledger, stub, self.config.clone()).unwrap();
        let echo = Skill::new("echo").unwrap().handler(EchoHandler::default());
        runtime.add_skill(echo.unwrap()).unwrap();
        runtime
    }

    fn answers(&self) -> Vec<Envelope> {
        crate::support::written(&self.dir.path().join("out"))
    }

    /// Every request answered once, to alice, in the input's order.
    fn assert_answered_once_in_order(&self) {
        let answers = self.answers();
        assert_eq!(answers.len(), self.n, "each envelope answered once");
        for (number, answer) in (0u32..).zip(&answers) {
            assert_eq!(answer.to, "alice");
            let message = DefaultMessage::decode(&answer.message).unwrap();
            assert_eq!(
                message.performative,
                Performative::Bytes(number.to_be_bytes().to_vec()),
                "answer {number} in the input's order"
            );
        }
    }
}

/// A backlog longer than the longest run appended at once ([`MAX_INBOX_BATCH`]) is taken in
/// one step: its inbox batch and its outbox batch are each signed as one stream and appended
/// in several runs while the rest is signed. Every envelope is recorded and answered once,
/// in the input's order, and a run after a reopen finds nothing left to do.
#[test]
fn a_backlog_of_several_signing_runs_is_recorded_and_answered_once_in_order() {
    let backlog = Backlog::new(MAX_INBOX_BATCH + SIGN_AHEAD_RUN + 101);
    let inbox_runs = std::rc::Rc::new(std::cell::Cell::new(0));
    let run = || {
        let ledger = backlog.open();
        let mut runtime = backlog.echoing(&ledger);
        let counted = inbox_runs.clone();
        runtime
            .on_stage(move |stage| counted.set(counted.get() + usize::from(stage == Stage::Inbox)));
        let mut steps = 0;
        while !runtime.step(Timestamp::now()).unwrap().is_idle() {
            steps += 1;
        }
        runtime.finish().unwrap();
        drop(runtime);
        (ledger.len(), steps)
    };
    let (len, steps) = run();
    assert_eq!(steps, 1, "the whole backlog in one step");
    assert_eq!(
        len,
        4 + 2 * backlog.n,
        "one inbox and one outbox event each"
    );
    backlog.assert_answered_once_in_order();
    assert!(
        inbox_runs.get() >= 2,
        "{} inbox runs: none holds more than {MAX_INBOX_BATCH} events",
        inbox_runs.get()
    );
    // Reopened, the runtime finds every envelope recorded and answered.
    assert_eq!(run(), (4 + 2 * backlog.n, 0));
    assert_eq!(backlog.answers().len(), backlog.n);
}

/// A step that fails right after a run of its inbox batch is appended (the first run: in
/// the ledger, nothing handled; the second: the first run handled, the second in the ledger
/// and not handled) loses and repeats nothing: started again, the runtime answers every
/// envelope once, in the input's order. How many events a run holds depends on how far the
/// signing threads got, so the second failure needs the batch to have been appended in at
/// least two runs, as it is unless the threads signed all of it before the first commit.
#[test]
fn a_step_failing_between_two_runs_of_its_inbox_batch_answers_each_envelope_once() {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    for fail_at_run in [1, 2] {
        let backlog = Backlog::new(3 * SIGN_AHEAD_RUN + 17);
        let failed = {
            let ledger = backlog.open();
            let mut failing = backlog.echoing(&ledger);
            let mut runs = 0;
            failing.on_stage(move |stage| {
                runs += usize::from(stage == Stage::Inbox);
                if runs == fail_at_run {
                    panic!("failing after run {runs} of the inbox batch");
                }
            });
            let failed = catch_unwind(AssertUnwindSafe(|| failing.step(Timestamp::now())));
            if failed.is_err() {
                let recorded = ledger.len() - 4;
                assert!(
                    recorded >= fail_at_run * SIGN_AHEAD_RUN && recorded <= backlog.n,
                    "{recorded} recorded by run {fail_at_run}"
                );
                assert!(backlog.answers().is_empty(), "nothing answered yet");
            }
            failed.is_err()
        };
        if !failed {
            assert_eq!(fail_at_run, 2, "the first run always passes its stage");
            eprintln!("the inbox batch was appended in one run: no second run to fail after");
        }
        let ledger = backlog.open();
        let mut again = backlog.echoing(&ledger);
        while !again.step(Timestamp::now()).unwrap().is_idle() {}
        again.finish().unwrap();
        assert_eq!(
            ledger.len(),
            4 + 2 * backlog.n,
            "one inbox and one outbox event each"
        );
        backlog.assert_answered_once_in_order();
    }
}
