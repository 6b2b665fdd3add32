//! Seed 000's ActorModel (PROFILE §14.1): the entity id `<did_core_id>#<version>`, and a
//! model checked against every definition the seed gives (required members, their types
//! and enums), read into what the rules need: the skills offered, their data models with
//! the fields' `optional` and `redacted` flags, the questions, and the skill locks. Members
//! the seed does not name are kept in the event as they are and ignored here; labels,
//! forms and displays are checked for shape and stored, never enforced.

use super::pncp::PncpKind;
use crate::canonical::{Json, Object};
use crate::did::DidCoreId;
use crate::error::{schema, Rejection};
use crate::limits::MAX_ACTOR_VERSION;

/// `<did_core_id>#<version>`: an actor and one version of its model.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct EntityId {
    did: DidCoreId,
    version: u64,
}

impl EntityId {
    /// The entity of `did` at `version` (≥ 1).
    pub fn new(did: DidCoreId, version: u64) -> Result<EntityId, Rejection> {
        if version == 0 || version > MAX_ACTOR_VERSION {
            return Err(schema(format!(
                "an actor model version is between 1 and {MAX_ACTOR_VERSION}, not {version}"
            )));
        }
        Ok(EntityId { did, version })
    }

    /// Parses `<did_core_id>#<version>`: a decimal version ≥ 1 without leading zeros.
    pub fn parse(text: &str) -> Result<EntityId, Rejection> {
        let (did, version) = text.rsplit_once('#').ok_or_else(|| {
            schema(format!(
                "{text:?} is not an entity id (<did_core_id>#<version>)"
            ))
        })?;
        let digits_ok = !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_digit())
            && !version.starts_with('0');
        let version = version
            .parse::<u64>()
            .ok()
            .filter(|_| digits_ok)
            .ok_or_else(|| {
                schema(format!(
                    "{text:?}: the version after '#' is a decimal integer ≥ 1 without leading zeros"
                ))
            })?;
        EntityId::new(DidCoreId::parse(did)?, version)
    }

    /// The actor.
    pub fn did(&self) -> &DidCoreId {
        &self.did
    }

    /// The model's version.
    pub fn version(&self) -> u64 {
        self.version
    }
}

impl std::fmt::Display for EntityId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.did, self.version)
    }
}

/// One field of a data model (seed 000's SchemaRef; a bare string `s` is
/// `{"name": s, "optional": false, "redacted": false}`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Field {
    /// The key of the field in a message's `data`.
    pub name: String,
    /// A message may leave it out.
    pub optional: bool,
    /// Never written to the ledger nor shown to observers (§14.3).
    pub redacted: bool,
}

/// A data model (seed 000's SkillDataModel): its fields, in the model's order.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct DataModel {
    /// The fields.
    pub fields: Vec<Field>,
}

impl DataModel {
    /// The fields marked `redacted`.
    pub fn redacted(&self) -> impl Iterator<Item = &Field> {
        self.fields.iter().filter(|f| f.redacted)
    }

    /// The strictest model several actors' models of one message allow: every field any
    /// of them names, optional only where all that name it say so, redacted where any
    /// does. For a message whose model is not one actor's (the controller's questions,
    /// answered by whichever addressed agent coordinates).
    pub fn strictest<'a>(models: impl IntoIterator<Item = &'a DataModel>) -> DataModel {
        let mut fields: Vec<Field> = Vec::new();
        for field in models.into_iter().flat_map(|m| &m.fields) {
            match fields.iter_mut().find(|f| f.name == field.name) {
                Some(f) => {
                    f.optional &= field.optional;
                    f.redacted |= field.redacted;
                }
                None => fields.push(field.clone()),
            }
        }
        DataModel { fields }
    }
}

/// A question/answer pair an action declares (SkillQuestionAnswerModel).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Question {
    /// `id`: what a PNCP message's `question_id` names.
    pub id: String,
    /// The question's data model, if any.
    pub question: Option<DataModel>,
    /// The answer's data model, if any.
    pub answer: Option<DataModel>,
}

