//! The client's have rounds: finding the heads of the common set when the peer's heads
//! include events never seen here.
//!
//! Cost: each round asks about at most twice as many ids as the round before (starting at
//! [`FIRST_QUERY`]), newest first, skipping ids a `yes` already settled. With a local tail
//! of t events the peer lacks, the rounds are about log2(t / 32) + 1 and the ids asked
//! about at most about 2·t + 32, each 33 bytes out and one bit back. Locally, each round
//! that brings a `yes` recomputes what the common set leaves uncovered (one difference
//! over the DAG index, proportional to the events it returns), so the events both sides
//! hold are walked once, not once per query.

use std::io::{Read, Write};

use crate::dag::Pos;
use crate::id::EventId;
use crate::ledger::Ledger;
use crate::limits::{MAX_SYNC_IDS, MAX_SYNC_ROUNDS};

use super::frame::Frame;
use super::lanes::Lanes;
use super::stream::{unexpected, Wire};
use super::SyncError;

/// Ids in the first have query.
const FIRST_QUERY: usize = 32;

/// The heads of the events both sides hold, given the peer's advertised heads. Every id
/// returned is held here; an honest peer holds them too.
pub(super) fn common_heads<'scope, R: Read, W: Write, L: Lanes<'scope, W>>(
    ledger: &Ledger,
    wire: &mut Wire<'scope, R, W, L>,
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
    let heads = ledger.heads();
    let mut order = ledger.difference_newest_first(&heads, &known)?;

    let mut haves = known;
    let mut step = FIRST_QUERY;
    let mut rounds = 0usize;
    // Positions of `order` already asked about. `order` is always what `haves` leaves
    // uncovered (recomputed whenever `haves` grows), so every position in it is asked.
    let mut done = 0usize;
    while let Some(rest) = order.get(done..).filter(|rest| !rest.is_empty()) {
        let chunk = rest.get(..step.min(rest.len())).unwrap_or(rest);
        done += chunk.len();
        let query = ledger.ids_at(chunk)?;
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
        wire.rx.report.rounds += 1;
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
            // What is left to ask about is what the grown common set does not cover: the
            // events behind a `yes` drop out here.
            let uncovered = ledger.difference_newest_first(&heads, &haves)?;
            let considered = order.get(..done).unwrap_or_default();
            let skip = considered_prefix(&uncovered, considered);
            order = uncovered;
            done = skip;
        }
        step = (step * 2).min(MAX_SYNC_IDS);
    }
    Ok(ledger.heads_of(&haves)?)
}

/// How many positions at the front of `uncovered` were already considered. `uncovered` is a
/// subsequence of the order `considered` is a prefix of (the same heads, a larger basis, the
/// same admission order), so the considered ones it keeps come first; the walk stops at the
/// first position that is not among them (if the ledger changed meanwhile, that only means
/// asking about an event twice).
fn considered_prefix(uncovered: &[Pos], considered: &[Pos]) -> usize {
    let mut at = 0usize;
    let mut skip = 0usize;
    for p in uncovered {
        while considered.get(at).is_some_and(|c| c != p) {
            at += 1;
        }
        if at >= considered.len() {
            break;
        }
        at += 1;
        skip += 1;
    }
    skip
}
