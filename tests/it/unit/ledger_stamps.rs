use akledger::dag::{DagIndex, Pos};
use akledger::internals::stamps::*;

#[test]
fn stamps_read_back_as_lags_behind_generations_or_whole() {
    // Stamps that never run behind a parent's (what admission allows) are kept as lags; a
    // stamp far behind its parent's generation, or one a generation cannot be behind, is
    // kept whole. All read back exactly.
    let stamps = [10u64, 10, 10, 12, 3, u64::MAX - 5, 1 << 40, 7];
    let mut dag = DagIndex::new();
    let mut kept = Stamps::with_capacity(stamps.len());
    for (i, &stamp) in stamps.iter().enumerate() {
        let parents: Vec<Pos> = (i > 0)
            .then(|| Pos::new(i as u32 - 1))
            .into_iter()
            .collect();
        let pos = dag.insert(&parents, stamp).unwrap();
        kept.push(stamp, dag.generation(pos).unwrap());
    }
    let read: Vec<Option<u64>> = (0..stamps.len() as u32)
        .map(|i| kept.get(Pos::new(i), &dag))
        .collect();
    assert_eq!(read, stamps.map(Some));
    assert_eq!(kept.get(Pos::new(stamps.len() as u32), &dag), None);
}
