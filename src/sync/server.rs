//! A sync server over TCP ([`Ledger::serve`]) and its client end ([`Ledger::sync_tcp`]):
//! many sessions at once on one open ledger, each on a thread of its own, with the
//! timeouts of [`SyncOptions`] on every socket, a shared [`MemoryBudget`] for what peers
//! send, at most [`MAX_SYNC_SESSIONS`] sessions (a trickling one is cut to make room, else
//! the newcomer is told `busy`), an optional read-only mode, and a clean stop: once told
//! to stop ([`stop_serving`]), the server accepts no one new and returns when the running
//! sessions have ended (each bounded by the session limit).

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::keyring::Added;
use crate::ledger::Ledger;
use crate::limits::{
    BUSY_ANSWER_SECS, MAX_SYNC_HELD_BYTES, MAX_SYNC_REFUSALS, MAX_SYNC_SESSIONS,
    MIN_SYNC_SESSION_BYTES_PER_SEC,
};

use super::budget::MemoryBudget;
use super::slots::{Counted, Room, Slots};
use super::{refuse, Duplex, SyncError, SyncOptions, SyncReport};

/// How [`Ledger::serve`] serves.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Each session's timeouts ([`SyncOptions::timeout`] on every read and write,
    /// [`SyncOptions::session_limit`] for the whole session); the direction is the
    /// client's to choose. On by default.
    pub session: SyncOptions,
    /// Admit nothing: a peer that pushes events is refused ([`SyncError::ReadOnly`]), as
    /// `git daemon` serves unless told otherwise. Off by default.
    pub read_only: bool,
    /// A keyring file to merge into the ledger's keyring when serving starts and whenever
    /// it changed since the last session started (keys added beside a running server,
    /// even between the ledger's open and the start of serving).
    pub keyring_file: Option<PathBuf>,
}

/// What [`Ledger::serve`] tells its observer as it goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeEvent<'a> {
    /// A session ended, with what it moved or why it failed.
    Ended {
        /// The peer's address.
        peer: &'a str,
        /// What the session moved, or why it stopped.
        result: &'a Result<SyncReport, SyncError>,
    },
    /// A peer was told `busy`: every session was running and moving data.
    Busy {
        /// The peer's address.
        peer: &'a str,
    },
    /// The slowest session was cut to make room for a newcomer.
    Cut {
        /// Its peer.
        peer: &'a str,
        /// What it moved on average.
        bytes_per_sec: u64,
        /// How long it had run.
        after: Duration,
    },
    /// The keyring file was merged, at the start because it held keys the ledger lacked,
    /// or later because it changed: what was new.
    KeyringReloaded(&'a Added),
    /// The keyring file could not be read (at the start, or after it changed); the keys
    /// held are kept.
    KeyringKept(&'a Error),
}

/// What one [`Ledger::serve`] did, when it returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServeReport {
    /// Sessions that ran (ended well or not).
    pub sessions: u64,
    /// Sessions that failed.
    pub failed: u64,
    /// Peers told `busy`.
    pub busy: u64,
    /// Events sent to peers, in all.
    pub sent: u64,
    /// Events received from peers, in all.
    pub received: u64,
}

/// Tells a [`Ledger::serve`] listening on `addr` to stop: sets `stop`, then connects to
/// `addr` so that the waiting accept returns. Safe to call from a signal-handling thread.
pub fn stop_serving(stop: &AtomicBool, addr: SocketAddr) {
    stop.store(true, Ordering::SeqCst);
    let wake = match addr.ip().is_unspecified() {
        // A server bound to every address is woken on loopback.
        true => SocketAddr::new(
            match addr {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            },
            addr.port(),
        ),
        false => addr,
    };
    let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(BUSY_ANSWER_SECS));
}

