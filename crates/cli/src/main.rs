//! The `akledger` command line: a thin shell over the library.
//!
//! Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 when the input had
//! rejected (or, for audits, pending) events or a check found differences, 2 on usage or IO
//! errors. A closed stdout (broken pipe) ends the program quietly.
//!
//! Argument parsing (clap) and dispatch are here; one file per command family:
//! `demo`, `audit`, `gen`, `io` (append, import, export, drop-pending), `query` (show, heads, covers,
//! heads-of, exchanges, exchange, check), `decrypt` (show --decrypt), `dag` (dag --dot), `history` (exchange --history), `html` (audit --html), `log`, `pending`, `keys` (init, keygen, keys add), `sidecar_run` (sidecar run), `sync`
//! (serve, sync), `replicate` (NATS JetStream), `author` (realm, sidecar and exchange authoring), `verify`, `shell` (completions,
//! man); shared plumbing in `output`, terminal progress in `progress`.

mod audit;
mod author;
mod dag;
mod decrypt;
mod demo;
mod gen;
mod history;
mod html;
mod io;
mod keys;
mod log;
mod output;
mod pending;
mod progress;
mod query;
#[cfg(feature = "nats")]
mod replicate;
mod shell;
mod sidecar_run;
mod sync;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use author::{AuthorArgs, ControlArg, RequestArgs};
use output::{FormatArg, LedgerArgs};

