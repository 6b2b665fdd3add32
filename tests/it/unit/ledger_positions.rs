use akledger::internals::positions::*;
use akledger::store::log::{LogPos, MAX_SEGMENT_FILE};
#[allow(unused_imports)]
use akledger::*;

#[test]
fn positions_round_trip_up_to_the_largest_segment_file_and_no_further() {
    for (segment, offset) in [
        (0, 0),
        (1, 16),
        (u32::MAX, MAX_SEGMENT_FILE),
        (7, MAX_SEGMENT_FILE - 1),
    ] {
        let at = LogPos::new(segment, offset);
        assert_eq!(PackedPos::new(at).map(PackedPos::get), Ok(at));
    }
    assert!(PackedPos::new(LogPos::new(0, MAX_SEGMENT_FILE + 1)).is_err());
    assert!(PackedPos::new(LogPos::new(0, u64::MAX)).is_err());
    let mut all = LogPositions::with_capacity(2);
    all.push(PackedPos::new(LogPos::new(1, 20)).unwrap());
    all.push(PackedPos::new(LogPos::new(2, 30)).unwrap());
    assert_eq!(all.get(1), Some(LogPos::new(2, 30)));
    assert_eq!(all.get(2), None);
    assert_eq!(all.from(1), vec![LogPos::new(2, 30)]);
    assert_eq!(all.from(5), vec![]);
}
