use akledger::limits::MAX_EVENT_BYTES;
use akledger::log_format::*;
#[allow(unused_imports)]
use akledger::*;

fn read_all(bytes: &[u8]) -> Vec<Result<Vec<u8>, Code>> {
    LogReader::detect(bytes)
        .unwrap()
        .unwrap()
        .map(|item| item.unwrap().bytes.map_err(|e| e.code()))
        .collect()
}

#[test]
fn both_formats_round_trip() {
    let events: Vec<Vec<u8>> = vec![
        b"{}".to_vec(),
        vec![b'x'; 23],
        vec![b'y'; 24],
        vec![b'z'; 300],
        vec![b'w'; 70_000],
    ];
    for format in [LogFormat::JsonLines, LogFormat::CborSeq] {
        let mut out = Vec::new();
        for e in &events {
            write_item(&mut out, format, e).unwrap();
        }
        if format == LogFormat::JsonLines {
            // JSON Lines must start with '{' to be detected; all our items are read back.
            let items = LogReader::new(&out[..], format).map(|i| i.unwrap().bytes.unwrap());
            assert_eq!(items.collect::<Vec<_>>(), events);
        } else {
            let back: Vec<_> = read_all(&out).into_iter().map(Result::unwrap).collect();
            assert_eq!(back, events);
        }
    }
}

#[test]
fn cbor_rejects_hostile_lengths_and_truncation() {
    assert_eq!(
        read_all(&[0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        vec![Err(Code::PayloadTooLarge)]
    );
    assert_eq!(read_all(&[0x43, b'a']), vec![Err(Code::SchemaViolation)]);
    assert_eq!(
        read_all(&[0x41, b'a', 0x60]),
        vec![Ok(b"a".to_vec()), Err(Code::SchemaViolation)]
    );
    assert!(LogReader::detect(&b"\x01"[..]).unwrap().is_err());
}

#[test]
fn blank_lines_and_crlf_get_their_own_messages() {
    let reader = LogReader::new(&b"{}\r\n\n{}\n"[..], LogFormat::JsonLines);
    let items: Vec<LogItem> = reader.map(|i| i.unwrap()).collect();
    assert_eq!(items.len(), 3);
    let message = |i: usize| {
        items[i]
            .bytes
            .as_ref()
            .err()
            .map(|r| (r.code(), r.message().to_string()))
    };
    let (code, crlf) = message(0).unwrap();
    assert_eq!(code, Code::SchemaViolation);
    assert!(crlf.contains("CRLF"), "{crlf}");
    let (code, blank) = message(1).unwrap();
    assert_eq!(code, Code::SchemaViolation);
    assert!(blank.starts_with("blank line"), "{blank}");
    assert_eq!(items[2].bytes.as_deref(), Ok(&b"{}"[..]));
    assert_eq!((items[1].offset, items[2].offset), (4, 5));
}

#[test]
fn json_lines_over_long_line_is_too_large_and_reading_continues() {
    let mut log = vec![b'{'; MAX_EVENT_BYTES + 10];
    log.push(b'\n');
    log.extend_from_slice(b"{}\n");
    assert_eq!(
        read_all(&log),
        vec![Err(Code::PayloadTooLarge), Ok(b"{}".to_vec())]
    );
}
