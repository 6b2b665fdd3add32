//! The sync wire format: versioned, length-prefixed frames and their payloads.
//!
//! ```text
//! frame   = version:u8 (=1) kind:u8 length:u32be payload[length]   (length ≤ MAX_SYNC_FRAME_BYTES)
//! ids     = count:u32be { id:33 bytes (suite byte + digest) }*      (count ≤ MAX_SYNC_IDS)
//! events  = count:u32be { length:u32be canonical-event-bytes }*
//! bits    = bitmap, bit i (LSB first) answers the i-th queried id
//! count   = u64be
//! ```
//!
//! Decoding never trusts a length: it is checked against the bytes present and the bounds
//! before anything is allocated.

use std::io::{Read, Write};
use std::ops::Range;
use std::sync::Arc;

use crate::id::EventId;
use crate::limits::{MAX_SYNC_FRAME_BYTES, MAX_SYNC_FRAME_EVENTS, MAX_SYNC_IDS, MAX_SYNC_REJECTED};

use super::SyncError;

/// The protocol version this build speaks.
pub const VERSION: u8 = 1;

/// Bytes of a frame header.
pub const HEADER_BYTES: usize = 6;

/// What a frame carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Opens a session: the sender's heads.
    Hello(Vec<EventId>),
    /// Does the receiver hold these events (admitted)?
    Have(Vec<EventId>),
    /// The answer to `Have`, one bit per queried id.
    Known(Vec<bool>),
    /// Asks for every event the receiver holds that these common events do not cover.
    Pull(Vec<EventId>),
    /// A batch of events, in an order the receiver can admit.
    Events(Events),
    /// Ends a stream of `Events`: how many events the stream held. As the reply to a pushed
    /// stream: how many of the receiver's pending events the stream released.
    Done(u64),
    /// Ends the session.
    Bye,
    /// The sender gives up; the text says why.
    Error(String),
    /// Before the `Done` that answers a pushed stream: the events of that stream admission
    /// refused, each as its index in the stream, its PROFILE code and why (at most
    /// [`MAX_SYNC_REJECTED`] of them; a text at most 500 characters). A peer that refused
    /// nothing sends none.
    Refused(Vec<(u64, String, String)>),
}

/// The type byte of a `hello` frame (docs/format.md).
pub const HELLO: u8 = 1;
const HAVE: u8 = 2;
const KNOWN: u8 = 3;
const PULL: u8 = 4;
const EVENTS: u8 = 5;
const DONE: u8 = 6;
const BYE: u8 = 7;
const ERROR: u8 = 8;
const REFUSED: u8 = 9;

/// Characters of a refusal's code or text kept.
const REFUSAL_TEXT_CHARS: usize = 500;

