use akledger::dag::Pos;
use akledger::internals::id_table::*;
#[allow(unused_imports)]
use akledger::*;
use std::collections::HashMap;

fn id(n: u32) -> EventId {
    let digest = *blake3::hash(&n.to_le_bytes()).as_bytes();
    EventId::from_digest(DigestSuite::Blake3, &digest)
}

#[test]
fn agrees_with_a_hash_map_and_refuses_repeats() {
    let mut table = IdTable::default();
    let mut oracle = HashMap::new();
    for n in 0..20_000u32 {
        let pos = table.push(&id(n)).unwrap();
        oracle.insert(id(n), pos);
        assert_eq!(table.push(&id(n)), None, "a repeated id is refused");
    }
    for n in 0..25_000u32 {
        assert_eq!(table.get(&id(n)), oracle.get(&id(n)).copied());
    }
    for (i, raw) in table.raw().iter().enumerate() {
        let pos = Pos::new(i as u32);
        assert_eq!(table.id_at(pos).unwrap().bytes(), raw);
    }
    let rebuilt = IdTable::from_raw(table.raw().to_vec()).unwrap();
    assert_eq!(rebuilt, table);
    assert_eq!(rebuilt.get(&id(777)), table.get(&id(777)));
    let mut twice = table.raw().to_vec();
    twice.push(twice[3]);
    assert!(IdTable::from_raw(twice).is_none());
    assert!(
        IdTable::from_raw(vec![[0xee; 33]]).is_none(),
        "unknown suite"
    );
}
