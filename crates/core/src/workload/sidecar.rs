//! A realistic sidecar, generated: a controller, several agents, requests, responses,
//! internal messages, reassignments, every terminal kind, answers from agents that were not
//! addressed, and — on request — forgeries that admission must refuse.

use ed25519_dalek::SigningKey;

use crate::actors::Disclosure;
use crate::canonical::{parse_canonical, to_canonical, Json, Object};
use crate::did::{ActorId, DidCoreId};
use crate::encrypted::SidecarKey;
use crate::error::{Code, Rejection};
use crate::event::{Event, EventBuilder, Unverified};
use crate::exchange::{
    create_private_sidecar, create_realm, Act, Causality, ExchangeId, ExchangeView, MemoryGraph,
    RequestContext, Role, SidecarAuthor, TrackRef,
};
use crate::id::{EventId, RealmId, SidecarId};
use crate::keyring::Keyring;
use crate::time::Timestamp;

use super::skills::Skills;
use super::{writer_key, SeededRng, SplitMix, EPOCH_MILLIS};

/// What to generate.
#[derive(Copy, Clone, Debug)]
pub struct SidecarSpec {
    /// Number of exchanges.
    pub exchanges: usize,
    /// Number of agents (at least 1).
    pub agents: usize,
    /// Also generate forgeries (about one per ten exchanges).
    pub forgeries: bool,
    /// Seed 000 too: each agent publishes an actor model offering `orders/place`, the
    /// controller grants one observer the responses, and requests and responses are PNCP
    /// messages with redacted fields ([`super::skills`]).
    pub skills: bool,
}

/// An event admission must refuse, with the code it must refuse it with.
#[derive(Clone, Debug)]
pub struct Forgery {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The PROFILE code expected.
    pub expected: Code,
    /// What was forged.
    pub what: &'static str,
}

/// A generated sidecar.
#[derive(Clone, Debug)]
pub struct SidecarWorkload {
    /// The sidecar key (epoch 1) — what a controller's keyring file holds.
    pub keyring: Keyring,
    /// The realm.
    pub realm: RealmId,
    /// The sidecar.
    pub sidecar: SidecarId,
    /// The controller's principal.
    pub controller: DidCoreId,
    /// The agents' principals.
    pub agents: Vec<DidCoreId>,
    /// Valid events, in causal order (realm, sidecar, private strand, attach, then exchange
    /// events).
    pub events: Vec<Event<Unverified>>,
    /// Events admission must refuse.
    pub forgeries: Vec<Forgery>,
    /// With [`SidecarSpec::skills`]: the observation grant and its observer.
    pub observation: Option<(EventId, DidCoreId)>,
    /// With [`SidecarSpec::skills`]: the values kept off the ledger, each with the event
    /// whose commitment it opens (what the authors' disclosure stores hold).
    pub disclosures: Vec<Disclosure>,
}

pub(super) struct Gen {
    choice: SplitMix,
    pub(super) nonces: SeededRng,
    pub(super) clock: u64,
    graph: MemoryGraph,
    events: Vec<Event<Unverified>>,
}

impl Gen {
    pub(super) fn tick(&mut self) -> Result<Timestamp, Rejection> {
        self.clock += 1 + self.choice.below(1000) as u64;
        Timestamp::from_millis(EPOCH_MILLIS + self.clock)
    }

    pub(super) fn push(&mut self, event: Event<Unverified>) -> EventId {
        self.graph.insert(&event.clone().assume_verified());
        let id = event.id();
        self.events.push(event);
        id
    }
}

