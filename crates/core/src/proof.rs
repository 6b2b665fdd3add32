//! Producer proofs (PROFILE §4): Ed25519 detached JWS over the proof binding.
//!
//! Signing and verification are pure. [`Verifier`] holds the keyring and a bounded cache of
//! decompressed public keys (decompression costs about a sixth of a verification).
//!
//! Signature validity is the ZIP-215 rule (PROFILE v1.1 §4), checked with `ed25519-zebra`:
//! `S` canonical, `A` and `R` any decodable encoding, the cofactored equation. It accepts
//! exactly the same signatures alone ([`SignatureCheck::verify`]) and in a batch
//! ([`verify_batch`]), so batching is an optimisation that can never change an answer.
//! Keys and signing stay with `ed25519-dalek`; many signatures by one key (a producer's
//! signing threads) are made together (`sign_many`), the same bytes for less.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use ed25519_zebra::batch;
use rand_core::{CryptoRng, RngCore};

use crate::canonical::write_string;
use crate::did::{key_of_did_key, verification_method, ActorId, DidCoreId};
use crate::envelope::{Envelope, ProducerProof};
use crate::error::{Code, Rejection};
use crate::keyring::Keyring;
use crate::limits::MAX_KEY_CACHE;
use crate::time::TIMESTAMP_LEN;

mod sign_many;
pub(crate) use sign_many::sign_many;

/// base64url of the canonical protected header `{"alg":"Ed25519"}`.
pub const JWS_HEADER_B64: &str = "eyJhbGciOiJFZDI1NTE5In0";

/// The bytes a producer signs: canonical JSON of the proof binding.
pub fn binding_bytes(
    event_digest: &str,
    actor: &ActorId,
    method: &str,
    created_at: &str,
) -> Vec<u8> {
    // Written directly (no value tree), members in canonical key order: actor_id, context,
    // created_at, event_digest, verification_method. A test holds it to `to_canonical` of
    // the same object.
    let mut out = Vec::with_capacity(160 + event_digest.len() + 2 * method.len());
    out.extend_from_slice(b"{\"actor_id\":");
    actor.write_canonical(&mut out);
    out.extend_from_slice(b",\"context\":\"ak.event_proof.v1\",\"created_at\":");
    write_string(created_at, &mut out);
    out.extend_from_slice(b",\"event_digest\":");
    write_string(event_digest, &mut out);
    out.extend_from_slice(b",\"verification_method\":");
    write_string(method, &mut out);
    out.push(b'}');
    out
}

/// The JWS signing input `b64url(header) "." b64url(binding)`.
pub fn signing_input(binding: &[u8]) -> Vec<u8> {
    let mut input = String::with_capacity(JWS_HEADER_B64.len() + 1 + binding.len().div_ceil(3) * 4);
    input.push_str(JWS_HEADER_B64);
    input.push('.');
    URL_SAFE_NO_PAD.encode_string(binding, &mut input);
    input.into_bytes()
}

/// Signs `envelope` (whose preimage digests to `event_digest`) with `key`.
pub fn sign(envelope: &Envelope, event_digest: &str, key: &SigningKey) -> ProducerProof {
    sign_as(
        envelope,
        event_digest,
        key,
        verification_method(&key.verifying_key()),
    )
}

/// [`sign`] by a signer that worked out its key's verification `method` once (a base58
/// encoding: a producer of many events names it in every proof).
pub(crate) fn sign_as(
    envelope: &Envelope,
    event_digest: &str,
    key: &SigningKey,
    method: String,
) -> ProducerProof {
    let unsigned = UnsignedProof::new(envelope, event_digest, method);
    let signature = key.sign(unsigned.signing_input()).to_bytes();
    unsigned.signed(&signature)
}

/// A producer proof waiting for its signature: the JWS signing input its binding makes.
pub(crate) struct UnsignedProof {
    method: String,
    event_digest: String,
    created_at: crate::time::Timestamp,
    input: Vec<u8>,
}

