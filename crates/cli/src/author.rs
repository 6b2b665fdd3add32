//! Authoring: `realm create`, `strand create`, `sidecar create|attach`,
//! `exchange request|respond|control`. Each signs with a key file, appends to the ledger
//! and prints the new event's id.
//!
//! The signer acts as a service whose principal is its own `ak:did_core:key:` id. Times
//! come from the clock, raised to the latest causal parent's when the clock is behind;
//! nonces from the operating system.

use clap::{Args, Subcommand};

use akledger::actors::PncpKind;
use akledger::canonical::Object;
use akledger::ed25519_dalek::SigningKey;
use akledger::exchange::{Act, ExchangeView, RequestContext, TrackRef};
use akledger::{
    ActorId, Appended, DidCoreId, Event, EventId, ExchangeId, Ledger, Projection, RealmId,
    SidecarAuthor, SidecarId, SidecarInfo, StrandId, Timestamp, Unverified,
};
use rand_core::OsRng;

use super::io::{outcome_json, outcome_text};
use super::keys::{ensure_sidecar_key, load_signing_key};
use super::output::{json_text, print_lines, resolve_id, typed, CliError, LedgerArgs, Outcome};

/// What every authoring command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct AuthorArgs {
    /// The signing key file (from `akledger keygen`).
    #[arg(long, value_name = "FILE")]
    pub key: std::path::PathBuf,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"event_id", "outcome", …} instead of the id.
    #[arg(long)]
    pub json: bool,
}

/// A control action on the command line.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ControlArg {
    /// Close: `complete` with the responses seen, `failed` (controller_closed_empty) without.
    Close,
    /// Cancel: `complete` with responses, else `failed` (controller_cancelled).
    Cancel,
    /// Fail with a reason code: `complete` with responses, else `failed` with the code.
    Fail {
        /// The failure reason code (`^[a-z][a-z0-9_]{0,63}$`).
        #[arg(long)]
        code: String,
    },
    /// Hand the exchange to another addressed agent.
    Reassign {
        /// The new coordinator (`ak:did_core:…`, or a `did:key:z…`).
        #[arg(long, value_name = "AGENT")]
        to: String,
    },
}

pub(crate) struct Signer {
    pub(crate) key: SigningKey,
    pub(crate) actor: ActorId,
    pub(crate) ledger: Ledger,
    args: AuthorArgs,
}

impl Signer {
    pub(crate) fn new(args: &AuthorArgs) -> Result<Self, CliError> {
        let key = load_signing_key(&args.key)?;
        let actor = ActorId::service_for_key(&key.verifying_key());
        let ledger = args.ledger.open_for_writing()?;
        Ok(Signer {
            key,
            actor,
            ledger,
            args: args.clone(),
        })
    }

    /// Now, but never earlier than any of `parents` this ledger admitted (PROFILE §3); the
    /// others (pending or unknown here) are the admission's business.
    pub(crate) fn now_after(&self, parents: &[EventId]) -> Result<Timestamp, CliError> {
        let admitted: Vec<EventId> = parents
            .iter()
            .filter(|id| self.ledger.contains(id))
            .copied()
            .collect();
        Ok(self.ledger.now_after(&admitted)?)
    }

    /// The admitted sidecar, with its attaches, as the fold's sidecar description.
    fn sidecar(&self, sidecar: SidecarId) -> Result<SidecarInfo, CliError> {
        self.ledger
            .sidecar_info(&sidecar)?
            .ok_or_else(|| CliError::Usage(format!("{sidecar}: no such sidecar in this ledger")))
    }

    /// A sealing author in `sidecar` with the keyring's key at `epoch`.
    pub(crate) fn author(&self, sidecar: SidecarId, epoch: u64) -> Result<SidecarAuthor, CliError> {
        let info = self.sidecar(sidecar)?;
        SidecarAuthor::from_keyring(
            self.key.clone(),
            self.actor.clone(),
            info,
            &self.ledger.verifier().keyring(),
            epoch,
        )
        .ok_or_else(|| {
            CliError::Usage(format!(
                "no key for {sidecar} at epoch {epoch} in the keyring (add one with `akledger keys add --sidecar {sidecar} --epoch {epoch} --key …`)"
            ))
        })
    }

