//! Oracle tests for `akledger_core::dag`: every query of `DagIndex` is compared with a naive
//! breadth-first-search oracle on random DAGs (1–64 writers, 0–4 parents, cross refs,
//! duplicate and shuffled parents), plus rebuild-equals-incremental and error cases.

use akledger_core::dag::{ChainSource, DagError, DagIndex, Pos};
use akledger_core::workload::SplitMix;
use proptest::prelude::*;
use std::collections::VecDeque;

/// Random DAG as `(parents, stamp)` in insertion order.
fn random_dag(seed: u64, n: usize, writers: usize, shuffle: bool) -> Vec<(Vec<Pos>, u64)> {
    let mut rng = SplitMix::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut latest: Vec<Option<u32>> = vec![None; writers];
    let mut stamps: Vec<u64> = Vec::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let w = rng.below(writers);
        let mut ps: Vec<Pos> = Vec::new();
        if let Some(prev) = latest[w] {
            if rng.below(40) != 0 {
                ps.push(Pos::new(prev));
            }
        }
        if i > 0 {
            let extra = rng.below(4);
            for _ in 0..extra {
                let p = match rng.below(3) {
                    0 => rng.below(i) as u32,
                    _ => match latest[rng.below(writers)] {
                        Some(p) => p,
                        None => rng.below(i) as u32,
                    },
                };
                ps.push(Pos::new(p));
            }
            if rng.below(10) == 0 {
                if let Some(&p) = ps.first() {
                    ps.push(p); // duplicate
                }
            }
        }
        if shuffle {
            for k in (1..ps.len()).rev() {
                let j = rng.below(k + 1);
                ps.swap(k, j);
            }
        }
        let base = ps.iter().map(|p| stamps[p.index()]).max().unwrap_or(0);
        let stamp = base + rng.below(3) as u64;
        stamps.push(stamp);
        latest[w] = Some(i as u32);
        out.push((ps, stamp));
    }
    out
}

struct Oracle {
    parents: Vec<Vec<u32>>,
}

impl Oracle {
    fn new(events: &[(Vec<Pos>, u64)]) -> Self {
        Oracle {
            parents: events
                .iter()
                .map(|(ps, _)| ps.iter().map(|p| p.get()).collect())
                .collect(),
        }
    }
    fn n(&self) -> usize {
        self.parents.len()
    }
    /// Covered set of `set` by BFS.
    fn covered(&self, set: &[Pos]) -> Vec<bool> {
        let mut seen = vec![false; self.n()];
        let mut q: VecDeque<u32> = VecDeque::new();
        for p in set {
            if p.index() < self.n() && !seen[p.index()] {
                seen[p.index()] = true;
                q.push_back(p.get());
            }
        }
        while let Some(x) = q.pop_front() {
            for &p in &self.parents[x as usize] {
                if !seen[p as usize] {
                    seen[p as usize] = true;
                    q.push_back(p);
                }
            }
        }
        seen
    }
    fn covers(&self, basis: &[Pos], x: Pos) -> bool {
        x.index() < self.n() && self.covered(basis)[x.index()]
    }
    fn is_ancestor(&self, a: Pos, b: Pos) -> bool {
        a != b && b.index() < self.n() && self.covers(&[b], a)
    }
    fn heads_of(&self, set: &[Pos]) -> Vec<Pos> {
        let mut s: Vec<Pos> = set
            .iter()
            .copied()
            .filter(|p| p.index() < self.n())
            .collect();
        s.sort();
        s.dedup();
        // Union of strict ancestors of the members = covered set of all their parents.
        let parents: Vec<Pos> = s
            .iter()
            .flat_map(|x| self.parents[x.index()].iter().map(|&p| Pos::new(p)))
            .collect();
        let strict = self.covered(&parents);
        s.into_iter().filter(|x| !strict[x.index()]).collect()
    }
    fn list(v: &[bool]) -> Vec<Pos> {
        v.iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(i, _)| Pos::new(i as u32))
            .collect()
    }
}

fn build(events: &[(Vec<Pos>, u64)]) -> DagIndex {
    let mut idx = DagIndex::new();
    for (i, (ps, st)) in events.iter().enumerate() {
        let p = idx.insert(ps, *st).expect("valid insert");
        assert_eq!(p, Pos::new(i as u32));
    }
    idx
}

fn key_of(x: Pos) -> u32 {
    x.get().wrapping_mul(2_654_435_761) % 97
}

