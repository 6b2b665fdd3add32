//! `serve` and `sync`: the two ends of the sync protocol over TCP, stdio or a spawned
//! command. The protocol itself is the library's ([`akledger::sync`]); this file only opens
//! the ledger, connects the streams and prints the result.

use clap::Args;
use std::io::{self, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use akledger::limits::{BUSY_ANSWER_SECS, MAX_SYNC_REFUSALS, MAX_SYNC_SESSIONS};
use akledger::limits::{SYNC_SESSION_LIMIT_SECS, SYNC_TIMEOUT_SECS};
use akledger::sync::{Direction, Duplex, SyncOptions, SyncReport};
use akledger::{Json, Ledger, Object};

use super::output::{
    counts, emit, json_text, print_lines, print_text_lines, stdout_result, CliError, LedgerArgs,
    Outcome,
};
use super::progress::{transfer, Transfer};
use super::serve_slots::{Counted, Slots};

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

/// Serve this ledger to `akledger sync` peers: over TCP (`--listen ADDR`; with port 0 the
/// bound address is printed as the first stdout line; many peers at once) or for one
/// session over stdin/stdout (`--stdio`, for `--peer-cmd "ssh host akledger serve --stdio"`).
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
    #[command(flatten)]
    pub session: SessionArgs,
}

/// `akledger serve`: over TCP with `--listen`, else over stdin/stdout.
pub fn serve(args: ServeArgs) -> Result<Outcome, CliError> {
    let options = args.session.options(Direction::Both);
    match &args.listen {
        Some(addr) => serve_tcp(&args.ledger, addr, &options),
        None => serve_stdio(&args.ledger, &options),
    }
}

/// `akledger serve --listen ADDR`: one ledger shared by concurrent sessions.
fn serve_tcp(ledger: &LedgerArgs, addr: &str, options: &SyncOptions) -> Result<Outcome, CliError> {
    let keyring = ledger.keyring_target();
    let ledger = Arc::new(ledger.open_for_writing()?);
    let listener =
        TcpListener::bind(addr).map_err(|e| CliError::Usage(format!("listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::Usage(format!("listen on {addr}: {e}")))?;
    let mut out = io::stdout();
    emit(&mut out, &bound.to_string())?;
    stdout_result(out.flush())?;
    let refusing = Arc::new(AtomicUsize::new(0));
    let options = *options;
    let mut slots = Slots::new(options.timeout);
    let mut keyring_seen = keyring_stamp(&keyring);
    // What all sessions together may hold of what peers send.
    let budget = akledger::sync::MemoryBudget::new(akledger::limits::MAX_SYNC_HELD_BYTES);
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if !slots.make_room() {
            refuse_busy(stream, &refusing);
            continue;
        }
        // `keys add` beside a running server: each session starts with what the file holds.
        let stamp = keyring_stamp(&keyring);
        if stamp != keyring_seen {
            keyring_seen = stamp;
            match ledger.merge_keyring_file(&keyring) {
                Ok(n) => eprintln!("akledger: serve: keyring reloaded ({n} new sidecar keys)"),
                Err(e) => {
                    eprintln!("akledger: serve: keyring not reloaded, keeping the keys held: {e}")
                }
            }
        }
        let peer = stream
            .peer_addr()
            .map_or_else(|_| "peer".to_owned(), |a| a.to_string());
        let Ok(handle) = stream.try_clone() else {
            continue;
        };
        let progress = slots.start(&peer, handle);
        let ledger = Arc::clone(&ledger);
        let budget = budget.clone();
        std::thread::spawn(move || {
            let applied = options.apply_to(&stream);
            let mut counted = Counted {
                inner: stream,
                progress: Arc::clone(&progress),
            };
            let result = applied
                .map_err(akledger::sync::SyncError::io)
                .and_then(|()| {
                    ledger.serve_session_sharing(&mut counted, options.session_limit, &budget)
                });
            match result {
                Ok(r) => eprintln!(
                    "akledger: serve: {peer}: sent {} events, received {}",
                    r.sent, r.received
                ),
                Err(e) => eprintln!("akledger: serve: {peer}: {e}"),
            }
            // The slot table holds a handle on the socket (to cut a trickler): close the
            // connection now, not when that handle goes.
            let _ = counted.inner.shutdown(std::net::Shutdown::Both);
            progress.finish();
        });
    }
    Ok(Outcome::Clean)
}

/// What identifies the keyring file's version: its inode, length and modification time
/// (`None` without a file).
fn keyring_stamp(path: &std::path::Path) -> Option<(u64, u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()?))
}

