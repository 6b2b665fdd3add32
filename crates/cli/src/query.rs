//! Read commands: `show`, `heads`, `covers`, `heads-of`, `exchanges`, `exchange`, `check`,
//! and the all-sidecar fold that `demo` and `audit` summarize.

use clap::Args;
use std::collections::BTreeMap;

use akledger::canonical::Object;
use akledger::{EventId, GraphView, Json, Ledger, NotFolded, Projection, SidecarId};

use super::author::ExchangeCmd;
use super::io::by_kind;
use super::output::{
    count, ids_json, print_json, print_lines, print_text_lines, resolve_id, resolve_id_at,
    resolve_ids_at, typed, CliError, LedgerArgs, Outcome,
};

/// Print one admitted event's canonical JSON.
///
/// With `--decrypt`, a sidecar message or control is shown with its plaintext opened
/// by the keyring's sidecar key: a message's binding and body, a control's exchange,
/// action and basis. Never without `--decrypt`; exits 2 with the reason when the
/// keyring has no key for the event's sidecar and epoch.
///
/// Example: akledger show ak:event:Ak2d… --decrypt
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The event id.
    pub id: String,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Decrypt the plaintext of a sidecar message or control (keyring required).
    #[arg(long)]
    pub decrypt: bool,
    /// Without --decrypt, accepted for symmetry (the output is the event's JSON either
    /// way); with it, print {"event_id","kind","epoch","content_type","plaintext"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger show ID [--decrypt]`: the event's canonical JSON, or with its plaintext.
pub fn show(args: ShowArgs) -> Result<Outcome, CliError> {
    let (ledger, id, decrypt, json) = (&args.ledger, args.id.as_str(), args.decrypt, args.json);
    let ledger = ledger.open()?;
    let id: EventId = resolve_id(&ledger, id)?;
    let event = ledger
        .get(&id)?
        .ok_or_else(|| CliError::Usage(format!("{id}: not an admitted event of this ledger")))?;
    if decrypt {
        super::decrypt::show(&event, &ledger.verifier().keyring(), json)?;
        return Ok(Outcome::Clean);
    }
    print_lines([String::from_utf8_lossy(event.bytes())])?;
    Ok(Outcome::Clean)
}

/// `{"heads": [...]}` or one id per line.
fn print_heads(heads: &[EventId], json: bool) -> Result<Outcome, CliError> {
    if json {
        print_json(&typed(
            "akledger.heads",
            Object::new().with("heads", ids_json(heads)),
        ))?;
    } else {
        print_lines(heads.iter().map(ToString::to_string))?;
    }
    Ok(Outcome::Clean)
}

/// Print the ledger heads: the admitted events nothing else covers.
///
/// Example: akledger heads --json   # {"heads":["ak:event:…",…]}
#[derive(Args, Debug)]
pub struct HeadsArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"heads":[…]}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger heads`.
pub fn heads(args: HeadsArgs) -> Result<Outcome, CliError> {
    print_heads(&args.ledger.open()?.heads(), args.json)
}

/// The maximal heads of a set of admitted events.
///
/// Answered from the graph file (DIR/graph) without opening the ledger when the file
/// describes exactly the log; otherwise the ledger is opened read-only. Same answer.
///
/// Example: akledger heads-of ak:event:A… ak:event:B… --json
#[derive(Args, Debug)]
pub struct HeadsOfArgs {
    /// The events.
    #[arg(required = true)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"heads":[…]}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger heads-of ID...`: answered from the graph file when it is current, else from
/// the opened ledger (the same answer either way).
pub fn heads_of(args: HeadsOfArgs) -> Result<Outcome, CliError> {
    let (ledger, ids, json) = (&args.ledger, &args.ids, args.json);
    let ids = resolve_ids_at(ledger, ids)?;
    let quick = match GraphView::open(&ledger.dir) {
        Ok(view) => view.heads_of(&ids)?,
        Err(_) => None,
    };
    let heads = match quick {
        Some(heads) => heads,
        None => ledger.open()?.heads_of(&ids)?,
    };
    print_heads(&heads, json)
}

