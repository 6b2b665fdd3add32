use akledger::store::log::format::*;
#[allow(unused_imports)]
use akledger::*;
use ciborium::Value;

fn int(v: u64) -> Value {
    Value::Integer(v.into())
}

#[test]
fn record_roundtrip_and_header_len() {
    let records = [
        Record::BatchBegin {
            seq: u64::MAX,
            count: u32::MAX,
            len: u64::MAX,
        },
        Record::Entry { kind: 255 },
        Record::Entry { kind: 0 },
        Record::BatchCommit {
            seq: 7,
            count: 3,
            digest: [9; 16],
        },
    ];
    for r in records {
        let mut buf = Vec::new();
        encode_record(&r, &mut buf);
        assert!(buf.len() <= MAX_RECORD_HEADER);
        let n = buf.len();
        buf.extend_from_slice(b"payload");
        assert_eq!(decode_record(&buf), Some((r, n)));
    }
}

#[test]
fn entry_fast_path_matches_ciborium() {
    for kind in 0..=255u8 {
        let mut fast = Vec::new();
        encode_record(&Record::Entry { kind }, &mut fast);
        let mut slow = Vec::new();
        let value = Value::Array(vec![int(TAG_ENTRY), int(kind.into())]);
        ciborium::into_writer(&value, &mut slow).expect("encode");
        assert_eq!(fast, slow, "kind {kind}");
        // The fast decoder agrees with ciborium, with or without a payload after it.
        assert_eq!(
            decode_record(&fast),
            Some((Record::Entry { kind }, fast.len()))
        );
        fast.push(0xff);
        assert_eq!(
            decode_record(&fast),
            Some((Record::Entry { kind }, fast.len() - 1))
        );
    }
}

#[test]
fn file_header_roundtrip() {
    let h = FileHeader {
        segment: 42,
        base_seq: 1 << 40,
    };
    let bytes = encode_file_header(h);
    assert_eq!(decode_file_header(&bytes), Ok(h));
    let mut bad = bytes;
    bad[13] ^= 1;
    assert_eq!(decode_file_header(&bad), Err(HeaderError::BadChecksum));
    assert_eq!(decode_file_header(&bytes[..31]), Err(HeaderError::Short));
    assert_eq!(decode_file_header(&[0; 32]), Err(HeaderError::Zeroed));
}

#[test]
fn frame_is_position_bound() {
    let mut buf = Vec::new();
    write_frame(
        &mut buf,
        Sealing::Checksummed,
        3,
        100,
        &Record::Entry { kind: 1 },
        b"hello",
    );
    let f = parse_frame(&buf, Sealing::Checksummed, 0, 3, 100).expect("valid");
    assert_eq!(f.payload, b"hello");
    assert_eq!(
        parse_frame(&buf, Sealing::Checksummed, 0, 3, 101).err(),
        Some(FrameError::Checksum)
    );
    assert_eq!(
        parse_frame(&buf, Sealing::Checksummed, 0, 4, 100).err(),
        Some(FrameError::Checksum)
    );
    assert_eq!(
        parse_frame(&buf[..buf.len() - 1], Sealing::Checksummed, 0, 3, 100).err(),
        Some(FrameError::Truncated)
    );
}
