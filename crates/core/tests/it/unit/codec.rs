use akledger_core::codec::*;

#[test]
fn lists_round_trip_and_short_input_is_refused() {
    let mut out = Vec::new();
    put_u32s(&mut out, [1u32, 2, u32::MAX].into_iter());
    put_u64s(&mut out, [7, u64::MAX].into_iter());
    put_u32(&mut out, 9);
    let mut r = Reader::new(&out);
    assert_eq!(r.u32s(), Some(vec![1, 2, u32::MAX]));
    assert_eq!(r.u64s(), Some(vec![7, u64::MAX]));
    assert_eq!(r.u32(), Some(9));
    assert!(r.is_empty());
    for cut in 0..out.len() {
        let mut r = Reader::new(&out[..cut]);
        let whole = r.u32s().is_some() && r.u64s().is_some() && r.u32().is_some();
        assert!(!whole, "a cut at {cut} must not decode");
    }
    // A count that promises more than the input holds allocates nothing.
    let mut huge = Vec::new();
    put_u64(&mut huge, u64::MAX / 2);
    assert_eq!(Reader::new(&huge).u32s(), None);
}
