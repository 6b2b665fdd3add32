//! `akledger actor publish|show` (PROFILE §14.1): publish a version of the signer's actor
//! model, and show an actor's current model as seen from an event.

use clap::{Args, Subcommand};

use akledger::actors::{publish_model, EntityId};
use akledger::canonical::{parse_value, Object};
use akledger::{EventId, Json, RealmId};

use super::author::{did, AuthorArgs, Signer};
use super::output::{
    json_text, print_lines, read_bounded, resolve_id, typed, CliError, LedgerArgs, Outcome,
};

/// Publish and read actor models (seed 000's versioned actors and their skills).
#[derive(Args, Debug)]
pub struct ActorArgs {
    #[command(subcommand)]
    pub action: ActorCmd,
}

/// `actor`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum ActorCmd {
    Publish(PublishArgs),
    Show(ShowModelArgs),
}

/// Publish a version of the signer's actor model (`ak.actor.model`); prints the event id.
///
/// The model is seed 000's ActorModel; its `id` is `<the key's did_core_id>#<version>`.
/// Version n > 1 names version n − 1 as its predecessor: the command fills it in from the
/// ledger, and refuses a version that does not follow the latest one admitted.
///
/// Example: akledger actor publish --key agent.key.json --model model.json
#[derive(Args, Debug)]
pub struct PublishArgs {
    /// The model file (JSON).
    #[arg(long, value_name = "FILE")]
    pub model: std::path::PathBuf,
    /// The realm (default: the ledger's only realm).
    #[arg(long, value_name = "ID")]
    pub realm: Option<String>,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// Show an actor's current model: the latest admitted version, or with `--at` the one an
/// event sees (the greatest version it covers). Exit 1 when there is none.
///
/// Example: akledger actor show ak:did_core:key:z6Mk… --at ak:event:… --json
#[derive(Args, Debug)]
pub struct ShowModelArgs {
    /// The actor (`ak:did_core:…`, or a `did:key:z…`).
    pub did: String,
    /// As seen from this event.
    #[arg(long, value_name = "EVENT")]
    pub at: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"entity_id","event_id","version","model"} (or {"model": null}).
    #[arg(long)]
    pub json: bool,
}

/// Largest model file read: a model is an event payload, bounded like one.
const MAX_MODEL_FILE: u64 = akledger::limits::MAX_EVENT_BYTES as u64;

/// `akledger actor …`.
pub fn run(args: ActorArgs) -> Result<Outcome, CliError> {
    match args.action {
        ActorCmd::Publish(a) => publish(&a),
        ActorCmd::Show(a) => show(&a),
    }
}

fn publish(args: &PublishArgs) -> Result<Outcome, CliError> {
    let text = read_bounded(&args.model, MAX_MODEL_FILE)?;
    let model = parse_value(&text)
        .map_err(|r| CliError::Usage(format!("{}: {r}", args.model.display())))?;
    let entity = model
        .as_object()
        .and_then(|o| o.get("id"))
        .and_then(Json::as_str)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{}: a model needs its \"id\": \"<did_core_id>#<version>\"",
                args.model.display()
            ))
        })
        .and_then(|id| {
            EntityId::parse(id)
                .map_err(|r| CliError::Usage(format!("{}: {r}", args.model.display())))
        })?;
    let s = Signer::new(&args.author)?;
    if entity.did() != s.actor.principal() {
        return Err(CliError::Usage(format!(
            "the model is {entity}, but the key signs for {}: an actor publishes its own model",
            s.actor.principal()
        )));
    }
    let realm: RealmId = match &args.realm {
        Some(text) => resolve_id(&s.ledger, text)?,
        None => only_realm(&s.ledger.realms())?,
    };
    let latest = s.ledger.actor_models(entity.did()).last().copied();
    let predecessor = match (entity.version(), latest) {
        (1, None) => None,
        (v, Some((latest, id))) if latest + 1 == v => Some(id),
        (v, Some((latest, _))) if v <= latest => {
            return Err(CliError::Usage(format!(
                "{entity}: the ledger already holds version {latest} of this actor; publish version {}",
                latest + 1
            )));
        }
        (v, latest) => {
            let have = latest.map_or("none".to_string(), |(n, _)| format!("version {n}"));
            return Err(CliError::Usage(format!(
                "{entity}: version {v} follows version {} of the same actor, and the ledger holds {have}",
                v.saturating_sub(1)
            )));
        }
    };
    let parents: Vec<EventId> = std::iter::once(realm.retype()).chain(predecessor).collect();
    let at = s.now_after(&parents)?;
    let event = publish_model(&s.key, s.actor.clone(), realm, &model, predecessor, at)?;
    s.submit(event, &[("entity_id", entity.to_string())])
}

fn only_realm(realms: &[RealmId]) -> Result<RealmId, CliError> {
    match realms {
        [one] => Ok(*one),
        [] => Err(CliError::Usage(
            "the ledger holds no realm: create one (`akledger realm create`) or pass --realm"
                .into(),
        )),
        _ => Err(CliError::Usage(format!(
            "the ledger holds {} realms: pass --realm",
            realms.len()
        ))),
    }
}

fn show(args: &ShowModelArgs) -> Result<Outcome, CliError> {
    let who = did(&args.did)?;
    let ledger = args.ledger.open()?;
    let found = match &args.at {
        Some(at) => {
            let at: EventId = resolve_id(&ledger, at)?;
            ledger.current_model_event(&who, &at)?
        }
        None => ledger.actor_models(&who).last().map(|(_, id)| *id),
    };
    let Some(id) = found else {
        if args.json {
            let none = Object::new().with("model", Json::Null);
            print_lines([json_text(&typed("akledger.actor.model", none))])?;
        } else {
            eprintln!(
                "akledger: actor show: no admitted model of {who}{}",
                match &args.at {
                    Some(at) => format!(" as seen from {at}"),
                    None => String::new(),
                }
            );
        }
        return Ok(Outcome::Findings);
    };
    let model = ledger.actor_model(&id)?;
    let event = ledger.get(&id)?.ok_or(akledger::Error::NotFound(id))?;
    let raw = event
        .envelope()
        .payload
        .as_object()
        .and_then(|o| o.get("model"))
        .cloned()
        .unwrap_or(Json::Null);
    if args.json {
        let out = Object::new()
            .with("entity_id", Json::str(model.entity.to_string()))
            .with("event_id", Json::str(id.to_string()))
            .with(
                "version",
                Json::Int(i64::try_from(model.entity.version()).unwrap_or(i64::MAX)),
            )
            .with("model", raw);
        print_lines([json_text(&typed("akledger.actor.model", out))])?;
    } else {
        let mut lines = vec![format!("{} {}", model.entity, id)];
        for subject in model.offered() {
            for action in &subject.actions {
                let redacted: Vec<&str> = [&action.input, &action.output]
                    .into_iter()
                    .flatten()
                    .flat_map(|m| m.redacted())
                    .map(|f| f.name.as_str())
                    .collect();
                let note = if redacted.is_empty() {
                    String::new()
                } else {
                    format!(" (redacted: {})", redacted.join(", "))
                };
                lines.push(format!("  offers {}/{}{note}", subject.name, action.name));
            }
        }
        for lock in &model.locks {
            lines.push(format!(
                "  locks {}/{} to {}",
                lock.subject,
                lock.action,
                [lock.version.as_deref(), lock.actor.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        print_lines(lines)?;
    }
    Ok(Outcome::Clean)
}
