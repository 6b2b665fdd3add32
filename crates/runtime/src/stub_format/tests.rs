//! The format's cases, among them the reference stub tests' (`test_stub.py`) ported.

use super::*;
use crate::default_protocol::DefaultMessage;

fn decode_all(data: &[u8]) -> Vec<Result<Envelope, Malformed>> {
    let split = split_records(data);
    assert_eq!(
        split.consumed,
        data.len(),
        "everything is a complete record"
    );
    split
        .records
        .into_iter()
        .map(|r| decode_record(&data[r]))
        .collect()
}

fn protocol(text: &str) -> ProtocolId {
    ProtocolId::parse(text).unwrap()
}

/// The AEA docs' echo demo line, typed with `echo` (literal escapes).
const ECHO_DEMO_TYPED: &[u8] =
    br"my_first_aea,sender_aea,fetchai/default:1.0.0,\x12\x10\x08\x01\x12\x011*\t*\x07\n\x05hello,";
/// The same message as raw bytes.
const HELLO: &[u8] = b"\x12\x10\x08\x01\x12\x011*\t*\x07\n\x05hello";

#[test]
fn the_echo_demo_line_parses_with_literal_escapes_and_as_raw_bytes() {
    let mut raw = b"my_first_aea,sender_aea,fetchai/default:1.0.0,".to_vec();
    raw.extend_from_slice(HELLO);
    raw.push(b',');
    for line in [
        ECHO_DEMO_TYPED.to_vec(),
        [ECHO_DEMO_TYPED, b"\n"].concat(),
        raw.clone(),
        [&raw[..], b"\n"].concat(),
    ] {
        let envelopes = decode_all(&line);
        let [Ok(e)] = &envelopes[..] else {
            panic!("one envelope from {line:?}: {envelopes:?}")
        };
        assert_eq!(e.to, "my_first_aea");
        assert_eq!(e.sender, "sender_aea");
        assert_eq!(e.protocol_id.as_str(), "fetchai/default:1.0.0");
        assert_eq!(e.message, HELLO);
        let m = DefaultMessage::decode(&e.message).unwrap();
        assert_eq!((m.message_id, m.target), (1, 0));
        assert_eq!(m.dialogue_reference, ("1".to_string(), String::new()));
        assert_eq!(
            m.performative,
            crate::Performative::Bytes(b"hello".to_vec())
        );
    }
}

#[test]
fn reception_a_an_encoded_envelope_reads_back() {
    // test_reception_a: write_envelope of a default `bytes` "hello", to "any", sender "anys".
    let message = DefaultMessage {
        dialogue_reference: (String::new(), String::new()),
        ..DefaultMessage::bytes("", b"hello".to_vec())
    };
    let e = Envelope::new(
        "any",
        "anys",
        protocol("fetchai/default:1.0.0"),
        message.encode(),
    );
    let [Ok(back)] = &decode_all(&encode_record(&e))[..] else {
        panic!()
    };
    assert_eq!(*back, e);
    assert_eq!(DefaultMessage::decode(&back.message).unwrap(), message);
}

#[test]
fn reception_b_a_message_with_delimiters_and_newlines_and_no_final_newline() {
    let msg: &[u8] =
        b"\x08\x02\x12\x011\x1a\x011 \x01:,\n*0x32468d\n,\nB8Ab795\n\n49B49C88DC991990E7910891,,dbd\n";
    let line = [b"any,any,some_author/some_name:0.1.0,", msg, b","].concat();
    let [Ok(e)] = &decode_all(&line)[..] else {
        panic!()
    };
    assert_eq!((e.to.as_str(), e.sender.as_str()), ("any", "any"));
    assert_eq!(e.protocol_id, protocol("some_author/some_name:0.1.0"));
    assert_eq!(e.message, msg);
}

#[test]
fn reception_c_an_oef_search_message_with_a_comma_and_a_newline() {
    let line: &[u8] = b"0x5E22777dD831A459535AA4306AceC9cb22eC4cB5,default_oef,fetchai/oef_search:1.0.0,\x08\x02\x12\x011\x1a\x011 \x01:,\n*0x32468dB8Ab79549B49C88DC991990E7910891dbd,";
    let [Ok(e)] = &decode_all(line)[..] else {
        panic!()
    };
    assert_eq!(e.to, "0x5E22777dD831A459535AA4306AceC9cb22eC4cB5");
    assert_eq!(e.sender, "default_oef");
    assert_eq!(e.protocol_id, protocol("fetchai/oef_search:1.0.0"));
    assert_eq!(
        e.message,
        b"\x08\x02\x12\x011\x1a\x011 \x01:,\n*0x32468dB8Ab79549B49C88DC991990E7910891dbd"
    );
}

