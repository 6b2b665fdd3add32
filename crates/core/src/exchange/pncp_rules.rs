//! The fold's PROFILE §14.2 checks of PNCP messages, against the actor models the
//! [`Causality`] knows as seen from each message: a request for a skill an addressed
//! agent does not offer is not a valid request (`skill_not_offered`), nor is one that does
//! not honour the requester's own skill lock (seed 000's SkillSetLock, in the requester's
//! current model as seen from the request: `skill_lock_violated`); data that misses a
//! required field or names an undeclared question is `pncp_data_invalid`, and data that
//! holds a raw value in a redacted field is `redaction_violation` (§14.3). A causality that
//! knows no models (`knows_models() == false`) gets no §14.2 check.
//!
//! An agent's answer needs an `after` ref to an admitted question of its exchange with the
//! same `question_id` (`pncp_answer_without_question`). The controller's own questions and
//! answers are exchange facts that never fold as participation (`author_is_controller`);
//! only a raw value in a field that an addressed agent's current model marks redacted is
//! named for them (`redaction_violation`), so that the audit finds every leak.

use crate::actors::{check_data, ActorModel, DataFault, DataModel, PncpKind};

use super::causality::Causality;
use super::classify::ExchangeItem;
use super::plaintext::RequestContext;
use super::report::Reason;

/// §14.2 of a request: every addressed agent offers the skill in its current model as seen
/// from the request, and the data fits the coordinator's input model.
pub(super) fn request_fault(
    item: &ExchangeItem,
    context: &RequestContext,
    causality: &impl Causality,
) -> Option<Reason> {
    let pncp = item.pncp.as_ref().filter(|_| causality.knows_models())?;
    // The requester's lock on the skill, if its own current model has one.
    let lock = causality
        .current_model(&item.author, &item.event_id)
        .and_then(|m| m.lock_for(&pncp.subject, &pncp.action).cloned());
    // Each addressed agent's model, read once; the coordinator is one of them.
    let mut coordinator: Option<ActorModel> = None;
    for agent in context.addressed() {
        let model = causality
            .current_model(agent, &item.event_id)
            .filter(|m| m.offers(&pncp.subject, &pncp.action));
        let Some(model) = model else {
            return Some(Reason::SkillNotOffered);
        };
        if lock.as_ref().is_some_and(|l| !l.admits(&model)) {
            return Some(Reason::SkillLockViolated);
        }
        if agent == context.coordinator() {
            coordinator = Some(model);
        }
    }
    let coordinator = coordinator?;
    let input = coordinator
        .action(&pncp.subject, &pncp.action)
        .and_then(|a| a.input.as_ref());
    data_fault(pncp.data.as_ref(), input)
}

/// §14.2 of an agent's response or internal message: the data fits the author's model
/// for the message's kind (the action's output, or the question's question or answer).
pub(super) fn message_fault(item: &ExchangeItem, causality: &impl Causality) -> Option<Reason> {
    let pncp = item.pncp.as_ref().filter(|_| causality.knows_models())?;
    let model = causality.current_model(&item.author, &item.event_id);
    let action = model
        .as_ref()
        .and_then(|m| m.action(&pncp.subject, &pncp.action));
    let data_model = match (pncp.kind, action) {
        (PncpKind::Question | PncpKind::Answer, None) => return Some(Reason::PncpDataInvalid),
        (PncpKind::Question | PncpKind::Answer, Some(action)) => {
            let declared = pncp.question_id.as_deref().and_then(|q| action.question(q));
            if declared.is_none() {
                return Some(Reason::PncpDataInvalid);
            }
            action.model_for(pncp.kind, pncp.question_id.as_deref())
        }
        (PncpKind::Response, Some(action)) => action.output.as_ref(),
        _ => None,
    };
    data_fault(pncp.data.as_ref(), data_model)
}

/// Why a controller's PNCP message does not fold: `redaction_violation` when its data holds
/// a raw value in a field that the message's model in any addressed agent's current model
/// (as seen from the message) marks redacted, else `author_is_controller`.
pub(super) fn controller_fault(
    item: &ExchangeItem,
    context: &RequestContext,
    causality: &impl Causality,
) -> Reason {
    let leaks = item
        .pncp
        .as_ref()
        .filter(|_| causality.knows_models())
        .is_some_and(|pncp| {
            context.addressed().iter().any(|agent| {
                let model = causality.current_model(agent, &item.event_id);
                let action = model
                    .as_ref()
                    .and_then(|m| m.action(&pncp.subject, &pncp.action));
                action
                    .and_then(|a| a.model_for(pncp.kind, pncp.question_id.as_deref()))
                    .is_some_and(|m| {
                        matches!(
                            check_data(pncp.data.as_ref(), Some(m)),
                            Err(DataFault::RawRedacted(_))
                        )
                    })
            })
        });
    if leaks {
        Reason::RedactionViolation
    } else {
        Reason::AuthorIsController
    }
}

/// §14.2 of an agent's answer: an `after` ref to a question of the same exchange (one of
/// `items`) with its `question_id`.
pub(super) fn answer_fault(
    item: &ExchangeItem,
    items: &[&ExchangeItem],
    causality: &impl Causality,
) -> Option<Reason> {
    let pncp = item
        .pncp
        .as_ref()
        .filter(|p| p.kind == PncpKind::Answer && causality.knows_models())?;
    let asked = item.after.iter().any(|target| {
        items.iter().any(|q| {
            q.event_id == *target
                && q.exchange_id == item.exchange_id
                && q.pncp.as_ref().is_some_and(|qp| {
                    qp.kind == PncpKind::Question && qp.question_id == pncp.question_id
                })
        })
    });
    (!asked).then_some(Reason::PncpAnswerWithoutQuestion)
}

fn data_fault(
    data: Option<&crate::canonical::Object>,
    model: Option<&DataModel>,
) -> Option<Reason> {
    match check_data(data, model) {
        Ok(()) => None,
        Err(DataFault::RawRedacted(_)) => Some(Reason::RedactionViolation),
        Err(DataFault::Missing(_)) => Some(Reason::PncpDataInvalid),
    }
}