impl Frame {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Frame::Hello(_) => "hello",
            Frame::Have(_) => "have",
            Frame::Known(_) => "known",
            Frame::Pull(_) => "pull",
            Frame::Events(_) => "events",
            Frame::Done(_) => "done",
            Frame::Bye => "bye",
            Frame::Error(_) => "error",
            Frame::Refused(_) => "refused",
        }
    }

    /// Appends the payload to `out`; returns the kind byte.
    fn encode_into(&self, out: &mut Vec<u8>) -> u8 {
        match self {
            Frame::Hello(ids) => {
                encode_ids(ids, out);
                HELLO
            }
            Frame::Have(ids) => {
                encode_ids(ids, out);
                HAVE
            }
            Frame::Pull(ids) => {
                encode_ids(ids, out);
                PULL
            }
            Frame::Known(bits) => {
                let start = out.len();
                out.resize(start + bits.len().div_ceil(8), 0);
                for (i, bit) in bits.iter().enumerate() {
                    if let Some(byte) = out.get_mut(start + i / 8) {
                        *byte |= u8::from(*bit) << (i % 8);
                    }
                }
                KNOWN
            }
            Frame::Events(events) => {
                out.extend_from_slice(&events.payload);
                EVENTS
            }
            Frame::Done(n) => {
                out.extend_from_slice(&n.to_be_bytes());
                DONE
            }
            Frame::Bye => BYE,
            Frame::Error(text) => {
                out.extend_from_slice(text.as_bytes());
                ERROR
            }
            Frame::Refused(list) => {
                out.extend_from_slice(&len_u32(list.len()).to_be_bytes());
                for (index, code, why) in list {
                    out.extend_from_slice(&index.to_be_bytes());
                    for text in [code, why] {
                        let text: String = text.chars().take(REFUSAL_TEXT_CHARS).collect();
                        out.extend_from_slice(&len_u32(text.len()).to_be_bytes());
                        out.extend_from_slice(text.as_bytes());
                    }
                }
                REFUSED
            }
        }
    }

    /// Decodes a payload of `kind`; `expected_bits` is the length of the pending `Have`.
    /// An events frame keeps the payload: admission takes its events from there.
    fn decode(kind: u8, payload: Vec<u8>, expected_bits: usize) -> Result<Frame, SyncError> {
        if kind == EVENTS {
            let spans = event_spans(&mut Cursor { rest: &payload })?;
            return Ok(Frame::Events(Events {
                payload: Arc::new(payload),
                spans,
            }));
        }
        let mut r = Cursor { rest: &payload };
        let frame = match kind {
            HELLO => Frame::Hello(decode_ids(&mut r)?),
            HAVE => Frame::Have(decode_ids(&mut r)?),
            PULL => Frame::Pull(decode_ids(&mut r)?),
            KNOWN => {
                let bytes = r.take(expected_bits.div_ceil(8))?;
                let bits = (0..expected_bits)
                    .map(|i| bytes.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1))
                    .collect();
                Frame::Known(bits)
            }
            DONE => {
                let raw = r.take(8)?;
                let mut n = [0u8; 8];
                n.copy_from_slice(raw);
                Frame::Done(u64::from_be_bytes(n))
            }
            BYE => Frame::Bye,
            ERROR => {
                let text = String::from_utf8_lossy(r.take(r.rest.len())?).into_owned();
                Frame::Error(text.chars().take(500).collect())
            }
            REFUSED => {
                let count = r.count(MAX_SYNC_REJECTED, "a refused")?;
                let mut list = Vec::with_capacity(count);
                for _ in 0..count {
                    let raw = r.take(8)?;
                    let mut index = [0u8; 8];
                    index.copy_from_slice(raw);
                    let mut text = || -> Result<String, SyncError> {
                        let len = r.u32()? as usize;
                        let bytes = r.take(len)?;
                        Ok(String::from_utf8_lossy(bytes)
                            .chars()
                            .take(REFUSAL_TEXT_CHARS)
                            .collect())
                    };
                    let code = text()?;
                    let why = text()?;
                    list.push((u64::from_be_bytes(index), code, why));
                }
                Frame::Refused(list)
            }
            other => return Err(violation(format!("unknown frame kind {other}"))),
        };
        if !r.rest.is_empty() {
            return Err(violation(format!(
                "{} frame has {} trailing bytes",
                frame.name(),
                r.rest.len()
            )));
        }
        Ok(frame)
    }
}

/// Writes one frame; returns the bytes written.
pub fn write_frame(w: &mut impl Write, frame: &Frame) -> Result<u64, SyncError> {
    // The payload is encoded after room for the header, so header and payload go out in one
    // write without a copy: two writes would leave a small header segment for Nagle's
    // algorithm to hold back until the peer's delayed acknowledgement (tens of milliseconds
    // per frame on a stream without TCP_NODELAY).
    let mut bytes = vec![0u8; HEADER_BYTES];
    let kind = frame.encode_into(&mut bytes);
    send_laid_out(w, &mut bytes, kind, frame.name())
}

/// Fills in the header of a frame laid out after [`HEADER_BYTES`] of room in `bytes` and
/// writes it; returns the bytes written.
fn send_laid_out(
    w: &mut impl Write,
    bytes: &mut [u8],
    kind: u8,
    name: &str,
) -> Result<u64, SyncError> {
    let len = bytes.len() - HEADER_BYTES;
    if len > MAX_SYNC_FRAME_BYTES {
        return Err(SyncError::Misuse(format!(
            "a {name} frame of {len} bytes is over the {MAX_SYNC_FRAME_BYTES}-byte frame limit"
        )));
    }
    let [a, b, c, d] = len_u32(len).to_be_bytes();
    if let Some(header) = bytes.get_mut(..HEADER_BYTES) {
        header.copy_from_slice(&[VERSION, kind, a, b, c, d]);
    }
    w.write_all(bytes).map_err(SyncError::io)?;
    w.flush().map_err(SyncError::io)?;
    Ok(bytes.len() as u64)
}