impl UnsignedProof {
    /// The proof of `envelope` (whose preimage digests to `event_digest`) by the key of
    /// verification `method`.
    pub(crate) fn new(envelope: &Envelope, event_digest: &str, method: String) -> Self {
        let created_at = envelope.created_at.to_string();
        let binding = binding_bytes(event_digest, &envelope.actor, &method, &created_at);
        UnsignedProof {
            input: signing_input(&binding),
            method,
            event_digest: event_digest.to_owned(),
            created_at: envelope.created_at,
        }
    }

    /// The bytes the key signs.
    pub(crate) fn signing_input(&self) -> &[u8] {
        &self.input
    }

    /// The proof with `signature` (the key's Ed25519 signature of the signing input).
    pub(crate) fn signed(self, signature: &[u8; 64]) -> ProducerProof {
        ProducerProof {
            verification_method: self.method,
            event_digest: self.event_digest,
            created_at: self.created_at,
            jws: format!("{JWS_HEADER_B64}..{}", URL_SAFE_NO_PAD.encode(signature)),
        }
    }
}

fn invalid(why: &str) -> Rejection {
    Rejection::new(Code::SignatureInvalid, format!("producer proof: {why}"))
}

/// A verification method's key and the self-certifying principal it stands for.
#[derive(Clone, Debug)]
struct Resolved {
    key: VerifyingKey,
    principal: DidCoreId,
}

/// Verifies producer proofs against a keyring.
#[derive(Debug, Default)]
pub struct Verifier {
    /// Replaced whole (copy on write) when keys are added to a live ledger, so a check
    /// holds the lock only to clone the `Arc`.
    keyring: RwLock<Arc<Keyring>>,
    keys: RwLock<HashMap<String, Arc<Resolved>>>,
}

impl Verifier {
    /// A verifier that authorizes self-certifying keys and those in `keyring`.
    pub fn new(keyring: Keyring) -> Self {
        Verifier {
            keyring: RwLock::new(Arc::new(keyring)),
            keys: RwLock::default(),
        }
    }

    /// The keyring as it is now (a snapshot: keys added later are not in it).
    pub fn keyring(&self) -> Arc<Keyring> {
        let guard = self
            .keyring
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(&guard)
    }

    /// Changes the keyring for every check from now on; returns what `change` returns.
    pub fn update_keyring<T>(&self, change: impl FnOnce(&mut Keyring) -> T) -> T {
        let mut guard = self
            .keyring
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(Arc::make_mut(&mut guard))
    }

    /// The key named by a verification method (and its `ak:did_core:key:` principal),
    /// decompressed and encoded once and cached.
    fn key(&self, method: &str) -> Result<Arc<Resolved>, Rejection> {
        if let Some(known) = self.keys.read().ok().and_then(|m| m.get(method).cloned()) {
            return Ok(known);
        }
        let (_, fragment) = method
            .split_once('#')
            .ok_or_else(|| invalid("verification_method needs #<key>"))?;
        if fragment.is_empty() {
            return Err(invalid("verification_method needs #<key>"));
        }
        let key =
            key_of_did_key(method).map_err(|_| invalid("verification_method is not a did:key"))?;
        let resolved = Arc::new(Resolved {
            key,
            principal: DidCoreId::for_key(&key),
        });
        if let Ok(mut cache) = self.keys.write() {
            if cache.len() < MAX_KEY_CACHE {
                cache.insert(method.to_owned(), Arc::clone(&resolved));
            }
        }
        Ok(resolved)
    }

    /// Checks `proof` for `envelope` whose preimage digests to `event_digest`.
    pub fn verify(
        &self,
        envelope: &Envelope,
        event_digest: &str,
        proof: &ProducerProof,
    ) -> Result<(), Rejection> {
        self.prepare(envelope, event_digest, proof)?.verify()
    }

