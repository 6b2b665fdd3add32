//! The stub connection (seed 002: "an I/O reader and writer to send messages to the agent
//! from a local file"), speaking to AEA's stub connection through two files, one record per
//! envelope in the AEA line format ([`super::stub_format`]).
//!
//! **The input** (the agent's output file) is followed by identity, as `tail -F` does:
//! - it is read under a shared `flock`, the lock AEA's `write_envelope` takes exclusively
//!   for every record, so a record is never read half written (a busy lock is tried again
//!   at the next poll);
//! - a file that now stands at the path in place of the one being read (rotated, replaced)
//!   is switched to once the old one is read to its end; a file that shrank below the
//!   position (truncated: the agent reopens its output with `wb+` when it restarts) or
//!   whose bytes before the position changed (rewritten) is read again from its start;
//! - the position the runtime resumes at after a restart ([`Connection::resume_at`]) names
//!   the file and the bytes just before it ([`InputCursor`]), and one that no longer names
//!   what the path holds means reading from its start.
//!
//! **The output** (the agent's input file) depends on who reads it ([`OutputMode`]):
//! - `Handoff`, the AEA stub's protocol: the agent reads its input whole under the lock
//!   and empties it, and cuts what it read at the last comma, so two records written before
//!   it reads merge into one. A record is therefore written, under the exclusive lock, only
//!   when the file is empty: one at a time, each once the agent took the one before.
//! - `Append`: every record is appended (for a file nobody empties, to be read later).
//!
//! Malformed records are logged to stderr and skipped, as the reference does.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use super::envelope::{Connection, Envelope, FileIdentity, InputCursor, Received};
use super::stub_format::{decode_record, encode_record, split_records};
use crate::limits::MAX_STUB_READ_BYTES;
use akledger::id::DigestSuite;

/// Bytes before a position that identify it (see [`FileIdentity::guard`]).
const GUARD_BYTES: usize = 64;

/// How the output file is written.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum OutputMode {
    /// One record at a time, each when the reader has emptied the file (AEA's stub).
    #[default]
    Handoff,
    /// Every record appended (a file nobody empties).
    Append,
}

/// The stub connection over two files.
#[derive(Debug)]
pub struct StubConnection {
    input: Follower,
    output_path: PathBuf,
    output: File,
    mode: OutputMode,
    /// Records queued and not written yet, with their tokens.
    queue: VecDeque<(u64, Vec<u8>)>,
    /// Tokens of records appended and not handed out by `deliver` yet: an appended output
    /// takes every queued record in one write, under one lock.
    appended: VecDeque<u64>,
}

/// The input file, followed by identity.
#[derive(Debug)]
struct Follower {
    path: PathBuf,
    file: File,
    device: u64,
    inode: u64,
    /// Input position of `pending`'s first byte.
    position: u64,
    /// The (up to [`GUARD_BYTES`]) bytes just before `position`.
    tail: Vec<u8>,
    /// Bytes read but not yet part of a complete record.
    pending: Vec<u8>,
}