    /// Appends `event` and prints its id (or the JSON outcome) plus `extra` members.
    /// Reports a PNCP message the sidecar handle appended: its id (and, with `--json`,
    /// `{"event_id","outcome","disclosed"}`, the redacted fields kept in the disclosure store).
    fn report_skill(&self, id: EventId, json: bool) -> Result<Outcome, CliError> {
        if !json {
            print_lines([id.to_string()])?;
            return Ok(Outcome::Clean);
        }
        let disclosed: Vec<akledger::Json> = self
            .ledger
            .disclosures_of(&id)?
            .into_iter()
            .map(|d| d.field.into())
            .collect();
        let out = Object::new()
            .with("event_id", id.to_string().into())
            .with("outcome", "admitted".into())
            .with("disclosed", akledger::Json::Array(disclosed));
        print_lines([json_text(&typed("akledger.authored", out))])?;
        Ok(Outcome::Clean)
    }

    pub(crate) fn submit(
        &self,
        event: Event<Unverified>,
        extra: &[(&str, String)],
    ) -> Result<Outcome, CliError> {
        let outcome = self.ledger.append(event.bytes())?;
        self.report(&event, &outcome, extra)
    }

    /// Appends `events` in order, stopping at the first one that is not admitted (so a
    /// refused sidecar create leaves no strand or attach behind), and reports like
    /// [`Signer::submit`]: that event's outcome, else the first event's.
    fn submit_chain(
        &self,
        events: &[&Event<Unverified>],
        extra: &[(&str, String)],
    ) -> Result<Outcome, CliError> {
        let mut shown = None;
        for event in events {
            let outcome = self.ledger.append(event.bytes())?;
            let stop = !matches!(outcome, Appended::Admitted(_) | Appended::Duplicate(_));
            if shown.is_none() || stop {
                shown = Some((*event, outcome));
            }
            if stop {
                break;
            }
        }
        let (event, outcome) = shown.ok_or_else(|| CliError::Usage("nothing to submit".into()))?;
        self.report(event, &outcome, extra)
    }

    fn report(
        &self,
        event: &Event<Unverified>,
        outcome: &Appended,
        extra: &[(&str, String)],
    ) -> Result<Outcome, CliError> {
        let outcome = outcome.clone();
        let rejected = matches!(outcome, Appended::Rejected { .. });
        if self.args.json {
            let mut obj: Object = outcome_json(&outcome, event.bytes());
            for (k, v) in extra {
                obj.insert(*k, v.as_str().into());
            }
            print_lines([json_text(&typed("akledger.authored", obj))])?;
        } else if rejected {
            eprintln!("akledger: {}", outcome_text(&outcome, event.bytes()));
        } else {
            let mut lines = vec![event.id().to_string()];
            lines.extend(extra.iter().map(|(_, v)| v.clone()));
            print_lines(lines)?;
            if !matches!(outcome, Appended::Admitted(_)) {
                eprintln!("{}", outcome_text(&outcome, event.bytes()));
            }
        }
        Ok(if rejected {
            Outcome::Findings
        } else {
            Outcome::Clean
        })
    }

    fn projection(&self, sidecar: SidecarId, exchange: &str) -> Result<Projection, CliError> {
        self.ledger.exchange(&sidecar, &exchange_id(exchange)?)?.ok_or_else(|| {
            CliError::Usage(format!(
                "{exchange}: no exchange with a canonical request in {sidecar} (is the keyring's sidecar key right?)"
            ))
        })
    }
}

fn exchange_id(text: &str) -> Result<ExchangeId, CliError> {
    super::output::exchange_arg(text)
}

/// An agent on the command line: an `ak:did_core:…` principal, or a `did:key:z…` (as
/// `keygen` prints it), converted to its `ak:did_core:key:` principal.
pub(crate) fn did(text: &str) -> Result<DidCoreId, CliError> {
    let parsed = if text.starts_with("did:key:") {
        akledger::did::key_of_did_key(text).map(|k| DidCoreId::for_key(&k))
    } else {
        DidCoreId::parse(text)
    };
    parsed.map_err(|_| {
        CliError::Usage(format!(
            "{text:?} is not an agent: give its principal (ak:did_core:key:z…, ak:did_core:web:…) or the did:key:z… that keygen prints"
        ))
    })
}

fn body(text: &str) -> akledger::Json {
    Object::new().with("text", text.into()).into()
}

/// Author realm events.
#[derive(Args, Debug)]
pub struct RealmArgs {
    #[command(subcommand)]
    pub action: RealmCmd,
}

/// `realm`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum RealmCmd {
    Create(RealmCreateArgs),
}

