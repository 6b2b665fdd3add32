//! [`GraphView`]: the graph file read a checked page at a time, and the queries it answers
//! without loading the ledger — the maximal heads of a set of ids, and whether a basis
//! covers an id.
//!
//! Ids are found through the fanout table and a binary search of one bucket of the sorted
//! table. The queries are the in-memory index's own chain walks ([`dag::heads_of`],
//! [`dag::covers`]) run over [`Pages`], a [`ChainSource`] that reads the file's chain
//! sections a checked page at a time: a walk joins a checkpoint's chain clock instead of
//! walking below it, so old and new ids alike cost a few pages. A query that would read more
//! than [`GRAPH_READ_BUDGET`] values stops and leaves the query to the opened ledger.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::dag::{self, ChainSource, ClockAt, ClockEntries, Pos};
use crate::error::Error;
use crate::id::EventId;
use crate::layout;
use crate::limits::{GRAPH_PAGE_BYTES, GRAPH_READ_BUDGET};
use crate::store::log::{HighWater, LogOptions, SegmentLog};
use crate::store::root::{read_acked, RootLock};

use super::super::snapshot::log_holds;
use super::{
    body_at, bucket, page_sum, place_in_bucket, sort_key, table_at, table_chunks, Header, Layout,
    CHECKPOINT_ENTRY, HEADER_BYTES, HEADER_FIELDS, PAGE_SUM_BYTES, SORTED_ENTRY,
};

/// The graph file of a ledger directory that describes exactly the log on disk, open for
/// queries. It holds the directory's shared lock, as a read-only open does: no writer
/// appends while it is open.
#[derive(Debug)]
pub struct GraphView {
    file: File,
    header: Header,
    /// The checksums of the page table's chunks.
    top: Vec<u8>,
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
        let expected = body_at(header.pages) + header.layout.body_len();
        if file.metadata().map(|m| m.len()).ok() != Some(expected) {
            return Err("its length does not match its header");
        }
        let top_len = table_chunks(header.pages) * PAGE_SUM_BYTES;
        let mut top = vec![0; usize::try_from(top_len).map_err(|_| "too large")?];
        file.read_exact_at(&mut top, HEADER_BYTES)
            .map_err(|_| "its page table is unreadable")?;
        let mut hasher = blake3::Hasher::new();
        hasher.update(head.get(HEADER_FIELDS).unwrap_or_default());
        hasher.update(&top);
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
            top,
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
    /// page fails its checksum or its contents are inconsistent, or the walk would read more
    /// than [`GRAPH_READ_BUDGET`] values; open the ledger then.
    pub fn heads_of(&self, ids: &[EventId]) -> Result<Option<Vec<EventId>>, Error> {
        let pages = Pages::new(self, GRAPH_READ_BUDGET);
        let Some(members) = pages.positions(ids)? else {
            return Ok(None);
        };
        let Some(heads) = pages.heads(&members) else {
            return Ok(None);
        };
        // The heads are members: their ids are the ones asked about.
        let mut out: Vec<EventId> = members
            .iter()
            .zip(ids)
            .filter(|(p, _)| heads.binary_search(p).is_ok())
            .map(|(_, id)| *id)
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(Some(out))
    }

    /// Whether `x` is covered by `basis` (in it, or an ancestor of a member) — the answer
    /// [`Ledger::covers`](crate::Ledger::covers) gives, with the same errors and the same
    /// `Ok(None)` as [`GraphView::heads_of`].
    pub fn covers(&self, basis: &[EventId], x: &EventId) -> Result<Option<bool>, Error> {
        let pages = Pages::new(self, GRAPH_READ_BUDGET);
        let (Some(basis), Some(x)) = (pages.positions(basis)?, pages.positions(&[*x])?) else {
            return Ok(None);
        };
        let covered = x
            .first()
            .map(|&x| dag::covers(&pages, &basis, x))
            .unwrap_or(false);
        Ok((!pages.failed()).then_some(covered))
    }
}