fn guard_of(tail: &[u8]) -> u64 {
    let digest = DigestSuite::Blake3.digest(tail);
    let mut first = [0; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    u64::from_le_bytes(first)
}

impl Follower {
    fn open(path: &Path) -> std::io::Result<Follower> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let meta = file.metadata()?;
        Ok(Follower {
            path: path.to_path_buf(),
            file,
            device: meta.dev(),
            inode: meta.ino(),
            position: 0,
            tail: Vec::new(),
            pending: Vec::new(),
        })
    }

    fn cursor(&self) -> InputCursor {
        InputCursor {
            offset: self.position,
            file: Some(FileIdentity {
                device: self.device,
                inode: self.inode,
                guard: guard_of(&self.tail),
            }),
        }
    }

    /// The bytes the file holds just before `position`, up to [`GUARD_BYTES`].
    fn bytes_before(&self, position: u64) -> std::io::Result<Vec<u8>> {
        let len = position.min(GUARD_BYTES as u64);
        let mut bytes = vec![0; len as usize];
        self.file.read_exact_at(&mut bytes, position - len)?;
        Ok(bytes)
    }

    /// Starts over at the beginning of the file.
    fn restart(&mut self, why: &str) {
        if self.position > 0 || !self.pending.is_empty() {
            eprintln!(
                "akledger: sidecar: {} {why}; reading it from its start",
                self.path.display()
            );
        }
        self.position = 0;
        self.tail.clear();
        self.pending.clear();
    }

    /// Follows a rotation or replacement: `Some(new)` when the path now names another file.
    fn replaced(&self) -> Option<Follower> {
        let meta = std::fs::metadata(&self.path).ok()?;
        if (meta.dev(), meta.ino()) == (self.device, self.inode) {
            return None;
        }
        Follower::open(&self.path).ok()
    }

    /// Checks that the file still holds what was read (not truncated or rewritten).
    fn check(&mut self) -> std::io::Result<()> {
        let len = self.file.metadata()?.len();
        let read_to = self.position + self.pending.len() as u64;
        if len < read_to {
            self.restart("shrank below what was read (truncated)");
        } else if self.position > 0 && self.bytes_before(self.position)? != self.tail {
            self.restart("no longer holds what was read (rewritten)");
        }
        Ok(())
    }

    /// Reads what was appended, under a shared lock (nothing when a writer holds it).
    fn read_more(&mut self) -> std::io::Result<bool> {
        if fs2::FileExt::try_lock_shared(&self.file).is_err() {
            return Ok(false);
        }
        let read_from = self.position + self.pending.len() as u64;
        let before = self.pending.len();
        let read = self.file.seek(SeekFrom::Start(read_from)).and_then(|_| {
            (&mut self.file)
                .take(MAX_STUB_READ_BYTES as u64)
                .read_to_end(&mut self.pending)
        });
        let unlocked = fs2::FileExt::unlock(&self.file);
        read?;
        unlocked?;
        Ok(self.pending.len() > before)
    }

    /// The complete records read so far, leaving an unfinished one pending.
    fn take_records(&mut self) -> Vec<Received> {
        let split = split_records(&self.pending);
        let mut out = Vec::with_capacity(split.records.len());
        for range in split.records {
            let start = self.position + range.start as u64;
            let end = self.position + range.end as u64;
            let record = self.pending.get(range.clone()).unwrap_or_default();
            match decode_record(record) {
                Ok(envelope) => out.push((envelope, start, range.end)),
                Err(why) => eprintln!(
                    "akledger: sidecar: bad formatted input at bytes {start}..{end} of {}: {why}; skipped",
                    self.path.display()
                ),
            }
        }
        for range in split.skipped {
            eprintln!(
                "akledger: sidecar: bad formatted input at bytes {}..{} of {}: not a record; skipped",
                self.position + range.start as u64,
                self.position + range.end as u64,
                self.path.display()
            );
        }
        // Each record's end cursor names the bytes before it: the record's own last bytes.
        let mut received = Vec::with_capacity(out.len());
        for (envelope, start, end_in_pending) in out {
            let before = end_in_pending.saturating_sub(GUARD_BYTES);
            let tail = self.tail_through(before, end_in_pending);
            received.push(Received {
                envelope,
                start,
                end: InputCursor {
                    offset: self.position + end_in_pending as u64,
                    file: Some(FileIdentity {
                        device: self.device,
                        inode: self.inode,
                        guard: guard_of(&tail),
                    }),
                },
            });
        }
        self.tail = self.tail_through(split.consumed.saturating_sub(GUARD_BYTES), split.consumed);
        self.pending.drain(..split.consumed);
        self.position += split.consumed as u64;
        received
    }

    /// The (up to [`GUARD_BYTES`]) bytes before `end` of `pending`, from `from` on, with the
    /// old tail in front when `pending` holds fewer.
    fn tail_through(&self, from: usize, end: usize) -> Vec<u8> {
        let mut tail = self.tail.clone();
        tail.extend_from_slice(self.pending.get(from..end).unwrap_or_default());
        let cut = tail.len().saturating_sub(GUARD_BYTES);
        tail.drain(..cut);
        tail
    }
}

