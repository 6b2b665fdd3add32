//! The encrypted envelope `E` (PROFILE §7): XChaCha20-Poly1305 with the AAD rebuilt from the
//! signed outer event.
//!
//! Pure: the nonce is an argument (authors draw it; this module never touches randomness).
//! Opening fails with one coarse [`OpenError`], whatever went wrong, so failures give an
//! attacker no oracle.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::canonical::{write_canonical, write_string, Json, Object};
use crate::did::{only_keys, ActorId};
use crate::envelope::ScopeRef;
use crate::error::{schema, Rejection};
use crate::exchange::plaintext::SealedMessage;
use crate::limits::MAX_SAFE_INTEGER;

/// Content type of message plaintexts.
pub const MESSAGE_CONTENT_TYPE: &str = "application/vnd.arkret.message+json";
/// Content type of exchange-control plaintexts.
pub const CONTROL_CONTENT_TYPE: &str = "application/vnd.arkret.agent-sidecar-exchange-control+json";
/// The only envelope version.
pub const ENVELOPE_VERSION: &str = "1.0";
/// Nonce length of XChaCha20-Poly1305.
pub const NONCE_LEN: usize = 24;
/// Tag length of Poly1305.
pub const TAG_LEN: usize = 16;

/// A 32-byte sidecar key: zeroized on drop, never printed.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct SidecarKey([u8; 32]);

impl SidecarKey {
    /// Wraps key bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        SidecarKey(bytes)
    }

    /// A fresh random key drawn from `rng` (the caller supplies the randomness, e.g.
    /// `rand_core::OsRng`; the core draws none itself).
    pub fn generate<R: rand_core::RngCore + rand_core::CryptoRng>(rng: &mut R) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill_bytes(&mut bytes);
        SidecarKey(bytes)
    }

    /// The key bytes (for writing a keyring file).
    pub fn expose(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for SidecarKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SidecarKey(<secret>)")
    }
}

/// The wire envelope `E`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct EncryptedEnvelope {
    /// The plaintext's content type.
    pub content_type: String,
    /// The key epoch.
    pub epoch: u64,
    /// The group state the key belongs to (opaque here).
    pub group_state_ref: String,
    /// `nonce ‖ ciphertext ‖ tag`.
    pub sealed: Vec<u8>,
}

/// What the author of a sealed payload knew as it sealed it: the key and epoch, the sealed
/// bytes, and the plaintext. An event signed in this process carries it (it is never
/// written, and nothing read from bytes has it), so that admitting the event does not
/// decrypt what was just encrypted: [`Sealing::plaintext_of`] hands the plaintext only to a
/// reader holding the same key for the same epoch, and only for the very sealed bytes it
/// was made with, which is when decrypting would give it.
#[derive(Clone)]
pub(crate) struct Sealing {
    key: SidecarKey,
    epoch: u64,
    /// `nonce ‖ ciphertext ‖ tag`, as sealed.
    sealed: Vec<u8>,
    plaintext: Vec<u8>,
    /// For a message plaintext without a `pncp` member, what the fold reads of it.
    message: Option<SealedMessage>,
}

impl Sealing {
    /// What `sealed` was made of: `plaintext` under `key` (keeping its sealed bytes).
    pub(crate) fn of(sealed: EncryptedEnvelope, key: &SidecarKey, plaintext: Vec<u8>) -> Self {
        Sealing {
            key: key.clone(),
            epoch: sealed.epoch,
            sealed: sealed.sealed,
            plaintext,
            message: None,
        }
    }

    /// Notes what the fold reads of the message plaintext sealed: `message`.
    pub(crate) fn message(mut self, message: Option<SealedMessage>) -> Self {
        self.message = message;
        self
    }

    /// The plaintext of `sealed`, opened with `key`, when this is what `sealed` was made
    /// of with that key; `None` says: decrypt it.
    pub(crate) fn plaintext_of(
        &self,
        sealed: &EncryptedEnvelope,
        key: &SidecarKey,
    ) -> Option<&[u8]> {
        let same = self.epoch == sealed.epoch && self.key == *key && self.sealed == sealed.sealed;
        same.then_some(self.plaintext.as_slice())
    }

    /// [`Sealing::plaintext_of`], with what the fold reads of it when it is a message
    /// plaintext noted as such ([`Sealing::message`]).
    pub(crate) fn message_of(
        &self,
        sealed: &EncryptedEnvelope,
        key: &SidecarKey,
    ) -> Option<(&[u8], &SealedMessage)> {
        let message = self.message.as_ref()?;
        Some((self.plaintext_of(sealed, key)?, message))
    }
}

impl std::fmt::Debug for Sealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealing(<secret>)")
    }
}

/// Decryption failed: wrong key, missing key, tampered bytes or AAD from elsewhere. Coarse
/// on purpose.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct OpenError;

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not decryptable")
    }
}

impl std::error::Error for OpenError {}

/// What the AAD binds: the signed outer event's scope, kind and sender.
#[derive(Copy, Clone, Debug)]
pub struct AadContext<'a> {
    /// The outer event's `scope_ref`.
    pub scope: &'a ScopeRef,
    /// The outer event's `kind`.
    pub event_kind: &'a str,
    /// The outer event's `actor_id`.
    pub sender: &'a ActorId,
}

