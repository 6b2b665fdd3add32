//! A non-blocking TCP stream with its read and write buffers, what the TCP connection's
//! clients and the link's peer are built on.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};

/// A non-blocking stream, the bytes read from it and not yet taken, and the bytes to write
/// to it.
#[derive(Debug)]
pub(crate) struct Buffered {
    pub(crate) stream: TcpStream,
    pub(crate) peer: SocketAddr,
    /// Bytes read and not yet taken (see [`Buffered::consume`]).
    pub(crate) inbuf: Vec<u8>,
    /// Bytes to write; the first `written` of them are written.
    pub(crate) out: Vec<u8>,
    pub(crate) written: usize,
    /// True once the peer closed it or it failed.
    pub(crate) closed: bool,
}

impl Buffered {
    /// `stream`, made non-blocking.
    pub(crate) fn new(stream: TcpStream) -> std::io::Result<Buffered> {
        stream.set_nonblocking(true)?;
        let _ = stream.set_nodelay(true);
        Ok(Buffered {
            peer: stream.peer_addr()?,
            stream,
            inbuf: Vec::new(),
            out: Vec::new(),
            written: 0,
            closed: false,
        })
    }

    /// Reads what the stream has, up to `max` bytes.
    pub(crate) fn read_available(&mut self, max: usize) {
        let mut buf = [0u8; 64 << 10];
        let mut read = 0;
        while read < max && !self.closed {
            match self.stream.read(&mut buf) {
                Ok(0) => self.closed = true,
                Ok(n) => {
                    self.inbuf
                        .extend_from_slice(buf.get(..n).unwrap_or_default());
                    read += n;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.closed = true,
            }
        }
    }

    /// Drops the first `n` bytes read.
    pub(crate) fn consume(&mut self, n: usize) {
        self.inbuf.drain(..n.min(self.inbuf.len()));
    }

    /// Bytes queued and not written yet.
    pub(crate) fn pending(&self) -> usize {
        self.out.len() - self.written
    }

    /// Writes what the stream takes now.
    pub(crate) fn write_pending(&mut self) {
        while self.written < self.out.len() && !self.closed {
            match self
                .stream
                .write(self.out.get(self.written..).unwrap_or_default())
            {
                Ok(0) => self.closed = true,
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.closed = true,
            }
        }
    }

    /// Forgets the written bytes once everything is written (offsets into `out` restart).
    pub(crate) fn compact(&mut self) {
        if self.written == self.out.len() {
            self.out.clear();
            self.written = 0;
        }
    }
}
