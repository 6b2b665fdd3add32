//! The graph file, `DIR/graph`: the admitted DAG laid out to be read a page at a time, so
//! that one causal query on a ledger nobody has open (`akledger heads-of`) reads the few
//! pages it needs instead of loading the whole state (the idea of git's commit-graph file:
//! ids sorted for lookup, parents and generation numbers by position).
//!
//! This module owns the layout (byte diagram in `docs/format.md`) and its encoding from the
//! in-memory [`State`]; [`view`] reads it. Like the state snapshot it is derived and
//! optional: written when a writer closes (by `close` when anything was written since the
//! last one, by a drop when 4096 entries were; checkpoints while open skip it), atomically;
//! a view uses it
//! only when it describes exactly the log on disk (same last batch, and the log holds its
//! last event where it says), and every page it reads must match its checksum. Anything
//! else — absent, stale, damaged — and the query opens the ledger instead.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

pub mod view;

use std::path::Path;

use crate::codec::{put_u32, put_u64, Out};
use crate::dag::{ChainSource, DagIndex, Pos};
use crate::limits::{GRAPH_FANOUT_BITS, GRAPH_PAGE_BYTES};
use crate::store::log::{HighWater, LogPos};

use super::derived::Derived;
use super::state::State;

/// File magic and format version. Version 4 checks pages with xxh3-128 where version 3
/// used blake3 (a tenth of a whole `heads-of` process went to hashing its pages); a file
/// of another version is not used and is written anew when a writer closes.
const MAGIC: [u8; 8] = *b"AKGRAPH\x04";
/// Where the magic is.
pub(crate) const MAGIC_BYTES: std::ops::Range<usize> = 0..8;
/// Where the header holds the log batch the file was taken after (seq, segment, offset).
pub(crate) const HIGH_WATER_BYTES: std::ops::Range<usize> = 40..60;
/// Bytes of the fixed header (magic, checksum, fields).
pub const HEADER_BYTES: u64 = 153;
/// Bytes of the header covered by its checksum, which also covers the page table.
pub const HEADER_FIELDS: std::ops::Range<usize> = 40..153;
/// Bytes of one page checksum in the page table.
pub const PAGE_SUM_BYTES: u64 = 16;

/// Where the page table starts, for a file of `pages` body pages: after the header and the
/// table's own checksums, one per [`GRAPH_PAGE_BYTES`] of it (the header's checksum covers
/// those, so a query checks the table a chunk at a time, as it reads it).
pub fn table_at(pages: u64) -> u64 {
    HEADER_BYTES + table_chunks(pages) * PAGE_SUM_BYTES
}

/// Chunks of the page table of a file of `pages` body pages.
pub fn table_chunks(pages: u64) -> u64 {
    (pages * PAGE_SUM_BYTES).div_ceil(GRAPH_PAGE_BYTES)
}

/// Where the body starts, for a file of `pages` body pages.
pub fn body_at(pages: u64) -> u64 {
    table_at(pages) + pages * PAGE_SUM_BYTES
}
/// Buckets of the fanout table.
const FANOUT: u64 = 1 << GRAPH_FANOUT_BITS;
/// Bytes of one sorted entry: the id's 33 bytes and its position.
const SORTED_ENTRY: u64 = 37;
/// Bytes of one checkpoint: its sequence number, its clock's start and length.
const CHECKPOINT_ENTRY: u64 = 16;

/// Where each section of the body starts, for `n` events, `m` parent edges, `chains`
/// chains, `checkpoints` checkpoints and `clock_entries` entries of their clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub n: u64,
    pub m: u64,
    pub chains: u64,
    pub checkpoints: u64,
    pub clock_entries: u64,
}

impl Layout {
    fn sorted(self) -> u64 {
        FANOUT * 4
    }
    fn gen(self) -> u64 {
        self.sorted() + self.n * SORTED_ENTRY
    }
    fn parent_off(self) -> u64 {
        self.gen() + self.n * 8
    }
    fn parents(self) -> u64 {
        self.parent_off() + (self.n + 1) * 4
    }
    fn chain_seq(self) -> u64 {
        self.parents() + self.m * 4
    }
    fn chain_off(self) -> u64 {
        self.chain_seq() + self.n * 8
    }
    fn members(self) -> u64 {
        self.chain_off() + (self.chains + 1) * 4
    }
    fn checkpoint_off(self) -> u64 {
        self.members() + self.n * 4
    }
    fn checkpoints(self) -> u64 {
        self.checkpoint_off() + (self.chains + 1) * 4
    }
    fn clocks(self) -> u64 {
        self.checkpoints() + self.checkpoints * CHECKPOINT_ENTRY
    }
    pub fn body_len(self) -> u64 {
        self.clocks() + self.clock_entries * 4
    }
    fn pages(self) -> u64 {
        self.body_len().div_ceil(GRAPH_PAGE_BYTES)
    }
}

