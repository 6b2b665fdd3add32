//! Events: bytes in, [`Event<Unverified>`] after the structural and content-address checks,
//! [`Event<Verified>`] after the producer proof. Only verified events go further (the ledger,
//! the DAG, the fold take nothing else).
//!
//! Receiver order (PROFILE §1–§4): size → canonical JSON → closed envelope → id suite →
//! recompute the digest and compare it with the id → kind-specific payload → proof.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use rand_core::{CryptoRng, RngCore};

use crate::canonical::{parse_strict, Canonical, Json, Object};
use crate::did::verification_method;
use crate::did::ActorId;
use crate::encrypted::Sealing;
use crate::envelope::{read_direct, Body, Direct, Envelope, ProducerProof, ScopeRef, SemanticRef};
use crate::error::{schema, Code, Rejection};
use crate::id::{DigestSuite, EventId, DIGEST_TEXT_LEN};
use crate::proof::{sign_many, verify_batch, SignatureCheck, UnsignedProof, Verifier};
use crate::time::Timestamp;

/// Marker: structure and id checked, proof not yet.
#[derive(Debug)]
pub enum Unverified {}
/// Marker: the producer proof verified for the actor.
#[derive(Debug)]
pub enum Verified {}

/// An event's canonical bytes: an allocation of their own, or a span of a buffer the
/// event shares with others read in the same batch ([`Event::parse_span`]), which saves
/// each a copy and an allocation too large for the allocator's per-thread caches.
#[derive(Debug)]
enum Kept {
    Own(Arc<[u8]>),
    /// `buffer[span]`, in bounds (checked when the event was read).
    Span {
        buffer: Arc<Vec<u8>>,
        span: Range<usize>,
    },
}

impl Kept {
    fn bytes(&self) -> &[u8] {
        match self {
            Kept::Own(bytes) => bytes,
            Kept::Span { buffer, span } => buffer.get(span.clone()).unwrap_or_default(),
        }
    }
}

#[derive(Debug)]
struct Inner {
    id: EventId,
    bytes: Kept,
    /// [`Event::dependencies`].
    dependencies: Vec<EventId>,
    envelope: Envelope,
    proof: ProducerProof,
    body: Body,
    /// What its author knew as it sealed its payload, for an event sealed and signed in
    /// this process ([`Sealing`]); `None` for every event read from bytes.
    sealing: Option<Box<Sealing>>,
}

/// An event in trust state `S`. Cheap to clone (shared).
#[derive(Debug)]
pub struct Event<S = Verified> {
    inner: Arc<Inner>,
    state: PhantomData<fn() -> S>,
}

impl<S> Clone for Event<S> {
    fn clone(&self) -> Self {
        Event {
            inner: Arc::clone(&self.inner),
            state: PhantomData,
        }
    }
}

impl<S> Event<S> {
    /// [`Verifier::authorize`]: the proof's checks short of the signature equation and its
    /// challenge.
    fn authorization_check(&self, verifier: &Verifier) -> Result<(), Rejection> {
        let inner = &self.inner;
        let mut digest = [0; DIGEST_TEXT_LEN];
        let digest = inner.id.digest_text_in(&mut digest);
        verifier
            .authorize(&inner.envelope, digest, &inner.proof)
            .map(drop)
    }

    /// The proof's binding, key and authorization checks (§4), leaving the signature equation.
    fn signature_check(&self, verifier: &Verifier) -> Result<SignatureCheck, Rejection> {
        let inner = &self.inner;
        let mut digest = [0; DIGEST_TEXT_LEN];
        let digest = inner.id.digest_text_in(&mut digest);
        verifier.prepare(&inner.envelope, digest, &inner.proof)
    }

    /// The content id.
    pub fn id(&self) -> EventId {
        self.inner.id
    }

    /// The canonical bytes.
    pub fn bytes(&self) -> &[u8] {
        self.inner.bytes.bytes()
    }

    /// The canonical bytes, shared: without a copy unless the event was read as a span of
    /// a larger buffer ([`Event::parse_span`]).
    pub fn shared_bytes(&self) -> Arc<[u8]> {
        match &self.inner.bytes {
            Kept::Own(bytes) => Arc::clone(bytes),
            Kept::Span { .. } => self.bytes().into(),
        }
    }

