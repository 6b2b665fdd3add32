//! `akledger pending [--why ID]`: the events waiting for dependencies, and for one of them
//! the transitive root cause (the events it ultimately waits for, and what became of them).

use clap::Args;
use std::collections::HashMap;

use akledger::canonical::Object;
use akledger::{EventId, Json, PendingCause, Rejection};

use super::output::{
    ids_json, json_text, print_lines, print_text_lines, rejection_line, resolve_id, typed,
    CliError, LedgerArgs, Outcome,
};

/// List the pending events (waiting for dependencies), or explain one.
///
/// Each line: the event, how many dependencies it misses, and the events it ultimately
/// waits for (through other pending events). `--why ID` explains one: what it needs and
/// what became of each event it waits for (never seen, or rejected). Exits 0, or 2
/// when ID is not pending.
///
/// Example: akledger pending --why ak:event:Ak2d…
#[derive(Args, Debug)]
pub struct PendingArgs {
    /// Explain this pending event.
    #[arg(long, value_name = "ID")]
    pub why: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// One JSON document: {"pending":[{"event_id","missing","root_missing","root_rejected"}]}
    /// (with --why, that one entry); docs/json.md.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: PendingArgs) -> Result<Outcome, CliError> {
    let (ledger, why, json) = (&args.ledger, args.why.as_deref(), args.json);
    let ledger = ledger.open()?;
    let causes = ledger.pending_causes();
    let rejected: HashMap<EventId, Rejection> = ledger.rejected_on_release().into_iter().collect();
    let Some(why) = why else {
        if json {
            // One document, so that no pending events is `"pending": []`, not no output.
            let all = causes.iter().map(|c| cause_json(c, &rejected)).collect();
            let doc = Object::new().with("pending", Json::Array(all));
            print_lines([json_text(&typed("akledger.pending", doc))])?;
            return Ok(Outcome::Clean);
        }
        let lines = causes.iter().map(|c| {
            let roots: Vec<String> = c.root_missing.iter().map(ToString::to_string).collect();
            format!(
                "{} missing {} (waits for {})",
                c.id,
                c.missing.len(),
                roots.join(" ")
            )
        });
        print_text_lines(lines)?;
        return Ok(Outcome::Clean);
    };
    let id: EventId = resolve_id(&ledger, why)?;
    let Some(cause) = causes.iter().find(|c| c.id == id) else {
        let state = if ledger.get(&id)?.is_some() {
            "admitted"
        } else {
            "not in this ledger"
        };
        return Err(CliError::Usage(format!("{id}: not pending ({state})")));
    };
    if json {
        let doc = cause_json(cause, &rejected);
        print_lines([json_text(&typed("akledger.pending.why", doc))])?;
        return Ok(Outcome::Clean);
    }
    let mut lines = vec![format!("{id} is pending")];
    for m in &cause.missing {
        let how = if cause.root_missing.contains(m) {
            "missing"
        } else {
            "pending itself"
        };
        lines.push(format!("  needs {m} ({how})"));
    }
    for root in &cause.root_missing {
        lines.push(format!(
            "  waits for {root}, which was {}",
            fate(root, &rejected)
        ));
    }
    print_text_lines(lines)?;
    Ok(Outcome::Clean)
}

/// What became of a root missing event in a ledger.
fn fate(id: &EventId, rejected: &HashMap<EventId, Rejection>) -> String {
    match rejected.get(id) {
        Some(r) => format!(
            "rejected when its own dependencies arrived: {}",
            rejection_line(r)
        ),
        // The ledger keeps no record of events rejected on arrival.
        None => "never admitted here (never seen, or rejected on arrival)".into(),
    }
}

/// `{"event_id","missing","root_missing","root_rejected":[{"event_id","code"}]}`.
fn cause_json(cause: &PendingCause, rejected: &HashMap<EventId, Rejection>) -> Json {
    let root_rejected = cause
        .root_missing
        .iter()
        .filter_map(|r| {
            rejected.get(r).map(|rej| {
                Object::new()
                    .with("event_id", r.to_string().into())
                    .with("code", rej.code().as_str().into())
                    .into()
            })
        })
        .collect();
    Object::new()
        .with("event_id", cause.id.to_string().into())
        .with("missing", ids_json(&cause.missing))
        .with("root_missing", ids_json(&cause.root_missing))
        .with("root_rejected", Json::Array(root_rejected))
        .into()
}
