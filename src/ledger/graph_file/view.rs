//! [`GraphView`]: the graph file read a checked page at a time, and the query it answers
//! without loading the ledger — the maximal heads of a set of ids.
//!
//! Ids are found through the fanout table and a binary search of one bucket of the sorted
//! table. Heads are found the way git's `merge-base --independent` does: walk down from
//! the members' parents, never below the lowest member's position or generation number
//! (an ancestor has a lower one of each), and every member the walk reaches is covered by
//! another. A walk that would visit more than [`GRAPH_WALK_BUDGET`] events stops and
//! leaves the query to the in-memory index, whose chain clocks answer it without walking.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::Error;
use crate::id::EventId;
use crate::layout;
use crate::limits::{GRAPH_PAGE_BYTES, GRAPH_WALK_BUDGET};
use crate::store::log::{HighWater, LogOptions, SegmentLog};
use crate::store::root::{read_acked, RootLock};

use super::super::snapshot::log_holds;
use super::{
    bucket, page_sum, sort_key, Header, Layout, HEADER_BYTES, HEADER_FIELDS, PAGE_SUM_BYTES,
    SORTED_ENTRY,
};

/// The graph file of a ledger directory that describes exactly the log on disk, open for
/// queries. It holds the directory's shared lock, as a read-only open does: no writer
/// appends while it is open.
#[derive(Debug)]
pub struct GraphView {
    file: File,
    header: Header,
    /// The page table: one checksum per body page.
    sums: Vec<u8>,
    _lock: RootLock,
}

impl GraphView {
    /// Opens `DIR/graph` when it can answer for the ledger in `dir`: it is there, its header
    /// and page table pass their checksum, the log (recovered read-only, as a read-only open
    /// does) ends at the very batch the file was taken after with nothing torn after it, and
    /// the log holds the file's last event where the file says. `Err` says why not; the
    /// caller then opens the ledger, which reports anything wrong with the log itself.
    pub fn open(dir: impl AsRef<Path>) -> Result<GraphView, &'static str> {
        let dir = dir.as_ref();
        let lock = RootLock::shared(dir, crate::limits::LOCK_PATIENCE)
            .map_err(|_| "the ledger is open for writing")?;
        let file = File::open(dir.join(layout::GRAPH)).map_err(|_| "there is no graph file")?;
        let mut head = [0u8; HEADER_BYTES as usize];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| "its header is truncated")?;
        let header = Header::decode(&head).ok_or("its header is not one of this version")?;
        let table_len = header.pages * PAGE_SUM_BYTES;
        let expected = HEADER_BYTES + table_len + header.layout.body_len();
        if file.metadata().map(|m| m.len()).ok() != Some(expected) {
            return Err("its length does not match its header");
        }
        let mut sums = vec![0; usize::try_from(table_len).map_err(|_| "too large")?];
        file.read_exact_at(&mut sums, HEADER_BYTES)
            .map_err(|_| "its page table is unreadable")?;
        let mut hasher = blake3::Hasher::new();
        hasher.update(head.get(HEADER_FIELDS).unwrap_or_default());
        hasher.update(&sums);
        if head.get(8..40) != Some(hasher.finalize().as_bytes().as_slice()) {
            return Err("its header checksum does not match");
        }
        let acked = read_acked(dir).map_err(|_| "the acknowledged marker is unreadable")?;
        let opts = LogOptions {
            read_only: true,
            acknowledged: acked.map(|a| a.high),
            ..LogOptions::default()
        };
        let (log, report) =
            SegmentLog::open(dir.join(layout::LOG), opts).map_err(|_| "the log needs recovery")?;
        if report.torn_tail_left.is_some() {
            return Err("the log has a torn tail");
        }
        if log.high_water() != header.high {
            return Err("it is older than the log");
        }
        if header.layout.n > 0 {
            let last = EventId::from_bytes(&header.last_id).ok();
            if !last.is_some_and(|id| log_holds(&log.reader(), header.last_at, &id)) {
                return Err("the log does not hold its last event where it says");
            }
        }
        Ok(GraphView {
            file,
            header,
            sums,
            _lock: lock,
        })
    }

    /// Number of admitted events the file describes.
    pub fn len(&self) -> usize {
        self.header.layout.n as usize
    }

    /// Whether it describes no event.
    pub fn is_empty(&self) -> bool {
        self.header.layout.n == 0
    }

    /// The log batch the file was taken after.
    pub fn high_water(&self) -> HighWater {
        self.header.high
    }

    /// The maximal heads of `ids` (members covered by no other member), in canonical order —
    /// the answer [`Ledger::heads_of`](crate::Ledger::heads_of) gives. An id that is not
    /// admitted is [`Error::NotFound`]. `Ok(None)` when the file cannot answer after all: a
    /// page fails its checksum or its contents are inconsistent, or the walk would exceed
    /// [`GRAPH_WALK_BUDGET`]; open the ledger then.
    pub fn heads_of(&self, ids: &[EventId]) -> Result<Option<Vec<EventId>>, Error> {
        let mut pages = Pages {
            view: self,
            cache: HashMap::new(),
        };
        let mut members = Vec::with_capacity(ids.len());
        for id in ids {
            match pages.position(id) {
                Some(Some(p)) => members.push(p),
                Some(None) => return Err(Error::NotFound(*id)),
                None => return Ok(None),
            }
        }
        Ok(pages
            .heads(members, GRAPH_WALK_BUDGET)
            .and_then(|heads| pages.ids(&heads)))
    }
}

