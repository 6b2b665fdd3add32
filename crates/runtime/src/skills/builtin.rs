//! The skills a runtime configuration can name, by kind, and the [`SkillCatalog`] that
//! builds them from their declarations (an embedder registers kinds of its own):
//!
//! | kind      | settings                                   | what it is |
//! |-----------|--------------------------------------------|------------|
//! | `echo`    | none                                       | AEA's echo skill: a handler of the default protocol ([`EchoHandler`]) |
//! | `tally`   | `interval_ms` (60000)                      | a handler counting default-protocol envelopes per sender, never answering, and a cyclic behaviour writing the count into its tick records when it changed: a skill beside another on one protocol |
//! | `probe`   | `to`, `content` ("ping"), `interval_ms` (1000), `timeout_ms` (10000), `attempts` (3) | a state machine that pings `to` in a dialogue of its own until the same content comes back (`done`) or every attempt timed out (`failed`), with the handler that sees the answer |
//! | `notices` | `to`                                       | a handler of the decision maker's messages that tells `to` of every control, in a default-protocol dialogue |
//!
//! Two skills that keep dialogues of one protocol (`echo`, `probe`) see each other's
//! messages, as in AEA: the echo skill answers the probe's answers `INVALID_DIALOGUE`.

use std::collections::BTreeMap;

use super::notices::Notices;
use super::probe::probe;
use super::tally::tally;
use super::Skill;
use crate::handlers::EchoHandler;
use akledger::canonical::{Json, Object};
use akledger::error::Error;

/// A skill as a configuration names it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SkillDeclaration {
    /// The skill's name (`[A-Za-z_][A-Za-z0-9_]*`, unique in the runtime).
    pub name: String,
    /// Its kind, a name in the [`SkillCatalog`].
    pub kind: String,
    /// The kind's settings (an object).
    pub settings: Json,
}

/// Builds a skill from its declaration, or says why it cannot.
pub type SkillBuilder = Box<dyn Fn(&SkillDeclaration) -> Result<Skill, String> + Send + Sync>;

/// The kinds of skill a configuration may name.
///
/// # Examples
///
/// ```
/// use akledger::canonical::{Json, Object};
/// use akledger_runtime::skills::{SkillCatalog, SkillDeclaration};
///
/// let catalog = SkillCatalog::builtin();
/// let probe = SkillDeclaration {
///     name: "reachable".into(),
///     kind: "probe".into(),
///     settings: Object::new().with("to", "agent_a".into()).into(),
/// };
/// assert_eq!(catalog.build(&probe)?.name(), "reachable");
/// let typo = SkillDeclaration { kind: "prob".into(), ..probe };
/// assert!(catalog.build(&typo).unwrap_err().to_string().contains("unknown kind"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SkillCatalog {
    kinds: BTreeMap<String, SkillBuilder>,
}

impl std::fmt::Debug for SkillCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.kinds.keys()).finish()
    }
}

impl SkillCatalog {
    /// No kinds.
    pub fn empty() -> SkillCatalog {
        SkillCatalog {
            kinds: BTreeMap::new(),
        }
    }

    /// The built-in kinds (see the module doc).
    pub fn builtin() -> SkillCatalog {
        let mut catalog = SkillCatalog::empty();
        catalog.register("echo", |d| {
            Settings::of(d, &[])?;
            Skill::new(&d.name)
                .and_then(|s| s.handler(EchoHandler::default()))
                .map_err(|e| e.to_string())
        });
        catalog.register("tally", |d| {
            let s = Settings::of(d, &["interval_ms"])?;
            tally(&d.name, s.number("interval_ms", 60_000)?).map_err(|e| e.to_string())
        });
        catalog.register("probe", |d| {
            let s = Settings::of(
                d,
                &["to", "content", "interval_ms", "timeout_ms", "attempts"],
            )?;
            let to = s.required_text("to")?;
            let content = s.text("content")?.unwrap_or("ping");
            let timing = super::probe::Timing {
                interval_ms: s.number("interval_ms", 1_000)?,
                timeout_ms: s.number("timeout_ms", 10_000)?,
                attempts: u32::try_from(s.number("attempts", 3)?)
                    .map_err(|_| "attempts is too large".to_string())?,
            };
            probe(&d.name, to, content.as_bytes(), timing).map_err(|e| e.to_string())
        });
        catalog.register("notices", |d| {
            let s = Settings::of(d, &["to"])?;
            let to = s.required_text("to")?;
            Skill::new(&d.name)
                .and_then(|k| k.handler(Notices::new(to)))
                .map_err(|e| e.to_string())
        });
        catalog
    }

    /// Adds (or replaces) the kind `kind`.
    pub fn register(
        &mut self,
        kind: &str,
        build: impl Fn(&SkillDeclaration) -> Result<Skill, String> + Send + Sync + 'static,
    ) {
        self.kinds.insert(kind.to_string(), Box::new(build));
    }

    /// The kinds it knows.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.kinds.keys().map(String::as_str)
    }

    /// The skill `declaration` declares.
    pub fn build(&self, declaration: &SkillDeclaration) -> Result<Skill, Error> {
        let Some(build) = self.kinds.get(&declaration.kind) else {
            let known: Vec<&str> = self.kinds().collect();
            return Err(Error::Misuse(format!(
                "skill {}: unknown kind {:?} (known: {})",
                declaration.name,
                declaration.kind,
                known.join(", ")
            )));
        };
        build(declaration)
            .map_err(|why| Error::Misuse(format!("skill {}: {why}", declaration.name)))
    }
}

/// A declaration's settings, a closed set of members.
struct Settings<'a>(&'a Object);

impl<'a> Settings<'a> {
    /// The settings of `declaration`, which may hold only `allowed` members.
    fn of(declaration: &'a SkillDeclaration, allowed: &[&str]) -> Result<Settings<'a>, String> {
        let obj = declaration
            .settings
            .as_object()
            .ok_or_else(|| "settings is not an object".to_string())?;
        if let Some((extra, _)) = obj.iter().find(|(k, _)| !allowed.contains(k)) {
            return Err(format!(
                "unknown setting {extra:?} for kind {} (settings: {})",
                declaration.kind,
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                }
            ));
        }
        Ok(Settings(obj))
    }

    fn text(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.0.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| format!("{key} is not a string")),
        }
    }

    fn required_text(&self, key: &str) -> Result<&'a str, String> {
        self.text(key)?.ok_or_else(|| format!("{key} is missing"))
    }

    fn number(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.0.get(key) {
            None => Ok(default),
            Some(&Json::Int(n)) if n > 0 => Ok(n.unsigned_abs()),
            Some(_) => Err(format!("{key} is not a positive integer")),
        }
    }
}
