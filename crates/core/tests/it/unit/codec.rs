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

proptest! {
    /// Varints read back what was put, one after another, and nothing from a cut encoding.
    #[test]
    fn varints_round_trip_and_a_cut_one_reads_as_nothing(
        values in proptest::collection::vec(any::<u64>(), 0..20),
        signed in proptest::collection::vec(any::<i64>(), 0..20),
    ) {
        let mut out = Vec::new();
        for &v in &values {
            put_varint(&mut out, v);
        }
        for &v in &signed {
            put_signed_varint(&mut out, v);
        }
        let mut r = Reader::new(&out);
        for &v in &values {
            prop_assert_eq!(r.varint(), Some(v));
        }
        for &v in &signed {
            prop_assert_eq!(r.signed_varint(), Some(v));
        }
        prop_assert!(r.is_empty());
        if let Some(&last) = values.last() {
            let mut one = Vec::new();
            put_varint(&mut one, last);
            prop_assert!(one.len() <= 10);
            prop_assert_eq!(one.len(), 1 + (64 - last.leading_zeros().min(63) as usize).saturating_sub(1) / 7);
            for cut in 0..one.len() {
                prop_assert_eq!(Reader::new(&one[..cut]).varint(), None);
            }
        }
    }
}

#[test]
fn varints_have_one_encoding_and_refuse_overflow() {
    for (bytes, want) in [
        (&[0x00][..], Some(0)),
        (&[0x7f][..], Some(127)),
        (&[0x80, 0x01][..], Some(128)),
        // Not the shortest form.
        (&[0x80, 0x00][..], None),
        (&[0xff, 0x00][..], None),
        // 2^64 - 1, then one more bit than 64.
        (
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01][..],
            Some(u64::MAX),
        ),
        (
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02][..],
            None,
        ),
        (&[0xff; 11][..], None),
    ] {
        assert_eq!(Reader::new(bytes).varint(), want, "{bytes:x?}");
    }
    let mut out = Vec::new();
    put_signed_varint(&mut out, -1);
    put_signed_varint(&mut out, i64::MIN);
    assert_eq!(out[0], 1);
    let mut r = Reader::new(&out);
    assert_eq!(r.signed_varint(), Some(-1));
    assert_eq!(r.signed_varint(), Some(i64::MIN));
}
