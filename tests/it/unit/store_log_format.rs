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
    for (sealing, version) in [(Sealing::Blake3, 1), (Sealing::Xxh3, 2)] {
        let h = FileHeader {
            segment: 42,
            base_seq: 1 << 40,
            sealing,
        };
        let bytes = encode_file_header(h);
        assert_eq!(bytes[5], version);
        assert_eq!(decode_file_header(&bytes), Ok(h));
        let mut bad = bytes;
        bad[13] ^= 1;
        assert_eq!(decode_file_header(&bad), Err(HeaderError::BadChecksum));
        assert_eq!(decode_file_header(&bytes[..31]), Err(HeaderError::Short));
    }
    assert_eq!(decode_file_header(&[0; 32]), Err(HeaderError::Zeroed));
    assert_eq!(NEW_SEGMENT_SEALING.version(), FORMAT_VERSION);
    let mut unknown = encode_file_header(FileHeader {
        segment: 0,
        base_seq: 0,
        sealing: NEW_SEGMENT_SEALING,
    });
    unknown[5] = 3;
    assert_eq!(
        decode_file_header(&unknown),
        Err(HeaderError::BadVersion(3))
    );
}

#[test]
fn a_frame_written_without_its_payload_is_the_whole_frame_but_the_payload() {
    let payload = b"a payload left in the file it came from";
    for sealing in [Sealing::Blake3, Sealing::Xxh3, Sealing::Unchecked] {
        let entry = Record::Entry { kind: 3 };
        let mut whole = Vec::new();
        let sum = write_frame(&mut whole, sealing, 2, 640, &entry, payload);
        let mut head = Vec::new();
        let head_sum = write_frame(
            &mut head,
            sealing,
            2,
            640,
            &entry,
            Payload::LeftOut(payload),
        );
        assert_eq!(head_sum, sum, "{sealing:?}");
        assert_eq!(head.len() + payload.len(), whole.len());
        assert_eq!(frame_len(&entry, payload.len()), whole.len());
        head.extend_from_slice(payload);
        assert_eq!(head, whole, "{sealing:?}");
    }
}

#[test]
fn frame_is_position_bound() {
    for sealing in [Sealing::Blake3, Sealing::Xxh3] {
        let mut buf = Vec::new();
        write_frame(
            &mut buf,
            sealing,
            3,
            100,
            &Record::Entry { kind: 1 },
            b"hello",
        );
        let f = parse_frame(&buf, sealing, 0, 3, 100).expect("valid");
        assert_eq!(f.payload, b"hello");
        for (segment, base) in [(3, 101), (4, 100)] {
            assert_eq!(
                parse_frame(&buf, sealing, 0, segment, base).err(),
                Some(FrameError::Checksum),
                "{sealing:?} at segment {segment}, offset {base}"
            );
        }
        assert_eq!(
            parse_frame(&buf[..buf.len() - 1], sealing, 0, 3, 100).err(),
            Some(FrameError::Truncated)
        );
        // A frame sealed one way does not verify as the other version's.
        let other = if sealing == Sealing::Xxh3 {
            Sealing::Blake3
        } else {
            Sealing::Xxh3
        };
        assert_eq!(
            parse_frame(&buf, other, 0, 3, 100).err(),
            Some(FrameError::Checksum)
        );
    }
}

/// Frame checksums against independent implementations: the digests below were computed
/// by the Python `xxhash` (4.1.0, `xxh3_128(...).digest()`) and `blake3` packages over
/// `struct.pack('<IQI', segment, offset, len(body)) + body`.
#[test]
fn frame_checksums_match_independent_implementations() {
    let small = [&[0x82, 0x01, 0x01][..], b"hello"];
    let large_payload: Vec<u8> = (0..1100u32).map(|i| (i * 7 % 251) as u8).collect();
    let large = [&[0x82, 0x01, 0x18, 200][..], &large_payload];
    /// Frame body parts, segment, offset, XXH3-128 and blake3 checksums (hex).
    type Case<'a> = (&'a [&'a [u8]], u32, u64, &'a str, &'a str);
    let cases: [Case; 2] = [
        (
            &small,
            3,
            100,
            "13346074363bc8868fd665b87b40ac13",
            "7be364f2f862ac702f24402d18824f5b",
        ),
        (
            &large,
            7,
            123_456,
            "21a067b689051a07c6dd412a48917656",
            "b4a8c0302c2ba970519bb46ecac273a4",
        ),
    ];
    for (parts, segment, offset, xxh3, blake3) in cases {
        let hex = |sealing: Sealing| -> String {
            sealing
                .frame_checksum(segment, offset, parts)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        assert_eq!(hex(Sealing::Xxh3), xxh3);
        assert_eq!(hex(Sealing::Blake3), blake3);
        assert_eq!(
            Sealing::Unchecked.frame_checksum(segment, offset, parts),
            [0; 16]
        );
        // What the writer stores, hashed in one pass over the frame it lays out, is the
        // same checksum.
        let kind = parts[0][parts[0].len() - 1];
        for sealing in [Sealing::Xxh3, Sealing::Blake3] {
            let mut buf = vec![0xAA; 5];
            let sum = write_frame(
                &mut buf,
                sealing,
                segment,
                offset,
                &Record::Entry { kind },
                parts[1],
            );
            assert_eq!(
                hex(sealing),
                sum.iter().map(|b| format!("{b:02x}")).collect::<String>()
            );
            assert_eq!(buf[9..25], sum, "{sealing:?}");
            assert_eq!(
                buf[..5],
                [0xAA; 5],
                "what was before the frame is untouched"
            );
            assert_eq!(
                parse_frame(&buf, sealing, 5, segment, offset - 5)
                    .unwrap()
                    .payload,
                parts[1]
            );
        }
    }
}
