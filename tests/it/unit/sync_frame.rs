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
    round_trip(Frame::Events(Events::of([&b"{}"[..], &[][..]])), 0);
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
    let events: Vec<&[u8]> = vec![b"{\"a\":1}", b"", &[7u8; 5000]];
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
    write_frame(&mut encoded, &Frame::Events(Events::of(events.clone()))).unwrap();
    assert_eq!(in_place, encoded);
    assert_eq!(written as usize, in_place.len());
    // Read back, the events are where the frame carries them.
    let (back, _) = read_frame(&mut in_place.as_slice(), 0).unwrap().unwrap();
    let Frame::Events(back) = back else {
        panic!("an events frame")
    };
    assert_eq!(back.iter().collect::<Vec<_>>(), events);
    assert_eq!((back.len(), back.bytes()), (3, 5007));
    // Written, the frame is empty again, and its next events make the next frame.
    assert!(laid_out.is_empty());
    laid_out.push(b"{}");
    let mut next = Vec::new();
    laid_out.write(&mut next).unwrap();
    let mut encoded = Vec::new();
    write_frame(&mut encoded, &Frame::Events(Events::of([&b"{}"[..]]))).unwrap();
    assert_eq!(next, encoded);
}

#[test]
fn events_frames_with_bad_counts_or_lengths_are_protocol_errors() {
    let frame = |payload: &[u8]| {
        let mut bytes = vec![1u8, 5];
        bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        bytes.extend_from_slice(payload);
        read_frame(&mut bytes.as_slice(), 0)
    };
    // Two events announced, one present.
    let short = [0, 0, 0, 2, 0, 0, 0, 1, b'x'];
    assert!(matches!(frame(&short), Err(SyncError::Protocol(_))));
    // A length past the end.
    let long = [0, 0, 0, 1, 0, 0, 0, 9, b'x'];
    assert!(matches!(frame(&long), Err(SyncError::Protocol(_))));
    // Bytes after the last event.
    let trailing = [0, 0, 0, 1, 0, 0, 0, 1, b'x', b'y'];
    assert!(matches!(frame(&trailing), Err(SyncError::Protocol(_))));
    // Over the events limit.
    let many = [0xFF, 0xFF, 0xFF, 0xFF];
    assert!(matches!(frame(&many), Err(SyncError::Protocol(_))));
    // An empty frame of events, and one empty event, are well formed.
    assert!(frame(&[0, 0, 0, 0]).unwrap().is_some());
    assert!(frame(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap().is_some());
}

/// This build cuts frames at `SYNC_BATCH_EVENTS` events; a frame of up to
/// `MAX_SYNC_FRAME_EVENTS` (what earlier builds sent) is still read, one more is refused.
#[test]
fn events_frames_of_earlier_builds_are_read_and_larger_ones_refused() {
    use akledger::limits::MAX_SYNC_FRAME_EVENTS;
    let frame = |count: usize| {
        let mut payload = (count as u32).to_be_bytes().to_vec();
        for _ in 0..count {
            payload.extend_from_slice(&[0, 0, 0, 1, b'x']);
        }
        let mut bytes = vec![1u8, 5];
        bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&payload);
        read_frame(&mut bytes.as_slice(), 0)
    };
    match frame(MAX_SYNC_FRAME_EVENTS) {
        Ok(Some((Frame::Events(events), _))) => assert_eq!(events.len(), MAX_SYNC_FRAME_EVENTS),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        frame(MAX_SYNC_FRAME_EVENTS + 1),
        Err(SyncError::Protocol(_))
    ));
}
