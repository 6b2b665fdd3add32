//! The stream's messages, without IO: how admitted events are packed into messages, the
//! message id each gets, and the events read back out of a consumed message.
//!
//! A message holds one or more events of one realm, in admission order, their canonical
//! bytes joined by `\n` (a canonical event holds no raw newline, so the join is
//! unambiguous). The server's cost is per message (storing, indexing, delivering,
//! tracking acknowledgements), so packing [`MESSAGE_EVENTS`] events into one spares it
//! almost all of that; a message of one event is that event's bytes alone, as every message
//! was before packing. Empty lines are passed over when reading, as in a JSON Lines log.

use crate::limits::{MESSAGE_BYTES, MESSAGE_EVENTS};
use akledger::id::{hex, EventId};

/// Events packed for one message, not yet sent.
#[derive(Debug, Default)]
pub struct Packed {
    /// The events' ids, in order.
    pub ids: Vec<EventId>,
    /// Their bytes joined by `\n`.
    pub payload: Vec<u8>,
}

impl Packed {
    /// Whether an event of `bytes` bytes still fits in a message of at most `bound` bytes
    /// (at most [`MESSAGE_BYTES`]): it would be past neither [`MESSAGE_EVENTS`] events nor
    /// the bound. A first event always fits (the caller skips events larger than the server
    /// takes).
    pub fn fits(&self, bytes: usize, bound: usize) -> bool {
        self.ids.is_empty()
            || (self.ids.len() < MESSAGE_EVENTS
                && self.payload.len() + 1 + bytes <= bound.min(MESSAGE_BYTES))
    }

    /// Adds an event.
    pub fn push(&mut self, id: EventId, bytes: &[u8]) {
        if !self.ids.is_empty() {
            self.payload.push(b'\n');
        }
        self.payload.extend_from_slice(bytes);
        self.ids.push(id);
    }

    /// The message id: the event id for one event (so the server drops a copy of it
    /// published alone, as every message was before packing); for several,
    /// `ak:events:<n>:` and the BLAKE3 of their ids' text, each followed by `\n`, in hex
    /// (the same events packed the same way get the same id, so the server drops a message
    /// re-published after a crash).
    pub fn message_id(&self) -> String {
        match self.ids.as_slice() {
            [one] => one.to_string(),
            ids => {
                let mut hasher = blake3::Hasher::new();
                for id in ids {
                    hasher.update(id.to_string().as_bytes());
                    hasher.update(b"\n");
                }
                format!(
                    "ak:events:{}:{}",
                    ids.len(),
                    hex(hasher.finalize().as_bytes())
                )
            }
        }
    }
}

/// The events of a consumed message: its lines, empty ones passed over.
pub fn events_of(payload: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', payload).chain(std::iter::once(payload.len()));
    ends.filter_map(move |end| {
        let line = payload.get(start..end);
        start = end + 1;
        line.filter(|line| !line.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> EventId {
        let mut bytes = [n; 33];
        bytes[0] = 0x01;
        EventId::from_bytes(&bytes).unwrap()
    }

    #[test]
    fn events_packed_are_read_back_in_order() {
        let mut packed = Packed::default();
        for (n, event) in [&b"{\"a\":1}"[..], b"{\"b\":2}", b"{\"c\":3}"]
            .iter()
            .enumerate()
        {
            assert!(packed.fits(event.len(), MESSAGE_BYTES));
            packed.push(id(n as u8), event);
        }
        let read: Vec<&[u8]> = events_of(&packed.payload).collect();
        assert_eq!(read, [&b"{\"a\":1}"[..], b"{\"b\":2}", b"{\"c\":3}"]);
        // A message as published before packing, and stray empty lines.
        assert_eq!(events_of(b"{\"a\":1}").count(), 1);
        assert_eq!(events_of(b"\n{\"a\":1}\n\n{\"b\":2}\n").count(), 2);
    }

    #[test]
    fn a_message_keeps_to_its_bounds_and_the_server_s_but_takes_any_first_event() {
        let mut packed = Packed::default();
        assert!(packed.fits(MESSAGE_BYTES * 4, MESSAGE_BYTES));
        packed.push(id(1), &vec![b'x'; MESSAGE_BYTES - 10]);
        assert!(packed.fits(9, MESSAGE_BYTES));
        assert!(!packed.fits(10, MESSAGE_BYTES));
        // A smaller server bound is kept; a larger one does not lift MESSAGE_BYTES.
        assert!(!packed.fits(9, MESSAGE_BYTES - 1));
        assert!(!packed.fits(10, MESSAGE_BYTES * 2));
        let mut packed = Packed::default();
        for n in 0..MESSAGE_EVENTS {
            assert!(packed.fits(1, MESSAGE_BYTES));
            packed.push(id(n as u8), b"x");
        }
        assert!(!packed.fits(1, MESSAGE_BYTES));
    }

    #[test]
    fn one_event_keeps_its_id_and_several_get_one_bound_to_all_of_theirs() {
        let mut one = Packed::default();
        one.push(id(1), b"x");
        assert_eq!(one.message_id(), id(1).to_string());
        let several = |ids: &[u8]| {
            let mut packed = Packed::default();
            for &n in ids {
                packed.push(id(n), b"x");
            }
            packed.message_id()
        };
        assert!(several(&[1, 2]).starts_with("ak:events:2:"));
        assert_eq!(several(&[1, 2]), several(&[1, 2]));
        assert_ne!(several(&[1, 2]), several(&[2, 1]));
        assert_ne!(several(&[1, 2]), several(&[1, 2, 3]));
    }
}