    /// This event with bytes of its own: the same event (a shared clone) unless it was read
    /// as a span of a larger buffer ([`Event::parse_span`]), which would otherwise stay in
    /// memory as long as the event does. For events kept long after their batch.
    pub fn detached(&self) -> Self {
        let Kept::Span { .. } = self.inner.bytes else {
            return self.clone();
        };
        let inner = &self.inner;
        Event {
            inner: Arc::new(Inner {
                id: inner.id,
                bytes: Kept::Own(self.bytes().into()),
                dependencies: inner.dependencies.clone(),
                envelope: inner.envelope.clone(),
                proof: inner.proof.clone(),
                body: inner.body.clone(),
                sealing: inner.sealing.clone(),
            }),
            state: PhantomData,
        }
    }

    /// The signed envelope.
    pub fn envelope(&self) -> &Envelope {
        &self.inner.envelope
    }

    /// The producer proof.
    pub fn proof(&self) -> &ProducerProof {
        &self.inner.proof
    }

    /// What the payload means (PROFILE §6).
    pub fn body(&self) -> &Body {
        &self.inner.body
    }

    /// The kind.
    pub fn kind(&self) -> &str {
        &self.inner.envelope.kind
    }

    /// The author.
    pub fn actor(&self) -> &ActorId {
        &self.inner.envelope.actor
    }

    /// `created_at`.
    pub fn created_at(&self) -> Timestamp {
        self.inner.envelope.created_at
    }

    /// The scope.
    pub fn scope(&self) -> &ScopeRef {
        &self.inner.envelope.scope
    }

    /// Every DAG edge of the event (PROFILE §5), deduplicated: its causal refs in ref order,
    /// then the implied edges — the scope's create event, for an
    /// `ak.sidecar.context.attach` the strand's create event and the predecessor attach,
    /// and for an `ak.actor.model` its predecessor model.
    /// Worked out once, when the event is parsed.
    pub fn dependencies(&self) -> &[EventId] {
        &self.inner.dependencies
    }

    /// What the author knew as it sealed the payload, when the event was sealed and signed
    /// in this process.
    pub(crate) fn sealing(&self) -> Option<&Sealing> {
        self.inner.sealing.as_deref()
    }
}

/// [`Event::dependencies`] of an envelope and its body, given its
/// [`Envelope::causal_refs`].
fn edges(envelope: &Envelope, body: &Body, mut deps: Vec<EventId>) -> Vec<EventId> {
    let scope_dep = match &envelope.scope {
        ScopeRef::RealmGenesis => None,
        ScopeRef::Realm { realm_id } => Some(realm_id.retype()),
        ScopeRef::Sidecar { sidecar_id, .. } => Some(sidecar_id.retype()),
    };
    let (strand, predecessor) = match body {
        Body::ContextAttach(a) => (Some(a.strand_id.retype()), a.predecessor),
        Body::ActorModel(m) => (None, m.predecessor),
        _ => (None, None),
    };
    for dep in [scope_dep, strand, predecessor].into_iter().flatten() {
        if !deps.contains(&dep) {
            deps.push(dep);
        }
    }
    deps
}

impl Event<Unverified> {
    /// Parses untrusted bytes: canonical form, envelope, id and kind-specific payload.
    pub fn parse(bytes: &[u8]) -> Result<Self, Rejection> {
        Event::parse_keeping(bytes, || Kept::Own(bytes.into()))
    }

    /// [`Event::parse`] of bytes already shared: the event keeps them without a copy.
    pub fn parse_shared(bytes: Arc<[u8]>) -> Result<Self, Rejection> {
        Event::parse_keeping(&bytes, || Kept::Own(Arc::clone(&bytes)))
    }

    /// [`Event::parse`] of `buffer[span]`: the event keeps a share of `buffer` instead of a
    /// copy of its bytes, so the whole buffer lives as long as any event read from it. For
    /// a batch read from a log, whose events are all dropped once it is committed. A span
    /// outside the buffer is an empty item, rejected as such.
    pub fn parse_span(buffer: &Arc<Vec<u8>>, span: Range<usize>) -> Result<Self, Rejection> {
        let bytes = buffer.get(span.clone()).unwrap_or_default();
        Event::parse_keeping(bytes, || Kept::Span {
            buffer: Arc::clone(buffer),
            span,
        })
    }

