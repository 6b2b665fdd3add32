//! What the fold hands out (PROFILE §8.6, §12): the per-exchange [`Projection`], and
//! [`NotFolded`] with its closed [`Reason`] for every exchange event that did not fold.
//!
//! Plain messages (no binding) are not exchange events and are never listed. Every other
//! sidecar message and every control gets exactly one outcome: folded, or one reason.

use crate::canonical::{to_canonical, Json, Object};
use crate::did::DidCoreId;
use crate::id::{hex, EventId, SidecarId, StrandId};

use super::plaintext::ExchangeId;

/// Why an event did not fold. Closed; renders snake_case.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Reason {
    /// Message or control: no key for its epoch, wrong key, tampered bytes, or AAD of
    /// another event (coarse on purpose).
    NotDecryptable,
    /// Message: decrypted, but not the closed `{"body", "sidecar_exchange_binding"?}`
    /// object of content type `application/vnd.arkret.message+json`.
    PlaintextInvalid,
    /// Message: the binding fails §8.1.
    BindingInvalid,
    /// Request binding authored by someone other than the controller.
    RequestNotByController,
    /// Controller request whose `source_track_ref` is not the sidecar's realm and current
    /// context as seen from the request (PROFILE §6, §8.1).
    RequestContextNotCurrent,
    /// A valid controller request that is not the canonical one.
    RetryRequest,
    /// Agent message whose `request_event_id` is not the exchange's canonical request
    /// (or the exchange has none).
    UnknownRequest,
    /// Response or internal message authored by the controller.
    AuthorIsController,
    /// Response by an agent the request does not address.
    NotAddressed,
    /// Response without a causal `after` ref to the request.
    MissingAfterRef,
    /// Agent message not covered by the terminal control's basis.
    AfterTerminal,
    /// Control authored by someone other than the controller (admission rejects these).
    ControlNotByController,
    /// Control that does not decrypt to a §8.2 plaintext of the control content type.
    ControlPlaintextInvalid,
    /// Control whose `request_event_id` is not the canonical request.
    ControlWrongRequest,
    /// Control whose outer strand is not the request's `source_track_ref.strand_id`.
    ControlWrongStrand,
    /// Control naming a basis id that is not admitted.
    ControlBasisNotAdmitted,
    /// Control without an `after` ref to some basis id.
    ControlMissingAfterRef,
    /// Control whose basis names an event that is not an exchange fact of this exchange.
    ControlBasisNotExchangeFact,
    /// Control whose basis has an id covering another (not maximal heads).
    ControlBasisNotMaximal,
    /// Control whose basis does not cover the request.
    ControlRequestNotCovered,
    /// Terminal control whose `response_event_ids` is not exactly the validated responses
    /// covered by its basis.
    ControlResponsesMismatch,
    /// Valid control concurrent with a valid control of greater digest bytes.
    ConflictLoser,
    /// Reassignment whose expected coordinator is not the current one.
    CasMismatch,
    /// Reassignment to an agent the request does not address.
    CoordinatorNotAddressed,
    /// Chain control after the terminal one.
    ControlAfterTerminal,
    /// A PNCP request for a skill an addressed agent's current model, as seen from the
    /// request, does not offer (PROFILE §14.2).
    SkillNotOffered,
    /// PNCP data missing a required field of its model, or naming a question the action
    /// does not declare (§14.2).
    PncpDataInvalid,
    /// A PNCP answer with no `after` ref to an admitted question of the exchange with its
    /// `question_id` (§14.2).
    PncpAnswerWithoutQuestion,
    /// PNCP data holding a raw value in a redacted field (§14.3).
    RedactionViolation,
    /// A PNCP request that does not honour the requester's skill lock (seed 000's
    /// SkillSetLock): the requester's current model, as seen from the request, locks the
    /// skill to an actor or a skill-set version that an addressed agent's current model is
    /// not, or does not offer it in. This profile's name; PROFILE §14 leaves locks out.
    SkillLockViolated,
}

