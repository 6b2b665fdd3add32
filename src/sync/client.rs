//! The driving side of a session ([`Ledger::sync`]).

use std::io::{Read, Write};

use crate::id::EventId;
use crate::ledger::Ledger;

use super::budget::MemoryBudget;
use super::frame::Frame;
use super::negotiate::common_heads;
use super::stream::{unexpected, Wire};
use super::{Direction, PeerRefusal, SyncError, SyncOptions, SyncReport};
use crate::limits::MAX_SYNC_ROUNDS;

impl Ledger {
    /// Syncs with the peer at the other end of `stream` (which runs
    /// [`Ledger::serve_session`]): hello, have rounds when needed, pull, then push (so events the pull
    /// released from pending here are sent too), pulling and pushing again while a push
    /// releases pending events on the peer. Timeouts are
    /// the stream's (see [`SyncOptions::timeout`]). Each received batch is admitted as it
    /// arrives, so what was admitted stays when the session fails later.
    pub fn sync<S: Read + Write>(
        &self,
        stream: &mut S,
        options: &SyncOptions,
    ) -> Result<SyncReport, SyncError> {
        let mut wire = Wire::new(stream, options.session_limit, MemoryBudget::new(0));
        match drive(self, &mut wire, options.direction) {
            Ok(()) => Ok(wire.report),
            Err(e) => {
                wire.refuse(&e);
                Err(e)
            }
        }
    }
}

fn drive<S: Read + Write>(
    ledger: &Ledger,
    wire: &mut Wire<'_, S>,
    direction: Direction,
) -> Result<(), SyncError> {
    let mine = ledger.heads();
    wire.send(&Frame::Hello(mine.clone()))?;
    wire.report.rounds += 1;
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
    if direction != Direction::PushOnly && !all_known {
        wire.send(&Frame::Pull(common.clone()))?;
        wire.report.rounds += 1;
        wire.receive_events(ledger)?;
        check_delivered(ledger, &theirs)?;
    }
    if direction != Direction::PullOnly {
        // What the peer holds: the common set, its heads, and everything it sent.
        let mut peer_has = common;
        peer_has.extend(theirs.iter().copied());
        // Push what the peer lacks; when that releases pending events there, pull them, and
        // push again what they release here, until a round releases nothing (pending chains
        // may alternate between the two ledgers).
        for _ in 0..MAX_SYNC_ROUNDS {
            peer_has.append(&mut wire.received_ids);
            let base = admitted_here(ledger, &peer_has);
            let missing = ledger.difference_in_admission_order(&ledger.heads(), &base)?;
            if missing.is_empty() {
                break;
            }
            wire.send_events(ledger, &missing)?;
            wire.report.rounds += 1;
            let released = loop {
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
                            wire.report.refused_by_peer.push(PeerRefusal {
                                id: *id,
                                code,
                                message,
                            });
                        }
                    }
                    Frame::Done(released) => break released,
                    other => return Err(unexpected(&other, "refused or done")),
                }
            };
            let refused: std::collections::HashSet<EventId> =
                wire.report.refused_by_peer.iter().map(|r| r.id).collect();
            let missing: Vec<EventId> = missing
                .into_iter()
                .filter(|id| !refused.contains(id))
                .collect();
            peer_has.extend(missing);
            if released == 0 || direction != Direction::Both {
                break;
            }
            let base = admitted_here(ledger, &peer_has);
            wire.send(&Frame::Pull(ledger.heads_of(&base)?))?;
            wire.report.rounds += 1;
            wire.receive_events(ledger)?;
        }
    }
    wire.send(&Frame::Bye)
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