#[test]
fn a_base64_encoded_line_is_not_an_envelope() {
    // test_connection_is_established: the whole line base64-encoded has no separators.
    let line = b"YW55LGFueSxmZXRjaGFpL2RlZmF1bHQ6MS4wLjAsEhAIARIBMSoJKgcKBWhlbGxvLA==";
    assert!(split_records(line).records.is_empty());
    assert_eq!(decode_record(line), Err(Malformed::Shape));
}

#[test]
fn send_message_writes_a_record_the_reference_reader_splits() {
    // test_send_message: the written record splits (maxsplit=4) into to, sender,
    // protocol, message and an empty or newline end.
    let m = DefaultMessage::bytes("1", b"hello".to_vec());
    let e = Envelope::new("any", "anys", protocol("fetchai/default:1.0.0"), m.encode());
    let record = encode_record(&e);
    let mut parts = record.splitn(5, |&b| b == b',');
    assert_eq!(parts.next(), Some(&b"any"[..]));
    assert_eq!(parts.next(), Some(&b"anys"[..]));
    assert_eq!(parts.next(), Some(&b"fetchai/default:1.0.0"[..]));
    let rest = parts.next().unwrap();
    assert!(rest.starts_with(&m.encode()));
    assert!(record.ends_with(b",\n"));
}

#[test]
fn multiple_envelopes_in_one_read_are_all_found() {
    // test_multiple_envelopes writes five; here they arrive in one read, which the
    // reference would merge into one.
    let m = DefaultMessage::bytes("", b"hello".to_vec());
    let e = Envelope::new("any", "any", protocol("fetchai/default:1.0.0"), m.encode());
    let data: Vec<u8> = std::iter::repeat_n(encode_record(&e), 5)
        .flatten()
        .collect();
    let got = decode_all(&data);
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|g| g.as_ref() == Ok(&e)));
}

#[test]
fn a_bad_envelope_is_skipped() {
    // test_bad_envelope: "1,2,3,4,5," gives no envelope ("3" is no protocol id): the line
    // is no record's header, skipped and reported; decoded alone, it says why.
    let split = split_records(b"1,2,3,4,5,");
    assert!(split.records.is_empty());
    assert_eq!(split.skipped, vec![0..10]);
    assert_eq!(decode_record(b"1,2,3,4,5,"), Err(Malformed::ProtocolId));
    assert_eq!(decode_record(b"a,b,c/d:1.0.0,m,x"), Err(Malformed::Shape));
    assert_eq!(decode_record(b"a,b,c/d:1.0.0,"), Err(Malformed::Shape));
    assert_eq!(
        decode_record(b"\xff,b,c/d:1.0.0,m,"),
        Err(Malformed::Address)
    );
    assert!(matches!(
        decode_record(br"a,b,c/d:1.0.0,\x1,"),
        Err(Malformed::Escape(_))
    ));
}

#[test]
fn fields_are_stripped_as_the_reference_strips_them() {
    // `to` is stripped of white space, then of leading NULs (in that order).
    let [Ok(e)] = &decode_all(b" \0to ,\tsender\x1f, a/b:1.0.0 ,m,\n")[..] else {
        panic!()
    };
    assert_eq!((e.to.as_str(), e.sender.as_str()), ("to", "sender"));
    assert_eq!(decode_record(b"\0 to,s,a/b:1.0.0,m,").unwrap().to, " to");
    assert_eq!(e.protocol_id, protocol("a/b:1.0.0"));
}

#[test]
fn a_partial_record_waits_for_the_rest() {
    let whole = [ECHO_DEMO_TYPED, b"\n"].concat();
    for cut in 1..whole.len() - 2 {
        let split = split_records(&whole[..cut]);
        assert!(split.records.is_empty(), "cut at {cut}");
        assert_eq!(split.consumed, 0);
    }
    // A line typed by hand followed by the start of the next: both wait for the next
    // record's header (the start could be the rest of the message), then both are found.
    let two = [&whole[..], &whole[..20]].concat();
    assert_eq!(split_records(&two).consumed, 0);
    let two = [&whole[..], &whole[..50]].concat();
    let split = split_records(&two);
    assert_eq!(split.records, vec![0..whole.len()]);
    assert_eq!(split.consumed, whole.len());
}

