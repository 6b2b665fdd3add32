//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo: the
//! core's generators ([`akledger_core::workload`]), plus signing on several threads.

pub use akledger_core::workload::*;

use crate::error::{Code, Rejection};
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// A piece of [`in_parallel`]'s items, mapped, with its place among them.
type Mapped<U> = (usize, Result<Vec<U>, Rejection>);

/// Items a thread takes at a time in [`in_parallel`]: few enough that when the machine
/// slows one thread (another process on its core), the others take what it has not reached
/// (a share fixed up front made every batch wait for the slowest thread), and enough that
/// taking them costs nothing beside the work (a signature is some 25 µs).
const PARALLEL_TAKE: usize = 16;

/// `items` mapped through `f` on up to `threads` scoped threads, each taking the next 16
/// items while any are left, in order: what mapping them one by one gives, the first error
/// included. For signing, the costly part of making events, and the fold's reads of a batch.
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
    let mut left = items.into_iter();
    // Each piece waits in a slot for the first thread free to take it.
    let slots: Vec<Mutex<Vec<T>>> = std::iter::from_fn(|| {
        let piece: Vec<T> = left.by_ref().take(PARALLEL_TAKE).collect();
        (!piece.is_empty()).then(|| Mutex::new(piece))
    })
    .collect();
    let next = AtomicUsize::new(0);
    let (f, slots, next) = (&f, &slots, &next);
    // The pieces a thread mapped, each with its place.
    let work = move || -> Result<Vec<Mapped<U>>, Rejection> {
        let mut mapped = Vec::new();
        loop {
            let place = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(place) else {
                return Ok(mapped);
            };
            let piece = std::mem::take(&mut *slot.lock().map_err(|_| worker_panicked())?);
            mapped.push((place, piece.into_iter().map(f).collect()));
        }
    };
    let mut pieces = std::thread::scope(|s| {
        let started: Vec<_> = (0..threads)
            .map(|_| std::thread::Builder::new().spawn_scoped(s, work))
            .collect();
        let mut pieces = Vec::with_capacity(slots.len());
        // A thread the OS would not start leaves its pieces to the others; if none
        // started, the calling thread maps them all.
        for thread in started.into_iter().flatten() {
            pieces.extend(thread.join().unwrap_or_else(|_| Err(worker_panicked()))?);
        }
        pieces.extend(work()?);
        Ok::<_, Rejection>(pieces)
    })?;
    pieces.sort_unstable_by_key(|(place, _)| *place);
    let mut out = Vec::with_capacity(total);
    for (_, piece) in pieces {
        out.extend(piece?);
    }
    Ok(out)
}

fn worker_panicked() -> Rejection {
    Rejection::new(Code::SchemaViolation, "a worker thread panicked")
}
