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