/// The exit codes, at the end of `akledger --help`.
const EXIT_CODES: &str = "\
Exit codes (each command's --help says what 1 means for it):
  0    success, nothing to report
  1    the answer is no or the input has findings: rejected events (append, import,
       verify, audit), pending events (audit), differences (check), not covered
       (covers), an authored event not admitted (realm, sidecar, strand, exchange
       request|respond|control)
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
        /// Also write the events as offered (out of order, forgeries included) to FILE as
        /// JSON Lines; the printed `try` line audits it.
        #[arg(long, value_name = "FILE")]
        offered_log: Option<PathBuf>,
    },
    /// Replay a log in memory and report what is valid, what is not and why.
    ///
    /// Every event is verified and admitted, left pending or rejected with its PROFILE
    /// code; every sidecar's exchanges are folded. `--json` prints the PROFILE §12 report:
    /// summary, rejected (by log index), pending, heads, exchanges, not_folded. Exits 0
    /// when nothing was rejected or left pending, 1 otherwise, 2 on usage or IO errors.
    ///
    /// The log is replayed into memory (an in-memory ledger: it costs about the log's size
    /// in memory) and nothing is written; `--on-disk` replays into a scratch ledger in the
    /// temporary directory instead, for logs larger than memory.
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
        /// Also write the report as one self-contained HTML page (no network, no external
        /// assets): summary, rejections, pending, the exchanges table, and each exchange's
        /// timeline with a picture of its events.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Replay into a scratch ledger in the temporary directory (removed at exit, also on
        /// SIGINT or SIGTERM) instead of memory: for a log larger than memory.
        #[arg(long)]
        on_disk: bool,
    },
    /// Append events from a log, printing one outcome line per event.
    ///
    /// Each event is admitted, a duplicate, pending (waiting for its parents, which are
    /// named) or rejected with its PROFILE code. Exits 0 when nothing was rejected, 1 when
    /// any event was rejected, 2 on usage or IO errors.
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
    /// Exits 0 when nothing was rejected, 1 when any event was rejected, 2 on usage or IO
    /// errors.
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
    /// With `--out F`, says how many events it wrote.
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
    /// With `--decrypt`, a sidecar message or control is shown with its plaintext opened
    /// by the keyring's sidecar key: a message's binding and body, a control's exchange,
    /// action and basis. Never without `--decrypt`; exits 2 with the reason when the
    /// keyring has no key for the event's sidecar and epoch.
    ///
    /// Example: akledger show ak:event:Ak2d… --decrypt
    Show {
        /// The event id.
        id: String,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Decrypt the plaintext of a sidecar message or control (keyring required).
        #[arg(long)]
        decrypt: bool,
        /// Without --decrypt, accepted for symmetry (the output is the event's JSON either
        /// way); with it, print {"event_id","kind","epoch","content_type","plaintext"}.
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
    /// Exits 0 when covered, 1 when not covered (as `git merge-base --is-ancestor`), 2 on
    /// usage or IO errors (an id that is not admitted).
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
    /// Answered from the graph file (DIR/graph) without opening the ledger when the file
    /// describes exactly the log; otherwise the ledger is opened read-only. Same answer.
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
    /// Show one exchange's projection (PROFILE §8.6), or author exchange events.
    ///
    /// `akledger exchange --sidecar S ID` shows the projection; with `--history`, the
    /// timeline: request, responses, internal messages and controls with time, author,
    /// role or action, and what the fold made of each (folded, applied, terminal, or
    /// ignored with the reason; a conflict loser names the controls that beat it).
    /// `akledger exchange request`, `respond` and `control` write events (see their --help).
    ///
    /// Example: akledger exchange exchange-00000001-00000003 --history
    #[command(args_conflicts_with_subcommands = true)]
    Exchange {
        #[command(subcommand)]
        action: Option<ExchangeCmd>,
        /// The sidecar [default: the ledger's only sidecar].
        #[arg(long, value_name = "ID")]
        sidecar: Option<String>,
        /// The exchange id.
        exchange_id: Option<String>,
        /// Print the exchange's timeline instead of its projection.
        #[arg(long)]
        history: bool,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print the §8.6 JSON object (with --history: {"sidecar_id","exchange_id","status"?,
        /// "entries":[{"event_id","created_at","author","by_controller","role","action"?,
        /// "outcome","reason"?,"beaten_by"?,…}]}).
        #[arg(long)]
        json: bool,
    },
    /// Re-verify every stored event, rebuild every index and fold, and report differences.
    ///
    /// Exits 0 when nothing differs, 1 when anything differs, 2 on usage or IO errors.
    ///
    /// Example: akledger check --dir ./akledger-data
    Check {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"entries","admitted","pending","differences"}.
        #[arg(long)]
        json: bool,
    },
    /// Generate a synthetic signed workload as a log (realm DAG + sidecar).
    ///
    /// Writes the realm create, EVENTS notes by WRITERS writers (each refs its writer's
    /// previous note and, half the time, another writer's latest), then one sidecar with
    /// EXCHANGES exchanges (5 agents, every outcome). Deterministic in the seed. Signing
    /// runs on every core. `--keyring-out` writes the keyring that decrypts the sidecar.
    ///
    /// Example: akledger gen --events 1000000 --writers 64 --exchanges 1000 --seed 1 --out /tmp/big.jsonl --keyring-out /tmp/big.keyring.json
    Gen {
        /// Realm DAG events (besides the realm create).
        #[arg(long, default_value_t = 10_000)]
        events: usize,
        /// Writers of the realm DAG.
        #[arg(long, default_value_t = 8)]
        writers: usize,
        /// Exchanges in the sidecar (0 for none).
        #[arg(long, default_value_t = 100)]
        exchanges: usize,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file (default stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Log encoding.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: FormatArg,
        /// Also write the keyring (sidecar key) here.
        #[arg(long, value_name = "FILE")]
        keyring_out: Option<PathBuf>,
    },
    /// Admitted events, newest first, one line each (id, time, kind, actor), like
    /// `git log --oneline`.
    ///
    /// With `--follow`, the newest N (--limit, default 10) oldest first, then every event
    /// as it is admitted, like `tail -f`, until interrupted. The follower polls: it opens
    /// the ledger read-only for each look and never takes the writer lock.
    ///
    /// Example: akledger log --kind ak.sidecar.message --limit 10
    Log {
        /// Only events of this kind (e.g. ak.realm.create, ak.message.create).
        #[arg(long, value_name = "K")]
        kind: Option<String>,
        /// Only the newest N.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Keep printing newly admitted events (oldest first).
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// One JSON object per event: {"event_id","kind","actor" (its principal),"created_at"}.
        #[arg(long)]
        json: bool,
    },
    /// Draw the causal DAG as Graphviz DOT (`akledger dag --dot | dot -Tsvg > dag.svg`).
    ///
    /// One node per admitted event (heads with a double border), pending events dashed,
    /// the events they miss dotted (never seen) or as red octagons (rejected on release),
    /// exchange controls filled by outcome (green terminal, blue applied, orange ignored,
    /// with the reason); edges run from a dependency to the event naming it.
    ///
    /// Example: akledger dag --dot --exchange exchange-00000001-00000003 | dot -Tsvg > x.svg
    Dag {
        /// Write Graphviz DOT (the only format).
        #[arg(long, required = true)]
        dot: bool,
        /// Leave out every event this id covers (repeat, or separate with commas).
        #[arg(
            long,
            value_name = "ID",
            value_delimiter = ',',
            conflicts_with = "exchange"
        )]
        since: Vec<String>,
        /// Only this exchange's events (request, messages, controls).
        #[arg(long, value_name = "X")]
        exchange: Option<String>,
        /// The exchange's sidecar [default: the ledger's only sidecar].
        #[arg(long, value_name = "ID", requires = "exchange")]
        sidecar: Option<String>,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// List the pending events (waiting for dependencies), or explain one.
    ///
    /// Each line: the event, how many dependencies it misses, and the events it ultimately
    /// waits for (through other pending events). `--why ID` explains one: what it needs and
    /// what became of each event it waits for (never seen, or rejected). Exits 0, or 2
    /// when ID is not pending.
    ///
    /// Example: akledger pending --why ak:event:Ak2d…
    Pending {
        /// Explain this pending event.
        #[arg(long, value_name = "ID")]
        why: Option<String>,
        #[command(flatten)]
        ledger: LedgerArgs,
        /// One JSON object per event: {"event_id","missing","root_missing","root_rejected"}.
        #[arg(long)]
        json: bool,
    },
    /// Drop a pending event (one waiting for dependencies). The drop is recorded in the
    /// log, so every replay agrees; the event may be submitted again later.
    ///
    /// Example: akledger drop-pending ak:event:Ak2d…
    DropPending {
        /// The pending event's id.
        id: String,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Serve this ledger to `akledger sync` peers: over TCP (`--listen ADDR`; with port 0 the
    /// bound address is printed as the first stdout line; many peers at once) or for one
    /// session over stdin/stdout (`--stdio`, for `--peer-cmd "ssh host akledger serve --stdio"`).
    ///
    /// Example: akledger serve --dir ./books --listen 127.0.0.1:7420
    Serve {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Address to listen on.
        #[arg(
            long,
            value_name = "ADDR",
            conflicts_with = "stdio",
            required_unless_present = "stdio"
        )]
        listen: Option<String>,
        /// Serve one session over stdin/stdout.
        #[arg(long)]
        stdio: bool,
        #[command(flatten)]
        session: sync::SessionArgs,
    },
    /// Exchange events with a peer ledger: send what it lacks, receive what this one lacks.
    ///
    /// Example: akledger sync --dir ./books --peer 127.0.0.1:7420 --json
    Sync {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// The address of an `akledger serve --listen`.
        #[arg(
            long,
            value_name = "ADDR",
            conflicts_with = "peer_cmd",
            required_unless_present = "peer_cmd"
        )]
        peer: Option<String>,
        /// A shell command that runs `akledger serve --stdio` (for example over ssh).
        #[arg(long, value_name = "CMD")]
        peer_cmd: Option<String>,
        /// Only receive events.
        #[arg(long)]
        pull_only: bool,
        /// Only send events.
        #[arg(long)]
        push_only: bool,
        #[command(flatten)]
        session: sync::SessionArgs,
        /// Print {"sent","received","bytes_sent","bytes_received","rounds"}.
        #[arg(long)]
        json: bool,
    },
    /// Replicate through a NATS JetStream stream: publish this ledger's new events, admit
    /// the stream's.
    ///
    /// Each admitted event is published on its realm's subject `ak.<realm token>.events` of
    /// the stream (created when missing) with its event id as `Nats-Msg-Id`;
    /// DIR/replicate/<stream>.json records how far publishing got and this ledger's durable
    /// consumer, which reads the stream in batches through normal admission and acknowledges
    /// each batch once it is durable here. `--once` publishes what is new, consumes to the
    /// end of the stream and exits; `--follow` keeps going, reconnecting with back-off while
    /// the server is away, until SIGINT or SIGTERM. Exits 0, or 1 when consumed messages
    /// were rejected (forged or malformed), 2 on usage, server or IO errors.
    ///
    /// Example: akledger replicate --dir ./books --nats nats://127.0.0.1:4222 --once --json
    #[cfg(feature = "nats")]
    Replicate {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// The NATS server.
        #[arg(long, value_name = "URL")]
        nats: String,
        /// The JetStream stream.
        #[arg(long, value_name = "NAME", default_value = akledger_replicate::DEFAULT_STREAM)]
        stream: String,
        /// One round, then exit.
        #[arg(long, conflicts_with = "follow", required_unless_present = "follow")]
        once: bool,
        /// Keep replicating until SIGINT or SIGTERM.
        #[arg(long)]
        follow: bool,
        /// Seconds one request to the server may take.
        #[arg(long, value_name = "SECS", default_value_t = akledger_replicate::limits::REPLICATE_TIMEOUT_SECS)]
        timeout: u64,
        /// Print {"published","consumed","admitted","duplicates","rejected"}.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script.
    ///
    /// Example: akledger completions bash > ~/.local/share/bash-completion/completions/akledger
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    ///
    /// Example: akledger man > akledger.1 && man ./akledger.1
    Man,
    /// Create an empty ledger and keyring.
    ///
    /// Example: akledger init --dir ./books
    Init {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"dir","keyring","events"}.
        #[arg(long)]
        json: bool,
    },
    /// Generate an Ed25519 signing key file.
    ///
    /// The file is JSON {"ed25519_secret_key": "<unpadded base64url of 32 bytes>"}, mode
    /// 0600. Prints the public `did:key` and the `ak:did_core:key:` principal the key signs
    /// as; never the secret.
    ///
    /// Example: akledger keygen --out alice.key.json
    Keygen {
        /// The key file to write.
        #[arg(long, value_name = "FILE", default_value = "akledger-key.json")]
        out: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
        /// Print {"file","did_key","did_core_id"}.
        #[arg(long)]
        json: bool,
    },
    /// List or edit the keyring file (PROFILE §11).
    Keys {
        #[command(subcommand)]
        action: KeysCmd,
    },
    /// Author realm events.
    Realm {
        #[command(subcommand)]
        action: RealmCmd,
    },
    /// Author sidecar events.
    Sidecar {
        #[command(subcommand)]
        action: SidecarCmd,
    },
    /// Author strand events.
    Strand {
        #[command(subcommand)]
        action: StrandCmd,
    },
    /// Check each event of a log on its own (id, canonical form, proof), without a ledger.
    ///
    /// Prints one line per event: its id and `ok`, or the PROFILE error code and why.
    /// Exits 0 when every event is valid, 1 when any event is rejected, 2 on usage or IO
    /// errors.
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

