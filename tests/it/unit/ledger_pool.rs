use std::sync::Arc;

use akledger::internals::pool::VerifyPool;
use akledger::{Keyring, Verifier};

/// Six notes and a copy of the first with a flipped byte in its signature's text (a
/// rejection), as the bytes a pool is given.
fn items() -> Vec<Arc<[u8]>> {
    let notes = akledger_testkit::notes(5, 10);
    let mut items: Vec<Arc<[u8]>> = notes.iter().map(|e| Arc::from(e.bytes())).collect();
    let mut bad = notes[1].bytes().to_vec();
    let at = bad.windows(2).rposition(|w| w == b"..").unwrap() + 7;
    bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
    items.push(bad.into());
    items
}

#[test]
fn a_batch_is_cut_into_only_as_many_shares_as_idle_workers_need() {
    let pool = VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 2);
    let items = items();
    let mut answers = Vec::new();
    // A lone batch on two workers: two shares, one each. Two batches in flight (or more):
    // each batch whole, on one worker.
    for (in_flight, shares) in [(0, 2), (1, 2), (2, 1), (3, 1)] {
        let verified = pool.submit(items.clone(), in_flight).wait();
        assert_eq!(verified.parsed.len(), shares, "{in_flight} in flight");
        let accepted: usize = verified.parsed.iter().map(|(_, events)| events.len()).sum();
        assert_eq!(accepted, items.len() - 1);
        answers.push(
            verified
                .verdicts
                .iter()
                .map(|v| v.as_ref().map(|e| e.id()).map_err(|r| r.code()))
                .collect::<Vec<_>>(),
        );
        pool.free(verified.parsed);
    }
    // The same verdicts, in input order, however the batch was cut.
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    assert!(answers[0][..items.len() - 1].iter().all(Result::is_ok));
    assert!(answers[0][items.len() - 1].is_err());
}
