use akledger_core::exchange::causality::MemoryGraph;
use akledger_core::exchange::preview::*;
use akledger_core::exchange::*;
use akledger_core::exchange::{Act, ExchangeView, SidecarAuthor};
use akledger_core::internals::verdict;
use akledger_core::workload::{sidecar_workload, SidecarSpec, SidecarWorkload};
use akledger_core::*;

/// A sidecar workload, its verifier, and its events verified.
fn verified_workload(
    seed: u64,
    exchanges: usize,
    agents: usize,
) -> (SidecarWorkload, akledger_core::Verifier, Vec<Event>) {
    let spec = SidecarSpec {
        exchanges,
        agents,
        forgeries: false,
        skills: false,
    };
    let w = sidecar_workload(seed, spec).unwrap();
    let verifier = akledger_core::Verifier::new(w.keyring.clone());
    let events = w
        .events
        .iter()
        .map(|e| Event::from_bytes(e.bytes(), &verifier).unwrap())
        .collect();
    (w, verifier, events)
}

/// `candidate` previewed over `events` (with the incremental path and without) gets the
/// verdict the fold gives once it is added; returns that verdict.
fn check(
    info: &SidecarInfo,
    items: &[ExchangeItem],
    events: &[Event],
    candidate: &Event,
    keyring: &Keyring,
) -> Preview {
    let before = MemoryGraph::from_events(events);
    let item = match classify(info, candidate, keyring) {
        Some(Classified::Exchange(item)) => *item,
        Some(Classified::Unbound(n)) => {
            let full = preview(info, |_| (items, None), candidate, keyring, &before);
            assert_eq!(full, Preview::NotFolded(n.reason));
            return full;
        }
        _ => unreachable!("only exchange events are checked"),
    };
    let x = item.exchange_id.clone();
    let mine: Vec<ExchangeItem> = items
        .iter()
        .filter(|i| i.exchange_id == x)
        .cloned()
        .collect();
    let folded = fold_exchange(info, &x, &mine, &before);
    let full = preview(info, |_| (&mine, None), candidate, keyring, &before);
    let quick = preview(
        info,
        |_| (&mine, Some(&folded)),
        candidate,
        keyring,
        &before,
    );
    let mut with = mine;
    with.push(item);
    let after = MemoryGraph::from_events(events.iter().chain([candidate]));
    let truth = verdict(fold_exchange(info, &x, &with, &after), candidate.id());
    assert_eq!(full, truth, "{}", candidate.id());
    assert_eq!(quick, truth, "{}", candidate.id());
    truth
}

/// Each exchange event of a workload, previewed over the events before it, and each
/// forgery that verifies, previewed over them all, get the fold's verdict.
#[test]
fn preview_says_what_the_fold_with_the_event_says() {
    let mut verdicts = std::collections::BTreeSet::new();
    for seed in [3, 4] {
        let (w, verifier, events) = verified_workload(seed, 6, 3);
        let mut info = SidecarInfo::of_create(&events[1]).unwrap();
        let mut items: Vec<ExchangeItem> = Vec::new();
        for (k, event) in events.iter().enumerate() {
            match classify(&info, event, &w.keyring) {
                Some(Classified::Attach(a)) => info.attaches.push(a),
                Some(Classified::Exchange(item)) => {
                    let truth = check(&info, &items, &events[..k], event, &w.keyring);
                    verdicts.insert(format!("{truth:?}").chars().take(12).collect::<String>());
                    items.push(*item);
                }
                _ => {}
            }
        }
        // A stranger's response and close on every exchange: neither folds.
        let stranger = ed25519_dalek::SigningKey::from_bytes(&[99; 32]);
        let actor = akledger_core::ActorId::service_for_key(&stranger.verifying_key());
        let author =
            SidecarAuthor::from_keyring(stranger, actor, info.clone(), &w.keyring, 1).unwrap();
        let graph = MemoryGraph::from_events(&events);
        let at = events.iter().map(Event::created_at).max().unwrap();
        let rng = &mut rand_core::OsRng;
        let body = || akledger_core::Json::from("x");
        let fold = akledger_core::exchange::fold_sidecar(&info, &events, &w.keyring, &graph);
        for p in &fold.projections {
            let response = author
                .respond(&p.exchange_id, p.request_event_id, None, body(), at, rng)
                .unwrap();
            let close = author
                .control(&ExchangeView::of(p), Act::Close, &graph, at, rng)
                .unwrap();
            for candidate in [response, close] {
                let candidate = candidate.verify(&verifier).unwrap();
                let truth = check(&info, &items, &events, &candidate, &w.keyring);
                assert!(matches!(truth, Preview::NotFolded(_)), "{truth:?}");
                verdicts.insert(format!("{truth:?}"));
            }
        }
    }
    assert!(verdicts.len() > 1, "both verdicts occur: {verdicts:?}");
}

/// `OnTop` over all but the last event answers like a graph holding all of them.
#[test]
fn on_top_agrees_with_the_whole_graph() {
    let (_, _, events) = verified_workload(11, 2, 2);
    let ids: Vec<EventId> = events.iter().map(Event::id).collect();
    for cut in [events.len() - 1, events.len() / 2] {
        let whole = MemoryGraph::from_events(&events[..=cut]);
        let base = MemoryGraph::from_events(&events[..cut]);
        let top = &events[cut];
        let on_top = OnTop {
            base: &base,
            id: top.id(),
            parents: top.dependencies().to_vec(),
        };
        let set = &ids[..=cut];
        assert_eq!(on_top.heads_of(set), whole.heads_of(set));
        for basis in [vec![top.id()], vec![ids[0], top.id()], vec![ids[1]]] {
            for x in set {
                assert_eq!(on_top.covers(&basis, x), whole.covers(&basis, x));
            }
            assert_eq!(
                on_top.covered_among(&basis, set),
                whole.covered_among(&basis, set)
            );
        }
        assert!(on_top.is_admitted(&top.id()));
    }
}