#[derive(Subcommand, Debug)]
enum KeysCmd {
    /// List the keyring: principals with their authorized did:keys, sidecars with the
    /// epochs it holds keys for. Never prints a secret.
    ///
    /// Example: akledger keys list --json
    List {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// Print {"keyring","principals":[{"principal","did_keys"}],"sidecars":[{"sidecar_id","epochs"}]}.
        #[arg(long)]
        json: bool,
    },
    /// Authorize a did:key for a principal, or add a sidecar key.
    ///
    /// Examples:
    ///   akledger keys add --principal ak:did_core:web:example.com --did-key did:key:z6Mk…
    ///   akledger keys add --sidecar ak:sidecar:… --epoch 2 --generate
    ///   akledger keys add --sidecar ak:sidecar:… --epoch 3 --key-file - < key.b64
    Add {
        #[command(flatten)]
        ledger: LedgerArgs,
        /// The principal to authorize a key for.
        #[arg(long, requires = "did_key", conflicts_with_all = ["sidecar", "epoch", "key", "generate"])]
        principal: Option<String>,
        /// The `did:key:z…` to authorize.
        #[arg(long, requires = "principal")]
        did_key: Option<String>,
        /// The sidecar to add a key for.
        #[arg(long, requires = "epoch")]
        sidecar: Option<String>,
        /// The key's epoch.
        #[arg(long, requires = "sidecar")]
        epoch: Option<u64>,
        /// The sidecar key: unpadded base64url of 32 bytes. Visible to other users in the
        /// process list; prefer --key-file.
        #[arg(long, conflicts_with_all = ["generate", "key_file"], requires = "sidecar")]
        key: Option<String>,
        /// Read the sidecar key (unpadded base64url of 32 bytes) from FILE, or stdin for `-`.
        #[arg(
            long,
            value_name = "FILE",
            conflicts_with = "generate",
            requires = "sidecar"
        )]
        key_file: Option<PathBuf>,
        /// Generate a fresh random sidecar key.
        #[arg(long, requires = "sidecar")]
        generate: bool,
        /// Print {"keyring","added"}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum RealmCmd {
    /// Create a realm; prints the event id and the realm id.
    ///
    /// Example: akledger realm create --key alice.key.json
    Create {
        #[command(flatten)]
        author: AuthorArgs,
    },
}

