//! Argument parsing (clap) and dispatch; one file per command family.

mod output;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// akledger: an embedded ledger of signed, content-addressed events with a causal index and
/// the Arkret sidecar exchange fold.
#[derive(Parser, Debug)]
#[command(name = "akledger", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check each event of a log on its own (id, canonical form, proof), without a ledger.
    ///
    /// Prints one line per event: its id and `ok`, or the PROFILE error code and why.
    /// Exits 1 when any event is rejected.
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
        Command::Verify {
            file,
            keyring,
            json,
        } => verify::run(&file, keyring.as_deref(), json),
    };
    output::finish(result)
}
