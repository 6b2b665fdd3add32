//! The decision maker's policy (seed 002's decision maker, for the sidecar's controller):
//! from the open exchanges' projections and the time, the controls to author. Pure — the
//! runtime reads the clock and passes `now` in, authors what this returns, and the fold
//! decides what the controls do: controls remain the sole source of exchange state
//! (seed 004); the policy only proposes them.
//!
//! The rules, first match wins per exchange:
//! 1. **Close** when the current coordinator's completing response is folded: a validated
//!    response by the coordinator with `completes_exchange` naming the current
//!    coordinator assignment.
//! 2. **Fail** with the configured reason code once the exchange has been open for the
//!    configured timeout (from its request's `created_at`).
//! 3. **Reassign** when the current coordinator is declared gone: to the first addressed
//!    agent (canonical order) not declared gone, as a compare-and-set from the projection's
//!    coordinator; with nobody left, fail with [`COORDINATOR_GONE`].

use std::collections::BTreeSet;

use akledger::did::DidCoreId;
use akledger::exchange::{Act, ExchangeId, Projection, Status};
use akledger::id::EventId;
use akledger::time::Timestamp;

/// The failure reason code when a gone coordinator has nobody to hand over to.
pub const COORDINATOR_GONE: &str = "coordinator_gone";

/// The decision maker's settings.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Policy {
    /// Milliseconds an exchange may stay open before it is failed; `None`: never.
    pub timeout_ms: Option<u64>,
    /// The failure reason code of a timeout (`^[a-z][a-z0-9_]{0,63}$`).
    pub timeout_code: String,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout_ms: None,
            timeout_code: "exchange_timeout".to_string(),
        }
    }
}

/// A completing response as the fold holds it: its author and the coordinator assignment
/// its binding names.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Completing {
    /// The response's author.
    pub author: DidCoreId,
    /// Its `coordinator_assignment_event_id`.
    pub assignment: EventId,
}

/// What the policy looks at for one exchange.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OpenExchange {
    /// The fold's projection.
    pub projection: Projection,
    /// The request's `created_at`.
    pub opened_at: Timestamp,
    /// The folded responses that claim to complete the exchange.
    pub completing: Vec<Completing>,
}

/// One control to author.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// The control.
    pub act: Act,
}

/// The controls the policy proposes for `exchanges` at `now`, given the agents declared
/// `gone`. Terminal exchanges get none.
pub fn decide(
    exchanges: &[OpenExchange],
    now: Timestamp,
    gone: &BTreeSet<DidCoreId>,
    policy: &Policy,
) -> Vec<Decision> {
    exchanges
        .iter()
        .filter_map(|x| decide_one(x, now, gone, policy))
        .collect()
}

fn decide_one(
    x: &OpenExchange,
    now: Timestamp,
    gone: &BTreeSet<DidCoreId>,
    policy: &Policy,
) -> Option<Decision> {
    let p = &x.projection;
    if matches!(p.status, Status::Complete | Status::Failed) {
        return None;
    }
    let decision = |act| {
        Some(Decision {
            exchange_id: p.exchange_id.clone(),
            act,
        })
    };
    let completed = x.completing.iter().any(|c| {
        c.author == p.coordinator_agent_id && c.assignment == p.coordinator_assignment_event_id
    });
    if completed {
        return decision(Act::Close);
    }
    if let Some(timeout) = policy.timeout_ms {
        if now.millis().saturating_sub(x.opened_at.millis()) >= timeout {
            return decision(Act::Fail(policy.timeout_code.clone()));
        }
    }
    if gone.contains(&p.coordinator_agent_id) {
        return match p.addressed_agent_ids.iter().find(|a| !gone.contains(*a)) {
            Some(next) => decision(Act::Reassign {
                expected: p.coordinator_agent_id.clone(),
                new: next.clone(),
            }),
            None => decision(Act::Fail(COORDINATOR_GONE.to_string())),
        };
    }
    None
}

#[cfg(test)]
mod tests;
