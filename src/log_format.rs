//! Log encodings (PROFILE §9): JSON Lines and CBOR sequences of canonical events.
//!
//! Generic over `Read`/`Write`: this module frames items, it never opens files. Each item is
//! returned with its 0-based index and byte offset so errors can name where they are.
//!
//! CBOR sequence items are definite-length byte strings (major type 2). Only the item header
//! is decoded here; its length is bounded by [`MAX_EVENT_BYTES`] before anything is
//! allocated, so a hostile length cannot exhaust memory. A JSON Lines line is likewise read
//! at most [`MAX_EVENT_BYTES`] at a time; a longer one is reported and skipped without
//! being held. To append a whole log to a ledger, see
//! [`Ledger::append_log`](crate::Ledger::append_log).
//!
//! # Examples
//!
//! ```
//! use akledger::log_format::{write_item, LogFormat, LogReader};
//! use akledger::Code;
//!
//! // Write two items as a CBOR sequence, then read them back, detecting the format.
//! let mut log = Vec::new();
//! write_item(&mut log, LogFormat::CborSeq, br#"{"a":1}"#)?;
//! write_item(&mut log, LogFormat::CborSeq, br#"{"b":2}"#)?;
//! let reader = LogReader::detect(&log[..])??;
//! assert_eq!(reader.format(), LogFormat::CborSeq);
//! let items: Vec<_> = reader.collect::<Result<_, _>>()?;
//! assert_eq!((items[1].index, items[1].offset), (1, 8));
//! assert_eq!(items[1].bytes.as_deref(), Ok(&br#"{"b":2}"#[..]));
//!
//! // In JSON Lines, a bad line is an item with its rejection; reading goes on.
//! let reader = LogReader::detect(&b"{}\n\n{}\n"[..])??;
//! let codes: Vec<_> = reader.map(|i| i.map(|i| i.bytes.err().map(|r| r.code()))).collect::<Result<_, _>>()?;
//! assert_eq!(codes, [None, Some(Code::SchemaViolation), None]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, BufRead, Read, Write};

use akledger_core::error::schema;

use crate::error::{Code, Rejection};
use crate::limits::MAX_EVENT_BYTES;

/// A log encoding.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum LogFormat {
    /// One canonical event per line.
    JsonLines,
    /// RFC 8742 sequence of CBOR byte strings, each one canonical event.
    CborSeq,
}

impl LogFormat {
    /// Guesses the format from the first byte: `{` is JSON Lines, a CBOR byte-string header
    /// (0x40..=0x5b) is a CBOR sequence. An empty log reads as JSON Lines.
    pub fn detect(first: Option<u8>) -> Result<Self, Rejection> {
        match first {
            None | Some(b'{') => Ok(LogFormat::JsonLines),
            Some(0x40..=0x5b) => Ok(LogFormat::CborSeq),
            Some(b) => Err(schema(format!(
                "log starts with byte 0x{b:02x}: neither JSON Lines nor a CBOR sequence"
            ))),
        }
    }
}

/// One framed item of a log; its bytes are a `Vec<u8>` from the iterator, where they are
/// in the caller's buffer from [`LogReader::next_into`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LogItem<B = Vec<u8>> {
    /// 0-based position of the item in the log.
    pub index: usize,
    /// Byte offset of the item's start.
    pub offset: u64,
    /// The event bytes, or why the item could not even be framed.
    pub bytes: Result<B, Rejection>,
}

/// Reads the items of a log, in order.
pub struct LogReader<R> {
    reader: R,
    format: LogFormat,
    index: usize,
    offset: u64,
    done: bool,
    /// The item being read: one buffer for every item, so reading a log allocates only
    /// what each item is handed out in.
    item: Vec<u8>,
}

/// Room the item buffer keeps between items.
const ITEM_ROOM: usize = 64 * 1024;

impl<R: BufRead> LogReader<R> {
    /// A reader that detects the format from the first byte.
    pub fn detect(mut reader: R) -> io::Result<Result<Self, Rejection>> {
        let first = reader.fill_buf()?.first().copied();
        Ok(LogFormat::detect(first).map(|format| LogReader::new(reader, format)))
    }

    /// A reader of a known format.
    pub fn new(reader: R, format: LogFormat) -> Self {
        LogReader {
            reader,
            format,
            index: 0,
            offset: 0,
            done: false,
            item: Vec::new(),
        }
    }

    /// The format being read.
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// Bytes consumed so far: where the next item starts.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next item with its bytes appended to `buffer`, and where they are in it: what
    /// [`crate::Ledger::append_log`] does, one buffer a batch (no allocation per item).
    pub fn next_into(
        &mut self,
        buffer: &mut Vec<u8>,
    ) -> Option<io::Result<LogItem<std::ops::Range<usize>>>> {
        self.next_with(|bytes| {
            let start = buffer.len();
            buffer.extend_from_slice(bytes);
            start..buffer.len()
        })
    }

