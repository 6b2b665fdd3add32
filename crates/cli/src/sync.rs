//! `serve` and `sync`: the two ends of the sync protocol over TCP, stdio or a spawned
//! command. The protocol itself is the library's ([`akledger::sync`]); this file only opens
//! the ledger, connects the streams and prints the result.

use clap::Args;
use std::io::{self, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use akledger::limits::{MAX_SYNC_SESSIONS, MIN_SYNC_SESSION_BYTES_PER_SEC};
use akledger::limits::{SYNC_SESSION_LIMIT_SECS, SYNC_TIMEOUT_SECS};
use akledger::sync::{
    stop_serving, Direction, Duplex, ServeEvent, ServeOptions, SyncOptions, SyncReport,
};
use akledger::{Json, Ledger, Object};

use super::output::{
    counts, emit, json_text, print_lines, print_text_lines, stdout_result, typed, CliError,
    LedgerArgs, Outcome,
};
use super::progress::{counting, transfer};

/// Where `sync` finds its peer.
pub enum Peer {
    /// A `serve --listen` address.
    Tcp(String),
    /// A shell command whose stdin/stdout speak the protocol (`… serve --stdio`).
    Command(String),
}

/// The time bounds of a session, for `serve` and `sync`.
#[derive(Args, Debug)]
pub struct SessionArgs {
    /// Seconds the peer may stay silent, or leave our bytes untaken, before the session
    /// fails.
    #[arg(long, value_name = "SECS", default_value_t = SYNC_TIMEOUT_SECS)]
    timeout: u64,
    /// Seconds one whole session may last before it is cut off.
    #[arg(long, value_name = "SECS", default_value_t = SYNC_SESSION_LIMIT_SECS)]
    session_limit: u64,
}

impl SessionArgs {
    /// The library's options for a session moving events in `direction`.
    pub fn options(&self, direction: Direction) -> SyncOptions {
        SyncOptions {
            direction,
            timeout: Duration::from_secs(self.timeout),
            session_limit: Duration::from_secs(self.session_limit),
        }
    }
}

/// Serve this ledger to `akledger sync` peers, over TCP or stdin/stdout.
///
/// Over TCP (`--listen ADDR`; with port 0 the bound address is printed as the first stdout
/// line; many peers at once; SIGTERM or SIGINT stop it cleanly, exit 0), or for one
/// session over stdin/stdout (`--stdio`, for `--peer-cmd "ssh host akledger serve
/// --stdio"`).
///
/// Listening beyond loopback without --read-only lets anyone who can connect push events
/// into the ledger (each still verified by admission).
///
/// Example: akledger serve --dir ./books --listen 127.0.0.1:7420
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Address to listen on.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "stdio",
        required_unless_present = "stdio"
    )]
    pub listen: Option<String>,
    /// Serve one session over stdin/stdout.
    #[arg(long)]
    pub stdio: bool,
    /// Serve only: a peer that pushes events is refused and nothing it sends is admitted
    /// (peers sync with --pull-only). Without it, a server listening beyond loopback warns.
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub session: SessionArgs,
}

/// `akledger serve`: over TCP with `--listen`, else over stdin/stdout.
pub fn serve(args: ServeArgs) -> Result<Outcome, CliError> {
    let options = args.session.options(Direction::Both);
    match &args.listen {
        Some(addr) => serve_tcp(&args.ledger, addr, &options, args.read_only),
        None => serve_stdio(&args.ledger, &options, args.read_only),
    }
}

