//! Streams for sessions over pipes, which have no timeouts of their own: a reader whose
//! reads give up after a timeout, and a duplex of a reader and a writer.

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

/// A reader and a writer used as one stream (a child's stdout and stdin, or our stdin and
/// stdout).
pub struct Duplex<R, W> {
    /// Where the peer's bytes come from.
    pub reader: R,
    /// Where our bytes go.
    pub writer: W,
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