impl Reason {
    /// Every reason.
    pub const ALL: [Reason; 30] = [
        Reason::NotDecryptable,
        Reason::PlaintextInvalid,
        Reason::BindingInvalid,
        Reason::RequestNotByController,
        Reason::RequestContextNotCurrent,
        Reason::RetryRequest,
        Reason::UnknownRequest,
        Reason::AuthorIsController,
        Reason::NotAddressed,
        Reason::MissingAfterRef,
        Reason::AfterTerminal,
        Reason::ControlNotByController,
        Reason::ControlPlaintextInvalid,
        Reason::ControlWrongRequest,
        Reason::ControlWrongStrand,
        Reason::ControlBasisNotAdmitted,
        Reason::ControlMissingAfterRef,
        Reason::ControlBasisNotExchangeFact,
        Reason::ControlBasisNotMaximal,
        Reason::ControlRequestNotCovered,
        Reason::ControlResponsesMismatch,
        Reason::ConflictLoser,
        Reason::CasMismatch,
        Reason::CoordinatorNotAddressed,
        Reason::ControlAfterTerminal,
        Reason::SkillNotOffered,
        Reason::PncpDataInvalid,
        Reason::PncpAnswerWithoutQuestion,
        Reason::RedactionViolation,
        Reason::SkillLockViolated,
    ];

    /// The snake_case wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::NotDecryptable => "not_decryptable",
            Reason::PlaintextInvalid => "plaintext_invalid",
            Reason::BindingInvalid => "binding_invalid",
            Reason::RequestNotByController => "request_not_by_controller",
            Reason::RequestContextNotCurrent => "request_context_not_current",
            Reason::RetryRequest => "retry_request",
            Reason::UnknownRequest => "unknown_request",
            Reason::AuthorIsController => "author_is_controller",
            Reason::NotAddressed => "not_addressed",
            Reason::MissingAfterRef => "missing_after_ref",
            Reason::AfterTerminal => "after_terminal",
            Reason::ControlNotByController => "control_not_by_controller",
            Reason::ControlPlaintextInvalid => "control_plaintext_invalid",
            Reason::ControlWrongRequest => "control_wrong_request",
            Reason::ControlWrongStrand => "control_wrong_strand",
            Reason::ControlBasisNotAdmitted => "control_basis_not_admitted",
            Reason::ControlMissingAfterRef => "control_missing_after_ref",
            Reason::ControlBasisNotExchangeFact => "control_basis_not_exchange_fact",
            Reason::ControlBasisNotMaximal => "control_basis_not_maximal",
            Reason::ControlRequestNotCovered => "control_request_not_covered",
            Reason::ControlResponsesMismatch => "control_responses_mismatch",
            Reason::ConflictLoser => "conflict_loser",
            Reason::CasMismatch => "cas_mismatch",
            Reason::CoordinatorNotAddressed => "coordinator_not_addressed",
            Reason::ControlAfterTerminal => "control_after_terminal",
            Reason::SkillNotOffered => "skill_not_offered",
            Reason::PncpDataInvalid => "pncp_data_invalid",
            Reason::PncpAnswerWithoutQuestion => "pncp_answer_without_question",
            Reason::RedactionViolation => "redaction_violation",
            Reason::SkillLockViolated => "skill_lock_violated",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An exchange event that did not fold, with why.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct NotFolded {
    /// The event.
    pub event_id: EventId,
    /// Its sidecar.
    pub sidecar_id: SidecarId,
    /// The exchange, when the plaintext names one that reads.
    pub exchange_id: Option<ExchangeId>,
    /// Why.
    pub reason: Reason,
}

impl NotFolded {
    /// The §12 `not_folded` item.
    pub fn to_json(&self) -> Json {
        let exchange = self
            .exchange_id
            .as_ref()
            .map_or(Json::Null, |x| x.as_str().into());
        Object::new()
            .with("event_id", self.event_id.to_string().into())
            .with("sidecar_id", self.sidecar_id.to_string().into())
            .with("exchange_id", exchange)
            .with("reason", self.reason.as_str().into())
            .into()
    }
}

/// Exchange status (PROFILE §8.5).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Status {
    /// No validated response, not terminal.
    Delivered,
    /// At least one validated response, not terminal.
    Responding,
    /// Terminal with at least one response.
    Complete,
    /// Terminal with no response.
    Failed,
}

