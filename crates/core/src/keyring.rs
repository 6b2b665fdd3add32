//! The user's key material (PROFILE §11): which keys may sign for which principals, and the
//! sidecar keys for the encrypted envelopes.
//!
//! The keyring is configuration, read from one JSON file by the shell and handed to the pure
//! core. It never prints key bytes (`Debug` shows counts only).

use std::collections::{BTreeMap, HashMap};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::VerifyingKey;

use crate::canonical::{parse_value, to_canonical, Json, Object};
use crate::did::{did_key, key_of_did_key, DidCoreId};
use crate::encrypted::SidecarKey;
use crate::error::{schema, Code, Rejection};
use crate::id::SidecarId;
use crate::limits::MAX_KEYRING_BYTES;

/// Keys authorized per principal, and sidecar keys per (sidecar, epoch).
#[derive(Clone, Default)]
pub struct Keyring {
    principals: HashMap<DidCoreId, Vec<VerifyingKey>>,
    sidecar_keys: HashMap<SidecarId, BTreeMap<u64, SidecarKey>>,
}

/// What [`Keyring::merge`] added: keys the merged-into keyring lacked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// Keys newly authorized for a principal.
    pub authorizations: usize,
    /// The (sidecar, epoch) pairs that had no key, in canonical order.
    pub sidecar_keys: Vec<(SidecarId, u64)>,
}

impl Added {
    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.authorizations == 0 && self.sidecar_keys.is_empty()
    }
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("principals", &self.principals.len())
            .field("sidecar_keys", &self.sidecar_keys.len())
            .finish()
    }
}

impl Keyring {
    /// An empty keyring: only self-certifying `key` principals verify, nothing decrypts.
    pub fn new() -> Self {
        Keyring::default()
    }

    /// Authorizes `key` to sign for `principal`. A self-certifying (`ak:did_core:key:`)
    /// principal is refused with `schema_violation`: only its own key signs for it, and no
    /// configuration widens it (PROFILE §4, §11).
    pub fn authorize(&mut self, principal: DidCoreId, key: VerifyingKey) -> Result<(), Rejection> {
        widenable(&principal)?;
        let keys = self.principals.entry(principal).or_default();
        if !keys.contains(&key) {
            keys.push(key);
        }
        Ok(())
    }

    /// True when `key` may sign for `principal` by this keyring's configuration.
    pub fn authorizes(&self, principal: &DidCoreId, key: &VerifyingKey) -> bool {
        self.principals
            .get(principal)
            .is_some_and(|keys| keys.contains(key))
    }

    /// Adds (or replaces) the key of `sidecar` at `epoch`.
    pub fn add_sidecar_key(&mut self, sidecar: SidecarId, epoch: u64, key: SidecarKey) {
        self.sidecar_keys
            .entry(sidecar)
            .or_default()
            .insert(epoch, key);
    }

    /// Adds every key of `other` (its sidecar keys replace this keyring's at the same
    /// sidecar and epoch), and says what this keyring lacked.
    pub fn merge(&mut self, other: Keyring) -> Added {
        let mut added = Added::default();
        // `other`'s principals passed its own `authorize`, so they need no second check.
        for (principal, keys) in other.principals {
            let mine = self.principals.entry(principal).or_default();
            for key in keys {
                if !mine.contains(&key) {
                    mine.push(key);
                    added.authorizations += 1;
                }
            }
        }
        for (sidecar, epochs) in other.sidecar_keys {
            for (epoch, key) in epochs {
                if self.sidecar_key(&sidecar, epoch).is_none() {
                    added.sidecar_keys.push((sidecar, epoch));
                }
                self.add_sidecar_key(sidecar, epoch, key);
            }
        }
        added.sidecar_keys.sort_unstable();
        added
    }

    /// True when it holds a sidecar key: a secret, so the file it lives in must be private.
    pub fn holds_secrets(&self) -> bool {
        self.sidecar_keys.values().any(|epochs| !epochs.is_empty())
    }

    /// The key of `sidecar` at `epoch`.
    pub fn sidecar_key(&self, sidecar: &SidecarId, epoch: u64) -> Option<&SidecarKey> {
        self.sidecar_keys
            .get(sidecar)
            .and_then(|by_epoch| by_epoch.get(&epoch))
    }

    /// The principals with their authorized keys as `did:key`s (public keys, no secret),
    /// in canonical order.
    pub fn principals(&self) -> Vec<(DidCoreId, Vec<String>)> {
        let mut list: Vec<(DidCoreId, Vec<String>)> = self
            .principals
            .iter()
            .map(|(p, keys)| (p.clone(), keys.iter().map(did_key).collect()))
            .collect();
        list.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        list
    }