#[derive(Subcommand, Debug)]
enum SidecarCmd {
    /// Create your sidecar in a realm (you become its controller), with your private strand
    /// attached (version 1); prints the event id, the sidecar id and the strand id, and adds
    /// a fresh epoch-1 sidecar key to the keyring file.
    ///
    /// Example: akledger sidecar create --realm ak:realm:… --key alice.key.json
    Create {
        /// The realm.
        #[arg(long, value_name = "ID")]
        realm: String,
        /// Attach this existing strand of the realm instead of creating one.
        #[arg(long, value_name = "ID")]
        strand: Option<String>,
        #[command(flatten)]
        author: AuthorArgs,
    },
    /// Attach your sidecar to another strand of its realm (controller only): the next
    /// attach version; requests and controls from then on name that strand.
    ///
    /// Example: akledger sidecar attach --sidecar ak:sidecar:… --strand ak:strand:… --key alice.key.json
    Attach {
        /// The sidecar.
        #[arg(long, value_name = "ID")]
        sidecar: String,
        /// The strand.
        #[arg(long, value_name = "ID")]
        strand: String,
        #[command(flatten)]
        author: AuthorArgs,
    },
    /// Run the sidecar runtime on two files: envelopes appended to the input file (AEA stub
    /// line format `TO,SENDER,PROTOCOL_ID,MESSAGE,`) become encrypted events of the sidecar,
    /// handlers answer them, and every answer becomes an event before it is appended to the
    /// output file. Exchange envelopes (`akledger/exchange:1.0.0`) open and answer
    /// exchanges; the decision maker closes, fails on timeout and reassigns as the
    /// controller. Runs until SIGINT or SIGTERM (exit 0). A directory without a ledger is
    /// bootstrapped (controller key DIR/controller.key, realm, sidecar, private strand,
    /// sidecar key in DIR/keyring.json, DIR/sidecar-runtime.json) and the command says so.
    ///
    /// Example: akledger sidecar run --dir ./sc --input-file in.txt --output-file out.txt --echo
    Run {
        /// The ledger directory (bootstrapped when it holds no ledger).
        #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
        dir: PathBuf,
        /// The file envelopes arrive in (followed as it grows; created when missing).
        #[arg(long, value_name = "FILE")]
        input_file: PathBuf,
        /// The file envelopes are appended to.
        #[arg(long, value_name = "FILE")]
        output_file: PathBuf,
        /// Identities, address book and policy (default DIR/sidecar-runtime.json).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Install the echo handler: default-protocol bytes messages are answered with the
        /// same content.
        #[arg(long)]
        echo: bool,
        /// Handle what the input holds now and exit instead of following it.
        #[arg(long)]
        once: bool,
    },
}