fn check_order(idx: &DagIndex, o: &Oracle) {
    let order = idx.causal_order(key_of);
    assert_eq!(order, idx.causal_order(key_of), "deterministic");
    assert_eq!(order.len(), o.n());
    // Replay Kahn: each emitted event is the smallest (key, pos) among ready ones.
    let mut remaining: Vec<usize> = o
        .parents
        .iter()
        .map(|ps| {
            let mut u = ps.clone();
            u.sort();
            u.dedup();
            u.len()
        })
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); o.n()];
    for (x, ps) in o.parents.iter().enumerate() {
        let mut u = ps.clone();
        u.sort();
        u.dedup();
        for p in u {
            children[p as usize].push(x);
        }
    }
    let mut emitted = vec![false; o.n()];
    for &x in &order {
        assert!(!emitted[x.index()], "emitted twice");
        assert_eq!(remaining[x.index()], 0, "emitted before a parent");
        let best = (0..o.n())
            .filter(|&i| !emitted[i] && remaining[i] == 0)
            .map(|i| (key_of(Pos::new(i as u32)), i))
            .min()
            .expect("some ready");
        assert_eq!(best.1, x.index(), "not the smallest ready key");
        emitted[x.index()] = true;
        for &c in &children[x.index()] {
            remaining[c] -= 1;
        }
    }
}

fn random_set(rng: &mut SplitMix, n: usize) -> Vec<Pos> {
    let k = rng.below(8);
    let mut s: Vec<Pos> = (0..k).map(|_| Pos::new(rng.below(n) as u32)).collect();
    if rng.below(4) == 0 {
        // recent events, where concurrency is common
        for _ in 0..rng.below(6) {
            s.push(Pos::new((n - 1 - rng.below(n.min(20))) as u32));
        }
    }
    if rng.below(6) == 0 {
        s.push(Pos::new(n as u32 + 3)); // unknown position
    }
    if rng.below(5) == 0 {
        if let Some(&p) = s.first() {
            s.push(p);
        }
    }
    s
}

