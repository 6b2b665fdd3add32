//! The ledger's persistent verification pool: worker threads, started when the ledger first
//! verifies a batch (a ledger only read never starts them) and joined when it drops, that
//! parse and batch-verify (ZIP-215, PROFILE §4) shares of a
//! batch while the caller does something else — in [`super::Pipeline`], commit the previous
//! batch. Each share is one signature batch; results come back in input order. A batch is
//! cut into only as many shares as the batches in flight need to occupy every verifying
//! thread: a pipeline with a batch ahead per thread gives each thread whole batches, since
//! signature batches of 1000 cost about 9 % less per signature than two of 500.
//!
//! The waiting thread is one of the verifying threads: a pool for `n` threads starts `n - 1`
//! workers, and [`Ticket::wait`] verifies shares still queued (its own, or a later batch's)
//! while its answers are not in. On `n` cores that keeps `n` threads busy, where `n`
//! workers beside a committing thread made `n + 1` take turns on `n` cores: a 1 M-event
//! audit on 2 cores took 0.957 × the time this way (six alternated pairs, 0.926–0.993 ×).
//!
//! Memory stays with the thread that allocated it: a worker parses its share into events
//! of its own, and once the batch is committed those events go back to that same worker to
//! be freed ([`VerifyPool::free`]), at the latest before it parses its next share, so that
//! its parsing reuses their memory. (When both were waiting, the worker used to take either
//! first: a 1 M-event audit peaked at 226 MiB then, 180 MiB now; an import at 543 MiB,
//! 512 MiB now.) Freeing on another thread would take the allocating
//! thread's allocator lock for every event, which left the workers waiting on each other's
//! arenas. Items given one allocation each are copied into their events; items given as
//! spans of one buffer ([`Items::Spans`]) are not: each event keeps a share of the buffer,
//! which saves a worker an allocation per event too large for the allocator's thread cache
//! (and the consolidation of its free lists that each such request sets off). The buffer,
//! one allocation a batch, is the one exception to the rule above: whichever of its holders
//! is last lets it go (`append_log` keeps it to use again when that is its reader).
//!
//! A share whose worker is gone (it cannot panic on any input; this keeps the contract) is
//! verified on the waiting thread instead, so a ticket always yields one result per item.

use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use crossbeam::channel::{bounded, unbounded, Receiver, Sender};

use crate::error::Rejection;
use crate::event::Event;
use crate::limits::MAX_VERIFY_THREADS;
use crate::proof::Verifier;

use super::verify_batch::{verify_part, verify_spans};

type Verdicts = Vec<Result<Event, Rejection>>;

/// A batch's items: each in an allocation of its own, or spans of one buffer (how
/// [`Ledger::append_log`](crate::Ledger::append_log) reads them, so that its reading
/// thread makes one allocation a batch instead of one an item, and frees one too).
#[derive(Clone)]
pub enum Items {
    /// One allocation per item.
    Each(Vec<Arc<[u8]>>),
    /// Item `i` is `buffer[spans[i]]`.
    Spans {
        /// The items' bytes, one after another.
        buffer: Arc<Vec<u8>>,
        /// Where each item is in `buffer`.
        spans: Vec<Range<usize>>,
    },
}

impl Items {
    /// How many items.
    pub(crate) fn len(&self) -> usize {
        match self {
            Items::Each(items) => items.len(),
            Items::Spans { spans, .. } => spans.len(),
        }
    }

