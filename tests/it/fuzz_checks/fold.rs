//! `fold`: arbitrary (mostly well-shaped) plaintexts sealed into a fixed sidecar, folded.

use std::collections::BTreeSet;

use akledger::canonical::{Json, Object};
use akledger::exchange::plaintext::{BINDING_SCHEMA, CONTROL_SCHEMA};
use akledger::{fold_sidecar, Event, EventId, MemoryGraph, SidecarFold, Status, Verified};
use arbitrary::{Arbitrary, Unstructured};

use super::fixtures::{at, xof_rng, World, XofRng};

const EXCHANGES: [&str; 3] = [
    "exchange-aaaaaaaaaaaaaaaaaaaa",
    "exchange-bbbbbbbbbbbbbbbbbbbb",
    "short",
];

/// An arbitrary JSON tree of bounded size.
#[derive(Arbitrary, Debug)]
enum Tree {
    Null,
    Bool(bool),
    Int(i32),
    Str(String),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl Tree {
    fn json(&self, depth: usize) -> Json {
        match self {
            _ if depth > 6 => Json::Null,
            Tree::Null => Json::Null,
            Tree::Bool(b) => Json::Bool(*b),
            Tree::Int(i) => Json::Int((*i).into()),
            Tree::Str(s) => Json::Str(s.clone()),
            Tree::Array(v) => Json::Array(v.iter().take(8).map(|t| t.json(depth + 1)).collect()),
            Tree::Object(v) => {
                let mut o = Object::new();
                for (k, t) in v.iter().take(8) {
                    o.insert(k.clone(), t.json(depth + 1));
                }
                Json::Object(o)
            }
        }
    }
}

/// Which id an id field names: an earlier generated event, the realm, the sidecar (its
/// context attach, which follows the sidecar create, so that what refs it has a context),
/// or junk.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Ref {
    Earlier(u8),
    Realm,
    Sidecar,
    Unknown,
}

#[derive(Arbitrary, Debug)]
enum Role {
    Request {
        addressed: Vec<u8>,
        coordinator: Option<u8>,
        order_key: bool,
    },
    Response {
        request: Ref,
        completes: Option<Ref>,
    },
    Internal {
        request: Ref,
    },
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum Action {
    Close,
    Cancel,
    Fail(bool),
    Reassign { expected: u8, new: u8 },
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum Plain {
    Message {
        body: Tree,
        binding: Option<(u8, Role)>,
    },
    Control {
        exchange: u8,
        request: Ref,
        basis: Vec<Ref>,
        action: Action,
        responses: Option<Vec<Ref>>,
        sort: bool,
        strand_is_request_strand: bool,
    },
    RawMessage(Tree),
    RawControl(Tree),
}

#[derive(Arbitrary, Debug)]
struct Spec {
    author: u8,
    after: Vec<Ref>,
    plain: Plain,
}

struct Ctx<'a> {
    world: &'a World,
    made: Vec<EventId>,
}

impl Ctx<'_> {
    fn id(&self, r: Ref) -> EventId {
        match r {
            Ref::Earlier(n) if !self.made.is_empty() => self.made[usize::from(n) % self.made.len()],
            Ref::Realm => self.world.realm.id(),
            Ref::Sidecar | Ref::Earlier(_) => self.world.attach.id(),
            Ref::Unknown => EventId::of_preimage(akledger::DigestSuite::Blake3, b"unknown"),
        }
    }

    fn ids(&self, refs: &[Ref], sort: bool) -> Json {
        let mut ids: Vec<EventId> = refs.iter().take(6).map(|r| self.id(*r)).collect();
        if sort {
            ids.sort();
            ids.dedup();
        }
        Json::Array(ids.iter().map(|i| i.to_string().into()).collect())
    }

    fn agent(&self, n: u8) -> Json {
        self.world.principal(usize::from(n) % 4).as_str().into()
    }

