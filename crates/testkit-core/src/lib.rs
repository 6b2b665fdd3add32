//! Fixtures for tests that need nothing above the core: fixed keys, a small realm/sidecar
//! world, `reseal` (which turns a mutated envelope back into correctly hashed and signed
//! bytes, so that a test isolates exactly the rule it is about), where the workspace is,
//! and the replay of a fuzz target's corpus. A crate of its own so that the core's tests
//! depend on the core alone and build while the engine does; `akledger-testkit` re-exports
//! all of it. It turns on, in every test build, the core's clock and the white-box hooks
//! (`internals`) the tests in `tests/it/unit/` use. (The core's reader cross-check comes
//! with the debug assertions the test profile gives the core.)
// Test fixtures panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![allow(missing_docs)]

use akledger_core::canonical::{parse_canonical, to_canonical};
use akledger_core::ed25519_dalek::SigningKey;
use akledger_core::encrypted::{AadContext, CONTROL_CONTENT_TYPE, MESSAGE_CONTENT_TYPE};
use akledger_core::id::Id;
use akledger_core::{
    ActorId, DidCoreId, DigestSuite, EncryptedEnvelope, Envelope, Event, EventBuilder, EventId,
    Json, Object, RealmId, ScopeRef, SidecarId, SidecarKey, StrandId, Timestamp, Unverified,
};

/// The workspace's root directory (where `fuzz/` and the root `tests/` are).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `check` on every file of the fuzz target `target`'s seed corpus
/// (`fuzz/corpus/<target>/`) and regressions (`tests/fuzz-regressions/<target>/`), each
/// under `catch_unwind`, failing with the file's name when a check panics. Returns how
/// many files were checked.
pub fn replay_corpus(target: &str, check: fn(&[u8])) -> usize {
    let root = workspace_root();
    let mut n = 0;
    for base in ["fuzz/corpus", "tests/fuzz-regressions"] {
        let Ok(read) = std::fs::read_dir(root.join(base).join(target)) else {
            continue;
        };
        let mut files: Vec<std::path::PathBuf> = read
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).expect("read corpus file");
            let result = std::panic::catch_unwind(|| check(&data));
            assert!(
                result.is_ok(),
                "{target}: {} fails its check",
                file.display()
            );
            n += 1;
        }
    }
    n
}

/// The canonical bytes of [`akledger_core::workload::realm_dag`]'s events, in order.
pub fn realm_dag_bytes(seed: u64, events: usize, writers: usize, payload: usize) -> Vec<Vec<u8>> {
    akledger_core::workload::realm_dag(seed, events, writers, payload)
        .expect("realm workload")
        .iter()
        .map(|e| e.bytes().to_vec())
        .collect()
}

/// Deterministic key from a one-byte seed pattern.
pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A timestamp from its text.
pub fn at(s: &str) -> Timestamp {
    Timestamp::parse(s).expect("test timestamp")
}

/// The base time of the fixtures.
pub fn t0() -> Timestamp {
    at("2026-11-29T12:00:00.000Z")
}

/// A service actor whose principal is `key`'s `ak:did_core:key:` id.
pub fn service(key: &SigningKey) -> ActorId {
    ActorId::service_for_key(&key.verifying_key())
}

/// An account actor whose principal is `key`'s `ak:did_core:key:` id.
pub fn account(key: &SigningKey) -> ActorId {
    ActorId::Account {
        principal_id: DidCoreId::for_key(&key.verifying_key()),
        station_id: DidCoreId::parse("ak:did_core:webvh:z6mkfixture:station.example")
            .expect("station id"),
    }
}

/// Retypes an event id (PROFILE §1 derived ids).
pub fn retype<K: akledger_core::id::IdKind>(id: EventId) -> Id<K> {
    id.retype()
}

/// A realm, a sidecar in it, all made by `key` (seed 1) as a service.
pub struct World {
    pub key: SigningKey,
    pub actor: ActorId,
    pub realm: Event<Unverified>,
    pub sidecar: Event<Unverified>,
    /// The controller's private strand, and the version-1 attach binding the sidecar to it.
    pub strand: Event<Unverified>,
    pub attach: Event<Unverified>,
}