    /// The sidecars this keyring can decrypt, each with the epochs it holds a key for (never
    /// the keys), in canonical order.
    pub fn sidecar_epochs(&self) -> Vec<(SidecarId, Vec<u64>)> {
        let mut list: Vec<(SidecarId, Vec<u64>)> = self
            .sidecar_keys
            .iter()
            .map(|(s, by_epoch)| (*s, by_epoch.keys().copied().collect()))
            .collect();
        list.sort_by_key(|a| a.0);
        list
    }

    /// Reads the keyring file's bytes. Unknown members, malformed ids or keys are errors.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self, Rejection> {
        if bytes.len() > MAX_KEYRING_BYTES {
            return Err(Rejection::new(
                Code::PayloadTooLarge,
                format!("keyring is {} bytes, over {MAX_KEYRING_BYTES}", bytes.len()),
            ));
        }
        let value = parse_value(bytes)?;
        let obj = value
            .as_object()
            .ok_or_else(|| schema("keyring must be a JSON object"))?;
        if let Some(extra) = obj
            .keys()
            .find(|k| !matches!(*k, "principals" | "sidecar_keys"))
        {
            return Err(schema(format!("keyring: unknown member {extra:?}")));
        }
        let mut ring = Keyring::new();
        if let Some(p) = obj.get("principals") {
            let p = p
                .as_object()
                .ok_or_else(|| schema("keyring.principals must be an object"))?;
            for (principal, keys) in p.iter() {
                let principal = DidCoreId::parse(principal)?;
                // Refused even with no keys listed: the entry itself is the mistake.
                widenable(&principal)?;
                let keys = keys
                    .as_array()
                    .ok_or_else(|| schema("keyring.principals values must be arrays of did:key"))?;
                for key in keys {
                    let text = key
                        .as_str()
                        .ok_or_else(|| schema("keyring: did:key must be a string"))?;
                    ring.authorize(principal.clone(), key_of_did_key(text)?)?;
                }
            }
        }
        if let Some(s) = obj.get("sidecar_keys") {
            let s = s
                .as_object()
                .ok_or_else(|| schema("keyring.sidecar_keys must be an object"))?;
            for (sidecar, epochs) in s.iter() {
                let sidecar = SidecarId::parse(sidecar)?;
                let epochs = epochs
                    .as_object()
                    .ok_or_else(|| schema("keyring.sidecar_keys values must be objects"))?;
                for (epoch, key) in epochs.iter() {
                    let epoch_ok = !epoch.is_empty()
                        && epoch.bytes().all(|b| b.is_ascii_digit())
                        && (epoch == "0" || !epoch.starts_with('0'));
                    let epoch =
                        epoch
                            .parse::<u64>()
                            .ok()
                            .filter(|_| epoch_ok)
                            .ok_or_else(|| {
                                schema(format!("keyring: epoch {epoch:?} is not a decimal"))
                            })?;
                    let bytes = key
                        .as_str()
                        .and_then(|k| URL_SAFE_NO_PAD.decode(k).ok())
                        .and_then(|k| <[u8; 32]>::try_from(k).ok())
                        .ok_or_else(|| {
                            schema("keyring: sidecar key must be 32 bytes of base64url")
                        })?;
                    ring.add_sidecar_key(sidecar, epoch, SidecarKey::from_bytes(bytes));
                }
            }
        }
        Ok(ring)
    }

    /// The keyring file's bytes (canonical JSON, so files are stable under rewrites).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut principals = Object::new();
        for (principal, keys) in &self.principals {
            principals.insert(
                principal.as_str(),
                Json::Array(keys.iter().map(|k| did_key(k).into()).collect()),
            );
        }
        let mut sidecars = Object::new();
        for (sidecar, epochs) in &self.sidecar_keys {
            let mut by_epoch = Object::new();
            for (epoch, key) in epochs {
                by_epoch.insert(
                    epoch.to_string(),
                    URL_SAFE_NO_PAD.encode(key.expose()).into(),
                );
            }
            sidecars.insert(sidecar.to_string(), by_epoch.into());
        }
        let doc = Object::new()
            .with("principals", principals.into())
            .with("sidecar_keys", sidecars.into());
        to_canonical(&doc.into())
    }
}

/// Refuses a self-certifying principal as a keyring entry (PROFILE §11).
fn widenable(principal: &DidCoreId) -> Result<(), Rejection> {
    if principal.is_self_certifying() {
        return Err(schema(format!(
            "keyring: principals entry {principal} refused: a key principal is self-certifying, only its own key signs for it (PROFILE §11)"
        )));
    }
    Ok(())
}
