//! `replicate`: the ledger's events through a NATS JetStream stream. The work is the
//! library's ([`akledger_replicate::Replicator`]); this file opens the ledger, turns
//! SIGINT/SIGTERM into a clean stop for `--follow`, and prints the summary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use akledger_replicate::{FollowEvent, ReplicateOptions, ReplicateReport, Replicator};

use super::output::{counts, json_text, print_lines, CliError, LedgerArgs, Outcome};

/// `akledger replicate --nats URL [--stream NAME] (--once | --follow)`.
pub fn replicate(
    ledger: &LedgerArgs,
    options: ReplicateOptions,
    follow: bool,
    json: bool,
) -> Result<Outcome, CliError> {
    let ledger = ledger.open_or_create()?;
    let usage = |e: akledger_replicate::ReplicateError| CliError::Usage(e.to_string());
    let mut replicator = Replicator::new(&ledger, options).map_err(usage)?;
    let report = if follow {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .map_err(|e| CliError::Usage(format!("cannot handle SIGINT/SIGTERM: {e}")))?;
        replicator.follow(&stop, tell)
    } else {
        replicator.once()
    }
    .map_err(usage)?;
    drop(replicator);
    ledger.close()?;
    print_report(&report, json)?;
    Ok(if report.rejected > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// `--follow`'s progress on stderr: a line each time it catches up with the stream, and
/// each time the server goes away.
fn tell(event: FollowEvent<'_>) {
    match event {
        FollowEvent::CaughtUp(r) => eprintln!(
            "akledger: replicate: caught up: published {}, consumed {}, admitted {}, duplicates {}, pending {}, rejected {}",
            r.published, r.consumed, r.admitted, r.duplicates, r.pending, r.rejected
        ),
        FollowEvent::Reconnecting { error, retry_in } => eprintln!(
            "akledger: replicate: {error}; connecting again in {} ms",
            retry_in.as_millis()
        ),
        _ => {}
    }
}

fn print_report(r: &ReplicateReport, json: bool) -> Result<(), CliError> {
    if json {
        let object = counts(&[
            ("published", r.published),
            ("consumed", r.consumed),
            ("admitted", r.admitted),
            ("duplicates", r.duplicates),
            ("rejected", r.rejected),
        ]);
        return print_lines([json_text(&object)]);
    }
    let mut lines = vec![
        format!("published {} events", r.published),
        format!(
            "consumed {}: {} admitted, {} duplicates, {} pending, {} rejected",
            r.consumed, r.admitted, r.duplicates, r.pending, r.rejected
        ),
    ];
    if r.reconnects > 0 {
        lines.push(format!(
            "lost the server {} times and reconnected",
            r.reconnects
        ));
    }
    print_lines(lines)
}
