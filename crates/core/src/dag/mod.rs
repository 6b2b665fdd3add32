//! Causal DAG reachability index over dense `u32` positions.
//!
//! This module owns the pure, in-memory index of the causal DAG of admitted events:
//! parents, ledger heads, coverage / ancestry queries, deterministic linear extensions
//! and set differences.  No IO, no clock, no randomness, no hashing on walks.
//!
//! # Model
//!
//! Events get a dense [`Pos`] in admission order; parents are admitted before children,
//! so position order is a topological order.  Event `x` is *covered* by a set `H` when
//! `x ∈ H` or `x` is an ancestor of some `h ∈ H`.  The *maximal heads* of a set `S` are
//! the members of `S` covered by no other member; the *ledger heads* are the maximal
//! heads of all events.  All answers are exact.
//!
//! # Design
//!
//! * **Parents** are stored CSR-style (`parent_off` / `parent_tgt`), deduplicated, in the
//!   caller's order; every per-event field is dense, indexed by position (generation
//!   numbers as 32-bit distances from their block's first, `generations.rs`).
//! * **Generation numbers** (git commit-graph v2 "corrected commit date"):
//!   `gen(x) = max(stamp(x), max(gen(parent)) + 1)`.  If `gen(a) >= gen(b)` and
//!   `a != b`, `a` is not an ancestor of `b`; this (and `pos`) prunes targeted walks.
//! * **Online chain decomposition** (Jagadish; Felsner et al. for append-only DAGs): a
//!   new event extends the chain of its *first* parent (in the caller's order) that is
//!   currently a chain tip, otherwise it starts a new chain.  Each event gets
//!   `(chain, seq)` with 1-based `seq`; members of a chain form a path, so the members of
//!   chain `c` covered by any set form a *prefix* `1..=acc[c]`.  Coverage of `x` by a set
//!   is therefore `acc[chain(x)] >= seq(x)`.  Correctness never depends on the chain
//!   choice, only speed does: the ledger should list the author's own previous event
//!   first so that chains follow writers.
//! * **Checkpoint chain clocks**: every `k`-th member of a chain stores its full chain
//!   clock (for each chain, the covered prefix length), with
//!   `k = max(8, ceil(4·#chains / 16))`, so clocks cost ≤ ~16 B/event amortised whatever
//!   the number of writers (a dense vector clock per event would cost 4·W B), and half that
//!   when a clock's entries lie within 2¹⁶ of one another, as they do when writers move
//!   together (`clocks.rs` stores such a clock in 16-bit offsets).  Per-event
//!   data is immutable once written (append-only, as in the SEA 2025 incremental
//!   reachability index), hence rebuild == incremental.
//! * **Running clocks** (`running.rs`): the clock of every chain's tip is kept up to date
//!   as events arrive (the join of the parents' clocks), so a checkpoint copies its clock
//!   instead of walking for it; a parent whose clock is not at hand (not a tip, not recently
//!   superseded, not cached) makes its chain walk at its next checkpoint, as before.  A
//!   cache of exact answers: it changes no stored byte.
//! * **Queries** run a closure walk whose scratch is one `u32` per *chain* (not per
//!   event): expanding `(c, s)` joins the floor checkpoint clock of chain `c` and walks only
//!   the members above it.  A targeted walk (`covers`) additionally answers "yes" from a
//!   floor checkpoint clock, answers "no" for a whole chain prefix from the ceiling
//!   checkpoint clock, and stops at members older than the target (position / generation
//!   cut).  For an old target and the ledger heads this is one binary search and one
//!   clock read per basis member: no walk.  Set-valued answers (`ancestors_of`,
//!   `difference`) compute the per-chain prefix once and then read positions off the
//!   chains, so they are output-sensitive.
//!
//! `DagIndex` holds no interior mutability and is `Send + Sync`; each query allocates
//! O(#chains) scratch.
//!
//! A targeted `covers` first scans the basis for a member on the target's own chain at or
//! above it (the common case for ledger heads), then falls back to the walk above.
//!
//! # Measured
//!
//! `cargo bench --bench dag` (criterion means, 2-core shared machine, synthetic DAG with
//! round-robin writers, basis = ledger heads).  1 M events / 8 writers: `heads` 1.0 ns;
//! `covers` recent 80 ns vs BFS 17.2 µs, old 62 ns vs BFS 22.9 ms (~370 000×);
//! `heads_of` 100 ids 6.6 µs; full ancestor set 3.0 ms; rebuild 0.14 s (0.55 s walking
//! for every checkpoint); 40.1 B/event.  1 M events / 64 writers: `heads` 0.9 ns; `covers`
//! recent 469 ns vs BFS 18.2 µs, old 92 ns vs BFS 20.7 ms (~220 000×); `heads_of` 8.4 µs;
//! full ancestor set 1.1 ms; rebuild 0.15 s (1.29 s walking); 50.7 B/event.  Smaller
//! sizes: 10 k events 47.8 / 77.4 B/event, 100 k events 42.6 / 57.4 B/event (8 / 64
//! writers; the running clocks' fixed ~80 KB shows at 10 k).  Since checkpoint clocks are
//! kept in 16-bit offsets where they fit and generation numbers in 32-bit distances:
//! 33.7 / 38.3 B/event at 1 M (8 / 64 writers), 36.0 / 43.0 at 100 k, 40.6 / 60.3 at 10 k,
//! with the queries' times unchanged within the noise of one run.