/// An `Events` frame laid out as its events are added: each event's bytes are copied once,
/// into the frame, and the frame goes out in one write ([`EventsFrame::write`]), as
/// [`write_frame`] would send `Frame::Events` of the same events.
pub struct EventsFrame {
    /// Header, count and the events so far.
    bytes: Vec<u8>,
    count: usize,
}

impl Default for EventsFrame {
    fn default() -> Self {
        EventsFrame {
            bytes: vec![0u8; HEADER_BYTES + 4],
            count: 0,
        }
    }
}

impl EventsFrame {
    /// Events in the frame.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the frame holds no event.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of the events so far, length prefixes included.
    pub fn payload_len(&self) -> usize {
        self.bytes.len() - HEADER_BYTES
    }

    /// Adds one event.
    pub fn push(&mut self, event: &[u8]) {
        put_event(&mut self.bytes, event);
        self.count += 1;
    }

    /// Writes the frame and empties it, its buffer kept for the next frame's events;
    /// returns the bytes written.
    pub fn write(&mut self, w: &mut impl Write) -> Result<u64, SyncError> {
        put_count(self.bytes.get_mut(HEADER_BYTES..), self.count);
        let written = send_laid_out(w, &mut self.bytes, EVENTS, "events");
        self.bytes.truncate(HEADER_BYTES + 4);
        self.count = 0;
        written
    }
}

/// Appends one event as an events payload carries it (its length, then its bytes); returns
/// where its bytes are.
fn put_event(out: &mut Vec<u8>, event: &[u8]) -> Range<usize> {
    out.extend_from_slice(&len_u32(event.len()).to_be_bytes());
    let at = out.len();
    out.extend_from_slice(event);
    at..out.len()
}

/// Writes an events payload's count over the four bytes it starts with.
fn put_count(payload: Option<&mut [u8]>, count: usize) {
    if let Some(at) = payload.and_then(|p| p.get_mut(..4)) {
        at.copy_from_slice(&len_u32(count).to_be_bytes());
    }
}

/// Reads one frame (`expected_bits`: the length of the `Have` this may answer); returns it
/// with the bytes read. A clean end of stream before a header is `Ok(None)`.
pub fn read_frame(
    r: &mut impl Read,
    expected_bits: usize,
) -> Result<Option<(Frame, u64)>, SyncError> {
    match read_header(r)? {
        None => Ok(None),
        Some(header) => read_payload(r, header, expected_bits).map(Some),
    }
}

/// A frame's header: its kind and its payload's length (checked against the frame limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    kind: u8,
    /// The payload's length in bytes.
    pub len: usize,
}

/// Reads a frame's header; a clean end of stream before it is `Ok(None)`.
pub fn read_header(r: &mut impl Read) -> Result<Option<Header>, SyncError> {
    let mut header = [0u8; HEADER_BYTES];
    let mut got = 0;
    while got < HEADER_BYTES {
        let n = r
            .read(header.get_mut(got..).unwrap_or_default())
            .map_err(SyncError::io)?;
        if n == 0 {
            if got == 0 {
                return Ok(None);
            }
            return Err(SyncError::Disconnected);
        }
        got += n;
    }
    let [version, kind, a, b, c, d] = header;
    if version != VERSION {
        return Err(violation(format!(
            "the peer speaks sync protocol version {version}; this build speaks version {VERSION}"
        )));
    }
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    if len > MAX_SYNC_FRAME_BYTES {
        return Err(violation(format!(
            "the peer sent a frame of {len} bytes, over the {MAX_SYNC_FRAME_BYTES}-byte limit"
        )));
    }
    Ok(Some(Header { kind, len }))
}

/// Reads and decodes the payload `header` announced; returns the frame with the bytes read
/// (header included). The buffer is allocated at the announced length (bounded by
/// [`MAX_SYNC_FRAME_BYTES`], and by the receiver's budget) but written only as bytes
/// arrive, so a peer that announces a large frame and sends little of it holds address
/// space, not memory.
pub fn read_payload(
    r: &mut impl Read,
    header: Header,
    expected_bits: usize,
) -> Result<(Frame, u64), SyncError> {
    let Header { kind, len } = header;
    let mut payload = Vec::with_capacity(len);
    while payload.len() < len {
        let got = r
            .by_ref()
            .take((len - payload.len()) as u64)
            .read_to_end(&mut payload)
            .map_err(SyncError::io)?;
        if got == 0 {
            return Err(SyncError::Disconnected);
        }
    }
    let frame = Frame::decode(kind, payload, expected_bits)?;
    Ok((frame, (HEADER_BYTES + len) as u64))
}

