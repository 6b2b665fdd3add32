//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo: the
//! core's generators ([`akledger_core::workload`]), plus signing on several threads.

pub use akledger_core::workload::*;

use crate::error::{Code, Rejection};
use crate::event::{Event, Unverified};

/// Signs `planned` ([`RealmDag::plan`]) on up to `threads` threads, in order: the same
/// events as signing them one by one.
pub fn sign_all(planned: &[Unsigned], threads: usize) -> Result<Vec<Event<Unverified>>, Rejection> {
    in_parallel(planned.iter().collect(), threads, Unsigned::sign)
}

/// Below this many items, [`in_parallel`] runs on the calling thread: starting threads
/// costs more than the work saved.
const PARALLEL_MIN_ITEMS: usize = 64;

/// `items` mapped through `f` on up to `threads` scoped threads (each a contiguous share),
/// in order: what mapping them one by one gives, the first error included. For signing,
/// which is the costly part of making events.
pub fn in_parallel<T: Send, U: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(T) -> Result<U, Rejection> + Sync,
) -> Result<Vec<U>, Rejection> {
    let threads = threads.max(1);
    if threads == 1 || items.len() < PARALLEL_MIN_ITEMS {
        return items.into_iter().map(f).collect();
    }
    let total = items.len();
    let share = total.div_ceil(threads);
    let mut left = items.into_iter();
    let shares: Vec<Vec<T>> = std::iter::from_fn(|| {
        let part: Vec<T> = left.by_ref().take(share).collect();
        (!part.is_empty()).then_some(part)
    })
    .collect();
    let f = &f;
    let parts = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|part| s.spawn(move || part.into_iter().map(f).collect::<Result<Vec<U>, _>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(signing_panicked())))
            .collect::<Vec<_>>()
    });
    let mut out = Vec::with_capacity(total);
    for part in parts {
        out.extend(part?);
    }
    Ok(out)
}

fn signing_panicked() -> Rejection {
    Rejection::new(Code::SchemaViolation, "a signing thread panicked")
}