/// Whether an event is covered by a basis (in it, or an ancestor of a member).
///
/// Exits 0 when covered, 1 when not covered (as `git merge-base --is-ancestor`), 2 on
/// usage or IO errors (an id that is not admitted).
///
/// Example: akledger covers --basis ak:event:A…,ak:event:B… ak:event:X… --json
#[derive(Args, Debug)]
pub struct CoversArgs {
    /// A basis id (repeat, or separate with commas).
    #[arg(long, value_name = "ID", value_delimiter = ',', required = true)]
    pub basis: Vec<String>,
    /// The event to test.
    pub id: String,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"covered":true|false}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger covers --basis ID... ID`: answered from the graph file when it is current,
/// else from the opened ledger (the same answer either way).
pub fn covers(args: CoversArgs) -> Result<Outcome, CliError> {
    let (ledger, basis, id, json) = (&args.ledger, &args.basis, args.id.as_str(), args.json);
    let basis = resolve_ids_at(ledger, basis)?;
    let id: EventId = resolve_id_at(ledger, id)?;
    let quick = match GraphView::open(&ledger.dir) {
        Ok(view) => view.covers(&basis, &id)?,
        Err(_) => None,
    };
    let covered = match quick {
        Some(covered) => covered,
        None => ledger.open()?.covers(&basis, &id)?,
    };
    if json {
        print_json(&typed(
            "akledger.covers",
            Object::new().with("covered", covered.into()),
        ))?;
    } else {
        print_lines([if covered { "covered" } else { "not covered" }])?;
    }
    // As `git merge-base --is-ancestor`: the answer is the exit code too.
    Ok(if covered {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// Every exchange projection and every not-folded event of every sidecar: projections by
/// sidecar id then exchange id, not-folded events by event id (PROFILE §12 order).
pub fn fold_all(ledger: &Ledger) -> Result<(Vec<Projection>, Vec<NotFolded>), CliError> {
    let mut projections = Vec::new();
    let mut not_folded = Vec::new();
    for sidecar in ledger.sidecars() {
        let fold = ledger.exchanges(&sidecar)?;
        projections.extend(fold.projections);
        not_folded.extend(fold.not_folded);
    }
    not_folded.sort();
    Ok((projections, not_folded))
}

/// `N (complete n, delivered n, …)`.
pub fn status_text(projections: &[Projection]) -> String {
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for p in projections {
        *by_status.entry(p.status.as_str()).or_default() += 1;
    }
    by_kind(projections.len(), &by_status)
}

/// `N (reason n, …)`.
pub fn reasons_text(not_folded: &[NotFolded]) -> String {
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for n in not_folded {
        *by_reason.entry(n.reason.as_str()).or_default() += 1;
    }
    by_kind(not_folded.len(), &by_reason)
}

/// When sidecar events were found but none decrypted (no exchange folded, some events
/// `not_decryptable`), a hint saying so and how to pass the keys (`how`: the option).
pub fn decrypt_hint(
    projections: &[Projection],
    not_folded: &[NotFolded],
    how: &str,
) -> Option<String> {
    let opaque = not_folded
        .iter()
        .filter(|n| n.reason == akledger::exchange::Reason::NotDecryptable)
        .count();
    (projections.is_empty() && opaque > 0).then(|| {
        format!(
            "hint: {opaque} sidecar events could not be decrypted and no exchange folded: the keyring has no key for them; pass the sidecar keys with {how}"
        )
    })
}

/// One human line per exchange.
fn projection_line(p: &Projection) -> String {
    let mut line = format!(
        "{} {} {:<10} responses {} coordinator {}",
        p.sidecar_id,
        p.exchange_id,
        p.status.as_str(),
        p.user_facing_response_event_ids.len(),
        p.coordinator_agent_id
    );
    if let Some(code) = &p.failure_reason_code {
        line.push_str(&format!(" reason {code}"));
    }
    line
}

/// List exchange projections (all sidecars, or one), optionally by status.
///
/// Example: akledger exchanges --status failed --json
#[derive(Args, Debug)]
pub struct ExchangesArgs {
    /// Only this sidecar.
    #[arg(long, value_name = "ID")]
    pub sidecar: Option<String>,
    /// Only this status: delivered, responding, complete or failed.
    #[arg(long)]
    pub status: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"exchanges":[§8.6 projections],"not_folded":[…]}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger exchanges [--sidecar S] [--status S]`.