/// An action of a subject (ActionModel): its data models and questions.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Action {
    /// `action`.
    pub name: String,
    /// The data of a `Request`.
    pub input: Option<DataModel>,
    /// The data of a `Response`.
    pub output: Option<DataModel>,
    /// Questions the requester may ask the fulfiller.
    pub requester_questions: Vec<Question>,
    /// Questions the fulfiller may ask the requester.
    pub fulfiller_questions: Vec<Question>,
}

impl Action {
    /// The data model of a PNCP message of `kind` for this action (PROFILE §14.2): the
    /// input of a `Request`, the output of a `Response`, the question's `question` or
    /// `answer` model (found by `question_id` among the requester's and the fulfiller's
    /// questions) of a `Question` or `Answer`; none for the other kinds.
    pub fn model_for(&self, kind: PncpKind, question_id: Option<&str>) -> Option<&DataModel> {
        match kind {
            PncpKind::Request => self.input.as_ref(),
            PncpKind::Response => self.output.as_ref(),
            PncpKind::Question => self.question(question_id?)?.question.as_ref(),
            PncpKind::Answer => self.question(question_id?)?.answer.as_ref(),
            PncpKind::Status | PncpKind::Cancel | PncpKind::Error => None,
        }
    }

    /// The question `id` among the requester's and the fulfiller's.
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.requester_questions
            .iter()
            .chain(&self.fulfiller_questions)
            .find(|q| q.id == id)
    }

    /// Whether any of its data models (input, output, or a question's or answer's) marks a
    /// field `redacted`: a message of this skill may carry a value that must never reach the
    /// ledger (§14.3).
    pub fn declares_redacted(&self) -> bool {
        let questions = self
            .requester_questions
            .iter()
            .chain(&self.fulfiller_questions)
            .flat_map(|q| [&q.question, &q.answer]);
        [&self.input, &self.output]
            .into_iter()
            .chain(questions)
            .flatten()
            .any(|m| m.redacted().next().is_some())
    }
}

/// A subject and its actions (SubjectModel).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Subject {
    /// `subject`.
    pub name: String,
    /// Its actions.
    pub actions: Vec<Action>,
}

/// A skill lock (SkillSetLock): calls of (subject, action) use this skill-set version
/// and/or this actor. The fold holds a requester's PNCP requests to its own locks (see
/// [`SkillLock::admits`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SkillLock {
    /// The lock's key in `lock`.
    pub key: String,
    /// `subject`.
    pub subject: String,
    /// `action`.
    pub action: String,
    /// `version`: the skill set and version, if locked.
    pub version: Option<String>,
    /// `actor`: the actor entity, if locked.
    pub actor: Option<String>,
}

impl SkillLock {
    /// Whether an addressed agent whose current model is `agent` honours the lock: with
    /// `actor`, the agent is that entity (`<did>#<version>`, or a did for any version);
    /// with `version`, the agent offers the skill in the skill set of that id.
    pub fn admits(&self, agent: &ActorModel) -> bool {
        let actor_ok = self.actor.as_deref().is_none_or(|want| {
            want == agent.entity.to_string() || want == agent.entity.did().as_str()
        });
        let version_ok = self
            .version
            .as_deref()
            .is_none_or(|set| agent.offers_in(set, &self.subject, &self.action));
        actor_ok && version_ok
    }
}

/// A checked actor model.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ActorModel {
    /// `id`.
    pub entity: EntityId,
    /// `skills.skills`.
    pub subjects: Vec<Subject>,
    /// The subjects of `skills.skillsets`, each with the skill set's id.
    pub skillsets: Vec<(String, Vec<Subject>)>,
    /// `skills.canLock` (default `true`).
    pub can_lock: bool,
    /// `skills.lock`.
    pub locks: Vec<SkillLock>,
}