/// Tells a peer that came while every session is taken that the server is busy (a sync
/// error frame, which its `sync` prints), on a thread of its own with a short deadline, so
/// that the accept loop never waits on a peer; beyond [`MAX_SYNC_REFUSALS`] at once, the
/// connection is only closed.
fn refuse_busy(mut stream: TcpStream, refusing: &Arc<AtomicUsize>) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "peer".to_owned(), |a| a.to_string());
    eprintln!("akledger: serve: {peer}: refused, {MAX_SYNC_SESSIONS} sessions running");
    if refusing.fetch_add(1, Ordering::SeqCst) >= MAX_SYNC_REFUSALS {
        refusing.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let refusing_again = Arc::clone(refusing);
    let refusing = Arc::clone(refusing);
    let spawned = std::thread::Builder::new()
        .name("akledger-serve-busy".into())
        .spawn(move || {
            let deadline = Some(Duration::from_secs(BUSY_ANSWER_SECS));
            if stream.set_write_timeout(deadline).is_ok()
                && stream.set_read_timeout(deadline).is_ok()
            {
                let why = format!(
                    "busy: this server runs {MAX_SYNC_SESSIONS} sessions, its most; try again later"
                );
                let _ = akledger::sync::refuse(&mut stream, &why);
                // Closing with the peer's hello unread would reset the connection and could
                // discard the answer before it is read: stop writing, then take what the peer
                // sends until it closes or the deadline passes.
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = io::copy(&mut io::Read::take(&mut stream, 1 << 20), &mut io::sink());
            }
            refusing.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        // No thread to answer on: the connection just closes.
        refusing_again.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `akledger serve --stdio`: one session over stdin/stdout.
fn serve_stdio(ledger: &LedgerArgs, options: &SyncOptions) -> Result<Outcome, CliError> {
    let ledger = ledger.open_for_writing()?;
    let mut stream = Duplex::timed(io::stdin(), io::stdout(), options.timeout);
    ledger
        .serve_session_within(&mut stream, options.session_limit)
        .map_err(|e| CliError::Usage(e.to_string()))?;
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
    /// A shell command that runs `akledger serve --stdio` (for example over ssh).
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
    // Syncing into a directory that holds no ledger makes one (a copy of the peer's, as
    // `git clone` does), and removes it again if the session stores nothing.
    let (ledger, creation) = ledger.create()?;
    let result = sync_with(&ledger, peer, options, json);
    creation.settle(ledger, result)
}

fn sync_with(
    ledger: &Ledger,
    peer: &Peer,
    options: &SyncOptions,
    json: bool,
) -> Result<Outcome, CliError> {
    let report = match peer {
        Peer::Tcp(addr) => {
            let mut stream = TcpStream::connect(addr)
                .map_err(|e| CliError::Usage(format!("connect to {addr}: {e}")))?;
            options
                .apply_to(&stream)
                .map_err(|e| CliError::Usage(format!("connect to {addr}: {e}")))?;
            let mut counted = Transfer::new(&mut stream, transfer());
            ledger.sync(&mut counted, options)
        }
        Peer::Command(cmd) => {
            let mut child = Command::new("sh")
                .args(["-c", cmd])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| CliError::Usage(format!("run {cmd:?}: {e}")))?;
            let (Some(writer), Some(reader)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(CliError::Usage(format!("run {cmd:?}: no pipes")));
            };
            let duplex = Duplex::timed(reader, writer, options.timeout);
            let mut stream = Transfer::new(duplex, transfer());
            let result = ledger.sync(&mut stream, options);
            drop(stream);
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
        let object = match object {
            Json::Object(o) => o.with("refused_by_peer", Json::Array(refused)).into(),
            other => other,
        };
        return print_lines([json_text(&object)]);
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
