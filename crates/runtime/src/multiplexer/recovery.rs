//! Recovery: what a run finds in the ledger and the progress marker after a stop or a
//! crash, and how it resumes (see the module doc of `multiplexer`).

use super::*;
use crate::skills::Tick;

/// An input recorded after the marker: handed to the skills again (its actions already in
/// the ledger skipped).
enum Cause {
    /// An envelope taken in, by the connection at the slot (`None`: one no longer there).
    Inbox(EventId, Envelope, Option<usize>),
    /// A behaviour's tick: skill, behaviour, time.
    Tick(EventId, String, String, Timestamp),
    /// A control the decision maker authored.
    Control(EventId),
}

impl Runtime<'_> {
    /// Recovers (see [`Runtime::new`]); runs once before the first step.
    pub(super) fn recover(&mut self) -> Result<(), Error> {
        let marker = Progress::load(&self.dir)?;
        let (from, length) = marker
            .as_ref()
            .map_or((0, 0), |p| (p.ledger_position, p.ledger_length));
        if let Some(p) = &marker {
            self.decider.gone.clone_from(&p.gone);
        }
        let slots = self.connections.len();
        let mut inputs: Vec<InputCursor> = (0..slots)
            .map(|s| {
                marker
                    .as_ref()
                    .and_then(|p| p.connection(self.connections.name(s), s == 0))
                    .map(|c| c.input)
                    .unwrap_or_default()
            })
            .collect();
        let mut expected: Vec<Vec<(EventId, Envelope)>> = vec![Vec::new(); slots];
        let mut causes = Vec::new();
        let mut orphans = BTreeMap::<String, usize>::new();
        // Skills' state (dialogues, models, behaviours) is rebuilt from every input they
        // had; without skills only what the marker has not seen is read.
        let start = if self.skills.is_empty() { from } else { 0 };
        for (position, event) in (start..).zip(self.ledger.iter_from(start)) {
            let event = event?;
            if event.scope().sidecar_id() != Some(self.config.sidecar) {
                continue;
            }
            // Handled before the marker: only the skills' state needs it again.
            let handled = position < from;
            if let Body::ExchangeControl { .. } = event.body() {
                if *event.actor() == *self.controller.actor() {
                    if handled {
                        self.rehearse_control(event.id())?;
                    } else {
                        causes.push(Cause::Control(event.id()));
                    }
                }
                continue;
            }
            match self.record(&event) {
                Some(Record::Inbox {
                    connection,
                    mut envelope,
                    withheld,
                    end,
                    ..
                }) => {
                    let slot = self.slot_of(connection.as_deref());
                    // Only skills need an envelope handled before the marker, and none
                    // handles the exchange protocol, whose envelopes alone are withheld.
                    if handled {
                        if withheld.is_none() {
                            self.rehearse_inbox(event.id(), &envelope, slot);
                        }
                        continue;
                    }
                    self.disclosed(event.id(), &mut envelope, withheld.as_ref())?;
                    if let Some(input) = slot.and_then(|s| inputs.get_mut(s)) {
                        *input = later(*input, end);
                    }
                    causes.push(Cause::Inbox(event.id(), envelope, slot));
                }
                Some(Record::Outbox {
                    tag,
                    connection,
                    mut envelope,
                    withheld,
                }) if !handled => {
                    self.disclosed(event.id(), &mut envelope, withheld.as_ref())?;
                    self.taken.insert(tag);
                    let Some(slot) = self.slot_of(connection.as_deref()) else {
                        *orphans.entry(connection.unwrap_or_default()).or_default() += 1;
                        continue;
                    };
                    let lane = self
                        .connections
                        .at(slot)
                        .map(|c| c.lane(&envelope))
                        .unwrap_or_default();
                    let first_unwritten = marker
                        .as_ref()
                        .and_then(|p| p.connection(self.connections.name(slot), slot == 0))
                        .and_then(|c| c.unwritten.get(&lane).copied());
                    let written =
                        position < length && first_unwritten.is_none_or(|first| position < first);
                    if !written {
                        if let Some(list) = expected.get_mut(slot) {
                            list.push((event.id(), envelope));
                        }
                    }
                }
                Some(Record::Bridge { tag }) if !handled => {
                    self.taken.insert(tag);
                }
                Some(Record::Tick { skill, behaviour }) => {
                    if handled {
                        self.replay_tick(event.id(), &skill, &behaviour, event.created_at(), None);
                    } else {
                        causes.push(Cause::Tick(
                            event.id(),
                            skill,
                            behaviour,
                            event.created_at(),
                        ));
                    }
                }
                _ => {}
            }
        }
        for (connection, n) in orphans {
            eprintln!(
                "akledger: sidecar: {n} envelopes for connection {connection:?}, which this run does not have, are not written"
            );
        }
        // Outbox events not known to be written are compared with what each output holds
        // and queued again; without a marker (no step ever finished) there is nothing to
        // compare with, and none are resent.
        for (slot, list) in expected.into_iter().enumerate() {
            let output_from = marker.as_ref().map(|p| {
                p.connection(self.connections.name(slot), slot == 0)
                    .map_or(0, |c| c.output_position)
            });
            let envelopes: Vec<Envelope> = list.iter().map(|(_, e)| e.clone()).collect();
            let written = match (output_from, self.connections.at(slot)) {
                (Some(from), Some(c)) => c
                    .already_sent(from, &envelopes)
                    .map_err(io_error("a connection's output"))?,
                _ => list.len(),
            };
            for (id, envelope) in list.get(written..).unwrap_or_default() {
                self.queue(*id, slot, envelope)?;
            }
        }
        let mut sends = Vec::new();
        for cause in causes {
            match cause {
                Cause::Inbox(id, envelope, slot) => {
                    self.dispatch(id, &envelope, slot, &mut sends)?
                }
                Cause::Tick(id, skill, behaviour, at) => {
                    self.replay_tick(id, &skill, &behaviour, at, Some(&mut sends))
                }
                Cause::Control(id) => self.control_effects(id, &mut sends)?,
            }
        }
        self.send_all(sends)?;
        self.deliver()?;
        for (slot, input) in inputs.iter().enumerate() {
            if let Some(c) = self.connections.at(slot) {
                c.resume_at(input)
                    .map_err(io_error("a connection's input"))?;
            }
        }
        self.checkpoint(true)
    }

    /// The slot of the connection a record names (`None`: the first).
    fn slot_of(&self, connection: Option<&str>) -> Option<usize> {
        match connection {
            None => Some(0),
            Some(name) => self.connections.index(name),
        }
    }

    /// Hands an inbox envelope handled before the marker to the skills again, dropping
    /// their answers (sent long ago): a skill's state is a function of its inputs.
    fn rehearse_inbox(&mut self, id: EventId, envelope: &Envelope, slot: Option<usize>) {
        if envelope.protocol_id == exchange_protocol_id() || self.relays(envelope, slot) {
            return;
        }
        let _ = self.skills.react(
            Inbound {
                envelope,
                event_id: id,
            },
            &self.config.address,
        );
    }

    /// Hands a recorded tick to its behaviour again; its envelopes go to `sends` when
    /// given (a tick after the marker), else are dropped (sent long ago).
    pub(super) fn replay_tick(
        &mut self,
        id: EventId,
        skill: &str,
        behaviour: &str,
        at: Timestamp,
        sends: Option<&mut Vec<Outgoing>>,
    ) {
        let Some(place) = self.skills.find(skill, behaviour) else {
            eprintln!(
                "akledger: sidecar: a tick of behaviour {behaviour} of skill {skill}, which this run does not have, is skipped"
            );
            return;
        };
        let acted = self.skills.act(place, Tick { at }, &self.config.address);
        if let Some(sends) = sends {
            self.tick_effects(id, acted.sends, sends);
        }
    }

    /// The runtime record an event of the sidecar holds (decrypted with the ledger's
    /// keyring), if it is one of the runtime's.
    pub(super) fn record(&self, event: &Event) -> Option<Record> {
        if event.kind() != MESSAGE_CREATE {
            return None;
        }
        let body = self.plaintext(event)?.body;
        read_record(&body)
    }

    pub(super) fn plaintext(&self, event: &Event) -> Option<MessagePlaintext> {
        let Body::SidecarMessage { encrypted } = event.body() else {
            return None;
        };
        let keyring = self.ledger.verifier().keyring();
        let bytes = decrypt(&self.config.sidecar, event, &keyring, encrypted).ok()?;
        MessagePlaintext::parse(&bytes).ok()
    }
}

/// The later of two input cursors: `end` (an inbox record's) unless the marker's `marked`
/// is further along the same file (garbage skipped after the last record).
fn later(marked: InputCursor, end: InputCursor) -> InputCursor {
    let same_file = match (marked.file, end.file) {
        (Some(a), Some(b)) => (a.device, a.inode) == (b.device, b.inode),
        _ => true,
    };
    if same_file && marked.offset > end.offset {
        marked
    } else {
        end
    }
}
