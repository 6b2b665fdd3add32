//! The InBox: envelopes taken in become events of the sidecar before any handler sees
//! them, then go to the exchange bridge, on to the connection their address is routed to,
//! or to the skills handling their protocol (`react()`).

use akledger::actors::{Disclosure, Salt};
use akledger::canonical::Json;

use super::withholding::Unsealed;
use super::*;
use crate::limits::{MAX_INBOX_BATCH, SIGN_AHEAD_RUN};
use crate::records::WITHHELD_FIELD;
use akledger::limits::MAX_BATCH_BYTES;

impl Runtime<'_> {
    /// Makes each envelope received by the connection at `slot` an inbox event, in one
    /// batch appended in runs ([`Runtime::sign_and_admit`]), and hands the envelopes of each
    /// run to [`Runtime::dispatch`] once the run is in the ledger, while the rest are being
    /// signed; their answers go to `sends`.
    pub(super) fn take_in(
        &mut self,
        slot: usize,
        received: &[Received],
        now: Timestamp,
        sends: &mut Vec<Outgoing>,
    ) -> Result<(), Error> {
        let at = now.max(self.floor);
        let connection = self.connections.name(slot).to_string();
        let connection = connection.as_str();
        let mut records = Vec::with_capacity(received.len());
        for r in received {
            let body = move |withheld: Option<&_>| {
                inbox_body(connection, &r.envelope, withheld, r.start, &r.end)
            };
            records.push(self.record_event(&r.envelope, body, &[], at)?);
        }
        let mut handled = received.iter();
        self.append_records(records, |runtime, ids| {
            runtime.passed(Stage::Inbox);
            for (id, r) in ids.iter().zip(handled.by_ref()) {
                runtime.dispatch(*id, &r.envelope, Some(slot), sends)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Seals and signs `events` on the signing threads (verified, as the ledger's verifier
    /// would verify them, without solving their fresh signatures again) and appends them in
    /// order while the rest are being signed, in runs of at least [`SIGN_AHEAD_RUN`]; each
    /// run once the disclosure store durably holds the messages its records withhold
    /// (`withheld`: one entry per event), and handed to `after_run` (with this runtime) once
    /// appended (the events themselves are freed on the [`super::freeing`] thread). Every
    /// event must be admitted.
    pub(super) fn sign_and_admit(
        &mut self,
        events: Vec<Unsealed<'_>>,
        withheld: Vec<Option<(Salt, Json)>>,
        mut after_run: impl FnMut(&mut Self, &[EventId]) -> Result<(), Error>,
    ) -> Result<Vec<EventId>, Error> {
        // The signing threads' own author: `after_run` may change the runtime meanwhile.
        let (ledger, author, threads) = (self.ledger, self.controller.clone(), self.sign_threads);
        let verifier = ledger.verifier();
        let mut withheld = withheld.into_iter();
        let mut ids = Vec::with_capacity(events.len());
        // Signed a piece at a time: one key's signatures cost less made together.
        akledger::workload::in_parallel_pieces_into(
            events,
            threads,
            SIGN_AHEAD_RUN,
            |piece| {
                let sealed = piece
                    .into_iter()
                    .map(|e| {
                        let body = (e.body)();
                        author.message_unsigned(None, body, &e.parents, e.at, &mut OsRng)
                    })
                    .collect();
                author.sign_verified_many(sealed, verifier)
            },
            |signed: Vec<Event>| {
                for run in runs(signed) {
                    let disclosures: Vec<Disclosure> = run
                        .iter()
                        .zip(withheld.by_ref())
                        .filter_map(|(event, withheld)| {
                            let (salt, value) = withheld?;
                            Some(Disclosure {
                                event_id: event.id(),
                                field: WITHHELD_FIELD.to_string(),
                                salt,
                                value,
                            })
                        })
                        .collect();
                    if !disclosures.is_empty() {
                        ledger.keep_disclosures(&disclosures)?;
                    }
                    self.made
                        .extend(run.iter().map(|e| (e.id(), e.created_at())));
                    // The ledger's references go at commit; these are the last.
                    let appended = run.clone();
                    let run = admit(ledger, run)?;
                    self.freeing.free(appended);
                    after_run(self, &run)?;
                    ids.extend(run);
                }
                Ok::<_, Error>(())
            },
        )?;
        Ok(ids)
    }

    /// True when `envelope`, which came in by the connection at `origin`, is for an address
    /// routed to another connection: it is relayed there, not handled.
    pub(super) fn relays(&self, envelope: &Envelope, origin: Option<usize>) -> bool {
        match (origin, self.connections.routed(&envelope.to)) {
            (Some(from), Some(to)) => from != to,
            _ => false,
        }
    }

    /// Hands one inbox event (which came in by the connection at `origin`) to the bridge,
    /// relays it, or hands it to the skills; the answers go to `sends`.
    pub(super) fn dispatch(
        &mut self,
        id: EventId,
        envelope: &Envelope,
        origin: Option<usize>,
        sends: &mut Vec<Outgoing>,
    ) -> Result<(), Error> {
        let inbound = Inbound {
            envelope,
            event_id: id,
        };
        let relayed = self.relays(envelope, origin);
        let mut effects = Effects::of(id, origin, &self.taken, sends, &mut self.stage);
        let outcome = if envelope.protocol_id == exchange_protocol_id() {
            bridge::handle(
                self.ledger,
                &self.config,
                &mut self.decider.gone,
                inbound,
                &mut effects,
            )?
        } else if relayed {
            effects.send(envelope.clone());
            Ok(())
        } else {
            let reaction = self.skills.react(inbound, &self.config.address);
            for (skill, refusal) in &reaction.refusals {
                if reaction.handlers > 0 {
                    log_refusal(envelope, Some(skill), refusal);
                }
            }
            if reaction.handlers > 0 {
                for e in reaction.sends {
                    effects.send(e);
                }
                Ok(())
            } else if let Some((_, refusal)) = reaction.refusals.into_iter().next() {
                Err(refusal)
            } else if envelope.protocol_id == default_protocol_id() {
                Err(Refusal::new(
                    ErrorCode::UnsupportedSkill,
                    "no skill handles the default protocol",
                ))
            } else {
                Err(Refusal::new(
                    ErrorCode::UnsupportedProtocol,
                    format!("unsupported protocol {}", envelope.protocol_id),
                ))
            }
        };
        if let Err(refusal) = outcome {
            log_refusal(envelope, None, &refusal);
            // Errors are not answered with errors (two runtimes would never stop).
            let is_error = envelope.protocol_id == default_protocol_id()
                && matches!(
                    DefaultMessage::decode(&envelope.message),
                    Ok(DefaultMessage {
                        performative: Performative::Error { .. },
                        ..
                    })
                );
            if !is_error {
                effects.send(error_reply(envelope, &refusal));
            }
        }
        Ok(())
    }
}

/// Says on stderr why an envelope was refused (by one skill, or by all).
fn log_refusal(envelope: &Envelope, skill: Option<&str>, refusal: &Refusal) {
    let by = skill.map_or(String::new(), |s| format!(" skill {s}:"));
    eprintln!(
        "akledger: sidecar: envelope from {:?} ({}):{by} {}: {}",
        envelope.sender,
        envelope.protocol_id,
        refusal.code.name(),
        refusal.message
    );
}

/// `signed` cut into the runs appended one at a time: at most [`MAX_INBOX_BATCH`] events
/// and [`MAX_BATCH_BYTES`] bytes each (the signing threads may have signed far more than
/// that while the run before was appended).
fn runs(signed: Vec<Event>) -> Vec<Vec<Event>> {
    cut(signed, MAX_INBOX_BATCH, MAX_BATCH_BYTES, |e| {
        e.bytes().len()
    })
}

/// `items` cut in order into runs of at most `most` items and `most_bytes` bytes (`size`
/// of each); an item larger than `most_bytes` goes alone.
fn cut<T>(
    items: Vec<T>,
    most: usize,
    most_bytes: usize,
    size: impl Fn(&T) -> usize,
) -> Vec<Vec<T>> {
    let mut runs = Vec::new();
    let (mut run, mut bytes) = (Vec::new(), 0usize);
    for item in items {
        let len = size(&item);
        if !run.is_empty() && (run.len() >= most || bytes.saturating_add(len) > most_bytes) {
            runs.push(std::mem::take(&mut run));
            bytes = 0;
        }
        bytes = bytes.saturating_add(len);
        run.push(item);
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// Appends events the runtime made to `ledger`; every one must be admitted.
fn admit(ledger: &Ledger, signed: Vec<Event>) -> Result<Vec<EventId>, Error> {
    let mut ids = Vec::with_capacity(signed.len());
    for outcome in ledger.append_verified(signed)?.outcomes {
        match outcome {
            Appended::Admitted(id) | Appended::Duplicate(id) => ids.push(id),
            Appended::Rejected { rejection, .. } => return Err(Error::Rejected(rejection)),
            Appended::Pending { id, .. } => {
                return Err(Error::Misuse(format!(
                    "the runtime's event {id} is pending (a parent is not admitted)"
                )))
            }
            other => {
                return Err(Error::Misuse(format!(
                    "the runtime's event was not admitted: {other:?}"
                )))
            }
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn runs_are_cut_in_order_by_count_and_by_bytes() {
        let sizes = |runs: &[Vec<usize>]| runs.iter().map(Vec::len).collect::<Vec<_>>();
        let ones: Vec<usize> = (0..2_501).map(|_| 1).collect();
        let by_count = cut(ones, 1_000, usize::MAX, |&s| s);
        assert_eq!(sizes(&by_count), [1_000, 1_000, 501]);
        let by_bytes = cut(vec![4, 4, 4, 9, 1, 1], 1_000, 8, |&s| s);
        assert_eq!(by_bytes, [vec![4, 4], vec![4], vec![9], vec![1, 1]]);
        assert!(cut(Vec::<usize>::new(), 1, 1, |&s| s).is_empty());
        let order: Vec<usize> = (0..10).collect();
        let again: Vec<usize> = cut(order.clone(), 3, usize::MAX, |_| 1).concat();
        assert_eq!(again, order);
    }
}
