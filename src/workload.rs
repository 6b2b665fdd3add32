//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo: the
//! core's generators ([`akledger_core::workload`]), plus signing on several threads.

pub use akledger_core::workload::*;

use crate::error::{Code, Rejection};
use std::sync::Mutex;

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
/// the costly part of making events, and the fold's reads of a batch.
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
    // Each share waits in a slot for its thread to take it; a share whose thread cannot be
    // started is left there and mapped on the calling thread.
    let slots: Vec<Mutex<Vec<T>>> = std::iter::from_fn(|| {
        let part: Vec<T> = left.by_ref().take(share).collect();
        (!part.is_empty()).then(|| Mutex::new(part))
    })
    .collect();
    let f = &f;
    let map = |slot: &Mutex<Vec<T>>| -> Result<Vec<U>, Rejection> {
        let part = std::mem::take(&mut *slot.lock().map_err(|_| worker_panicked())?);
        part.into_iter().map(f).collect()
    };
    let parts = std::thread::scope(|s| {
        let started: Vec<_> = slots
            .iter()
            .map(|slot| {
                let thread = std::thread::Builder::new().spawn_scoped(s, move || map(slot));
                (slot, thread)
            })
            .collect();
        started
            .into_iter()
            .map(|(slot, thread)| match thread {
                Ok(thread) => thread.join().unwrap_or_else(|_| Err(worker_panicked())),
                Err(_) => map(slot),
            })
            .collect::<Vec<_>>()
    });
    let mut out = Vec::with_capacity(total);
    for part in parts {
        out.extend(part?);
    }
    Ok(out)
}

fn worker_panicked() -> Rejection {
    Rejection::new(Code::SchemaViolation, "a worker thread panicked")
}
