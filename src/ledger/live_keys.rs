//! Keys added to a live ledger: a sidecar key (the sidecar's exchanges are refolded with
//! it) or a key authorized for a principal (later events verify with it). With a
//! [`Config::keyring_file`](super::Config::keyring_file) the file is rewritten first, so
//! a key the ledger uses is never lost by a restart.

use ed25519_dalek::VerifyingKey;

use crate::did::DidCoreId;
use crate::encrypted::SidecarKey;
use crate::error::{Error, Rejection};
use crate::id::SidecarId;
use crate::keyring::{Added, Keyring};

use super::{keyring_file, Ledger};

impl Ledger {
    /// Adds (or replaces) the key of `sidecar` at `epoch` and refolds that sidecar's
    /// exchanges, so events that did not decrypt before fold now; exchange watchers see the
    /// projections that change. The sidecar need not exist yet (keys may come first).
    ///
    /// ```
    /// use akledger::workload::{sidecar_workload, SidecarSpec};
    /// use akledger::{Config, Ledger};
    ///
    /// let w = sidecar_workload(7, SidecarSpec { exchanges: 3, agents: 2, forgeries: false, skills: false })?;
    /// let dir = tempfile::tempdir()?;
    /// let config = || Config::new(dir.path()).keyring_file(dir.path().join("keyring.json"));
    /// let ledger = Ledger::open_with(config())?;
    /// let events: Vec<&[u8]> = w.events.iter().map(|e| e.bytes()).collect();
    /// ledger.append_batch(&events)?;
    /// // The sidecar's events are there, but without its key none decrypts.
    /// assert!(ledger.exchanges(&w.sidecar)?.nothing_decrypted());
    ///
    /// let key = w.keyring.sidecar_key(&w.sidecar, 1).cloned().ok_or("no key")?;
    /// ledger.add_sidecar_key(w.sidecar, 1, key)?;
    /// assert_eq!(ledger.exchanges(&w.sidecar)?.projections.len(), 3);
    ///
    /// // The key was saved to the keyring file: a restart folds the same.
    /// drop(ledger);
    /// let ledger = Ledger::open_with(config())?;
    /// assert_eq!(ledger.exchanges(&w.sidecar)?.projections.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_sidecar_key(
        &self,
        sidecar: SidecarId,
        epoch: u64,
        key: SidecarKey,
    ) -> Result<(), Error> {
        self.save_keys(|k| {
            k.add_sidecar_key(sidecar, epoch, key.clone());
            Ok(())
        })?;
        self.verifier
            .update_keyring(|k| k.add_sidecar_key(sidecar, epoch, key));
        self.refold_sidecar(&sidecar)
    }

    /// Authorizes `key` to sign for `principal` from now on. Nothing stored changes: an
    /// event signed by the key was refused before, so it is not in the ledger; send it
    /// again. A self-certifying `ak:did_core:key:` principal is refused (only its own key
    /// signs for it, PROFILE §11) with `schema_violation`, and nothing is written.
    pub fn authorize(&self, principal: DidCoreId, key: VerifyingKey) -> Result<(), Error> {
        self.save_keys(|k| k.authorize(principal.clone(), key))?;
        Ok(self
            .verifier
            .update_keyring(|k| k.authorize(principal, key))?)
    }

    /// Reads the keyring file at `path` (a long-running server's keyring, changed by `keys
    /// add` beside it) and adds what it holds that this ledger lacks: authorizations count
    /// from now on, and each sidecar given a key it lacked is refolded. Keys are only added,
    /// never dropped. Returns what was new. A file that cannot be read changes nothing
    /// ([`Error`] says why); a missing one holds nothing.
    pub fn merge_keyring_file(&self, path: &std::path::Path) -> Result<Added, Error> {
        let stored = keyring_file::load_or_new(path)?;
        let added = self.verifier.update_keyring(|k| k.merge(stored));
        let mut sidecars: Vec<SidecarId> = added.sidecar_keys.iter().map(|(s, _)| *s).collect();
        sidecars.dedup();
        for sidecar in &sidecars {
            self.refold_sidecar(sidecar)?;
        }
        Ok(added)
    }

    /// Applies `change` to the keyring file, when there is one and the ledger may write.
    fn save_keys(
        &self,
        change: impl FnOnce(&mut Keyring) -> Result<(), Rejection>,
    ) -> Result<(), Error> {
        match &self.config.keyring_file {
            Some(path) if !self.config.read_only => keyring_file::update(path, change),
            _ => Ok(()),
        }
    }
}
