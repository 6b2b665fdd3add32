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

use proptest::prelude::*;

proptest! {
    /// Whatever the sizes of the puts and of the chunk: the chunks handed on, in order, are
    /// the bytes a vector would hold, every one but the last exactly a chunk long, and
    /// `finish` counts them all.
    #[test]
    fn chunks_hand_on_what_a_vector_holds(
        puts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..60),
        chunk in 1usize..64,
    ) {
        let mut whole = Vec::new();
        let mut handed: Vec<Vec<u8>> = Vec::new();
        let mut chunks = Chunks::new(chunk, |c: &[u8]| {
            handed.push(c.to_vec());
            Ok::<(), ()>(())
        });
        for bytes in &puts {
            chunks.put(bytes);
            whole.put(bytes);
        }
        let total = chunks.finish().unwrap();
        prop_assert_eq!(total, whole.len() as u64);
        prop_assert_eq!(handed.concat(), whole);
        if let Some((_, full)) = handed.split_last() {
            prop_assert!(full.iter().all(|c| c.len() == chunk));
        }
        prop_assert!(handed.iter().all(|c| !c.is_empty()));
    }
}

#[test]
fn chunks_keep_the_first_error_and_hand_nothing_on_after_it() {
    let mut calls = 0;
    let mut chunks = Chunks::new(4, |c: &[u8]| {
        calls += 1;
        match calls {
            2 => Err(format!("disk full at {c:?}")),
            _ => Ok(()),
        }
    });
    put_u64s(&mut chunks, (0..10u32).map(|i| u64::from(i) * 3));
    let failed = chunks.finish().unwrap_err();
    assert_eq!(failed, "disk full at [0, 0, 0, 0]");
    assert_eq!(calls, 2, "nothing is handed on after the first error");
}
