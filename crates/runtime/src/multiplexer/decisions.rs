//! The decision maker: the open exchanges it watches, the controls it authors through
//! the checked sidecar author, and the reports it sends about them.

use super::*;

/// The decision maker's view: the open exchanges and the agents declared gone.
#[derive(Debug)]
pub(super) struct Decider {
    pub(super) feed: ExchangeFeed,
    pub(super) open: BTreeMap<ExchangeId, OpenExchange>,
    pub(super) gone: BTreeSet<DidCoreId>,
    /// The folded-set digest at which a decision for an exchange was refused, so it is
    /// not tried again until the exchange changes.
    pub(super) refused: BTreeMap<ExchangeId, String>,
}

impl<'l, C: Connection> Runtime<'l, C> {
    /// Follows the exchange feed, then authors the policy's controls; returns how many
    /// were authored and the reports to send.
    pub(super) fn decide(
        &mut self,
        now: Timestamp,
    ) -> Result<(usize, Vec<(Tag, Envelope)>), Error> {
        for change in self.decider.feed.drain() {
            match change {
                ExchangeChange::Changed { projection, .. } => self.track(*projection)?,
                _ => {
                    for p in self.ledger.exchanges(&self.config.sidecar)?.projections {
                        self.track(p)?;
                    }
                }
            }
        }
        let open: Vec<OpenExchange> = self.decider.open.values().cloned().collect();
        let decisions = decide(&open, now, &self.decider.gone, &self.config.policy);
        let handle = self.ledger.sidecar(&self.controller);
        let mut sends = Vec::new();
        for d in decisions {
            let Some(current) = self.decider.open.get(&d.exchange_id) else {
                continue;
            };
            let digest = current.projection.event_set_digest();
            if self.decider.refused.get(&d.exchange_id) == Some(&digest) {
                continue;
            }
            let authored = match &d.act {
                Act::Close => handle.close(&d.exchange_id),
                Act::Cancel => handle.cancel(&d.exchange_id),
                Act::Fail(code) => handle.fail(&d.exchange_id, code),
                Act::Reassign { expected, new }
                    if *expected == current.projection.coordinator_agent_id =>
                {
                    handle.reassign(&d.exchange_id, new.clone())
                }
                Act::Reassign { .. } => continue,
            };
            match authored {
                Ok(id) => {
                    self.passed(Stage::Decided);
                    if let Some(envelope) = self.control_report(id)? {
                        sends.push((
                            Tag {
                                cause: id,
                                effect: 0,
                            },
                            envelope,
                        ));
                    }
                }
                Err(e @ (Error::WouldNotFold { .. } | Error::Rejected(_) | Error::Misuse(_))) => {
                    eprintln!("akledger: sidecar: decision maker: {e}");
                    self.decider.refused.insert(d.exchange_id.clone(), digest);
                }
                Err(e) => return Err(e),
            }
        }
        Ok((sends.len(), sends))
    }

    /// The report of a control the controller authored: the exchange's projection, to
    /// the controller's address.
    pub(super) fn control_report(&self, control: EventId) -> Result<Option<Envelope>, Error> {
        let Some(event) = self.ledger.get(&control)? else {
            return Ok(None);
        };
        let Body::ExchangeControl { encrypted, .. } = event.body() else {
            return Ok(None);
        };
        let keyring = self.ledger.verifier().keyring();
        let Ok(bytes) = decrypt(&self.config.sidecar, &event, &keyring, encrypted) else {
            return Ok(None);
        };
        let Ok(plaintext) = akledger::exchange::ControlPlaintext::parse(&bytes) else {
            return Ok(None);
        };
        let Some(p) = self
            .ledger
            .exchange(&self.config.sidecar, &plaintext.exchange_id)?
        else {
            return Ok(None);
        };
        Ok(Some(Envelope::new(
            &self.config.controller.address,
            &self.config.address,
            exchange_protocol_id(),
            projection_message(&p),
        )))
    }

    /// Keeps the decision maker's view of one exchange.
    pub(super) fn track(&mut self, p: Projection) -> Result<(), Error> {
        if matches!(p.status, Status::Complete | Status::Failed) {
            self.decider.open.remove(&p.exchange_id);
            self.decider.refused.remove(&p.exchange_id);
            return Ok(());
        }
        let opened_at = self
            .ledger
            .get(&p.request_event_id)?
            .ok_or(Error::NotFound(p.request_event_id))?
            .created_at();
        let mut completing = Vec::new();
        for id in &p.user_facing_response_event_ids {
            let Some(event) = self.ledger.get(id)? else {
                continue;
            };
            let binding = self.plaintext(&event).and_then(|m| m.binding);
            if let Some(Role::Response {
                completes: Some(assignment),
                ..
            }) = binding.map(|b| b.role)
            {
                completing.push(Completing {
                    author: event.actor().principal().clone(),
                    assignment,
                });
            }
        }
        self.decider.open.insert(
            p.exchange_id.clone(),
            OpenExchange {
                projection: p,
                opened_at,
                completing,
            },
        );
        Ok(())
    }
}