    /// Frames the next item into `self.item` and hands it out through `keep`.
    fn next_with<B>(&mut self, keep: impl FnOnce(&[u8]) -> B) -> Option<io::Result<LogItem<B>>> {
        if self.done {
            return None;
        }
        let offset = self.offset;
        let next = match self.format {
            LogFormat::JsonLines => self.next_line(),
            LogFormat::CborSeq => self.next_cbor(),
        };
        match next {
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(None) => None,
            Ok(Some(framed)) => {
                let index = self.index;
                self.index += 1;
                let bytes = framed.map(|()| keep(&self.item));
                // A long item's room is given back, so that one huge item does not pin a
                // megabyte for the rest of the log.
                self.item.shrink_to(ITEM_ROOM);
                Some(Ok(LogItem {
                    index,
                    offset,
                    bytes,
                }))
            }
        }
    }

    fn next_line(&mut self) -> io::Result<Option<Result<(), Rejection>>> {
        let line = &mut self.item;
        line.clear();
        let limit = (MAX_EVENT_BYTES + 2) as u64;
        let n = (&mut self.reader).take(limit).read_until(b'\n', line)?;
        if n == 0 {
            return Ok(None);
        }
        self.offset += n as u64;
        if line.last() != Some(&b'\n') && n as u64 == limit {
            // Skip the rest of an over-long line so the next item starts cleanly, a
            // buffer at a time: its length costs no memory.
            line.clear();
            self.offset += self.skip_line()?;
            return Ok(Some(Err(too_large())));
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        // Two common accidents get their own message rather than "not canonical JSON".
        if line.is_empty() {
            return Ok(Some(Err(schema(
                "blank line: a JSON Lines log holds exactly one event per line",
            ))));
        }
        if line.last() == Some(&b'\r') {
            return Ok(Some(Err(schema(
                "line ends with CR (CRLF line endings): JSON Lines logs end lines with LF alone",
            ))));
        }
        Ok(Some(Ok(())))
    }

    /// Consumes input up to and including the next newline (or to the end); returns the
    /// bytes consumed.
    fn skip_line(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            let (used, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.reader.consume(used);
            skipped += used as u64;
            if done {
                return Ok(skipped);
            }
        }
    }

    fn next_cbor(&mut self) -> io::Result<Option<Result<(), Rejection>>> {
        let mut head = [0u8; 1];
        if self.reader.read(&mut head)? == 0 {
            return Ok(None);
        }
        let [initial] = head;
        let extra = match initial {
            0x40..=0x57 => 0,
            0x58 => 1,
            0x59 => 2,
            0x5a => 4,
            0x5b => 8,
            _ => {
                self.done = true;
                return Ok(Some(Err(schema(format!(
                    "CBOR item header 0x{initial:02x} is not a definite-length byte string"
                )))));
            }
        };
        let mut len_bytes = [0u8; 8];
        let tail = len_bytes.get_mut(8 - extra..).unwrap_or_default();
        if let Err(e) = self.reader.read_exact(tail) {
            return truncated(e, &mut self.done);
        }
        let len = if extra == 0 {
            u64::from(initial & 0x1f)
        } else {
            u64::from_be_bytes(len_bytes)
        };
        self.offset += 1 + extra as u64;
        if len > MAX_EVENT_BYTES as u64 {
            self.done = true;
            return Ok(Some(Err(too_large())));
        }
        self.item.clear();
        self.item.resize(len as usize, 0);
        if let Err(e) = self.reader.read_exact(&mut self.item) {
            return truncated(e, &mut self.done);
        }
        self.offset += len;
        Ok(Some(Ok(())))
    }
}

fn too_large() -> Rejection {
    Rejection::new(
        Code::PayloadTooLarge,
        format!("log item larger than {MAX_EVENT_BYTES} bytes"),
    )
}

fn truncated(e: io::Error, done: &mut bool) -> io::Result<Option<Result<(), Rejection>>> {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        *done = true;
        Ok(Some(Err(schema("log ends inside a CBOR item"))))
    } else {
        Err(e)
    }
}

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = io::Result<LogItem>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(<[u8]>::to_vec)
    }
}

/// Writes one event to a log in `format`.
pub fn write_item(out: &mut impl Write, format: LogFormat, event: &[u8]) -> io::Result<()> {
    match format {
        LogFormat::JsonLines => {
            out.write_all(event)?;
            out.write_all(b"\n")
        }
        LogFormat::CborSeq => {
            let len = event.len() as u64;
            let mut head = Vec::with_capacity(9);
            match len {
                0..=23 => head.push(0x40 | len as u8),
                24..=0xff => head.extend_from_slice(&[0x58, len as u8]),
                0x100..=0xffff => {
                    head.push(0x59);
                    head.extend_from_slice(&(len as u16).to_be_bytes());
                }
                0x1_0000..=0xffff_ffff => {
                    head.push(0x5a);
                    head.extend_from_slice(&(len as u32).to_be_bytes());
                }
                _ => {
                    head.push(0x5b);
                    head.extend_from_slice(&len.to_be_bytes());
                }
            }
            out.write_all(&head)?;
            out.write_all(event)
        }
    }
}
