//! The stub connection (seed 002: "an I/O reader and writer to send messages to the agent
//! from a local file"): follows an input file as it grows and appends to an output file,
//! one record per envelope in the AEA line format ([`super::stub_format`]).
//!
//! The input file is read from a byte position the runtime gives ([`Connection::resume_at`],
//! from the ledger) and is never truncated or rewritten; a file that shrinks below that
//! position (rotated or truncated by someone else) is read again from its start. Malformed
//! records are logged to stderr and skipped, as the reference does. The output file is
//! only ever appended to, except after a crash: [`Connection::already_sent`] cuts a torn
//! last record so that the rest is written once.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::envelope::{Connection, Envelope, Received};
use super::stub_format::{decode_record, encode_record, split_records};
use crate::limits::MAX_STUB_READ_BYTES;

/// The stub connection over two files.
#[derive(Debug)]
pub struct StubConnection {
    input_path: PathBuf,
    input: File,
    /// Input position of `pending`'s first byte.
    position: u64,
    /// Bytes read but not yet part of a complete record.
    pending: Vec<u8>,
    output_path: PathBuf,
    output: File,
}

impl StubConnection {
    /// Opens (creating when missing) `input` for reading and `output` for appending.
    pub fn open(input: &Path, output: &Path) -> std::io::Result<StubConnection> {
        let input_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(input)?;
        let output_file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(output)?;
        Ok(StubConnection {
            input_path: input.to_path_buf(),
            input: input_file,
            position: 0,
            pending: Vec::new(),
            output_path: output.to_path_buf(),
            output: output_file,
        })
    }

    /// The input file.
    pub fn input_path(&self) -> &Path {
        &self.input_path
    }

    /// The output file.
    pub fn output_path(&self) -> &Path {
        &self.output_path
    }
}

impl Connection for StubConnection {
    fn receive(&mut self) -> std::io::Result<Vec<Received>> {
        let len = self.input.metadata()?.len();
        let read_from = self.position + self.pending.len() as u64;
        if len < read_from {
            eprintln!(
                "akledger: sidecar: {} shrank below byte {read_from}; reading it again from its start",
                self.input_path.display()
            );
            self.position = 0;
            self.pending.clear();
        }
        let read_from = self.position + self.pending.len() as u64;
        self.input.seek(SeekFrom::Start(read_from))?;
        let before = self.pending.len();
        (&mut self.input)
            .take(MAX_STUB_READ_BYTES as u64)
            .read_to_end(&mut self.pending)?;
        if self.pending.len() == before {
            return Ok(Vec::new());
        }
        let split = split_records(&self.pending);
        let mut out = Vec::with_capacity(split.records.len());
        for range in split.records {
            let start = self.position + range.start as u64;
            let end = self.position + range.end as u64;
            let record = self.pending.get(range).unwrap_or_default();
            match decode_record(record) {
                Ok(envelope) => out.push(Received {
                    envelope,
                    start,
                    end,
                }),
                Err(why) => eprintln!(
                    "akledger: sidecar: bad formatted input at bytes {start}..{end} of {}: {why}; skipped",
                    self.input_path.display()
                ),
            }
        }
        for range in split.skipped {
            eprintln!(
                "akledger: sidecar: bad formatted input at bytes {}..{} of {}: not a record; skipped",
                self.position + range.start as u64,
                self.position + range.end as u64,
                self.input_path.display()
            );
        }
        self.pending.drain(..split.consumed);
        self.position += split.consumed as u64;
        Ok(out)
    }

    fn input_position(&self) -> u64 {
        self.position
    }

    fn resume_at(&mut self, position: u64) -> std::io::Result<()> {
        self.position = position;
        self.pending.clear();
        Ok(())
    }

    fn send(&mut self, envelope: &Envelope) -> std::io::Result<()> {
        self.output.write_all(&encode_record(envelope))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.output.sync_data()
    }

    fn output_position(&mut self) -> std::io::Result<u64> {
        Ok(self.output.metadata()?.len())
    }

    fn already_sent(&mut self, from: u64, expected: &[Envelope]) -> std::io::Result<usize> {
        let len = self.output.metadata()?.len();
        if len <= from {
            return Ok(0);
        }
        let mut written = Vec::new();
        self.output.seek(SeekFrom::Start(from))?;
        (&mut self.output)
            .take(len - from)
            .read_to_end(&mut written)?;
        let mut matched = 0;
        let mut at = 0;
        for envelope in expected {
            let record = encode_record(envelope);
            if written.get(at..at + record.len()) != Some(record.as_slice()) {
                break;
            }
            at += record.len();
            matched += 1;
        }
        if at < written.len() {
            eprintln!(
                "akledger: sidecar: cutting {} bytes of an unfinished write from the end of {}",
                written.len() - at,
                self.output_path.display()
            );
            self.output.set_len(from + at as u64)?;
            self.output.sync_data()?;
        }
        Ok(matched)
    }
}
