//! One exchange's timeline for an auditor: every item of the exchange (request, responses,
//! internal messages, controls) with its time, author, role or action, and what the fold
//! made of it — folded, applied, terminal, or ignored with the fold's reason (and, for a
//! conflict loser, the controls that beat it), and for a PNCP message its kind and skill
//! (never its data). Read off an [`ExchangeOutcome`]: the fold decides, this only lays its
//! decisions out in time.

use std::collections::HashSet;

use crate::actors::{Pncp, PncpKind};
use crate::canonical::{Json, Object};
use crate::did::DidCoreId;
use crate::id::{EventId, SidecarId};
use crate::time::Timestamp;

use super::causality::Causality;
use super::classify::{ExchangeItem, Fact};
use super::fold::ExchangeOutcome;
use super::plaintext::{Action, ExchangeId, Role, TerminalKind};
use super::report::{Projection, Reason};

/// What an item is to its exchange.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Step {
    /// A request (the canonical one or not).
    Request,
    /// A user-facing response; `completes` when it claims to complete the exchange.
    Response {
        /// `completes_exchange: true`.
        completes: bool,
    },
    /// An internal message.
    Internal,
    /// A controller control with its action.
    Control(Action),
}

impl Step {
    /// `request`, `response`, `internal` or `control`.
    pub fn role(&self) -> &'static str {
        match self {
            Step::Request => "request",
            Step::Response { .. } => "response",
            Step::Internal => "internal",
            Step::Control(_) => "control",
        }
    }

    /// The control's action name (`close`, `cancel`, `fail`, `reassign_coordinator`).
    pub fn action(&self) -> Option<&'static str> {
        match self {
            Step::Control(Action::Terminal { kind, .. }) => Some(kind.action()),
            Step::Control(Action::Reassign { .. }) => Some("reassign_coordinator"),
            _ => None,
        }
    }

    /// A short human description: `request`, `response (completes)`, `control close`,
    /// `control fail tool_timeout`, `control reassign_coordinator a → b`.
    pub fn text(&self) -> String {
        match self {
            Step::Response { completes: true } => "response (completes)".into(),
            Step::Control(Action::Terminal {
                kind: TerminalKind::Fail(code),
                ..
            }) => format!("control fail {code}"),
            Step::Control(Action::Reassign { expected, new }) => {
                format!("control reassign_coordinator {expected} -> {new}")
            }
            Step::Control(_) => format!("control {}", self.action().unwrap_or_default()),
            _ => self.role().into(),
        }
    }
}

/// What the fold made of an item.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// A message in the projection (the canonical request, a folded agent message).
    Folded,
    /// A chain control that took effect without ending the exchange (a reassignment).
    Applied,
    /// The control that ended the exchange.
    Terminal,
    /// Did not fold, with the fold's reason; `beaten_by` names the controls that beat a
    /// conflict loser (greatest digest bytes first), empty otherwise.
    Ignored {
        /// Why.
        reason: Reason,
        /// For `conflict_loser`: the winners.
        beaten_by: Vec<EventId>,
    },
}

impl Verdict {
    /// `folded`, `applied`, `terminal` or `ignored`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Folded => "folded",
            Verdict::Applied => "applied",
            Verdict::Terminal => "terminal",
            Verdict::Ignored { .. } => "ignored",
        }
    }

    /// `applied`, `terminal`, `ignored: conflict_loser (beaten by ak:event:…)`, …
    pub fn text(&self) -> String {
        match self {
            Verdict::Ignored { reason, beaten_by } if beaten_by.is_empty() => {
                format!("ignored: {reason}")
            }
            Verdict::Ignored { reason, beaten_by } => {
                let winners: Vec<String> = beaten_by.iter().map(ToString::to_string).collect();
                format!("ignored: {reason} (beaten by {})", winners.join(", "))
            }
            other => other.as_str().into(),
        }
    }
}

/// What a PNCP message is (PROFILE §14.2), without its data.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PncpLabel {
    /// Its kind.
    pub kind: PncpKind,
    /// The skill's subject.
    pub subject: String,
    /// The skill's action.
    pub action: String,
    /// The question it asks or answers.
    pub question_id: Option<String>,
}