/// Generates a sidecar per `spec`, deterministically from `seed`.
pub fn sidecar_workload(seed: u64, spec: SidecarSpec) -> Result<SidecarWorkload, Rejection> {
    let mut g = Gen {
        choice: SplitMix::new(seed),
        nonces: SeededRng::new(SplitMix::new(!seed).bytes32()),
        clock: 0,
        graph: MemoryGraph::new(),
        events: Vec::new(),
    };
    let controller_key = writer_key(seed, 1_000_000);
    let controller = ActorId::service_for_key(&controller_key.verifying_key());
    let realm_event = create_realm(&controller_key, controller.clone(), g.tick()?)?;
    let realm: RealmId = g.push(realm_event).retype();
    let private =
        create_private_sidecar(&controller_key, controller.clone(), realm, None, g.tick()?)?;
    let strand = private.strand_id();
    let info = private.info.clone();
    let sidecar: SidecarId = info.sidecar_id;
    for event in private.events() {
        g.push(event.clone());
    }
    let sidecar_key = SidecarKey::from_bytes(SplitMix::new(seed ^ 0x5EC2).bytes32());
    let mut keyring = Keyring::new();
    keyring.add_sidecar_key(sidecar, 1, sidecar_key.clone());
    let author = |key: &SigningKey| {
        SidecarAuthor::new(
            key.clone(),
            ActorId::service_for_key(&key.verifying_key()),
            info.clone(),
            sidecar_key.clone(),
            1,
        )
    };
    let boss = author(&controller_key);
    let agent_keys: Vec<SigningKey> = (0..spec.agents.max(1))
        .map(|n| writer_key(seed, 2_000_000 + n))
        .collect();
    let agents: Vec<SidecarAuthor> = agent_keys.iter().map(author).collect();
    let mut skills = match spec.skills {
        true => Some(super::skills::publish(
            &mut g,
            seed,
            realm,
            &agent_keys,
            &boss,
        )?),
        false => None,
    };
    let mut forgeries = Vec::new();
    for n in 0..spec.exchanges {
        let exchange = ExchangeId::parse(&format!("exchange-{seed:08x}-{n:08}"))?;
        let track = TrackRef {
            realm_id: realm,
            strand_id: strand,
            track_name: "main".into(),
        };
        let forge = spec.forgeries && n % 10 == 9;
        one_exchange(
            &mut g,
            &boss,
            &agents,
            &exchange,
            track,
            forge.then_some(&mut forgeries),
            skills.as_mut(),
        )?;
    }
    Ok(SidecarWorkload {
        keyring,
        realm,
        sidecar,
        controller: controller.principal().clone(),
        agents: agents.iter().map(|a| a.principal().clone()).collect(),
        events: g.events,
        forgeries,
        observation: skills.as_ref().map(|s| (s.grant, s.observer.clone())),
        disclosures: skills.map(|s| s.disclosures).unwrap_or_default(),
    })
}

/// The scenario of one exchange, chosen at random: from a bare request to a reassigned,
/// answered and closed exchange.
fn one_exchange(
    g: &mut Gen,
    boss: &SidecarAuthor,
    agents: &[SidecarAuthor],
    exchange: &ExchangeId,
    track: TrackRef,
    forgeries: Option<&mut Vec<Forgery>>,
    mut skills: Option<&mut Skills>,
) -> Result<(), Rejection> {
    let count = 1 + g.choice.below(agents.len().min(3));
    let first = g.choice.below(agents.len());
    let chosen: Vec<&SidecarAuthor> = (0..count)
        .filter_map(|i| agents.get((first + i) % agents.len()))
        .collect();
    let addressed: Vec<DidCoreId> = chosen.iter().map(|a| a.principal().clone()).collect();
    let coordinator = (count > 1).then(|| addressed.first().cloned()).flatten();
    let context = RequestContext::new(
        track.clone(),
        format!("order-{}", g.clock),
        addressed.clone(),
        coordinator,
    )?;
    let mut coordinator = context.coordinator().clone();
    let body = Object::new()
        .with("text", "please handle this".into())
        .into();
    let at = g.tick()?;
    let request = {
        let e = match skills.as_deref_mut() {
            Some(skills) => {
                let attach = boss
                    .sidecar()
                    .latest_attach()
                    .map(|a| a.event_id)
                    .ok_or_else(|| crate::error::schema("the sidecar has no attached strand"))?;
                skills.request(g, boss, exchange, context, body, attach)?
            }
            None => boss.request(exchange, context, body, at, &mut g.nonces)?,
        };
        g.push(e)
    };
    let mut view = ExchangeView {
        exchange_id: exchange.clone(),
        request_event_id: request,
        strand_id: track.strand_id,
        facts: vec![request],
        validated_responses: Vec::new(),
    };
    let mut assignment = request;
    let scenario = g.choice.below(8);
    if scenario == 1 || g.choice.below(4) == 0 {
        let at = g.tick()?;
        let note = Json::from("working on it");
        view.facts.push({
            let e =
                chosen_agent(&chosen, 0).internal(exchange, request, note, at, &mut g.nonces)?;
            g.push(e)
        });
    }
    if scenario == 6 && count > 1 {
        let new = addressed
            .get(1)
            .cloned()
            .unwrap_or_else(|| coordinator.clone());
        let act = Act::Reassign {
            expected: coordinator.clone(),
            new: new.clone(),
        };
        let at = g.tick()?;
        assignment = {
            let e = boss.control(&view, act, &g.graph, at, &mut g.nonces)?;
            g.push(e)
        };
        view.facts.push(assignment);
        coordinator = new;
    }
    if matches!(scenario, 2 | 3 | 6) {
        for agent in &chosen {
            let completes = (agent.principal() == &coordinator).then_some(assignment);
            let at = g.tick()?;
            let answer = Json::from("here is the answer");
            let id = {
                let e = match skills.as_deref_mut() {
                    Some(skills) => {
                        let role = Role::Response {
                            request_event_id: request,
                            completes,
                        };
                        skills.respond(g, agent, exchange, role, answer, request)?
                    }
                    None => {
                        agent.respond(exchange, request, completes, answer, at, &mut g.nonces)?
                    }
                };
                g.push(e)
            };
            view.facts.push(id);
            view.validated_responses.push(id);
        }
    }
    if g.choice.below(10) == 0 {
        if let Some(stranger) = agents.iter().find(|a| !addressed.contains(a.principal())) {
            let at = g.tick()?;
            {
                let e = stranger.respond(
                    exchange,
                    request,
                    None,
                    "unasked".into(),
                    at,
                    &mut g.nonces,
                )?;
                g.push(e)
            };
        }
    }
    let terminal = match scenario {
        3 | 6 | 7 => Some(Act::Close),
        4 => Some(Act::Cancel),
        5 => Some(Act::Fail("agent_deactivated".into())),
        _ => None,
    };
    if let Some(forgeries) = forgeries {
        forge(g, chosen_agent(&chosen, 0), &view, forgeries)?;
    }
    if let Some(act) = terminal {
        let at = g.tick()?;
        {
            let e = boss.control(&view, act, &g.graph, at, &mut g.nonces)?;
            g.push(e)
        };
    }
    Ok(())
}

