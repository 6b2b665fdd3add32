//! The driving side of a session ([`Ledger::sync`]).

use std::io::{Read, Write};

use crate::id::EventId;
use crate::ledger::Ledger;

use super::budget::MemoryBudget;
use super::frame::Frame;
use super::lanes::{AtOnce, InTurn, Lanes, OneStream};
use super::negotiate::common_heads;
use super::stream::{unexpected, Wire};
use super::{Direction, Duplex, PeerRefusal, SyncError, SyncOptions, SyncReport};
use crate::limits::MAX_SYNC_ROUNDS;

impl Ledger {
    /// Syncs with the peer at the other end of `stream` (which runs
    /// [`Ledger::serve_session`] or [`Ledger::serve_duplex`]): hello, have rounds when
    /// needed, pull, then push (so events the pull released from pending here are sent
    /// too), pulling and pushing again while a push releases pending events on the peer.
    /// Timeouts are the stream's (see [`SyncOptions::timeout`]). Each received batch is
    /// admitted as it arrives, so what was admitted stays when the session fails later.
    ///
    /// One thread reads and writes `stream` in turn; a stream whose reading and writing
    /// ends are apart syncs faster with [`Ledger::sync_duplex`].
    pub fn sync<S: Read + Write>(
        &self,
        stream: &mut S,
        options: &SyncOptions,
    ) -> Result<SyncReport, SyncError> {
        let one = OneStream::new(stream);
        let wire = Wire::new(
            &one,
            &one,
            options.session_limit,
            MemoryBudget::new(0),
            InTurn,
        );
        wire.run(|wire| drive(self, wire, options.direction))
    }

    /// [`Ledger::sync`] over a stream whose two ends are apart (a TCP socket's
    /// `(&stream, &stream)`, a pipe pair, [`Duplex::timed`]), moving both directions at
    /// once: the push goes out from a thread of its own while the pull is received and
    /// admitted, so each side verifies what it receives while it sends. The session is the
    /// same as [`Ledger::sync`]'s, frame for frame; any server answers it.
    pub fn sync_duplex<R: Read + Send, W: Write + Send>(
        &self,
        stream: Duplex<R, W>,
        options: &SyncOptions,
    ) -> Result<SyncReport, SyncError> {
        std::thread::scope(|scope| {
            let wire = Wire::new(
                stream.reader,
                stream.writer,
                options.session_limit,
                MemoryBudget::new(0),
                AtOnce(scope),
            );
            wire.run(|wire| drive(self, wire, options.direction))
        })
    }
}