/// Create a realm; prints the event id and the realm id.
///
/// Example: akledger realm create --key alice.key.json
#[derive(Args, Debug)]
pub struct RealmCreateArgs {
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// `akledger realm …`.
pub fn realm(args: RealmArgs) -> Result<Outcome, CliError> {
    match args.action {
        RealmCmd::Create(a) => realm_create(&a.author),
    }
}

/// `akledger realm create`: prints the event id and the realm id.
fn realm_create(args: &AuthorArgs) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let event = akledger::exchange::create_realm(&s.key, s.actor.clone(), s.now_after(&[])?)?;
    let realm: RealmId = event.id().retype();
    s.submit(event, &[("realm_id", realm.to_string())])
}

/// Author strand events.
#[derive(Args, Debug)]
pub struct StrandArgs {
    #[command(subcommand)]
    pub action: StrandCmd,
}

/// `strand`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum StrandCmd {
    Create(StrandCreateArgs),
}

/// Create a strand in a realm; prints the event id and the strand id.
///
/// Example: akledger strand create --realm ak:realm:… --key alice.key.json
#[derive(Args, Debug)]
pub struct StrandCreateArgs {
    /// The realm.
    #[arg(long, value_name = "ID")]
    pub realm: String,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// `akledger strand …`.
pub fn strand(args: StrandArgs) -> Result<Outcome, CliError> {
    match args.action {
        StrandCmd::Create(a) => strand_create(&a.author, &a.realm),
    }
}

/// `akledger strand create --realm R`: prints the event id and the strand id.
fn strand_create(args: &AuthorArgs, realm: &str) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let realm: RealmId = resolve_id(&s.ledger, realm)?;
    let at = s.now_after(&[realm.retype()])?;
    let event = akledger::exchange::create_strand(&s.key, s.actor.clone(), realm, at)?;
    let strand: StrandId = event.id().retype();
    s.submit(event, &[("strand_id", strand.to_string())])
}

/// Author sidecar events.
#[derive(Args, Debug)]
pub struct SidecarArgs {
    #[command(subcommand)]
    pub action: SidecarCmd,
}

/// `sidecar`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum SidecarCmd {
    Create(SidecarCreateArgs),
    Attach(SidecarAttachArgs),
    Run(super::sidecar_run::RunArgs),
}

/// Create your sidecar in a realm (you become its controller), with your private strand
/// attached (version 1); prints the event id, the sidecar id and the strand id, and adds
/// a fresh epoch-1 sidecar key to the keyring file.
///
/// Example: akledger sidecar create --realm ak:realm:… --key alice.key.json
#[derive(Args, Debug)]
pub struct SidecarCreateArgs {
    /// The realm.
    #[arg(long, value_name = "ID")]
    pub realm: String,
    /// Attach this existing strand of the realm instead of creating one.
    #[arg(long, value_name = "ID")]
    pub strand: Option<String>,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// Attach your sidecar to another strand of its realm (controller only): the next
/// attach version; requests and controls from then on name that strand.
///
/// Example: akledger sidecar attach --sidecar ak:sidecar:… --strand ak:strand:… --key alice.key.json
#[derive(Args, Debug)]
pub struct SidecarAttachArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: String,
    /// The strand.
    #[arg(long, value_name = "ID")]
    pub strand: String,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// `akledger sidecar …`.
pub fn sidecar(args: SidecarArgs) -> Result<Outcome, CliError> {
    match args.action {
        SidecarCmd::Create(a) => sidecar_create(&a.author, &a.realm, a.strand.as_deref()),
        SidecarCmd::Attach(a) => sidecar_attach(&a.author, &a.sidecar, &a.strand),
        SidecarCmd::Run(a) => super::sidecar_run::run(a),
    }
}

/// `akledger sidecar create --realm R [--strand S]`: the sidecar, the controller's private
/// strand (unless `S`, an existing strand of the realm, is given) and the version-1 attach,
/// appended in that order (stopping at the first refused one). Prints the sidecar create's id, the sidecar id and the strand id, and puts
/// a fresh epoch-1 sidecar key in the keyring file unless it has one.
fn sidecar_create(
    args: &AuthorArgs,
    realm: &str,
    strand: Option<&str>,
) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let realm: RealmId = resolve_id(&s.ledger, realm)?;
    let strand: Option<StrandId> = strand.map(|t| resolve_id(&s.ledger, t)).transpose()?;
    let mut parents = vec![realm.retype()];
    parents.extend(strand.map(|st| st.retype()));
    let at = s.now_after(&parents)?;
    let private =
        akledger::exchange::create_private_sidecar(&s.key, s.actor.clone(), realm, strand, at)?;
    let sidecar = private.info.sidecar_id;
    let mut events = vec![&private.sidecar];
    if strand.is_none() {
        events.push(&private.strand);
    }
    events.push(&private.attach);
    let extra = [
        ("sidecar_id", sidecar.to_string()),
        ("strand_id", private.attach_strand().to_string()),
    ];
    let outcome = s.submit_chain(&events, &extra)?;
    if outcome == Outcome::Clean {
        let path = args.ledger.keyring_target();
        if ensure_sidecar_key(&path, sidecar, 1)? {
            eprintln!("added a new sidecar key (epoch 1) to {}", path.display());
        }
    }
    Ok(outcome)
}