pub fn exchanges(args: ExchangesArgs) -> Result<Outcome, CliError> {
    let (ledger, json) = (&args.ledger, args.json);
    let (sidecar, status) = (args.sidecar.as_deref(), args.status.as_deref());
    const STATUSES: [&str; 4] = ["delivered", "responding", "complete", "failed"];
    if let Some(s) = status.filter(|s| !STATUSES.contains(s)) {
        return Err(CliError::Usage(format!(
            "--status {s:?}: expected one of {}",
            STATUSES.join(", ")
        )));
    }
    let ledger = ledger.open()?;
    let (mut projections, mut not_folded) = match sidecar {
        Some(s) => {
            let fold = ledger.exchanges(&resolve_id::<akledger::id::SidecarKind>(&ledger, s)?)?;
            (fold.projections, fold.not_folded)
        }
        None => fold_all(&ledger)?,
    };
    if let Some(hint) = decrypt_hint(
        &projections,
        &not_folded,
        "--keyring FILE (default DIR/keyring.json)",
    ) {
        eprintln!("akledger: {hint}");
    }
    if let Some(s) = status {
        projections.retain(|p| p.status.as_str() == s);
        not_folded.clear();
    }
    if json {
        let doc = Object::new()
            .with(
                "exchanges",
                Json::Array(projections.iter().map(Projection::to_json).collect()),
            )
            .with(
                "not_folded",
                Json::Array(not_folded.iter().map(NotFolded::to_json).collect()),
            );
        print_json(&typed("akledger.exchanges", doc))?;
    } else {
        print_text_lines(projections.iter().map(projection_line))?;
        if status.is_none() && !not_folded.is_empty() {
            eprintln!(
                "{} exchange events did not fold: {}",
                not_folded.len(),
                reasons_text(&not_folded)
            );
        }
    }
    Ok(Outcome::Clean)
}