impl World {
    pub fn new() -> Self {
        let key = key(1);
        let actor = service(&key);
        let realm = EventBuilder::new(
            "ak.realm.create",
            ScopeRef::RealmGenesis,
            actor.clone(),
            t0(),
        )
        .payload(Object::new().with("name", "fixture realm".into()).into())
        .sign(&key)
        .expect("realm");
        let sidecar = EventBuilder::new(
            "ak.sidecar.create",
            ScopeRef::Realm {
                realm_id: realm.id().retype(),
            },
            actor.clone(),
            t0(),
        )
        .after([realm.id()])
        .sign(&key)
        .expect("sidecar");
        let realm_id: RealmId = realm.id().retype();
        let strand = akledger_core::exchange::create_strand(&key, actor.clone(), realm_id, t0())
            .expect("strand");
        let info = akledger_core::SidecarInfo::new(sidecar.id().retype(), realm_id, actor.clone());
        let attach = akledger_core::exchange::attach_context(
            &key,
            actor.clone(),
            &info,
            strand.id().retype(),
            None,
            t0(),
        )
        .expect("attach");
        World {
            key,
            actor,
            realm,
            sidecar,
            strand,
            attach,
        }
    }

    /// The realm, the sidecar, its private strand and the attach, in causal order.
    pub fn genesis(&self) -> [&Event<Unverified>; 4] {
        [&self.realm, &self.sidecar, &self.strand, &self.attach]
    }

    pub fn strand_id(&self) -> StrandId {
        self.strand.id().retype()
    }

    /// The sidecar as the fold sees it, the attach included.
    pub fn info(&self) -> akledger_core::SidecarInfo {
        let mut info =
            akledger_core::SidecarInfo::new(self.sidecar_id(), self.realm_id(), self.actor.clone());
        info.attaches.push(akledger_core::exchange::ContextAttach {
            event_id: self.attach.id(),
            strand_id: self.strand_id(),
            version: 1,
        });
        info
    }

    pub fn realm_id(&self) -> RealmId {
        self.realm.id().retype()
    }

    pub fn sidecar_id(&self) -> SidecarId {
        self.sidecar.id().retype()
    }

    pub fn realm_scope(&self) -> ScopeRef {
        ScopeRef::Realm {
            realm_id: self.realm_id(),
        }
    }

    pub fn sidecar_scope(&self) -> ScopeRef {
        ScopeRef::Sidecar {
            realm_id: self.realm_id(),
            sidecar_id: self.sidecar_id(),
        }
    }

    /// A builder for `kind` in `scope` by the world's actor at t0.
    pub fn builder(&self, kind: &str, scope: ScopeRef) -> EventBuilder {
        EventBuilder::new(kind, scope, self.actor.clone(), t0())
    }

    /// A realm-scoped `ak.note.create` with a small payload and an `after` ref.
    pub fn note(&self) -> Event<Unverified> {
        self.builder("ak.note.create", self.realm_scope())
            .payload(Object::new().with("text", "hello".into()).into())
            .after([self.realm.id()])
            .sign(&self.key)
            .expect("note")
    }

    /// The outer payload of a well-formed exchange control for this world's sidecar.
    pub fn control_payload(&self) -> Object {
        control_payload_in(self.sidecar_scope(), &self.actor, self.strand_id())
    }

    /// A well-formed exchange control by the sidecar's controller, following the attach of
    /// the strand it names.
    pub fn control(&self) -> Event<Unverified> {
        self.builder("ak.agent.sidecar.exchange.control", self.sidecar_scope())
            .payload(self.control_payload().into())
            .after([self.attach.id()])
            .sign(&self.key)
            .expect("control")
    }