mod chains;
mod clocks;
mod generations;
mod heads;
mod narrow;
mod order;
mod query;
pub(crate) mod running;
mod snapshot;
mod source;
mod walk;

pub use clocks::ClockEntries;
pub use query::Covered;
pub use source::{covers, heads_of, ChainSource, ClockAt};

use chains::{checkpoint_spacing, Chain, Checkpoint};
use clocks::ClockPool;
use generations::Generations;
use heads::Heads;
use narrow::Narrow;
use running::RunningClocks;
use walk::Walk;

/// Dense position of an admitted event (admission order; a topological order).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Pos(u32);

impl Pos {
    /// Wraps a raw position.
    pub const fn new(raw: u32) -> Self {
        Pos(raw)
    }

    /// The raw position.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The position as a `usize` index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<u32> for Pos {
    fn from(raw: u32) -> Self {
        Pos(raw)
    }
}

/// Errors returned by [`DagIndex::insert`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DagError {
    /// A parent position has not been inserted yet.
    #[error("unknown parent at position {} (index holds {len} events)", parent.index())]
    UnknownParent {
        /// The offending parent.
        parent: Pos,
        /// Number of events in the index at the time.
        len: usize,
    },
    /// The index is full (`u32` positions or edge offsets exhausted).
    #[error("dag index is full")]
    Full,
}

/// The causal DAG reachability index.  See the module documentation.
///
/// `PartialEq` compares all stored state (not capacities, nor where each clock lies in the
/// pool, nor the running clocks, a cache of exact answers), so a rebuilt or loaded index can be compared with an incrementally
/// built one.
#[derive(Clone, Debug)]
pub struct DagIndex {
    /// CSR offsets into `parent_tgt`; `len() + 1` entries.
    parent_off: Vec<u32>,
    /// Deduplicated parents, caller's order.
    parent_tgt: Vec<Pos>,
    /// Corrected generation numbers (`generations.rs`: about four bytes each).
    gen: Generations,
    /// Chain id of each event (`narrow.rs`: two bytes each while they fit).
    chain_of: Narrow,
    /// 1-based sequence number of each event in its chain (two bytes each while they fit).
    seq_of: Narrow,
    /// Chains, by id.
    chains: Vec<Chain>,
    /// The checkpoint clocks (`clocks.rs`).
    clocks: ClockPool,
    /// Ledger heads, ascending.
    heads: Heads,
    /// Chain tips' clocks, so checkpoints rarely walk (`running.rs`).
    running: RunningClocks,
}

impl PartialEq for DagIndex {
    fn eq(&self, other: &Self) -> bool {
        self.parent_off == other.parent_off
            && self.parent_tgt == other.parent_tgt
            && self.gen == other.gen
            && self.chain_of == other.chain_of
            && self.seq_of == other.seq_of
            && self.heads == other.heads
            && self.same_chains(other)
    }
}

impl DagIndex {
    /// Whether both hold the same chains, checkpoints and clocks (where each clock lies in
    /// its pool depends on the order the checkpoints were stored in, not compared).
    fn same_chains(&self, other: &Self) -> bool {
        self.chains.len() == other.chains.len()
            && self
                .chains
                .iter()
                .zip(&other.chains)
                .enumerate()
                .all(|(c, (a, b))| {
                    let c = c as u32;
                    a.members == b.members
                        && self
                            .checkpoint_clocks(c)
                            .map(|(seq, clock)| (seq, clock.to_vec()))
                            .eq(other
                                .checkpoint_clocks(c)
                                .map(|(seq, clock)| (seq, clock.to_vec())))
                })
    }
}

