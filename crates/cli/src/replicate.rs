//! `replicate`: the ledger's events through a NATS JetStream stream. The work is the
//! library's ([`akledger_replicate::Replicator`]); this file opens the ledger, turns
//! SIGINT/SIGTERM into a clean stop for `--follow`, and prints the summary.

use clap::Args;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use akledger::Ledger;
use akledger_replicate::{FollowEvent, ReplicateOptions, ReplicateReport, Replicator};

use super::output::{counts, json_text, print_lines, typed, CliError, LedgerArgs, Outcome};

/// Replicate through a NATS JetStream stream: publish this ledger's new events, admit
/// the stream's.
///
/// Admitted events are published on their realm's subject `ak.<realm token>.events` of the
/// stream (created when missing), up to 64 to a message, each message under a `Nats-Msg-Id`
/// its events determine (a lone event's is its event id);
/// DIR/replicate/<stream>.json records how far publishing got and this ledger's durable
/// consumer, which reads the stream in batches through normal admission and acknowledges
/// each batch once it is durable here. `--once` publishes what is new, consumes to the
/// end of the stream and exits; `--follow` keeps going, reconnecting with back-off while
/// the server is away, until SIGINT or SIGTERM. Messages go LZ4-compressed (see
/// docs/format.md). Exits 0, or 1 when consumed events were rejected (forged or
/// malformed), messages could not be read, or events were skipped; 2 on usage, server or
/// IO errors.
///
/// Example: akledger replicate --dir ./books --nats nats://127.0.0.1:4222 --once --json
#[derive(Args, Debug)]
pub struct ReplicateArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The NATS server.
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// The JetStream stream.
    #[arg(long, value_name = "NAME", default_value = akledger_replicate::DEFAULT_STREAM)]
    pub stream: String,
    /// One round, then exit.
    #[arg(long, conflicts_with = "follow", required_unless_present = "follow")]
    pub once: bool,
    /// Keep replicating until SIGINT or SIGTERM.
    #[arg(long)]
    pub follow: bool,
    /// Seconds one request to the server may take.
    #[arg(long, value_name = "SECS", default_value_t = akledger_replicate::limits::REPLICATE_TIMEOUT_SECS)]
    pub timeout: u64,
    /// Print {"published","consumed","admitted","duplicates","rejected","unreadable","skipped","squatted"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger replicate`.
pub fn run(args: ReplicateArgs) -> Result<Outcome, CliError> {
    let options = ReplicateOptions {
        url: args.nats,
        stream: args.stream,
        timeout: std::time::Duration::from_secs(args.timeout),
    };
    replicate(&args.ledger, options, args.follow, args.json)
}

/// `akledger replicate --nats URL [--stream NAME] (--once | --follow)`.
fn replicate(
    ledger: &LedgerArgs,
    options: ReplicateOptions,
    follow: bool,
    json: bool,
) -> Result<Outcome, CliError> {
    // Replicating into a directory that holds no ledger makes one (a new replica), and
    // removes it again if nothing was stored.
    let (ledger, creation) = ledger.create()?;
    let report = match run_replicator(&ledger, options, follow) {
        Ok(report) => report,
        Err(e) => return creation.settle(ledger, Err(e)),
    };
    ledger.close()?;
    if report.consumer_renewed {
        eprintln!(
            "akledger: replicate: the marker was written in another directory (this ledger is a copy or a restored backup): it now reads the stream with a durable consumer of its own, from the start"
        );
    }
    if report.stream_recreated > 0 {
        eprintln!(
            "akledger: replicate: the stream was made anew since this ledger last published to it: everything admitted here was published again"
        );
    }
    if let Some(max) = report.small_max_payload {
        eprintln!(
            "akledger: replicate: the server's max_payload is {max} bytes, below the {} an event of {} bytes needs: events larger are skipped (listed in DIR/replicate/<stream>.skipped.jsonl); raise max_payload in the server's configuration",
            akledger_replicate::limits::REPLICATE_MAX_MESSAGE_BYTES,
            akledger::limits::MAX_EVENT_BYTES
        );
    }
    for s in &report.skipped {
        eprintln!("akledger: replicate: skipped {}: {}", s.id, s.reason);
    }
    print_report(&report, json)?;
    Ok(
        if report.rejected > 0 || report.unreadable > 0 || !report.skipped.is_empty() {
            Outcome::Findings
        } else {
            Outcome::Clean
        },
    )
}

/// Runs the replicator once or until SIGINT/SIGTERM.
fn run_replicator(
    ledger: &Ledger,
    options: ReplicateOptions,
    follow: bool,
) -> Result<ReplicateReport, CliError> {
    let usage = |e: akledger_replicate::ReplicateError| CliError::Usage(e.to_string());
    let mut replicator = Replicator::new(ledger, options).map_err(usage)?;
    if follow {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .map_err(|e| CliError::Usage(format!("cannot handle SIGINT/SIGTERM: {e}")))?;
        replicator.follow(&stop, tell)
    } else {
        replicator.once()
    }
    .map_err(usage)
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
            ("unreadable", r.unreadable),
            ("skipped", r.skipped.len() as u64),
            ("squatted", r.squatted),
        ]);
        return print_lines([json_text(&typed("akledger.replicate", object))]);
    }
    let mut lines = vec![
        format!(
            "published {} events, skipped {}",
            r.published,
            r.skipped.len()
        ),
        format!(
            "consumed {}: {} admitted, {} duplicates, {} pending, {} rejected",
            r.consumed, r.admitted, r.duplicates, r.pending, r.rejected
        ),
    ];
    if r.unreadable > 0 {
        lines.push(format!(
            "{} messages could not be read (schema_violation), acknowledged and passed over: {}",
            r.unreadable,
            r.unreadable_first.as_deref().unwrap_or("")
        ));
    }
    if r.squatted > 0 {
        lines.push(format!(
            "{} events found junk under their ids in the stream and were published again under fresh ids",
            r.squatted
        ));
    }
    if r.reconnects > 0 {
        lines.push(format!(
            "lost the server {} times and reconnected",
            r.reconnects
        ));
    }
    print_lines(lines)
}