/// The fanout bucket of an id: the first digest bits, uniformly spread.
fn bucket(raw: &[u8; 33]) -> usize {
    let [_, a, b, ..] = *raw;
    (usize::from(a) << 8 | usize::from(b)) >> (16 - GRAPH_FANOUT_BITS)
}

/// Where in its bucket an id about lies, as a fraction of 2^32: the digest bits after the
/// bucket's, uniformly spread like them.
fn place_in_bucket(raw: &[u8; 33]) -> u64 {
    let [_, a, b, c, d, e, ..] = *raw;
    let bits = u64::from_be_bytes([0, 0, 0, a, b, c, d, e]);
    (bits << GRAPH_FANOUT_BITS >> 8) & 0xffff_ffff
}

/// The order of the sorted table: digest bytes first (so buckets are contiguous), then the
/// suite byte.
fn sort_key(raw: &[u8; 33]) -> (&[u8], u8) {
    (&raw[1..], raw[0])
}

/// The checksum of one page, as the page table stores it.
pub fn page_sum(page: &[u8]) -> [u8; PAGE_SUM_BYTES as usize] {
    xxhash_rust::xxh3::xxh3_128(page).to_le_bytes()
}

impl State {
    /// The graph file's bytes for this state, taken after log batch `high`.
    pub fn encode_graph(&self, high: HighWater) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.len() * 70 + FANOUT as usize * 4);
        let layout = self.encode_graph_body(&mut body);
        let sums: Vec<u8> = body
            .chunks(GRAPH_PAGE_BYTES as usize)
            .flat_map(page_sum)
            .collect();
        let mut file = self.graph_head(high, layout, &sums);
        file.extend_from_slice(&body);
        file
    }

    /// Writes this state's graph file, taken after log batch `high`, to a new temporary
    /// file in `dir` as it is encoded, a chunk at a time ([`Derived::stream`]): the body
    /// first, at the offset its layout gives, checksummed page by page as it goes; then
    /// the header and page table before it. The same bytes as [`State::encode_graph`],
    /// without holding them. The caller persists it.
    pub fn write_graph(&self, dir: &Path, high: HighWater) -> std::io::Result<Derived> {
        let layout = self.graph_layout();
        let file = Derived::create(dir, crate::layout::GRAPH)?;
        let mut sums = Vec::with_capacity((layout.pages() * PAGE_SUM_BYTES) as usize);
        let written = file.stream(
            body_at(layout.pages()),
            |chunk| sums.extend(chunk.chunks(GRAPH_PAGE_BYTES as usize).flat_map(page_sum)),
            |out| {
                self.encode_graph_body(out);
            },
        )?;
        if written != layout.body_len() {
            return Err(std::io::Error::other(format!(
                "the graph file's body took {written} bytes where its layout says {}",
                layout.body_len()
            )));
        }
        file.write_at(&self.graph_head(high, layout, &sums), 0)?;
        Ok(file)
    }

    /// The counts the graph file's layout follows from, without encoding anything.
    fn graph_layout(&self) -> Layout {
        let chains = self.dag.chain_count() as u32;
        let (mut checkpoints, mut clock_entries) = (0u64, 0u64);
        for c in 0..chains {
            for (_, clock) in self.dag.checkpoint_clocks(c) {
                checkpoints += 1;
                clock_entries += clock.len() as u64;
            }
        }
        Layout {
            n: self.len() as u64,
            m: self.dag.edge_count() as u64,
            chains: u64::from(chains),
            checkpoints,
            clock_entries,
        }
    }

    /// Appends the graph file's body (see `docs/format.md`) and returns its layout.
    fn encode_graph_body(&self, body: &mut impl Out) -> Layout {
        let raw = self.ids.raw();
        let n = raw.len();
        // The sorted table: the positions bucketed by the fanout bits (a counting sort),
        // then each small bucket's entries gathered and sorted, one bucket at a time. The
        // entries hold their keys, so no comparison reaches back into the id table.
        let mut fanout = vec![0u32; FANOUT as usize];
        for id in raw {
            if let Some(count) = fanout.get_mut(bucket(id)) {
                *count += 1;
            }
        }
        let mut next: Vec<usize> = fanout
            .iter()
            .scan(0usize, |start, &count| {
                let here = *start;
                *start += count as usize;
                Some(here)
            })
            .collect();
        let mut order = vec![0u32; n];
        for (p, id) in raw.iter().enumerate() {
            let Some(at) = next.get_mut(bucket(id)) else {
                continue;
            };
            if let Some(slot) = order.get_mut(*at) {
                *slot = p as u32;
            }
            *at += 1;
        }
        // Cumulative: bucket b's entries are sorted[fanout[b-1] .. fanout[b]].
        let mut total = 0u32;
        for count in &fanout {
            total += count;
            put_u32(body, total);
        }
        // Each bucket's positions, ordered by (digest, suite, position): by the digest's
        // first eight bytes, which settle all but astronomically rare ties without reading
        // the id again. Sorting copies of the whole 32-byte keys took a third of this
        // encoding at a 1 M-event close; the file's writing takes 13 % less CPU this way.
        let key = |p: u32| {
            raw.get(p as usize)
                .and_then(|id| id.split_first())
                .map(|(suite, digest)| (digest, *suite, p))
        };
        let prefix = |p: u32| {
            let mut bytes = [0u8; 8];
            if let Some(first) = raw.get(p as usize).and_then(|id| id.get(1..9)) {
                bytes.copy_from_slice(first);
            }
            u64::from_be_bytes(bytes)
        };
        let mut entries: Vec<(u64, u32)> = Vec::new();
        let mut start = 0usize;
        for &count in &fanout {
            let end = start + count as usize;
            entries.clear();
            entries.extend(
                order
                    .get(start..end)
                    .unwrap_or_default()
                    .iter()
                    .map(|&p| (prefix(p), p)),
            );
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| key(a.1).cmp(&key(b.1))));
            for &(_, p) in &entries {
                if let Some((digest, suite, p)) = key(p) {
                    body.put(&[suite]);
                    body.put(digest);
                    put_u32(body, p);
                }
            }
            start = end;
        }
        drop(order);
        for p in 0..n as u32 {
            put_u64(body, self.dag.generation(Pos::new(p)).unwrap_or(0));
        }
        let mut edges = 0u32;
        put_u32(body, 0);
        for p in 0..n as u32 {
            edges += self.dag.parents(Pos::new(p)).len() as u32;
            put_u32(body, edges);
        }
        for p in 0..n as u32 {
            for parent in self.dag.parents(Pos::new(p)) {
                put_u32(body, parent.get());
            }
        }
        Layout {
            n: n as u64,
            m: u64::from(edges),
            ..encode_chains(&self.dag, n, body)
        }
    }

    /// The graph file's bytes before its body: the header, the page table's own checksums
    /// and the page table, for a body of `layout` whose page checksums are `sums`.
    fn graph_head(&self, high: HighWater, layout: Layout, sums: &[u8]) -> Vec<u8> {
        let raw = self.ids.raw();
        let last = raw.len().checked_sub(1).map(|i| Pos::new(i as u32));
        let last_at = last
            .and_then(|p| self.at.get(p.index()))
            .unwrap_or(LogPos::new(0, 0));
        let last_id = last
            .and_then(|p| raw.get(p.index()))
            .copied()
            .unwrap_or([0; 33]);
        let mut out = Vec::with_capacity(body_at(layout.pages()) as usize);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[0; 32]);
        put_high_water(&mut out, high);
        put_u64(&mut out, layout.n);
        put_u64(&mut out, layout.m);
        put_u64(&mut out, layout.chains);
        put_u64(&mut out, layout.checkpoints);
        put_u64(&mut out, layout.clock_entries);
        put_u32(&mut out, last_at.segment);
        put_u64(&mut out, last_at.offset);
        out.extend_from_slice(&last_id);
        put_u64(&mut out, layout.pages());
        for chunk in sums.chunks(GRAPH_PAGE_BYTES as usize) {
            out.extend_from_slice(&page_sum(chunk));
        }
        let sum = blake3::hash(out.get(HEADER_FIELDS.start..).unwrap_or_default());
        if let Some(slot) = out.get_mut(8..40) {
            slot.copy_from_slice(sum.as_bytes());
        }
        out.extend_from_slice(sums);
        out
    }
}

