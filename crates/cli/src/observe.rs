//! `akledger observe grant|revoke|feed` (PROFILE §14.4): the controller lets an observer
//! watch the exchanges of one skill, ends that again, and computes the observer's feed.

use clap::{Args, Subcommand};

use akledger::actors::{EntityId, Filter, Grant};
use akledger::{ActorId, EventId, SidecarId};
use rand_core::OsRng;

use super::author::{did, AuthorArgs, Signer};
use super::output::{
    json_text, print_lines, resolve_id, resolve_id_at, typed, CliError, LedgerArgs, Outcome,
};

/// Observation grants and observer feeds (seed 000's observers).
#[derive(Args, Debug)]
pub struct ObserveArgs {
    #[command(subcommand)]
    pub action: ObserveCmd,
}

/// `observe`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum ObserveCmd {
    Grant(GrantArgs),
    Revoke(RevokeArgs),
    Feed(FeedArgs),
}

/// Grant an observer the exchanges of one skill (`ak.observation.grant`, sealed; the
/// sidecar's controller only); prints the grant's event id.
///
/// The grant applies to exchanges requested after it (their request covers it), whose
/// request names the skill and, with `--requester`/`--fulfiller`, whose requester's and
/// coordinator's entities (`<did>#<version>`, as seen from the request) are the given ones.
///
/// Example: akledger observe grant --key alice.key.json --sidecar ak:sidecar:… --observer ak:did_core:key:z6Mk… --subject orders --action place --filter Pncp:Response
#[derive(Args, Debug)]
pub struct GrantArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: String,
    /// The observer, a service (`ak:did_core:…`, or a `did:key:z…`).
    #[arg(long, value_name = "ACTOR")]
    pub observer: String,
    /// The skill's subject.
    #[arg(long)]
    pub subject: String,
    /// The skill's action.
    #[arg(long)]
    pub action: String,
    /// Only exchanges whose requester is this entity (`<did>#<version>`).
    #[arg(long, value_name = "E")]
    pub requester: Option<String>,
    /// Only exchanges whose coordinator is this entity (`<did>#<version>`).
    #[arg(long, value_name = "E")]
    pub fulfiller: Option<String>,
    /// What the observer sees: `Skill` (each change of the exchange's state) or `Pncp`
    /// (PNCP messages), `Pncp:KIND` for one kind (Question, Answer, Status, Cancel,
    /// Response, Error).
    #[arg(long, value_name = "F")]
    pub filter: String,
    /// The observer's name for the observation (default: the subject/action).
    #[arg(long, value_name = "ID")]
    pub obs_id: Option<String>,
    /// The sidecar key epoch to seal with.
    #[arg(long, default_value_t = 1)]
    pub epoch: u64,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// End a grant (`ak.observation.revoke`; the controller only): exchanges requested after
/// the revoke are not observed. Prints the revoke's event id.
///
/// Example: akledger observe revoke --key alice.key.json --sidecar ak:sidecar:… --grant ak:event:…
#[derive(Args, Debug)]
pub struct RevokeArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: String,
    /// The grant to end.
    #[arg(long, value_name = "EVENT")]
    pub grant: String,
    /// The sidecar key epoch to seal with.
    #[arg(long, default_value_t = 1)]
    pub epoch: u64,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// Print a grant's observer feed: one line per item, for the exchanges the grant applies to
/// only. Redacted fields show their commitments, never values. Needs the sidecar key.
///
/// Example: akledger observe feed --grant ak:event:… --follow --json
#[derive(Args, Debug)]
pub struct FeedArgs {
    /// The grant.
    #[arg(long, value_name = "EVENT")]
    pub grant: String,
    /// Keep printing new items as events are admitted.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// One JSON object per item: {"event_id","exchange_id","kind","author","created_at","data"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger observe …`.
pub fn run(args: ObserveArgs) -> Result<Outcome, CliError> {
    match args.action {
        ObserveCmd::Grant(a) => grant(&a),
        ObserveCmd::Revoke(a) => revoke(&a),
        ObserveCmd::Feed(a) => feed(&a),
    }
}

fn grant(args: &GrantArgs) -> Result<Outcome, CliError> {
    let usage = |what: &str, r: akledger::Rejection| CliError::Usage(format!("{what}: {r}"));
    let entity = |text: &Option<String>, what: &str| {
        text.as_deref()
            .map(EntityId::parse)
            .transpose()
            .map_err(|r| usage(what, r))
    };
    let grant = Grant {
        obs_id: args
            .obs_id
            .clone()
            .unwrap_or_else(|| format!("{}/{}", args.subject, args.action)),
        observer: ActorId::Service {
            service_id: did(&args.observer)?,
        },
        subject: args.subject.clone(),
        action: args.action.clone(),
        requester: entity(&args.requester, "--requester")?,
        fulfiller: entity(&args.fulfiller, "--fulfiller")?,
        filter: Filter::parse(&args.filter).map_err(|r| usage("--filter", r))?,
    };
    let s = Signer::new(&args.author)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, &args.sidecar)?;
    let author = s.author(sidecar, args.epoch)?;
    let at = s.now_after(&[sidecar.retype()])?;
    let event = author.grant_observation(&grant, &[sidecar.retype()], at, &mut OsRng)?;
    s.submit(event, &[])
}

fn revoke(args: &RevokeArgs) -> Result<Outcome, CliError> {
    let s = Signer::new(&args.author)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, &args.sidecar)?;
    let grant: EventId = resolve_id(&s.ledger, &args.grant)?;
    let author = s.author(sidecar, args.epoch)?;
    let at = s.now_after(&[grant])?;
    let event = author.revoke_observation(grant, &[], at, &mut OsRng)?;
    s.submit(event, &[])
}

fn feed(args: &FeedArgs) -> Result<Outcome, CliError> {
    let grant: EventId = resolve_id_at(&args.ledger, &args.grant)?;
    let mut shown = std::collections::HashSet::new();
    let mut look = |ledger: &akledger::Ledger| -> Result<Vec<String>, CliError> {
        let items = ledger.observer_feed(&grant).map_err(|e| match e {
            akledger::Error::NotFound(_) => CliError::Usage(format!(
                "{grant} is not an observation grant this ledger holds and its keyring opens"
            )),
            e => e.into(),
        })?;
        Ok(items
            .into_iter()
            .filter(|i| shown.insert(i.event_id))
            .map(|i| {
                if args.json {
                    json_text(&typed("akledger.observe.item", i.to_json()))
                } else {
                    format!(
                        "{} {} {} {} {}",
                        i.created_at, i.exchange_id, i.kind, i.author, i.event_id
                    )
                }
            })
            .collect())
    };
    let mark = super::follow::mark(&args.ledger);
    let opened = args.ledger.open()?;
    print_lines(look(&opened)?)?;
    drop(opened);
    if !args.follow {
        return Ok(Outcome::Clean);
    }
    super::follow::follow(&args.ledger, mark, look)
}
