//! The exchange plaintexts, read strictly and written canonically: the binding `B` and its
//! `request_context` (PROFILE §8.1), the message plaintext `{"body", "sidecar_exchange_binding"?}`
//! (§6) and the control plaintext (§8.2, seed 004).
//!
//! Every type here is valid by construction: the readers check the closed shapes and the
//! field rules, and the typed forms ([`Role`], [`Action`]) cannot express a forbidden
//! combination, so the writers need no checks of their own.

use crate::canonical::{parse_value, Json, Object};
use crate::did::{str_member, DidCoreId};
use crate::envelope::is_code;
use crate::error::{schema, Rejection};
use crate::id::{EventId, RealmId, StrandId};

/// Schema of the binding inside a message plaintext.
pub const BINDING_SCHEMA: &str = "ak.schema.agent_sidecar_event_exchange_binding.v1";
/// Schema of the control plaintext.
pub const CONTROL_SCHEMA: &str = "ak.schema.agent_sidecar_exchange_control.v1";

/// `^[A-Za-z0-9._~=-]{22,128}$`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ExchangeId(String);

impl ExchangeId {
    /// Parses an exchange id.
    pub fn parse(s: &str) -> Result<Self, Rejection> {
        let ok = (22..=128).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._~=-".contains(&b));
        if ok {
            Ok(ExchangeId(s.to_owned()))
        } else {
            Err(schema(format!("{s:?} is not an exchange id")))
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for ExchangeId {
    type Err = Rejection;

    fn from_str(s: &str) -> Result<Self, Rejection> {
        ExchangeId::parse(s)
    }
}

impl std::fmt::Display for ExchangeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `source_track_ref` of a request.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TrackRef {
    /// The realm of the source track.
    pub realm_id: RealmId,
    /// The private strand the exchange lives on; controls name it as their context.
    pub strand_id: StrandId,
    /// `^[a-z][a-z0-9_]{0,63}$`.
    pub track_name: String,
}

/// The write-once identity of an exchange, carried by its request.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RequestContext {
    source_track_ref: TrackRef,
    client_order_key: String,
    addressed: Vec<DidCoreId>,
    coordinator: DidCoreId,
    explicit_coordinator: bool,
}

/// The role a binding gives a message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Role {
    /// `request` (controller only).
    Request(RequestContext),
    /// `user_facing_response`; `completes` is `coordinator_assignment_event_id`, present
    /// exactly when `completes_exchange: true`.
    Response {
        /// The request answered.
        request_event_id: EventId,
        /// The coordinator assignment this response claims to complete under.
        completes: Option<EventId>,
    },
    /// `internal`.
    Internal {
        /// The request worked on.
        request_event_id: EventId,
    },
}

impl Role {
    /// The role's wire name: `request`, `user_facing_response` or `internal`.
    pub fn name(&self) -> &'static str {
        match self {
            Role::Request(_) => "request",
            Role::Response { .. } => "user_facing_response",
            Role::Internal { .. } => "internal",
        }
    }
}

/// The binding `B` of PROFILE §8.1.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Binding {
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// What the message is to the exchange.
    pub role: Role,
}

/// What the fold reads of a message plaintext sealed in this process without a `pncp`
/// member: its binding, if any (the body is not the fold's). Its author knows it
/// ([`crate::encrypted::Sealing`]), so admitting the message need not parse the plaintext.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct SealedMessage {
    pub(crate) binding: Option<Binding>,
}

/// A message plaintext.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MessagePlaintext {
    /// Anything.
    pub body: Json,
    /// The exchange binding, if any.
    pub binding: Option<Binding>,
    /// The PNCP message this is (PROFILE §14.2), if any; only beside a binding whose role
    /// its kind goes with.
    pub pncp: Option<crate::actors::Pncp>,
}

/// Why a message plaintext does not read.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MessageError {
    /// Not JSON, or not the closed `{"body", "sidecar_exchange_binding"?}` object.
    Plaintext,
    /// The binding is invalid; the exchange id it names, when that much reads.
    Binding(Option<ExchangeId>),
}