/// Where each event of an events payload is (the count checked against the limit, each
/// length against the bytes present, nothing left over).
fn event_spans(r: &mut Cursor<'_>) -> Result<Vec<Range<usize>>, SyncError> {
    let start = r.rest.len();
    let count = r.count(MAX_SYNC_FRAME_EVENTS, "an events")?;
    let mut spans = Vec::with_capacity(count);
    for _ in 0..count {
        let len = r.u32()? as usize;
        let at = start - r.rest.len();
        r.take(len)?;
        spans.push(at..at + len);
    }
    if !r.rest.is_empty() {
        return Err(violation(format!(
            "events frame has {} trailing bytes",
            r.rest.len()
        )));
    }
    Ok(spans)
}

/// The events of an `Events` frame, left where the frame carries them: its payload (as
/// the wire lays it out) and each event's place in it. Admission takes them as they are
/// ([`crate::ledger::Pipeline::push_spans`]), no event copied out.
#[derive(Clone, Debug)]
pub struct Events {
    payload: Arc<Vec<u8>>,
    spans: Vec<Range<usize>>,
}

impl Events {
    /// A frame's events made of `events`.
    pub fn of<'e>(events: impl IntoIterator<Item = &'e [u8]>) -> Events {
        let mut payload = vec![0u8; 4];
        let spans: Vec<Range<usize>> = events
            .into_iter()
            .map(|event| put_event(&mut payload, event))
            .collect();
        put_count(Some(&mut payload), spans.len());
        Events {
            payload: Arc::new(payload),
            spans,
        }
    }

    /// How many events.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Each event's bytes, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.spans
            .iter()
            .map(|span| self.payload.get(span.clone()).unwrap_or_default())
    }

    /// Bytes of the events (length prefixes left out).
    pub fn bytes(&self) -> usize {
        self.spans.iter().map(|span| span.len()).sum()
    }

    /// The payload and each event's span in it.
    pub fn into_parts(self) -> (Arc<Vec<u8>>, Vec<Range<usize>>) {
        (self.payload, self.spans)
    }
}

impl PartialEq for Events {
    fn eq(&self, other: &Events) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Events {}

fn violation(text: String) -> SyncError {
    SyncError::Protocol(text)
}

/// Lengths here are bounded by the frame limit, far below `u32::MAX`.
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn encode_ids(ids: &[EventId], out: &mut Vec<u8>) {
    out.reserve(4 + ids.len() * 33);
    out.extend_from_slice(&len_u32(ids.len()).to_be_bytes());
    for id in ids {
        out.extend_from_slice(id.bytes());
    }
}

fn decode_ids(r: &mut Cursor<'_>) -> Result<Vec<EventId>, SyncError> {
    let count = r.u32()? as usize;
    if count > MAX_SYNC_IDS {
        return Err(violation(format!(
            "the peer sent {count} ids in one frame, over the {MAX_SYNC_IDS}-id limit"
        )));
    }
    let mut ids = Vec::with_capacity(count.min(r.rest.len() / 33));
    for _ in 0..count {
        let mut raw = [0u8; 33];
        raw.copy_from_slice(r.take(33)?);
        let id = EventId::from_bytes(&raw)
            .map_err(|e| violation(format!("the peer sent a malformed id: {e}")))?;
        ids.push(id);
    }
    Ok(ids)
}

/// A bounds-checked reader over a payload.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SyncError> {
        if n > self.rest.len() {
            return Err(violation(format!(
                "a frame ends {} bytes early",
                n - self.rest.len()
            )));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    /// A count of events, at most `limit` (`frame` names the frame in the error).
    fn count(&mut self, limit: usize, frame: &str) -> Result<usize, SyncError> {
        let count = self.u32()? as usize;
        if count > limit {
            return Err(violation(format!(
                "{frame} frame of {count} events is over the {limit}-event limit"
            )));
        }
        Ok(count)
    }

    fn u32(&mut self) -> Result<u32, SyncError> {
        let raw = self.take(4)?;
        let mut n = [0u8; 4];
        n.copy_from_slice(raw);
        Ok(u32::from_be_bytes(n))
    }
}