impl Eq for DagIndex {}

impl Default for DagIndex {
    fn default() -> Self {
        DagIndex::new()
    }
}

impl DagIndex {
    /// An empty index.
    pub fn new() -> Self {
        DagIndex::with_capacity(0)
    }

    /// An empty index with the given running clocks.
    #[cfg(feature = "internals")]
    pub(crate) fn with_running(running: RunningClocks) -> Self {
        DagIndex {
            running,
            ..DagIndex::new()
        }
    }

    /// The running clocks.
    #[cfg(feature = "internals")]
    pub(crate) fn running_clocks(&self) -> &RunningClocks {
        &self.running
    }

    /// An empty index with room for `n` events (parents assumed ~2 per event).
    pub fn with_capacity(n: usize) -> Self {
        let mut parent_off = Vec::with_capacity(n.saturating_add(1));
        parent_off.push(0);
        DagIndex {
            parent_off,
            parent_tgt: Vec::with_capacity(n.saturating_mul(2)),
            gen: Generations::with_capacity(n),
            chain_of: Narrow::with_capacity(n),
            seq_of: Narrow::with_capacity(n),
            chains: Vec::new(),
            clocks: ClockPool::default(),
            heads: Heads::default(),
            running: RunningClocks::default(),
        }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.gen.len()
    }

    /// Whether the index holds no event.
    pub fn is_empty(&self) -> bool {
        self.gen.len() == 0
    }

    /// Number of parent edges (each event's parents, deduplicated, counted once).
    pub fn edge_count(&self) -> usize {
        self.parent_tgt.len()
    }

    /// Number of chains of the decomposition (diagnostics).
    pub fn chain_count(&self) -> usize {
        self.chains.len()
    }

    /// Admits an event with the given parents and millisecond stamp; returns its position
    /// (the next dense position).  Duplicate parents are tolerated (stored once, first
    /// occurrence order kept).  Every parent must already exist, otherwise
    /// [`DagError::UnknownParent`] is returned and the index is unchanged.
    pub fn insert(&mut self, parents: &[Pos], stamp: u64) -> Result<Pos, DagError> {
        let len = self.len();
        if let Some(&parent) = parents.iter().find(|p| p.index() >= len) {
            return Err(DagError::UnknownParent { parent, len });
        }
        let raw = u32::try_from(len).map_err(|_| DagError::Full)?;
        if raw == u32::MAX {
            return Err(DagError::Full);
        }
        let x = Pos(raw);
        // The parents, deduplicated, go straight to the edge list; everything below reads
        // them there. Only this and the error right after it touch it before the write
        // phase, so an error leaves the index unchanged.
        let start = self.parent_tgt.len();
        append_unique(&mut self.parent_tgt, parents);
        let Ok(end) = u32::try_from(self.parent_tgt.len()) else {
            self.parent_tgt.truncate(start);
            return Err(DagError::Full);
        };
        let uniq = self.parent_tgt.get(start..).unwrap_or_default();

        // Generation number and chain choice (read-only phase).
        let mut gen = stamp;
        for &p in uniq {
            let g = self.generation(p).unwrap_or(0).saturating_add(1);
            gen = gen.max(g);
        }
        let extend = uniq.iter().find_map(|&p| {
            let c = self.chain_of.get(p.index())?;
            let chain = self.chains.get(c as usize)?;
            (chain.tip() == Some(p)).then_some((c, p))
        });

        // Write phase.
        self.parent_off.push(end);
        self.gen.push(gen);
        let c = match extend {
            Some((c, _)) => c,
            None => {
                let c = u32::try_from(self.chains.len()).map_err(|_| DagError::Full)?;
                self.chains.push(Chain::default());
                c
            }
        };
        let seq = match self.chains.get_mut(c as usize) {
            Some(chain) => {
                chain.members.push(x);
                chain.len_u32()
            }
            None => 1, // unreachable: `c` was just validated or created
        };
        self.chain_of.push(c);
        self.seq_of.push(seq);
        // Heads stay ascending (`x` is the greatest position): a parent that was a head is
        // found by binary search and removed moving the shorter side of it (`heads.rs`), so
        // an event naming parents among many heads costs O(parents · log heads) and, when
        // a parent is near either end of the heads, no more.
        for &p in uniq {
            self.heads.remove(p);
        }
        self.heads.push(x);
        let mut running = std::mem::take(&mut self.running);
        running.observe(self, (c, seq), uniq, extend.map(|(_, p)| p));
        self.running = running;
        self.maybe_checkpoint(c, seq, x);
        Ok(x)
    }