#[test]
fn garbage_lines_before_a_record_are_skipped_and_reported() {
    let data = b"a,b,x/y:1.0.0,m1,\nbad line\nnot this either\nc,d,x/y:1.0.0,m2,\n";
    let split = split_records(data);
    let got: Vec<_> = split
        .records
        .iter()
        .map(|r| decode_record(&data[r.clone()]).unwrap().message)
        .collect();
    assert_eq!(got, vec![b"m1".to_vec(), b"m2".to_vec()]);
    assert_eq!(split.skipped.len(), 1);
    assert_eq!(
        &data[split.skipped[0].clone()],
        b"bad line\nnot this either\n"
    );
    assert_eq!(split.consumed, data.len());
}

#[test]
fn an_oversized_record_is_skipped_not_kept() {
    let mut data = b"a,b,x/y:1.0.0,".to_vec();
    data.resize(MAX_STUB_RECORD_BYTES + 10, b'z');
    let split = split_records(&data);
    assert!(split.records.is_empty());
    assert_eq!(split.skipped, vec![0..data.len()]);
    assert_eq!(split.consumed, data.len());
    let mut long = b"a,b,x/y:1.0.0,".to_vec();
    long.resize(MAX_STUB_RECORD_BYTES + 10, b'z');
    long.push(b',');
    assert_eq!(decode_record(&long), Err(Malformed::TooLong));
}

#[test]
fn protocol_ids_follow_the_public_id_form() {
    for ok in [
        "fetchai/default:1.0.0",
        "a_b/c9:0.1.0-rc.1+build.5",
        "x/y:latest",
        "_/_:any",
    ] {
        assert!(ProtocolId::parse(ok).is_some(), "{ok}");
    }
    for bad in [
        "3",
        "a/b",
        "a/b:1.0",
        "a/b:01.0.0",
        "9a/b:1.0.0",
        "a/b:1.0.0-",
        "a/b/c:1.0.0",
        "",
    ] {
        assert!(ProtocolId::parse(bad).is_none(), "{bad}");
    }
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
        let split = split_records(&bytes);
        proptest::prop_assert!(split.consumed <= bytes.len());
        for r in split.records {
            let _ = decode_record(&bytes[r]);
        }
    }

    #[test]
    fn aea_messages_written_back_to_back_split_exactly_whatever_they_carry(
        contents in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..60), 1..8),
        forge in proptest::bool::ANY,
        newline in proptest::bool::ANY,
    ) {
        // What write_envelope writes in a burst: records back to back, no newline (or this
        // writer's, with one). Contents hold any bytes (commas, newlines, a whole forged
        // record), except the `\\x` the reader escape-decodes.
        let forged = b",\nsidecar,mallory,fetchai/default:1.0.0,\x12\x00,\n";
        let envelopes: Vec<Envelope> = contents
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                if forge {
                    c.extend_from_slice(forged);
                }
                let message = DefaultMessage::bytes(&format!("r{i}"), c);
                Envelope::new("to", "from", protocol("fetchai/default:1.0.0"), message.encode())
            })
            .filter(|e| !crate::escapes::needs_unescape(&e.message))
            .collect();
        let data: Vec<u8> = envelopes
            .iter()
            .flat_map(|e| {
                let mut r = encode_record(e);
                if !newline {
                    r.pop();
                }
                r
            })
            .collect();
        let split = split_records(&data);
        proptest::prop_assert_eq!(split.consumed, data.len());
        let back: Vec<Envelope> = split.records.into_iter().map(|r| decode_record(&data[r]).unwrap()).collect();
        proptest::prop_assert_eq!(back, envelopes);
    }

    #[test]
    fn text_lines_without_commas_round_trip(
        messages in proptest::collection::vec("[a-zA-Z0-9 _.:;!?]{0,40}", 1..6)
    ) {
        let envelopes: Vec<Envelope> = messages
            .into_iter()
            .map(|m| Envelope::new("to", "from", protocol("x/y:1.0.0"), m.into_bytes()))
            .collect();
        let data: Vec<u8> = envelopes.iter().flat_map(encode_record).collect();
        let split = split_records(&data);
        let back: Vec<Envelope> = split.records.into_iter().map(|r| decode_record(&data[r]).unwrap()).collect();
        proptest::prop_assert_eq!(back, envelopes);
    }

    #[test]
    fn blank_lines_and_garbage_lines_are_skipped(lines in 1usize..4000) {
        // Up to 400 KB of blank lines (which once took hours to split) and garbage lines
        // before a record.
        let mut data = "\n".repeat(lines * 100).into_bytes();
        data.extend_from_slice(&"junk,\n".repeat(lines).into_bytes());
        data.extend_from_slice(b"to,from,x/y:1.0.0,m,\n");
        let split = split_records(&data);
        proptest::prop_assert_eq!(split.records.len(), 1);
        proptest::prop_assert_eq!(split.consumed, data.len());
    }
}