impl Ledger {
    /// Serves sync sessions on `listener` until `stop` is set ([`stop_serving`] sets it and
    /// wakes the listener), then waits for the running sessions to end and returns what
    /// they did. `observe` hears of each session's end, each busy refusal or cut, and each
    /// keyring reload, from the accepting thread and the sessions' threads.
    pub fn serve(
        &self,
        listener: TcpListener,
        options: &ServeOptions,
        stop: &AtomicBool,
        observe: impl Fn(ServeEvent<'_>) + Sync,
    ) -> Result<ServeReport, Error> {
        let budget = MemoryBudget::new(MAX_SYNC_HELD_BYTES);
        let refusing = AtomicUsize::new(0);
        let report = std::sync::Mutex::new(ServeReport::default());
        let mut slots = Slots::new(options.session.timeout);
        // Stamped before it is read: a change made after the read changes the stamp.
        let mut keyring_seen = options.keyring_file.as_deref().and_then(keyring_stamp);
        if let Some(file) = &options.keyring_file {
            match self.merge_keyring_file(file) {
                Ok(added) if !added.is_empty() => observe(ServeEvent::KeyringReloaded(&added)),
                Ok(_) => {}
                Err(e) => observe(ServeEvent::KeyringKept(&e)),
            }
        }
        let (observe, report_ref, budget, refusing) = (&observe, &report, &budget, &refusing);
        std::thread::scope(|scope| {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = conn else { continue };
                let peer = stream
                    .peer_addr()
                    .map_or_else(|_| "peer".to_owned(), |a| a.to_string());
                match slots.make_room() {
                    Room::Free => {}
                    Room::Cut {
                        peer,
                        bytes_per_sec,
                        after,
                    } => observe(ServeEvent::Cut {
                        peer: &peer,
                        bytes_per_sec,
                        after,
                    }),
                    Room::Full => {
                        observe(ServeEvent::Busy { peer: &peer });
                        if let Ok(mut r) = report_ref.lock() {
                            r.busy += 1;
                        }
                        if refusing.fetch_add(1, Ordering::SeqCst) < MAX_SYNC_REFUSALS {
                            scope.spawn(move || {
                                refuse_busy(stream);
                                refusing.fetch_sub(1, Ordering::SeqCst);
                            });
                        } else {
                            refusing.fetch_sub(1, Ordering::SeqCst);
                        }
                        continue;
                    }
                }
                if let Some(file) = &options.keyring_file {
                    let stamp = keyring_stamp(file);
                    if stamp != keyring_seen {
                        keyring_seen = stamp;
                        match self.merge_keyring_file(file) {
                            Ok(added) => observe(ServeEvent::KeyringReloaded(&added)),
                            Err(e) => observe(ServeEvent::KeyringKept(&e)),
                        }
                    }
                }
                let Ok(handle) = stream.try_clone() else {
                    continue;
                };
                let progress = slots.start(&peer, handle);
                let session = options.session;
                let read_only = options.read_only;
                scope.spawn(move || {
                    // Both directions at once: the socket's reading and writing ends are
                    // apart, each counting what moves (a trickling session is cut).
                    let halves = Duplex {
                        reader: Counted {
                            inner: &stream,
                            progress: Arc::clone(&progress),
                        },
                        writer: Counted {
                            inner: &stream,
                            progress: Arc::clone(&progress),
                        },
                    };
                    let result = session
                        .apply_to(&stream)
                        .map_err(SyncError::io)
                        .and_then(|()| {
                            self.answer_duplex(halves, session.session_limit, budget, read_only)
                        });
                    // The slot table holds a handle on the socket (to cut a trickler):
                    // close the connection now, not when that handle goes.
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    progress.finish();
                    if let Ok(mut r) = report_ref.lock() {
                        r.sessions += 1;
                        match &result {
                            Ok(s) => {
                                r.sent += s.sent;
                                r.received += s.received;
                            }
                            Err(_) => r.failed += 1,
                        }
                    }
                    observe(ServeEvent::Ended {
                        peer: &peer,
                        result: &result,
                    });
                });
            }
        });
        report.into_inner().map_err(|_| Error::Poisoned)
    }

    /// Syncs with the server at `addr` over TCP: connects within `options.timeout`, puts
    /// the timeouts on the socket, and runs [`Ledger::sync_duplex`] on it. The defaults
    /// ([`SyncOptions::default`]) bound every read, write and the whole session.
    pub fn sync_tcp(
        &self,
        addr: impl ToSocketAddrs,
        options: &SyncOptions,
    ) -> Result<SyncReport, SyncError> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the address resolves to nothing");
        for addr in addr.to_socket_addrs().map_err(SyncError::Io)? {
            match TcpStream::connect_timeout(&addr, options.timeout) {
                Ok(stream) => {
                    options.apply_to(&stream).map_err(SyncError::io)?;
                    let halves = Duplex {
                        reader: &stream,
                        writer: &stream,
                    };
                    return self.sync_duplex(halves, options);
                }
                Err(e) => last = e,
            }
        }
        Err(SyncError::Io(last))
    }
}

/// Tells a peer that came while every session is taken that the server is busy (an error
/// frame its client reports), within a short deadline.
fn refuse_busy(mut stream: TcpStream) {
    let deadline = Some(Duration::from_secs(BUSY_ANSWER_SECS));
    if stream.set_write_timeout(deadline).is_ok() && stream.set_read_timeout(deadline).is_ok() {
        let why = format!(
            "busy: this server runs {MAX_SYNC_SESSIONS} sessions, its most (a session moving under {MIN_SYNC_SESSION_BYTES_PER_SEC} bytes/s is cut for a newcomer); try again later"
        );
        let _ = refuse(&mut stream, &why);
        // Closing with the peer's hello unread would reset the connection and could discard
        // the answer before it is read: stop writing, then take what the peer sends until
        // it closes or the deadline passes.
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let _ = io::copy(&mut io::Read::take(&mut stream, 1 << 20), &mut io::sink());
    }
}

/// What identifies the keyring file's version: its inode, length and modification time
/// (`None` without a file).
fn keyring_stamp(path: &std::path::Path) -> Option<(u64, u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()?))
}