/// Appends the chain sections of the body (each event's chain and sequence number, each
/// chain's members, its checkpoints, their clocks); returns their counts.
fn encode_chains(dag: &DagIndex, n: usize, body: &mut impl Out) -> Layout {
    for p in 0..n as u32 {
        let (c, s) = dag.chain_seq(Pos::new(p)).unwrap_or((0, 0));
        put_u32(body, c);
        put_u32(body, s);
    }
    let chains = dag.chain_count() as u32;
    let mut at = 0u32;
    put_u32(body, 0);
    for c in 0..chains {
        at += dag.chain_members(c).len() as u32;
        put_u32(body, at);
    }
    for c in 0..chains {
        dag.chain_members(c)
            .iter()
            .for_each(|m| put_u32(body, m.get()));
    }
    let mut checkpoints = 0u32;
    put_u32(body, 0);
    for c in 0..chains {
        checkpoints += dag.checkpoint_clocks(c).count() as u32;
        put_u32(body, checkpoints);
    }
    // Clocks are written in full, whatever their width in memory: where each starts, then
    // their entries, read from the index in the same order.
    let mut start = 0u64;
    for c in 0..chains {
        for (seq, clock) in dag.checkpoint_clocks(c) {
            put_u32(body, seq);
            put_u64(body, start);
            put_u32(body, clock.len() as u32);
            start += clock.len() as u64;
        }
    }
    for c in 0..chains {
        for (_, clock) in dag.checkpoint_clocks(c) {
            clock.iter().for_each(|e| put_u32(body, e));
        }
    }
    Layout {
        chains: u64::from(chains),
        checkpoints: u64::from(checkpoints),
        clock_entries: start,
        ..Layout::default()
    }
}