impl EncryptedEnvelope {
    /// Reads the closed wire form.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("encrypted_payload must be an object"))?;
        only_keys(
            obj,
            &[
                "ciphertext",
                "content_type",
                "encryption_context",
                "version",
            ],
            "encrypted_payload",
        )?;
        if obj.get("version").and_then(Json::as_str) != Some(ENVELOPE_VERSION) {
            return Err(schema("encrypted_payload.version must be \"1.0\""));
        }
        let content_type = obj
            .get("content_type")
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| schema("encrypted_payload.content_type must be a string"))?;
        let ctx = obj
            .get("encryption_context")
            .and_then(Json::as_object)
            .ok_or_else(|| schema("encryption_context must be an object"))?;
        only_keys(ctx, &["epoch", "group_state_ref"], "encryption_context")?;
        let epoch = ctx
            .get("epoch")
            .and_then(Json::as_i64)
            .and_then(|e| u64::try_from(e).ok())
            .ok_or_else(|| schema("encryption_context.epoch must be a non-negative integer"))?;
        let group_state_ref = ctx
            .get("group_state_ref")
            .and_then(Json::as_str)
            .ok_or_else(|| schema("encryption_context.group_state_ref must be a string"))?;
        let text = obj
            .get("ciphertext")
            .and_then(Json::as_str)
            .ok_or_else(|| schema("ciphertext must be a string"))?;
        let sealed = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| schema("ciphertext is not unpadded base64url"))?;
        if sealed.len() < NONCE_LEN + TAG_LEN {
            return Err(schema("ciphertext shorter than nonce and tag"));
        }
        Ok(EncryptedEnvelope {
            content_type: content_type.to_owned(),
            epoch,
            group_state_ref: group_state_ref.to_owned(),
            sealed,
        })
    }

    /// The closed wire form.
    pub fn to_json(&self) -> Json {
        Object::new()
            .with("ciphertext", URL_SAFE_NO_PAD.encode(&self.sealed).into())
            .with("content_type", self.content_type.as_str().into())
            .with(
                "encryption_context",
                Object::new()
                    .with("epoch", epoch_json(self.epoch))
                    .with("group_state_ref", self.group_state_ref.as_str().into())
                    .into(),
            )
            .with("version", ENVELOPE_VERSION.into())
            .into()
    }

    /// The AAD bytes: canonical JSON of the never-sent header of PROFILE §7.
    pub fn aad(&self, ctx: &AadContext<'_>) -> Vec<u8> {
        aad_bytes(&self.content_type, self.epoch, &self.group_state_ref, ctx)
    }

    /// Seals `plaintext` under `key` with the caller's `nonce`.
    pub fn seal(
        key: &SidecarKey,
        nonce: [u8; NONCE_LEN],
        content_type: &str,
        epoch: u64,
        group_state_ref: &str,
        ctx: &AadContext<'_>,
        plaintext: &[u8],
    ) -> Self {
        let aad = aad_bytes(content_type, epoch, group_state_ref, ctx);
        let cipher = XChaCha20Poly1305::new((&key.0).into());
        // Encryption with a 24-byte nonce cannot fail for inputs below 256 GiB.
        let body = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .unwrap_or_default();
        let mut sealed = Vec::with_capacity(NONCE_LEN + body.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&body);
        EncryptedEnvelope {
            content_type: content_type.to_owned(),
            epoch,
            group_state_ref: group_state_ref.to_owned(),
            sealed,
        }
    }

    /// Opens the envelope; any failure is the one coarse [`OpenError`].
    pub fn open(&self, key: &SidecarKey, ctx: &AadContext<'_>) -> Result<Vec<u8>, OpenError> {
        let (nonce, body) = self.sealed.split_at_checked(NONCE_LEN).ok_or(OpenError)?;
        let cipher = XChaCha20Poly1305::new((&key.0).into());
        cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: &self.aad(ctx),
                },
            )
            .map_err(|_| OpenError)
    }
}

fn epoch_json(epoch: u64) -> Json {
    Json::Int(
        i64::try_from(epoch)
            .unwrap_or(MAX_SAFE_INTEGER)
            .min(MAX_SAFE_INTEGER),
    )
}

/// The AAD header of PROFILE §7, written in canonical form directly: its members are
/// fixed, so they are written in their canonical (sorted) order without building and
/// sorting a value tree first. Every seal and every open writes one.
fn aad_bytes(
    content_type: &str,
    epoch: u64,
    group_state_ref: &str,
    ctx: &AadContext<'_>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(AAD_CAPACITY);
    out.extend_from_slice(b"{\"content_type\":");
    write_string(content_type, &mut out);
    out.extend_from_slice(b",\"effective_scope\":");
    ctx.scope.write_canonical(&mut out);
    out.extend_from_slice(b",\"envelope_version\":");
    write_string(ENVELOPE_VERSION, &mut out);
    out.extend_from_slice(b",\"epoch\":");
    write_canonical(&epoch_json(epoch), &mut out);
    out.extend_from_slice(b",\"event_kind\":");
    write_string(ctx.event_kind, &mut out);
    out.extend_from_slice(b",\"group_state_ref\":");
    write_string(group_state_ref, &mut out);
    out.extend_from_slice(
        b",\"purpose\":\"arkret_event_content\",\"scheme\":\"xchacha20poly1305_v1\",\"sender_actor_id\":",
    );
    ctx.sender.write_canonical(&mut out);
    out.push(b'}');
    out
}

/// Room for a typical AAD header (sidecar scope, service sender): one allocation.
const AAD_CAPACITY: usize = 512;