/// `akledger sidecar attach --sidecar X --strand S`: the controller binds the sidecar to
/// another strand of its realm (the next attach version). Prints the event id.
fn sidecar_attach(args: &AuthorArgs, sidecar: &str, strand: &str) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, sidecar)?;
    let strand: StrandId = resolve_id(&s.ledger, strand)?;
    let info = s.sidecar(sidecar)?;
    let latest = info
        .attaches
        .iter()
        .max_by_key(|a| (a.version, a.event_id.digest()))
        .map(|a| (a.event_id, a.version));
    let mut parents = vec![sidecar.retype(), strand.retype()];
    parents.extend(latest.map(|l| l.0));
    let at = s.now_after(&parents)?;
    let event =
        akledger::exchange::attach_context(&s.key, s.actor.clone(), &info, strand, latest, at)?;
    s.submit(event, &[])
}

/// `exchange`'s subcommands: authoring.
#[derive(Subcommand, Debug)]
pub enum ExchangeCmd {
    Request(RequestArgs),
    Respond(RespondArgs),
    Control(ControlArgs),
}

/// Open an exchange (controller only): address agents with a message.
///
/// Example: akledger exchange request --key alice.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij --agent ak:did_core:key:z6Mk… --body "summarize the thread"
#[derive(Args, Debug)]
pub struct RequestArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: String,
    /// The exchange id (`^[A-Za-z0-9._~=-]{22,128}$`).
    #[arg(long, value_name = "X")]
    pub exchange_id: String,
    /// An addressed agent (repeat for several): `ak:did_core:…`, or a `did:key:z…`
    /// (converted to its `ak:did_core:key:` principal).
    #[arg(long = "agent", value_name = "AGENT", required = true)]
    pub agents: Vec<String>,
    /// The coordinator (required when several agents are addressed); `did:key:` accepted.
    #[arg(long, value_name = "AGENT")]
    pub coordinator: Option<String>,
    /// The message text.
    #[arg(long)]
    pub body: String,
    /// The source track name.
    #[arg(long, default_value = "main")]
    pub track: String,
    /// The sidecar key epoch to seal with.
    #[arg(long, default_value_t = 1)]
    pub epoch: u64,
    /// A PNCP skill `SUBJECT/ACTION` (PROFILE §14.2): the message carries its data, and
    /// the redacted fields of the actor model's data model are committed to before sealing,
    /// their values kept in DIR/disclosures.jsonl (§14.3; `akledger disclose`).
    #[arg(long, value_name = "SUBJECT/ACTION")]
    pub skill: Option<String>,
    /// The PNCP data (a JSON object keyed by field name); with `--skill`.
    #[arg(long, value_name = "FILE", requires = "skill")]
    pub data: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// Answer an exchange's canonical request (an addressed agent).
