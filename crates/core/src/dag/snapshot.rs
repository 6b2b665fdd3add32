//! The index as bytes, so a ledger can load it instead of re-inserting every event: the
//! per-event arrays, the checkpoint clocks and the heads, little-endian. Chain member lists
//! are not stored; they are rebuilt from each event's `(chain, seq)`, which also checks
//! that every sequence number is where it should be. Decoding checks every offset and
//! position it will later follow, so damaged bytes give `None`, never a panic or an
//! out-of-range walk.

use super::chains::{Chain, Checkpoint};
use super::clocks::ClockPool;
use super::generations::Generations;
use super::heads::Heads;
use super::narrow::Narrow;
use super::{DagIndex, Pos};
use crate::codec::{put_u32, put_u32s, put_u64, put_u64s, Out, Reader};

impl DagIndex {
    /// Appends the index's encoding to `out`.
    pub fn encode_into(&self, out: &mut (impl Out + ?Sized)) {
        put_u32s(out, self.parent_off.iter().copied());
        put_u32s(out, self.parent_tgt.iter().map(|p| p.get()));
        put_u64s(out, self.gen.iter());
        put_u32s(out, self.chain_of.iter());
        put_u32s(out, self.seq_of.iter());
        put_u64(out, self.chains.len() as u64);
        // Clocks are written in full, one after another, whatever their width in memory:
        // where each starts, then (as a `put_u32s` list) their entries, read from the pool
        // in the same order.
        let mut start = 0u64;
        for chain in &self.chains {
            put_u64(out, chain.checkpoints.len() as u64);
            for k in &chain.checkpoints {
                put_u32(out, k.seq);
                put_u64(out, start);
                put_u64(out, u64::from(k.clock.len));
                start += u64::from(k.clock.len);
            }
        }
        put_u64(out, start);
        for k in self.chains.iter().flat_map(|chain| &chain.checkpoints) {
            self.clocks
                .entries(&k.clock)
                .iter()
                .for_each(|e| put_u32(out, e));
        }
        put_u32s(out, self.heads.as_slice().iter().map(|p| p.get()));
    }

    /// Reads an index [`DagIndex::encode_into`] wrote; `None` when the bytes are not one.
    pub fn decode_from(r: &mut Reader<'_>) -> Option<DagIndex> {
        let parent_off = r.u32s()?;
        let parent_tgt: Vec<Pos> = r.u32s_in_place()?.map(Pos::new).collect();
        let gens = r.u64s_in_place()?;
        let mut gen = Generations::with_capacity(gens.len());
        gens.for_each(|g| gen.push(g));
        let chain_of: Narrow = r.u32s_in_place()?.collect();
        let seq_of: Narrow = r.u32s_in_place()?.collect();
        let n = gen.len();
        let csr_ok = parent_off.len() == n + 1
            && parent_off.first() == Some(&0)
            && parent_off.last().map(|&e| e as usize) == Some(parent_tgt.len())
            && parent_off.windows(2).enumerate().all(|(i, w)| match w {
                [a, b] => {
                    a <= b
                        && parent_tgt
                            .get(*a as usize..*b as usize)
                            .is_some_and(|ps| ps.iter().all(|p| p.index() < i))
                }
                _ => false,
            });
        if !csr_ok || chain_of.len() != n || seq_of.len() != n {
            return None;
        }
        let chain_count = r.count(8)?;
        // Each chain's checkpoints as written: (seq, start, len) in the full-width pool.
        let mut written: Vec<Vec<(u32, usize, usize)>> = Vec::with_capacity(chain_count);
        let mut chains: Vec<Chain> = Vec::with_capacity(chain_count);
        for _ in 0..chain_count {
            let k = r.count(20)?;
            let mut checkpoints = Vec::with_capacity(k);
            for _ in 0..k {
                let seq = r.u32()?;
                let start = usize::try_from(r.u64()?).ok()?;
                let len = usize::try_from(r.u64()?).ok()?;
                checkpoints.push((seq, start, len));
            }
            written.push(checkpoints);
            chains.push(Chain::default());
        }
        for (i, (c, seq)) in chain_of.iter().zip(seq_of.iter()).enumerate() {
            let chain = chains.get_mut(c as usize)?;
            if chain.members.len().checked_add(1)? != seq as usize {
                return None;
            }
            chain.members.push(Pos::new(u32::try_from(i).ok()?));
        }
        // The clocks, read from the bytes in place (no full-width copy of the pool is made;
        // room for all of them narrow, of which only what is used becomes resident).
        let entries = r.count(4)?;
        let pool = r.take(entries.checked_mul(4)?)?;
        let clock_at = |start: usize, len: usize, into: &mut Vec<u32>| -> Option<()> {
            let end = start.checked_add(len)?.checked_mul(4)?;
            into.clear();
            into.extend(
                pool.get(start.checked_mul(4)?..end)?
                    .chunks_exact(4)
                    .map(|c| c.try_into().map_or(0, u32::from_le_bytes)),
            );
            Some(())
        };
        let lengths: Vec<usize> = chains.iter().map(|c| c.members.len()).collect();
        let mut clock = Vec::with_capacity(chain_count);
        let mut clocks = ClockPool::with_capacity(entries, 0);
        for (chain, written) in chains.iter_mut().zip(&written) {
            let ascending = written.windows(2).all(|w| matches!(w, [a, b] if a.0 < b.0));
            if !ascending {
                return None;
            }
            for &(seq, start, len) in written {
                clock_at(start, len, &mut clock)?;
                let fits = seq >= 1
                    && seq as usize <= chain.members.len()
                    && len <= chain_count
                    && clock.iter().zip(&lengths).all(|(&s, &n)| s as usize <= n);
                if !fits {
                    return None;
                }
                let clock = clocks.push(&clock);
                chain.checkpoints.push(Checkpoint { seq, clock });
            }
        }
        let heads: Vec<Pos> = r.u32s_in_place()?.map(Pos::new).collect();
        let heads_ok = heads.iter().all(|h| h.index() < n)
            && heads.windows(2).all(|w| matches!(w, [a, b] if a < b));
        heads_ok.then_some(DagIndex {
            parent_off,
            parent_tgt,
            gen,
            chain_of,
            seq_of,
            chains,
            clocks,
            heads: Heads::from_sorted(heads),
            running: super::running::RunningClocks::default(),
        })
    }
}
