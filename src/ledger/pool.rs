//! The ledger's persistent verification pool: worker threads, started when the ledger first
//! verifies a batch (a ledger only read never starts them) and joined when it drops, that
//! parse and batch-verify (ZIP-215, PROFILE §4) shares of a
//! batch while the caller does something else — in [`super::Pipeline`], commit the previous
//! batch. Each share is one signature batch; results come back in input order.
//!
//! A share whose worker is gone (it cannot panic on any input; this keeps the contract) is
//! verified on the waiting thread instead, so a ticket always yields one result per item.

use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use crossbeam::channel::{bounded, unbounded, Receiver, Sender};

use crate::error::Rejection;
use crate::event::Event;
use crate::limits::MAX_VERIFY_THREADS;
use crate::proof::Verifier;

use super::verify_batch::verify_shared;

type Verdicts = Vec<Result<Event, Rejection>>;

/// Work for a worker.
enum Job {
    /// Parse and verify these items; send the verdicts to `reply`.
    Verify {
        items: Vec<Arc<[u8]>>,
        reply: Sender<Verdicts>,
    },
    /// Free these events (committed, no longer needed): workers allocated them, and memory
    /// is cheapest to free on the threads that allocated it — the committing thread would
    /// otherwise contend for the workers' allocator arenas on every event.
    Free(Vec<Event>),
}

/// Worker threads verifying batches for one ledger.
pub struct VerifyPool {
    verifier: Arc<Verifier>,
    threads: usize,
    started: OnceLock<Workers>,
}

/// The running workers and their queue.
struct Workers {
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

/// A batch being verified: [`Ticket::wait`] returns its results.
pub struct Ticket {
    verifier: Arc<Verifier>,
    shares: Vec<Share>,
}

/// One worker's part of a batch, and where its answer comes (`None`: it was not queued).
struct Share {
    items: Vec<Arc<[u8]>>,
    answer: Option<Receiver<Verdicts>>,
}

impl VerifyPool {
    /// A pool of `threads` workers (at least 1, at most [`MAX_VERIFY_THREADS`]), started on
    /// the first [`VerifyPool::submit`].
    pub fn new(verifier: Arc<Verifier>, threads: usize) -> Self {
        VerifyPool {
            verifier,
            threads: threads.clamp(1, MAX_VERIFY_THREADS),
            started: OnceLock::new(),
        }
    }

    /// The workers, started now if they were not. A worker the OS refuses to start is
    /// simply missing: its shares run on the waiting thread.
    fn workers(&self) -> &Workers {
        self.started.get_or_init(|| {
            let (jobs, queue) = unbounded::<Job>();
            let threads = (0..self.threads)
                .filter_map(|n| {
                    let queue = queue.clone();
                    let verifier = Arc::clone(&self.verifier);
                    std::thread::Builder::new()
                        .name(format!("akledger-verify-{n}"))
                        .spawn(move || {
                            while let Ok(job) = queue.recv() {
                                match job {
                                    Job::Verify { items, reply } => {
                                        let _ = reply.send(verify_shared(&items, &verifier));
                                    }
                                    Job::Free(events) => drop(events),
                                }
                            }
                        })
                        .ok()
                })
                .collect();
            Workers {
                jobs: Some(jobs),
                threads,
            }
        })
    }

    /// Splits `items` into one share per worker and queues them.
    pub fn submit(&self, items: Vec<Arc<[u8]>>) -> Ticket {
        let workers = self.workers();
        let share = items.len().div_ceil(workers.threads.len().max(1)).max(1);
        let shares = items
            .chunks(share)
            .map(|part| {
                let part = part.to_vec();
                let (reply, answer) = bounded(1);
                let job = Job::Verify {
                    items: part.clone(),
                    reply,
                };
                let queued = workers.jobs.as_ref().is_some_and(|q| q.send(job).is_ok());
                Share {
                    items: part,
                    answer: queued.then_some(answer),
                }
            })
            .collect();
        Ticket {
            verifier: Arc::clone(&self.verifier),
            shares,
        }
    }
}

impl VerifyPool {
    /// Hands `events` to a worker to free (or frees them here when no worker runs).
    pub fn free(&self, events: Vec<Event>) {
        if let Some(queue) = self.started.get().and_then(|w| w.jobs.as_ref()) {
            // A send fails only when no worker is left; the events are then freed here.
            let _ = queue.send(Job::Free(events));
        }
    }
}

impl Ticket {
    /// Blocks until every share is verified; one result per submitted item, in order.
    pub fn wait(self) -> Verdicts {
        let mut out = Vec::new();
        for Share { items, answer } in self.shares {
            match answer.and_then(|a| a.recv().ok()) {
                Some(verdicts) if verdicts.len() == items.len() => out.extend(verdicts),
                _ => out.extend(verify_shared(&items, &self.verifier)),
            }
        }
        out
    }
}

impl Drop for VerifyPool {
    fn drop(&mut self) {
        let Some(mut workers) = self.started.take() else {
            return;
        };
        // Closing the queue ends each worker's loop once the queued jobs are done.
        workers.jobs = None;
        for worker in workers.threads.drain(..) {
            let _ = worker.join();
        }
    }
}
