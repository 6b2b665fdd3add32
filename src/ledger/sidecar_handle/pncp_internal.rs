//! PNCP messages inside an exchange (PROFILE §14.2): questions, answers, status, cancel and
//! error, authored as internal messages for the skill of the exchange's canonical request,
//! with the data of a question or answer checked against, and redacted for, its model.

use rand_core::OsRng;

use crate::actors::{check_data, Action, DataFault, DataModel, PncpKind};
use crate::canonical::{Json, Object};
use crate::did::DidCoreId;
use crate::error::Error;
use crate::exchange::{Binding, ExchangeId, PncpDraft, Reason, Role};
use crate::id::EventId;

use super::SidecarHandle;

impl SidecarHandle<'_> {
    /// Sends an internal PNCP message of `kind` on `exchange`, for the skill its canonical
    /// request names (PROFILE §14.2): `Question` and `Answer` name `question_id`, a question
    /// the action declares, and their data follows its question or answer model (the
    /// author's own model for an agent, the coordinator's for the controller), redacted
    /// fields committed to and their values kept in the disclosure store before the message
    /// is appended; an `Answer` gets an `after` ref to the latest question of that id in the
    /// exchange. Agents may send any of `Question`, `Answer`, `Status`, `Cancel` and `Error`;
    /// the controller (the requester's side) `Question`, `Answer` and `Cancel` only.
    pub fn pncp(
        &self,
        exchange: &ExchangeId,
        kind: PncpKind,
        question_id: Option<&str>,
        data: Object,
        body: Json,
    ) -> Result<EventId, Error> {
        let by_controller = self.author.principal() == self.author.sidecar().controller.principal();
        let misuse = |why: String| {
            Err(Error::Misuse(format!(
                "{kind} on exchange {exchange}: {why}"
            )))
        };
        match kind {
            PncpKind::Request => {
                return misuse("a request opens an exchange: request_skill".into())
            }
            PncpKind::Response => return misuse("a response is respond_skill's".into()),
            PncpKind::Status | PncpKind::Error if by_controller => {
                return misuse("the controller sends Question, Answer or Cancel only".into())
            }
            _ => {}
        }
        let asks = matches!(kind, PncpKind::Question | PncpKind::Answer);
        if asks != question_id.is_some() {
            return misuse("question_id goes with Question and Answer, and only with them".into());
        }
        let would_not = |reason| Error::WouldNotFold {
            action: "pncp",
            exchange_id: exchange.clone(),
            reason,
            code: None,
        };
        let p = self.projection("pncp", exchange)?;
        let history = self
            .ledger
            .exchange_history(&self.sidecar_id(), exchange)?
            .ok_or_else(|| would_not(Reason::UnknownRequest))?;
        let skill = history
            .entries
            .iter()
            .find(|e| e.event_id == p.request_event_id)
            .and_then(|e| e.pncp.clone());
        let Some(skill) = skill else {
            return misuse("its request names no skill, so its messages carry no PNCP".into());
        };
        let mut after = vec![p.request_event_id];
        if kind == PncpKind::Answer {
            let question = history.entries.iter().rev().find(|e| {
                e.pncp.as_ref().is_some_and(|l| {
                    l.kind == PncpKind::Question && l.question_id.as_deref() == question_id
                })
            });
            after.push(
                question
                    .ok_or_else(|| would_not(Reason::PncpAnswerWithoutQuestion))?
                    .event_id,
            );
        }
        // The model the data follows: the author's own; for the controller, whose question
        // or answer any addressed agent may come to handle, the strictest of theirs.
        let owners: Vec<DidCoreId> = if by_controller {
            p.addressed_agent_ids.clone()
        } else {
            vec![self.author.principal().clone()]
        };
        let mut models = Vec::new();
        for owner in &owners {
            models.extend(self.ledger.latest_model(owner)?);
        }
        let actions: Vec<&Action> = models
            .iter()
            .filter_map(|(_, m)| m.action(&skill.subject, &skill.action))
            .collect();
        if let Some(q) = question_id {
            if !actions.iter().any(|a| a.question(q).is_some()) {
                return Err(would_not(Reason::PncpDataInvalid));
            }
        }
        let data_model = DataModel::strictest(
            actions
                .iter()
                .filter_map(|a| a.model_for(kind, question_id)),
        );
        if let Err(DataFault::Missing(_)) = check_data(Some(&data), Some(&data_model)) {
            return Err(would_not(Reason::PncpDataInvalid));
        }
        let draft = PncpDraft {
            kind,
            subject: skill.subject.clone(),
            action: skill.action.clone(),
            question_id: question_id.map(str::to_owned),
            data,
            model: Some(&data_model),
            after: models.iter().map(|(id, _)| *id).collect(),
        };
        let mut parents = after.clone();
        parents.push(self.sidecar_id().retype());
        parents.extend(&draft.after);
        let at = self.ledger.now_after(&parents)?;
        let binding = Binding {
            exchange_id: exchange.clone(),
            role: Role::Internal {
                request_event_id: p.request_event_id,
            },
        };
        let (event, withheld) = self
            .author
            .pncp_message(binding, body, draft, &after, at, &mut OsRng)?;
        if by_controller {
            // The controller's messages never fold as participation: there is no fold to
            // check them against, only the data, checked above.
            return self.keep_and_append("pncp", exchange, &event, withheld);
        }
        self.submit_with_disclosures("pncp", exchange, &event, withheld)
    }
}
