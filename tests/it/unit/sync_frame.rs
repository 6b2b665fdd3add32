use akledger::sync::frame::*;
use akledger::sync::SyncError;
#[allow(unused_imports)]
use akledger::*;

fn round_trip(frame: Frame, bits: usize) {
    let mut buf = Vec::new();
    let written = write_frame(&mut buf, &frame).unwrap();
    assert_eq!(written as usize, buf.len());
    let (back, read) = read_frame(&mut buf.as_slice(), bits).unwrap().unwrap();
    assert_eq!(back, frame);
    assert_eq!(read, written);
}

#[test]
fn frames_round_trip() {
    let id = EventId::of_preimage(akledger::id::DigestSuite::Blake3, b"x");
    round_trip(Frame::Hello(vec![id, id]), 0);
    round_trip(
        Frame::Known(vec![
            true, false, true, true, false, false, true, false, true,
        ]),
        9,
    );
    round_trip(
        Frame::Events(vec![
            std::sync::Arc::from(&b"{}"[..]),
            std::sync::Arc::from(&[][..]),
        ]),
        0,
    );
    round_trip(Frame::Done(7), 0);
    round_trip(Frame::Bye, 0);
}

#[test]
fn bad_frames_are_protocol_errors() {
    let oversized = [1u8, HELLO, 0xFF, 0xFF, 0xFF, 0xFF];
    assert!(matches!(
        read_frame(&mut &oversized[..], 0),
        Err(SyncError::Protocol(_))
    ));
    let version = [9u8, HELLO, 0, 0, 0, 0];
    assert!(matches!(
        read_frame(&mut &version[..], 0),
        Err(SyncError::Protocol(_))
    ));
    let short = [1u8, HELLO, 0, 0, 0, 4, 0, 0, 0, 9];
    assert!(matches!(
        read_frame(&mut &short[..], 0),
        Err(SyncError::Protocol(_))
    ));
    let cut = [1u8, HELLO, 0, 0, 0, 40, 0];
    assert!(matches!(
        read_frame(&mut &cut[..], 0),
        Err(SyncError::Disconnected)
    ));
    assert!(read_frame(&mut &[][..], 0).unwrap().is_none());
}

#[test]
fn an_events_frame_laid_out_in_place_is_the_encoded_frame() {
    let events: Vec<std::sync::Arc<[u8]>> = vec![
        std::sync::Arc::from(&b"{\"a\":1}"[..]),
        std::sync::Arc::from(&[][..]),
        std::sync::Arc::from(vec![7u8; 5000]),
    ];
    let mut laid_out = EventsFrame::default();
    assert!(laid_out.is_empty());
    for e in &events {
        laid_out.push(e);
    }
    assert_eq!(laid_out.len(), 3);
    assert_eq!(laid_out.payload_len(), 4 + 3 * 4 + 7 + 5000);
    let mut in_place = Vec::new();
    let written = laid_out.write(&mut in_place).unwrap();
    let mut encoded = Vec::new();
    write_frame(&mut encoded, &Frame::Events(events)).unwrap();
    assert_eq!(in_place, encoded);
    assert_eq!(written as usize, in_place.len());
}