/// `akledger serve --listen ADDR`: one ledger shared by concurrent sessions, until SIGTERM
/// or SIGINT, which stop it accepting, let the running sessions end and close the ledger.
fn serve_tcp(
    ledger: &LedgerArgs,
    addr: &str,
    options: &SyncOptions,
    read_only: bool,
) -> Result<Outcome, CliError> {
    let keyring = ledger.keyring_target();
    let ledger = ledger.open_for_writing()?;
    let listener =
        TcpListener::bind(addr).map_err(|e| CliError::Usage(format!("listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::Usage(format!("listen on {addr}: {e}")))?;
    // Before the address is printed: whoever reads it may signal at once.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || stop_serving(&flag, bound))
        .map_err(|e| CliError::Usage(format!("cannot handle SIGINT/SIGTERM: {e}")))?;
    let mut out = io::stdout();
    emit(&mut out, &bound.to_string())?;
    stdout_result(out.flush())?;
    if !read_only && !bound.ip().is_loopback() {
        eprintln!(
            "akledger: serve: listening on {bound}, beyond loopback, and taking events: anyone who can connect may push events into this ledger (each is still verified); pass --read-only to serve only"
        );
    }
    let serve_options = ServeOptions {
        session: *options,
        read_only,
        keyring_file: Some(keyring),
    };
    let report = ledger.serve(listener, &serve_options, &stop, tell)?;
    ledger.close()?;
    eprintln!(
        "akledger: serve: stopped: {} sessions served ({} failed, {} peers told busy), {} events sent, {} received; the ledger is closed",
        report.sessions, report.failed, report.busy, report.sent, report.received
    );
    Ok(Outcome::Clean)
}

/// Says on stderr what the server did.
fn tell(event: ServeEvent<'_>) {
    match event {
        ServeEvent::Ended {
            peer,
            result: Ok(r),
        } => eprintln!(
            "akledger: serve: {peer}: sent {} events, received {}",
            r.sent, r.received
        ),
        ServeEvent::Ended {
            peer,
            result: Err(e),
        } => eprintln!("akledger: serve: {peer}: {e}"),
        ServeEvent::Busy { peer } => {
            eprintln!("akledger: serve: {peer}: refused, {MAX_SYNC_SESSIONS} sessions running")
        }
        ServeEvent::Cut {
            peer,
            bytes_per_sec,
            after,
        } => eprintln!(
            "akledger: serve: {peer}: cut to make room ({bytes_per_sec} bytes/s over {} s, below {MIN_SYNC_SESSION_BYTES_PER_SEC})",
            after.as_secs()
        ),
        ServeEvent::KeyringReloaded(added) => eprintln!(
            "akledger: serve: keyring reloaded ({} new authorizations, {} new sidecar keys)",
            added.authorizations,
            added.sidecar_keys.len()
        ),
        ServeEvent::KeyringKept(e) => {
            eprintln!("akledger: serve: keyring not reloaded, keeping the keys held: {e}")
        }
        _ => {}
    }
}

/// `akledger serve --stdio`: one session over stdin/stdout.
fn serve_stdio(
    ledger: &LedgerArgs,
    options: &SyncOptions,
    read_only: bool,
) -> Result<Outcome, CliError> {
    let ledger = ledger.open_for_writing()?;
    let stream = Duplex::timed(io::stdin(), io::stdout(), options.timeout);
    let served = ledger.serve_duplex(stream, options.session_limit, read_only);
    served.map_err(|e| CliError::Usage(e.to_string()))?;
    Ok(Outcome::Clean)
}

/// Exchange events with a peer ledger: send what it lacks, receive what this one lacks.
///
/// Exit 1 when admission refused events on either side (the peer's refusals are listed
/// with their codes), 2 when the session failed.
///
/// Example: akledger sync --dir ./books --peer 127.0.0.1:7420 --json
#[derive(Args, Debug)]
pub struct SyncArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The address of an `akledger serve --listen`.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "peer_cmd",
        required_unless_present = "peer_cmd"
    )]
    pub peer: Option<String>,
    /// A shell command that runs `akledger serve --stdio` (for example over ssh). It starts
    /// while this ledger opens, so the two ledgers open at once.
    #[arg(long, value_name = "CMD")]
    pub peer_cmd: Option<String>,
    /// Only receive events.
    #[arg(long)]
    pub pull_only: bool,
    /// Only send events.
    #[arg(long)]
    pub push_only: bool,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Print {"sent","received","bytes_sent","bytes_received","rounds"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger sync`.
pub fn run(args: SyncArgs) -> Result<Outcome, CliError> {
    let direction = direction(args.pull_only, args.push_only)?;
    let peer = match (args.peer, args.peer_cmd) {
        (Some(addr), _) => Peer::Tcp(addr),
        (None, Some(cmd)) => Peer::Command(cmd),
        (None, None) => return Err(CliError::Usage("--peer or --peer-cmd".into())),
    };
    sync(
        &args.ledger,
        &peer,
        &args.session.options(direction),
        args.json,
    )
}

/// `akledger sync --peer ADDR | --peer-cmd CMD`.
fn sync(
    ledger: &LedgerArgs,
    peer: &Peer,
    options: &SyncOptions,
    json: bool,
) -> Result<Outcome, CliError> {
    // A peer command starts before this ledger opens, so the two ledgers open at once
    // (a writer's open of a 100 k-event ledger takes tens of milliseconds); the peer waits
    // for this side's first frame for at most its --timeout.
    let link = match peer {
        Peer::Tcp(addr) => Link::Tcp(addr),
        Peer::Command(cmd) => Link::Child(spawn(cmd)?),
    };
    // Syncing into a directory that holds no ledger makes one (a copy of the peer's, as
    // `git clone` does), and removes it again if the session stores nothing.
    let (ledger, creation) = match ledger.create() {
        Ok(opened) => opened,
        Err(e) => {
            if let Link::Child(spawned) = link {
                stop(spawned.child);
            }
            return Err(e);
        }
    };
    let result = sync_with(&ledger, link, options, json);
    creation.settle(ledger, result)
}

/// How `sync` reaches its peer once the ledger is open.
enum Link<'a> {
    Tcp(&'a str),
    Child(Spawned),
}

/// A peer command running, with the two ends of its pipes.
struct Spawned {
    child: Child,
    reader: ChildStdout,
    writer: ChildStdin,
}

/// Ends a peer command: it is killed and waited for.
fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `sh -c cmd` with its stdin and stdout piped to this process.
fn spawn(cmd: &str) -> Result<Spawned, CliError> {
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::Usage(format!("run {cmd:?}: {e}")))?;
    let (Some(writer), Some(reader)) = (child.stdin.take(), child.stdout.take()) else {
        stop(child);
        return Err(CliError::Usage(format!("run {cmd:?}: no pipes")));
    };
    Ok(Spawned {
        child,
        reader,
        writer,
    })
}

fn sync_with(
    ledger: &Ledger,
    link: Link<'_>,
    options: &SyncOptions,
    json: bool,
) -> Result<Outcome, CliError> {
    let report = match link {
        Link::Tcp(addr) => {
            let stream = TcpStream::connect(addr)
                .map_err(|e| CliError::Usage(format!("connect to {addr}: {e}")))?;
            options
                .apply_to(&stream)
                .map_err(|e| CliError::Usage(format!("connect to {addr}: {e}")))?;
            ledger.sync_duplex(counting(&stream, &stream, transfer()), options)
        }
        Link::Child(Spawned {
            mut child,
            reader,
            writer,
        }) => {
            let duplex = Duplex::timed(reader, writer, options.timeout);
            let stream = counting(duplex.reader, duplex.writer, transfer());
            let result = ledger.sync_duplex(stream, options);
            if result.is_err() {
                let _ = child.kill();
            }
            let _ = child.wait();
            result
        }
    };
    let report = report.map_err(|e| CliError::Usage(e.to_string()))?;
    print_report(&report, json)?;
    Ok(
        if report.rejected > 0 || !report.refused_by_peer.is_empty() {
            Outcome::Findings
        } else {
            Outcome::Clean
        },
    )
}

fn print_report(r: &SyncReport, json: bool) -> Result<(), CliError> {
    if json {
        let object = counts(&[
            ("sent", r.sent),
            ("received", r.received),
            ("bytes_sent", r.bytes_sent),
            ("bytes_received", r.bytes_received),
            ("rounds", r.rounds),
        ]);
        let refused: Vec<Json> = r
            .refused_by_peer
            .iter()
            .map(|x| {
                Object::new()
                    .with("event_id", x.id.to_string().into())
                    .with("code", x.code.as_str().into())
                    .with("message", x.message.as_str().into())
                    .into()
            })
            .collect();
        let object = object.with("refused_by_peer", Json::Array(refused));
        return print_lines([json_text(&typed("akledger.sync", object))]);
    }
    let mut lines = vec![
        format!("sent {} events, received {}", r.sent, r.received),
        format!(
            "{} bytes out, {} bytes in, {} rounds",
            r.bytes_sent, r.bytes_received, r.rounds
        ),
    ];
    if r.pending > 0 || r.rejected > 0 {
        lines.push(format!(
            "of the received: {} admitted, {} pending, {} rejected",
            r.admitted, r.pending, r.rejected
        ));
    }
    if !r.refused_by_peer.is_empty() {
        lines.push(format!(
            "the peer refused {} of the events sent (not delivered):",
            r.refused_by_peer.len()
        ));
        lines.extend(
            r.refused_by_peer
                .iter()
                .map(|x| format!("  {} {}: {}", x.id, x.code, x.message)),
        );
    }
    print_text_lines(lines)
}

/// The direction the flags ask for.
fn direction(pull_only: bool, push_only: bool) -> Result<Direction, CliError> {
    match (pull_only, push_only) {
        (false, false) => Ok(Direction::Both),
        (true, false) => Ok(Direction::PullOnly),
        (false, true) => Ok(Direction::PushOnly),
        (true, true) => Err(CliError::Usage(
            "--pull-only and --push-only exclude each other".into(),
        )),
    }
}