    fn parse_keeping(bytes: &[u8], keep: impl FnOnce() -> Kept) -> Result<Self, Rejection> {
        // The envelope is read straight from the bytes when it can be; any event that way
        // does not take (a rejection above all) is read the general way, which gives the
        // answer.
        Event::read(bytes, keep, IdCheck::Recompute)
    }

    /// Reads bytes through the direct reader, or the general one when it does not take
    /// them.
    fn read(
        bytes: &[u8],
        keep: impl FnOnce() -> Kept,
        id_check: IdCheck,
    ) -> Result<Self, Rejection> {
        match read_direct(bytes) {
            Some(direct) => {
                #[cfg(any(debug_assertions, feature = "cross-check"))]
                if cross_checked(&direct.id) {
                    same_as_general(bytes, &direct);
                }
                Event::assemble(bytes, direct, keep, id_check)
            }
            None => Event::assemble(bytes, read_general(bytes)?, keep, id_check),
        }
    }

    /// Checks the stated id against the preimage (the members without `event_id` and
    /// `producer_proof`, hashed from the input's own bytes) unless `id_check` trusts it,
    /// reads the payload and builds the event.
    fn assemble<Runs: AsRef<[Range<usize>]>>(
        bytes: &[u8],
        direct: Direct<Runs>,
        keep: impl FnOnce() -> Kept,
        id_check: IdCheck,
    ) -> Result<Self, Rejection> {
        let Direct {
            envelope,
            id,
            proof,
            causal,
            preimage,
        } = direct;
        let recomputed =
            || EventId::of_preimage_parts(id.suite(), preimage_parts(bytes, preimage.as_ref()));
        if id_check == IdCheck::Recompute && recomputed() != id {
            return Err(Rejection::new(
                Code::EventIdDigestMismatch,
                format!("{id} is not the {} digest of the event", id.suite().name()),
            ));
        }
        let body = Body::read(&envelope.kind, &envelope.scope, &envelope.payload)?;
        if let Body::ActorModel(m) = &body {
            if envelope.actor.principal() != m.entity.did() {
                return Err(crate::error::schema(format!(
                    "an actor model of {} must be authored by that did_core_id, not {}",
                    m.entity.did(),
                    envelope.actor.principal()
                )));
            }
        }
        let inner = Inner {
            id,
            bytes: keep(),
            dependencies: edges(&envelope, &body, causal),
            envelope,
            proof,
            body,
            sealing: None,
        };
        Ok(Event {
            inner: Arc::new(inner),
            state: PhantomData,
        })
    }

    /// Verifies the producer proof; only then is the event usable downstream.
    pub fn verify(self, verifier: &Verifier) -> Result<Event<Verified>, Rejection> {
        self.signature_check(verifier)?.verify()?;
        Ok(self.into_verified())
    }

    /// Verifies the producer proofs of `events` with one batched signature check (falling
    /// back to single checks to name the culprits when the batch fails). Every answer is the
    /// one [`Event::verify`] gives (ZIP-215, PROFILE §4); `rng` draws the batch coefficients.
    /// Events that already failed (e.g. to parse) pass through with their rejection.
    pub fn verify_batch<R: RngCore + CryptoRng>(
        events: impl IntoIterator<Item = Result<Event<Unverified>, Rejection>>,
        verifier: &Verifier,
        rng: R,
    ) -> Vec<Result<Event<Verified>, Rejection>> {
        let prepared: Vec<_> = events
            .into_iter()
            .map(|e| e.and_then(|e| e.signature_check(verifier).map(|check| (e, check))))
            .collect();
        let checks: Vec<SignatureCheck> = prepared
            .iter()
            .filter_map(|p| p.as_ref().ok().map(|(_, check)| check.clone()))
            .collect();
        let mut verdicts = verify_batch(&checks, rng).into_iter();
        prepared
            .into_iter()
            .map(|p| {
                let (event, _) = p?;
                verdicts.next().unwrap_or_else(|| {
                    Err(Rejection::new(
                        Code::SignatureInvalid,
                        "producer proof: not checked",
                    ))
                })?;
                Ok(event.into_verified())
            })
            .collect()
    }

    fn into_verified(self) -> Event<Verified> {
        Event {
            inner: self.inner,
            state: PhantomData,
        }
    }
}