impl std::fmt::Display for Status {
    /// The wire name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Status {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Delivered => "delivered",
            Status::Responding => "responding",
            Status::Complete => "complete",
            Status::Failed => "failed",
        }
    }
}

/// The state of one exchange (PROFILE §8.6). Every list is in canonical order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Projection {
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// Its sidecar.
    pub sidecar_id: SidecarId,
    /// `source_context_ref.strand_id`: the request's `source_track_ref.strand_id`.
    pub strand_id: StrandId,
    /// The canonical request.
    pub request_event_id: EventId,
    /// From the request.
    pub addressed_agent_ids: Vec<DidCoreId>,
    /// The current coordinator.
    pub coordinator_agent_id: DidCoreId,
    /// The request, or the last applied reassignment.
    pub coordinator_assignment_event_id: EventId,
    /// Authors of folded agent messages.
    pub participating_agent_ids: Vec<DidCoreId>,
    /// Folded validated responses.
    pub user_facing_response_event_ids: Vec<EventId>,
    /// The status.
    pub status: Status,
    /// Present exactly when failed.
    pub failure_reason_code: Option<String>,
    /// The terminal control, when terminal.
    pub terminal_event_id: Option<EventId>,
    /// Every folded event (request, folded agent messages, applied controls).
    pub folded_event_ids: Vec<EventId>,
    /// Maximal heads of the folded events.
    pub checkpoint_heads: Vec<EventId>,
}

fn ids_json<T: ToString>(ids: &[T]) -> Json {
    Json::Array(ids.iter().map(|i| i.to_string().into()).collect())
}

/// `blake3:<hex>` of the canonical JSON array of `ids` (already in canonical order).
pub fn event_set_digest(ids: &[EventId]) -> String {
    format!(
        "blake3:{}",
        hex(blake3::hash(&to_canonical(&ids_json(ids))).as_bytes())
    )
}

impl Projection {
    /// `folded_checkpoint.event_set_digest`.
    pub fn event_set_digest(&self) -> String {
        event_set_digest(&self.folded_event_ids)
    }

    /// The §8.6 object; optional members are omitted when absent.
    pub fn to_json(&self) -> Json {
        let context = Object::new()
            .with("kind", "strand".into())
            .with("strand_id", self.strand_id.to_string().into());
        let checkpoint = Object::new()
            .with("event_ids", ids_json(&self.checkpoint_heads))
            .with("event_set_digest", self.event_set_digest().into());
        let mut obj = Object::new()
            .with("exchange_id", self.exchange_id.as_str().into())
            .with("sidecar_id", self.sidecar_id.to_string().into())
            .with("source_context_ref", context.into())
            .with("request_event_id", self.request_event_id.to_string().into())
            .with("addressed_agent_ids", ids_json(&self.addressed_agent_ids))
            .with(
                "coordinator_agent_id",
                self.coordinator_agent_id.as_str().into(),
            )
            .with(
                "coordinator_assignment_event_id",
                self.coordinator_assignment_event_id.to_string().into(),
            )
            .with(
                "participating_agent_ids",
                ids_json(&self.participating_agent_ids),
            )
            .with(
                "user_facing_response_event_ids",
                ids_json(&self.user_facing_response_event_ids),
            )
            .with("status", self.status.as_str().into())
            .with("folded_checkpoint", checkpoint.into());
        if let Some(code) = &self.failure_reason_code {
            obj.insert("failure_reason_code", code.as_str().into());
        }
        if let Some(t) = self.terminal_event_id {
            obj.insert("terminal_event_id", t.to_string().into());
        }
        obj.into()
    }
}

/// Serializes as its [`Projection::to_json`] object (PROFILE §8.6).
impl serde::Serialize for Projection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// Serializes as its [`NotFolded::to_json`] object (PROFILE §12 `not_folded` item).
impl serde::Serialize for NotFolded {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}
