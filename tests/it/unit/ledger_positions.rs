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

#[test]
fn positions_read_back_across_segment_runs() {
    let segments = [0u32, 0, 1, 1, 1, 0, 2, 2, 7];
    let all: Vec<LogPos> = segments
        .iter()
        .enumerate()
        .map(|(i, &s)| LogPos::new(s, 100 * i as u64 + u64::from(s)))
        .collect();
    let mut positions = LogPositions::with_capacity(all.len());
    for &at in &all {
        positions.push(PackedPos::new(at).unwrap());
    }
    assert_eq!(positions.len(), all.len());
    assert_eq!(positions.iter().collect::<Vec<_>>(), all);
    for (i, &at) in all.iter().enumerate() {
        assert_eq!(positions.get(i), Some(at));
        assert_eq!(positions.from(i), all[i..].to_vec());
    }
    assert_eq!(positions.get(all.len()), None);
    assert!(positions.from(all.len() + 3).is_empty());
}