impl Event<Unverified> {
    /// Marks an event verified without checking its proof. Only for bytes this engine
    /// verified before writing them to its own checksummed log (replay, reads).
    pub(crate) fn assume_verified(self) -> Event<Verified> {
        self.into_verified()
    }

    /// **Checks neither the id nor the signature.** Re-reads an event that the caller
    /// verified itself before storing it where nobody else could change it (the engine's
    /// own checksummed segment log): parsed and read like any event, so stored bytes that
    /// no longer read are still an error, but the stated id is taken as the digest it was
    /// checked to be and the proof as verified.
    ///
    /// Behind the `reread-unchecked` feature, which only the engine's log read-back turns
    /// on: anything else must go through [`Event::verify`].
    #[cfg(feature = "reread-unchecked")]
    pub fn reread_unchecked(bytes: &[u8]) -> Result<Event<Verified>, Rejection> {
        Event::read(bytes, || Kept::Own(bytes.into()), IdCheck::TrustStored)
            .map(Event::into_verified)
    }
}

/// Whether reading an event recomputes its id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IdCheck {
    /// Untrusted bytes: the id must be the preimage's digest.
    Recompute,
    /// Bytes just written from a preimage whose digest the id is (an event signed here).
    Derived,
    /// Bytes from the engine's own log, checked when they were admitted.
    #[cfg_attr(not(feature = "reread-unchecked"), allow(dead_code))]
    TrustStored,
}

impl Event<Verified> {
    /// Parses and verifies in one step.
    pub fn from_bytes(bytes: &[u8], verifier: &Verifier) -> Result<Self, Rejection> {
        Event::parse(bytes)?.verify(verifier)
    }

    /// Runs the proof's binding, key and authorization checks (PROFILE §4) again, against
    /// `verifier`, without the signature equation the event was verified with: whether the
    /// key that signed it is authorized by this verifier's keyring, which may differ from the
    /// one that verified it.
    pub fn check_authorized(&self, verifier: &Verifier) -> Result<(), Rejection> {
        self.authorization_check(verifier)
    }
}

/// Members left out of the preimage (PROFILE §3).
const NOT_IN_PREIMAGE: [&str; 2] = ["event_id", "producer_proof"];

/// The general way to read an event: parse the canonical document into a value, then read
/// the envelope from it. Its preimage runs are the members other than [`NOT_IN_PREIMAGE`].
fn read_general(bytes: &[u8]) -> Result<Direct<Vec<Range<usize>>>, Rejection> {
    // One pass checks the canonical spelling and notes where each member lies.
    let Canonical { value, members } = parse_strict(bytes)?;
    let Json::Object(obj) = value else {
        return Err(schema("an event must be a JSON object"));
    };
    let preimage = obj
        .keys()
        .zip(members)
        .filter(|(key, _)| !NOT_IN_PREIMAGE.contains(key))
        .map(|(_, span)| span)
        .collect();
    let (envelope, id, proof, causal) = Envelope::read_parts(obj)?;
    Ok(Direct {
        envelope,
        id,
        proof,
        causal,
        preimage,
    })
}

/// Whether a build with debug assertions or the `cross-check` feature (every test build of
/// the workspace) reads this event the general way too (and decrypts it, when its author's
/// [`Sealing`] would spare that): one event in eight, chosen by its
/// stated id, so that every test's events are sampled alike in any order and process.
/// Reading every event twice took 40 % of the engine's test time; the direct reader's
/// property test compares the two readers on every input it makes.
#[cfg(any(debug_assertions, feature = "cross-check"))]
pub(crate) fn cross_checked(id: &EventId) -> bool {
    id.digest()[0] % 8 == 0
}

/// In builds with debug assertions or the `cross-check` feature (every test), events read
/// directly are also read the general way (`cross_checked` picks them), and the two must
/// agree.
#[cfg(any(test, debug_assertions, feature = "cross-check", feature = "internals"))]
pub fn same_as_general(bytes: &[u8], direct: &Direct) {
    let general = match read_general(bytes) {
        Ok(general) => general,
        Err(refused) => panic!("read directly, but the general way refuses it: {refused}"),
    };
    let preimage = |runs: &[Range<usize>]| -> Vec<u8> {
        preimage_parts(bytes, runs).flatten().copied().collect()
    };
    assert_eq!(direct.envelope, general.envelope, "envelopes differ");
    assert_eq!(direct.id, general.id, "ids differ");
    assert_eq!(direct.proof, general.proof, "proofs differ");
    assert_eq!(direct.causal, general.causal, "causal refs differ");
    assert_eq!(
        preimage(&direct.preimage),
        preimage(&general.preimage),
        "preimages differ"
    );
}

