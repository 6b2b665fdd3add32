//! The OutBox: outbound envelopes become events before they are queued to their
//! connection; each connection writes them when its reader can take them; the progress
//! marker is written after every step that did something, never past an outbox event not
//! written yet.

use super::*;
use crate::progress::ConnectionProgress;

impl Runtime<'_> {
    /// Makes each queued envelope an outbox event of the connection it is routed to (one
    /// signing stream per [`SIGN_STREAM`] envelopes), then queues them to their connections.
    pub(super) fn send_all(&mut self, sends: Vec<Outgoing>) -> Result<(), Error> {
        for chunk in sends.chunks(SIGN_STREAM) {
            let at = Timestamp::now().max(self.floor);
            let mut records = Vec::with_capacity(chunk.len());
            let mut slots = Vec::with_capacity(chunk.len());
            for out in chunk {
                let slot = self.connections.route_for(&out.envelope.to, out.origin);
                // Dated after its cause: made in this step, or else read from the ledger.
                let at = match self.made.get(&out.tag.cause) {
                    Some(&made) => at.max(made),
                    None => at.max(self.ledger.now_after(&[out.tag.cause])?),
                };
                let connection = self.connections.name(slot).to_string();
                let body = move |withheld: Option<&_>| {
                    outbox_body(out.tag, &connection, &out.envelope, withheld)
                };
                records.push(self.record_event(&out.envelope, body, &[out.tag.cause], at)?);
                slots.push(slot);
            }
            let ids = self.append_records(records, |_, _| Ok(()))?;
            for out in chunk {
                self.taken.insert(out.tag);
            }
            self.passed(Stage::Outbox);
            for ((id, slot), out) in ids.iter().zip(slots).zip(chunk) {
                self.queue(*id, slot, &out.envelope)?;
            }
        }
        Ok(())
    }

    /// Queues the envelope of outbox event `id` to the connection at `slot`.
    pub(super) fn queue(
        &mut self,
        id: EventId,
        slot: usize,
        envelope: &Envelope,
    ) -> Result<(), Error> {
        let position = self
            .ledger
            .position(&id)
            .ok_or_else(|| Error::Misuse(format!("the outbox event {id} is not admitted")))?;
        let Some(connection) = self.connections.at(slot) else {
            return Err(Error::Misuse(format!("no connection {slot}")));
        };
        let lane = connection.lane(envelope);
        connection
            .send(envelope, position)
            .map_err(io_error("a connection's output"))?;
        self.unwritten.insert(position, (slot, lane));
        Ok(())
    }

    /// Lets every connection write what its readers can take now; how many were written.
    pub(super) fn deliver(&mut self) -> Result<usize, Error> {
        let mut written = 0;
        for slot in 0..self.connections.len() {
            let mut here = 0;
            while let Some(token) = match self.connections.at(slot) {
                Some(c) => c.deliver().map_err(io_error("a connection's output"))?,
                None => None,
            } {
                self.unwritten.remove(&token);
                here += 1;
                self.passed(Stage::Sent);
            }
            if here > 0 {
                if let Some(c) = self.connections.at(slot) {
                    c.flush().map_err(io_error("a connection's output"))?;
                }
            }
            written += here;
        }
        Ok(written)
    }

    /// Records the progress (after a step that did something): durably when `durable`.
    pub(super) fn checkpoint(&mut self, durable: bool) -> Result<(), Error> {
        let length = self.ledger.len() as u64;
        let mut connections = BTreeMap::new();
        for slot in 0..self.connections.len() {
            let name = self.connections.name(slot).to_string();
            let Some(c) = self.connections.at(slot) else {
                continue;
            };
            let progress = ConnectionProgress {
                input: c.input_cursor(),
                output_position: c
                    .output_position()
                    .map_err(io_error("a connection's output"))?,
                unwritten: BTreeMap::new(),
            };
            connections.insert(name, progress);
        }
        // The first unwritten position of each lane (positions ascend).
        for (&position, (slot, lane)) in &self.unwritten {
            if let Some(c) = connections.get_mut(self.connections.name(*slot)) {
                c.unwritten.entry(lane.clone()).or_insert(position);
            }
        }
        let progress = Progress {
            ledger_position: self.unwritten.keys().next().copied().unwrap_or(length),
            ledger_length: length,
            connections,
            gone: self.decider.gone.clone(),
        };
        progress.save(&self.dir, durable)?;
        self.passed(Stage::Marker);
        self.taken.clear();
        Ok(())
    }
}