impl ActorModel {
    /// Checks `model` against seed 000's definitions; its `id` must be `entity`.
    pub fn parse(model: &Json, entity: &EntityId) -> Result<ActorModel, Rejection> {
        let o = object(model, "model")?;
        let id = req_str(o, "id", "model")?;
        if id != entity.to_string() {
            return Err(schema(format!(
                "model.id {id:?} must equal the event's entity_id {entity}"
            )));
        }
        opt_str_or_null(o, "description", "model")?;
        let empty = Object::new();
        let skills = match o.get("skills") {
            None => &empty,
            Some(v) => object(v, "model.skills")?,
        };
        let offered = subjects(skills.get("skills"), "model.skills.skills")?;
        let mut skillsets = Vec::new();
        for (i, r) in array_or_empty(skills.get("skillsets"), "model.skills.skillsets")?
            .iter()
            .enumerate()
        {
            let at = format!("model.skills.skillsets[{i}]");
            let r = object(r, &at)?;
            let id = req_str(r, "id", &at)?.to_owned();
            skillsets.push((id, subjects(r.get("skills"), &format!("{at}.skills"))?));
        }
        let can_lock = match skills.get("canLock") {
            None => true,
            Some(v) => v
                .as_bool()
                .ok_or_else(|| schema("model.skills.canLock must be a boolean"))?,
        };
        let mut locks = Vec::new();
        if let Some(v) = skills.get("lock") {
            for (key, lock) in object(v, "model.skills.lock")?.iter() {
                let at = format!("model.skills.lock.{key}");
                let l = object(lock, &at)?;
                locks.push(SkillLock {
                    key: key.to_owned(),
                    subject: req_str(l, "subject", &at)?.to_owned(),
                    action: req_str(l, "action", &at)?.to_owned(),
                    version: opt_str_or_null(l, "version", &at)?.map(str::to_owned),
                    actor: opt_str_or_null(l, "actor", &at)?.map(str::to_owned),
                });
            }
        }
        if let Some(v) = skills.get("observanceLock") {
            for (key, lock) in object(v, "model.skills.observanceLock")?.iter() {
                let at = format!("model.skills.observanceLock.{key}");
                let l = object(lock, &at)?;
                observance(req(l, "key", &at)?, &format!("{at}.key"))?;
                observance(req(l, "lock", &at)?, &format!("{at}.lock"))?;
            }
        }
        match skills.get("upgrades") {
            None | Some(Json::Null) => {}
            Some(v) => {
                for (key, value) in object(v, "model.skills.upgrades")?.iter() {
                    if value.as_str().is_none() {
                        return Err(schema(format!(
                            "model.skills.upgrades.{key} must be a string"
                        )));
                    }
                }
            }
        }
        Ok(ActorModel {
            entity: entity.clone(),
            subjects: offered,
            skillsets,
            can_lock,
            locks,
        })
    }

    /// Every subject this model offers: those of `skills`, then those of each skill set.
    pub fn offered(&self) -> impl Iterator<Item = &Subject> {
        self.subjects
            .iter()
            .chain(self.skillsets.iter().flat_map(|(_, s)| s))
    }

    /// The action (subject, action) this model offers: listed under that subject in
    /// `skills`, or in the `skills` of one of its `skillsets`.
    pub fn action(&self, subject: &str, action: &str) -> Option<&Action> {
        self.offered()
            .filter(|s| s.name == subject)
            .flat_map(|s| s.actions.iter())
            .find(|a| a.name == action)
    }

    /// Whether this model offers (subject, action).
    pub fn offers(&self, subject: &str, action: &str) -> bool {
        self.action(subject, action).is_some()
    }

    /// Whether the skill set `skillset` (its id, `<name>#<version>`) of this model offers
    /// (subject, action).
    pub fn offers_in(&self, skillset: &str, subject: &str, action: &str) -> bool {
        self.skillsets
            .iter()
            .filter(|(id, _)| id == skillset)
            .flat_map(|(_, subjects)| subjects)
            .any(|s| s.name == subject && s.actions.iter().any(|a| a.name == action))
    }

    /// The lock this model's actor puts on its calls of (subject, action), if any.
    pub fn lock_for(&self, subject: &str, action: &str) -> Option<&SkillLock> {
        self.locks
            .iter()
            .find(|l| l.subject == subject && l.action == action)
    }
}

