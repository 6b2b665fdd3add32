//! Parallel verification of a batch (crossbeam scoped threads), before the single-writer
//! commit. Pure apart from the threads: results come back in input order.

use crate::error::Rejection;
use crate::event::Event;
use crate::limits::MAX_BATCH_EVENTS;
use crate::proof::Verifier;

/// Parses and verifies every item, using up to `threads` threads.
pub fn verify_all<B: AsRef<[u8]> + Sync>(
    items: &[B],
    verifier: &Verifier,
    threads: usize,
) -> Vec<Result<Event, Rejection>> {
    let one = |b: &B| Event::from_bytes(b.as_ref(), verifier);
    let threads = threads.clamp(1, MAX_BATCH_EVENTS);
    if threads == 1 || items.len() < 2 {
        return items.iter().map(one).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let parts: Vec<Vec<Result<Event, Rejection>>> = crossbeam::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move |_| part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    })
    .unwrap_or_default();
    let out: Vec<_> = parts.into_iter().flatten().collect();
    if out.len() == items.len() {
        out
    } else {
        // A verification thread panicked (it cannot on any input; this keeps the contract).
        items.iter().map(one).collect()
    }
}