/// In builds with debug assertions or the `cross-check` feature (every test), an event
/// built from the parts of an envelope made here must be what reading its bytes gives.
#[cfg(any(debug_assertions, feature = "cross-check"))]
fn same_as_read_back(event: &Event<Unverified>) {
    let read = match Event::read(
        event.bytes(),
        || Kept::Own(event.shared_bytes()),
        IdCheck::Recompute,
    ) {
        Ok(read) => read,
        Err(refused) => panic!("built from its parts, but reading its bytes refuses it: {refused}"),
    };
    let (built, read) = (&event.inner, &read.inner);
    assert_eq!(built.id, read.id, "ids differ");
    assert_eq!(built.envelope, read.envelope, "envelopes differ");
    assert_eq!(built.proof, read.proof, "proofs differ");
    assert_eq!(built.body, read.body, "bodies differ");
    assert_eq!(built.dependencies, read.dependencies, "dependencies differ");
}

/// The canonical preimage of an event as parts of its bytes: `{`, the `runs` of members
/// joined by `,`, and `}`.
fn preimage_parts<'a>(
    bytes: &'a [u8],
    runs: &'a [Range<usize>],
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let members = runs.iter().enumerate().flat_map(move |(n, run)| {
        let comma: &[u8] = if n == 0 { b"" } else { b"," };
        [comma, bytes.get(run.clone()).unwrap_or_default()]
    });
    std::iter::once(&b"{"[..])
        .chain(members)
        .chain(std::iter::once(&b"}"[..]))
}

/// Authors an event: set the fields, sign with a key, get canonical bytes and the id.
///
/// ```
/// use akledger_core::{ActorId, EventBuilder, ScopeRef, Timestamp};
/// let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
/// let event = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis,
///         ActorId::service_for_key(&key.verifying_key()),
///         Timestamp::parse("2026-11-29T12:00:00.000Z").unwrap())
///     .sign(&key)
///     .unwrap();
/// assert_eq!(event.id().to_string().len(), 53);
/// assert_eq!(event.id().suite(), akledger_core::DigestSuite::Blake3);
/// ```
#[derive(Clone, Debug)]
pub struct EventBuilder {
    envelope: Envelope,
    suite: DigestSuite,
    /// What the author knew as it sealed the payload, handed on to the signed event.
    sealing: Option<Sealing>,
    /// Whether the core's own author made the envelope whole ([`EventBuilder::made_here`]).
    made_here: bool,
}

impl EventBuilder {
    /// A builder for an event of `kind` in `scope` by `actor` at `created_at`, with payload
    /// `{}`, no refs, and the blake3 suite.
    pub fn new(
        kind: impl Into<String>,
        scope: ScopeRef,
        actor: ActorId,
        created_at: Timestamp,
    ) -> Self {
        let envelope = Envelope {
            kind: kind.into(),
            realm_id: scope.realm_id(),
            scope,
            actor,
            created_at,
            refs: Vec::new(),
            payload: Json::Object(Object::new()),
        };
        EventBuilder {
            envelope,
            suite: DigestSuite::Blake3,
            sealing: None,
            made_here: false,
        }
    }

    /// Sets the payload object (dropping what an author knew of the payload it replaces).
    pub fn payload(mut self, payload: Json) -> Self {
        self.envelope.payload = payload;
        self.sealing = None;
        self.made_here = false;
        self
    }

    /// Adds a semantic ref.
    pub fn reference(mut self, r: SemanticRef) -> Self {
        self.envelope.refs.push(r);
        self.made_here = false;
        self
    }

    /// Adds an `after` ref to each id.
    pub fn after(mut self, ids: impl IntoIterator<Item = EventId>) -> Self {
        self.envelope
            .refs
            .extend(ids.into_iter().map(SemanticRef::after));
        self
    }

    /// Hands `sealing`, what the author knew as it sealed the payload, on to the signed
    /// event.
    pub(crate) fn sealed(mut self, sealing: Option<Sealing>) -> Self {
        self.sealing = sealing;
        self
    }

