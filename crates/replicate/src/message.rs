//! The stream's messages, without IO: how admitted events are packed into messages, the
//! message id each gets, and the events read back out of a consumed message.
//!
//! A message holds one or more events of one realm, in admission order, their canonical
//! bytes joined by `\n` (a canonical event holds no raw newline, so the join is
//! unambiguous). The server's cost is per message (storing, indexing, delivering,
//! tracking acknowledgements), so packing [`MESSAGE_EVENTS`] events into one spares it
//! almost all of that; a message of one event is that event's bytes alone, as every message
//! was before packing. Empty lines are passed over when reading, as in a JSON Lines log.
//!
//! A message is sent LZ4-compressed when that saves at least an eighth of it (nearly
//! always: in the ledger's events the keys, DIDs and ids repeat — a producer's DID twice in
//! each event, a parent's id in its children — and 64 of them take 0.33 of their bytes as
//! `gen` writes them, 0.43 with 256 random characters of payload each), marked by the
//! header [`ENCODING_HEADER`]`:` [`LZ4`]: the LZ4 block format, after the decompressed
//! length as a little-endian `u32`. The server's and the network's costs go by the byte:
//! consuming 20 k such events (the random ones) through one local server, the server used
//! 20–30 ms of CPU instead of 40–50, and the round took 0.92 × the time (three alternated
//! calls of the replicate bench); decompressing runs at about 7 GB/s. A message
//! without the header is read as it is, as every message was before compression; one whose
//! header names another encoding, or whose bytes do not decompress to at most
//! [`REPLICATE_MAX_MESSAGE_BYTES`], is unreadable ([`Unreadable`]).

use crate::limits::{MESSAGE_BYTES, MESSAGE_EVENTS, REPLICATE_MAX_MESSAGE_BYTES};
use akledger::id::{hex, EventId};

/// The header naming how a message's payload is encoded; absent: as it is.
pub const ENCODING_HEADER: &str = "Ak-Encoding";
/// [`ENCODING_HEADER`]'s value for an LZ4 block after its decompressed length (`u32` LE).
pub const LZ4: &str = "lz4";

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

    /// The payload to send and its encoding ([`ENCODING_HEADER`]'s value; `None`: as it
    /// is): LZ4-compressed when that saves at least an eighth, else the payload itself.
    pub fn encoded(self) -> (Vec<u8>, Option<&'static str>) {
        let compressed = lz4_flex::block::compress_prepend_size(&self.payload);
        if compressed.len() <= self.payload.len() - self.payload.len() / 8 {
            (compressed, Some(LZ4))
        } else {
            (self.payload, None)
        }
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

/// Why a consumed message could not be read. Its events, if it held any, are not read; the
/// message is acknowledged all the same (delivered again, it would be no more readable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// [`ENCODING_HEADER`] names an encoding this build does not know.
    #[error("unknown encoding {0:?} (this build reads {LZ4:?} and unencoded messages)")]
    Encoding(String),
    /// The decompressed length it states is over [`REPLICATE_MAX_MESSAGE_BYTES`].
    #[error(
        "states {0} bytes decompressed, over the {REPLICATE_MAX_MESSAGE_BYTES} a message may hold"
    )]
    TooLarge(u64),
    /// Its bytes are not an LZ4 block of the length it states.
    #[error("damaged: its bytes are not an LZ4 block of the length it states")]
    Damaged,
}