/// Show one exchange's projection (PROFILE §8.6), or author exchange events.
///
/// `akledger exchange --sidecar S ID` shows the projection; with `--history`, the
/// timeline: request, responses, internal messages and controls with time, author,
/// role or action, and what the fold made of each (folded, applied, terminal, or
/// ignored with the reason; a conflict loser names the controls that beat it).
/// `akledger exchange request`, `respond` and `control` write events (see their --help).
///
/// Example: akledger exchange exchange-00000001-00000003 --history
#[derive(Args, Debug)]
pub struct ExchangeArgs {
    #[command(subcommand)]
    pub action: Option<ExchangeCmd>,
    /// The sidecar [default: the ledger's only sidecar].
    #[arg(long, value_name = "ID")]
    pub sidecar: Option<String>,
    /// The exchange id.
    pub exchange_id: Option<String>,
    /// Print the exchange's timeline instead of its projection.
    #[arg(long)]
    pub history: bool,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print the §8.6 JSON object (with --history: {"sidecar_id","exchange_id","status"?,
    /// "entries":[{"event_id","created_at","author","by_controller","role","action"?,
    /// "outcome","reason"?,"beaten_by"?,…}]}).
    #[arg(long)]
    pub json: bool,
}

/// `akledger exchange`: with a subcommand, authors an exchange event; else shows one
/// exchange.
pub fn exchange_command(args: ExchangeArgs) -> Result<Outcome, CliError> {
    if let Some(action) = args.action {
        return super::author::exchange(action);
    }
    let Some(id) = args.exchange_id else {
        return Err(CliError::Usage(
            "exchange: give an exchange id (and --sidecar ID when the ledger has several), or a subcommand (request, respond, control)".into(),
        ));
    };
    exchange(
        &args.ledger,
        args.sidecar.as_deref(),
        &id,
        args.history,
        args.json,
    )
}

/// `akledger exchange [--sidecar S] ID [--history]`: the §8.6 projection, or the timeline.
fn exchange(
    ledger: &LedgerArgs,
    sidecar: Option<&str>,
    exchange_id: &str,
    history: bool,
    json: bool,
) -> Result<Outcome, CliError> {
    let ledger = ledger.open()?;
    let sidecar: SidecarId = super::history::resolve_sidecar(&ledger, sidecar)?;
    let exchange = super::output::exchange_arg(exchange_id)?;
    if history {
        return super::history::show(&ledger, &sidecar, &exchange, json);
    }
    let projection = ledger.exchange(&sidecar, &exchange)?.ok_or_else(|| {
        CliError::Usage(format!(
            "{exchange_id}: no exchange with a canonical request in {sidecar}"
        ))
    })?;
    if json {
        print_json(&typed("akledger.exchange", projection.to_json()))?;
    } else {
        let p = &projection;
        let ids = |v: &[EventId]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut lines = vec![
            format!("exchange     {}", p.exchange_id),
            format!("sidecar      {}", p.sidecar_id),
            format!("status       {}", p.status.as_str()),
            format!("request      {}", p.request_event_id),
            format!(
                "addressed    {}",
                p.addressed_agent_ids
                    .iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            format!(
                "coordinator  {} (assigned by {})",
                p.coordinator_agent_id, p.coordinator_assignment_event_id
            ),
            format!("responses    {}", ids(&p.user_facing_response_event_ids)),
        ];
        if let Some(t) = p.terminal_event_id {
            lines.push(format!("terminal     {t}"));
        }
        if let Some(code) = &p.failure_reason_code {
            lines.push(format!("failure      {code}"));
        }
        lines.push(format!("checkpoint   {}", p.event_set_digest()));
        print_text_lines(lines)?;
    }
    Ok(Outcome::Clean)
}

/// Re-verify every stored event, rebuild every index and fold, and report differences.
///
/// Exits 0 when nothing differs, 1 when anything differs, 2 on usage or IO errors.
///
/// Example: akledger check --dir ./akledger-data
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"entries","admitted","pending","differences"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger check`: re-verify everything; exit 1 on any difference.
pub fn check(args: CheckArgs) -> Result<Outcome, CliError> {
    let (ledger, json) = (&args.ledger, args.json);
    let report = match ledger.open() {
        // Damage that stops the open (acknowledged events missing, a corrupt log) is the
        // check's finding, not a failure to run it.
        Err(CliError::Ledger(e @ akledger::Error::Corrupt { .. })) => akledger::CheckReport {
            differences: vec![e.to_string()],
            ..akledger::CheckReport::default()
        },
        opened => {
            let ledger = opened?;
            let progress = super::progress::spinner(
                ledger.len(),
                &format!("re-verifying {} events", ledger.len()),
            );
            // Build every sidecar's exchange state so the check compares the fold too.
            fold_all(&ledger)?;
            let report = ledger.check();
            if let Some(spinner) = progress {
                spinner.finish_and_clear();
            }
            report?
        }
    };
    if json {
        let doc = Object::new()
            .with(
                "entries",
                Json::Int(i64::try_from(report.entries).unwrap_or(i64::MAX)),
            )
            .with("admitted", count(report.admitted))
            .with("pending", count(report.pending))
            .with(
                "differences",
                Json::Array(
                    report
                        .differences
                        .iter()
                        .map(|d| d.as_str().into())
                        .collect(),
                ),
            );
        print_json(&typed("akledger.check", doc))?;
    } else {
        let mut lines = vec![format!(
            "{} log entries re-verified: {} admitted, {} pending; {}",
            report.entries,
            report.admitted,
            report.pending,
            if report.is_clean() {
                "no differences".to_string()
            } else {
                format!("{} differences", report.differences.len())
            }
        )];
        lines.extend(
            report
                .differences
                .iter()
                .map(|d| format!("difference: {d}")),
        );
        print_text_lines(lines)?;
    }
    Ok(if report.is_clean() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