    /// Marks the envelope as made whole by the core's own author
    /// ([`crate::exchange::SidecarAuthor`]): its kind, scope and actor, `after` refs, and a
    /// payload of the author's own sealing, each of a type whose canonical spelling reads back
    /// to itself. Signing then builds the event from these parts instead of reading back the
    /// bytes it wrote ([`EventBuilder::sign_as`]). [`EventBuilder::payload`] and
    /// [`EventBuilder::reference`] clear the mark.
    pub(crate) fn made_here(mut self) -> Self {
        self.made_here = true;
        self
    }

    /// Chooses the digest suite (blake3 by default).
    pub fn suite(mut self, suite: DigestSuite) -> Self {
        self.suite = suite;
        self
    }

    /// The id the event will have once signed: the digest of its preimage (the proof is
    /// not part of it). Lets a producer chain events before signing them, e.g. to sign a
    /// long chain in parallel.
    pub fn id(&self) -> EventId {
        EventId::of_preimage(self.suite, &self.envelope.preimage_bytes().0)
    }

    /// Signs and returns the event, read back through the strict ingress path so that
    /// nothing invalid can be authored (its id, the digest of the preimage just written, is
    /// not hashed again). An envelope the core's own author made whole is built from its
    /// parts instead, with the checks its types leave open.
    pub fn sign(self, key: &SigningKey) -> Result<Event<Unverified>, Rejection> {
        let method = verification_method(&key.verifying_key());
        self.sign_as(key, method)
    }

    /// [`EventBuilder::sign`] by a signer that worked out its key's verification `method`
    /// once ([`crate::proof`]).
    pub(crate) fn sign_as(
        self,
        key: &SigningKey,
        method: String,
    ) -> Result<Event<Unverified>, Rejection> {
        let unsigned = self.unsigned(method);
        let signature = ed25519_dalek::Signer::sign(key, unsigned.proof.signing_input());
        unsigned.signed(&signature.to_bytes())
    }

    /// The event's preimage, id and proof binding, waiting for the signature.
    fn unsigned(self, method: String) -> Unsigned {
        let (preimage, cuts) = self.envelope.preimage_bytes();
        let id = EventId::of_preimage(self.suite, &preimage);
        let proof = UnsignedProof::new(&self.envelope, &id.digest_text(), method);
        Unsigned {
            builder: self,
            preimage,
            cuts,
            id,
            proof,
        }
    }
    /// The event signed as `id` with `proof`, written as `bytes`, built from the parts of an
    /// envelope [made here](EventBuilder::made_here) rather than read back from `bytes`:
    /// what reading them would give (the read-back was a quarter of a signing thread's work
    /// besides the signature). What its members' types leave open is checked as the reader
    /// checks it: the size, the number of refs, and the payload against its kind. (Test
    /// builds read every such event back as well, and compare.)
    fn assemble(
        self,
        id: EventId,
        bytes: Vec<u8>,
        proof: ProducerProof,
    ) -> Result<Event<Unverified>, Rejection> {
        crate::canonical::check_size(&bytes)?;
        if !self.envelope.refs.is_empty() {
            crate::envelope::check_ref_count(self.envelope.refs.len())?;
        }
        let envelope = self.envelope;
        let body = Body::read(&envelope.kind, &envelope.scope, &envelope.payload)?;
        let inner = Inner {
            id,
            bytes: Kept::Own(bytes.into()),
            dependencies: edges(&envelope, &body, envelope.causal_refs()),
            envelope,
            proof,
            body,
            sealing: self.sealing.map(Box::new),
        };
        let event = Event {
            inner: Arc::new(inner),
            state: PhantomData,
        };
        #[cfg(any(debug_assertions, feature = "cross-check"))]
        same_as_read_back(&event);
        Ok(event)
    }

    /// [`EventBuilder::sign`], verified: the proof's binding, key and authorization checks
    /// (PROFILE §4) run against `verifier` as [`Event::verify`] runs them, and the signature
    /// equation, which holds for a signature made here and now with `key` over the bytes the
    /// proof names, is not solved again. For a producer that admits what it signs (the sidecar
    /// runtime): verifying its own fresh signature cost as much as making it.
    pub fn sign_verified(
        self,
        key: &SigningKey,
        verifier: &Verifier,
    ) -> Result<Event<Verified>, Rejection> {
        let method = verification_method(&key.verifying_key());
        self.sign_verified_as(key, method, verifier)
    }

