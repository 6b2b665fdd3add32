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
    let mut out = Vec::with_capacity(items.len());
    in_parallel_into(items, threads, usize::MAX, f, |mapped| {
        out.extend(mapped);
        Ok::<_, Rejection>(())
    })?;
    Ok(out)
}

/// [`in_parallel`], with the mapped items handed to `take` in order on the calling thread
/// while the threads map the rest: each call gets the items mapped since the last call
/// that follow it without a gap, once they are at least `at_least` (or all that are left).
/// So the caller writes what is signed while the rest is being signed. The first error, of
/// `f` (in order) or of `take`, stops the threads and comes back; what `take` was handed
/// before stays handed, nothing after it is.
pub fn in_parallel_into<T: Send, U: Send, E: From<Rejection>>(
    items: Vec<T>,
    threads: usize,
    at_least: usize,
    f: impl Fn(T) -> Result<U, Rejection> + Sync,
    take: impl FnMut(Vec<U>) -> Result<(), E>,
) -> Result<(), E> {
    let each = |piece: Vec<T>| piece.into_iter().map(&f).collect();
    in_parallel_pieces_into(items, threads, at_least, each, take)
}

/// [`in_parallel_into`] with `f` mapping a whole piece (up to 16 items) at a time: for work
/// that costs less done together (signing many events by one key). `f` must give one item
/// for each it is given, in order.
pub fn in_parallel_pieces_into<T: Send, U: Send, E: From<Rejection>>(
    items: Vec<T>,
    threads: usize,
    at_least: usize,
    f: impl Fn(Vec<T>) -> Result<Vec<U>, Rejection> + Sync,
    mut take: impl FnMut(Vec<U>) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads.max(1);
    if threads == 1 || items.len() < PARALLEL_MIN_ITEMS {
        let mut left = items.into_iter();
        let mut mapped = Vec::new();
        loop {
            let piece: Vec<T> = left.by_ref().take(PARALLEL_TAKE).collect();
            if piece.is_empty() {
                break;
            }
            mapped.extend(f(piece)?);
        }
        return if mapped.is_empty() {
            Ok(())
        } else {
            take(mapped)
        };
    }
    let mut left = items.into_iter();
    // Each piece waits in a slot for the first thread free to take it.
    let slots: Vec<Mutex<Vec<T>>> = std::iter::from_fn(|| {
        let piece: Vec<T> = left.by_ref().take(PARALLEL_TAKE).collect();
        (!piece.is_empty()).then(|| Mutex::new(piece))
    })
    .collect();
    let next = AtomicUsize::new(0);
    let (f, slots, next) = (&f, &slots, &next);
    // Each piece a thread mapped goes to the calling thread with its place.
    let (done, mapped) = crossbeam::channel::unbounded::<Mapped<U>>();
    let work = move |done: crossbeam::channel::Sender<Mapped<U>>| loop {
        let place = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = slots.get(place) else {
            return;
        };
        let piece = match slot.lock() {
            Ok(mut piece) => f(std::mem::take(&mut *piece)),
            Err(_) => Err(worker_panicked()),
        };
        if done.send((place, piece)).is_err() {
            return;
        }
    };
    std::thread::scope(|s| {
        let started: Vec<_> = (0..threads)
            .filter_map(|_| {
                let done = done.clone();
                std::thread::Builder::new()
                    .spawn_scoped(s, move || work(done))
                    .ok()
            })
            .collect();
        // If the OS would start no thread, the calling thread maps them all.
        if started.is_empty() {
            work(done);
        } else {
            drop(done);
        }
        let result = hand_over(&mapped, slots.len(), at_least, &mut take);
        if result.is_err() {
            // The threads take no further piece.
            next.store(slots.len(), Ordering::Relaxed);
        }
        drop(mapped);
        let joined = started.into_iter().all(|t| t.join().is_ok());
        result?;
        if joined {
            Ok(())
        } else {
            Err(worker_panicked().into())
        }
    })
}

/// The calling thread's side of [`in_parallel_into`]: puts the `pieces` pieces coming from
/// `mapped` back in order, and hands `take` each run of at least `at_least` items in order
/// (and the last run), with whatever else came in order by then.
fn hand_over<U, E: From<Rejection>>(
    mapped: &crossbeam::channel::Receiver<Mapped<U>>,
    pieces: usize,
    at_least: usize,
    take: &mut impl FnMut(Vec<U>) -> Result<(), E>,
) -> Result<(), E> {
    let mut early = std::collections::BTreeMap::new();
    let (mut in_order, mut run) = (0, Vec::new());
    // Moves the pieces that now follow the run onto it; the first error in order stops.
    let mut settle = |early: &mut std::collections::BTreeMap<usize, _>, run: &mut Vec<U>| {
        while let Some(piece) = early.remove(&in_order) {
            run.extend(piece?);
            in_order += 1;
        }
        Ok::<_, Rejection>(in_order)
    };
    loop {
        // Every thread gone before its pieces came: a thread panicked.
        let (place, piece) = mapped.recv().map_err(|_| worker_panicked())?;
        early.insert(place, piece);
        let mut settled = settle(&mut early, &mut run)?;
        if run.len() >= at_least || settled == pieces {
            early.extend(mapped.try_iter());
            settled = settle(&mut early, &mut run)?;
            if !run.is_empty() {
                take(std::mem::take(&mut run))?;
            }
        }
        if settled == pieces {
            return Ok(());
        }
    }
}

fn worker_panicked() -> Rejection {
    Rejection::new(Code::SchemaViolation, "a worker thread panicked")
}
