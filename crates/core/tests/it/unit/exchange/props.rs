//! Property: the fold is a pure function of the event set (any order, bit-identical
//! output), and projections keep the status invariants of arkret-facts §4.4.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rand_core::OsRng;

use super::*;

/// One authoring step; numbers are taken modulo what exists.
#[derive(Clone, Debug)]
enum Op {
    Open(u8),
    Respond(u8, u8),
    /// A response that also names an admitted event (any exchange's, a control, the
    /// sidecar's own) in an `after` ref.
    RespondAfter(u8, u8, u16),
    Internal(u8, u8),
    Control {
        exchange: u8,
        act: u8,
        agents: u8,
        stale: bool,
    },
    SaveView(u8),
    /// The controller creates another strand and attaches the sidecar to it (next
    /// version); later requests name it.
    Reattach,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => any::<u8>().prop_map(Op::Open),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(a, x)| Op::Respond(a, x)),
        2 => (any::<u8>(), any::<u8>(), any::<u16>()).prop_map(|(a, x, e)| Op::RespondAfter(a, x, e)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(a, x)| Op::Internal(a, x)),
        2 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>())
            .prop_map(|(exchange, act, agents, stale)| Op::Control { exchange, act, agents, stale }),
        1 => any::<u8>().prop_map(Op::SaveView),
        1 => Just(Op::Reattach),
    ]
}

struct Sim {
    w: World,
    open: Vec<(ExchangeId, EventId)>,
    saved: Vec<ExchangeView>,
}

impl Sim {
    fn pick(&self, n: u8) -> Option<(ExchangeId, EventId)> {
        let len = self.open.len();
        (len > 0).then(|| self.open[usize::from(n) % len].clone())
    }

    fn act(&self, act: u8, agents: u8) -> Act {
        let (a, b) = (usize::from(agents % 3), usize::from(agents / 3 % 3));
        match act % 5 {
            0 => Act::Close,
            1 => Act::Cancel,
            2 => Act::Fail("agent_deactivated".into()),
            _ => Act::Reassign {
                expected: self.w.agent(a),
                new: self.w.agent(b),
            },
        }
    }

    fn reattach(&mut self) {
        let (key, actor) = signer(1);
        let n = self.w.sidecar.attaches.len();
        let scope = akledger_core::envelope::ScopeRef::Realm {
            realm_id: self.w.sidecar.realm_id,
        };
        let strand = akledger_core::event::EventBuilder::new(
            akledger_core::envelope::STRAND_CREATE,
            scope,
            actor.clone(),
            at(),
        )
        .payload(
            akledger_core::canonical::Object::new()
                .with("n", Json::Int(n as i64))
                .into(),
        )
        .sign(&key);
        let strand: StrandId = self.w.add(strand).retype();
        let latest = self
            .w
            .sidecar
            .attaches
            .iter()
            .max_by_key(|a| (a.version, a.event_id.digest()))
            .map(|a| (a.event_id, a.version));
        let attach = attach_context(&key, actor.clone(), &self.w.sidecar, strand, latest, at());
        let event_id = self.w.add(attach);
        self.w.sidecar.attaches.push(ContextAttach {
            event_id,
            strand_id: strand,
            version: latest.map_or(1, |l| l.1 + 1),
        });
        self.w.strand = strand;
        self.w.controller =
            SidecarAuthor::from_keyring(key, actor, self.w.sidecar.clone(), &self.w.keyring, 1)
                .unwrap();
    }

    fn step(&mut self, op: &Op) {
        match *op {
            Op::Reattach => self.reattach(),
            Op::Open(bits) => {
                let x = xid(u32::try_from(self.open.len()).unwrap());
                let addressed: Vec<usize> = (0..3).filter(|i| bits >> i & 1 == 1).collect();
                let addressed = if addressed.is_empty() {
                    vec![0]
                } else {
                    addressed
                };
                let r = self.w.request(&x, &addressed, addressed.first().copied());
                self.saved.push(ExchangeView::of(&self.w.projection(&x)));
                self.open.push((x, r));
            }
            Op::Respond(a, n) | Op::Internal(a, n) => {
                let Some((x, r)) = self.pick(n) else { return };
                let agent = usize::from(a % 3);
                if matches!(op, Op::Respond(..)) {
                    self.w.respond(agent, &x, r);
                } else {
                    self.w.internal(agent, &x, r);
                }
            }
            Op::RespondAfter(a, n, e) => {
                let Some((x, r)) = self.pick(n) else { return };
                let also = self.w.events[usize::from(e) % self.w.events.len()].id();
                self.w.respond_after(usize::from(a % 3), &x, r, also);
            }
            Op::SaveView(n) => {
                if let Some((x, _)) = self.pick(n) {
                    let i = self.open.iter().position(|o| o.0 == x).unwrap();
                    self.saved[i] = ExchangeView::of(&self.w.projection(&x));
                }
            }
            Op::Control {
                exchange,
                act,
                agents,
                stale,
            } => {
                let Some((x, _)) = self.pick(exchange) else {
                    return;
                };
                let i = self.open.iter().position(|o| o.0 == x).unwrap();
                let view = if stale {
                    self.saved[i].clone()
                } else {
                    ExchangeView::of(&self.w.projection(&x))
                };
                let act = self.act(act, agents);
                if let Ok(e) =
                    self.w
                        .controller
                        .control(&view, act, &self.w.graph(), at(), &mut OsRng)
                {
                    self.w.add(Ok(e));
                }
            }
        }
    }
}

