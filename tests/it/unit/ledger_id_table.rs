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
        let pos = table.push_at(&id(n), None).unwrap();
        oracle.insert(id(n), pos);
        assert_eq!(
            table.push_at(&id(n), None),
            None,
            "a repeated id is refused"
        );
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

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Ids pushed at the vacancies their lookups gave, with other ids pushed in between
    /// (as a batch's admissions are decided first and inserted after), land where plain
    /// pushes put them, and a repeat is still refused, across the table's growth.
    #[test]
    fn pushes_at_vacancies_agree_with_plain_pushes(
        seed in 0u32..1_000_000,
        committed in 0u32..3_000,
        batch in 1u32..2_000,
        repeat_every in 2u32..50,
    ) {
        let mut plain = IdTable::default();
        let mut hinted = IdTable::default();
        for n in seed..seed + committed {
            plain.push_at(&id(n), None).unwrap();
            hinted.push_at(&id(n), None).unwrap();
        }
        // The batch: looked up on the table as it was, then inserted in order. Every few
        // ids one repeats a committed id (or one earlier in the batch).
        let ids: Vec<EventId> = (0..batch)
            .map(|i| if i % repeat_every == 0 && committed + i > 0 {
                id(seed + (i * 7919) % (committed + i))
            } else {
                id(seed + committed + i)
            })
            .collect();
        let vacancies: Vec<_> = ids.iter().map(|i| hinted.find_or_vacancy(i)).collect();
        for (i, found) in ids.iter().zip(vacancies) {
            let vacancy = match found {
                Ok(pos) => {
                    proptest::prop_assert_eq!(plain.get(i), Some(pos));
                    continue;
                }
                Err(vacancy) => vacancy,
            };
            proptest::prop_assert_eq!(hinted.push_at(i, vacancy), plain.push_at(i, None));
        }
        proptest::prop_assert_eq!(hinted.raw(), plain.raw());
        for i in &ids {
            proptest::prop_assert_eq!(hinted.get(i), plain.get(i));
            proptest::prop_assert_eq!(hinted.push_at(i, None), None);
        }
    }
}