#[derive(Subcommand, Debug)]
enum StrandCmd {
    /// Create a strand in a realm; prints the event id and the strand id.
    ///
    /// Example: akledger strand create --realm ak:realm:… --key alice.key.json
    Create {
        /// The realm.
        #[arg(long, value_name = "ID")]
        realm: String,
        #[command(flatten)]
        author: AuthorArgs,
    },
}

#[derive(Subcommand, Debug)]
enum ExchangeCmd {
    /// Open an exchange (controller only): address agents with a message.
    ///
    /// Example: akledger exchange request --key alice.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij --agent ak:did_core:key:z6Mk… --body "summarize the thread"
    Request {
        /// The sidecar.
        #[arg(long, value_name = "ID")]
        sidecar: String,
        /// The exchange id (`^[A-Za-z0-9._~=-]{22,128}$`).
        #[arg(long, value_name = "X")]
        exchange_id: String,
        /// An addressed agent (repeat for several): `ak:did_core:…`, or a `did:key:z…`
        /// (converted to its `ak:did_core:key:` principal).
        #[arg(long = "agent", value_name = "AGENT", required = true)]
        agents: Vec<String>,
        /// The coordinator (required when several agents are addressed); `did:key:` accepted.
        #[arg(long, value_name = "AGENT")]
        coordinator: Option<String>,
        /// The message text.
        #[arg(long)]
        body: String,
        /// The source track name.
        #[arg(long, default_value = "main")]
        track: String,
        /// The sidecar key epoch to seal with.
        #[arg(long, default_value_t = 1)]
        epoch: u64,
        #[command(flatten)]
        author: AuthorArgs,
    },
    /// Answer an exchange's canonical request (an addressed agent).
    ///
    /// Example: akledger exchange respond --key bob.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij --completes --body "done"
    Respond {
        /// The sidecar.
        #[arg(long, value_name = "ID")]
        sidecar: String,
        /// The exchange id.
        #[arg(long, value_name = "X")]
        exchange_id: String,
        /// Mark the answer as completing the exchange (the coordinator's answer).
        #[arg(long)]
        completes: bool,
        /// The message text.
        #[arg(long)]
        body: String,
        /// The sidecar key epoch to seal with.
        #[arg(long, default_value_t = 1)]
        epoch: u64,
        #[command(flatten)]
        author: AuthorArgs,
    },
    /// Close, cancel, fail or reassign an exchange (controller only), over everything the
    /// ledger has folded for it.
    ///
    /// Example: akledger exchange control --key alice.key.json --sidecar ak:sidecar:… --exchange-id order-2026-0001-abcdefghij close
    Control {
        /// The sidecar.
        #[arg(long, value_name = "ID", global = true)]
        sidecar: Option<String>,
        /// The exchange id.
        #[arg(long, value_name = "X", global = true)]
        exchange_id: Option<String>,
        /// The sidecar key epoch to seal with.
        #[arg(long, default_value_t = 1, global = true)]
        epoch: u64,
        #[command(flatten)]
        author: AuthorArgs,
        #[command(subcommand)]
        action: ControlArg,
    },
}

