//! Dropping a pending event on an operator's request. The drop is a log entry of its own
//! kind (the event id's 33 bytes), written as its own batch, so every replay of the log
//! drops the event at the same point and the index, the live state and a rebuild agree.

use crate::error::Error;
use crate::id::EventId;
use crate::layout;
use crate::store::log::LogBatch;

use super::index::Changes;
use super::{log_error, Durability, Ledger, Writer};
use crate::store::log::segment_file_name;

/// Log entry kind of a pending event dropped by an operator (payload: the id's bytes).
pub(crate) const ENTRY_DROP_PENDING: u8 = 2;

impl Ledger {
    /// Drops a pending event: records the drop in the log, then forgets the event (it may
    /// be submitted again later). `Ok(false)` when no event with this id is pending.
    pub fn drop_pending(&self, id: &EventId) -> Result<bool, Error> {
        if self.config.read_only {
            return Err(Error::ReadOnly {
                path: self.config.dir.clone(),
            });
        }
        let mut writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        if writer.poisoned {
            return Err(Error::Poisoned);
        }
        if !self.read_state()?.pending.contains(id) {
            return Ok(false);
        }
        let result = self.commit_drop(&mut writer, id);
        if result.is_err() {
            writer.poisoned = true;
        }
        result.map(|()| true)
    }

    fn commit_drop(&self, writer: &mut Writer, id: &EventId) -> Result<(), Error> {
        let payload: &[u8] = id.bytes();
        writer
            .log
            .append_batch(&[(ENTRY_DROP_PENDING, payload)])
            .map_err(log_error)?;
        writer.entries += 1;
        if self.config.durability == Durability::Sync {
            writer.mark_acknowledged()?;
        }
        let high = writer.log.high_water();
        let first = {
            let mut state = self.state.write().map_err(|_| Error::Poisoned)?;
            state.drop_pending(id);
            state.len()
        };
        self.index_batch(writer, first, &[], &Changes::dropped(vec![*id]), high)
    }
}

/// The ids a replayed batch's drop entries name.
pub(crate) fn dropped_ids(batch: &LogBatch) -> Result<Vec<EventId>, Error> {
    batch
        .entries()
        .filter(|e| e.kind == ENTRY_DROP_PENDING)
        .map(|e| {
            <&[u8; 33]>::try_from(e.payload)
                .ok()
                .and_then(|bytes| EventId::from_bytes(bytes).ok())
                .ok_or_else(|| Error::Corrupt {
                    path: format!("{}/{}", layout::LOG, segment_file_name(e.pos.segment)).into(),
                    offset: e.pos.offset,
                    reason: "a pending-drop entry does not hold an event id".into(),
                })
        })
        .collect()
}
