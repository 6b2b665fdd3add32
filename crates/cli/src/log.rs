//! `akledger log [--kind K] [--limit N] [--follow]`: admitted events newest first, one line
//! each, like `git log --oneline`; with `--follow`, oldest first and then every event as it
//! is admitted, like `tail -f`.

use clap::Args;
use std::collections::{BTreeMap, VecDeque};

use akledger::canonical::Object;
use akledger::Event;

use super::output::{json_text, print_text_lines, typed, CliError, LedgerArgs, Outcome};

/// Events `--follow` shows before following when no `--limit` is given (as `tail -f`).
const FOLLOW_DEFAULT_LIMIT: usize = 10;

/// Admitted events, newest first, one line each (id, time, kind, actor), like
/// `git log --oneline`.
///
/// With `--follow`, the newest N (--limit, default 10) oldest first, then every event
/// as it is admitted, like `tail -f`, until interrupted. The follower polls: it opens
/// the ledger read-only for each look and never takes the writer lock, and it reads
/// beside a writer that holds the ledger (serve, replicate, sidecar run), showing each
/// batch once it is whole in the log.
///
/// With --kind K that no admitted event has, it says which kinds the ledger holds and
/// exits 1 (as grep does when nothing matches).
///
/// Example: akledger log --kind ak.message.create --limit 10
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Only events of this kind (e.g. ak.realm.create, ak.message.create).
    #[arg(long, value_name = "K")]
    pub kind: Option<String>,
    /// Only the newest N.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Keep printing newly admitted events (oldest first).
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// JSON Lines, one object per event: {"event_id","kind","actor" (its principal),
    /// "created_at"} (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command. With `--limit N` only the newest N matching events are kept while
/// the ledger is read, so memory follows N, not the ledger.
pub fn run(args: LogArgs) -> Result<Outcome, CliError> {
    let ledger = &args.ledger;
    let mark = super::follow::mark(ledger);
    let opened = ledger.open()?;
    let limit = match (args.limit, args.follow) {
        (None, true) => Some(FOLLOW_DEFAULT_LIMIT),
        (limit, _) => limit,
    };
    let mut newest: VecDeque<String> = VecDeque::new();
    // The kinds seen, to name them when --kind matches none.
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut matched = false;
    for event in opened.iter() {
        let event = event?;
        if args.kind.is_some() && !matched {
            *kinds.entry(event.kind().to_string()).or_default() += 1;
        }
        let Some(line) = line(&event, &args) else {
            continue;
        };
        matched = true;
        if limit == Some(0) {
            break;
        }
        if limit.is_some_and(|n| newest.len() == n) {
            newest.pop_front();
        }
        newest.push_back(line);
    }
    if let (Some(kind), false) = (&args.kind, matched) {
        let held: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ({n})")).collect();
        eprintln!(
            "akledger: log: no admitted event is of kind {kind:?}; this ledger holds {}",
            if held.is_empty() {
                "no events".to_string()
            } else {
                held.join(", ")
            }
        );
        if !args.follow {
            return Ok(Outcome::Findings);
        }
    }
    if !args.follow {
        print_text_lines(newest.into_iter().rev())?;
        return Ok(Outcome::Clean);
    }
    print_text_lines(newest)?;
    let seen = opened.len();
    drop(opened);
    follow(ledger, mark, &args, seen)
}

/// The line of one event, or `None` when `--kind` leaves it out.
fn line(event: &Event, args: &LogArgs) -> Option<String> {
    if args.kind.as_deref().is_some_and(|k| event.kind() != k) {
        return None;
    }
    Some(if args.json {
        json_text(&typed(
            "akledger.log.event",
            Object::new()
                .with("event_id", event.id().to_string().into())
                .with("kind", event.kind().into())
                .with("actor", event.actor().principal().to_string().into())
                .with("created_at", event.created_at().to_string().into()),
        ))
    } else {
        format!(
            "{} {} {} {}",
            event.id(),
            event.created_at(),
            event.kind(),
            event.actor().principal()
        )
    })
}

/// Prints every event admitted after the first `seen`, as it comes, until killed.
fn follow(
    ledger: &LedgerArgs,
    mark: super::follow::Mark,
    args: &LogArgs,
    mut seen: usize,
) -> Result<Outcome, CliError> {
    super::follow::follow(ledger, mark, |opened| {
        let mut lines = Vec::new();
        for event in opened.iter_from(seen as u64) {
            lines.extend(line(&event?, args));
            seen += 1;
        }
        Ok(lines)
    })
}