    /// Bytes of all the items.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Items::Each(items) => items.iter().map(|b| b.len()).sum(),
            // Only the bytes there are: a span outside the buffer is an empty item.
            Items::Spans { buffer, spans } => spans
                .iter()
                .map(|s| buffer.get(s.clone()).map_or(0, <[u8]>::len))
                .fold(0, usize::saturating_add),
        }
    }

    /// Items `range` of these (clamped to them), sharing their bytes.
    fn part(&self, range: Range<usize>) -> Items {
        let end = range.end.min(self.len());
        let range = range.start.min(end)..end;
        match self {
            Items::Each(items) => Items::Each(items.get(range).unwrap_or_default().to_vec()),
            Items::Spans { buffer, spans } => Items::Spans {
                buffer: Arc::clone(buffer),
                spans: spans.get(range).unwrap_or_default().to_vec(),
            },
        }
    }

    /// Parses and verifies every item as one signature batch.
    fn verify(&self, verifier: &Verifier) -> Verdicts {
        match self {
            Items::Each(items) => verify_part(items, verifier),
            Items::Spans { buffer, spans } => verify_spans(buffer, spans, verifier),
        }
    }
}

/// A worker's answer: its number ([`WAITER`] for a share verified by a waiting thread), one
/// verdict per item, and its own references to the accepted events (taken while they were
/// fresh in its cache), given back to be freed.
type Answer = (usize, Verdicts, Vec<Event>);

/// The worker number of a share verified by a waiting thread: its events are freed where
/// [`VerifyPool::free`] is called, the thread that waited for them.
pub const WAITER: usize = usize::MAX;

/// Parse and verify these items; send the verdicts, and who parsed them, to `reply`.
struct Job {
    items: Items,
    reply: Sender<Answer>,
}

impl Job {
    /// Verifies the items on this thread, worker `n`, and answers.
    fn run(self, n: usize, verifier: &Verifier) {
        let verdicts = self.items.verify(verifier);
        let keep = verdicts
            .iter()
            .filter_map(|v| v.as_ref().ok().cloned())
            .collect();
        let _ = self.reply.send((n, verdicts, keep));
    }
}

/// Worker threads verifying batches for one ledger.
pub struct VerifyPool {
    verifier: Arc<Verifier>,
    /// Verifying threads, the waiting one included.
    threads: usize,
    started: OnceLock<Workers>,
}

/// The running workers, the queue they share (and waiting threads take from), and each
/// worker's queue of events to free (by worker number; `None` for a worker the OS did not
/// start).
struct Workers {
    jobs: Option<Sender<Job>>,
    queue: Receiver<Job>,
    frees: Vec<Option<Sender<Vec<Event>>>>,
    threads: Vec<JoinHandle<()>>,
}

/// A batch being verified: [`Ticket::wait`] returns its results.
pub struct Ticket {
    verifier: Arc<Verifier>,
    shares: Vec<Share>,
    /// The pool's queue, to verify queued shares while waiting.
    queue: Receiver<Job>,
}

/// One worker's part of a batch, and where its answer comes (`None`: it was not queued).
struct Share {
    items: Items,
    answer: Option<Receiver<Answer>>,
}

/// A batch's verdicts, one per item in order, and the events each worker parsed: once the
/// batch is committed they go back to [`VerifyPool::free`].
pub struct Verified {
    /// One verdict per submitted item, in order.
    pub verdicts: Verdicts,
    /// The accepted events by the worker that parsed them (empty for events parsed on the
    /// calling thread).
    pub parsed: Vec<(usize, Vec<Event>)>,
}

impl Verified {
    /// Verdicts reached on the calling thread: nothing to hand back.
    pub fn here(verdicts: Verdicts) -> Self {
        Verified {
            verdicts,
            parsed: Vec::new(),
        }
    }
}

