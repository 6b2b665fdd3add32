//! Fixed keys, a deterministic RNG and a small signed world shared by the checks. Built
//! once per process (`OnceLock`) so that each fuzz execution only pays for what it tests.

use std::sync::OnceLock;

use akledger::canonical::{Json, Object};
use akledger::ed25519_dalek::SigningKey;
use akledger::exchange::{attach_context, create_strand, ContextAttach, SidecarInfo};
use akledger::workload::EPOCH_MILLIS;
use akledger::{
    ActorId, DidCoreId, Event, EventBuilder, EventId, Keyring, RealmId, ScopeRef, SidecarAuthor,
    SidecarId, SidecarKey, StrandId, Timestamp, Unverified, Verified, Verifier,
};

/// Deterministic RNG for nonces: the workload's keyed-blake3 stream, keyed by a label. Not a
/// secret; it only makes authored events reproducible.
pub type XofRng = akledger::workload::SeededRng;

/// The nonce stream for `label`.
pub fn xof_rng(label: &[u8]) -> XofRng {
    akledger::workload::SeededRng::new(*blake3::keyed_hash(&[0x5a; 32], label).as_bytes())
}

/// A deterministic key from a one-byte pattern.
pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A service actor for `key`.
pub fn service(key: &SigningKey) -> ActorId {
    ActorId::service_for_key(&key.verifying_key())
}

/// Workload epoch + `ms` milliseconds.
pub fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(EPOCH_MILLIS + ms).expect("fixture timestamp")
}

/// The sidecar key of every fixture sidecar.
pub fn sidecar_key() -> SidecarKey {
    SidecarKey::from_bytes([9; 32])
}

/// A realm and a sidecar by the controller (key 1) with its private strand attached, and
/// three agents (keys 2–4).
pub struct World {
    pub controller: SigningKey,
    pub agents: Vec<SigningKey>,
    pub realm: Event<Verified>,
    pub sidecar: Event<Verified>,
    pub strand: Event<Verified>,
    pub attach: Event<Verified>,
    pub info: SidecarInfo,
    pub keyring: Keyring,
    pub verifier: Verifier,
}

impl World {
    fn build() -> World {
        let controller = key(1);
        let agents: Vec<SigningKey> = (2..=4).map(key).collect();
        let verifier = Verifier::new(Keyring::new());
        let realm = EventBuilder::new(
            "ak.realm.create",
            ScopeRef::RealmGenesis,
            service(&controller),
            at(0),
        )
        .sign(&controller)
        .and_then(|e| e.verify(&verifier))
        .expect("realm");
        let realm_id: RealmId = realm.id().retype();
        let sidecar = EventBuilder::new(
            "ak.sidecar.create",
            ScopeRef::Realm { realm_id },
            service(&controller),
            at(1),
        )
        .after([realm.id()])
        .sign(&controller)
        .and_then(|e| e.verify(&verifier))
        .expect("sidecar");
        let mut info = SidecarInfo::of_create(&sidecar).expect("sidecar info");
        let strand = create_strand(&controller, service(&controller), realm_id, at(1))
            .and_then(|e| e.verify(&verifier))
            .expect("strand");
        let attach = attach_context(
            &controller,
            service(&controller),
            &info,
            strand.id().retype(),
            None,
            at(1),
        )
        .and_then(|e| e.verify(&verifier))
        .expect("attach");
        info.attaches.push(ContextAttach {
            event_id: attach.id(),
            strand_id: strand.id().retype(),
            version: 1,
        });
        let mut keyring = Keyring::new();
        keyring.add_sidecar_key(info.sidecar_id, 0, sidecar_key());
        let verifier = Verifier::new(keyring.clone());
        World {
            controller,
            agents,
            realm,
            sidecar,
            strand,
            attach,
            info,
            keyring,
            verifier,
        }
    }

    /// The world (built once).
    pub fn get() -> &'static World {
        static WORLD: OnceLock<World> = OnceLock::new();
        WORLD.get_or_init(World::build)
    }

    pub fn realm_id(&self) -> RealmId {
        self.realm.id().retype()
    }

    pub fn sidecar_id(&self) -> SidecarId {
        self.sidecar.id().retype()
    }

    /// The private strand the sidecar is attached to.
    pub fn strand(&self) -> StrandId {
        self.strand.id().retype()
    }

    /// Author number `n`: 0 is the controller, 1..=3 the agents.
    pub fn author(&self, n: usize) -> SidecarAuthor {
        let key = match n {
            0 => &self.controller,
            n => &self.agents[(n - 1) % self.agents.len()],
        };
        SidecarAuthor::new(
            key.clone(),
            service(key),
            self.info.clone(),
            sidecar_key(),
            0,
        )
    }

    pub fn principal(&self, n: usize) -> DidCoreId {
        self.author(n).principal().clone()
    }
}

/// Valid signed events of several kinds and both suites, for mutation.
pub fn valid_events() -> &'static [(Event<Unverified>, SigningKey)] {
    static EVENTS: OnceLock<Vec<(Event<Unverified>, SigningKey)>> = OnceLock::new();
    EVENTS.get_or_init(|| {
        let w = World::get();
        let mut rng = xof_rng(b"valid_events");
        let realm_scope = ScopeRef::Realm {
            realm_id: w.realm_id(),
        };
        let unverified = |e: &Event<Verified>| Event::parse(e.bytes()).expect("reparse");
        let note = |suite| {
            EventBuilder::new("ak.note.create", realm_scope, service(&w.agents[0]), at(2))
                .after([w.realm.id()])
                .payload(
                    Object::new()
                        .with("text", "h\u{e9}llo \"q\"\n".into())
                        .with("n", Json::Int(-42))
                        .with("list", Json::Array(vec![Json::Null, true.into()]))
                        .into(),
                )
                .suite(suite)
                .sign(&w.agents[0])
                .expect("note")
        };
        let body = Object::new().with("text", "hi".into()).into();
        let message = w
            .author(1)
            .message(None, body, &[w.sidecar.id()], at(3), &mut rng)
            .expect("message");
        let control_plain = Object::new().with("x", Json::Int(1)).into();
        let control = w
            .author(0)
            .control_raw(
                w.strand(),
                &control_plain,
                &[w.sidecar.id()],
                at(4),
                &mut rng,
            )
            .expect("control");
        vec![
            (unverified(&w.realm), w.controller.clone()),
            (unverified(&w.sidecar), w.controller.clone()),
            (note(akledger::DigestSuite::Blake3), w.agents[0].clone()),
            (note(akledger::DigestSuite::Sha256), w.agents[0].clone()),
            (message, w.agents[0].clone()),
            (control, w.controller.clone()),
        ]
    })
}

/// Recomputes the id of canonical event bytes from their preimage, in `id`'s suite.
pub fn recomputed_id(bytes: &[u8], id: EventId) -> EventId {
    let Ok(Json::Object(mut obj)) = akledger::canonical::parse_canonical(bytes) else {
        panic!("accepted event bytes are not a canonical object");
    };
    obj.remove("event_id");
    obj.remove("producer_proof");
    let preimage = akledger::canonical::to_canonical(&Json::Object(obj));
    EventId::of_preimage(id.suite(), &preimage)
}