impl PncpLabel {
    fn of(pncp: &Pncp) -> PncpLabel {
        PncpLabel {
            kind: pncp.kind,
            subject: pncp.subject.clone(),
            action: pncp.action.clone(),
            question_id: pncp.question_id.clone(),
        }
    }

    /// `Question travel/book (question seat)`.
    pub fn text(&self) -> String {
        let question = self
            .question_id
            .as_ref()
            .map_or(String::new(), |q| format!(" (question {q})"));
        format!("{} {}/{}{question}", self.kind, self.subject, self.action)
    }

    /// `{"kind","subject","action","question_id"?}`.
    pub fn to_json(&self) -> Json {
        let obj = Object::new()
            .with("kind", self.kind.as_str().into())
            .with("subject", self.subject.as_str().into())
            .with("action", self.action.as_str().into());
        match &self.question_id {
            Some(q) => obj.with("question_id", q.as_str().into()).into(),
            None => obj.into(),
        }
    }
}

/// One line of the timeline.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct HistoryEntry {
    /// The event.
    pub event_id: EventId,
    /// Its `created_at`.
    pub created_at: Timestamp,
    /// Its author's principal.
    pub author: DidCoreId,
    /// True when the author is the sidecar's controller.
    pub by_controller: bool,
    /// What it is to the exchange.
    pub step: Step,
    /// For a PNCP message, its kind and skill.
    pub pncp: Option<PncpLabel>,
    /// What the fold made of it.
    pub verdict: Verdict,
}

impl HistoryEntry {
    /// What it is, for a reader: the step (`request`, `response (completes)`, `internal`,
    /// `control close`, …), and a PNCP message's kind and skill after it.
    pub fn describe(&self) -> String {
        match &self.pncp {
            Some(label) => format!("{} {}", self.step.text(), label.text()),
            None => self.step.text(),
        }
    }

    /// `{"event_id","created_at","author","by_controller","role","action"?,"completes"?,
    /// "pncp"?,"outcome","reason"?,"beaten_by"?}`.
    pub fn to_json(&self) -> Json {
        let mut obj = Object::new()
            .with("event_id", self.event_id.to_string().into())
            .with("created_at", self.created_at.to_string().into())
            .with("author", self.author.as_str().into())
            .with("by_controller", self.by_controller.into())
            .with("role", self.step.role().into())
            .with("outcome", self.verdict.as_str().into());
        if let Some(action) = self.step.action() {
            obj.insert("action", action.into());
        }
        match &self.step {
            Step::Response { completes } => {
                obj.insert("completes", (*completes).into());
            }
            Step::Control(Action::Terminal {
                kind: TerminalKind::Fail(code),
                ..
            }) => {
                obj.insert("failure_reason_code", code.as_str().into());
            }
            Step::Control(Action::Reassign { new, .. }) => {
                obj.insert("new_coordinator", new.as_str().into());
            }
            _ => {}
        }
        if let Some(label) = &self.pncp {
            obj.insert("pncp", label.to_json());
        }
        if let Verdict::Ignored { reason, beaten_by } = &self.verdict {
            obj.insert("reason", reason.as_str().into());
            if !beaten_by.is_empty() {
                obj.insert(
                    "beaten_by",
                    Json::Array(beaten_by.iter().map(|i| i.to_string().into()).collect()),
                );
            }
        }
        obj.into()
    }
}

/// An exchange's timeline and its projection (absent without a canonical request).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ExchangeHistory {
    /// The sidecar.
    pub sidecar_id: SidecarId,
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// The fold's projection, when the exchange has a canonical request.
    pub projection: Option<Projection>,
    /// Every item, in causal order; by `created_at` then event id where that leaves the
    /// order open.
    pub entries: Vec<HistoryEntry>,
}

impl ExchangeHistory {
    /// `{"sidecar_id","exchange_id","status"?,"entries":[…]}`.
    pub fn to_json(&self) -> Json {
        let mut obj = Object::new()
            .with("sidecar_id", self.sidecar_id.to_string().into())
            .with("exchange_id", self.exchange_id.as_str().into())
            .with(
                "entries",
                Json::Array(self.entries.iter().map(HistoryEntry::to_json).collect()),
            );
        if let Some(p) = &self.projection {
            obj.insert("status", p.status.as_str().into());
        }
        obj.into()
    }
}