/// The pages one query has read, each checked against the page table once, and a budget of
/// values it may still read. The chain walk of the in-memory index runs over it unchanged
/// ([`ChainSource`]): any page that fails its check, contents that contradict themselves,
/// or a spent budget mark the query failed, every read after that answers nothing (so the
/// walk ends), and the caller discards the answer.
pub struct Pages<'a> {
    view: &'a GraphView,
    /// Body pages read, in the order they were first read.
    pages: RefCell<Vec<Box<[u8]>>>,
    /// Where each body page read is in `pages`, by its index in the file. A query reads a
    /// few hundred pages at most: a B-tree of them costs a few comparisons, where a
    /// `HashMap`'s SipHash (and the random key it draws) cost 5 % of a whole `heads-of`.
    slots: RefCell<BTreeMap<u64, usize>>,
    /// The page the last read used (its index, its slot): most reads are of that page.
    last: Cell<Option<(u64, usize)>>,
    /// Chunks of the page table read, by index.
    table: RefCell<BTreeMap<u64, Box<[u8]>>>,
    budget: Cell<u64>,
    failed: Cell<bool>,
}

impl<'a> Pages<'a> {
    /// A query over `view` that may read `budget` values.
    pub fn new(view: &'a GraphView, budget: u64) -> Pages<'a> {
        Pages {
            view,
            pages: RefCell::new(Vec::new()),
            slots: RefCell::new(BTreeMap::new()),
            last: Cell::new(None),
            table: RefCell::new(BTreeMap::new()),
            budget: Cell::new(budget),
            failed: Cell::new(false),
        }
    }

    /// Whether the query could not read something it needed (damage or budget).
    pub fn failed(&self) -> bool {
        self.failed.get()
    }

    fn layout(&self) -> Layout {
        self.view.header.layout
    }

    /// Marks the query failed; returns `None` for the caller to pass on.
    fn fail<T>(&self) -> Option<T> {
        self.failed.set(true);
        None
    }

    /// Copies body bytes `offset..offset + out.len()` into `out`, across pages, reading and
    /// checking each page once; `None` (and the query failed) when unreadable, damaged, out
    /// of the body or over budget.
    fn read_into(&self, offset: u64, out: &mut [u8]) -> Option<()> {
        if self.failed.get() {
            return None;
        }
        match self.budget.get().checked_sub(1) {
            Some(left) => self.budget.set(left),
            None => return self.fail(),
        }
        let end = offset.checked_add(out.len() as u64)?;
        if end > self.layout().body_len() {
            return self.fail();
        }
        let mut at = offset;
        let mut filled = 0usize;
        while at < end {
            let index = at / GRAPH_PAGE_BYTES;
            let from = (at % GRAPH_PAGE_BYTES) as usize;
            let upto = (end - index * GRAPH_PAGE_BYTES).min(GRAPH_PAGE_BYTES) as usize;
            let n = upto - from;
            let done = self.with_page(index, |page| {
                let src = page.get(from..upto)?;
                out.get_mut(filled..filled + n)?.copy_from_slice(src);
                Some(())
            });
            if done.is_none() {
                return self.fail();
            }
            filled += n;
            at = (index + 1) * GRAPH_PAGE_BYTES;
        }
        Some(())
    }

    /// Runs `f` on body page `index`, read and checked on first use.
    fn with_page<T>(&self, index: u64, f: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        if index >= self.view.header.pages {
            return None;
        }
        let slot = self.slot(index)?;
        f(self.pages.borrow().get(slot)?)
    }

    /// Where body page `index` is in `pages`: the last page used, one read before, or one
    /// read now and checked.
    fn slot(&self, index: u64) -> Option<usize> {
        if let Some((last, slot)) = self.last.get() {
            if last == index {
                return Some(slot);
            }
        }
        let known = self.slots.borrow().get(&index).copied();
        let slot = match known {
            Some(slot) => slot,
            None => {
                let page = self.load(index)?;
                let mut pages = self.pages.borrow_mut();
                let slot = pages.len();
                pages.push(page);
                self.slots.borrow_mut().insert(index, slot);
                slot
            }
        };
        self.last.set(Some((index, slot)));
        Some(slot)
    }

    /// The checksum of body page `index`, from its chunk of the page table (read and checked
    /// against the header's chunk checksums on first use).
    fn page_sum_of(&self, index: u64) -> Option<[u8; PAGE_SUM_BYTES as usize]> {
        let pages = self.view.header.pages;
        let at = index.checked_mul(PAGE_SUM_BYTES)?;
        let chunk = at / GRAPH_PAGE_BYTES;
        if !self.table.borrow().contains_key(&chunk) {
            let start = chunk * GRAPH_PAGE_BYTES;
            let len = (pages * PAGE_SUM_BYTES)
                .checked_sub(start)?
                .min(GRAPH_PAGE_BYTES);
            let mut bytes = vec![0; usize::try_from(len).ok()?];
            self.view
                .file
                .read_exact_at(&mut bytes, table_at(pages) + start)
                .ok()?;
            let sum = usize::try_from(chunk * PAGE_SUM_BYTES).ok()?;
            let want = self.view.top.get(sum..sum + PAGE_SUM_BYTES as usize)?;
            if page_sum(&bytes).as_slice() != want {
                return None;
            }
            self.table
                .borrow_mut()
                .insert(chunk, bytes.into_boxed_slice());
        }
        let table = self.table.borrow();
        let from = usize::try_from(at % GRAPH_PAGE_BYTES).ok()?;
        table
            .get(&chunk)?
            .get(from..from + PAGE_SUM_BYTES as usize)?
            .try_into()
            .ok()
    }

    /// Body page `index` from the file, checked against the page table.
    fn load(&self, index: u64) -> Option<Box<[u8]>> {
        let header = &self.view.header;
        let start = index.checked_mul(GRAPH_PAGE_BYTES)?;
        let len = header
            .layout
            .body_len()
            .checked_sub(start)?
            .min(GRAPH_PAGE_BYTES);
        let mut page = vec![0; usize::try_from(len).ok()?];
        let at = body_at(header.pages) + start;
        self.view.file.read_exact_at(&mut page, at).ok()?;
        let want = self.page_sum_of(index)?;
        (page_sum(&page) == want).then(|| page.into_boxed_slice())
    }

    fn read(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let mut out = vec![0; usize::try_from(len).ok()?];
        self.read_into(offset, &mut out)?;
        Some(out)
    }

    fn u32_at(&self, offset: u64) -> Option<u32> {
        let mut bytes = [0; 4];
        self.read_into(offset, &mut bytes)?;
        Some(u32::from_le_bytes(bytes))
    }

    fn u64_at(&self, offset: u64) -> Option<u64> {
        let mut bytes = [0; 8];
        self.read_into(offset, &mut bytes)?;
        Some(u64::from_le_bytes(bytes))
    }

    /// `true` or, when false, the query failed: for checks of the file's consistency.
    fn check(&self, ok: bool) -> Option<()> {
        if ok {
            Some(())
        } else {
            self.fail()
        }
    }

    /// The positions of `ids`: `Ok(None)` when the file cannot say, [`Error::NotFound`] for
    /// an id it does not hold.
    pub fn positions(&self, ids: &[EventId]) -> Result<Option<Vec<Pos>>, Error> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            match self.position(id) {
                Some(Some(p)) => out.push(Pos::new(p)),
                Some(None) => return Err(Error::NotFound(*id)),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// The position of `id`: `Some(None)` when it is not in the file, `None` when the file
    /// is damaged. Its bucket is searched from where the id's digest bits place it in it
    /// (digests are uniform: at a million events that page holds the id nineteen times in
    /// twenty).
    fn position(&self, id: &EventId) -> Option<Option<u32>> {
        let raw = id.bytes();
        let b = bucket(raw) as u64;
        let lo = match b.checked_sub(1) {
            Some(prev) => u64::from(self.u32_at(prev * 4)?),
            None => 0,
        };
        let hi = u64::from(self.u32_at(b * 4)?);
        self.check(lo <= hi && hi <= self.layout().n)?;
        let guess = lo + (((hi - lo) * place_in_bucket(raw)) >> 32);
        let sorted = (self.layout().sorted(), SORTED_ENTRY);
        let i = self.partition(sorted, (lo, hi), guess, |i| {
            Some(self.entry_vs(i, raw)?.0 != Ordering::Less)
        })?;
        if i == hi {
            return Some(None);
        }
        match self.entry_vs(i, raw)? {
            (Ordering::Equal, pos) => {
                self.check(u64::from(pos) < self.layout().n)?;
                Some(Some(pos))
            }
            _ => Some(None),
        }
    }

    /// The first index in `lo..hi` of a table of `size`-byte entries at `base` for which
    /// `after` holds (it turns true once, as for `partition_point`; `hi` when never). The
    /// search first narrows to the entries wholly in the page that holds entry `guess`,
    /// when they bracket the answer, so a good guess reads one page.
    fn partition(
        &self,
        (base, size): (u64, u64),
        (mut lo, mut hi): (u64, u64),
        guess: u64,
        after: impl Fn(u64) -> Option<bool>,
    ) -> Option<u64> {
        let page = base.checked_add(guess.checked_mul(size)?)? / GRAPH_PAGE_BYTES;
        let first = (page * GRAPH_PAGE_BYTES)
            .saturating_sub(base)
            .div_ceil(size)
            .max(lo);
        let last = (((page + 1) * GRAPH_PAGE_BYTES).saturating_sub(base) / size)
            .checked_sub(1)
            .map(|last| last.min(hi.saturating_sub(1)));
        if let Some(last) = last.filter(|&last| lo < hi && first <= last) {
            if after(first)? {
                hi = first;
            } else if after(last)? {
                (lo, hi) = (first + 1, last);
            } else {
                lo = last + 1;
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if after(mid)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }

    /// How sorted entry `i` compares with the id `raw`, and the entry's position.
    fn entry_vs(&self, i: u64, raw: &[u8; 33]) -> Option<(Ordering, u32)> {
        let mut entry = [0; SORTED_ENTRY as usize];
        self.read_into(self.layout().sorted() + i * SORTED_ENTRY, &mut entry)?;
        let (stored, pos) = entry.split_at(33);
        let stored: &[u8; 33] = stored.try_into().ok()?;
        Some((sort_key(stored).cmp(&sort_key(raw)), le32(pos)))
    }

    /// The members of `members` covered by no other member, ascending; `None` when the
    /// query failed.
    pub fn heads(&self, members: &[Pos]) -> Option<Vec<Pos>> {
        let heads = dag::heads_of(self, members);
        (!self.failed()).then_some(heads)
    }

    /// Checkpoint `i` of the file (its clock checked to lie in the pool and to be no longer
    /// than there are chains).
    fn checkpoint(&self, i: u64) -> Option<ClockAt> {
        let layout = self.layout();
        self.check(i < layout.checkpoints)?;
        let mut bytes = [0; CHECKPOINT_ENTRY as usize];
        self.read_into(layout.checkpoints() + i * CHECKPOINT_ENTRY, &mut bytes)?;
        let mut r = crate::codec::Reader::new(&bytes);
        let k = ClockAt {
            seq: r.u32()?,
            start: r.u64()?,
            len: u64::from(r.u32()?),
            narrow: None,
        };
        let end = k.start.checked_add(k.len);
        self.check(k.len <= layout.chains && end.is_some_and(|e| e <= layout.clock_entries))?;
        Some(k)
    }

    /// The range of `table` entries (offsets of `c` and `c + 1`) of chain `c`, checked
    /// against `limit`.
    fn range(&self, table: u64, c: u32, limit: u64) -> Option<(u64, u64)> {
        self.check(u64::from(c) < self.layout().chains)?;
        let at = table + u64::from(c) * 4;
        let (a, b) = (u64::from(self.u32_at(at)?), u64::from(self.u32_at(at + 4)?));
        self.check(a <= b && b <= limit)?;
        Some((a, b))
    }

    /// Chain `c`'s checkpoints: indices `a..b`.
    fn checkpoint_range(&self, c: u32) -> Option<(u64, u64)> {
        let layout = self.layout();
        self.range(layout.checkpoint_off(), c, layout.checkpoints)
    }

    /// The first of chain `c`'s checkpoints for which `after` holds (they are ascending by
    /// sequence number, so `after` turns true once), as `partition_point` finds it. The
    /// search starts where `s` places it: checkpoints are spread about evenly along a chain.
    fn first_checkpoint(
        &self,
        c: u32,
        s: u32,
        after: impl Fn(u32) -> bool,
    ) -> Option<(u64, u64, u64)> {
        let layout = self.layout();
        let (a, b) = self.checkpoint_range(c)?;
        let (first, end) = self.range(layout.chain_off(), c, layout.n)?;
        let members = (end - first).max(1);
        let guess = a + (b - a) * u64::from(s).min(members) / members;
        let table = (layout.checkpoints(), CHECKPOINT_ENTRY);
        let i = self.partition(table, (a, b), guess.min(b.saturating_sub(1)), |i| {
            Some(after(self.checkpoint(i)?.seq))
        })?;
        Some((a, i, b))
    }
}

impl ChainSource for Pages<'_> {
    fn len(&self) -> usize {
        self.view.len()
    }

    fn chain_count(&self) -> usize {
        usize::try_from(self.layout().chains).unwrap_or(0)
    }

    fn chain_seq(&self, p: Pos) -> Option<(u32, u32)> {
        let layout = self.layout();
        self.check(u64::from(p.get()) < layout.n)?;
        let mut bytes = [0; 8];
        self.read_into(layout.chain_seq() + u64::from(p.get()) * 8, &mut bytes)?;
        let c = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let s = u32::from_le_bytes(bytes.get(4..)?.try_into().ok()?);
        self.check(u64::from(c) < layout.chains && s >= 1)?;
        Some((c, s))
    }

    fn generation(&self, p: Pos) -> Option<u64> {
        self.check(u64::from(p.get()) < self.layout().n)?;
        self.u64_at(self.layout().gen() + u64::from(p.get()) * 8)
    }

    fn for_each_parent(&self, p: Pos, mut f: impl FnMut(Pos)) {
        let layout = self.layout();
        let at = layout.parent_off() + u64::from(p.get()) * 4;
        let Some((a, b)) = self.u32_at(at).zip(self.u32_at(at + 4)) else {
            return;
        };
        let (a, b) = (u64::from(a), u64::from(b));
        if self.check(a <= b && b <= layout.m).is_none() {
            return;
        }
        let Some(parents) = self.read(layout.parents() + a * 4, (b - a) * 4) else {
            return;
        };
        for q in parents.chunks_exact(4) {
            let q = le32(q);
            // A parent is older than its child.
            if self.check(q < p.get()).is_none() {
                return;
            }
            f(Pos::new(q));
        }
    }

    fn member(&self, c: u32, seq: u32) -> Option<Pos> {
        let layout = self.layout();
        let (a, b) = self.range(layout.chain_off(), c, layout.n)?;
        let i = a + u64::from(seq.checked_sub(1)?);
        if i >= b {
            return None;
        }
        let m = self.u32_at(layout.members() + i * 4)?;
        self.check(u64::from(m) < layout.n)?;
        Some(Pos::new(m))
    }

    fn last_checkpoint_seq(&self, c: u32) -> u32 {
        let Some((a, b)) = self.checkpoint_range(c) else {
            return 0;
        };
        match b.checked_sub(1).filter(|&last| last >= a) {
            Some(last) => self.checkpoint(last).map_or(0, |k| k.seq),
            None => 0,
        }
    }

    fn floor(&self, c: u32, s: u32) -> Option<ClockAt> {
        let (a, i, _) = self.first_checkpoint(c, s, |seq| seq > s)?;
        self.checkpoint(i.checked_sub(1).filter(|&i| i >= a)?)
    }

    fn ceil(&self, c: u32, s: u32) -> Option<ClockAt> {
        let (_, i, b) = self.first_checkpoint(c, s, |seq| seq >= s)?;
        (i < b).then(|| self.checkpoint(i)).flatten()
    }

    fn clock(&self, k: &ClockAt) -> ClockEntries<'_> {
        let at = self.layout().clocks() + k.start * 4;
        let bytes = self.read(at, k.len * 4).unwrap_or_default();
        ClockEntries::Full(Cow::Owned(bytes.chunks_exact(4).map(le32).collect()))
    }

    fn clock_entry(&self, k: &ClockAt, chain: u32) -> u32 {
        if u64::from(chain) >= k.len {
            return 0;
        }
        let at = self.layout().clocks() + (k.start + u64::from(chain)) * 4;
        self.u32_at(at).unwrap_or(0)
    }
}

/// A little-endian `u32` of a 4-byte chunk.
fn le32(chunk: &[u8]) -> u32 {
    u32::from_le_bytes(chunk.try_into().unwrap_or([0; 4]))
}
