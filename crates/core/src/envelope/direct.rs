//! The envelope read straight from an event's canonical bytes: the fast path of
//! [`Event::parse`](crate::Event::parse). It walks the members in the one order canonical
//! JSON allows, checking every spelling rule as it goes (the same [`Reader`] the general
//! parser uses) and validating every field with the same functions as [`Envelope::read`],
//! without building a value tree for anything but the payload.
//!
//! It answers only for the events it fully understands: `None` for anything else — any
//! error, any member it does not expect — and the caller then reads the bytes the general
//! way (`parse_strict`, then [`Envelope::read`]), which gives the answer or the rejection.
//! So it can only ever agree with the general way: whatever it returns, the general way
//! returns too. A property test holds it to that over mutated events, and with debug
//! assertions (every test, the fuzz targets' builds and their corpora replayed) each event
//! read directly is read the general way as well and the two compared.

use std::borrow::Cow;
use std::ops::Range;

use super::{
    check_kind, check_payload, check_proof_kind, check_realm, check_ref_count, Envelope,
    ProducerProof, RefList, ScopeRef, SemanticRef,
};
use crate::canonical::Reader;
use crate::did::{ActorId, DidCoreId};
use crate::id::{EventId, RealmId, SidecarId};
use crate::time::Timestamp;

/// An event's envelope as read, and where its preimage's members lie (`Runs`: ranges).
pub struct Direct<Runs = [Range<usize>; 3]> {
    /// The envelope.
    pub envelope: Envelope,
    /// The stated id.
    pub id: EventId,
    /// The producer's proof.
    pub proof: ProducerProof,
    /// [`Envelope::causal_refs`].
    pub causal: Vec<EventId>,
    /// The preimage's members (all but `event_id` and `producer_proof`) as runs of the
    /// input. Read directly, three: `actor_id` to `created_at`, `kind` to `payload`, and
    /// `realm_id` (or `scope_ref`) to the last member.
    pub preimage: Runs,
}

