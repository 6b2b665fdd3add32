//! `akledger exchange [--sidecar S] X --history`: one exchange's timeline as the fold saw it
//! (the library's [`Ledger::exchange_history`]); this file only picks the sidecar (for
//! every command taking an optional `--sidecar`) and formats. The HTML report uses the same lines.

use akledger::exchange::ExchangeHistory;
use akledger::{ExchangeId, Ledger, SidecarId};

use super::output::{print_json, print_text_lines, resolve_id, typed, CliError, Outcome};

/// The sidecar a command means: the one given, else the ledger's only sidecar; a clear
/// error naming the choices when there are none or several.
pub fn resolve_sidecar(ledger: &Ledger, given: Option<&str>) -> Result<SidecarId, CliError> {
    if let Some(s) = given {
        return resolve_id(ledger, s);
    }
    match ledger.sidecars().as_slice() {
        [only] => Ok(*only),
        [] => Err(CliError::Usage(
            "this ledger has no sidecar; nothing to show".into(),
        )),
        several => {
            let names: Vec<String> = several.iter().map(ToString::to_string).collect();
            Err(CliError::Usage(format!(
                "this ledger has {} sidecars; pick one with --sidecar: {}",
                several.len(),
                names.join(" ")
            )))
        }
    }
}

/// Prints the timeline of `exchange` in `sidecar` (text or JSON).
pub fn show(
    ledger: &Ledger,
    sidecar: &SidecarId,
    exchange: &ExchangeId,
    json: bool,
) -> Result<Outcome, CliError> {
    let history = ledger.exchange_history(sidecar, exchange)?.ok_or_else(|| {
        CliError::Usage(format!(
            "{exchange}: no admitted event of {sidecar} names this exchange (or the keyring cannot decrypt them)"
        ))
    })?;
    if json {
        print_json(&typed("akledger.exchange.history", history.to_json()))?;
    } else {
        print_text_lines(lines(&history))?;
    }
    Ok(Outcome::Clean)
}

/// The text timeline: a header, then one line per item (time, event, author, what it is,
/// what the fold made of it).
pub fn lines(history: &ExchangeHistory) -> Vec<String> {
    let status = history
        .projection
        .as_ref()
        .map_or("no canonical request", |p| p.status.as_str());
    let mut lines = vec![format!(
        "exchange {} in {} ({status})",
        history.exchange_id, history.sidecar_id
    )];
    for e in &history.entries {
        let who = if e.by_controller {
            format!("{} (controller)", e.author)
        } else {
            e.author.to_string()
        };
        lines.push(format!(
            "{}  {}  {}  {}: {}",
            e.created_at,
            e.event_id,
            who,
            e.describe(),
            e.verdict.text()
        ));
    }
    lines
}