/// A consumed message's payload, decoded as its `encoding` ([`ENCODING_HEADER`]'s value)
/// says, into `scratch` when it is compressed.
pub fn decoded<'a>(
    payload: &'a [u8],
    encoding: Option<&str>,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], Unreadable> {
    match encoding {
        None => Ok(payload),
        Some(LZ4) => {
            let (length, block) = payload
                .split_first_chunk::<4>()
                .ok_or(Unreadable::Damaged)?;
            let length = u32::from_le_bytes(*length);
            let bound = usize::try_from(length)
                .ok()
                .filter(|&n| n <= REPLICATE_MAX_MESSAGE_BYTES)
                .ok_or(Unreadable::TooLarge(length.into()))?;
            scratch.clear();
            scratch.resize(bound, 0);
            match lz4_flex::block::decompress_into(block, scratch) {
                Ok(n) if n == bound => Ok(scratch.as_slice()),
                _ => Err(Unreadable::Damaged),
            }
        }
        Some(other) => Err(Unreadable::Encoding(other.to_owned())),
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

    /// A message of `n` events shaped like the ledger's: keys, DIDs and ids that repeat,
    /// and a payload of text that does not.
    fn packed_like_events(n: u8) -> Packed {
        let mut packed = Packed::default();
        let mut noise = akledger::workload::SplitMix::new(7);
        for i in 0..n {
            let text: String = (0..200)
                .map(|_| char::from(b'A' + noise.below(26) as u8))
                .collect();
            let event = format!(
                "{{\"actor_id\":{{\"kind\":\"service\",\"service_id\":\"ak:did_core:key:z6MkvK4Mw3SZwbGonn14urTjcm78D1tXCcNhePLADYf4hgUZ\"}},\"kind\":\"ak.note.create\",\"payload\":{{\"n\":{i},\"text\":\"{text}\"}},\"realm_id\":\"ak:realm:Aht_XI48qQDmkcbZ9MqRLWc4JNOURcFpY24PrpSR1e7u\"}}"
            );
            packed.push(id(i), event.as_bytes());
        }
        packed
    }

    #[test]
    fn a_compressed_message_reads_back_as_the_events_packed() {
        let packed = packed_like_events(64);
        let plain = packed.payload.clone();
        let (sent, encoding) = packed.encoded();
        assert_eq!(encoding, Some(LZ4));
        assert!(sent.len() < plain.len() * 7 / 8, "{}", sent.len());
        let mut scratch = Vec::new();
        let read = decoded(&sent, encoding, &mut scratch).unwrap();
        assert_eq!(read, plain.as_slice());
        assert_eq!(events_of(read).count(), 64);
        // Unencoded: read as it is.
        assert_eq!(decoded(b"{}", None, &mut scratch), Ok(&b"{}"[..]));
        // What does not shrink by an eighth goes as it is.
        let mut short = Packed::default();
        short.push(id(1), b"{\"a\":1}");
        let plain = short.payload.clone();
        assert_eq!(short.encoded(), (plain, None));
    }

    #[test]
    fn a_message_that_does_not_decompress_is_unreadable_and_nothing_large_is_allocated() {
        let mut scratch = Vec::new();
        let packed = packed_like_events(8);
        let (sent, _) = packed.encoded();
        let unknown = decoded(&sent, Some("zstd"), &mut scratch);
        assert_eq!(unknown, Err(Unreadable::Encoding("zstd".into())));
        // A length over the bound is refused before any allocation.
        let mut huge = sent.to_vec();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            decoded(&huge, Some(LZ4), &mut scratch),
            Err(Unreadable::TooLarge(u32::MAX.into()))
        );
        assert!(scratch.capacity() <= REPLICATE_MAX_MESSAGE_BYTES);
        // A length other than what the block holds, a cut block, no length at all.
        let mut longer = sent.to_vec();
        let stated = u32::from_le_bytes(longer[..4].try_into().unwrap()) + 1;
        longer[..4].copy_from_slice(&stated.to_le_bytes());
        assert_eq!(
            decoded(&longer, Some(LZ4), &mut scratch),
            Err(Unreadable::Damaged)
        );
        let cut = &sent[..sent.len() - 5];
        assert_eq!(
            decoded(cut, Some(LZ4), &mut scratch),
            Err(Unreadable::Damaged)
        );
        assert_eq!(
            decoded(b"\x01", Some(LZ4), &mut scratch),
            Err(Unreadable::Damaged)
        );
        // Every cut and every flipped byte of a good message: an error or other bytes,
        // never a panic.
        for end in 0..sent.len() {
            let _ = decoded(&sent[..end], Some(LZ4), &mut scratch);
        }
        for at in 4..sent.len() {
            let mut flipped = sent.to_vec();
            flipped[at] ^= 0xff;
            let _ = decoded(&flipped, Some(LZ4), &mut scratch);
        }
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
