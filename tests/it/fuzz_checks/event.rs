//! `event` and `event_mutation`: untrusted bytes through `Event::parse` and `verify`.

use akledger::canonical::{parse_canonical, to_canonical, Json, Object};
use akledger::{Event, Unverified};
use arbitrary::{Arbitrary, Unstructured};

use super::fixtures::{recomputed_id, valid_events, World};

/// What must hold for anything `Event::parse` accepts.
fn accepted(bytes: &[u8], event: &Event<Unverified>) {
    assert_eq!(event.bytes(), bytes, "parse must keep the exact bytes");
    assert_eq!(
        recomputed_id(bytes, event.id()),
        event.id(),
        "accepted an id that is not the preimage digest"
    );
    let value = parse_canonical(bytes).expect("accepted bytes are canonical");
    assert_eq!(
        to_canonical(&value),
        bytes,
        "accepted bytes do not re-serialize"
    );
}

/// Parses and verifies arbitrary bytes: never panics; accepted events are consistent.
/// Returns whether the bytes parsed and verified.
fn parse_and_verify(bytes: &[u8]) -> bool {
    match Event::parse(bytes) {
        Ok(event) => {
            accepted(bytes, &event);
            event.verify(&World::get().verifier).is_ok()
        }
        Err(_) => false,
    }
}

/// `event`: raw bytes.
pub fn check(data: &[u8]) {
    parse_and_verify(data);
}

/// One mutation of a valid event.
#[derive(Arbitrary, Debug)]
enum Mutation {
    /// Flip bits of one byte.
    Flip { at: u16, mask: u8 },
    /// Insert a byte.
    Insert { at: u16, byte: u8 },
    /// Delete a run of bytes.
    Delete { at: u16, len: u8 },
    /// Copy a run of bytes over another place.
    Copy { from: u16, to: u16, len: u8 },
    /// Swap the values of two members (by index) of the top-level object.
    SwapTop { a: u8, b: u8 },
    /// Swap the values of two members of the payload or the proof.
    SwapInner { proof: bool, a: u8, b: u8 },
    /// Replace a member's value (top level or payload) with a small value.
    Set {
        payload: bool,
        member: u8,
        value: Small,
    },
    /// Remove a member (top level or payload).
    Remove { payload: bool, member: u8 },
    /// Put another valid event's value of a member in place.
    Transplant { other: u8, member: u8 },
    /// Recompute the id and proof over whatever the preimage now is (with the signer's key).
    Reseal { suite_sha256: bool },
}

#[derive(Arbitrary, Debug)]
enum Small {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Empty,
    Array,
}

impl Small {
    fn json(&self) -> Json {
        match self {
            Small::Null => Json::Null,
            Small::Bool(b) => Json::Bool(*b),
            Small::Int(i) => Json::Int((*i).clamp(-(1 << 53), 1 << 53)),
            Small::Str(s) => Json::Str(s.clone()),
            Small::Empty => Json::Object(Object::new()),
            Small::Array => Json::Array(Vec::new()),
        }
    }
}

fn object(bytes: &[u8]) -> Option<Object> {
    match parse_canonical(bytes) {
        Ok(Json::Object(o)) => Some(o),
        _ => None,
    }
}

fn nth_key(obj: &Object, n: u8) -> Option<String> {
    let keys: Vec<String> = obj.iter().map(|(k, _)| k.to_string()).collect();
    if keys.is_empty() {
        return None;
    }
    keys.get(usize::from(n) % keys.len()).cloned()
}

fn swap(obj: &mut Object, a: u8, b: u8) {
    let (Some(ka), Some(kb)) = (nth_key(obj, a), nth_key(obj, b)) else {
        return;
    };
    if ka == kb {
        return;
    }
    let va = obj.remove(&ka).unwrap_or(Json::Null);
    let vb = obj.remove(&kb).unwrap_or(Json::Null);
    obj.insert(ka, vb);
    obj.insert(kb, va);
}