    /// A well-formed sidecar message.
    pub fn message(&self) -> Event<Unverified> {
        let scope = self.sidecar_scope();
        let ctx = AadContext {
            scope: &scope,
            event_kind: "ak.message.create",
            sender: &self.actor,
        };
        let sealed = EncryptedEnvelope::seal(
            &SidecarKey::from_bytes([9; 32]),
            [4; 24],
            MESSAGE_CONTENT_TYPE,
            0,
            "group-state-0",
            &ctx,
            br#"{"body":"hi"}"#,
        );
        self.builder("ak.message.create", scope)
            .payload(
                Object::new()
                    .with("encrypted_payload", sealed.to_json())
                    .into(),
            )
            .after([self.sidecar.id()])
            .sign(&self.key)
            .expect("message")
    }
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

/// The outer payload of a well-formed exchange control naming the sidecar of `scope` (a
/// sidecar scope) and `strand`, sealed as sent by `sender`.
pub fn control_payload_in(scope: ScopeRef, sender: &ActorId, strand: StrandId) -> Object {
    let ctx = AadContext {
        scope: &scope,
        event_kind: "ak.agent.sidecar.exchange.control",
        sender,
    };
    let sealed = EncryptedEnvelope::seal(
        &SidecarKey::from_bytes([9; 32]),
        [3; 24],
        CONTROL_CONTENT_TYPE,
        0,
        "group-state-0",
        &ctx,
        b"{}",
    );
    let sidecar = scope
        .sidecar_id()
        .map(|s| s.to_string())
        .unwrap_or_default();
    Object::new()
        .with("sidecar_id", sidecar.into())
        .with("source_context_ref", strand_ref(strand))
        .with("encrypted_payload", sealed.to_json())
}

/// `{"kind":"strand","strand_id"}`: a `source_context_ref` (PROFILE §6).
pub fn strand_ref(strand: StrandId) -> Json {
    Object::new()
        .with("kind", "strand".into())
        .with("strand_id", strand.to_string().into())
        .into()
}

/// The parsed top-level object of canonical event bytes.
pub fn object_of(bytes: &[u8]) -> Object {
    match parse_canonical(bytes).expect("canonical event") {
        Json::Object(o) => o,
        other => panic!("not an object: {other:?}"),
    }
}

/// The preimage object (event without `event_id` and `producer_proof`).
pub fn preimage_of(event: &Event<Unverified>) -> Object {
    let mut obj = object_of(event.bytes());
    obj.remove("event_id");
    obj.remove("producer_proof");
    obj
}

/// Sets (replacing) a member.
pub fn set(obj: &mut Object, key: &str, value: Json) {
    obj.remove(key);
    obj.insert(key, value);
}

/// Completes a preimage object into event bytes: recomputes the id in `suite` and signs the
/// proof binding with `key` for the actor and `created_at` found in the object (falling back
/// to `key`'s service actor and t0 when those members are unreadable, so that tests of those
/// members still get a well-formed proof). The result is correctly hashed and signed;
/// only the mutation the test made can be wrong.
pub fn reseal(pre: &Object, suite: DigestSuite, key: &SigningKey) -> Vec<u8> {
    let preimage = to_canonical(&Json::Object(pre.clone()));
    let id = EventId::of_preimage(suite, &preimage);
    let proof = sign_for(pre, &id.digest_text(), key);
    let mut obj = pre.clone();
    obj.insert("event_id", id.to_string().into());
    obj.insert("producer_proof", proof);
    to_canonical(&Json::Object(obj))
}

/// The producer proof JSON for the actor and `created_at` in `pre`, over `event_digest`.
pub fn sign_for(pre: &Object, event_digest: &str, key: &SigningKey) -> Json {
    let actor = pre
        .get("actor_id")
        .and_then(|a| ActorId::from_json(a).ok())
        .unwrap_or_else(|| service(key));
    let created_at = pre
        .get("created_at")
        .and_then(Json::as_str)
        .and_then(|s| Timestamp::parse(s).ok())
        .unwrap_or_else(t0);
    let envelope = Envelope {
        kind: "ak.unused".into(),
        realm_id: None,
        scope: ScopeRef::RealmGenesis,
        actor,
        created_at,
        refs: Vec::new(),
        payload: Json::Object(Object::new()),
    };
    akledger_core::proof::sign(&envelope, event_digest, key).to_json()
}

/// Mutates the preimage of `event` with `f` and reseals it with `key` in the event's suite.
pub fn mutate(event: &Event<Unverified>, key: &SigningKey, f: impl FnOnce(&mut Object)) -> Vec<u8> {
    let mut pre = preimage_of(event);
    f(&mut pre);
    reseal(&pre, event.id().suite(), key)
}

/// Mutates the whole event object (id and proof included) with `f`, without resealing.
pub fn mutate_raw(event: &Event<Unverified>, f: impl FnOnce(&mut Object)) -> Vec<u8> {
    let mut obj = object_of(event.bytes());
    f(&mut obj);
    to_canonical(&Json::Object(obj))
}

/// Mutates the `producer_proof` object of `event` (the preimage and id stay valid).
pub fn mutate_proof(event: &Event<Unverified>, f: impl FnOnce(&mut Object)) -> Vec<u8> {
    mutate_raw(event, |obj| {
        let mut proof = obj
            .remove("producer_proof")
            .and_then(|p| p.as_object().cloned())
            .expect("proof object");
        f(&mut proof);
        obj.insert("producer_proof", proof.into());
    })
}

/// Replaces the first occurrence of `from` in `bytes` with `to` (for spellings that the
/// `Json` model cannot express: floats, duplicate keys, big integers).
pub fn splice(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).expect("utf-8 event");
    assert!(text.contains(from), "{from:?} not in event");
    text.replacen(from, to, 1).into_bytes()
}

/// An id text in the `ak:event:` form whose 33 bytes are `header` and then `fill`.
pub fn id_with_header(header: u8, fill: u8) -> String {
    use base64::Engine as _;
    let mut raw = [fill; 33];
    raw[0] = header;
    format!(
        "ak:event:{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    )
}

/// The code of a rejected `from_bytes`, panicking if the bytes were accepted.
pub fn rejection(bytes: &[u8], verifier: &akledger_core::Verifier) -> akledger_core::Code {
    match Event::from_bytes(bytes, verifier) {
        Ok(e) => panic!("accepted {}", e.id()),
        Err(e) => e.code(),
    }
}
