//! The client's have rounds: finding the heads of the common set when the peer's heads
//! include events never seen here.
//!
//! Cost: each round asks about at most twice as many ids as the round before (starting at
//! [`FIRST_QUERY`]), newest first, skipping ids a `yes` already settled. With a local tail
//! of t events the peer lacks, the rounds are about log2(t / 32) + 1 and the ids asked
//! about at most about 2·t + 32, each 33 bytes out and one bit back.

use std::io::{Read, Write};

use crate::id::EventId;
use crate::ledger::Ledger;
use crate::limits::{MAX_SYNC_IDS, MAX_SYNC_ROUNDS};

use super::frame::Frame;
use super::stream::{unexpected, Wire};
use super::SyncError;

/// Ids in the first have query.
const FIRST_QUERY: usize = 32;

/// The heads of the events both sides hold, given the peer's advertised heads. Every id
/// returned is held here; an honest peer holds them too.
pub(super) fn common_heads<S: Read + Write>(
    ledger: &Ledger,
    wire: &mut Wire<'_, S>,
    peer_heads: &[EventId],
) -> Result<Vec<EventId>, SyncError> {
    let known: Vec<EventId> = peer_heads
        .iter()
        .filter(|h| ledger.contains(h))
        .copied()
        .collect();
    if known.len() == peer_heads.len() {
        return Ok(ledger.heads_of(&known)?);
    }
    // Newest first (reverse admission order, a reverse causal order): a `yes` settles the
    // ancestors, which come later in this order.
    let mut order = ledger.difference_in_admission_order(&ledger.heads(), &known)?;
    order.reverse();

    let mut haves = known;
    let mut step = FIRST_QUERY;
    let mut rounds = 0usize;
    let mut rest = order.as_slice();
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(step.min(rest.len()));
        rest = tail;
        let covered = ledger.covers_all(&haves, chunk)?;
        let query: Vec<EventId> = chunk
            .iter()
            .zip(covered)
            .filter(|(_, c)| !c)
            .map(|(id, _)| *id)
            .collect();
        if query.is_empty() {
            continue;
        }
        rounds += 1;
        if rounds > MAX_SYNC_ROUNDS {
            return Err(SyncError::Misuse(format!(
                "negotiation needs more than {MAX_SYNC_ROUNDS} have rounds"
            )));
        }
        wire.send(&Frame::Have(query.clone()))?;
        wire.report.rounds += 1;
        let bits = match wire.recv(query.len())? {
            Frame::Known(bits) => bits,
            other => return Err(unexpected(&other, "known")),
        };
        let yes: Vec<EventId> = query
            .iter()
            .zip(bits)
            .filter(|(_, b)| *b)
            .map(|(id, _)| *id)
            .collect();
        if !yes.is_empty() {
            haves.extend(yes);
            haves = ledger.heads_of(&haves)?;
        }
        step = (step * 2).min(MAX_SYNC_IDS);
    }
    Ok(ledger.heads_of(&haves)?)
}
