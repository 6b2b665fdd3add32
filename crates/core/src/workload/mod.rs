//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo.
//!
//! Pure: everything derives from a seed (keys included), so the same arguments always give
//! the same signed events. The DAG shape is the one of the benchmarks: each event refs its
//! writer's previous event and, half the time, another writer's latest.

mod control_samples;
mod rng;
mod sidecar;
pub mod skills;

pub use control_samples::control_plaintext_samples;
pub use rng::{SeededRng, SplitMix};
pub use sidecar::{sidecar_workload, Forgery, SidecarSpec, SidecarWorkload};

use ed25519_dalek::SigningKey;

use crate::canonical::{Json, Object};
use crate::did::ActorId;
use crate::envelope::{ScopeRef, REALM_CREATE};
use crate::error::Rejection;
use crate::event::{Event, EventBuilder, Unverified};
use crate::id::{EventId, RealmId};
use crate::time::Timestamp;

/// The signing key of writer `n` under `seed`.
pub fn writer_key(seed: u64, n: usize) -> SigningKey {
    let mut rng = SplitMix::new(seed ^ 0xA5A5_0000_0000_0000 ^ n as u64);
    SigningKey::from_bytes(&rng.bytes32())
}

/// The first timestamp of every workload: 2026-01-01T00:00:00.000Z.
pub const EPOCH_MILLIS: u64 = 1_767_225_600_000;

/// A realm and `events` realm-scoped events by `writers` writers, in causal order: the realm
/// create first, then events whose refs name the writer's previous event (first) and, half
/// the time, another writer's latest. Payloads carry `payload_bytes` of text.
pub fn realm_dag(
    seed: u64,
    events: usize,
    writers: usize,
    payload_bytes: usize,
) -> Result<Vec<Event<Unverified>>, Rejection> {
    let (mut dag, realm) = RealmDag::new(seed, writers, payload_bytes)?;
    let mut out = Vec::with_capacity(events + 1);
    out.push(realm);
    out.extend(dag.next_batch(events)?);
    Ok(out)
}

/// [`realm_dag`] as a stream, for workloads too large to hold in memory: the same events,
/// produced batch by batch.
///
/// ```
/// use akledger_core::workload::{realm_dag, RealmDag};
/// let (mut dag, realm) = RealmDag::new(5, 3, 8).unwrap();
/// let mut streamed = vec![realm];
/// streamed.extend(dag.next_batch(20).unwrap());
/// streamed.extend(dag.next_batch(20).unwrap());
/// let whole = realm_dag(5, 40, 3, 8).unwrap();
/// assert!(streamed.iter().zip(&whole).all(|(a, b)| a.bytes() == b.bytes()));
/// ```
pub struct RealmDag {
    keys: Vec<SigningKey>,
    owner: SigningKey,
    rng: SplitMix,
    realm_id: RealmId,
    latest: Vec<Option<EventId>>,
    text: String,
    /// Each payload's text drawn at random instead of `text` (of its length).
    random_text: bool,
    next: usize,
}

impl RealmDag {
    /// The generator and the realm's create event (the first event of the stream).
    pub fn new(
        seed: u64,
        writers: usize,
        payload_bytes: usize,
    ) -> Result<(Self, Event<Unverified>), Rejection> {
        let writers = writers.max(1);
        let owner = writer_key(seed, usize::MAX);
        let realm = EventBuilder::new(
            REALM_CREATE,
            ScopeRef::RealmGenesis,
            ActorId::service_for_key(&owner.verifying_key()),
            Timestamp::from_millis(EPOCH_MILLIS)?,
        )
        .sign(&owner)?;
        let dag = RealmDag {
            keys: (0..writers).map(|n| writer_key(seed, n)).collect(),
            owner,
            rng: SplitMix::new(seed),
            realm_id: realm.id().retype(),
            latest: vec![None; writers],
            text: "x".repeat(payload_bytes),
            random_text: false,
            next: 0,
        };
        Ok((dag, realm))
    }

    /// A copy of this generator that continues differently: its own random choices and
    /// payloads marked with `branch`, so its events differ from this one's. For divergent
    /// histories (two replicas that share a prefix and then extend it on their own).
    pub fn fork(&self, branch: u64) -> RealmDag {
        RealmDag {
            keys: self.keys.clone(),
            owner: self.owner.clone(),
            rng: SplitMix::new(branch ^ 0x5EED_F04C),
            realm_id: self.realm_id,
            latest: self.latest.clone(),
            text: format!("{branch}:{}", self.text),
            random_text: self.random_text,
            next: self.next,
        }
    }

    /// This generator with each payload's text drawn at random (base64url characters, as
    /// much as before) instead of repeating one character: payloads that do not compress,
    /// like the ciphertext of encrypted ones, for measuring what compresses the events.
    pub fn with_random_text(mut self) -> RealmDag {
        self.random_text = true;
        self
    }

    /// The realm all events live in.
    pub fn realm(&self) -> RealmId {
        self.realm_id
    }

    /// The next `n` events, signed one after the other.
    pub fn next_batch(&mut self, n: usize) -> Result<Vec<Event<Unverified>>, Rejection> {
        self.plan(n)?.iter().map(Unsigned::sign).collect()
    }

    /// The next `n` events, unsigned: ids are chained sequentially (an id is the digest of
    /// the unsigned preimage), so only the signatures are left, and they are independent of
    /// each other (the engine's `workload::sign_all` computes them on several threads).
    pub fn plan(&mut self, n: usize) -> Result<Vec<Unsigned>, Rejection> {
        let writers = self.keys.len();
        let mut planned = Vec::with_capacity(n);
        for _ in 0..n {
            let i = self.next;
            self.next += 1;
            let w = i % writers;
            let mut refs: Vec<EventId> =
                self.latest.get(w).copied().flatten().into_iter().collect();
            if writers > 1 && self.rng.below(2) == 0 {
                let other = (w + 1 + self.rng.below(writers - 1)) % writers;
                refs.extend(self.latest.get(other).copied().flatten());
            }
            let text = match self.random_text {
                true => random_text(&mut self.rng, self.text.len()),
                false => self.text.clone(),
            };
            let payload = Object::new()
                .with("n", Json::Int(i as i64))
                .with("text", text.as_str().into());
            let key = self.keys.get(w).unwrap_or(&self.owner);
            let builder = EventBuilder::new(
                "ak.note.create",
                ScopeRef::Realm {
                    realm_id: self.realm_id,
                },
                ActorId::service_for_key(&key.verifying_key()),
                Timestamp::from_millis(EPOCH_MILLIS + i as u64 + 1)?,
            )
            .after(refs)
            .payload(payload.into());
            let id = builder.id();
            if let Some(slot) = self.latest.get_mut(w) {
                *slot = Some(id);
            }
            planned.push(Unsigned {
                builder,
                key: key.clone(),
            });
        }
        Ok(planned)
    }
}

/// A planned event of a [`RealmDag`] and the key that signs it.
#[derive(Clone)]
pub struct Unsigned {
    builder: EventBuilder,
    key: SigningKey,
}

impl Unsigned {
    /// The event's id (fixed before it is signed).
    pub fn id(&self) -> EventId {
        self.builder.id()
    }

    /// The signed event.
    pub fn sign(&self) -> Result<Event<Unverified>, Rejection> {
        self.builder.clone().sign(&self.key)
    }
}

/// `len` base64url characters drawn from `rng`.
fn random_text(rng: &mut SplitMix, len: usize) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    (0..len)
        .map(|_| char::from(ALPHABET.get(rng.below(64)).copied().unwrap_or(b'A')))
        .collect()
}