    fn binding(&self, exchange: u8, role: &Role) -> Json {
        let mut o = Object::new()
            .with("schema", BINDING_SCHEMA.into())
            .with("exchange_id", EXCHANGES[usize::from(exchange) % 3].into());
        let role_name = match role {
            Role::Request {
                addressed,
                coordinator,
                order_key,
            } => {
                let track = Object::new()
                    .with("realm_id", self.world.realm_id().to_string().into())
                    .with("strand_id", self.world.strand().to_string().into())
                    .with("track_name", "main".into());
                let mut addressed: Vec<Json> =
                    addressed.iter().take(4).map(|a| self.agent(*a)).collect();
                addressed.dedup();
                let mut ctx = Object::new()
                    .with("source_track_ref", track.into())
                    .with(
                        "client_order_key",
                        if *order_key { "k1" } else { "" }.into(),
                    )
                    .with("addressed_agent_ids", Json::Array(addressed));
                if let Some(c) = coordinator {
                    ctx.insert("coordinator_agent_id", self.agent(*c));
                }
                o.insert("request_context", ctx.into());
                "request".to_string()
            }
            Role::Response { request, completes } => {
                o.insert("request_event_id", self.id(*request).to_string().into());
                if let Some(c) = completes {
                    o.insert("completes_exchange", true.into());
                    o.insert(
                        "coordinator_assignment_event_id",
                        self.id(*c).to_string().into(),
                    );
                }
                "user_facing_response".to_string()
            }
            Role::Internal { request } => {
                o.insert("request_event_id", self.id(*request).to_string().into());
                "internal".to_string()
            }
            Role::Other(s) => s.clone(),
        };
        o.with("role", role_name.into()).into()
    }

    fn make(&mut self, spec: &Spec, n: usize, rng: &mut XofRng) -> Option<Event<Verified>> {
        let author = self.world.author(usize::from(spec.author) % 4);
        let mut after: Vec<EventId> = spec.after.iter().take(4).map(|r| self.id(*r)).collect();
        after.sort();
        after.dedup();
        let t = at(10 + n as u64);
        let event = match &spec.plain {
            Plain::Message { body, binding } => {
                let mut o = Object::new().with("body", body.json(0));
                if let Some((x, role)) = binding {
                    o.insert("sidecar_exchange_binding", self.binding(*x, role));
                }
                author.message_raw(&o.into(), &after, t, rng)
            }
            Plain::RawMessage(tree) => author.message_raw(&tree.json(0), &after, t, rng),
            Plain::RawControl(tree) => {
                author.control_raw(self.world.strand(), &tree.json(0), &after, t, rng)
            }
            Plain::Control {
                exchange,
                request,
                basis,
                action,
                responses,
                sort,
                strand_is_request_strand,
            } => {
                let mut o = Object::new()
                    .with("schema", CONTROL_SCHEMA.into())
                    .with("exchange_id", EXCHANGES[usize::from(*exchange) % 3].into())
                    .with("request_event_id", self.id(*request).to_string().into())
                    .with("basis_event_ids", self.ids(basis, *sort));
                let name = match action {
                    Action::Close => "close".to_string(),
                    Action::Cancel => "cancel".to_string(),
                    Action::Fail(good) => {
                        o.insert(
                            "failure_reason_code",
                            if *good { "timeout" } else { "Bad" }.into(),
                        );
                        "fail".to_string()
                    }
                    Action::Reassign { expected, new } => {
                        o.insert("expected_coordinator_agent_id", self.agent(*expected));
                        o.insert("coordinator_agent_id", self.agent(*new));
                        "reassign_coordinator".to_string()
                    }
                    Action::Other(s) => s.clone(),
                };
                o.insert("action", name.into());
                if let Some(r) = responses {
                    o.insert("response_event_ids", self.ids(r, *sort));
                }
                // Basis ids get after refs, as an author would add them.
                if let Some(Json::Array(basis)) = o.get("basis_event_ids") {
                    for b in basis {
                        if let Some(id) = b.as_str().and_then(|s| EventId::parse(s).ok()) {
                            after.push(id);
                        }
                    }
                }
                after.sort();
                after.dedup();
                let strand = if *strand_is_request_strand {
                    self.world.strand()
                } else {
                    self.world.sidecar.id().retype()
                };
                author.control_raw(strand, &o.into(), &after, t, rng)
            }
        };
        let event = event.ok()?.verify(&self.world.verifier).ok()?;
        self.made.push(event.id());
        Some(event)
    }
}