fn exchange_cmd(action: ExchangeCmd) -> Result<output::Outcome, output::CliError> {
    match action {
        ExchangeCmd::Request {
            sidecar,
            exchange_id,
            agents,
            coordinator,
            body,
            track,
            epoch,
            author,
        } => author::request(
            &author,
            &RequestArgs {
                sidecar: &sidecar,
                exchange_id: &exchange_id,
                agents: &agents,
                coordinator: coordinator.as_deref(),
                body: &body,
                track: &track,
                epoch,
            },
        ),
        ExchangeCmd::Respond {
            sidecar,
            exchange_id,
            completes,
            body,
            epoch,
            author,
        } => author::respond(&author, &sidecar, &exchange_id, completes, &body, epoch),
        ExchangeCmd::Control {
            sidecar,
            exchange_id,
            epoch,
            author,
            action,
        } => match (sidecar, exchange_id) {
            (Some(s), Some(x)) => author::control(&author, &s, &x, &action, epoch),
            _ => Err(output::CliError::Usage(
                "exchange control: --sidecar and --exchange-id are required".into(),
            )),
        },
    }
}

/// Parses the arguments, runs the command, and maps the outcome to an exit code.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo {
            dir,
            seed,
            exchanges,
            offered_log,
        } => demo::run(&dir, seed, exchanges, offered_log.as_deref()),
        Command::Audit {
            log,
            keyring,
            json,
            html,
            on_disk,
        } => audit::run(&log, keyring.as_deref(), json, html.as_deref(), on_disk),
        Command::Append { file, ledger, json } => io::append(&ledger, &file, json),
        Command::Import { file, ledger, json } => io::import(&ledger, &file, json),
        Command::Export {
            ledger,
            format,
            since,
            out,
        } => io::export(&ledger, format, &since, out.as_deref()),
        Command::Show {
            id,
            ledger,
            decrypt,
            json,
        } => query::show(&ledger, &id, decrypt, json),
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
            action: Some(action),
            ..
        } => exchange_cmd(action),
        Command::Exchange {
            action: None,
            sidecar,
            exchange_id,
            history,
            ledger,
            json,
        } => match exchange_id {
            Some(id) => query::exchange(&ledger, sidecar.as_deref(), &id, history, json),
            None => Err(output::CliError::Usage(
                "exchange: give an exchange id (and --sidecar ID when the ledger has several), or a subcommand (request, respond, control)".into(),
            )),
        },
        Command::Check { ledger, json } => query::check(&ledger, json),
        Command::Verify {
            file,
            keyring,
            json,
        } => verify::run(&file, keyring.as_deref(), json),
        Command::Gen {
            events,
            writers,
            exchanges,
            seed,
            out,
            format,
            keyring_out,
        } => gen::run(&gen::GenArgs {
            events,
            writers,
            exchanges,
            seed,
            out: out.as_deref(),
            format,
            keyring_out: keyring_out.as_deref(),
        }),
        Command::Log {
            kind,
            limit,
            follow,
            ledger,
            json,
        } => log::run(
            &ledger,
            &log::LogArgs {
                kind: kind.as_deref(),
                limit,
                follow,
                json,
            },
        ),
        Command::Dag {
            dot: _,
            since,
            exchange,
            sidecar,
            ledger,
        } => dag::run(
            &ledger,
            &dag::DagArgs {
                since: &since,
                exchange: exchange.as_deref(),
                sidecar: sidecar.as_deref(),
            },
        ),
        Command::Pending { why, ledger, json } => pending::run(&ledger, why.as_deref(), json),
        Command::DropPending { id, ledger } => io::drop_pending(&ledger, &id),
        Command::Serve {
            ledger,
            listen,
            stdio: _,
            session,
        } => {
            let options = session.options(akledger::sync::Direction::Both);
            match listen {
                Some(addr) => sync::serve_tcp(&ledger, &addr, &options),
                None => sync::serve_stdio(&ledger, &options),
            }
        }
        Command::Sync {
            ledger,
            peer,
            peer_cmd,
            pull_only,
            push_only,
            session,
            json,
        } => sync::direction(pull_only, push_only).and_then(|direction| {
            let peer = match (peer, peer_cmd) {
                (Some(addr), _) => sync::Peer::Tcp(addr),
                (None, Some(cmd)) => sync::Peer::Command(cmd),
                (None, None) => return Err(output::CliError::Usage("--peer or --peer-cmd".into())),
            };
            sync::sync(&ledger, &peer, &session.options(direction), json)
        }),
        #[cfg(feature = "nats")]
        Command::Replicate {
            ledger,
            nats,
            stream,
            once: _,
            follow,
            timeout,
            json,
        } => {
            let options = akledger_replicate::ReplicateOptions {
                url: nats,
                stream,
                timeout: std::time::Duration::from_secs(timeout),
            };
            replicate::replicate(&ledger, options, follow, json)
        }
        Command::Completions { shell } => shell::completions(shell),
        Command::Man => shell::man(),
        Command::Init { ledger, json } => keys::init(&ledger, json),
        Command::Keygen { out, force, json } => keys::keygen(&out, force, json),
        Command::Keys {
            action: KeysCmd::List { ledger, json },
        } => keys::list(&ledger, json),
        Command::Keys {
            action:
                KeysCmd::Add {
                    ledger,
                    principal,
                    did_key,
                    sidecar,
                    epoch,
                    key,
                    key_file,
                    generate,
                    json,
                },
        } => {
            let key = match key_file {
                Some(file) => keys::read_key_text(&file).map(Some),
                None => Ok(key),
            };
            let what = key.and_then(|key| match (principal, did_key, sidecar, epoch) {
                (Some(principal), Some(did_key), None, None) => {
                    Ok(keys::KeyToAdd::Principal { principal, did_key })
                }
                (None, None, Some(sidecar), Some(epoch)) if key.is_some() || generate => {
                    Ok(keys::KeyToAdd::Sidecar {
                        sidecar,
                        epoch,
                        key,
                    })
                }
                _ => Err(output::CliError::Usage(
                    "keys add: give --principal P --did-key K, or --sidecar S --epoch N with --key-file FILE, --key B64URL or --generate".into(),
                )),
            });
            what.and_then(|w| keys::add(&ledger, w, json))
        }
        Command::Realm {
            action: RealmCmd::Create { author },
        } => author::realm_create(&author),
        Command::Sidecar {
            action:
                SidecarCmd::Create {
                    realm,
                    strand,
                    author,
                },
        } => author::sidecar_create(&author, &realm, strand.as_deref()),
        Command::Sidecar {
            action:
                SidecarCmd::Attach {
                    sidecar,
                    strand,
                    author,
                },
        } => author::sidecar_attach(&author, &sidecar, &strand),
        Command::Sidecar {
            action:
                SidecarCmd::Run {
                    dir,
                    input_file,
                    output_file,
                    config,
                    echo,
                    once,
                },
        } => sidecar_run::run(&sidecar_run::RunArgs {
            dir: &dir,
            input: &input_file,
            output: &output_file,
            config: config.as_deref(),
            echo,
            once,
        }),
        Command::Strand {
            action: StrandCmd::Create { realm, author },
        } => author::strand_create(&author, &realm),
    };
    output::finish(result)
}