/// Reads `bytes` as an event the fast way; `None` sends the caller the general way.
pub fn read_direct(bytes: &[u8]) -> Option<Direct> {
    let r = &mut Reader::over(bytes).ok()?;
    eat(r, b"{")?;
    let first = r.at();
    eat(r, br#""actor_id":"#)?;
    let actor = actor(r)?;
    eat(r, br#","created_at":"#)?;
    let created_at = Timestamp::parse(&r.text().ok()?).ok()?;
    let first = first..r.at();
    eat(r, br#","event_id":"#)?;
    let id = EventId::parse(&r.text().ok()?).ok()?;
    eat(r, b",")?;
    let second = r.at();
    eat(r, br#""kind":"#)?;
    let kind = r.text().ok()?.into_owned();
    check_kind(&kind).ok()?;
    eat(r, br#","payload":"#)?;
    let payload = r.member_value().ok()?;
    check_payload(&payload).ok()?;
    let second = second..r.at();
    eat(r, br#","producer_proof":"#)?;
    let proof = proof(r)?;
    eat(r, b",")?;
    let third = r.at();
    let realm = if r.eat(br#""realm_id":"#) {
        let text = r.text().ok()?;
        let realm = RealmId::parse(&text).ok()?;
        eat(r, b",")?;
        Some((text, realm))
    } else {
        None
    };
    eat(r, br#""scope_ref":"#)?;
    let scope = scope(r, realm.as_ref())?;
    let realm_id = realm.map(|(_, id)| id);
    check_realm(&kind, realm_id, &scope).ok()?;
    let (refs, causal) = if r.eat(br#","semantic_refs":["#) {
        refs(r)?
    } else {
        (Vec::new(), Vec::new())
    };
    let third = third..r.at();
    eat(r, b"}")?;
    if !r.finished() {
        return None;
    }
    let envelope = Envelope {
        kind,
        realm_id,
        scope,
        actor,
        created_at,
        refs,
        payload,
    };
    Some(Direct {
        envelope,
        id,
        proof,
        causal,
        preimage: [first, second, third],
    })
}

/// Reads exactly `spelling`, or gives up.
fn eat(r: &mut Reader<'_>, spelling: &[u8]) -> Option<()> {
    r.eat(spelling).then_some(())
}

/// A string member's value, then `after`.
fn text_then(r: &mut Reader<'_>, after: &[u8]) -> Option<String> {
    let text = r.text().ok()?.into_owned();
    eat(r, after)?;
    Some(text)
}

/// A `did_core` id, then `after`.
fn did_then(r: &mut Reader<'_>, after: &[u8]) -> Option<DidCoreId> {
    let did = DidCoreId::parse(&r.text().ok()?).ok()?;
    eat(r, after)?;
    Some(did)
}

/// `actor_id`: the account or the service form.
fn actor(r: &mut Reader<'_>) -> Option<ActorId> {
    if r.eat(br#"{"kind":"service","service_id":"#) {
        let service_id = did_then(r, b"}")?;
        return Some(ActorId::Service { service_id });
    }
    eat(r, br#"{"account_id":{"principal_id":"#)?;
    let principal_id = did_then(r, br#","station_id":"#)?;
    let station_id = did_then(r, br#"},"kind":"account"}"#)?;
    Some(ActorId::Account {
        principal_id,
        station_id,
    })
}

/// `producer_proof`.
fn proof(r: &mut Reader<'_>) -> Option<ProducerProof> {
    eat(r, br#"{"created_at":"#)?;
    let created_at = Timestamp::parse(&r.text().ok()?).ok()?;
    eat(r, br#","event_digest":"#)?;
    let event_digest = text_then(r, br#","jws":"#)?;
    let jws = text_then(r, br#","kind":"#)?;
    check_proof_kind(&r.text().ok()?).ok()?;
    eat(r, br#","verification_method":"#)?;
    let verification_method = text_then(r, b"}")?;
    Some(ProducerProof {
        verification_method,
        event_digest,
        created_at,
        jws,
    })
}

/// `scope_ref`: the genesis, realm or sidecar form. `known` is the envelope's `realm_id`
/// (its text and the id it parsed to), which the scope's nearly always repeats.
fn scope(r: &mut Reader<'_>, known: Option<&(Cow<'_, str>, RealmId)>) -> Option<ScopeRef> {
    if r.eat(br#"{"kind":"realm_genesis"}"#) {
        return Some(ScopeRef::RealmGenesis);
    }
    let sidecar = if r.eat(br#"{"kind":"realm","realm_id":"#) {
        false
    } else {
        eat(r, br#"{"kind":"sidecar","realm_id":"#)?;
        true
    };
    let text = r.text().ok()?;
    let realm_id = match known {
        Some((known_text, known_id)) if *known_text == text => *known_id,
        _ => RealmId::parse(&text).ok()?,
    };
    if !sidecar {
        eat(r, b"}")?;
        return Some(ScopeRef::Realm { realm_id });
    }
    eat(r, br#","sidecar_id":"#)?;
    let sidecar_id = SidecarId::parse(&r.text().ok()?).ok()?;
    eat(r, b"}")?;
    Some(ScopeRef::Sidecar {
        realm_id,
        sidecar_id,
    })
}

/// The items of `semantic_refs` (its `[` read), through the closing `]`.
fn refs(r: &mut Reader<'_>) -> Option<(Vec<SemanticRef>, Vec<EventId>)> {
    let mut refs = RefList::with_capacity(2);
    let mut count = 0;
    loop {
        eat(r, br#"{"critical":"#)?;
        let critical = r.boolean().ok()?;
        eat(r, br#","id":"#)?;
        let id = r.text().ok()?;
        eat(r, br#","role":"#)?;
        let role = r.text().ok()?;
        eat(r, b"}")?;
        count += 1;
        check_ref_count(count).ok()?;
        refs.push(SemanticRef::from_parts(&id, &role, critical).ok()?)
            .ok()?;
        if r.eat(b"]") {
            return Some(refs.into_parts());
        }
        eat(r, b",")?;
    }
}
