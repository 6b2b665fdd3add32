//! `update()`: the decision maker follows the open exchanges, authors the controls its
//! policy calls for through the checked sidecar author, reports each to the controller,
//! and hands each to the skills as an internal message ([`DECISION_PROTOCOL_ID`](crate::skills::DECISION_PROTOCOL_ID)).

use super::*;
use crate::skills::{decision_protocol_id, DECISION_MAKER_ADDRESS};
use akledger::canonical::{to_canonical, Object};
use akledger::exchange::ControlPlaintext;

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

impl Runtime<'_> {
    /// The decision maker's part of a step: its controls, and their effects (the report to
    /// the controller, the skills' answers to its internal message). How many controls.
    pub(super) fn update(&mut self, now: Timestamp) -> Result<usize, Error> {
        let controls = self.decide(now)?;
        let mut sends = Vec::new();
        for id in &controls {
            self.control_effects(*id, &mut sends)?;
        }
        self.send_all(sends)?;
        Ok(controls.len())
    }

    /// The effects of control `id`: its report to the controller (effect 0), then what the
    /// skills handling [`DECISION_PROTOCOL_ID`](crate::skills::DECISION_PROTOCOL_ID) answer to it.
    pub(super) fn control_effects(
        &mut self,
        id: EventId,
        sends: &mut Vec<Outgoing>,
    ) -> Result<(), Error> {
        let report = self.control_report(id)?;
        let internal = self.internal_message(id)?;
        let mut effects = Effects::of(id, None, &self.taken, sends, &mut self.stage);
        match report {
            Some(report) => effects.send(report),
            None => {
                effects.next();
            }
        }
        if let Some(message) = internal {
            let inbound = Inbound {
                envelope: &message,
                event_id: id,
            };
            let reaction = self.skills.react(inbound, &self.config.address);
            for (skill, refusal) in &reaction.refusals {
                eprintln!(
                    "akledger: sidecar: skill {skill} refused the decision maker's message about {id}: {}: {}",
                    refusal.code.name(),
                    refusal.message
                );
            }
            for e in reaction.sends {
                effects.send(e);
            }
        }
        Ok(())
    }

    /// Hands control `id`, authored before the marker, to the skills again, dropping their
    /// answers: a skill's state is a function of its inputs.
    pub(super) fn rehearse_control(&mut self, id: EventId) -> Result<(), Error> {
        if let Some(message) = self.internal_message(id)? {
            let inbound = Inbound {
                envelope: &message,
                event_id: id,
            };
            let _ = self.skills.react(inbound, &self.config.address);
        }
        Ok(())
    }

    /// The decision maker's internal message about control `id`, when a skill takes
    /// [`DECISION_PROTOCOL_ID`](crate::skills::DECISION_PROTOCOL_ID) messages.
    fn internal_message(&self, id: EventId) -> Result<Option<Envelope>, Error> {
        if !self.skills.handles(&decision_protocol_id()) {
            return Ok(None);
        }
        let Some(control) = self.control_plaintext(id)? else {
            return Ok(None);
        };
        let doc = Object::new()
            .with("performative", "control".into())
            .with("control_event_id", id.to_string().into())
            .with("control", control.to_json());
        Ok(Some(Envelope::new(
            &self.config.address,
            DECISION_MAKER_ADDRESS,
            decision_protocol_id(),
            to_canonical(&doc.into()),
        )))
    }

    /// Follows the exchange feed, then authors the policy's controls; returns their ids.
    fn decide(&mut self, now: Timestamp) -> Result<Vec<EventId>, Error> {
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
        let mut authored_ids = Vec::new();
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
                    authored_ids.push(id);
                }
                Err(e @ (Error::WouldNotFold { .. } | Error::Rejected(_) | Error::Misuse(_))) => {
                    eprintln!("akledger: sidecar: decision maker: {e}");
                    self.decider.refused.insert(d.exchange_id.clone(), digest);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(authored_ids)
    }

    /// The plaintext of control `id` (decrypted with the ledger's keyring).
    fn control_plaintext(&self, id: EventId) -> Result<Option<ControlPlaintext>, Error> {
        let Some(event) = self.ledger.get(&id)? else {
            return Ok(None);
        };
        let Body::ExchangeControl { encrypted, .. } = event.body() else {
            return Ok(None);
        };
        let keyring = self.ledger.verifier().keyring();
        let Ok(bytes) = decrypt(&self.config.sidecar, &event, &keyring, encrypted) else {
            return Ok(None);
        };
        Ok(ControlPlaintext::parse(&bytes).ok())
    }

    /// The report of a control the controller authored: the exchange's projection, to
    /// the controller's address.
    fn control_report(&self, control: EventId) -> Result<Option<Envelope>, Error> {
        let Some(plaintext) = self.control_plaintext(control)? else {
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
