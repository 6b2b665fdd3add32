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

/// `in_parallel_into` hands its runs over in order, each of at least `at_least` items but
/// the last, all of them once; an error of the map (the first in order) or of the taker
/// stops it, and nothing after the error is handed over.
#[test]
fn a_parallel_map_handed_over_in_runs_keeps_order_and_stops_at_the_first_error() {
    let items: Vec<u32> = (0..1000).collect();
    for threads in [1, 2, 3, 7] {
        for at_least in [1, 100, 250, 999, 1000, usize::MAX] {
            let mut runs = Vec::new();
            in_parallel_into(items.clone(), threads, at_least, Ok, |run| {
                runs.push(run);
                Ok::<_, Rejection>(())
            })
            .unwrap();
            assert_eq!(
                runs.concat(),
                items,
                "{threads} threads, runs of {at_least}"
            );
            let (last, whole) = runs.split_last().unwrap();
            assert!(!last.is_empty());
            assert!(whole
                .iter()
                .all(|run| run.len() >= at_least.min(items.len())));
        }
        // The map's first error in order; what came before it may be handed over, nothing
        // from it on.
        let mut handed = Vec::new();
        let failed = in_parallel_into(
            items.clone(),
            threads,
            100,
            |x| match x % 400 == 399 {
                true => Err(Rejection::new(Code::SchemaViolation, format!("item {x}"))),
                false => Ok(x),
            },
            |run| {
                handed.extend(run);
                Ok::<_, Rejection>(())
            },
        );
        assert_eq!(
            failed.unwrap_err().message(),
            "item 399",
            "{threads} threads"
        );
        assert_eq!(handed, items[..handed.len()], "{threads} threads");
        assert!(handed.len() < 399);
        // The taker's error stops the map: it is not handed anything more.
        let mut calls = 0;
        let stopped = in_parallel_into(items.clone(), threads, 100, Ok, |_| {
            calls += 1;
            Err(Rejection::new(Code::SchemaViolation, "full"))
        });
        assert_eq!(stopped.unwrap_err().message(), "full");
        assert_eq!(calls, 1);
    }
    // No items: nothing is handed over.
    let none = in_parallel_into(Vec::<u32>::new(), 2, 1, Ok, |_| {
        Err::<(), _>(Rejection::new(Code::SchemaViolation, "handed nothing"))
    });
    assert!(none.is_ok());
}
