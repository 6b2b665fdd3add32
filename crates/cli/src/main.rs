//! The `akledger` command line: a thin shell over the library.
//!
//! Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 when the input had
//! rejected (or, for audits, pending) events or a check found differences, 2 on usage or IO
//! errors. A closed stdout (broken pipe) ends the program quietly.
//!
//! This file holds the top-level parser and the dispatch. Each command family has one file,
//! with its flags (`#[derive(Args)]`) beside the function that runs them: `demo`, `audit`,
//! `gen`, `io` (append, import, export, drop-pending), `query` (show, heads, covers,
//! heads-of, exchanges, exchange, check), `log`, `dag` (dag --dot), `pending`, `keys`
//! (init, keygen, keys), `author` (realm, strand, sidecar and exchange authoring),
//! `sidecar_run` (sidecar run), `sync` (serve, sync), `replicate` (NATS JetStream),
//! `verify`, `shell` (completions, man); the verifiable log (PROFILE §13): `checkpoint`,
//! `prove`, `verify_proof` (verify-proof), `tiles`, `witness`. Views: `decrypt` (show --decrypt), `history`
//! (exchange --history), `html` (audit --html); shared plumbing in `output`, terminal
//! progress in `progress`.

mod actor;
mod audit;
mod author;
mod checkpoint;
mod dag;
mod decrypt;
mod demo;
mod disclose;
mod follow;
mod gen;
mod help;
mod history;
mod html;
mod io;
mod keys;
mod log;
mod observe;
mod output;
mod pending;
mod progress;
mod prove;
mod query;
#[cfg(feature = "nats")]
mod replicate;
mod shell;
mod sidecar_run;
mod sync;
mod tiles;
mod verify;
mod verify_proof;
mod witness;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The exit codes, at the end of `akledger --help`.
const EXIT_CODES: &str = "\
Exit codes (each command's --help says what 1 means for it):
  0    success, nothing to report
  1    the answer is no or the input has findings: rejected events (append, import,
       verify, audit), pending events (audit), differences (check), not covered
       (covers), an authored event not admitted (realm, sidecar, strand, exchange
       request|respond|control), a proof or checkpoint that does not hold
       (verify-proof, audit --checkpoint, witness)
  2    usage errors, unreadable or unwritable files, ledger IO errors
  130  interrupted (audit, on SIGINT or SIGTERM)
When stdout's reader goes away early (`akledger audit LOG | head`), output stops and
the exit code is still the command's verdict: 1 is never turned into 0.";

/// akledger: an embedded ledger of signed, content-addressed events with a causal index and
/// the Arkret sidecar exchange fold.
///
/// Start with `akledger demo`, which builds a realistic ledger in ./akledger-data. Every
/// command that uses a ledger takes `--dir DIR` (default ./akledger-data) and reads the
/// keyring DIR/keyring.json when it exists. Read commands take `--json`.
#[derive(Parser, Debug)]
#[command(name = "akledger", version, about, long_about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Demo(demo::DemoArgs),
    Audit(audit::AuditArgs),
    Append(io::AppendArgs),
    Import(io::ImportArgs),
    Export(io::ExportArgs),
    Show(query::ShowArgs),
    Heads(query::HeadsArgs),
    Covers(query::CoversArgs),
    HeadsOf(query::HeadsOfArgs),
    Exchanges(query::ExchangesArgs),
    #[command(args_conflicts_with_subcommands = true)]
    Exchange(query::ExchangeArgs),
    Check(query::CheckArgs),
    Gen(gen::GenArgs),
    Log(log::LogArgs),
    Dag(dag::DagArgs),
    Pending(pending::PendingArgs),
    DropPending(io::DropPendingArgs),
    Serve(sync::ServeArgs),
    Sync(sync::SyncArgs),
    #[cfg(feature = "nats")]
    Replicate(replicate::ReplicateArgs),
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff).
    ///
    /// Example: akledger man > akledger.1 && man ./akledger.1
    Man,
    Init(keys::InitArgs),
    Keygen(keys::KeygenArgs),
    Keys(keys::KeysArgs),
    Realm(author::RealmArgs),
    Sidecar(author::SidecarArgs),
    Strand(author::StrandArgs),
    Actor(actor::ActorArgs),
    Observe(observe::ObserveArgs),
    Disclose(disclose::DiscloseArgs),
    VerifyDisclosure(disclose::VerifyDisclosureArgs),
    Verify(verify::VerifyArgs),
    Checkpoint(checkpoint::CheckpointArgs),
    Prove(prove::ProveArgs),
    VerifyProof(verify_proof::VerifyProofArgs),
    Tiles(tiles::TilesArgs),
    Witness(witness::WitnessArgs),
}

/// The arguments of a query named first, parsed by a parser that holds only that command's
/// arguments: the whole tree (every subcommand's, ~300 KB of allocations and 0.4–0.5 ms)
/// cost more than `covers` on a 50 k-event ledger takes to answer. Anything it does not
/// accept (help, a usage error, another command) goes through the whole tree, so what is
/// printed is the same.
fn query_matches() -> Option<clap::ArgMatches> {
    use clap::Args;
    let first = std::env::args_os().nth(1)?;
    let command = match first.to_str()? {
        "covers" => query::CoversArgs::augment_args(clap::Command::new("covers")),
        "heads-of" => query::HeadsOfArgs::augment_args(clap::Command::new("heads-of")),
        _ => return None,
    };
    clap::Command::new("akledger")
        .subcommand(command)
        .try_get_matches()
        .ok()
}

/// Parses the arguments, runs the command, and maps the outcome to an exit code.
fn main() -> ExitCode {
    let matches = query_matches().unwrap_or_else(|| help::grouped(Cli::command()).get_matches());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Audit(a) => audit::run(a),
        Command::Append(a) => io::append(a),
        Command::Import(a) => io::import(a),
        Command::Export(a) => io::export(a),
        Command::Show(a) => query::show(a),
        Command::Heads(a) => query::heads(a),
        Command::Covers(a) => query::covers(a),
        Command::HeadsOf(a) => query::heads_of(a),
        Command::Exchanges(a) => query::exchanges(a),
        Command::Exchange(a) => query::exchange_command(a),
        Command::Check(a) => query::check(a),
        Command::Gen(a) => gen::run(a),
        Command::Log(a) => log::run(a),
        Command::Dag(a) => dag::run(a),
        Command::Pending(a) => pending::run(a),
        Command::DropPending(a) => io::drop_pending(a),
        Command::Serve(a) => sync::serve(a),
        Command::Sync(a) => sync::run(a),
        #[cfg(feature = "nats")]
        Command::Replicate(a) => replicate::run(a),
        Command::Completions(a) => shell::completions(a),
        Command::Man => shell::man(),
        Command::Init(a) => keys::init(a),
        Command::Keygen(a) => keys::keygen(a),
        Command::Keys(a) => keys::keys(a),
        Command::Realm(a) => author::realm(a),
        Command::Sidecar(a) => author::sidecar(a),
        Command::Strand(a) => author::strand(a),
        Command::Actor(a) => actor::run(a),
        Command::Observe(a) => observe::run(a),
        Command::Disclose(a) => disclose::disclose(a),
        Command::VerifyDisclosure(a) => disclose::verify(a),
        Command::Verify(a) => verify::run(a),
        Command::Checkpoint(a) => checkpoint::run(a),
        Command::Prove(a) => prove::run(a),
        Command::VerifyProof(a) => verify_proof::run(a),
        Command::Tiles(a) => tiles::run(a),
        Command::Witness(a) => witness::run(a),
    };
    output::finish(result)
}