///
/// Example: akledger exchange respond --key bob.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij --completes --body "done"
#[derive(Args, Debug)]
pub struct RespondArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: String,
    /// The exchange id.
    #[arg(long, value_name = "X")]
    pub exchange_id: String,
    /// Mark the answer as completing the exchange (the coordinator's answer).
    #[arg(long)]
    pub completes: bool,
    /// The message text.
    #[arg(long)]
    pub body: String,
    /// The sidecar key epoch to seal with.
    #[arg(long, default_value_t = 1)]
    pub epoch: u64,
    /// A PNCP skill `SUBJECT/ACTION` (PROFILE §14.2): the message carries its data, and
    /// the redacted fields of the actor model's data model are committed to before sealing,
    /// their values kept in DIR/disclosures.jsonl (§14.3; `akledger disclose`).
    #[arg(long, value_name = "SUBJECT/ACTION")]
    pub skill: Option<String>,
    /// An internal PNCP message of this kind instead of a response (PROFILE §14.2):
    /// Question, Answer, Status, Cancel or Error (the controller: Question, Answer or
    /// Cancel), for the skill the exchange's request names; a question's or answer's data
    /// follows its model, redacted fields committed to, and an answer refers to the latest
    /// question of its --question-id.
    #[arg(long, value_name = "KIND", conflicts_with_all = ["skill", "completes"])]
    pub pncp: Option<String>,
    /// The question a Question asks or an Answer answers (its id in the action's model).
    #[arg(long, value_name = "ID", requires = "pncp")]
    pub question_id: Option<String>,
    /// The PNCP data (a JSON object keyed by field name); with `--skill` or `--pncp`.
    #[arg(long, value_name = "FILE")]
    pub data: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub author: AuthorArgs,
}

/// Close, cancel, fail or reassign an exchange (controller only), over everything the
/// ledger has folded for it.
///
/// Example: akledger exchange control --key alice.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij close
#[derive(Args, Debug)]
pub struct ControlArgs {
    /// The sidecar.
    #[arg(long, value_name = "ID", global = true)]
    pub sidecar: Option<String>,
    /// The exchange id.
    #[arg(long, value_name = "X", global = true)]
    pub exchange_id: Option<String>,
    /// The sidecar key epoch to seal with.
    #[arg(long, default_value_t = 1, global = true)]
    pub epoch: u64,
    #[command(flatten)]
    pub author: AuthorArgs,
    #[command(subcommand)]
    pub action: ControlArg,
}

/// `akledger exchange request|respond|control`.
pub fn exchange(action: ExchangeCmd) -> Result<Outcome, CliError> {
    match action {
        ExchangeCmd::Request(r) => request(&r),
        ExchangeCmd::Respond(r) => match (&r.skill, &r.pncp) {
            (Some(skill), _) => respond_skill(&r, skill),
            (None, Some(kind)) => respond_pncp(&r, kind),
            (None, None) if r.data.is_some() => Err(CliError::Usage(
                "exchange respond: --data is PNCP data: name the response's --skill, or --pncp KIND".into(),
            )),
            (None, None) => respond(
                &r.author,
                &r.sidecar,
                &r.exchange_id,
                r.completes,
                &r.body,
                r.epoch,
            ),
        },
        ExchangeCmd::Control(c) => match (&c.sidecar, &c.exchange_id) {
            (Some(s), Some(x)) => control(&c.author, s, x, &c.action, c.epoch),
            _ => Err(CliError::Usage(
                "exchange control: --sidecar and --exchange-id are required".into(),
            )),
        },
    }
}

/// `akledger exchange request`: the controller opens an exchange.
fn request(r: &RequestArgs) -> Result<Outcome, CliError> {
    let s = Signer::new(&r.author)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, &r.sidecar)?;
    let author = s.author(sidecar, r.epoch)?;
    let info = s.sidecar(sidecar)?;
    // The sidecar's current context: the latest attach (PROFILE §6, §8.1).
    let attach = info
        .attaches
        .iter()
        .max_by_key(|a| (a.version, a.event_id.digest()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{sidecar} has no attached strand (attach one with `akledger sidecar attach`)"
            ))
        })?;
    let at = s.now_after(&[sidecar.retype(), attach.event_id])?;
    let track = TrackRef {
        realm_id: info.realm_id,
        strand_id: attach.strand_id,
        track_name: r.track.clone(),
    };
    let agents = r
        .agents
        .iter()
        .map(|a| did(a))
        .collect::<Result<Vec<_>, _>>()?;
    let coordinator = r.coordinator.as_deref().map(did).transpose()?;
    let context =
        RequestContext::new(track, format!("order-{}", at.millis()), agents, coordinator)?;
    if let Some(skill) = &r.skill {
        let (subject, action) = split_skill(skill)?;
        let data = pncp_data(r.data.as_deref())?;
        let x = exchange_id(&r.exchange_id)?;
        let handle = s.ledger.sidecar(&author);
        let id = handle.request_skill(&x, context, subject, action, data, body(&r.body))?;
        return s.report_skill(id, r.author.json);
    }
    let event = author.request(
        &exchange_id(&r.exchange_id)?,
        context,
        body(&r.body),
        at,
        &mut OsRng,
    )?;
    s.submit(event, &[])
}

