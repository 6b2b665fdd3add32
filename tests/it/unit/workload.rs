use akledger::workload::*;
#[allow(unused_imports)]
use akledger::*;

#[test]
fn threads_sign_what_one_thread_signs() {
    let (mut one, _) = RealmDag::new(9, 4, 16).unwrap();
    let (mut many, _) = RealmDag::new(9, 4, 16).unwrap();
    let alone = one.next_batch(300).unwrap();
    let together = sign_all(&many.plan(300).unwrap(), 3).unwrap();
    assert_eq!(alone.len(), together.len());
    assert!(alone
        .iter()
        .zip(&together)
        .all(|(a, b)| a.bytes() == b.bytes()));
}

/// `in_parallel` gives what a map on one thread gives, in order, for any number of threads
/// (shares of unequal size included), and its first error.
#[test]
fn a_parallel_map_keeps_order_and_the_first_error() {
    let items: Vec<u32> = (0..1000).collect();
    for threads in [1, 2, 3, 7, 64] {
        let doubled = in_parallel(items.clone(), threads, |x| Ok(u64::from(x) * 2)).unwrap();
        assert_eq!(
            doubled,
            items.iter().map(|&x| u64::from(x) * 2).collect::<Vec<_>>()
        );
        let failed = in_parallel(items.clone(), threads, |x| {
            if x % 400 == 399 {
                Err(Rejection::new(Code::SchemaViolation, format!("item {x}")))
            } else {
                Ok(x)
            }
        });
        assert_eq!(
            failed.unwrap_err().message(),
            "item 399",
            "{threads} threads"
        );
    }
}
