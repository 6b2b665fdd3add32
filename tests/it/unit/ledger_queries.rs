use akledger::id::{DigestSuite, Token};
use akledger::internals::queries::*;
#[allow(unused_imports)]
use akledger::*;
use std::collections::{BTreeSet, HashMap, HashSet};

fn id(n: u8) -> EventId {
    EventId::from_token(Token::new(DigestSuite::Blake3, &[n; 32]))
}

/// The naive oracle: every missing event reachable through pending ones, by a fresh
/// walk per event.
fn naive(pending: &[(EventId, Vec<EventId>)], start: EventId) -> Vec<EventId> {
    let map: HashMap<EventId, Vec<EventId>> = pending.iter().cloned().collect();
    let (mut seen, mut todo, mut roots) = (HashSet::new(), vec![start], BTreeSet::new());
    while let Some(x) = todo.pop() {
        if !seen.insert(x) {
            continue;
        }
        match map.get(&x) {
            Some(deps) => todo.extend(deps.iter().copied()),
            None => {
                roots.insert(x);
            }
        }
    }
    roots.into_iter().collect()
}

#[test]
fn roots_follow_chains_and_diamonds_like_the_naive_walk() {
    // 1 <- 2 <- 3 (chain on never-seen 1); 4 waits for 3 and never-seen 5;
    // 6 waits for 2 and 4 (diamond); 7 waits for never-seen 8 only.
    let pending = vec![
        (id(2), vec![id(1)]),
        (id(3), vec![id(2)]),
        (id(4), vec![id(3), id(5)]),
        (id(6), vec![id(2), id(4)]),
        (id(7), vec![id(8)]),
    ];
    let causes = pending_causes(pending.clone());
    for cause in &causes {
        assert_eq!(
            cause.root_missing,
            naive(&pending, cause.id),
            "{}",
            cause.id
        );
    }
    let six = causes
        .iter()
        .find(|c| c.id == id(6))
        .map(|c| &c.root_missing);
    let mut want = vec![id(1), id(5)];
    want.sort_unstable();
    assert_eq!(six, Some(&want));
}

#[test]
fn a_long_chain_is_walked_without_recursion() {
    let n = 200_000u32;
    let ids: Vec<EventId> = (0..=n)
        .map(|i| {
            let mut d = [0u8; 32];
            d[..4].copy_from_slice(&i.to_be_bytes());
            EventId::from_token(Token::new(DigestSuite::Blake3, &d))
        })
        .collect();
    let pending: Vec<(EventId, Vec<EventId>)> =
        ids.windows(2).map(|w| (w[1], vec![w[0]])).collect();
    let causes = pending_causes(pending);
    assert!(causes.iter().all(|c| c.root_missing == vec![ids[0]]));
}

#[test]
fn a_cycle_in_hostile_state_ends() {
    let pending = vec![(id(1), vec![id(2), id(9)]), (id(2), vec![id(1)])];
    let causes = pending_causes(pending);
    assert_eq!(causes.len(), 2);
    assert_eq!(causes[0].root_missing, vec![id(9)]);
}