/// `akledger exchange respond`: an addressed agent answers the canonical request.
fn respond(
    args: &AuthorArgs,
    sidecar: &str,
    exchange: &str,
    completes: bool,
    text: &str,
    epoch: u64,
) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, sidecar)?;
    let author = s.author(sidecar, epoch)?;
    let p = s.projection(sidecar, exchange)?;
    let at = s.now_after(&[p.request_event_id, sidecar.retype()])?;
    let completes = completes.then_some(p.coordinator_assignment_event_id);
    let event = author.respond(
        &p.exchange_id,
        p.request_event_id,
        completes,
        body(text),
        at,
        &mut OsRng,
    )?;
    s.submit(event, &[])
}

/// `akledger exchange respond --skill`: a PNCP response, its redacted fields committed to.
fn respond_skill(r: &RespondArgs, skill: &str) -> Result<Outcome, CliError> {
    let (subject, action) = split_skill(skill)?;
    let data = pncp_data(r.data.as_deref())?;
    let (s, author, x) = responding(r)?;
    let handle = s.ledger.sidecar(&author);
    let id = handle.respond_skill(&x, subject, action, data, body(&r.body), r.completes)?;
    s.report_skill(id, r.author.json)
}

/// The signer of a `respond`, its author in the sidecar, and the exchange it names.
fn responding(r: &RespondArgs) -> Result<(Signer, SidecarAuthor, ExchangeId), CliError> {
    let s = Signer::new(&r.author)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, &r.sidecar)?;
    let author = s.author(sidecar, r.epoch)?;
    let x = exchange_id(&r.exchange_id)?;
    Ok((s, author, x))
}

/// `akledger exchange respond --pncp KIND`: an internal PNCP message for the skill of the
/// exchange's request.
fn respond_pncp(r: &RespondArgs, kind: &str) -> Result<Outcome, CliError> {
    let kind = PncpKind::parse(kind).map_err(|_| {
        CliError::Usage(format!(
            "--pncp {kind:?}: expected Question, Answer, Status, Cancel or Error"
        ))
    })?;
    let data = pncp_data(r.data.as_deref())?;
    let (s, author, x) = responding(r)?;
    let handle = s.ledger.sidecar(&author);
    let id = handle.pncp(&x, kind, r.question_id.as_deref(), data, body(&r.body))?;
    s.report_skill(id, r.author.json)
}

/// `SUBJECT/ACTION`.
fn split_skill(text: &str) -> Result<(&str, &str), CliError> {
    text.split_once('/')
        .filter(|(s, a)| !s.is_empty() && !a.is_empty())
        .ok_or_else(|| CliError::Usage(format!("--skill {text:?}: expected SUBJECT/ACTION")))
}

/// The PNCP data file: a JSON object (none: `{}`).
fn pncp_data(path: Option<&std::path::Path>) -> Result<Object, CliError> {
    let Some(path) = path else {
        return Ok(Object::new());
    };
    let bytes = super::output::read_bounded(path, akledger::limits::MAX_EVENT_BYTES as u64)?;
    akledger::canonical::parse_value(&bytes)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{}: PNCP data must be a JSON object keyed by field name",
                path.display()
            ))
        })
}

/// `akledger exchange control`: the controller closes, cancels, fails or reassigns, over
/// everything the ledger has folded for the exchange.
fn control(
    args: &AuthorArgs,
    sidecar: &str,
    exchange: &str,
    action: &ControlArg,
    epoch: u64,
) -> Result<Outcome, CliError> {
    let s = Signer::new(args)?;
    let sidecar: SidecarId = resolve_id(&s.ledger, sidecar)?;
    let author = s.author(sidecar, epoch)?;
    let p = s.projection(sidecar, exchange)?;
    let act = match action {
        ControlArg::Close => Act::Close,
        ControlArg::Cancel => Act::Cancel,
        ControlArg::Fail { code } => Act::Fail(code.clone()),
        ControlArg::Reassign { to } => {
            let new = did(to)?;
            if new == p.coordinator_agent_id {
                return Err(CliError::Usage(format!("{new} is already the coordinator")));
            }
            Act::Reassign {
                expected: p.coordinator_agent_id.clone(),
                new,
            }
        }
    };
    let view = ExchangeView::of(&p);
    let mut parents = view.facts.clone();
    parents.push(sidecar.retype());
    let at = s.now_after(&parents)?;
    let event = author.control(&view, act, &s.ledger, at, &mut OsRng)?;
    s.submit(event, &[])
}