/// How a terminal control ends the exchange.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TerminalKind {
    /// `close`.
    Close,
    /// `cancel`.
    Cancel,
    /// `fail` with its `failure_reason_code`.
    Fail(String),
}

/// A control's action with its action-specific fields.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Action {
    /// `close` / `cancel` / `fail`, with `response_event_ids` (unique, canonical order).
    Terminal {
        /// Which terminal action.
        kind: TerminalKind,
        /// The validated responses the author saw covered by the basis.
        response_event_ids: Vec<EventId>,
    },
    /// `reassign_coordinator`.
    Reassign {
        /// Compare-and-set value.
        expected: DidCoreId,
        /// The new coordinator (≠ expected).
        new: DidCoreId,
    },
}

/// The control plaintext of PROFILE §8.2.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ControlPlaintext {
    /// The exchange.
    pub exchange_id: ExchangeId,
    /// The canonical request the control is about.
    pub request_event_id: EventId,
    /// Maximal heads of the exchange facts seen (≥ 1, unique, canonical order).
    pub basis_event_ids: Vec<EventId>,
    /// What to do.
    pub action: Action,
}

/// Requires `obj` to hold every `required` member and nothing outside `required ∪ optional`.
fn closed(obj: &Object, required: &[&str], optional: &[&str], what: &str) -> Result<(), Rejection> {
    if let Some(extra) = obj
        .keys()
        .find(|k| !required.contains(k) && !optional.contains(k))
    {
        return Err(schema(format!("{what}: unknown member {extra:?}")));
    }
    match required.iter().find(|k| obj.get(k).is_none()) {
        Some(missing) => Err(schema(format!("{what}: missing member {missing:?}"))),
        None => Ok(()),
    }
}

fn opt_event(obj: &Object, key: &str) -> Result<Option<EventId>, Rejection> {
    obj.get(key)
        .map(|_| EventId::parse(str_member(obj, key)?))
        .transpose()
}

fn opt_did(obj: &Object, key: &str) -> Result<Option<DidCoreId>, Rejection> {
    obj.get(key)
        .map(|_| DidCoreId::parse(str_member(obj, key)?))
        .transpose()
}

/// Reads a list of event ids that must be unique and in canonical order.
fn sorted_ids(v: Option<&Json>, key: &str) -> Result<Vec<EventId>, Rejection> {
    let items = v
        .and_then(Json::as_array)
        .ok_or_else(|| schema(format!("{key} must be an array")))?;
    let ids = items
        .iter()
        .map(|i| EventId::parse(i.as_str().unwrap_or_default()))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
        Ok(ids)
    } else {
        Err(schema(format!(
            "{key} must be unique and in canonical order"
        )))
    }
}

fn id_array(ids: &[EventId]) -> Json {
    Json::Array(ids.iter().map(|i| i.to_string().into()).collect())
}

fn did_array(ids: &[DidCoreId]) -> Json {
    Json::Array(ids.iter().map(|d| d.as_str().into()).collect())
}

/// `^[A-Za-z0-9._~=-]{1,128}$`.
fn is_order_key(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~=-".contains(&b))
}

impl RequestContext {
    /// A context; the coordinator must be addressed, and is required when more than one
    /// agent is addressed (otherwise it defaults to the sole addressed agent).
    pub fn new(
        source_track_ref: TrackRef,
        client_order_key: impl Into<String>,
        addressed_agent_ids: Vec<DidCoreId>,
        coordinator_agent_id: Option<DidCoreId>,
    ) -> Result<Self, Rejection> {
        let client_order_key = client_order_key.into();
        if !is_code(&source_track_ref.track_name) || !is_order_key(&client_order_key) {
            return Err(schema("track_name or client_order_key is malformed"));
        }
        let mut addressed = addressed_agent_ids;
        addressed.sort();
        let count = addressed.len();
        addressed.dedup();
        if count == 0 || addressed.len() != count {
            return Err(schema(
                "addressed_agent_ids must be at least one unique agent",
            ));
        }
        let explicit_coordinator = coordinator_agent_id.is_some();
        let coordinator = match (coordinator_agent_id, addressed.as_slice()) {
            (Some(c), _) if addressed.contains(&c) => c,
            (Some(_), _) => return Err(schema("the coordinator must be addressed")),
            (None, [sole]) => sole.clone(),
            (None, _) => return Err(schema("a coordinator is required for several agents")),
        };
        Ok(RequestContext {
            source_track_ref,
            client_order_key,
            addressed,
            coordinator,
            explicit_coordinator,
        })
    }

