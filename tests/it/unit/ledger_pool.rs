use std::sync::Arc;

use akledger::internals::pool::{Items, Verified, VerifyPool, WAITER};
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

/// What became of each item (its id, or the code it was rejected with), how many workers'
/// shares the batch was cut into, and how many events they kept; the events go back to the
/// pool.
type Outcome = Result<akledger::EventId, akledger::Code>;
fn verify(pool: &VerifyPool, items: Items, in_flight: usize) -> (Vec<Outcome>, usize, usize) {
    let verified = pool.submit(items, in_flight).wait();
    let outcomes = outcomes(&verified);
    let shares = verified.parsed.len();
    let kept = verified.parsed.iter().map(|(_, events)| events.len()).sum();
    pool.free(verified.parsed);
    (outcomes, shares, kept)
}

/// What became of each item of a verified batch.
fn outcomes(verified: &Verified) -> Vec<Outcome> {
    verified
        .verdicts
        .iter()
        .map(|v| v.as_ref().map(|e| e.id()).map_err(|r| r.code()))
        .collect()
}

#[test]
fn a_batch_is_cut_into_only_as_many_shares_as_idle_workers_need() {
    let pool = VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 2);
    let items = items();
    let mut answers = Vec::new();
    // A lone batch on two threads (a worker and the waiting one): two shares, one each.
    // Two batches in flight (or more): each batch whole, on one thread.
    for (in_flight, shares) in [(0, 2), (1, 2), (2, 1), (3, 1)] {
        let (outcomes, cut, kept) = verify(&pool, Items::Each(items.clone()), in_flight);
        assert_eq!(cut, shares, "{in_flight} in flight");
        assert_eq!(kept, items.len() - 1);
        answers.push(outcomes);
    }
    // The same verdicts, in input order, however the batch was cut.
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    assert!(answers[0][..items.len() - 1].iter().all(Result::is_ok));
    assert!(answers[0][items.len() - 1].is_err());
}

#[test]
fn items_in_one_buffer_verify_as_items_each_in_their_own() {
    let pool = VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 2);
    let items = items();
    let (buffer, mut spans) = akledger_testkit::one_buffer(&items, b"");
    // A span past the buffer's end reads as an empty item: rejected, never a panic.
    spans.push(buffer.len()..buffer.len() + 10);
    let (each, ..) = verify(&pool, Items::Each(items.clone()), 1);
    let buffer = Arc::new(buffer);
    for in_flight in [1, 2] {
        let (spanned, ..) = verify(
            &pool,
            Items::Spans {
                buffer: Arc::clone(&buffer),
                spans: spans.clone(),
            },
            in_flight,
        );
        assert_eq!(spanned.len(), items.len() + 1);
        assert_eq!(spanned[..items.len()], each[..]);
        assert!(spanned[items.len()].is_err());
    }
}

#[test]
fn events_read_from_spans_share_the_buffer_until_they_are_freed() {
    let pool = VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 2);
    let items = items();
    let (buffer, spans) = akledger_testkit::one_buffer(&items, b"\n");
    let buffer = Arc::new(buffer);
    let verified = pool
        .submit(
            Items::Spans {
                buffer: Arc::clone(&buffer),
                spans,
            },
            1,
        )
        .wait();
    // Each accepted event holds its own bytes, not its neighbours' or the separator.
    for (verdict, item) in verified.verdicts.iter().zip(&items) {
        if let Ok(event) = verdict {
            assert_eq!(event.bytes(), &item[..]);
            assert_eq!(&event.shared_bytes()[..], &item[..]);
        }
    }
    assert!(
        Arc::strong_count(&buffer) > 1,
        "the events share the buffer"
    );
    // A detached copy, kept past the batch, holds bytes of its own.
    let kept = verified.verdicts[0].as_ref().unwrap().detached();
    drop(verified.verdicts);
    pool.free(verified.parsed);
    // Dropping the pool joins its workers, which free what they were handed back.
    drop(pool);
    assert_eq!(
        Arc::strong_count(&buffer),
        1,
        "nothing holds the buffer after"
    );
    assert_eq!(kept.bytes(), &items[0][..]);
    assert_eq!(kept.id(), akledger::Event::parse(&items[0]).unwrap().id());
}

#[test]
fn the_waiting_thread_verifies_what_no_worker_took() {
    // A pool for one thread starts no worker: whoever waits verifies the queued shares, its
    // own and those of batches submitted before or after it, in any order of waiting.
    let pool = VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 1);
    let items = items();
    let (each, ..) = verify(
        &VerifyPool::new(Arc::new(Verifier::new(Keyring::new())), 2),
        Items::Each(items.clone()),
        1,
    );
    let tickets: Vec<_> = (0..3)
        .map(|_| pool.submit(Items::Each(items.clone()), 3))
        .collect();
    for ticket in tickets.into_iter().rev() {
        let verified = ticket.wait();
        assert_eq!(outcomes(&verified), each);
        assert_eq!(verified.parsed.len(), 1);
        assert!(verified.parsed.iter().all(|(worker, _)| *worker == WAITER));
        pool.free(verified.parsed);
    }
}