fn check_all(events: &[(Vec<Pos>, u64)], queries: usize, seed: u64, check_causal: bool) {
    let idx = build(events);
    let o = Oracle::new(events);
    let n = o.n();
    assert_eq!(idx.len(), n);
    assert_eq!(idx.is_empty(), n == 0);
    for (i, (ps, _)) in events.iter().enumerate() {
        let mut want: Vec<Pos> = Vec::new();
        for p in ps {
            if !want.contains(p) {
                want.push(*p);
            }
        }
        assert_eq!(idx.parents(Pos::new(i as u32)), &want[..]);
    }
    let all: Vec<Pos> = (0..n as u32).map(Pos::new).collect();
    assert_eq!(idx.heads(), &o.heads_of(&all)[..], "heads");
    assert_eq!(idx.heads_of(&all), o.heads_of(&all), "heads_of(all)");

    // Rebuild equals incremental.
    assert!(build(events) == idx, "rebuild differs");

    if n == 0 {
        return;
    }
    let mut rng = SplitMix::new(seed | 1);
    for _ in 0..queries {
        let set = random_set(&mut rng, n);
        let cov = o.covered(&set);
        assert_eq!(idx.heads_of(&set), o.heads_of(&set), "heads_of {set:?}");
        assert_eq!(
            idx.ancestors_of(&set).collect::<Vec<_>>(),
            Oracle::list(&cov),
            "ancestors_of {set:?}"
        );
        let xs: Vec<Pos> = (0..rng.below(10))
            .map(|_| Pos::new(rng.below(n + 2) as u32))
            .collect();
        let want: Vec<bool> = xs.iter().map(|x| x.index() < n && cov[x.index()]).collect();
        assert_eq!(idx.covers_all(&set, &xs), want, "covers_all {set:?} {xs:?}");
        for (x, w) in xs.iter().zip(&want) {
            assert_eq!(idx.covers(&set, *x), *w, "covers {set:?} {x:?}");
        }
        let set_b = random_set(&mut rng, n);
        let cov_b = o.covered(&set_b);
        let diff: Vec<Pos> = (0..n)
            .filter(|&i| cov[i] && !cov_b[i])
            .map(|i| Pos::new(i as u32))
            .collect();
        assert_eq!(idx.difference(&set, &set_b), diff, "difference");

        let a = Pos::new(rng.below(n + 1) as u32);
        let b = Pos::new(if rng.below(2) == 0 {
            rng.below(n + 1)
        } else {
            n - 1 - rng.below(n.min(30))
        } as u32);
        assert_eq!(
            idx.is_ancestor(a, b),
            o.is_ancestor(a, b),
            "is_ancestor {a:?} {b:?}"
        );
        assert_eq!(
            idx.is_ancestor(b, a),
            o.is_ancestor(b, a),
            "is_ancestor {b:?} {a:?}"
        );
        let conc = a != b
            && a.index() < n
            && b.index() < n
            && !o.is_ancestor(a, b)
            && !o.is_ancestor(b, a);
        assert_eq!(idx.concurrent(a, b), conc, "concurrent {a:?} {b:?}");
        let mut strict = o.covered(&[b]);
        if b.index() < n {
            strict[b.index()] = false;
        }
        assert_eq!(
            idx.ancestors(b).collect::<Vec<_>>(),
            Oracle::list(&strict),
            "ancestors {b:?}"
        );
    }
    if check_causal {
        check_order(&idx, &o);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn small_dags_agree_with_oracle(
        seed in any::<u64>(),
        n in 0usize..300,
        writers in 1usize..=64,
        shuffle in any::<bool>(),
    ) {
        let events = random_dag(seed, n, writers, shuffle);
        check_all(&events, 25, seed ^ 0xABCD, true);
    }
}

#[test]
fn large_dags_agree_with_oracle() {
    for (seed, writers, shuffle) in [(1u64, 8usize, false), (2, 64, false), (3, 5, true)] {
        let events = random_dag(seed, 10_000, writers, shuffle);
        check_all(&events, 30, seed, false);
    }
    // Thousands of writers make thousands of chains: targeted walks keep their per-chain
    // prefix sparse past 1024 chains, and must answer alike.
    let events = random_dag(4, 8_000, 3_000, true);
    assert!(build(&events).chain_count() > 1024);
    check_all(&events, 60, 4, false);
}

#[test]
fn causal_order_on_medium_dag() {
    let events = random_dag(7, 2_000, 16, false);
    let idx = build(&events);
    check_order(&idx, &Oracle::new(&events));
}

#[test]
fn single_writer_chain_and_genesis() {
    let mut idx = DagIndex::with_capacity(4);
    let a = idx.insert(&[], 5).unwrap();
    let b = idx.insert(&[a, a], 5).unwrap();
    let c = idx.insert(&[b], 1).unwrap(); // stamp below parent: generation still ordered
    assert_eq!(idx.heads(), &[c]);
    assert_eq!(idx.parents(b), &[a]);
    assert!(idx.is_ancestor(a, c));
    assert!(!idx.is_ancestor(c, c));
    assert!(!idx.concurrent(a, a));
    assert!(idx.generation(c) > idx.generation(b));
    assert_eq!(idx.ancestors(c).collect::<Vec<_>>(), vec![a, b]);
    assert!(idx.memory_bytes() > 0);
}

#[test]
fn unknown_parent_is_an_error() {
    let mut idx = DagIndex::new();
    assert_eq!(
        idx.insert(&[Pos::new(0)], 1),
        Err(DagError::UnknownParent {
            parent: Pos::new(0),
            len: 0
        })
    );
    let a = idx.insert(&[], 1).unwrap();
    let before = idx.clone();
    assert!(matches!(
        idx.insert(&[a, Pos::new(7)], 2),
        Err(DagError::UnknownParent { .. })
    ));
    assert!(idx == before, "failed insert must not change the index");
    assert!(!idx.covers(&[a], Pos::new(9)));
    assert!(idx.parents(Pos::new(9)).is_empty());
    assert_eq!(idx.heads_of(&[Pos::new(9)]), Vec::<Pos>::new());
}

/// Every checkpoint clock of `chain` (every `step`-th one) against the oracle: entry `c` is
/// the highest member of chain `c` the checkpointed member covers.
fn check_clocks(idx: &DagIndex, o: &Oracle, chain: u32, step: usize) -> usize {
    let mut checked = 0;
    for (seq, clock) in idx.checkpoint_clocks(chain).step_by(step) {
        let x = idx.chain_members(chain)[seq as usize - 1];
        let covered = o.covered(&[x]);
        let want: Vec<u32> = (0..idx.chain_count() as u32)
            .map(|c| {
                let members = idx.chain_members(c);
                members
                    .iter()
                    .rposition(|m| covered[m.index()])
                    .map_or(0, |k| k as u32 + 1)
            })
            .collect();
        let mut got = clock.to_vec();
        got.resize(want.len(), 0);
        assert_eq!(got, want, "chain {chain}, checkpoint at {seq}");
        checked += 1;
    }
    checked
}

#[test]
fn checkpoint_clocks_narrow_and_wide_hold_the_covered_prefixes() {
    // A long chain, and a short one whose members (after its first) each name the long chain's latest event:
    // the short chain's clocks span more than 2^16 values and are stored wide; the long
    // chain's (and those of a DAG of writers moving together) narrow.
    let long = 66_000u32;
    let mut events: Vec<(Vec<Pos>, u64)> = (0..long)
        .map(|i| match i {
            0 => (vec![], 0),
            i => (vec![Pos::new(i - 1)], u64::from(i)),
        })
        .collect();
    let short_start = events.len() as u32;
    events.push((vec![], u64::from(long)));
    for k in 1..200u32 {
        let parents = vec![Pos::new(short_start + k - 1), Pos::new(long - 1)];
        events.push((parents, u64::from(long + k)));
    }
    let idx = build(&events);
    let o = Oracle::new(&events);
    let (narrow, wide) = idx.clock_entries_stored();
    assert!(narrow > 0 && wide > 0, "narrow {narrow}, wide {wide}");
    let short = ChainSource::chain_seq(&idx, Pos::new(short_start + 5))
        .unwrap()
        .0;
    assert!(check_clocks(&idx, &o, short, 1) >= 20);
    let long_chain = ChainSource::chain_seq(&idx, Pos::new(10)).unwrap().0;
    assert!(check_clocks(&idx, &o, long_chain, 997) >= 8);
    for x in [
        0,
        1,
        65_535,
        65_536,
        long - 1,
        short_start,
        short_start + 199,
    ] {
        let x = Pos::new(x);
        for basis in [idx.heads().to_vec(), vec![Pos::new(short_start + 17)]] {
            assert_eq!(
                idx.covers(&basis, x),
                o.covers(&basis, x),
                "{x:?} by {basis:?}"
            );
        }
    }
    let mut bytes = Vec::new();
    idx.encode_into(&mut bytes);
    let decoded = DagIndex::decode_from(&mut akledger_core::codec::Reader::new(&bytes));
    assert_eq!(decoded.as_ref(), Some(&idx));
    assert_eq!(
        decoded.map(|d| d.clock_entries_stored()),
        Some((narrow, wide))
    );

    let events = random_dag(7, 3000, 8, false);
    let idx = build(&events);
    let o = Oracle::new(&events);
    assert_eq!(
        idx.clock_entries_stored().1,
        0,
        "writers moving together: all narrow"
    );
    for chain in 0..idx.chain_count().min(12) as u32 {
        check_clocks(&idx, &o, chain, 3);
    }
}

#[test]
fn generation_numbers_read_back_exactly_whatever_the_stamps() {
    // Stamps weeks apart within one block of positions, and at both ends of the range: the
    // numbers kept as distances from their block's first and those kept whole all read back.
    let stamps: Vec<u64> = (0..1500u64)
        .map(|i| match i % 7 {
            0 => i,
            1 => i << 40,
            2 => u64::MAX - 1 - i,
            3 => 1_000_000 + i * 86_400_000,
            _ => 5_000 + i,
        })
        .collect();
    let mut idx = DagIndex::new();
    let mut want: Vec<u64> = Vec::new();
    for (i, &stamp) in stamps.iter().enumerate() {
        let parents: Vec<Pos> = match i % 3 {
            0 => vec![],
            _ => vec![Pos::new(i as u32 - 1)],
        };
        let gen = parents
            .iter()
            .map(|p| want[p.index()].saturating_add(1))
            .fold(stamp, u64::max);
        idx.insert(&parents, stamp).unwrap();
        want.push(gen);
    }
    let got: Vec<u64> = (0..stamps.len() as u32)
        .map(|i| idx.generation(Pos::new(i)).unwrap())
        .collect();
    assert_eq!(got, want);
    let mut bytes = Vec::new();
    idx.encode_into(&mut bytes);
    let decoded = DagIndex::decode_from(&mut akledger_core::codec::Reader::new(&bytes)).unwrap();
    assert_eq!(decoded, idx);
    assert_eq!(decoded.generation(Pos::new(1)), Some(want[1]));
}
