//! The OutBox: outbound envelopes become events before they are queued to the connection;
//! the connection writes them when its reader can take them; the progress marker is
//! written after every step that did something, never past an outbox event not written
//! yet.

use super::*;

impl<'l, C: Connection> Runtime<'l, C> {
    /// Makes each queued envelope an outbox event (one batch), then queues them to the
    /// connection.
    pub(super) fn send_all(&mut self, sends: Vec<(Tag, Envelope)>) -> Result<(), Error> {
        for chunk in sends.chunks(MAX_INBOX_BATCH) {
            let at = Timestamp::now().max(self.floor);
            let mut events = Vec::with_capacity(chunk.len());
            for (tag, envelope) in chunk {
                let at = at.max(self.ledger.now_after(&[tag.cause])?);
                events.push(self.controller.message(
                    None,
                    outbox_body(*tag, envelope),
                    &[tag.cause],
                    at,
                    &mut OsRng,
                )?);
            }
            let ids = self.append(&events)?;
            for (tag, _) in chunk {
                self.taken.insert(*tag);
            }
            self.passed(Stage::Outbox);
            for (id, (_, envelope)) in ids.iter().zip(chunk) {
                self.queue(*id, envelope)?;
            }
        }
        Ok(())
    }

    /// Queues the envelope of outbox event `id` to the connection.
    pub(super) fn queue(&mut self, id: EventId, envelope: &Envelope) -> Result<(), Error> {
        let position = self
            .ledger
            .position(&id)
            .ok_or_else(|| Error::Misuse(format!("the outbox event {id} is not admitted")))?;
        self.unwritten.push_back(position);
        self.connection
            .send(envelope)
            .map_err(io_error("the connection's output"))
    }

    /// Lets the connection write what its reader can take now; how many it wrote.
    pub(super) fn deliver(&mut self) -> Result<usize, Error> {
        let mut written = 0;
        while self
            .connection
            .deliver()
            .map_err(io_error("the connection's output"))?
        {
            self.unwritten.pop_front();
            written += 1;
            self.passed(Stage::Sent);
        }
        if written > 0 {
            self.connection
                .flush()
                .map_err(io_error("the connection's output"))?;
        }
        Ok(written)
    }

    /// Records the progress (after a step that did something): durably when `durable`.
    pub(super) fn checkpoint(&mut self, durable: bool) -> Result<(), Error> {
        let ledger_position = self
            .unwritten
            .front()
            .copied()
            .unwrap_or(self.ledger.len() as u64);
        let progress = Progress {
            input: self.connection.input_cursor(),
            output_length: self
                .connection
                .output_position()
                .map_err(io_error("the connection's output"))?,
            ledger_position,
            gone: self.decider.gone.clone(),
        };
        progress.save(&self.dir, durable)?;
        self.passed(Stage::Marker);
        self.taken.clear();
        Ok(())
    }
}
