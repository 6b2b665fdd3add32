//! Parallel verification of a batch (crossbeam scoped threads), before the single-writer
//! commit: each thread parses its share and verifies the signatures as one ZIP-215 batch
//! (PROFILE §4), which gives the same answers as verifying them one by one. Results come
//! back in input order. The batch coefficients are drawn here, in the shell, from a ChaCha20
//! generator seeded from the OS RNG once per batch (the OS RNG directly would cost a system
//! call per signature).

use std::ops::Range;
use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, SeedableRng};

use crate::error::Rejection;
use crate::event::{Event, Unverified};
use crate::limits::MAX_BATCH_EVENTS;
use crate::proof::Verifier;

/// Parses and verifies every item, using up to `threads` threads.
pub fn verify_all<B: AsRef<[u8]> + Sync>(
    items: &[B],
    verifier: &Verifier,
    threads: usize,
) -> Vec<Result<Event, Rejection>> {
    let threads = threads.clamp(1, MAX_BATCH_EVENTS);
    if threads == 1 || items.len() < 2 {
        return verify_part(items, verifier);
    }
    let chunk = items.len().div_ceil(threads);
    let parts: Vec<Vec<Result<Event, Rejection>>> = crossbeam::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move |_| verify_part(part, verifier)))
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
        verify_part(items, verifier)
    }
}

/// Parses `items` and verifies the ones that parse as one signature batch.
pub fn verify_part<B: AsRef<[u8]>>(
    items: &[B],
    verifier: &Verifier,
) -> Vec<Result<Event, Rejection>> {
    verify_parsed(items.iter().map(|b| Event::parse(b.as_ref())), verifier)
}

/// [`verify_part`] of the items `buffer[spans[i]]`: each event keeps a share of `buffer`
/// instead of a copy of its bytes ([`Event::parse_span`]).
pub fn verify_spans(
    buffer: &Arc<Vec<u8>>,
    spans: &[Range<usize>],
    verifier: &Verifier,
) -> Vec<Result<Event, Rejection>> {
    verify_parsed(
        spans.iter().map(|s| Event::parse_span(buffer, s.clone())),
        verifier,
    )
}

/// Verifies parsed events as one batch, its coefficients drawn from a generator seeded
/// from the OS for this batch (unpredictable to whoever chose the signatures). Without OS
/// randomness there is no batch: each signature is checked alone, which gives the same
/// answers.
fn verify_parsed(
    parsed: impl Iterator<Item = Result<Event<Unverified>, Rejection>>,
    verifier: &Verifier,
) -> Vec<Result<Event, Rejection>> {
    match ChaCha20Rng::from_rng(OsRng) {
        Ok(coefficients) => Event::verify_batch(parsed, verifier, coefficients),
        Err(_) => parsed
            .map(|event| event.and_then(|e| e.verify(verifier)))
            .collect(),
    }
}