/// Whether `DIR/graph` is of this version and claims to describe the log up to `high` (a
/// writer's open asks, so that its close writes a missing, older or foreign one anew even
/// when nothing was written).
pub(crate) fn claims(dir: &std::path::Path, high: HighWater) -> bool {
    let mut head = [0u8; HIGH_WATER_BYTES.end];
    let read = std::fs::File::open(dir.join(crate::layout::GRAPH))
        .and_then(|f| std::io::Read::read_exact(&mut &f, &mut head));
    read.is_ok() && head_claims(&head, high)
}

/// Whether a graph file starting with `head` is of this version and claims to describe the
/// log up to `high` (the state in which a query trusts it).
pub(crate) fn head_claims(head: &[u8], high: HighWater) -> bool {
    let mut want = Vec::with_capacity(HIGH_WATER_BYTES.len());
    put_high_water(&mut want, high);
    head.get(MAGIC_BYTES) == Some(MAGIC.as_slice())
        && head.get(HIGH_WATER_BYTES) == Some(want.as_slice())
}

/// The header's high-water field: seq, segment, offset.
fn put_high_water(out: &mut Vec<u8>, high: HighWater) {
    put_u64(out, high.seq);
    put_u32(out, high.end.segment);
    put_u64(out, high.end.offset);
}

/// The header's fields, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    high: HighWater,
    layout: Layout,
    last_at: LogPos,
    last_id: [u8; 33],
    pub pages: u64,
}

impl Header {
    /// Decodes the fixed header (its checksum is checked with the page table, by the view).
    pub fn decode(bytes: &[u8; HEADER_BYTES as usize]) -> Option<Header> {
        let mut r = crate::codec::Reader::new(bytes);
        if r.array::<8>()? != MAGIC {
            return None;
        }
        r.array::<32>()?;
        let high = HighWater {
            seq: r.u64()?,
            end: LogPos::new(r.u32()?, r.u64()?),
        };
        let layout = Layout {
            n: r.u64()?,
            m: r.u64()?,
            chains: r.u64()?,
            checkpoints: r.u64()?,
            clock_entries: r.u64()?,
        };
        let last_at = LogPos::new(r.u32()?, r.u64()?);
        let last_id = r.array::<33>()?;
        let pages = r.u64()?;
        // Positions and edge offsets are u32 in the index.
        // Positions, edge offsets, chains and checkpoint offsets are u32 in the index;
        // a clock entry is 4 bytes and a body must fit in a u64.
        let u32s = [layout.n, layout.m, layout.chains, layout.checkpoints];
        let fits = u32s.iter().all(|&x| x <= u64::from(u32::MAX))
            && layout.clock_entries <= u64::from(u32::MAX) << 8;
        (fits && pages == layout.pages()).then_some(Header {
            high,
            layout,
            last_at,
            last_id,
            pages,
        })
    }
}