    /// Where the exchange came from.
    pub fn source_track_ref(&self) -> &TrackRef {
        &self.source_track_ref
    }

    /// The addressed agents, in canonical order.
    pub fn addressed(&self) -> &[DidCoreId] {
        &self.addressed
    }

    /// The initial coordinator (explicit, or the sole addressed agent).
    pub fn coordinator(&self) -> &DidCoreId {
        &self.coordinator
    }

    /// True when `agent` is addressed.
    pub fn is_addressed(&self, agent: &DidCoreId) -> bool {
        self.addressed.binary_search(agent).is_ok()
    }

    fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("request_context must be an object"))?;
        closed(
            obj,
            &[
                "addressed_agent_ids",
                "client_order_key",
                "source_track_ref",
            ],
            &["coordinator_agent_id"],
            "request_context",
        )?;
        let track = obj
            .get("source_track_ref")
            .and_then(Json::as_object)
            .ok_or_else(|| schema("source_track_ref must be an object"))?;
        closed(
            track,
            &["realm_id", "strand_id", "track_name"],
            &[],
            "source_track_ref",
        )?;
        let source_track_ref = TrackRef {
            realm_id: RealmId::parse(str_member(track, "realm_id")?)?,
            strand_id: StrandId::parse(str_member(track, "strand_id")?)?,
            track_name: str_member(track, "track_name")?.to_owned(),
        };
        let addressed = obj
            .get("addressed_agent_ids")
            .and_then(Json::as_array)
            .ok_or_else(|| schema("addressed_agent_ids must be an array"))?
            .iter()
            .map(|d| DidCoreId::parse(d.as_str().unwrap_or_default()))
            .collect::<Result<Vec<_>, _>>()?;
        RequestContext::new(
            source_track_ref,
            str_member(obj, "client_order_key")?,
            addressed,
            opt_did(obj, "coordinator_agent_id")?,
        )
    }

    fn to_json(&self) -> Json {
        let t = &self.source_track_ref;
        let track = Object::new()
            .with("realm_id", t.realm_id.to_string().into())
            .with("strand_id", t.strand_id.to_string().into())
            .with("track_name", t.track_name.as_str().into());
        let mut obj = Object::new()
            .with("addressed_agent_ids", did_array(&self.addressed))
            .with("client_order_key", self.client_order_key.as_str().into())
            .with("source_track_ref", track.into());
        if self.explicit_coordinator {
            obj.insert("coordinator_agent_id", self.coordinator.as_str().into());
        }
        obj.into()
    }
}