impl VerifyPool {
    /// A pool for `threads` verifying threads (at least 1, at most [`MAX_VERIFY_THREADS`]):
    /// the thread waiting for a batch, and `threads - 1` workers, started on the first
    /// [`VerifyPool::submit`].
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
            let workers = self.threads - 1;
            let mut frees = Vec::with_capacity(workers);
            let mut threads = Vec::with_capacity(workers);
            for n in 0..workers {
                let queue = queue.clone();
                let (free, to_free) = unbounded::<Vec<Event>>();
                let verifier = Arc::clone(&self.verifier);
                let started = std::thread::Builder::new()
                    .name(format!("akledger-verify-{n}"))
                    .spawn(move || work(n, &queue, &to_free, &verifier));
                // A worker the OS refused keeps its number: its slot stays empty.
                match started {
                    Ok(thread) => {
                        threads.push(thread);
                        frees.push(Some(free));
                    }
                    Err(_) => frees.push(None),
                }
            }
            Workers {
                jobs: Some(jobs),
                queue,
                frees,
                threads,
            }
        })
    }

    /// Queues `items` for verification; never blocks. `in_flight` is how many batches the
    /// caller keeps verifying at once (1 for a lone batch, a pipeline's depth): the batch
    /// is cut into just enough shares for that many batches to occupy every verifying
    /// thread (the workers and the waiting one). Cut further, each signature batch is
    /// smaller and costs more per signature (`docs/performance.md`).
    pub fn submit(&self, items: Items, in_flight: usize) -> Ticket {
        let workers = self.workers();
        let threads = workers.threads.len() + 1;
        let shares = threads.div_ceil(in_flight.max(1));
        let share = items.len().div_ceil(shares).max(1);
        let shares = (0..items.len())
            .step_by(share)
            .map(|start| {
                let part = items.part(start..start.saturating_add(share));
                let (reply, answer) = bounded(1);
                let job = Job {
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
            queue: workers.queue.clone(),
        }
    }

    /// Hands the events of a committed batch back to the workers that parsed them, to be
    /// freed there (those a waiting thread parsed, and those of a worker no longer running,
    /// are freed here).
    pub fn free(&self, verified: Vec<(usize, Vec<Event>)>) {
        let frees = self
            .started
            .get()
            .map(|w| w.frees.as_slice())
            .unwrap_or(&[]);
        for (worker, events) in verified {
            if let Some(queue) = frees.get(worker).and_then(Option::as_ref) {
                let _ = queue.send(events);
            }
        }
    }
}

/// Worker `n`'s loop: verify shares from the shared queue, free what comes back on its
/// own; ends when the shared queue closes.
fn work(n: usize, queue: &Receiver<Job>, to_free: &Receiver<Vec<Event>>, verifier: &Verifier) {
    loop {
        crossbeam::channel::select! {
            recv(queue) -> job => match job {
                Ok(job) => {
                    // What came back is freed before the share is parsed, so that parsing
                    // reuses that memory (`select!` picks at random among ready cases).
                    to_free.try_iter().for_each(drop);
                    job.run(n, verifier);
                }
                Err(_) => return,
            },
            recv(to_free) -> events => drop(events),
        }
    }
}

impl Ticket {
    /// The answer of one share, verifying queued shares until it comes (its own among
    /// them, if no worker took it); `None` if its worker is gone.
    fn answer(
        queue: &Receiver<Job>,
        verifier: &Verifier,
        answer: &Receiver<Answer>,
    ) -> Option<Answer> {
        loop {
            crossbeam::channel::select_biased! {
                recv(answer) -> answer => return answer.ok(),
                recv(queue) -> job => match job {
                    Ok(job) => job.run(WAITER, verifier),
                    // The pool is gone and its queue empty: the answer comes, or never.
                    Err(_) => return answer.recv().ok(),
                },
            }
        }
    }

    /// Blocks until every share is verified, verifying queued shares meanwhile (this
    /// batch's, or later ones'); one result per submitted item, in order.
    pub fn wait(self) -> Verified {
        let mut verdicts = Vec::new();
        let mut parsed = Vec::new();
        let Ticket {
            verifier,
            shares,
            queue,
        } = self;
        for Share { items, answer } in shares {
            match answer.and_then(|answer| Ticket::answer(&queue, &verifier, &answer)) {
                Some((worker, share, keep)) if share.len() == items.len() => {
                    parsed.push((worker, keep));
                    // A batch verified whole keeps its worker's vector rather than a copy.
                    if verdicts.is_empty() {
                        verdicts = share;
                    } else {
                        verdicts.extend(share);
                    }
                }
                _ => verdicts.extend(items.verify(&verifier)),
            }
        }
        Verified { verdicts, parsed }
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