    /// [`EventBuilder::sign_verified`] by a signer that worked out its key's verification
    /// `method` once.
    pub(crate) fn sign_verified_as(
        self,
        key: &SigningKey,
        method: String,
        verifier: &Verifier,
    ) -> Result<Event<Verified>, Rejection> {
        let event = self.sign_as(key, method)?;
        event.authorization_check(verifier)?;
        Ok(event.into_verified())
    }

    /// [`EventBuilder::sign_verified_as`] of many events by one key, signed together
    /// ([`crate::proof::sign_many`]: the same signatures, their nonce points encoded with one
    /// field inversion for all); the events in the builders' order.
    pub(crate) fn sign_verified_many_as(
        builders: Vec<EventBuilder>,
        key: &SigningKey,
        method: &str,
        verifier: &Verifier,
    ) -> Result<Vec<Event<Verified>>, Rejection> {
        let unsigned: Vec<Unsigned> = builders
            .into_iter()
            .map(|builder| builder.unsigned(method.to_owned()))
            .collect();
        let inputs: Vec<&[u8]> = unsigned.iter().map(|u| u.proof.signing_input()).collect();
        let signatures = sign_many(key, &inputs);
        unsigned
            .into_iter()
            .zip(&signatures)
            .map(|(unsigned, signature)| {
                debug_assert_eq!(
                    signature,
                    &ed25519_dalek::Signer::sign(key, unsigned.proof.signing_input()).to_bytes(),
                    "sign_many differs from ed25519-dalek"
                );
                let event = unsigned.signed(signature)?;
                event.authorization_check(verifier)?;
                Ok(event.into_verified())
            })
            .collect()
    }
}

/// An event built and digested, its proof waiting for the signature
/// ([`EventBuilder::sign_as`] and [`EventBuilder::sign_verified_many_as`] sign it).
struct Unsigned {
    builder: EventBuilder,
    /// The preimage, and where `event_id` and `producer_proof` go into it.
    preimage: Vec<u8>,
    cuts: [usize; 2],
    id: EventId,
    proof: UnsignedProof,
}

impl Unsigned {
    /// The event with `signature` (the Ed25519 signature of the proof's signing input), read
    /// back through the strict ingress path so that nothing invalid can be authored (its id,
    /// the digest of the preimage, is not hashed again); an envelope the core's own author
    /// made whole is built from its parts instead, with the checks its types leave open.
    fn signed(self, signature: &[u8; 64]) -> Result<Event<Unverified>, Rejection> {
        let Unsigned {
            builder,
            preimage,
            cuts: [after_created_at, after_payload],
            id,
            proof,
        } = self;
        let proof = proof.signed(signature);
        // The event: the preimage's members with `event_id` and `producer_proof` in their
        // sorted places.
        let mut bytes = Vec::with_capacity(preimage.len() + 512);
        let part = |range: std::ops::Range<usize>, bytes: &mut Vec<u8>| {
            bytes.extend_from_slice(preimage.get(range).unwrap_or_default());
        };
        part(0..after_created_at, &mut bytes);
        bytes.extend_from_slice(b",\"event_id\":");
        id.write_json(&mut bytes);
        part(after_created_at..after_payload, &mut bytes);
        bytes.extend_from_slice(b",\"producer_proof\":");
        proof.write_canonical(&mut bytes);
        part(after_payload..preimage.len(), &mut bytes);
        if builder.made_here {
            return builder.assemble(id, bytes, proof);
        }
        // The id is the digest of this very preimage, worked out above: read back, the bytes
        // are held to everything else (test builds recompute the ids the reader's
        // cross-check picks).
        let id_check = IdCheck::Derived;
        #[cfg(any(debug_assertions, feature = "cross-check"))]
        let id_check = match cross_checked(&id) {
            true => IdCheck::Recompute,
            false => id_check,
        };
        let mut event = Event::read(&bytes, || Kept::Own(bytes.as_slice().into()), id_check)?;
        // Read just now, so not shared yet.
        if let (Some(sealing), Some(inner)) = (builder.sealing, Arc::get_mut(&mut event.inner)) {
            inner.sealing = Some(Box::new(sealing));
        }
        Ok(event)
    }
}
