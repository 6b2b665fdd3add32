//! The index as bytes, so a ledger can load it instead of re-inserting every event: the
//! per-event arrays, the checkpoint clocks and the heads, little-endian. Chain member lists
//! are not stored; they are rebuilt from each event's `(chain, seq)`, which also checks
//! that every sequence number is where it should be. Decoding checks every offset and
//! position it will later follow, so damaged bytes give `None`, never a panic or an
//! out-of-range walk.

use super::chains::{Chain, Checkpoint};
use super::{DagIndex, Pos};
use crate::codec::{put_u32, put_u32s, put_u64, put_u64s, Reader};

impl DagIndex {
    /// Appends the index's encoding to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_u32s(out, self.parent_off.iter().copied());
        put_u32s(out, self.parent_tgt.iter().map(|p| p.get()));
        put_u64s(out, &self.gen);
        put_u32s(out, self.chain_of.iter().copied());
        put_u32s(out, self.seq_of.iter().copied());
        put_u64(out, self.chains.len() as u64);
        for chain in &self.chains {
            put_u64(out, chain.checkpoints.len() as u64);
            for k in &chain.checkpoints {
                put_u32(out, k.seq);
                put_u64(out, k.start as u64);
                put_u64(out, k.len as u64);
            }
        }
        put_u32s(out, self.clock_pool.iter().copied());
        put_u32s(out, self.heads.iter().map(|p| p.get()));
    }

    /// Reads an index [`DagIndex::encode_into`] wrote; `None` when the bytes are not one.
    pub fn decode_from(r: &mut Reader<'_>) -> Option<DagIndex> {
        let parent_off = r.u32s()?;
        let parent_tgt: Vec<Pos> = r.u32s()?.into_iter().map(Pos::new).collect();
        let gen = r.u64s()?;
        let chain_of = r.u32s()?;
        let seq_of = r.u32s()?;
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
        let mut chains = Vec::with_capacity(chain_count);
        for _ in 0..chain_count {
            let k = r.count(20)?;
            let mut checkpoints = Vec::with_capacity(k);
            for _ in 0..k {
                let seq = r.u32()?;
                let start = usize::try_from(r.u64()?).ok()?;
                let len = usize::try_from(r.u64()?).ok()?;
                checkpoints.push(Checkpoint { seq, start, len });
            }
            chains.push(Chain {
                members: Vec::new(),
                checkpoints,
            });
        }
        for (i, (&c, &seq)) in chain_of.iter().zip(&seq_of).enumerate() {
            let chain = chains.get_mut(c as usize)?;
            if chain.members.len().checked_add(1)? != seq as usize {
                return None;
            }
            chain.members.push(Pos::new(u32::try_from(i).ok()?));
        }
        let clock_pool = r.u32s()?;
        let chains_ok = chains.iter().all(|chain| {
            chain
                .checkpoints
                .windows(2)
                .all(|w| matches!(w, [a, b] if a.seq < b.seq))
                && chain.checkpoints.iter().all(|k| {
                    k.seq >= 1
                        && k.seq as usize <= chain.members.len()
                        && k.len <= chain_count
                        && clock_pool
                            .get(k.start..k.start.saturating_add(k.len))
                            .is_some_and(|clock| {
                                clock
                                    .iter()
                                    .zip(&chains)
                                    .all(|(&s, c)| s as usize <= c.members.len())
                            })
                })
        });
        let heads: Vec<Pos> = r.u32s()?.into_iter().map(Pos::new).collect();
        let heads_ok = heads.iter().all(|h| h.index() < n)
            && heads.windows(2).all(|w| matches!(w, [a, b] if a < b));
        (chains_ok && heads_ok).then_some(DagIndex {
            parent_off,
            parent_tgt,
            gen,
            chain_of,
            seq_of,
            chains,
            clock_pool,
            heads,
            running: super::running::RunningClocks::default(),
        })
    }
}