fn drive<'scope, R: Read, W: Write, L: Lanes<'scope, W>>(
    ledger: &'scope Ledger,
    wire: &mut Wire<'scope, R, W, L>,
    direction: Direction,
) -> Result<(), SyncError> {
    let mine = ledger.heads();
    wire.send(&Frame::Hello(mine.clone()))?;
    wire.rx.report.rounds += 1;
    let theirs = match wire.recv(0)? {
        Frame::Hello(heads) => heads,
        other => return Err(unexpected(&other, "hello")),
    };
    let all_known = theirs.iter().all(|h| ledger.contains(h));
    let mut same = mine.clone();
    let mut other = theirs.clone();
    same.sort_unstable();
    other.sort_unstable();
    if same == other {
        wire.send(&Frame::Bye)?;
        return Ok(());
    }
    let common = common_heads(ledger, wire, &theirs)?;
    // What the peer holds: the common set, its heads, and everything it sent.
    let mut peer_has = common.clone();
    peer_has.extend(theirs.iter().copied());
    // A push that went out beside the pull, waiting for the peer's answer.
    let mut beside = None;
    // Whether events became admitted here beyond those the pull brought (pending events it
    // released, or a writer's), which a push chosen before the pull lacks.
    let mut grew_beyond_pull = false;
    if direction != Direction::PushOnly && !all_known {
        let before_pull = wire.rx.mark(ledger);
        wire.send(&Frame::Pull(common))?;
        wire.rx.report.rounds += 1;
        if direction == Direction::Both && wire.at_once() {
            let missing = peer_lacks(ledger, &peer_has)?;
            if !missing.is_empty() {
                wire.send_events_beside(ledger, missing.clone())?;
                wire.rx.report.rounds += 1;
                beside = Some(missing);
            }
        }
        wire.rx.receive_events(ledger)?;
        check_delivered(ledger, &theirs)?;
        grew_beyond_pull = wire.rx.grown_beyond(ledger, before_pull) > 0;
    }
    if direction != Direction::PullOnly {
        // Push what the peer lacks; when that releases pending events there, pull them, and
        // push again what they release here, until a round releases nothing (pending chains
        // may alternate between the two ledgers). A push that went out beside the pull was
        // chosen before it: the next round pushes what became admitted here since.
        for _ in 0..MAX_SYNC_ROUNDS {
            peer_has.append(&mut wire.rx.received_ids);
            let (missing, went_beside) = match beside.take() {
                Some(missing) => {
                    wire.sent()?;
                    (missing, true)
                }
                None => {
                    let missing = peer_lacks(ledger, &peer_has)?;
                    if missing.is_empty() {
                        break;
                    }
                    wire.send_events(ledger, &missing)?;
                    wire.rx.report.rounds += 1;
                    (missing, false)
                }
            };
            let released = answer_to_push(wire, &missing)?;
            let refused: std::collections::HashSet<EventId> = wire
                .rx
                .report
                .refused_by_peer
                .iter()
                .map(|r| r.id)
                .collect();
            peer_has.extend(missing.into_iter().filter(|id| !refused.contains(id)));
            if direction != Direction::Both || released == 0 && !(went_beside && grew_beyond_pull) {
                break;
            }
            if released > 0 {
                let base = admitted_here(ledger, &peer_has);
                wire.send(&Frame::Pull(ledger.heads_of(&base)?))?;
                wire.rx.report.rounds += 1;
                wire.rx.receive_events(ledger)?;
            }
        }
    }
    wire.send(&Frame::Bye)
}

/// Reads the peer's answer to the pushed stream `missing`: the events it refused (recorded
/// in the report), then how many of its pending events the push released.
fn answer_to_push<'scope, R: Read, W: Write, L: Lanes<'scope, W>>(
    wire: &mut Wire<'scope, R, W, L>,
    missing: &[EventId],
) -> Result<u64, SyncError> {
    loop {
        match wire.recv(0)? {
            Frame::Refused(list) => {
                for (index, code, message) in list {
                    let id = usize::try_from(index).ok().and_then(|i| missing.get(i));
                    let Some(id) = id else {
                        return Err(SyncError::Protocol(format!(
                            "the peer refused event {index} of a stream of {}",
                            missing.len()
                        )));
                    };
                    wire.rx.report.refused_by_peer.push(PeerRefusal {
                        id: *id,
                        code,
                        message,
                    });
                }
            }
            Frame::Done(released) => return Ok(released),
            other => return Err(unexpected(&other, "refused or done")),
        }
    }
}

/// The events held here that the peer lacks, given what it holds (`peer_has`), in
/// admission order (a causal order).
fn peer_lacks(ledger: &Ledger, peer_has: &[EventId]) -> Result<Vec<EventId>, SyncError> {
    let base = admitted_here(ledger, peer_has);
    Ok(ledger.difference_in_admission_order(&ledger.heads(), &base)?)
}

/// The ids of `ids` admitted here (coverage is asked only of those; the peer may also hold
/// events still pending here).
fn admitted_here(ledger: &Ledger, ids: &[EventId]) -> Vec<EventId> {
    ids.iter()
        .filter(|id| ledger.contains(id))
        .copied()
        .collect()
}

/// After a pull, every head the peer advertised must be here (admitted, or pending on
/// something the peer still withholds): otherwise the peer lied about its heads.
fn check_delivered(ledger: &Ledger, heads: &[EventId]) -> Result<(), SyncError> {
    let absent: Vec<String> = heads
        .iter()
        .filter(|h| !ledger.contains(h))
        .map(|h| {
            if ledger.is_pending(h) {
                format!("{h} (pending: its dependencies were not sent)")
            } else {
                h.to_string()
            }
        })
        .take(3)
        .collect();
    if absent.is_empty() {
        return Ok(());
    }
    Err(SyncError::Protocol(format!(
        "the peer advertised heads it did not deliver: {}",
        absent.join(", ")
    )))
}