fn chosen_agent<'a>(chosen: &[&'a SidecarAuthor], i: usize) -> &'a SidecarAuthor {
    // `chosen` always holds at least one agent.
    chosen
        .get(i)
        .or_else(|| chosen.first())
        .copied()
        .unwrap_or_else(|| unreachable!("no agent"))
}

/// Three forgeries against this exchange: an agent's control, an event signed with another
/// agent's key, and an event carrying another event's id.
fn forge(
    g: &mut Gen,
    agent: &SidecarAuthor,
    view: &ExchangeView,
    out: &mut Vec<Forgery>,
) -> Result<(), Rejection> {
    let at = g.tick()?;
    let control = agent.control(view, Act::Close, &g.graph, at, &mut g.nonces)?;
    out.push(Forgery {
        bytes: control.bytes().to_vec(),
        expected: Code::SidecarExchangeControlForbidden,
        what: "control authored by an agent",
    });
    let victim = writer_key(g.clock, 7);
    let impostor = writer_key(g.clock, 8);
    let Some(scope) = g.events.last().map(|e| *e.scope()) else {
        return Ok(());
    };
    let claimed = ActorId::service_for_key(&victim.verifying_key());
    let forged = EventBuilder::new("ak.note.create", scope, claimed, g.tick()?)
        .after(view.facts.first().copied())
        .sign(&impostor)?;
    out.push(Forgery {
        bytes: forged.bytes().to_vec(),
        expected: Code::SignatureInvalid,
        what: "signed with another agent's key",
    });
    // The last event, carrying the realm create's id instead of its own.
    if let (Some(a), Some(b)) = (g.events.last(), g.events.first().map(|e| e.id())) {
        if let Json::Object(mut obj) = parse_canonical(a.bytes())? {
            obj.remove("event_id");
            obj.insert("event_id", b.to_string().into());
            out.push(Forgery {
                bytes: to_canonical(&obj.into()),
                expected: Code::EventIdDigestMismatch,
                what: "carries another event's id",
            });
        }
    }
    Ok(())
}

impl Causality for &MemoryGraph {
    fn covers(&self, basis: &[EventId], x: &EventId) -> bool {
        (*self).covers(basis, x)
    }
    fn heads_of(&self, set: &[EventId]) -> Vec<EventId> {
        (*self).heads_of(set)
    }
    fn is_admitted(&self, id: &EventId) -> bool {
        (*self).is_admitted(id)
    }
}
