//! PNCP messages in exchanges (PROFILE §14.2): the `pncp` member a sealed message plaintext
//! may carry beside `body`, the role each kind goes with, and a message's `data` checked
//! against the action's data model (missing fields, raw values in redacted fields), and
//! redacted before sealing (§14.3).

use crate::canonical::{Json, Object};
use crate::error::{schema, Rejection};
use crate::exchange::ExchangeId;

use super::model::DataModel;
use super::redaction::{commitment, placeholder, placeholder_commitment, Salt};

/// A PNCP message kind: seed 000's PncpMessageKind plus `Request`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum PncpKind {
    /// The initial request (role `request`).
    Request,
    /// A question, either way (role `internal`).
    Question,
    /// The answer to a question (role `internal`).
    Answer,
    /// A status update (role `internal`).
    Status,
    /// A cancellation request (role `internal`).
    Cancel,
    /// The response (role `user_facing_response`).
    Response,
    /// An error (role `internal`).
    Error,
}

impl PncpKind {
    /// Every kind.
    pub const ALL: [PncpKind; 7] = [
        PncpKind::Request,
        PncpKind::Question,
        PncpKind::Answer,
        PncpKind::Status,
        PncpKind::Cancel,
        PncpKind::Response,
        PncpKind::Error,
    ];

    /// The kind's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            PncpKind::Request => "Request",
            PncpKind::Question => "Question",
            PncpKind::Answer => "Answer",
            PncpKind::Status => "Status",
            PncpKind::Cancel => "Cancel",
            PncpKind::Response => "Response",
            PncpKind::Error => "Error",
        }
    }

    /// Parses a kind's name.
    pub fn parse(text: &str) -> Result<PncpKind, Rejection> {
        PncpKind::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| {
                schema(format!(
                    "pncp.kind {text:?} is not one of Request, Question, Answer, Status, Cancel, Response, Error"
                ))
            })
    }

    /// The binding role a message of this kind must have: `request`,
    /// `user_facing_response`, or `internal`.
    pub const fn role(self) -> &'static str {
        match self {
            PncpKind::Request => "request",
            PncpKind::Response => "user_facing_response",
            _ => "internal",
        }
    }
}

impl std::fmt::Display for PncpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `pncp` member of a message plaintext.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Pncp {
    /// `kind`.
    pub kind: PncpKind,
    /// `subject`.
    pub subject: String,
    /// `action`.
    pub action: String,
    /// `question_id`, for questions and answers.
    pub question_id: Option<String>,
    /// `data`: an object keyed by field name.
    pub data: Option<Object>,
}

impl Pncp {
    /// Reads a `pncp` member: closed, `kind`, `subject` and `action` required.
    pub fn from_json(value: &Json) -> Result<Pncp, Rejection> {
        let o = value
            .as_object()
            .ok_or_else(|| schema("pncp must be an object"))?;
        if let Some(k) = o
            .keys()
            .find(|k| !["kind", "subject", "action", "question_id", "data"].contains(k))
        {
            return Err(schema(format!("pncp has an unknown member {k:?}")));
        }
        let text = |key: &str| {
            o.get(key)
                .and_then(Json::as_str)
                .ok_or_else(|| schema(format!("pncp.{key} must be a string")))
        };
        let question_id = match o.get("question_id") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .ok_or_else(|| schema("pncp.question_id must be a string"))?
                    .to_owned(),
            ),
        };
        let data = match o.get("data") {
            None => None,
            Some(v) => Some(
                v.as_object()
                    .ok_or_else(|| schema("pncp.data must be an object keyed by field name"))?
                    .clone(),
            ),
        };
        Ok(Pncp {
            kind: PncpKind::parse(text("kind")?)?,
            subject: text("subject")?.to_owned(),
            action: text("action")?.to_owned(),
            question_id,
            data,
        })
    }

    /// The member as JSON.
    pub fn to_json(&self) -> Json {
        let mut o = Object::new()
            .with("kind", Json::str(self.kind.as_str()))
            .with("subject", Json::str(self.subject.clone()))
            .with("action", Json::str(self.action.clone()));
        if let Some(q) = &self.question_id {
            o.insert("question_id", Json::str(q.clone()));
        }
        if let Some(d) = &self.data {
            o.insert("data", Json::Object(d.clone()));
        }
        Json::Object(o)
    }
}

/// Why a message's data does not fit its model.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DataFault {
    /// A non-optional field is missing (`pncp_data_invalid`).
    Missing(String),
    /// A redacted field holds a raw value, not a commitment (`redaction_violation`).
    RawRedacted(String),
}

impl std::fmt::Display for DataFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataFault::Missing(name) => write!(f, "the required field {name:?} is missing"),
            DataFault::RawRedacted(name) => write!(
                f,
                "the redacted field {name:?} holds a raw value instead of a commitment"
            ),
        }
    }
}

/// Checks `data` against `model`: every non-optional field present, and every redacted
/// field present only as a commitment placeholder. Fields the model does not name are
/// kept and not judged. No model: any data fits. A raw redacted value is reported first,
/// since it is the graver fault.
pub fn check_data(data: Option<&Object>, model: Option<&DataModel>) -> Result<(), DataFault> {
    let Some(model) = model else {
        return Ok(());
    };
    let empty = Object::new();
    let data = data.unwrap_or(&empty);
    if let Some(f) = model.redacted().find(|f| {
        data.get(&f.name)
            .is_some_and(|v| placeholder_commitment(v).is_none())
    }) {
        return Err(DataFault::RawRedacted(f.name.clone()));
    }
    match model
        .fields
        .iter()
        .find(|f| !f.optional && data.get(&f.name).is_none())
    {
        Some(f) => Err(DataFault::Missing(f.name.clone())),
        None => Ok(()),
    }
}

/// One redacted value taken out of a message's data: what a disclosure holds, but for
/// the event id, which is known once the message is sealed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Withheld {
    /// The field.
    pub field: String,
    /// Its salt.
    pub salt: Salt,
    /// The value kept off the ledger.
    pub value: Json,
}

/// Redacts `data` for `model` in `exchange` (§14.3): each redacted field that holds a value
/// is replaced by the placeholder of its commitment under a fresh salt from `salt`; returns
/// the data to seal and the values withheld. A placeholder already there is kept (the
/// caller redacted it). Data with no model is returned as it is.
pub fn redact(
    data: &Object,
    model: Option<&DataModel>,
    exchange: &ExchangeId,
    mut salt: impl FnMut() -> Salt,
) -> (Object, Vec<Withheld>) {
    let mut sealed = data.clone();
    let mut withheld = Vec::new();
    for field in model.into_iter().flat_map(DataModel::redacted) {
        let Some(value) = data.get(&field.name) else {
            continue;
        };
        if placeholder_commitment(value).is_some() {
            continue;
        }
        let s = salt();
        let c = commitment(exchange, &field.name, &s, value);
        sealed.remove(&field.name);
        sealed.insert(field.name.clone(), placeholder(&c));
        withheld.push(Withheld {
            field: field.name.clone(),
            salt: s,
            value: value.clone(),
        });
    }
    (sealed, withheld)
}
