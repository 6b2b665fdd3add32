//! Argument parsing (clap) and dispatch; one file per command family:
//! `demo`, `audit`, `io` (append, import, export), `query` (show, heads, covers, heads-of,
//! exchanges, exchange, check), `verify`; shared plumbing in `output`.

mod audit;
mod demo;
mod io;
mod output;
mod query;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use output::{FormatArg, LedgerArgs};

/// akledger: an embedded ledger of signed, content-addressed events with a causal index and
/// the Arkret sidecar exchange fold.
///
/// Start with `akledger demo`, which builds a realistic ledger in ./akledger-data. Every
/// command that uses a ledger takes `--dir DIR` (default ./akledger-data) and reads the
/// keyring DIR/keyring.json when it exists. Read commands take `--json`.
///
/// Exit codes: 0 success; 1 the input had rejected (or, for audit, pending) events, or a
/// check found differences; 2 usage or IO errors.
#[derive(Parser, Debug)]
#[command(name = "akledger", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build a realistic sidecar ledger from nothing and summarize it.
    ///
    /// Generates one sidecar (a controller, several agents, a few hundred exchanges ending
    /// every possible way, and forged events) plus a small realm DAG, writes the keyring to
    /// DIR/keyring.json, delivers the events partly out of order, and prints what was
    /// admitted, pending and rejected, the heads and the exchanges by status. Running it
    /// again on the same directory finds every event already there.
    ///
    /// Example: akledger demo --dir /tmp/demo --seed 7 --exchanges 500
    Demo {
        /// The ledger directory (created when missing).
        #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
        dir: PathBuf,
        /// Seed of the generated workload (same seed, same events).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Number of exchanges in the sidecar.
        #[arg(long, default_value_t = 300)]
        exchanges: usize,
    },
    /// Replay a log into a scratch ledger and report what is valid, what is not and why.
    ///
    /// Every event is verified and admitted, left pending or rejected with its PROFILE
    /// code; every sidecar's exchanges are folded. `--json` prints the PROFILE §12 report:
    /// summary, rejected (by log index), pending, heads, exchanges, not_folded. Exits 0
    /// when nothing was rejected or left pending, 1 otherwise, 2 on usage or IO errors.
    ///
    /// Example: akledger audit big.jsonl --keyring big.keyring.json --json | jq .summary
    Audit {
        /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
        log: PathBuf,
        /// Keyring file: authorized keys and the sidecar keys that decrypt exchanges.
        #[arg(long, value_name = "FILE")]
        keyring: Option<PathBuf>,
        /// Print the PROFILE §12 JSON report instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Append events from a log, printing one outcome line per event.
    ///
    /// Each event is admitted, a duplicate, pending (waiting for its parents) or rejected
    /// with its PROFILE code. Exits 1 when any event was rejected.
    ///
    /// Example: akledger append events.jsonl --json
    Append {
        /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
        file: PathBuf,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// One JSON object per event: {"index","event_id","outcome","code"?,"message"?,"missing"?}.
        #[arg(long)]
        json: bool,
    },
    /// Import a log (JSON Lines or CBOR, detected) in batches and print a summary.
    ///
    /// Example: akledger import export.cbor --dir ./copy
    Import {
        /// The log file, `-` for stdin.
        file: PathBuf,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the admitted events as a log, in admission order.
    ///
    /// With `--since`, only the events not covered by those ids (what a peer at those heads
    /// is missing).
    ///
    /// Example: akledger export --format cbor --out all.cbor
    Export {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Log encoding.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: FormatArg,
        /// Leave out every event this id covers (repeat, or separate with commas).
        #[arg(long, value_name = "ID", value_delimiter = ',')]
        since: Vec<String>,
        /// Output file (default stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print one admitted event's canonical JSON.
    ///
    /// Example: akledger show ak:event:Ak2d…
    Show {
        /// The event id.
        id: String,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Accepted for symmetry: the output is JSON either way.
        #[arg(long)]
        json: bool,
    },
    /// Print the ledger heads: the admitted events nothing else covers.
    ///
    /// Example: akledger heads --json   # {"heads":["ak:event:…",…]}
    Heads {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"heads":[…]}.
        #[arg(long)]
        json: bool,
    },
    /// Whether an event is covered by a basis (in it, or an ancestor of a member).
    ///
    /// Example: akledger covers --basis ak:event:A…,ak:event:B… ak:event:X… --json
    Covers {
        /// A basis id (repeat, or separate with commas).
        #[arg(long, value_name = "ID", value_delimiter = ',', required = true)]
        basis: Vec<String>,
        /// The event to test.
        id: String,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"covered":true|false}.
        #[arg(long)]
        json: bool,
    },
    /// The maximal heads of a set of admitted events.
    ///
    /// Example: akledger heads-of ak:event:A… ak:event:B… --json
    HeadsOf {
        /// The events.
        #[arg(required = true)]
        ids: Vec<String>,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"heads":[…]}.
        #[arg(long)]
        json: bool,
    },
    /// List exchange projections (all sidecars, or one), optionally by status.
    ///
    /// Example: akledger exchanges --status failed --json
    Exchanges {
        /// Only this sidecar.
        #[arg(long, value_name = "ID")]
        sidecar: Option<String>,
        /// Only this status: delivered, responding, complete or failed.
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"exchanges":[§8.6 projections],"not_folded":[…]}.
        #[arg(long)]
        json: bool,
    },
    /// Show one exchange's projection (PROFILE §8.6).
    ///
    /// Example: akledger exchange --sidecar ak:sidecar:… exchange-00000001-00000003 --json
    Exchange {
        /// The sidecar.
        #[arg(long, value_name = "ID")]
        sidecar: String,
        /// The exchange id.
        exchange_id: String,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print the §8.6 JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Re-verify every stored event, rebuild every index and fold, and report differences.
    ///
    /// Exits 1 when anything differs.
    ///
    /// Example: akledger check --dir ./akledger-data
    Check {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"entries","admitted","pending","differences"}.
        #[arg(long)]
        json: bool,
    },
    /// Check each event of a log on its own (id, canonical form, proof), without a ledger.
    ///
    /// Prints one line per event: its id and `ok`, or the PROFILE error code and why.
    /// Exits 1 when any event is rejected.
    ///
    /// Example: akledger verify events.jsonl --json
    Verify {
        /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
        file: PathBuf,
        /// Keyring file authorizing keys for non-self-certifying principals (PROFILE §11).
        #[arg(long)]
        keyring: Option<PathBuf>,
        /// Print one JSON object per event instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the arguments, runs the command, and maps the outcome to an exit code.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo {
            dir,
            seed,
            exchanges,
        } => demo::run(&dir, seed, exchanges),
        Command::Audit { log, keyring, json } => audit::run(&log, keyring.as_deref(), json),
        Command::Append { file, ledger, json } => io::append(&ledger, &file, json),
        Command::Import { file, ledger, json } => io::import(&ledger, &file, json),
        Command::Export {
            ledger,
            format,
            since,
            out,
        } => io::export(&ledger, format, &since, out.as_deref()),
        Command::Show { id, ledger, .. } => query::show(&ledger, &id),
        Command::Heads { ledger, json } => query::heads(&ledger, json),
        Command::Covers {
            basis,
            id,
            ledger,
            json,
        } => query::covers(&ledger, &basis, &id, json),
        Command::HeadsOf { ids, ledger, json } => query::heads_of(&ledger, &ids, json),
        Command::Exchanges {
            sidecar,
            status,
            ledger,
            json,
        } => query::exchanges(&ledger, sidecar.as_deref(), status.as_deref(), json),
        Command::Exchange {
            sidecar,
            exchange_id,
            ledger,
            json,
        } => query::exchange(&ledger, &sidecar, &exchange_id, json),
        Command::Check { ledger, json } => query::check(&ledger, json),
        Command::Verify {
            file,
            keyring,
            json,
        } => verify::run(&file, keyring.as_deref(), json),
    };
    output::finish(result)
}
