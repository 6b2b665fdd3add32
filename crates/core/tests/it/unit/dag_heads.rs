use akledger_core::codec::Reader;
use akledger_core::dag::*;

/// The heads a naive oracle keeps: every event, less each one a later event names.
fn oracle_heads(parents: &[Vec<u32>]) -> Vec<Pos> {
    let named: std::collections::BTreeSet<u32> = parents.iter().flatten().copied().collect();
    (0..parents.len() as u32)
        .filter(|x| !named.contains(x))
        .map(Pos::new)
        .collect()
}

/// A runtime's pattern (requests under a few roots, then answers naming them oldest first,
/// and the odd answer naming a request from the other end or an old root), checked against
/// the oracle after every insert, and through a snapshot taken while removals have left a
/// gap in front of the heads.
#[test]
fn heads_removed_from_the_middle_in_answer_order_stay_exact_and_survive_a_snapshot() {
    let (mut dag, mut parents) = (DagIndex::new(), Vec::new());
    let add = |dag: &mut DagIndex, parents: &mut Vec<Vec<u32>>, ps: Vec<u32>| {
        let pos: Vec<Pos> = ps.iter().copied().map(Pos::new).collect();
        let x = dag.insert(&pos, parents.len() as u64).unwrap();
        assert_eq!(x.get() as usize, parents.len());
        parents.push(ps);
        assert_eq!(dag.heads(), &oracle_heads(parents)[..]);
    };
    for root in 0..4 {
        add(
            &mut dag,
            &mut parents,
            if root == 0 { vec![] } else { vec![0] },
        );
    }
    let requests: Vec<u32> = (4..1004).collect();
    for &request in &requests {
        add(&mut dag, &mut parents, vec![1 + request % 3]);
    }
    let mut answered = 0;
    for (n, &request) in requests.iter().enumerate() {
        let mut ps = vec![request];
        if n % 97 == 0 {
            ps.push(*requests.last().unwrap() - n as u32 / 97);
        }
        if n % 211 == 0 {
            ps.push(0);
        }
        add(&mut dag, &mut parents, ps);
        answered += 1;
        if answered == 700 {
            let mut bytes = Vec::new();
            dag.encode_into(&mut bytes);
            let decoded = DagIndex::decode_from(&mut Reader::new(&bytes)).unwrap();
            assert_eq!(decoded.heads(), dag.heads());
            assert_eq!(decoded, dag);
        }
    }
}
