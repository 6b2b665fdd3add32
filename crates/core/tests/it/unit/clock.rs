use akledger_core::time::Timestamp;
use std::time::{SystemTime, UNIX_EPOCH};

#[test]
fn now_is_not_earlier_than_parents_and_tracks_the_clock() {
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap();
    let now = Timestamp::now();
    assert!(now.millis() >= before);
    let future = Timestamp::from_millis(before + 3_600_000).unwrap();
    assert_eq!(Timestamp::now_after([future, now]), future);
    let past = Timestamp::from_millis(before - 3_600_000).unwrap();
    assert!(Timestamp::now_after([past]) >= now);
    assert!(Timestamp::now_after([]) >= now);
}
