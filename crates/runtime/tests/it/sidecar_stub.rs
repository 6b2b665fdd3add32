//! The stub connection on real files: a record written in pieces, several records per
//! read, resuming at a position, a shrunk input, and cutting a torn output record.

use std::io::Write;

use akledger_runtime::stub_format::encode_record;
use akledger_runtime::{Connection, Envelope, ProtocolId, StubConnection};

fn envelope(n: u8) -> Envelope {
    let protocol = ProtocolId::parse("fetchai/default:1.0.0").unwrap();
    Envelope::new("to", "from", protocol, vec![n, b',', b'\n', n])
}

fn append(path: &std::path::Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
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
    assert_eq!((got[0].start, got[0].end), (0, one.len() as u64));
    // Three in one read, then nothing more.
    for n in 2..5 {
        append(&input, &encode_record(&envelope(n)));
    }
    let got: Vec<Envelope> = stub
        .receive()
        .unwrap()
        .into_iter()
        .map(|r| r.envelope)
        .collect();
    assert_eq!(got, (2..5).map(envelope).collect::<Vec<_>>());
    assert!(stub.receive().unwrap().is_empty());
    assert_eq!(
        stub.input_position(),
        std::fs::metadata(&input).unwrap().len()
    );

    // Resuming at the second record's start reads it and the rest again.
    stub.resume_at(one.len() as u64).unwrap();
    assert_eq!(stub.receive().unwrap().len(), 3);

    // An input that shrinks below the position is read again from its start.
    std::fs::write(&input, encode_record(&envelope(9))).unwrap();
    let got = stub.receive().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].envelope, envelope(9));
}

#[test]
fn already_sent_counts_whole_records_and_cuts_a_torn_one() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&output, b"earlier output\n").unwrap();
    let mut stub = StubConnection::open(&input, &output).unwrap();
    let from = stub.output_position().unwrap();
    let sent = [envelope(1), envelope(2), envelope(3)];
    stub.send(&sent[0]).unwrap();
    let second = encode_record(&sent[1]);
    append(&output, &second[..second.len() / 2]);
    assert_eq!(stub.already_sent(from, &sent).unwrap(), 1);
    let expected = [&b"earlier output\n"[..], &encode_record(&sent[0])].concat();
    assert_eq!(
        std::fs::read(&output).unwrap(),
        expected,
        "the torn record is cut"
    );
    for e in &sent[1..] {
        stub.send(e).unwrap();
    }
    stub.flush().unwrap();
    assert_eq!(stub.already_sent(from, &sent).unwrap(), 3);
    // Nothing was sent after `from` when the file ends there.
    let end = stub.output_position().unwrap();
    assert_eq!(stub.already_sent(end, &sent).unwrap(), 0);
}