    /// Every check of `proof` except the signature equation: binding, key resolution and
    /// authorization (§4). The returned [`SignatureCheck`] is verified alone or in a batch.
    pub fn prepare(
        &self,
        envelope: &Envelope,
        event_digest: &str,
        proof: &ProducerProof,
    ) -> Result<SignatureCheck, Rejection> {
        let (key, sig) = self.authorize(envelope, event_digest, proof)?;
        let binding = binding_bytes(
            event_digest,
            &envelope.actor,
            &proof.verification_method,
            envelope.created_at.text_in(&mut [0; TIMESTAMP_LEN]),
        );
        Ok(SignatureCheck::new(key, sig, &signing_input(&binding)))
    }

    /// [`Verifier::prepare`] short of the signature's challenge: binding, key resolution,
    /// authorization and the signature's encoding; the key and signature bytes. For proofs
    /// whose equation is known to hold (a signature made here, an event verified before).
    pub fn authorize(
        &self,
        envelope: &Envelope,
        event_digest: &str,
        proof: &ProducerProof,
    ) -> Result<([u8; 32], [u8; 64]), Rejection> {
        if proof.created_at != envelope.created_at {
            return Err(invalid("created_at differs from the envelope's"));
        }
        if proof.event_digest != event_digest {
            return Err(invalid("event_digest is not the digest of this event"));
        }
        let resolved = self.key(&proof.verification_method)?;
        let (key, own) = (resolved.key, &resolved.principal);
        let principal = envelope.actor.principal();
        // A self-certifying principal is bound to its own key; only other principals may be
        // widened by the keyring (PROFILE §4).
        if principal != own
            && (principal.is_self_certifying() || !self.keyring().authorizes(principal, &key))
        {
            return Err(invalid("key is not authorized for the actor"));
        }
        let sig_b64 = proof
            .jws
            .strip_prefix(JWS_HEADER_B64)
            .and_then(|rest| rest.strip_prefix(".."))
            .ok_or_else(|| invalid("jws must be <{\"alg\":\"Ed25519\"}>..<signature>"))?;
        // Decoded on the stack: room for the 64 bytes, and for the decoder's estimate of
        // the longest text that can still be 64 bytes.
        let mut sig = [0u8; 66];
        let sig: [u8; 64] = URL_SAFE_NO_PAD
            .decode_slice(sig_b64, &mut sig)
            .ok()
            .filter(|&len| len == 64)
            .and_then(|_| sig.get(..64)?.try_into().ok())
            .ok_or_else(|| invalid("jws signature must be 64 bytes of base64url"))?;
        Ok((key.to_bytes(), sig))
    }
}

/// One Ed25519 signature over a message, waiting for the ZIP-215 equation. It holds the key
/// bytes, the signature and the message's challenge scalar, not the message.
#[derive(Clone, Debug)]
pub struct SignatureCheck(batch::Item);

impl SignatureCheck {
    /// A check of `signature` by the key encoded as `key` over `message`.
    pub fn new(key: [u8; 32], signature: [u8; 64], message: &[u8]) -> Self {
        let signature = ed25519_zebra::Signature::from_bytes(&signature);
        SignatureCheck(batch::Item::from((key.into(), signature, message)))
    }

    /// Verifies this signature alone (ZIP-215).
    pub fn verify(self) -> Result<(), Rejection> {
        self.0
            .verify_single()
            .map_err(|_| invalid("signature does not verify"))
    }
}

/// Verifies `checks` (ZIP-215) as one batch, and when the batch fails, each one alone to find
/// the culprits; the answers, in order, are those single verification gives. `rng` draws the
/// batch's random coefficients: it must be unpredictable to whoever chose the signatures.
pub fn verify_batch<R: RngCore + CryptoRng>(
    checks: &[SignatureCheck],
    rng: R,
) -> Vec<Result<(), Rejection>> {
    let mut batch = batch::Verifier::new();
    for check in checks {
        batch.queue(check.0.clone());
    }
    if checks.is_empty() || batch.verify(rng).is_ok() {
        return checks.iter().map(|_| Ok(())).collect();
    }
    checks.iter().cloned().map(SignatureCheck::verify).collect()
}