/// The pages one query has read, each checked against the page table once.
pub struct Pages<'a> {
    pub view: &'a GraphView,
    pub cache: HashMap<u64, Vec<u8>>,
}

impl Pages<'_> {
    fn layout(&self) -> Layout {
        self.view.header.layout
    }

    /// Body page `index`, read and checked; `None` when unreadable or damaged.
    fn page(&mut self, index: u64) -> Option<&[u8]> {
        if !self.cache.contains_key(&index) {
            let header = &self.view.header;
            let start = index.checked_mul(GRAPH_PAGE_BYTES)?;
            let len = header
                .layout
                .body_len()
                .checked_sub(start)?
                .min(GRAPH_PAGE_BYTES);
            let mut page = vec![0; usize::try_from(len).ok()?];
            let at = HEADER_BYTES + header.pages * PAGE_SUM_BYTES + start;
            self.view.file.read_exact_at(&mut page, at).ok()?;
            let sum = usize::try_from(index * PAGE_SUM_BYTES).ok()?;
            let want = self.view.sums.get(sum..sum + PAGE_SUM_BYTES as usize)?;
            if page_sum(&page).as_slice() != want {
                return None;
            }
            self.cache.insert(index, page);
        }
        self.cache.get(&index).map(Vec::as_slice)
    }

    /// `len` body bytes from `offset`, across pages.
    fn read(&mut self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        if end > self.layout().body_len() {
            return None;
        }
        let mut out = Vec::with_capacity(usize::try_from(len).ok()?);
        let mut at = offset;
        while at < end {
            let index = at / GRAPH_PAGE_BYTES;
            let from = (at % GRAPH_PAGE_BYTES) as usize;
            let upto = (end - index * GRAPH_PAGE_BYTES).min(GRAPH_PAGE_BYTES) as usize;
            out.extend_from_slice(self.page(index)?.get(from..upto)?);
            at = (index + 1) * GRAPH_PAGE_BYTES;
        }
        Some(out)
    }

    fn u32_at(&mut self, offset: u64) -> Option<u32> {
        let bytes = self.read(offset, 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    fn u64_at(&mut self, offset: u64) -> Option<u64> {
        let bytes = self.read(offset, 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The position of `id`: `Some(None)` when it is not in the file, `None` when the file
    /// is damaged.
    fn position(&mut self, id: &EventId) -> Option<Option<u32>> {
        let raw = id.bytes();
        let b = bucket(raw) as u64;
        let lo = match b.checked_sub(1) {
            Some(prev) => u64::from(self.u32_at(prev * 4)?),
            None => 0,
        };
        let hi = u64::from(self.u32_at(b * 4)?);
        if lo > hi || hi > self.layout().n {
            return None;
        }
        let start = self.layout().sorted() + lo * SORTED_ENTRY;
        let entries = self.read(start, (hi - lo) * SORTED_ENTRY)?;
        let entries: Vec<&[u8]> = entries.chunks_exact(SORTED_ENTRY as usize).collect();
        let found = entries.binary_search_by(|entry| {
            let stored: &[u8; 33] = entry
                .get(..33)
                .and_then(|s| s.try_into().ok())
                .unwrap_or(&[0; 33]);
            sort_key(stored).cmp(&sort_key(raw))
        });
        let Ok(i) = found else {
            return Some(None);
        };
        let entry = entries.get(i)?;
        let pos = u32::from_le_bytes(entry.get(33..37)?.try_into().ok()?);
        (u64::from(pos) < self.layout().n).then_some(Some(pos))
    }

    fn generation(&mut self, p: u32) -> Option<u64> {
        (u64::from(p) < self.layout().n).then_some(())?;
        self.u64_at(self.layout().gen() + u64::from(p) * 8)
    }

    /// Queues the parents of `p`; `None` when the file is damaged (a parent that is not
    /// older than its child).
    fn push_parents(&mut self, p: u32, stack: &mut Vec<u32>) -> Option<()> {
        let layout = self.layout();
        let at = layout.parent_off() + u64::from(p) * 4;
        let (a, b) = (u64::from(self.u32_at(at)?), u64::from(self.u32_at(at + 4)?));
        if a > b || b > layout.m {
            return None;
        }
        let parents = self.read(layout.parents() + a * 4, (b - a) * 4)?;
        for q in parents.chunks_exact(4) {
            let q = u32::from_le_bytes(q.try_into().ok()?);
            if q >= p {
                return None;
            }
            stack.push(q);
        }
        Some(())
    }

    /// The members covered by no other member, ascending; `None` when the file is damaged
    /// or the walk would visit more than `budget` events.
    pub fn heads(&mut self, mut members: Vec<u32>, budget: usize) -> Option<Vec<u32>> {
        members.sort_unstable();
        members.dedup();
        let Some(&lowest) = members.first() else {
            return Some(Vec::new());
        };
        let mut floor = u64::MAX;
        let mut stack = Vec::new();
        for &m in &members {
            floor = floor.min(self.generation(m)?);
            self.push_parents(m, &mut stack)?;
        }
        let mut seen = HashSet::new();
        let mut covered = HashSet::new();
        while let Some(p) = stack.pop() {
            if p < lowest || !seen.insert(p) {
                continue;
            }
            if seen.len() > budget {
                return None;
            }
            if self.generation(p)? < floor {
                continue;
            }
            if members.binary_search(&p).is_ok() {
                covered.insert(p);
            }
            self.push_parents(p, &mut stack)?;
        }
        members.retain(|m| !covered.contains(m));
        Some(members)
    }

    /// The ids at `positions`, in canonical order.
    fn ids(&mut self, positions: &[u32]) -> Option<Vec<EventId>> {
        let layout = self.layout();
        let mut ids = Vec::with_capacity(positions.len());
        for &p in positions {
            let rank = u64::from(self.u32_at(layout.rank() + u64::from(p) * 4)?);
            if rank >= layout.n {
                return None;
            }
            let entry = self.read(layout.sorted() + rank * SORTED_ENTRY, SORTED_ENTRY)?;
            let raw: &[u8; 33] = entry.get(..33)?.try_into().ok()?;
            if entry.get(33..37)? != p.to_le_bytes() {
                return None;
            }
            ids.push(EventId::from_bytes(raw).ok()?);
        }
        ids.sort_unstable();
        Some(ids)
    }
}
