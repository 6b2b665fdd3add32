//! Recovery: what a run finds in the ledger and the progress marker after a stop or a
//! crash, and how it resumes (see the module doc of `multiplexer`).

use super::*;

impl<'l, C: Connection> Runtime<'l, C> {
    /// Recovers (see [`Runtime::new`]); runs once before the first step.
    pub(super) fn recover(&mut self) -> Result<(), Error> {
        let marker = Progress::load(&self.dir)?;
        let (from, output_from) = match &marker {
            Some(p) => (p.ledger_position, Some(p.output_length)),
            None => (0, None),
        };
        if let Some(p) = &marker {
            self.decider.gone.clone_from(&p.gone);
        }
        let mut input = marker.as_ref().map(|p| p.input).unwrap_or_default();
        let mut inbox = Vec::new();
        let mut outbox = Vec::new();
        let mut controls = Vec::new();
        // Handlers' state (dialogues) is rebuilt from everything they handled; without
        // handlers only what the marker has not seen is read.
        let start = if self.handlers.is_empty() { from } else { 0 };
        for (position, event) in (start..).zip(self.ledger.iter_from(start)) {
            let event = event?;
            if event.scope().sidecar_id() != Some(self.config.sidecar) {
                continue;
            }
            if position < from {
                // Handled before: only handlers' state (dialogues) needs it again.
                if let Some(Record::Inbox { envelope, .. }) = self.record(&event) {
                    self.rehearse(event.id(), &envelope);
                }
                continue;
            }
            if let Body::ExchangeControl { .. } = event.body() {
                if *event.actor() == *self.controller.actor() {
                    controls.push(event.id());
                }
                continue;
            }
            match self.record(&event) {
                Some(Record::Inbox { envelope, end, .. }) => {
                    input = later(input, end);
                    inbox.push((event.id(), envelope));
                }
                Some(Record::Outbox { tag, envelope }) => {
                    self.taken.insert(tag);
                    outbox.push((event.id(), envelope));
                }
                Some(Record::Bridge { tag }) => {
                    self.taken.insert(tag);
                }
                None => {}
            }
        }
        // Outbox events the output does not hold yet are queued again; without a marker (no
        // step ever finished) there is nothing to compare with, and none are resent.
        let envelopes: Vec<Envelope> = outbox.iter().map(|(_, e)| e.clone()).collect();
        let written = match output_from {
            Some(from) => self
                .connection
                .already_sent(from, &envelopes)
                .map_err(io_error("the connection's output"))?,
            None => outbox.len(),
        };
        for (id, envelope) in outbox.get(written..).unwrap_or_default() {
            self.queue(*id, envelope)?;
        }
        let mut sends = Vec::new();
        for (id, envelope) in &inbox {
            self.dispatch(*id, envelope, &mut sends)?;
        }
        for id in controls {
            let tag = Tag {
                cause: id,
                effect: 0,
            };
            if !self.taken.contains(&tag) {
                if let Some(envelope) = self.control_report(id)? {
                    sends.push((tag, envelope));
                }
            }
        }
        self.send_all(sends)?;
        self.deliver()?;
        self.connection
            .resume_at(&input)
            .map_err(io_error("the connection's input"))?;
        self.checkpoint(true)
    }

    /// Hands an inbox envelope handled before the marker to its handler again, dropping its
    /// answers (sent long ago): a handler's state is a function of what it handled.
    fn rehearse(&mut self, id: EventId, envelope: &Envelope) {
        if let Some(handler) = self.handlers.get_mut(&envelope.protocol_id) {
            let _ = handler.handle(Inbound {
                envelope,
                event_id: id,
            });
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