impl StubConnection {
    /// Opens (creating when missing) `input` for reading and `output` for writing, the output
    /// in [`OutputMode::Handoff`].
    pub fn open(input: &Path, output: &Path) -> std::io::Result<StubConnection> {
        StubConnection::open_with(input, output, OutputMode::Handoff)
    }

    /// Opens (creating when missing) `input` for reading and `output` for writing in `mode`.
    pub fn open_with(
        input: &Path,
        output: &Path,
        mode: OutputMode,
    ) -> std::io::Result<StubConnection> {
        let output_file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(output)?;
        Ok(StubConnection {
            input: Follower::open(input)?,
            output_path: output.to_path_buf(),
            output: output_file,
            mode,
            queue: VecDeque::new(),
            appended: VecDeque::new(),
        })
    }

    /// The input file.
    pub fn input_path(&self) -> &Path {
        &self.input.path
    }

    /// The output file.
    pub fn output_path(&self) -> &Path {
        &self.output_path
    }

    /// How the output is written.
    pub fn output_mode(&self) -> OutputMode {
        self.mode
    }
}

impl Connection for StubConnection {
    fn kind(&self) -> &'static str {
        "stub"
    }

    fn describe(&self) -> String {
        format!(
            "following {}, writing {} ({})",
            self.input.path.display(),
            self.output_path.display(),
            match self.mode {
                OutputMode::Handoff => "handoff",
                OutputMode::Append => "append",
            }
        )
    }

    fn receive(&mut self) -> std::io::Result<Vec<Received>> {
        let mut received = Vec::new();
        if let Some(newer) = self.input.replaced() {
            // Finish the old file first: what its writer added before the switch.
            self.input.read_more()?;
            received = self.input.take_records();
            if !self.input.pending.is_empty() {
                eprintln!(
                    "akledger: sidecar: {} was replaced; {} bytes of an unfinished record in the old file dropped",
                    self.input.path.display(),
                    self.input.pending.len()
                );
            }
            self.input = newer;
        }
        self.input.check()?;
        if self.input.read_more()? {
            received.extend(self.input.take_records());
        }
        Ok(received)
    }

    fn input_cursor(&self) -> InputCursor {
        self.input.cursor()
    }

    fn resume_at(&mut self, cursor: &InputCursor) -> std::io::Result<()> {
        let mut input = Follower::open(&self.input.path)?;
        let len = input.file.metadata()?.len();
        let same = match cursor.file {
            _ if cursor.offset > len => false,
            None => true,
            Some(f) => {
                (f.device, f.inode) == (input.device, input.inode)
                    && guard_of(&input.bytes_before(cursor.offset)?) == f.guard
            }
        };
        if same {
            input.position = cursor.offset;
            input.tail = input.bytes_before(cursor.offset)?;
        } else if cursor.offset > 0 {
            eprintln!(
                "akledger: sidecar: {} is not the file the ledger last read up to byte {} (replaced, truncated or rewritten since); reading it from its start",
                input.path.display(),
                cursor.offset
            );
        }
        self.input = input;
        Ok(())
    }

    fn send(&mut self, envelope: &Envelope, token: u64) -> std::io::Result<()> {
        self.queue.push_back((token, encode_record(envelope)));
        Ok(())
    }

    fn deliver(&mut self) -> std::io::Result<Option<u64>> {
        if let Some(token) = self.appended.pop_front() {
            return Ok(Some(token));
        }
        if self.queue.is_empty() || fs2::FileExt::try_lock_exclusive(&self.output).is_err() {
            return Ok(None);
        }
        let written = match self.mode {
            OutputMode::Append => self.append_queued().map(|()| self.appended.pop_front()),
            OutputMode::Handoff => self.write_next(),
        };
        let unlocked = fs2::FileExt::unlock(&self.output);
        let written = written?;
        unlocked?;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.mode {
            OutputMode::Append => self.output.sync_data(),
            // What the reader empties is not kept.
            OutputMode::Handoff => Ok(()),
        }
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }

    fn output_position(&mut self) -> std::io::Result<u64> {
        match self.mode {
            OutputMode::Append => Ok(self.output.metadata()?.len()),
            OutputMode::Handoff => Ok(0),
        }
    }

    fn already_sent(&mut self, from: u64, expected: &[Envelope]) -> std::io::Result<usize> {
        if self.mode == OutputMode::Handoff {
            return self.in_flight(expected.first());
        }
        let len = self.output.metadata()?.len();
        if len <= from {
            return Ok(0);
        }
        let written = self.output_from(from, len)?;
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
            self.cut_output(from + at as u64, written.len() - at)?;
        }
        Ok(matched)
    }
}