fn with_inner(obj: &mut Object, member: &str, f: impl FnOnce(&mut Object)) {
    if let Some(Json::Object(mut inner)) = obj.remove(member) {
        f(&mut inner);
        obj.insert(member, Json::Object(inner));
    }
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation, signer: &akledger::ed25519_dalek::SigningKey) -> bool {
    let n = bytes.len().max(1);
    let mut resealed = false;
    match m {
        Mutation::Flip { at, mask } => {
            let i = usize::from(*at) % n;
            if let Some(b) = bytes.get_mut(i) {
                *b ^= mask;
            }
        }
        Mutation::Insert { at, byte } => bytes.insert(usize::from(*at) % (bytes.len() + 1), *byte),
        Mutation::Delete { at, len } => {
            let start = usize::from(*at) % n;
            let end = (start + usize::from(*len)).min(bytes.len());
            bytes.drain(start.min(end)..end);
        }
        Mutation::Copy { from, to, len } => {
            let from = usize::from(*from) % n;
            let to = usize::from(*to) % n;
            let len = usize::from(*len)
                .min(bytes.len().saturating_sub(from))
                .min(bytes.len().saturating_sub(to));
            let run: Vec<u8> = bytes[from..from + len].to_vec();
            bytes[to..to + len].copy_from_slice(&run);
        }
        structural => {
            let Some(mut obj) = object(bytes) else {
                return false;
            };
            match structural {
                Mutation::SwapTop { a, b } => swap(&mut obj, *a, *b),
                Mutation::SwapInner { proof, a, b } => {
                    let member = if *proof { "producer_proof" } else { "payload" };
                    with_inner(&mut obj, member, |inner| swap(inner, *a, *b));
                }
                Mutation::Set {
                    payload,
                    member,
                    value,
                } => {
                    let set = |o: &mut Object| {
                        if let Some(k) = nth_key(o, *member) {
                            o.remove(&k);
                            o.insert(k, value.json());
                        }
                    };
                    if *payload {
                        with_inner(&mut obj, "payload", set);
                    } else {
                        set(&mut obj);
                    }
                }
                Mutation::Remove { payload, member } => {
                    let remove = |o: &mut Object| {
                        if let Some(k) = nth_key(o, *member) {
                            o.remove(&k);
                        }
                    };
                    if *payload {
                        with_inner(&mut obj, "payload", remove);
                    } else {
                        remove(&mut obj);
                    }
                }
                Mutation::Transplant { other, member } => {
                    let pool = valid_events();
                    let (donor, _) = &pool[usize::from(*other) % pool.len()];
                    if let (Some(donor), Some(k)) = (object(donor.bytes()), nth_key(&obj, *member))
                    {
                        if let Some(v) = donor.get(&k) {
                            obj.remove(&k);
                            obj.insert(k, v.clone());
                        }
                    }
                }
                Mutation::Reseal { suite_sha256 } => {
                    let suite = if *suite_sha256 {
                        akledger::DigestSuite::Sha256
                    } else {
                        akledger::DigestSuite::Blake3
                    };
                    if let Some(b) = reseal(&obj, suite, signer) {
                        *bytes = b;
                        return true;
                    }
                    return false;
                }
                _ => unreachable!(),
            }
            *bytes = to_canonical(&Json::Object(obj));
            resealed = false;
        }
    }
    resealed
}

/// Recomputes id and proof over the object's preimage, signing for the actor it names.
fn reseal(
    obj: &Object,
    suite: akledger::DigestSuite,
    key: &akledger::ed25519_dalek::SigningKey,
) -> Option<Vec<u8>> {
    let mut pre = obj.clone();
    pre.remove("event_id");
    pre.remove("producer_proof");
    let envelope = akledger::Envelope {
        kind: "ak.unused".into(),
        realm_id: None,
        scope: akledger::ScopeRef::RealmGenesis,
        actor: akledger::ActorId::from_json(pre.get("actor_id")?).ok()?,
        created_at: akledger::Timestamp::parse(pre.get("created_at")?.as_str()?).ok()?,
        refs: Vec::new(),
        payload: Json::Object(Object::new()),
    };
    let id = akledger::EventId::of_preimage(suite, &to_canonical(&Json::Object(pre.clone())));
    let proof = akledger::proof::sign(&envelope, &id.digest_text(), key);
    pre.insert("event_id", id.to_string().into());
    pre.insert("producer_proof", proof.to_json());
    Some(to_canonical(&Json::Object(pre)))
}

/// `event_mutation`: a valid event from a fixed set, then up to 8 mutations. Never panics;
/// anything accepted is consistent; and without a reseal (no signing key used), nothing but
/// the bytes of a signed event of the set may verify (transplanting members from another
/// event of the set can rebuild that event exactly, which is not a forgery).
pub fn check_mutation(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let pool = valid_events();
    let Ok(pick) = u.choose_index(pool.len()) else {
        return;
    };
    let (original, signer) = &pool[pick];
    let mut bytes = original.bytes().to_vec();
    let mut resealed = false;
    for _ in 0..8 {
        let Ok(m) = Mutation::arbitrary(&mut u) else {
            break;
        };
        resealed |= apply(&mut bytes, &m, signer);
    }
    let verified = parse_and_verify(&bytes);
    if verified && !resealed {
        assert!(
            bytes == original.bytes() || pool.iter().any(|(e, _)| e.bytes() == bytes.as_slice()),
            "mutated bytes verified without re-signing: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
}
