//! Deterministic synthetic workloads for tests, benchmarks, `akledger gen` and the demo.
//!
//! Pure: everything derives from a seed (keys included), so the same arguments always give
//! the same signed events. The DAG shape is the one of the benchmarks: each event refs its
//! writer's previous event and, half the time, another writer's latest.

mod rng;
mod sidecar;

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
    let writers = writers.max(1);
    let keys: Vec<SigningKey> = (0..writers).map(|n| writer_key(seed, n)).collect();
    let mut rng = SplitMix::new(seed);
    let owner = writer_key(seed, usize::MAX);
    let at = |i: usize| Timestamp::from_millis(EPOCH_MILLIS + i as u64);
    let realm = EventBuilder::new(
        REALM_CREATE,
        ScopeRef::RealmGenesis,
        ActorId::service_for_key(&owner.verifying_key()),
        at(0)?,
    )
    .sign(&owner)?;
    let realm_id: RealmId = realm.id().retype();
    let mut latest: Vec<Option<EventId>> = vec![None; writers];
    let mut out = Vec::with_capacity(events + 1);
    out.push(realm);
    let text = "x".repeat(payload_bytes);
    for i in 0..events {
        let w = i % writers;
        let key = keys.get(w).unwrap_or(&owner);
        let mut refs: Vec<EventId> = latest.get(w).copied().flatten().into_iter().collect();
        if writers > 1 && rng.below(2) == 0 {
            let other = (w + 1 + rng.below(writers - 1)) % writers;
            refs.extend(latest.get(other).copied().flatten());
        }
        let payload = Object::new()
            .with("n", Json::Int(i as i64))
            .with("text", text.as_str().into());
        let event = EventBuilder::new(
            "ak.note.create",
            ScopeRef::Realm { realm_id },
            ActorId::service_for_key(&key.verifying_key()),
            at(i + 1)?,
        )
        .after(refs)
        .payload(payload.into())
        .sign(key)?;
        if let Some(slot) = latest.get_mut(w) {
            *slot = Some(event.id());
        }
        out.push(event);
    }
    Ok(out)
}
