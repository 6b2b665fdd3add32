//! The author's disclosures of redacted values (PROFILE §14.3): `DIR/disclosures.jsonl`,
//! one disclosure object per line, created with mode 0600 and appended durably (written and
//! synced before the event that commits to them is appended, so a commitment never reaches
//! the log without its disclosure). Nothing reads it but [`Ledger::disclosure`] and
//! [`Ledger::disclosures_of`]: `export`, `sync`, replication, snapshots and tiles never do.
//! An in-memory ledger keeps them in memory.

use std::io::{BufRead, Read, Write};
use std::os::unix::fs::OpenOptionsExt;

use crate::actors::Disclosure;
use crate::canonical::parse_value;
use crate::error::Error;
use crate::id::EventId;
use crate::layout::Layout;
use crate::limits::MAX_EVENT_BYTES;

use super::Ledger;

impl Ledger {
    /// Keeps `disclosures` in the ledger's disclosure store (`DIR/disclosures.jsonl`, mode
    /// 0600), durably: for values withheld by an author other than this ledger's
    /// [`SidecarHandle`](super::SidecarHandle), which keeps its own. The store is never
    /// appended, exported, synced, replicated, snapshotted or tiled (PROFILE §14.3).
    pub fn keep_disclosures(&self, disclosures: &[Disclosure]) -> Result<(), Error> {
        if disclosures.is_empty() {
            return Ok(());
        }
        if self.config.is_in_memory() {
            let mut kept = self.kept_disclosures.lock().map_err(|_| Error::Poisoned)?;
            kept.extend_from_slice(disclosures);
            return Ok(());
        }
        let path = Layout::new(self.config.dir()).disclosures();
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let mut bytes = Vec::new();
        for d in disclosures {
            bytes.extend_from_slice(&d.to_json().to_bytes());
            bytes.push(b'\n');
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        file.write_all(&bytes).map_err(io)?;
        file.sync_data().map_err(io)
    }

    /// Every disclosure this ledger's author kept for `event`.
    pub fn disclosures_of(&self, event: &EventId) -> Result<Vec<Disclosure>, Error> {
        Ok(self
            .all_disclosures()?
            .into_iter()
            .filter(|d| d.event_id == *event)
            .collect())
    }

    /// The disclosure of `field` in `event`, if this ledger's author kept one.
    pub fn disclosure(&self, event: &EventId, field: &str) -> Result<Option<Disclosure>, Error> {
        Ok(self
            .disclosures_of(event)?
            .into_iter()
            .find(|d| d.field == field))
    }

    fn all_disclosures(&self) -> Result<Vec<Disclosure>, Error> {
        if self.config.is_in_memory() {
            return Ok(self
                .kept_disclosures
                .lock()
                .map_err(|_| Error::Poisoned)?
                .clone());
        }
        let path = Layout::new(self.config.dir()).disclosures();
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(Error::Io { path, source }),
        };
        let mut out = Vec::new();
        let mut reader = std::io::BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_EVENT_BYTES as u64 * 2)
                .read_until(b'\n', &mut line)
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            // A line torn by a crash mid-append is not a disclosure; every other is.
            if let Some(d) = parse_value(text)
                .ok()
                .and_then(|v| Disclosure::from_json(&v).ok())
            {
                out.push(d);
            }
        }
        Ok(out)
    }
}

impl Ledger {
    /// Whether `disclosure` opens the commitment its event holds in its field (PROFILE
    /// §14.3): the event is read from the ledger, its plaintext decrypted with the
    /// keyring's sidecar key, and the commitment recomputed from the disclosure's salt and
    /// value for the message's exchange. `Ok(false)` when it does not open it (another
    /// value, salt, field or exchange, or no commitment there); an error when the event is
    /// not here, or its plaintext cannot be read.
    pub fn verify_disclosure(&self, disclosure: &Disclosure) -> Result<bool, Error> {
        let id = disclosure.event_id;
        let event = self.get(&id)?.ok_or(Error::NotFound(id))?;
        let (crate::envelope::Body::SidecarMessage { encrypted }, Some(sidecar)) =
            (event.body(), event.scope().sidecar_id())
        else {
            return Err(Error::Misuse(format!(
                "{id} is a {} event, not a sidecar message: it holds no PNCP data",
                event.kind()
            )));
        };
        let keyring = self.verifier().keyring();
        let bytes = crate::exchange::classify::decrypt(&sidecar, &event, &keyring, encrypted)
            .map_err(|_| {
                Error::Misuse(format!(
                    "{id} does not decrypt with the keyring's key for {sidecar} epoch {}: pass the keyring that holds it",
                    encrypted.epoch
                ))
            })?;
        let plaintext = crate::exchange::MessagePlaintext::parse(&bytes)
            .map_err(|_| Error::Misuse(format!("{id}: its plaintext is not a message")))?;
        let (Some(binding), Some(pncp)) = (plaintext.binding, plaintext.pncp) else {
            return Ok(false);
        };
        let sealed = pncp
            .data
            .as_ref()
            .and_then(|data| data.get(&disclosure.field));
        Ok(sealed.is_some_and(|s| disclosure.opens(&binding.exchange_id, s)))
    }
}
