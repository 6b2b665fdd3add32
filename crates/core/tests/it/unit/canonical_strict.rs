use proptest::prelude::*;

proptest! {
    /// The word-at-a-time scan finds what a byte-at-a-time scan finds, for every mix of
    /// quotes, backslashes, control, ASCII and non-ASCII bytes.
    #[test]
    fn agrees_with_a_byte_at_a_time_scan(
        bytes in prop::collection::vec(
            prop::sample::select(vec![b'a', b'"', b'\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff, b'!', b']']),
            0..40,
        ),
    ) {
        let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        prop_assert_eq!(akledger_core::internals::special_byte(&bytes), naive);
    }
}