    fn maybe_checkpoint(&mut self, c: u32, seq: u32, x: Pos) {
        let last = self
            .chains
            .get(c as usize)
            .map_or(0, Chain::last_checkpoint_seq);
        if seq < last.saturating_add(checkpoint_spacing(self.chains.len())) {
            return;
        }
        let clock = match self.running.checkpoint(c) {
            Some(clock) => clock,
            None => {
                let mut walk = Walk::full(self);
                walk.push(x);
                walk.run();
                let mut clock = walk.into_acc();
                running::trim(&mut clock);
                self.running.walked(c, &clock);
                clock
            }
        };
        let clock = self.clocks.push(&clock);
        if let Some(chain) = self.chains.get_mut(c as usize) {
            chain.checkpoints.push(Checkpoint { seq, clock });
        }
    }

    /// Parents of `x` (deduplicated, caller's order); empty for unknown positions.
    pub fn parents(&self, x: Pos) -> &[Pos] {
        let i = x.index();
        let (Some(&a), Some(&b)) = (self.parent_off.get(i), self.parent_off.get(i + 1)) else {
            return &[];
        };
        self.parent_tgt.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// Corrected generation number of `x` (`None` for unknown positions).
    pub fn generation(&self, x: Pos) -> Option<u64> {
        self.gen.get(x.index())
    }

    /// Ledger heads (events without children), ascending by position.  O(1).
    pub fn heads(&self) -> &[Pos] {
        self.heads.as_slice()
    }

    /// Approximate heap bytes used by the index.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.parent_off.capacity() * size_of::<u32>()
            + self.parent_tgt.capacity() * size_of::<Pos>()
            + self.gen.heap_bytes()
            + self.chain_of.heap_bytes()
            + self.seq_of.heap_bytes()
            + self.chains.capacity() * size_of::<Chain>()
            + self.chains.iter().map(Chain::heap_bytes).sum::<usize>()
            + self.clocks.heap_bytes()
            + self.heads.heap_bytes()
            + self.running.heap_bytes()
    }

    /// `(chain, seq)` of `x`.
    pub(crate) fn chain_seq(&self, x: Pos) -> Option<(u32, u32)> {
        let c = self.chain_of.get(x.index())?;
        let s = self.seq_of.get(x.index())?;
        Some((c, s))
    }

    /// The members of chain `c` in chain order (member `k` has sequence number `k + 1`);
    /// empty for an unknown chain. With [`DagIndex::checkpoint_clocks`], what a
    /// [`ChainSource`] kept elsewhere is written from.
    pub fn chain_members(&self, c: u32) -> &[Pos] {
        self.chains
            .get(c as usize)
            .map_or(&[], |chain| chain.members.as_slice())
    }

    /// Chain `c`'s checkpoints, ascending by sequence number: each one's sequence number
    /// and clock.
    pub fn checkpoint_clocks(&self, c: u32) -> impl Iterator<Item = (u32, ClockEntries<'_>)> {
        self.chains
            .get(c as usize)
            .into_iter()
            .flat_map(|chain| chain.checkpoints.iter())
            .map(|k| (k.seq, self.clocks.entries(&k.clock)))
    }

    /// Clock entries stored narrow and wide (`clocks.rs`).
    pub fn clock_entries_stored(&self) -> (usize, usize) {
        self.clocks.stored()
    }
}

/// Appends `parents` to `out`, each once, in the order they first occur (what `out` held
/// before is not looked at).
fn append_unique(out: &mut Vec<Pos>, parents: &[Pos]) {
    let start = out.len();
    if parents.len() <= 32 {
        for &p in parents {
            if !out.get(start..).unwrap_or_default().contains(&p) {
                out.push(p);
            }
        }
    } else {
        let mut sorted = parents.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut seen = vec![false; sorted.len()];
        for &p in parents {
            if let Ok(i) = sorted.binary_search(&p) {
                if let Some(s) = seen.get_mut(i) {
                    if !*s {
                        *s = true;
                        out.push(p);
                    }
                }
            }
        }
    }
}
