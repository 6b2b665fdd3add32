//! `akledger log [--kind K] [--limit N]`: admitted events newest first, one line each, like
//! `git log --oneline`.

use std::collections::VecDeque;

use akledger::canonical::Object;

use super::output::{json_text, print_lines, CliError, LedgerArgs, Outcome};

/// Runs the command. With `--limit N` only the newest N matching events are kept while
/// the ledger is read, so memory follows N, not the ledger.
pub fn run(
    ledger: &LedgerArgs,
    kind: Option<&str>,
    limit: Option<usize>,
    json: bool,
) -> Result<Outcome, CliError> {
    let ledger = ledger.open()?;
    let mut newest: VecDeque<String> = VecDeque::new();
    for event in ledger.iter() {
        let event = event?;
        if kind.is_some_and(|k| event.kind() != k) {
            continue;
        }
        let line = if json {
            json_text(
                &Object::new()
                    .with("event_id", event.id().to_string().into())
                    .with("kind", event.kind().into())
                    .with("actor", event.actor().principal().to_string().into())
                    .with("created_at", event.created_at().to_string().into())
                    .into(),
            )
        } else {
            format!(
                "{} {} {} {}",
                event.id(),
                event.created_at(),
                event.kind(),
                event.actor().principal()
            )
        };
        if limit == Some(0) {
            break;
        }
        if limit.is_some_and(|n| newest.len() == n) {
            newest.pop_front();
        }
        newest.push_back(line);
    }
    print_lines(newest.into_iter().rev())?;
    Ok(Outcome::Clean)
}
