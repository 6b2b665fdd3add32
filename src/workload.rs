//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo: the
//! core's generators ([`akledger_core::workload`]), plus signing on several threads.

pub use akledger_core::workload::*;

use crate::error::{Code, Rejection};
use crate::event::{Event, Unverified};

/// Signs `planned` ([`RealmDag::plan`]) on up to `threads` threads, in order: the same
/// events as signing them one by one.
pub fn sign_all(planned: &[Unsigned], threads: usize) -> Result<Vec<Event<Unverified>>, Rejection> {
    let threads = threads.max(1);
    if threads == 1 || planned.len() < 64 {
        return planned.iter().map(Unsigned::sign).collect();
    }
    let chunk = planned.len().div_ceil(threads);
    let parts = std::thread::scope(|s| {
        let handles: Vec<_> = planned
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(Unsigned::sign)
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(signing_panicked())))
            .collect::<Vec<_>>()
    });
    let mut out = Vec::with_capacity(planned.len());
    for part in parts {
        out.extend(part?);
    }
    Ok(out)
}

fn signing_panicked() -> Rejection {
    Rejection::new(Code::SchemaViolation, "a signing thread panicked")
}