impl Binding {
    /// Reads the closed binding object.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("binding must be an object"))?;
        closed(
            obj,
            &["exchange_id", "role", "schema"],
            &[
                "completes_exchange",
                "coordinator_assignment_event_id",
                "request_context",
                "request_event_id",
            ],
            "binding",
        )?;
        if str_member(obj, "schema")? != BINDING_SCHEMA {
            return Err(schema("binding schema is not the exchange binding"));
        }
        let exchange_id = ExchangeId::parse(str_member(obj, "exchange_id")?)?;
        let completes = match obj.get("completes_exchange") {
            None => false,
            Some(Json::Bool(true)) => true,
            Some(_) => return Err(schema("completes_exchange must be true when present")),
        };
        let assignment = opt_event(obj, "coordinator_assignment_event_id")?;
        if completes != assignment.is_some() {
            return Err(schema(
                "completes_exchange iff coordinator_assignment_event_id",
            ));
        }
        let request = opt_event(obj, "request_event_id")?;
        let context = obj.get("request_context");
        let role = match (str_member(obj, "role")?, request, context) {
            ("request", None, Some(ctx)) if !completes => {
                Role::Request(RequestContext::from_json(ctx)?)
            }
            ("user_facing_response", Some(request_event_id), None) => Role::Response {
                request_event_id,
                completes: assignment,
            },
            ("internal", Some(request_event_id), None) if !completes => {
                Role::Internal { request_event_id }
            }
            (role, ..) => return Err(schema(format!("binding fields do not fit role {role:?}"))),
        };
        Ok(Binding { exchange_id, role })
    }

    /// The closed binding object.
    pub fn to_json(&self) -> Json {
        let mut obj = Object::new()
            .with("schema", BINDING_SCHEMA.into())
            .with("exchange_id", self.exchange_id.as_str().into());
        let role = match &self.role {
            Role::Request(ctx) => {
                obj.insert("request_context", ctx.to_json());
                "request"
            }
            Role::Response {
                request_event_id,
                completes,
            } => {
                obj.insert("request_event_id", request_event_id.to_string().into());
                if let Some(assignment) = completes {
                    obj.insert("completes_exchange", true.into());
                    obj.insert(
                        "coordinator_assignment_event_id",
                        assignment.to_string().into(),
                    );
                }
                "user_facing_response"
            }
            Role::Internal { request_event_id } => {
                obj.insert("request_event_id", request_event_id.to_string().into());
                "internal"
            }
        };
        obj.with("role", role.into()).into()
    }
}

impl MessagePlaintext {
    /// Reads decrypted message bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, MessageError> {
        let Ok(Json::Object(mut obj)) = parse_value(bytes) else {
            return Err(MessageError::Plaintext);
        };
        closed(
            &obj,
            &["body"],
            &["pncp", "sidecar_exchange_binding"],
            "message",
        )
        .map_err(|_| MessageError::Plaintext)?;
        // Moved out, not copied: a body is most of a message.
        let body = obj.remove("body").unwrap_or(Json::Null);
        let binding = obj
            .get("sidecar_exchange_binding")
            .map(|b| {
                Binding::from_json(b).map_err(|_| {
                    let id = b.as_object().and_then(|o| o.get("exchange_id"));
                    let id = id
                        .and_then(Json::as_str)
                        .and_then(|s| ExchangeId::parse(s).ok());
                    MessageError::Binding(id)
                })
            })
            .transpose()?;
        // PROFILE §14.2: a `pncp` member that does not read, or whose kind does not go with
        // the binding's role (or that has no binding), makes the binding invalid.
        let pncp = match obj.get("pncp") {
            None => None,
            Some(p) => {
                let id = binding.as_ref().map(|b| b.exchange_id.clone());
                let pncp = crate::actors::Pncp::from_json(p)
                    .map_err(|_| MessageError::Binding(id.clone()))?;
                if binding.as_ref().map(|b| b.role.name()) != Some(pncp.kind.role()) {
                    return Err(MessageError::Binding(id));
                }
                Some(pncp)
            }
        };
        Ok(MessagePlaintext {
            body,
            binding,
            pncp,
        })
    }

    /// The plaintext object.
    pub fn to_json(&self) -> Json {
        self.clone().into_json()
    }

    /// [`MessagePlaintext::to_json`], moving the body in instead of copying it.
    pub fn into_json(self) -> Json {
        let mut obj = Object::new().with("body", self.body);
        if let Some(b) = &self.binding {
            obj.insert("sidecar_exchange_binding", b.to_json());
        }
        if let Some(p) = &self.pncp {
            obj.insert("pncp", p.to_json());
        }
        obj.into()
    }
}

impl TerminalKind {
    /// The wire action name.
    pub fn action(&self) -> &'static str {
        match self {
            TerminalKind::Close => "close",
            TerminalKind::Cancel => "cancel",
            TerminalKind::Fail(_) => "fail",
        }
    }

    /// The failure code when the terminal carries no response (PROFILE §8.5).
    pub fn empty_failure_code(&self) -> &str {
        match self {
            TerminalKind::Close => "controller_closed_empty",
            TerminalKind::Cancel => "controller_cancelled",
            TerminalKind::Fail(code) => code,
        }
    }
}

