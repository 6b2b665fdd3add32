//! What a runtime is configured with: its own address, the sidecar, the identities it
//! holds keys for (the controller, whose key the decision maker signs with, and any agents
//! whose replies it authors), the address book mapping other envelope addresses to
//! did_core_ids, and the decision maker's policy.

use std::collections::BTreeMap;

use akledger::ed25519_dalek::SigningKey;

use super::policy::Policy;
use akledger::did::DidCoreId;
use akledger::id::SidecarId;

/// An envelope address the runtime signs for.
#[derive(Clone, Debug)]
pub struct Identity {
    /// The envelope address.
    pub address: String,
    /// The signing key (redacted in `Debug`).
    pub key: SigningKey,
}

impl Identity {
    /// The principal the key signs as.
    pub fn did(&self) -> DidCoreId {
        DidCoreId::for_key(&self.key.verifying_key())
    }
}

/// A runtime's configuration.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// The runtime's own envelope address (the `sender` of what it reports).
    pub address: String,
    /// The sidecar whose events the runtime writes.
    pub sidecar: SidecarId,
    /// The sidecar key epoch to seal with.
    pub epoch: u64,
    /// The sidecar's controller: authors the inbox and outbox events, requests and the
    /// decision maker's controls.
    pub controller: Identity,
    /// Agents whose replies the runtime authors as exchange responses.
    pub agents: Vec<Identity>,
    /// Other addresses (agents the runtime does not sign for) and their principals.
    pub address_book: BTreeMap<String, DidCoreId>,
    /// The decision maker's policy.
    pub policy: Policy,
}

impl RuntimeConfig {
    /// A configuration with just the controller, no agents, an empty address book and the
    /// default policy; the runtime's address is `sidecar`.
    pub fn new(sidecar: SidecarId, controller: Identity) -> Self {
        RuntimeConfig {
            address: "sidecar".to_string(),
            sidecar,
            epoch: 1,
            controller,
            agents: Vec::new(),
            address_book: BTreeMap::new(),
            policy: Policy::default(),
        }
    }

    /// The principal behind an envelope address: an identity's, else the address book's.
    pub fn principal(&self, address: &str) -> Option<DidCoreId> {
        if self.controller.address == address {
            return Some(self.controller.did());
        }
        self.agents
            .iter()
            .find(|a| a.address == address)
            .map(Identity::did)
            .or_else(|| self.address_book.get(address).cloned())
    }

    /// The envelope address of a principal (an identity's or the address book's).
    pub fn address_of(&self, principal: &DidCoreId) -> Option<String> {
        std::iter::once(&self.controller)
            .chain(&self.agents)
            .find(|i| i.did() == *principal)
            .map(|i| i.address.clone())
            .or_else(|| {
                self.address_book
                    .iter()
                    .find(|(_, d)| *d == principal)
                    .map(|(a, _)| a.clone())
            })
    }

    /// The agent identity for `address`.
    pub fn agent(&self, address: &str) -> Option<&Identity> {
        self.agents.iter().find(|a| a.address == address)
    }
}
