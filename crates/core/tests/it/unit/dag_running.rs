use akledger_core::dag::*;
use akledger_core::internals::{
    dag_without_running_clocks, running_clock_counts, MAX_TRACKED_CHAINS,
};
use akledger_core::workload::SplitMix;

/// `n` events by `writers` writers; each names its writer's previous event first (when
/// `chained`), then up to three others: recent ones, the first event, or (when `any`)
/// any at all.
fn dag(seed: u64, n: usize, writers: usize, chained: bool, any: bool) -> Vec<Vec<Pos>> {
    let mut rng = SplitMix::new(seed | 1);
    let mut latest: Vec<Option<u32>> = vec![None; writers];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let w = rng.below(writers);
        let mut ps = Vec::new();
        if let (true, Some(p)) = (chained, latest[w]) {
            ps.push(Pos::new(p));
        }
        for _ in 0..rng.below(4).min(i) {
            let p = match rng.below(4) {
                0 => 0,
                1 if any => rng.below(i) as u32,
                _ => (i - 1 - rng.below(i.min(50))) as u32,
            };
            ps.push(Pos::new(p));
        }
        latest[w] = Some(i as u32);
        out.push(ps);
    }
    out
}

fn build(events: &[Vec<Pos>], running: bool) -> DagIndex {
    let mut idx = if running {
        DagIndex::new()
    } else {
        dag_without_running_clocks()
    };
    for (i, ps) in events.iter().enumerate() {
        idx.insert(ps, i as u64).expect("parents exist");
    }
    idx
}

#[test]
fn checkpoints_equal_those_walked_for() {
    let shapes = [
        (1, 5_000, 1, true),
        (2, 5_000, 8, true),
        (3, 20_000, 64, true),
    ];
    let shapes = shapes
        .into_iter()
        .chain([(4, 5_000, 64, false), (5, 3_000, 300, true)]);
    let shapes = shapes.chain([(6, 20_000, 64, true)]);
    for (seed, n, writers, chained) in shapes {
        let events = dag(seed, n, writers, chained, seed % 2 == 1);
        let walked = build(&events, false);
        let running = build(&events, true);
        assert_eq!(running_clock_counts(&walked).1, 0);
        assert!(
            walked == running,
            "seed {seed}: {n} events, {writers} writers, chained {chained}"
        );
    }
}

#[test]
fn tip_clocks_are_mostly_known_and_tracking_stops_past_its_bound() {
    let idx = build(&dag(9, 20_000, 64, true, false), true);
    let (_, _, known) = running_clock_counts(&idx);
    assert!(
        known * 2 > idx.chain_count(),
        "{known} of {}",
        idx.chain_count()
    );
    // Unchained events by many writers start a chain each time no parent is a tip.
    let events = dag(10, 4_000, 4_000, false, true);
    let running = build(&events, true);
    assert!(running.chain_count() > MAX_TRACKED_CHAINS);
    let (off, tips, _) = running_clock_counts(&running);
    assert!(off && tips == 0);
    assert!(running == build(&events, false));
}