/// The timeline of `exchange_id` from its items (items of other exchanges are skipped,
/// duplicates count once) and the outcome the fold gave for them. Entries are in causal
/// order, and among items neither of which covers the other, by `created_at` then id:
/// a claimed time never puts an event before one it covers.
pub fn exchange_history(
    sidecar_id: SidecarId,
    exchange_id: &ExchangeId,
    items: &[ExchangeItem],
    outcome: &ExchangeOutcome,
    causality: &impl Causality,
) -> ExchangeHistory {
    let projection = outcome.projection.as_ref();
    let mut entries: Vec<HistoryEntry> = items
        .iter()
        .filter(|i| i.exchange_id == *exchange_id)
        .map(|item| {
            let step = step_of(&item.fact);
            HistoryEntry {
                event_id: item.event_id,
                created_at: item.created_at,
                author: item.author.clone(),
                by_controller: item.by_controller,
                pncp: item.pncp.as_ref().map(PncpLabel::of),
                verdict: verdict_of(item.event_id, &step, outcome),
                step,
            }
        })
        .collect();
    entries.sort_by_key(|e| (e.created_at, e.event_id));
    entries.dedup_by_key(|e| e.event_id);
    ExchangeHistory {
        sidecar_id,
        exchange_id: exchange_id.clone(),
        projection: projection.cloned(),
        entries: causal_first(entries, causality),
    }
}

/// Reorders `entries` (sorted by time, then id) so that every entry comes after the
/// entries it covers, keeping the time order wherever causality allows: each step takes
/// the earliest entry whose covered entries are all out. O(n²) coverage lookups over one
/// exchange's items.
fn causal_first(entries: Vec<HistoryEntry>, causality: &impl Causality) -> Vec<HistoryEntry> {
    let ids: Vec<EventId> = entries.iter().map(|e| e.event_id).collect();
    let below: Vec<Vec<EventId>> = ids
        .iter()
        .map(|id| {
            let mut covered = causality.covered_among(&[*id], &ids);
            covered.retain(|c| c != id);
            covered
        })
        .collect();
    let mut done: HashSet<EventId> = HashSet::with_capacity(ids.len());
    let mut left: Vec<Option<HistoryEntry>> = entries.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(left.len());
    loop {
        let ready = left
            .iter()
            .zip(&below)
            .position(|(e, b)| e.is_some() && b.iter().all(|c| done.contains(c)));
        // In a DAG something is always ready; should coverage answers be inconsistent, the
        // rest keeps its time order.
        let next = ready.or_else(|| left.iter().position(Option::is_some));
        let Some(entry) = next.and_then(|i| left.get_mut(i)).and_then(Option::take) else {
            return out;
        };
        done.insert(entry.event_id);
        out.push(entry);
    }
}
fn step_of(fact: &Fact) -> Step {
    match fact {
        Fact::Message(Role::Request(_)) => Step::Request,
        Fact::Message(Role::Response { completes, .. }) => Step::Response {
            completes: completes.is_some(),
        },
        Fact::Message(Role::Internal { .. }) => Step::Internal,
        Fact::Control { plaintext, .. } => Step::Control(plaintext.action.clone()),
    }
}

/// Every exchange item gets one outcome from the fold: a reason in `not_folded`, else it
/// folded — as the terminal control, as an applied control, or as a message.
fn verdict_of(id: EventId, step: &Step, outcome: &ExchangeOutcome) -> Verdict {
    if let Some(n) = outcome.not_folded.iter().find(|n| n.event_id == id) {
        let beaten_by = outcome
            .conflicts
            .iter()
            .find(|c| c.loser == id)
            .map(|c| c.beaten_by.clone())
            .unwrap_or_default();
        return Verdict::Ignored {
            reason: n.reason,
            beaten_by,
        };
    }
    let terminal = outcome
        .projection
        .as_ref()
        .and_then(|p| p.terminal_event_id);
    match step {
        Step::Control(_) if terminal == Some(id) => Verdict::Terminal,
        Step::Control(_) => Verdict::Applied,
        _ => Verdict::Folded,
    }
}