impl StubConnection {
    /// In a hand-off the reader empties the file, so it holds at most the one record in
    /// flight: 1 when that is `first` (written, not read yet); a torn start of it is cut.
    /// Anything else (the reader has not emptied the file yet) is left alone.
    fn in_flight(&mut self, first: Option<&Envelope>) -> std::io::Result<usize> {
        let len = self.output.metadata()?.len();
        let (Some(first), true) = (first, len > 0) else {
            return Ok(0);
        };
        let written = self.output_from(0, len)?;
        let record = encode_record(first);
        if written == record {
            return Ok(1);
        }
        if record.starts_with(&written) {
            self.cut_output(0, written.len())?;
        }
        Ok(0)
    }

    /// The output file's bytes from `from` to `len`.
    fn output_from(&mut self, from: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let mut written = Vec::new();
        self.output.seek(SeekFrom::Start(from))?;
        (&mut self.output)
            .take(len - from)
            .read_to_end(&mut written)?;
        Ok(written)
    }

    /// Cuts the unfinished write of `bytes` bytes at `at` from the output's end.
    fn cut_output(&mut self, at: u64, bytes: usize) -> std::io::Result<()> {
        eprintln!(
            "akledger: sidecar: cutting {bytes} bytes of an unfinished write from the end of {}",
            self.output_path.display()
        );
        self.output.set_len(at)?;
        self.output.sync_data()
    }

    /// Appends every queued record in one write under the exclusive lock (a backlog of a
    /// thousand answers took three system calls each, one record at a time); the records
    /// written whole move to `appended`. After an error, a record written in part stays
    /// queued, as it does in a hand-off.
    fn append_queued(&mut self) -> std::io::Result<()> {
        let mut batch = Vec::with_capacity(self.queue.iter().map(|(_, r)| r.len()).sum());
        for (_, record) in &self.queue {
            batch.extend_from_slice(record);
        }
        let mut done = 0;
        let result = loop {
            let rest = batch.get(done..).unwrap_or_default();
            if rest.is_empty() {
                break self.output.flush();
            }
            match self.output.write(rest) {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let mut whole = 0;
        while let Some((token, record)) = self.queue.front() {
            if whole + record.len() > done {
                break;
            }
            whole += record.len();
            self.appended.push_back(*token);
            self.queue.pop_front();
        }
        result
    }

    /// In a hand-off: writes the next queued record under the exclusive lock once the
    /// reader has emptied the file. Returns its token.
    fn write_next(&mut self) -> std::io::Result<Option<u64>> {
        let Some((token, record)) = self.queue.front() else {
            return Ok(None);
        };
        if self.output.metadata()?.len() > 0 {
            return Ok(None);
        }
        let token = *token;
        self.output.write_all(record)?;
        self.output.flush()?;
        self.queue.pop_front();
        Ok(Some(token))
    }
}
