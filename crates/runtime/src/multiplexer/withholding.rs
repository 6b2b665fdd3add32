//! Withholding (PROFILE §14.3, for what a runtime writes on behalf of an envelope): the
//! inbox or outbox record of an envelope whose seed-000 skill declares redacted fields (in
//! the current model of any actor the envelope names) never holds its message. Where the
//! message would be, the record holds a commitment to it; the message itself goes to the
//! ledger's disclosure store, durably, before the record is appended, and stays in the
//! connection's input. Recovery reads it back from the store and checks that it opens the
//! commitment.

use akledger::actors::Salt;
use akledger::canonical::Json;
use rand_core::RngCore as _;

use super::*;
use crate::bridge::skill_message;
use crate::records::{WithheldMessage, WITHHELD_FIELD};

/// A plain sidecar message the runtime makes (a record, a tick): its body made, sealed and
/// signed on the signing threads.
pub(super) struct Unsealed<'a> {
    pub body: MakeBody<'a>,
    pub parents: Vec<EventId>,
    pub at: Timestamp,
}

/// What makes an event's body, on the signing thread that seals it (made on the thread
/// that commits, the bodies of a batch left a core idle).
pub(super) type MakeBody<'a> = Box<dyn FnOnce() -> Json + Send + 'a>;

/// A record event about to be appended, with the disclosure of its withheld message.
pub(super) struct RecordEvent<'a> {
    /// The record, to be sealed and signed.
    pub event: Unsealed<'a>,
    /// The salt and value of the message it withholds, if it withholds one: the disclosure
    /// the store must hold before the record is appended, once the record (and so its id)
    /// is made.
    pub disclosure: Option<(Salt, Json)>,
}

impl Runtime<'_> {
    /// The exchange whose commitment must stand for `envelope`'s message in a record: an
    /// envelope of the exchange protocol naming a skill that some actor it names (sender,
    /// recipient, agents, coordinator) currently declares with redacted fields.
    fn withholds(&self, envelope: &Envelope) -> Result<Option<ExchangeId>, Error> {
        let Some(skill) = skill_message(envelope) else {
            return Ok(None);
        };
        let named = [&envelope.sender, &envelope.to]
            .into_iter()
            .chain(&skill.addresses);
        for principal in named.filter_map(|a| self.config.principal(a)) {
            let Some((_, model)) = self.ledger.latest_model(&principal)? else {
                continue;
            };
            let declares = model
                .action(&skill.subject, &skill.action)
                .is_some_and(|a| a.declares_redacted());
            if declares {
                return Ok(Some(skill.exchange));
            }
        }
        Ok(None)
    }

    /// Seals the record of `envelope` whose body `body` makes (given the commitment that
    /// stands for the message, when it is withheld), with `parents`, at `at`.
    pub(super) fn record_event<'a>(
        &self,
        envelope: &Envelope,
        body: impl FnOnce(Option<&WithheldMessage>) -> Json + Send + 'a,
        parents: &[EventId],
        at: Timestamp,
    ) -> Result<RecordEvent<'a>, Error> {
        let withheld = match self.withholds(envelope)? {
            Some(exchange) => {
                let mut salt = [0u8; 32];
                OsRng.fill_bytes(&mut salt);
                let salt = Salt(salt);
                let (withheld, value) = WithheldMessage::new(exchange, &salt, &envelope.message);
                Some((withheld, salt, value))
            }
            None => None,
        };
        let commitment = withheld.as_ref().map(|(w, _, _)| w.clone());
        let event = Unsealed {
            body: Box::new(move || body(commitment.as_ref())),
            parents: parents.to_vec(),
            at,
        };
        let disclosure = withheld.map(|(_, salt, value)| (salt, value));
        Ok(RecordEvent { event, disclosure })
    }

    /// Keeps the disclosures of `records` (durably), then appends them, in runs handed to
    /// `after_run` ([`Runtime::sign_and_admit`]); every one must be admitted.
    pub(super) fn append_records(
        &mut self,
        records: Vec<RecordEvent<'_>>,
        after_run: impl FnMut(&mut Self, &[EventId]) -> Result<(), Error>,
    ) -> Result<Vec<EventId>, Error> {
        let (events, withheld): (Vec<_>, Vec<_>) =
            records.into_iter().map(|r| (r.event, r.disclosure)).unzip();
        self.sign_and_admit(events, withheld, after_run)
    }

    /// Puts back the message record `id` withheld, from the disclosure store; an error
    /// when the store has no disclosure that opens its commitment.
    pub(super) fn disclosed(
        &self,
        id: EventId,
        envelope: &mut Envelope,
        withheld: Option<&WithheldMessage>,
    ) -> Result<(), Error> {
        let Some(withheld) = withheld else {
            return Ok(());
        };
        let restored = self
            .ledger
            .disclosure(&id, WITHHELD_FIELD)?
            .and_then(|d| withheld.restore(&d));
        envelope.message = restored.ok_or_else(|| {
            Error::Misuse(format!(
                "the runtime's record {id} withholds its envelope's message (its skill declares \
                 redacted fields) and the ledger's disclosure store has no disclosure that opens \
                 its commitment: restore disclosures.jsonl from a backup"
            ))
        })?;
        Ok(())
    }
}
