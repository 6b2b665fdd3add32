use akledger_core::internals::{known, KNOWN};

#[test]
fn known_names_are_sorted_distinct_and_found() {
    assert!(KNOWN.windows(2).all(|w| w[0] < w[1]));
    for name in KNOWN {
        assert_eq!(known(name), Some(name));
    }
    assert_eq!(known("not_a_member"), None);
    assert_eq!(known(""), None);
    assert_eq!(known("kind\\u0000"), None);
}
