use akledger::internals::budget::*;
#[allow(unused_imports)]
use akledger::*;
use std::time::Duration;

#[test]
fn room_is_given_back_when_dropped_or_shrunk_and_waiters_get_it() {
    let budget = MemoryBudget::new(0);
    let total = budget.total();
    let mut first = try_reserve(&budget, total - 10).unwrap();
    assert!(try_reserve(&budget, 11).is_none());
    assert!(try_reserve(&budget, total + 1).is_none());
    first.shrink_to(5);
    assert_eq!(budget.available(), total - 5);
    let waiter = {
        let budget = budget.clone();
        std::thread::spawn(move || {
            reserve_within(&budget, total, Duration::from_secs(30)).is_some()
        })
    };
    drop(first);
    assert!(waiter.join().unwrap());
    assert_eq!(budget.available(), total);
}
