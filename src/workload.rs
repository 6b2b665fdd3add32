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

#[cfg(test)]
mod tests {
    use super::*;

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
}
