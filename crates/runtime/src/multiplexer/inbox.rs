//! The InBox: envelopes taken in become events of the sidecar before any handler sees
//! them, then go to the handler of their protocol.

use super::*;

impl<'l, C: Connection> Runtime<'l, C> {
    /// Makes each received envelope an inbox event, in one batch.
    pub(super) fn append_inbox(
        &self,
        received: &[Received],
        now: Timestamp,
    ) -> Result<Vec<EventId>, Error> {
        let at = now.max(self.floor);
        let mut events = Vec::with_capacity(received.len());
        for r in received {
            let body = inbox_body(&r.envelope, r.start, &r.end);
            events.push(self.controller.message(None, body, &[], at, &mut OsRng)?);
        }
        self.append(&events)
    }

    /// Appends authored events; every one must be admitted.
    pub(super) fn append(
        &self,
        events: &[Event<akledger::event::Unverified>],
    ) -> Result<Vec<EventId>, Error> {
        let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
        let mut ids = Vec::with_capacity(events.len());
        for outcome in self.ledger.append_batch(&bytes)? {
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

    /// Hands one inbox event to its handler; the answers go to `sends`.
    pub(super) fn dispatch(
        &mut self,
        id: EventId,
        envelope: &Envelope,
        sends: &mut Vec<(Tag, Envelope)>,
    ) -> Result<(), Error> {
        let inbound = Inbound {
            envelope,
            event_id: id,
        };
        let mut effects = Effects {
            cause: id,
            next: 0,
            taken: &self.taken,
            sends,
            stage: &mut self.stage,
        };
        let outcome = if envelope.protocol_id == exchange_protocol_id() {
            bridge::handle(
                self.ledger,
                &self.config,
                &mut self.decider.gone,
                inbound,
                &mut effects,
            )?
        } else {
            match self.handlers.get_mut(&envelope.protocol_id) {
                Some(handler) => handler.handle(inbound).map(|out| {
                    for e in out {
                        effects.send(e);
                    }
                }),
                None if envelope.protocol_id == default_protocol_id() => Err(Refusal::new(
                    ErrorCode::UnsupportedSkill,
                    "no handler for the default protocol",
                )),
                None => Err(Refusal::new(
                    ErrorCode::UnsupportedProtocol,
                    format!("unsupported protocol {}", envelope.protocol_id),
                )),
            }
        };
        if let Err(refusal) = outcome {
            eprintln!(
                "akledger: sidecar: envelope from {:?} ({}): {}: {}",
                envelope.sender,
                envelope.protocol_id,
                refusal.code.name(),
                refusal.message
            );
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
