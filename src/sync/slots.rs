//! A server's session slots: at most [`MAX_SYNC_SESSIONS`] at once, and when a peer comes
//! while all are taken, the slowest session that has moved less than
//! [`MIN_SYNC_SESSION_BYTES_PER_SEC`] on average over more than one read timeout is cut to
//! make room (a peer trickling bytes to hold slots), else the newcomer is told `busy`.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::limits::{MAX_SYNC_SESSIONS, MIN_SYNC_SESSION_BYTES_PER_SEC};

/// What a session and the accept loop share.
#[derive(Debug, Default)]
pub(super) struct SessionProgress {
    /// Bytes the session read and wrote.
    moved: AtomicU64,
    /// Set by the session when it ends.
    done: AtomicBool,
}

impl SessionProgress {
    /// The session ended.
    pub(super) fn finish(&self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// A stream that counts what moves through it into a [`SessionProgress`].
pub(super) struct Counted<S> {
    pub(super) inner: S,
    pub(super) progress: Arc<SessionProgress>,
}

impl<S: Read> Read for Counted<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.moved.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<S: Write> Write for Counted<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.progress.moved.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One running session.
struct Slot {
    peer: String,
    started: Instant,
    progress: Arc<SessionProgress>,
    /// A handle on its socket, to cut it.
    socket: TcpStream,
}

/// The running sessions.
pub(super) struct Slots {
    slots: Vec<Slot>,
    /// How long a session may be slow before it can be cut (the read timeout).
    grace: Duration,
}

impl Slots {
    /// No session yet; sessions younger than `grace` are never cut.
    pub(super) fn new(grace: Duration) -> Slots {
        Slots {
            slots: Vec::new(),
            grace,
        }
    }

    /// Makes room for a newcomer: a free slot, or one freed by cutting the slowest session
    /// below the rate; [`Room::Full`] when every session is busy moving data.
    pub(super) fn make_room(&mut self) -> Room {
        self.slots
            .retain(|s| !s.progress.done.load(Ordering::SeqCst));
        if self.slots.len() < MAX_SYNC_SESSIONS {
            return Room::Free;
        }
        let rate = |s: &Slot| {
            let secs = s.started.elapsed().as_secs_f64().max(f64::EPSILON);
            s.progress.moved.load(Ordering::Relaxed) as f64 / secs
        };
        let slowest = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.started.elapsed() > self.grace)
            .map(|(i, s)| (i, rate(s)))
            .filter(|(_, r)| *r < MIN_SYNC_SESSION_BYTES_PER_SEC as f64)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, rate)) = slowest else {
            return Room::Full;
        };
        let slot = self.slots.swap_remove(i);
        let _ = slot.socket.shutdown(Shutdown::Both);
        Room::Cut {
            peer: slot.peer,
            bytes_per_sec: rate as u64,
            after: slot.started.elapsed(),
        }
    }

    /// Records a session starting on `socket` (a handle on the session's socket).
    pub(super) fn start(&mut self, peer: &str, socket: TcpStream) -> Arc<SessionProgress> {
        let progress = Arc::new(SessionProgress::default());
        self.slots.push(Slot {
            peer: peer.to_string(),
            started: Instant::now(),
            progress: Arc::clone(&progress),
            socket,
        });
        progress
    }
}

/// What [`Slots::make_room`] did.
pub(super) enum Room {
    /// A slot was free.
    Free,
    /// The slowest session was cut to free one.
    Cut {
        /// Its peer.
        peer: String,
        /// What it moved on average.
        bytes_per_sec: u64,
        /// How long it had run.
        after: Duration,
    },
    /// Every session is busy moving data.
    Full,
}