fn subjects(value: Option<&Json>, at: &str) -> Result<Vec<Subject>, Rejection> {
    array_or_empty(value, at)?
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let at = format!("{at}[{i}]");
            let s = object(s, &at)?;
            let actions = req(s, "actions", &at)?
                .as_array()
                .ok_or_else(|| schema(format!("{at}.actions must be an array")))?
                .iter()
                .enumerate()
                .map(|(j, a)| action(a, &format!("{at}.actions[{j}]")))
                .collect::<Result<_, _>>()?;
            Ok(Subject {
                name: req_str(s, "subject", &at)?.to_owned(),
                actions,
            })
        })
        .collect()
}

fn action(value: &Json, at: &str) -> Result<Action, Rejection> {
    let a = object(value, at)?;
    opt_str_or_null(a, "description", at)?;
    for labels in ["requesterLabels", "fulfillerLabels"] {
        if let Some(v) = a.get(labels) {
            for (key, label) in object(v, &format!("{at}.{labels}"))?.iter() {
                let at = format!("{at}.{labels}.{key}");
                let l = object(label, &at)?;
                req_str(l, "label", &at)?;
                if req(l, "constraints", &at)?.as_array().is_none() {
                    return Err(schema(format!("{at}.constraints must be an array")));
                }
            }
        }
    }
    Ok(Action {
        name: req_str(a, "action", at)?.to_owned(),
        input: data_model(a.get("input"), &format!("{at}.input"))?,
        output: data_model(a.get("output"), &format!("{at}.output"))?,
        requester_questions: questions(
            a.get("requesterQuestions"),
            &format!("{at}.requesterQuestions"),
        )?,
        fulfiller_questions: questions(
            a.get("fulfillerQuestions"),
            &format!("{at}.fulfillerQuestions"),
        )?,
    })
}

fn questions(value: Option<&Json>, at: &str) -> Result<Vec<Question>, Rejection> {
    array_or_empty(value, at)?
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let at = format!("{at}[{i}]");
            let o = object(q, &at)?;
            req_str(o, "name", &at)?;
            opt_str_or_null(o, "description", &at)?;
            Ok(Question {
                id: req_str(o, "id", &at)?.to_owned(),
                question: data_model(o.get("question"), &format!("{at}.question"))?,
                answer: data_model(o.get("answer"), &format!("{at}.answer"))?,
            })
        })
        .collect()
}

/// A SkillDataModel or null: one wrapper, an array of wrappers, or an object of wrappers.
fn data_model(value: Option<&Json>, at: &str) -> Result<Option<DataModel>, Rejection> {
    let fields = match value {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, w)| field(w, &format!("{at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(Json::Object(o)) if !is_schema_ref(o) => o
            .iter()
            .map(|(key, w)| field(w, &format!("{at}.{key}")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(one) => vec![field(one, at)?],
    };
    let mut names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w.first() == w.get(1)) {
        return Err(schema(format!(
            "{at}: two fields are named {:?}",
            w.first().copied().unwrap_or_default()
        )));
    }
    Ok(Some(DataModel { fields }))
}

/// An object is a SchemaRef (not a mapping of wrappers) when its `name` is a string.
fn is_schema_ref(o: &Object) -> bool {
    o.get("name").and_then(Json::as_str).is_some()
}

/// A SchemaRefWrapper: a string, or a SchemaRef with `name`, `optional` and `redacted`.
fn field(value: &Json, at: &str) -> Result<Field, Rejection> {
    if let Some(name) = value.as_str() {
        return Ok(Field {
            name: name.to_owned(),
            optional: false,
            redacted: false,
        });
    }
    let o = object(value, at)?;
    let flag = |key: &str| {
        req(o, key, at)?
            .as_bool()
            .ok_or_else(|| schema(format!("{at}.{key} must be a boolean")))
    };
    Ok(Field {
        name: req_str(o, "name", at)?.to_owned(),
        optional: flag("optional")?,
        redacted: flag("redacted")?,
    })
}

/// A SkillObservanceLockKey or SkillObservanceLockValue: `obsId`, `subject`, `action`,
/// `filter`, and `requester`/`fulfiller` as strings or null.
fn observance(value: &Json, at: &str) -> Result<(), Rejection> {
    let o = object(value, at)?;
    for key in ["obsId", "subject", "action"] {
        req_str(o, key, at)?;
    }
    for key in ["requester", "fulfiller"] {
        opt_str_or_null(o, key, at)?;
    }
    filter(req(o, "filter", at)?, &format!("{at}.filter")).map(drop)
}

/// The kinds of PNCP message an observation filter names (seed 000's PncpMessageKind).
pub const OBSERVABLE_KINDS: [&str; 6] = [
    "Question", "Answer", "Status", "Cancel", "Response", "Error",
];

/// An ObservationMessageFilter: `kind` `Skill` or `Pncp`, and `pncp` a kind or null.
pub fn filter(value: &Json, at: &str) -> Result<(String, Option<String>), Rejection> {
    let o = object(value, at)?;
    let kind = req_str(o, "kind", at)?;
    if kind != "Skill" && kind != "Pncp" {
        return Err(schema(format!(
            "{at}.kind must be \"Skill\" or \"Pncp\", not {kind:?}"
        )));
    }
    let pncp = opt_str_or_null(o, "pncp", at)?;
    if let Some(p) = pncp.filter(|p| !OBSERVABLE_KINDS.contains(p)) {
        return Err(schema(format!(
            "{at}.pncp must be one of {OBSERVABLE_KINDS:?}, not {p:?}"
        )));
    }
    Ok((kind.to_owned(), pncp.map(str::to_owned)))
}

fn object<'a>(value: &'a Json, at: &str) -> Result<&'a Object, Rejection> {
    value
        .as_object()
        .ok_or_else(|| schema(format!("{at} must be an object")))
}