fn invariants(fold: &SidecarFold) {
    let mut folded_anywhere = BTreeSet::new();
    for p in &fold.projections {
        let responses = p.user_facing_response_event_ids.len();
        match p.status {
            Status::Delivered => {
                assert_eq!(responses, 0, "delivered with responses");
                assert!(p.terminal_event_id.is_none(), "delivered with a terminal");
            }
            Status::Responding => {
                assert!(responses >= 1, "responding without responses");
                assert!(p.terminal_event_id.is_none(), "responding with a terminal");
            }
            Status::Failed => {
                assert_eq!(responses, 0, "failed with responses");
                assert!(p.failure_reason_code.is_some(), "failed without a code");
                assert!(p.terminal_event_id.is_some(), "failed without a terminal");
            }
            Status::Complete => {
                assert!(responses >= 1, "complete without responses");
                assert!(p.terminal_event_id.is_some(), "complete without a terminal");
            }
        }
        if !matches!(p.status, Status::Failed | Status::Complete) {
            assert!(
                p.failure_reason_code.is_none(),
                "open exchange with a failure code"
            );
        }
        let sorted = |v: &[EventId]| v.windows(2).all(|w| w[0] < w[1]);
        assert!(sorted(&p.folded_event_ids), "folded ids not canonical");
        assert!(
            sorted(&p.user_facing_response_event_ids),
            "response ids not canonical"
        );
        assert!(sorted(&p.checkpoint_heads), "heads not canonical");
        assert!(p.addressed_agent_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(p.participating_agent_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(
            p.folded_event_ids.contains(&p.request_event_id),
            "request not folded"
        );
        for id in p
            .terminal_event_id
            .iter()
            .chain(&p.user_facing_response_event_ids)
        {
            assert!(
                p.folded_event_ids.contains(id),
                "{id} reported but not folded"
            );
        }
        for h in &p.checkpoint_heads {
            assert!(p.folded_event_ids.contains(h), "head not folded");
        }
        assert!(
            p.addressed_agent_ids.contains(&p.coordinator_agent_id),
            "coordinator not addressed"
        );
        for id in &p.folded_event_ids {
            assert!(folded_anywhere.insert(*id), "{id} folded in two exchanges");
        }
    }
    let mut listed = BTreeSet::new();
    for n in &fold.not_folded {
        assert!(
            listed.insert(n.event_id),
            "{} not folded for two reasons",
            n.event_id
        );
        assert!(
            !folded_anywhere.contains(&n.event_id),
            "{} both folded and not",
            n.event_id
        );
    }
}

/// Up to 10 generated events: fold, check invariants, and fold again in reverse order.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let world = World::get();
    let mut ctx = Ctx {
        world,
        made: Vec::new(),
    };
    let mut rng = xof_rng(b"fold");
    let mut events: Vec<Event<Verified>> = vec![
        world.realm.clone(),
        world.sidecar.clone(),
        world.strand.clone(),
        world.attach.clone(),
    ];
    for n in 0..10 {
        let Ok(spec) = Spec::arbitrary(&mut u) else {
            break;
        };
        if let Some(e) = ctx.make(&spec, n, &mut rng) {
            events.push(e);
        }
    }
    let graph = MemoryGraph::from_events(&events);
    let fold = fold_sidecar(&world.info, &events, &world.keyring, &graph);
    invariants(&fold);
    let mut reversed = events.clone();
    reversed.reverse();
    let again = fold_sidecar(&world.info, &reversed, &world.keyring, &graph);
    assert_eq!(fold, again, "fold depends on event order");
}
