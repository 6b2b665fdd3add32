use akledger_core::codec::Reader;
use akledger_core::dag::*;

fn sample(n: u32) -> DagIndex {
    let mut dag = DagIndex::new();
    for i in 0..n {
        let parents: Vec<Pos> = match i {
            0 => vec![],
            _ => vec![Pos::new(i - 1), Pos::new((i * 7) % i), Pos::new(i / 3)],
        };
        dag.insert(&parents, u64::from(i)).unwrap();
    }
    dag
}

#[test]
fn an_index_round_trips_and_damage_decodes_to_none_without_panicking() {
    let dag = sample(500);
    let mut bytes = Vec::new();
    dag.encode_into(&mut bytes);
    let mut r = Reader::new(&bytes);
    assert_eq!(DagIndex::decode_from(&mut r), Some(dag.clone()));
    assert!(r.is_empty());
    for cut in (0..bytes.len()).step_by(97) {
        assert_eq!(DagIndex::decode_from(&mut Reader::new(&bytes[..cut])), None);
    }
    // Every byte flipped in turn: never a panic, and whatever decodes answers queries
    // without walking out of its arrays.
    for i in (0..bytes.len()).step_by(13) {
        let mut damaged = bytes.clone();
        damaged[i] ^= 0x5a;
        if let Some(d) = DagIndex::decode_from(&mut Reader::new(&damaged)) {
            let heads = d.heads().to_vec();
            for x in (0..d.len()).step_by(37) {
                let _ = d.covers(&heads, Pos::new(x as u32));
            }
        }
    }
}

/// Every event's `(chain, seq)` agrees with its chain's member list.
fn assert_chain_places_agree(dag: &DagIndex) {
    let mut seen = 0;
    for c in 0..dag.chain_count() as u32 {
        for (k, &x) in dag.chain_members(c).iter().enumerate() {
            assert_eq!(
                akledger_core::internals::chain_seq(dag, x),
                Some((c, k as u32 + 1)),
                "{x:?}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, dag.len());
}

#[test]
fn chain_ids_and_places_past_sixteen_bits_read_back_exactly_and_round_trip() {
    // Kept in two bytes each while they fit: one chain grows past 2^16 events and, later,
    // the roots make more than 2^16 chains, so both arrays widen after holding narrow
    // numbers.
    const PAST: u32 = (1 << 16) + 100;
    let mut dag = DagIndex::new();
    let mut tip: Option<Pos> = None;
    for i in 0..PAST {
        let parents: Vec<Pos> = tip.into_iter().collect();
        tip = Some(dag.insert(&parents, u64::from(i)).unwrap());
    }
    assert_eq!(dag.chain_count(), 1);
    for i in 0..PAST {
        dag.insert(&[], u64::from(PAST + i)).unwrap();
    }
    assert_eq!(dag.chain_count(), PAST as usize + 1);
    assert_chain_places_agree(&dag);
    let last = Pos::new(PAST - 1);
    assert_eq!(
        akledger_core::internals::chain_seq(&dag, last),
        Some((0, PAST))
    );
    assert!(dag.covers(&[last], Pos::new(0)));
    assert!(!dag.covers(&[last], Pos::new(PAST)));

    let mut bytes = Vec::new();
    dag.encode_into(&mut bytes);
    let back = DagIndex::decode_from(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(back, dag);
    assert_chain_places_agree(&back);
}
