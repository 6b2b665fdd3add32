//! The OutBox: outbound envelopes become events before they are written, and the
//! progress marker is written last.

use super::*;

impl<'l, C: Connection> Runtime<'l, C> {
    /// Makes each queued envelope an outbox event (one batch), then writes them.
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
            self.append(&events)?;
            for (tag, _) in chunk {
                self.taken.insert(*tag);
            }
            self.passed(Stage::Outbox);
            for (_, envelope) in chunk {
                self.connection
                    .send(envelope)
                    .map_err(io_error("the connection's output"))?;
                self.passed(Stage::Sent);
            }
        }
        self.connection
            .flush()
            .map_err(io_error("the connection's output"))
    }

    /// Records the progress (after a step that did something).
    pub(super) fn checkpoint(&mut self) -> Result<(), Error> {
        let progress = Progress {
            input_offset: self.connection.input_position(),
            output_length: self
                .connection
                .output_position()
                .map_err(io_error("the connection's output"))?,
            ledger_position: self.ledger.len() as u64,
            gone: self.decider.gone.clone(),
        };
        progress.save(&self.dir)?;
        self.passed(Stage::Marker);
        self.taken.clear();
        Ok(())
    }
}