impl ControlPlaintext {
    /// Reads decrypted control bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, Rejection> {
        Self::from_json(&parse_value(bytes)?)
    }

    /// Reads the closed control object.
    pub fn from_json(v: &Json) -> Result<Self, Rejection> {
        let obj = v
            .as_object()
            .ok_or_else(|| schema("control must be an object"))?;
        closed(
            obj,
            &[
                "action",
                "basis_event_ids",
                "exchange_id",
                "request_event_id",
                "schema",
            ],
            &[
                "coordinator_agent_id",
                "expected_coordinator_agent_id",
                "failure_reason_code",
                "response_event_ids",
            ],
            "control",
        )?;
        if str_member(obj, "schema")? != CONTROL_SCHEMA {
            return Err(schema("control schema is not the exchange control"));
        }
        let basis_event_ids = sorted_ids(obj.get("basis_event_ids"), "basis_event_ids")?;
        if basis_event_ids.is_empty() {
            return Err(schema("basis_event_ids must not be empty"));
        }
        Ok(ControlPlaintext {
            exchange_id: ExchangeId::parse(str_member(obj, "exchange_id")?)?,
            request_event_id: EventId::parse(str_member(obj, "request_event_id")?)?,
            basis_event_ids,
            action: read_action(obj)?,
        })
    }

    /// The closed control object.
    pub fn to_json(&self) -> Json {
        let obj = Object::new()
            .with("schema", CONTROL_SCHEMA.into())
            .with("exchange_id", self.exchange_id.as_str().into())
            .with("request_event_id", self.request_event_id.to_string().into())
            .with("basis_event_ids", id_array(&self.basis_event_ids));
        match &self.action {
            Action::Terminal {
                kind,
                response_event_ids,
            } => {
                let obj = obj
                    .with("action", kind.action().into())
                    .with("response_event_ids", id_array(response_event_ids));
                match kind {
                    TerminalKind::Fail(code) => {
                        obj.with("failure_reason_code", code.as_str().into())
                    }
                    _ => obj,
                }
            }
            Action::Reassign { expected, new } => obj
                .with("action", "reassign_coordinator".into())
                .with("expected_coordinator_agent_id", expected.as_str().into())
                .with("coordinator_agent_id", new.as_str().into()),
        }
        .into()
    }
}

fn read_action(obj: &Object) -> Result<Action, Rejection> {
    let has = |k: &str| obj.get(k).is_some();
    let action = str_member(obj, "action")?;
    if action == "reassign_coordinator" {
        if has("response_event_ids") || has("failure_reason_code") {
            return Err(schema("reassign_coordinator forbids terminal fields"));
        }
        let expected = opt_did(obj, "expected_coordinator_agent_id")?;
        let new = opt_did(obj, "coordinator_agent_id")?;
        return match (expected, new) {
            (Some(expected), Some(new)) if expected != new => {
                Ok(Action::Reassign { expected, new })
            }
            _ => Err(schema("reassign needs two different coordinators")),
        };
    }
    if has("expected_coordinator_agent_id") || has("coordinator_agent_id") {
        return Err(schema("terminal actions forbid the coordinator fields"));
    }
    let code = obj
        .get("failure_reason_code")
        .map(|_| str_member(obj, "failure_reason_code"))
        .transpose()?;
    let kind = match (action, code) {
        ("close", None) => TerminalKind::Close,
        ("cancel", None) => TerminalKind::Cancel,
        ("fail", Some(code)) if is_code(code) => TerminalKind::Fail(code.to_owned()),
        _ => {
            return Err(schema(format!(
                "action {action:?}: unknown, or failure_reason_code not present iff fail"
            )))
        }
    };
    Ok(Action::Terminal {
        kind,
        response_event_ids: sorted_ids(obj.get("response_event_ids"), "response_event_ids")?,
    })
}
