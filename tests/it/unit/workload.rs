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