fn req<'a>(o: &'a Object, key: &str, at: &str) -> Result<&'a Json, Rejection> {
    o.get(key)
        .ok_or_else(|| schema(format!("{at}.{key} is required")))
}

fn req_str<'a>(o: &'a Object, key: &str, at: &str) -> Result<&'a str, Rejection> {
    req(o, key, at)?
        .as_str()
        .ok_or_else(|| schema(format!("{at}.{key} must be a string")))
}

fn opt_str_or_null<'a>(o: &'a Object, key: &str, at: &str) -> Result<Option<&'a str>, Rejection> {
    match o.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| schema(format!("{at}.{key} must be a string or null"))),
    }
}

fn array_or_empty<'a>(value: Option<&'a Json>, at: &str) -> Result<&'a [Json], Rejection> {
    match value {
        None => Ok(&[]),
        Some(v) => v
            .as_array()
            .ok_or_else(|| schema(format!("{at} must be an array"))),
    }
}

/// The `ak.actor.model` event publishing `model` (seed 000's ActorModel, whose `id` is the
/// entity) in `realm_id`, authored by `actor` (whose principal is the entity's did) and
/// signed with `key`; `predecessor` is the admitted model of the version before (required
/// above version 1). Building the event checks the model (its payload is read back as
/// admission reads it): what this returns, admission accepts as far as its payload goes.
pub fn publish_model(
    key: &crate::ed25519_dalek::SigningKey,
    actor: crate::did::ActorId,
    realm_id: crate::id::RealmId,
    model: &Json,
    predecessor: Option<crate::id::EventId>,
    at: crate::time::Timestamp,
) -> Result<crate::event::Event<crate::event::Unverified>, Rejection> {
    use crate::envelope::{ScopeRef, ACTOR_MODEL, ACTOR_MODEL_SCHEMA};
    let id = object(model, "model")?;
    let entity = EntityId::parse(req_str(id, "id", "model")?)?;
    let mut payload = Object::new()
        .with("schema", Json::str(ACTOR_MODEL_SCHEMA))
        .with("entity_id", Json::str(entity.to_string()))
        .with("model", model.clone());
    if let Some(p) = predecessor {
        payload.insert("predecessor_event_ref", Json::str(p.to_string()));
    }
    crate::event::EventBuilder::new(ACTOR_MODEL, ScopeRef::Realm { realm_id }, actor, at)
        .payload(Json::Object(payload))
        .sign(key)
}
