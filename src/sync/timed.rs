//! Streams for sessions over pipes, which have no timeouts of their own: a reader whose
//! reads give up after a timeout, a writer whose writes give up when the peer has not taken
//! bytes for as long, and a duplex of a reader and a writer.

use std::io::{self, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::Duration;

/// Bytes one background read takes at most.
const CHUNK: usize = 64 << 10;

/// Chunks read ahead: bounds the memory a fast peer can fill ahead of the session.
const AHEAD: usize = 4;

/// Reads `inner` on a background thread; a read that waits longer than the timeout fails
/// with [`io::ErrorKind::TimedOut`]. The thread ends at the inner end of stream, on an
/// error, or once this reader is dropped and its next chunk finds no one to take it.
pub struct TimedReader {
    chunks: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
    timeout: Duration,
    ended: bool,
}

impl TimedReader {
    /// Starts reading `inner` in the background.
    pub fn new<R: Read + Send + 'static>(mut inner: R, timeout: Duration) -> Self {
        let (tx, rx) = sync_channel(AHEAD);
        std::thread::spawn(move || loop {
            let mut buf = vec![0u8; CHUNK];
            let sent = match inner.read(&mut buf) {
                Ok(0) => {
                    let _ = tx.send(Ok(Vec::new()));
                    return;
                }
                Ok(n) => {
                    buf.truncate(n);
                    tx.send(Ok(buf))
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        });
        TimedReader {
            chunks: rx,
            current: Vec::new(),
            at: 0,
            timeout,
            ended: false,
        }
    }
}

impl Read for TimedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.current.len() {
            if self.ended || buf.is_empty() {
                return Ok(0);
            }
            match self.chunks.recv_timeout(self.timeout) {
                Ok(Ok(chunk)) if chunk.is_empty() => self.ended = true,
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "peer silent"))
                }
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
        let available = self.current.get(self.at..).unwrap_or_default();
        let n = available.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), available.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.at += n;
        Ok(n)
    }
}

/// What the writing thread is asked to do.
enum Command {
    Bytes(Vec<u8>),
    Flush,
}

/// Writes `inner` on a background thread, at most four chunks of 64 KiB
/// behind; a write that finds the queue full for longer than the timeout (the peer stopped
/// reading) fails with [`io::ErrorKind::TimedOut`], and so does a flush that waits longer
/// for the queue to drain. A flush returns once every byte written before it reached
/// `inner` (so a session's last frame is not lost when the process exits). The thread ends
/// on a write error (reported by the next write or flush) or once this writer is dropped.
pub struct TimedWriter {
    commands: crossbeam::channel::Sender<Command>,
    flushed: crossbeam::channel::Receiver<io::Result<()>>,
    timeout: Duration,
}

impl TimedWriter {
    /// Starts writing to `inner` in the background.
    pub fn new<W: Write + Send + 'static>(mut inner: W, timeout: Duration) -> Self {
        let (commands, queue) = crossbeam::channel::bounded::<Command>(AHEAD);
        let (report, flushed) = crossbeam::channel::bounded(1);
        std::thread::spawn(move || {
            for command in queue {
                let result = match command {
                    Command::Bytes(bytes) => match inner.write_all(&bytes) {
                        Ok(()) => continue,
                        Err(e) => Err(e),
                    },
                    Command::Flush => inner.flush(),
                };
                let failed = result.is_err();
                if report.send(result).is_err() || failed {
                    return;
                }
            }
        });
        TimedWriter {
            commands,
            flushed,
            timeout,
        }
    }
}

impl TimedWriter {
    /// The error the writing thread stopped on (it stops only on one), or a broken pipe.
    fn stopped(&self) -> io::Error {
        match self.flushed.try_recv() {
            Ok(Err(e)) => e,
            _ => io::Error::new(io::ErrorKind::BrokenPipe, "the writing thread stopped"),
        }
    }

    fn queue(&self, command: Command) -> io::Result<()> {
        use crossbeam::channel::SendTimeoutError;
        match self.commands.send_timeout(command, self.timeout) {
            Ok(()) => Ok(()),
            Err(SendTimeoutError::Timeout(_)) => Err(not_reading()),
            Err(SendTimeoutError::Disconnected(_)) => Err(self.stopped()),
        }
    }
}

fn not_reading() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "peer not reading")
}

impl Write for TimedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(CHUNK);
        if n == 0 {
            return Ok(0);
        }
        self.queue(Command::Bytes(buf.get(..n).unwrap_or_default().to_vec()))?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        use crossbeam::channel::RecvTimeoutError;
        self.queue(Command::Flush)?;
        match self.flushed.recv_timeout(self.timeout) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(not_reading()),
            Err(RecvTimeoutError::Disconnected) => Err(self.stopped()),
        }
    }
}

/// A reader and a writer used as one stream (a child's stdout and stdin, or our stdin and
/// stdout).
pub struct Duplex<R, W> {
    /// Where the peer's bytes come from.
    pub reader: R,
    /// Where our bytes go.
    pub writer: W,
}

impl Duplex<TimedReader, TimedWriter> {
    /// A pipe pair with both directions timed: the peer may stay silent, or leave our bytes
    /// untaken, for at most `timeout` at a time.
    pub fn timed<R, W>(reader: R, writer: W, timeout: Duration) -> Self
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        Duplex {
            reader: TimedReader::new(reader, timeout),
            writer: TimedWriter::new(writer, timeout),
        }
    }
}

impl<R: Read, W> Read for Duplex<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl<R, W: Write> Write for Duplex<R, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}