fn shuffled<T: Clone>(items: &[T], mut seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    for i in (1..out.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.swap(i, usize::try_from(seed >> 33).unwrap() % (i + 1));
    }
    out
}

fn check_invariants(w: &World, fold: &SidecarFold) {
    for p in &fold.projections {
        let n = p.user_facing_response_event_ids.len();
        let (code, terminal) = (
            p.failure_reason_code.is_some(),
            p.terminal_event_id.is_some(),
        );
        match p.status {
            Status::Delivered => assert!(n == 0 && !code && !terminal),
            Status::Responding => assert!(n >= 1 && !code && !terminal),
            Status::Complete => assert!(n >= 1 && !code && terminal),
            Status::Failed => assert!(n == 0 && code && terminal),
        }
        assert!(p.folded_event_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(p.participating_agent_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(p
            .user_facing_response_event_ids
            .windows(2)
            .all(|w| w[0] < w[1]));
    }
    // The timeline says what the fold says: folded, applied and terminal items are the
    // folded ids, ignored ones the not-folded list with the same reason.
    for p in &fold.projections {
        let h = w.history(&p.exchange_id);
        let mut folded: Vec<EventId> = h
            .entries
            .iter()
            .filter(|e| !matches!(e.verdict, Verdict::Ignored { .. }))
            .map(|e| e.event_id)
            .collect();
        folded.sort();
        assert_eq!(folded, p.folded_event_ids);
        // Causal order: no entry covers one listed after it.
        let graph = w.graph();
        for (i, e) in h.entries.iter().enumerate() {
            for later in h.entries.iter().skip(i + 1) {
                assert!(!graph.covers(&[e.event_id], &later.event_id));
            }
        }
        let terminal = h.entries.iter().find(|e| e.verdict == Verdict::Terminal);
        assert_eq!(terminal.map(|e| e.event_id), p.terminal_event_id);
        for e in &h.entries {
            if let Verdict::Ignored { reason, beaten_by } = &e.verdict {
                assert!(fold
                    .not_folded
                    .iter()
                    .any(|n| n.event_id == e.event_id && n.reason == *reason));
                assert_eq!(beaten_by.is_empty(), *reason != Reason::ConflictLoser);
            }
        }
    }
    // Every exchange event folds in exactly one projection or is listed exactly once.
    // The sim always requests in the current context: the fold must agree, however many
    // re-attaches happened.
    assert!(fold
        .not_folded
        .iter()
        .all(|n| n.reason != Reason::RequestContextNotCurrent));
    // Realm, sidecar, strand and attach events are not exchange events.
    let structural = [
        akledger_core::envelope::REALM_CREATE,
        akledger_core::envelope::SIDECAR_CREATE,
        akledger_core::envelope::STRAND_CREATE,
        akledger_core::envelope::CONTEXT_ATTACH,
    ];
    for e in w.events.iter().filter(|e| !structural.contains(&e.kind())) {
        let folded = fold
            .projections
            .iter()
            .filter(|p| p.folded_event_ids.contains(&e.id()))
            .count();
        let listed = fold
            .not_folded
            .iter()
            .filter(|n| n.event_id == e.id())
            .count();
        assert_eq!(folded + listed, 1, "{}", e.id());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn fold_is_order_independent_and_keeps_invariants(
        ops in prop::collection::vec(op(), 1..40),
        seeds in prop::collection::vec(any::<u64>(), 3),
    ) {
        let mut sim = Sim { w: World::new(), open: Vec::new(), saved: Vec::new() };
        sim.step(&Op::Open(0b11));
        for op in &ops {
            sim.step(op);
        }
        let w = &sim.w;
        let graph = w.graph();
        let fold = fold_sidecar(&w.sidecar, &w.events, &w.keyring, &graph);
        check_invariants(w, &fold);
        let reference = fold.to_json().to_bytes();
        let mut reversed = w.events.clone();
        reversed.reverse();
        for events in seeds.iter().map(|s| shuffled(&w.events, *s)).chain([reversed]) {
            let graph = MemoryGraph::from_events(&events);
            let again = fold_sidecar(&w.sidecar, &events, &w.keyring, &graph);
            prop_assert_eq!(&again.to_json().to_bytes(), &reference);
        }
    }
}

/// Follows `w`'s events in admission order as the ledger does — the graph growing with
/// them, each exchange's outcome kept and an added agent message folded in by
/// [`fold_added_message`] where it applies — and compares every step with a full refold.
/// Returns how many messages took the shortcut.
fn follow_incrementally(w: &World) -> usize {
    let mut graph = MemoryGraph::new();
    let mut sidecar = w.sidecar.clone();
    sidecar.attaches.clear();
    let mut items: BTreeMap<ExchangeId, Vec<ExchangeItem>> = BTreeMap::new();
    let mut outcomes: BTreeMap<ExchangeId, ExchangeOutcome> = BTreeMap::new();
    let mut shortcuts = 0;
    for e in &w.events {
        graph.insert(e);
        let item = match classify(&sidecar, e, &w.keyring) {
            Some(Classified::Exchange(item)) => *item,
            Some(Classified::Attach(a)) => {
                sidecar.attaches.push(a);
                continue;
            }
            _ => continue,
        };
        let x = item.exchange_id.clone();
        let list = items.entry(x.clone()).or_default();
        list.push(item);
        let full = fold_exchange(&sidecar, &x, list, &graph);
        let kept = outcomes.entry(x).or_default();
        let before = kept.projection.clone();
        match fold_added_message(&sidecar, list, kept, &graph) {
            Added::Refold => *kept = full.clone(),
            added => {
                shortcuts += 1;
                assert_eq!(added == Added::Changed, before != kept.projection);
            }
        }
        assert_eq!(*kept, full, "incremental fold differs after {}", e.id());
    }
    shortcuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn incremental_fold_equals_full_refold(ops in prop::collection::vec(op(), 1..40)) {
        let mut sim = Sim { w: World::new(), open: Vec::new(), saved: Vec::new() };
        sim.step(&Op::Open(0b11));
        for op in &ops {
            sim.step(op);
        }
        follow_incrementally(&sim.w);
    }
}

/// The shortcut is taken (so the property above tests it, not only the fallback): responses,
/// an internal, a response after the terminal and one by an agent that was not addressed.
#[test]
fn agent_messages_take_the_shortcut() {
    let mut sim = Sim {
        w: World::new(),
        open: Vec::new(),
        saved: Vec::new(),
    };
    sim.step(&Op::Open(0b01));
    for op in [
        Op::Respond(0, 0),
        Op::Respond(0, 0),
        Op::Respond(1, 0),
        Op::Internal(0, 0),
        Op::Control {
            exchange: 0,
            act: 0,
            agents: 0,
            stale: false,
        },
        Op::Respond(0, 0),
    ] {
        sim.step(&op);
    }
    assert_eq!(follow_incrementally(&sim.w), 5);
}

/// The shortcut reads what a response covers off its `after` refs: one naming a head, a
/// folded event that is no head, and an event outside the exchange (another exchange's
/// response, which names a head of this one), each still matching a full refold.
#[test]
fn responses_after_heads_and_other_events_take_the_shortcut() {
    let mut sim = Sim {
        w: World::new(),
        open: Vec::new(),
        saved: Vec::new(),
    };
    sim.step(&Op::Open(0b11));
    sim.step(&Op::Open(0b11));
    let (x, r) = sim.open[0].clone();
    let (y, s) = sim.open[1].clone();
    let first = sim.w.respond(0, &x, r);
    let second = sim.w.respond(1, &x, r);
    sim.w.respond_after(0, &x, r, first);
    let elsewhere = sim.w.respond_after(0, &y, s, second);
    sim.w.respond_after(1, &x, r, elsewhere);
    // The request is folded and no head once answered.
    sim.w.respond_after(1, &x, r, r);
    assert_eq!(follow_incrementally(&sim.w), 6);
    assert_eq!(sim.w.projection(&x).checkpoint_heads.len(), 3);
}

/// A response with a `parent_event` edge: what that edge covers is the causal index's to
/// say, and a head it covers leaves the heads.
#[test]
fn a_parent_event_edge_is_asked_of_the_causal_index() {
    let mut w = World::new();
    let x = xid(0);
    let r = w.request(&x, &[0, 1], Some(0));
    let first = w.respond(0, &x, r);
    let sealed = w.agents[1]
        .respond(&x, r, None, Json::str("done"), at(), &mut OsRng)
        .unwrap();
    let envelope = sealed.envelope();
    let (key, actor) = signer(3);
    let e = akledger_core::event::EventBuilder::new(
        envelope.kind.clone(),
        envelope.scope,
        actor,
        envelope.created_at,
    )
    .payload(envelope.payload.clone())
    .after([r])
    .reference(akledger_core::envelope::SemanticRef {
        id: first.to_string(),
        role: "parent_event".into(),
        critical: true,
    })
    .sign(&key);
    let e = w.add(e);
    let item = match classify(&w.sidecar, w.events.last().unwrap(), &w.keyring) {
        Some(Classified::Exchange(item)) => *item,
        other => panic!("{other:?}"),
    };
    assert!(item.other_edges);
    let responded = w
        .events
        .iter()
        .filter_map(|e| match classify(&w.sidecar, e, &w.keyring) {
            Some(Classified::Exchange(item)) => Some(*item),
            _ => None,
        });
    assert!(!responded.clone().any(|i| i.event_id != e && i.other_edges));
    assert_eq!(follow_incrementally(&w), 2);
    assert_eq!(w.projection(&x).checkpoint_heads, vec![e]);
}
