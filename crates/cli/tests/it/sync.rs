//! The sync protocol with real processes on loopback: `akledger serve` and `akledger sync`
//! over TCP and over a spawned `serve --stdio`, divergent histories, pending-inducing
//! orders, a peer killed mid-transfer, malicious peers; and a property test that two random
//! subsets of one DAG converge to the union (library sessions over loopback TCP).

use crate::support::*;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use akledger::sync::{Duplex, SyncError, SyncOptions, SyncReport};
use akledger::workload::{realm_dag, sign_all, RealmDag};
use akledger::{EventId, Ledger};

/// A signed event not yet admitted anywhere.
type Signed = akledger::Event<akledger::Unverified>;
use proptest::prelude::*;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_akledger")
}

/// `akledger serve --listen 127.0.0.1:0` and the address it printed; killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: String,
}

impl Server {
    pub(crate) fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[], Stdio::null())
    }

    /// With `args` after `--listen`, what it says going to `stderr`.
    fn start_with(dir: &Path, args: &[&str], stderr: Stdio) -> Server {
        Server::listening(dir, "127.0.0.1:0", args, stderr)
    }

    /// `serve --listen ADDR args…`, what it says going to `stderr`.
    fn listening(dir: &Path, addr: &str, args: &[&str], stderr: Stdio) -> Server {
        let mut child = bin()
            .args(["serve", "--dir", p(dir), "--listen", addr])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Server {
            child,
            addr: line.trim().to_owned(),
        }
    }
}

impl Server {
    /// Sends `signal` (`-TERM`, `-INT`) and waits for the server to exit.
    fn signal(mut self, signal: &str) -> std::process::Output {
        let sent = Command::new("kill")
            .arg(signal)
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success());
        let child = std::mem::replace(&mut self.child, Command::new("true").spawn().unwrap());
        child.wait_with_output().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two ledgers sharing a prefix, each with its own tail; some of B's tail waits (pending)
/// for events only A's tail holds.
fn divergent(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf, usize) {
    let lines = log_lines(tmp, 400);
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    let a_lines: Vec<&String> = lines
        .iter()
        .take(301)
        .chain(lines.iter().skip(301).take(50))
        .collect();
    let b_lines: Vec<&String> = lines
        .iter()
        .take(301)
        .chain(lines.iter().skip(351))
        .collect();
    ledger_of(&a, &a_lines);
    ledger_of(&b, &b_lines);
    (a, b, lines.len())
}

#[test]
fn tcp_sync_converges_divergent_histories_and_a_second_sync_is_one_round() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, total) = divergent(tmp.path());
    assert!(len(&b) < total - 50, "B's tail should wait on A's");
    let server = Server::start(&b);
    let first = json(&run_ok(
        &["sync", "--dir", p(&a), "--peer", &server.addr, "--json"],
        0,
    ));
    assert_eq!(first["sent"], 50);
    assert!(first["received"].as_u64().unwrap() > 0);
    assert_eq!(
        (&first["type"], &first["format"]),
        (&"akledger.sync".into(), &1.into())
    );
    let second = json(&run_ok(
        &["sync", "--dir", p(&a), "--peer", &server.addr, "--json"],
        0,
    ));
    assert_eq!(second["sent"], 0);
    assert_eq!(second["received"], 0);
    assert_eq!(second["rounds"], 1);
    drop(server);
    assert_eq!(len(&a), total);
    assert_eq!(len(&b), total);
    assert_eq!(heads(&a), heads(&b));
}

#[test]
fn stdio_peer_command_pulls_only_and_pushes_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, total) = divergent(tmp.path());
    let peer = format!("{} serve --stdio --dir {}", exe(), p(&b));
    let pull = json(&run_ok(
        &[
            "sync",
            "--dir",
            p(&a),
            "--peer-cmd",
            &peer,
            "--pull-only",
            "--json",
        ],
        0,
    ));
    assert_eq!(pull["sent"], 0);
    let pulled = pull["received"].as_u64().unwrap() as usize;
    assert_eq!(len(&a), 351 + pulled);
    let b_before = len(&b);
    let push = json(&run_ok(
        &[
            "sync",
            "--dir",
            p(&a),
            "--peer-cmd",
            &peer,
            "--push-only",
            "--json",
        ],
        0,
    ));
    assert_eq!(push["received"], 0);
    assert_eq!(push["sent"], 50);
    assert_eq!(len(&b), total);
    assert!(len(&b) > b_before);
    // Text output for people, and the last events the push released on B come back.
    let text = run_ok(&["sync", "--dir", p(&a), "--peer-cmd", &peer], 0);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.starts_with("sent 0 events, received "), "{text}");
    assert_eq!(heads(&a), heads(&b));
}

/// A proxy in front of a real `serve` process: passes bytes both ways and, once `limit`
/// bytes went from the server to the client, kills the server and cuts the connection.
fn killing_proxy(mut server: Server, limit: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut client, _) = listener.accept().unwrap();
        let mut upstream = TcpStream::connect(&server.addr).unwrap();
        let (mut c_read, mut u_write) =
            (client.try_clone().unwrap(), upstream.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut c_read, &mut u_write);
        });
        let mut passed = 0;
        let mut buf = vec![0u8; 64 << 10];
        while passed < limit {
            let n = match upstream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n.min(limit - passed),
            };
            if client.write_all(&buf[..n]).is_err() {
                break;
            }
            passed += n;
        }
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        let _ = client.shutdown(std::net::Shutdown::Both);
    });
    addr
}

#[test]
fn a_peer_killed_mid_transfer_keeps_what_was_admitted_and_a_rerun_converges() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = log_lines(tmp.path(), 5000);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    ledger_of(&b, &lines.iter().collect::<Vec<_>>());
    ledger_of(&a, &lines.iter().take(1).collect::<Vec<_>>());
    // The serving process is killed once part of its output went through: the first
    // events frame (2000 events) arrives whole, the second is cut.
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    let proxy = killing_proxy(Server::start(&b), bytes * 3 / 5);
    let failed = run_ok(
        &["sync", "--dir", p(&a), "--peer", &proxy, "--timeout", "20"],
        2,
    );
    let err = String::from_utf8_lossy(&failed.stderr).into_owned();
    assert!(err.contains("disconnected"), "{err}");
    let kept = len(&a);
    assert!(kept > 1 && kept < lines.len(), "kept {kept}");
    let server = Server::start(&b);
    let rerun = json(&run_ok(
        &["sync", "--dir", p(&a), "--peer", &server.addr, "--json"],
        0,
    ));
    assert_eq!(
        rerun["received"].as_u64().unwrap() as usize,
        lines.len() - kept
    );
    drop(server);
    assert_eq!(heads(&a), heads(&b));
}

/// A fake peer: accepts one connection, reads the client's hello, writes `reply`, then
/// waits for the client to give up.
fn fake_peer(reply: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut header = [0u8; 6];
        s.read_exact(&mut header).unwrap();
        let n = u32::from_be_bytes([header[2], header[3], header[4], header[5]]) as usize;
        let mut payload = vec![0u8; n];
        s.read_exact(&mut payload).unwrap();
        let _ = s.write_all(&reply);
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    });
    addr
}

/// Runs `sync --dir DIR ARGS…`, which must fail (exit 2) saying `needle`.
fn sync_fails(dir: &Path, args: &[&str], needle: &str) {
    let mut all = vec!["sync", "--dir", p(dir)];
    all.extend_from_slice(args);
    let o = run_ok(&all, 2);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains(needle), "wanted {needle:?} in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn sync_fails_with(dir: &Path, addr: &str, needle: &str) {
    sync_fails(dir, &["--peer", addr, "--timeout", "2"], needle);
}

#[test]
fn a_malicious_or_silent_peer_gets_a_clear_error_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, lines) = ledger_of_generated(tmp.path(), 10);
    let before = heads(&a);
    // Oversized frame: announced, never allocated.
    sync_fails_with(
        &a,
        &fake_peer(vec![1, 1, 0xFF, 0xFF, 0xFF, 0xFF]),
        "over the",
    );
    // Unknown version.
    sync_fails_with(
        &a,
        &fake_peer(vec![2, 1, 0, 0, 0, 4, 0, 0, 0, 0]),
        "version 2",
    );
    // Endless heads: a hello announcing more ids than any frame may hold.
    let mut endless = vec![1, 1, 0, 0, 0, 4];
    endless.extend_from_slice(&u32::MAX.to_be_bytes());
    sync_fails_with(&a, &fake_peer(endless), "ids in one frame");
    // Garbage.
    sync_fails_with(
        &a,
        &fake_peer(b"GET / HTTP/1.1\r\n\r\n".to_vec()),
        "protocol",
    );
    // A hello, then silence: the timeout ends it.
    sync_fails_with(&a, &fake_peer(EMPTY_HELLO.to_vec()), "timed out");
    // Lies about its heads: advertises one it never sends.
    let mut liar = vec![1, 1, 0, 0, 0, 37, 0, 0, 0, 1, 2];
    liar.extend_from_slice(&[7u8; 32]);
    liar.extend_from_slice(&[1, 3, 0, 0, 0, 2, 0, 0]); // answers the have query (11 ids) "no"…
    liar.extend_from_slice(&[1, 6, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]); // …and sends nothing
    sync_fails_with(&a, &fake_peer(liar), "did not deliver");
    // Floods: answers "yes" to every have query, then repeats an event A holds 12 times
    // (A holds 11).
    let mut flood = vec![1, 1, 0, 0, 0, 37, 0, 0, 0, 1, 2];
    flood.extend_from_slice(&[7u8; 32]);
    flood.extend_from_slice(&[1, 3, 0, 0, 0, 2, 0xFF, 0x07]);
    let event = lines[0].as_bytes();
    let mut payload = 12u32.to_be_bytes().to_vec();
    for _ in 0..12 {
        payload.extend_from_slice(&(event.len() as u32).to_be_bytes());
        payload.extend_from_slice(event);
    }
    flood.extend_from_slice(&[1, 5]);
    flood.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    flood.extend_from_slice(&payload);
    sync_fails_with(&a, &fake_peer(flood), "repeats itself");
    assert_eq!(heads(&a), before);
}

/// A hello with no heads: the frame an empty ledger opens with.
const EMPTY_HELLO: [u8; 10] = [1, 1, 0, 0, 0, 4, 0, 0, 0, 0];

#[test]
fn a_peer_command_that_stops_reading_is_timed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = ledger_of_generated(tmp.path(), 3000);
    // The peer says hello (no heads), then sleeps without reading its stdin: the push of
    // 3,000 events (over a megabyte) fills the pipe, and the write timeout ends the session
    // (without it, the push would wait for the peer to exit and then fail as a disconnect).
    let hello: String = EMPTY_HELLO.iter().map(|b| format!("\\{b:03o}")).collect();
    let peer = format!("printf '{hello}'; exec sleep 60");
    sync_fails(
        &a,
        &["--peer-cmd", &peer, "--push-only", "--timeout", "2"],
        "timed out",
    );
}

/// Processes whose command line holds `marker`.
fn processes_naming(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let cmdline = std::fs::read(e.ok()?.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains(marker).then_some(text)
        })
        .collect()
}

#[test]
fn a_peer_command_started_before_the_ledger_opens_is_ended_when_the_open_fails() {
    let tmp = tempfile::tempdir().unwrap();
    // The peer command starts before the ledger opens; the ledger cannot open (its
    // directory is a file), so the command must not outlive the sync. It still exists
    // under the marker, as `sh` or the `sleep` it became, unless it was killed and reaped.
    let not_a_dir = tmp.path().join("file");
    std::fs::write(&not_a_dir, "not a ledger").unwrap();
    let marker = format!("sleep 59.{}", std::process::id());
    // Not waiting for the output's end: a command left running would hold it open.
    let status = bin()
        .args(["sync", "--dir", p(&not_a_dir), "--peer-cmd"])
        .arg(format!("exec {marker}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    assert_eq!(processes_naming(&marker), Vec::<String>::new());
}

#[test]
fn a_peer_that_trickles_bytes_is_cut_off_at_the_session_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = ledger_of_generated(tmp.path(), 10);
    // Announces a 1 MiB hello, then sends one byte of it every 100 ms: each read is well
    // within the 5 s timeout, so only the 1 s session limit ends it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = s.write_all(&[1, 1, 0, 0x10, 0, 0, 0, 0]);
        for _ in 0..600 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if s.write_all(&[0]).is_err() {
                return;
            }
        }
    });
    sync_fails(
        &a,
        &["--peer", &addr, "--timeout", "5", "--session-limit", "1"],
        "time limit",
    );
}

#[test]
fn serve_answers_a_bad_client_with_an_error_frame_and_keeps_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, _) = divergent(tmp.path());
    let server = Server::start(&b);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.write_all(&[9, 1, 0, 0, 0, 0]).unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).unwrap();
    assert_eq!(reply.get(..2), Some(&[1u8, 8][..]), "an error frame");
    assert!(String::from_utf8_lossy(&reply).contains("version 9"));
    // Several clients at once, then a normal sync still works.
    let idle: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    run_ok(&["sync", "--dir", p(&a), "--peer", &server.addr], 0);
    drop(idle);
    drop(server);
    assert_eq!(heads(&a), heads(&b));
}

/// Admitted ids of a ledger.
fn ids(ledger: &Ledger) -> BTreeSet<EventId> {
    ledger.iter().map(|e| e.unwrap().id()).collect()
}

/// How one end of a library session runs: reading and writing one stream in turn
/// (`Ledger::sync`, `Ledger::serve_session`), or with the socket's two ends apart, both
/// directions at once (`Ledger::sync_duplex`, `Ledger::serve_duplex`).
#[derive(Clone, Copy, Debug)]
enum End {
    InTurn,
    AtOnce,
}

/// Every pairing of a client's end with a server's.
const PAIRINGS: [(End, End); 4] = [
    (End::InTurn, End::InTurn),
    (End::AtOnce, End::InTurn),
    (End::InTurn, End::AtOnce),
    (End::AtOnce, End::AtOnce),
];

/// One library session over loopback TCP, the client's and the server's ends run as `ends`
/// says; the client's report and the server's.
fn session_reports(client: &Ledger, server: &Ledger, ends: (End, End)) -> (SyncReport, SyncReport) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::scope(|scope| {
        let served = scope.spawn(|| {
            let (mut s, _) = listener.accept().unwrap();
            match ends.1 {
                End::InTurn => server.serve_session(&mut s),
                End::AtOnce => {
                    let halves = Duplex {
                        reader: &s,
                        writer: &s,
                    };
                    server.serve_duplex(halves, Duration::from_secs(60), false)
                }
            }
            .unwrap()
        });
        let mut s = TcpStream::connect(addr).unwrap();
        let options = SyncOptions::default();
        let report = match ends.0 {
            End::InTurn => client.sync(&mut s, &options),
            End::AtOnce => client.sync_duplex(
                Duplex {
                    reader: &s,
                    writer: &s,
                },
                &options,
            ),
        }
        .unwrap();
        drop(s);
        (report, served.join().unwrap())
    })
}

/// Events one session moved, both ways.
fn session(client: &Ledger, server: &Ledger, ends: (End, End)) -> u64 {
    let (report, _) = session_reports(client, server, ends);
    report.sent + report.received
}

/// A realm DAG of `writers` writers (payloads of `text` bytes) after its first `shared`
/// events, the realm's creation among them, and those events signed.
fn shared_dag(seed: u64, writers: usize, text: usize, shared: usize) -> (RealmDag, Vec<Signed>) {
    let (mut dag, realm) = RealmDag::new(seed, writers, text).unwrap();
    let mut events = vec![realm];
    events.extend(next_events(&mut dag, shared - 1));
    (dag, events)
}

/// The next `n` events of `dag`, signed.
fn next_events(dag: &mut RealmDag, n: usize) -> Vec<Signed> {
    sign_all(&dag.plan(n).unwrap(), 2).unwrap()
}

/// A ledger at `dir` holding `events`, appended in order (some may wait as pending).
fn ledger_holding<'e>(dir: &Path, events: impl IntoIterator<Item = &'e Signed>) -> Ledger {
    let ledger = Ledger::open(dir).unwrap();
    for event in events {
        ledger.append(event.bytes()).unwrap();
    }
    ledger
}

/// Tails long enough for several have rounds, the later ones answered partly `yes` (the
/// client then recomputes what the common set leaves uncovered): each side receives exactly
/// the other's tail, in the rounds the doubling queries take, and a second session moves
/// nothing; with the two directions in turn or at once at either end.
#[test]
fn long_divergent_tails_move_exactly_the_symmetric_difference() {
    let (dag, shared) = shared_dag(5, 6, 32, 600);
    let tail_a = next_events(&mut dag.fork(1), 300);
    let tail_b = next_events(&mut dag.fork(2), 500);
    for ends in PAIRINGS {
        let tmp = tempfile::tempdir().unwrap();
        let a = ledger_holding(&tmp.path().join("a"), shared.iter().chain(&tail_a));
        let b = ledger_holding(&tmp.path().join("b"), shared.iter().chain(&tail_b));
        let (report, served) = session_reports(&a, &b, ends);
        assert_eq!((report.sent, report.received), (300, 500), "{ends:?}");
        assert_eq!((served.sent, served.received), (500, 300), "{ends:?}");
        assert_eq!((report.admitted, served.admitted), (500, 300), "{ends:?}");
        assert_eq!(
            (report.bytes_sent, report.bytes_received),
            (served.bytes_received, served.bytes_sent),
            "{ends:?}"
        );
        // Hello, have queries of 32, 64, 128 and 256 ids (the last reaching past A's
        // 300-event tail into the shared events), pull, push.
        assert_eq!(report.rounds, 7, "{ends:?}: {report:?}");
        assert_eq!(session(&a, &b, ends), 0, "{ends:?}");
        assert_eq!(a.heads(), b.heads());
        assert_eq!(ids(&a).len(), 600 + 300 + 500);
        assert_eq!(ids(&a), ids(&b));
    }
}

/// The client holds events of its own and events waiting (pending) for the server's tail.
/// The pull brings that tail and releases them; with the directions at once, the push
/// beside the pull was chosen before it, so the released events go in a push round after
/// it. Either way one session moves all of them and a second moves nothing.
#[test]
fn events_a_pull_releases_here_are_pushed_in_the_same_session() {
    let (dag, shared) = shared_dag(11, 3, 16, 31);
    let mut theirs = dag.fork(1);
    let tail_server = next_events(&mut theirs, 12);
    let waiting = next_events(&mut theirs, 6);
    let tail_client = next_events(&mut dag.fork(2), 8);
    for ends in PAIRINGS {
        let tmp = tempfile::tempdir().unwrap();
        let server = ledger_holding(
            &tmp.path().join("server"),
            shared.iter().chain(&tail_server),
        );
        let client = ledger_holding(
            &tmp.path().join("client"),
            shared.iter().chain(&tail_client).chain(&waiting),
        );
        assert!(waiting.iter().all(|e| client.is_pending(&e.id())));
        let (report, _) = session_reports(&client, &server, ends);
        assert_eq!((report.sent, report.received), (8 + 6, 12), "{ends:?}");
        assert!(waiting.iter().all(|e| server.contains(&e.id())), "{ends:?}");
        assert_eq!(session(&client, &server, ends), 0, "{ends:?}");
        assert_eq!(ids(&client).len(), 31 + 12 + 6 + 8);
        assert_eq!(ids(&client), ids(&server));
    }
}

/// A peer scripted to take the client's whole push before it sends a byte of what the
/// client pulls (`Ledger::serve_session` never does that, but a peer may): a client with
/// its socket's ends apart pushes without waiting for the pull, so the session completes;
/// a client reading and writing in turn waits for the pull, and times out.
#[test]
fn a_client_with_the_ends_apart_pushes_without_waiting_for_its_pull() {
    use akledger::sync::frame::{read_frame, write_frame, Events, Frame};
    let (dag, shared) = shared_dag(9, 4, 16, 21);
    let tail_a = next_events(&mut dag.fork(1), 3);
    let tail_b = next_events(&mut dag.fork(2), 2);
    // The scripted peer answers from a ledger holding the shared events and its own tail.
    let tmp = tempfile::tempdir().unwrap();
    let peer = ledger_holding(&tmp.path().join("peer"), shared.iter().chain(&tail_b));
    let script = |s: &TcpStream| -> Option<Vec<EventId>> {
        let (mut r, mut w) = (s, s);
        let mut next = || {
            read_frame(&mut r, usize::MAX)
                .ok()
                .flatten()
                .map(|(f, _)| f)
        };
        let Some(Frame::Hello(_)) = next() else {
            return None;
        };
        write_frame(&mut w, &Frame::Hello(peer.heads())).ok()?;
        loop {
            match next()? {
                Frame::Have(ids) => {
                    let bits = ids.iter().map(|id| peer.contains(id)).collect();
                    write_frame(&mut w, &Frame::Known(bits)).ok()?;
                }
                Frame::Pull(_) => break,
                _ => return None,
            }
        }
        // The client's push, whole, before anything it pulls.
        let mut pushed = Vec::new();
        loop {
            match next()? {
                Frame::Events(events) => pushed.extend(
                    events
                        .iter()
                        .map(|e| akledger::Event::parse(e).unwrap().id()),
                ),
                Frame::Done(n) if n == pushed.len() as u64 => break,
                _ => return None,
            }
        }
        let mine = Events::of(tail_b.iter().map(|e| e.bytes()));
        write_frame(&mut w, &Frame::Events(mine)).ok()?;
        write_frame(&mut w, &Frame::Done(tail_b.len() as u64)).ok()?;
        write_frame(&mut w, &Frame::Done(0)).ok()?;
        matches!(next()?, Frame::Bye).then_some(pushed)
    };
    let options = SyncOptions {
        timeout: Duration::from_millis(500),
        ..SyncOptions::default()
    };
    for end in [End::AtOnce, End::InTurn] {
        let tmp = tempfile::tempdir().unwrap();
        let client = ledger_holding(&tmp.path().join("client"), shared.iter().chain(&tail_a));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (synced, pushed) = std::thread::scope(|scope| {
            let peer = scope.spawn(|| {
                let (s, _) = listener.accept().unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                script(&s)
            });
            let mut s = TcpStream::connect(addr).unwrap();
            options.apply_to(&s).unwrap();
            let synced = match end {
                End::AtOnce => client.sync_duplex(
                    Duplex {
                        reader: &s,
                        writer: &s,
                    },
                    &options,
                ),
                End::InTurn => client.sync(&mut s, &options),
            };
            drop(s);
            (synced, peer.join().unwrap())
        });
        match end {
            End::AtOnce => {
                let report = synced.unwrap();
                assert_eq!((report.sent, report.received), (3, 2));
                let sent: Vec<EventId> = tail_a.iter().map(|e| e.id()).collect();
                assert_eq!(pushed, Some(sent));
                assert!(tail_b.iter().all(|e| client.contains(&e.id())));
            }
            End::InTurn => {
                assert!(matches!(synced, Err(SyncError::Timeout)), "{synced:?}");
                assert_eq!(pushed, None);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Two random subsets of one DAG (fed in random order, so some events wait as pending)
    /// converge to the same admitted set — every event of the union whose ancestors are all
    /// in the union — with equal heads.
    #[test]
    fn random_subsets_converge_to_the_union(
        seed in 0u64..1000,
        picks in proptest::collection::vec(0u8..4, 41),
        pairing in 0usize..4,
    ) {
        let events = realm_dag(seed, 40, 3, 8).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let a = Ledger::open(tmp.path().join("a")).unwrap();
        let b = Ledger::open(tmp.path().join("b")).unwrap();
        let mut union = Vec::new();
        for (i, (event, pick)) in events.iter().zip(&picks).enumerate() {
            // 0: neither, 1: A, 2: B, 3: both; the realm create goes to both.
            let pick = if i == 0 { 3 } else { *pick };
            if pick & 1 == 1 { a.append(event.bytes()).unwrap(); }
            if pick & 2 == 2 { b.append(event.bytes()).unwrap(); }
            if pick != 0 { union.push(event); }
        }
        // The oracle: the union's events whose dependencies are all admissible (causal
        // order makes one pass enough).
        let mut expected = BTreeSet::new();
        for event in &union {
            if event.dependencies().iter().all(|d| expected.contains(d)) {
                expected.insert(event.id());
            }
        }
        // One session converges (pending chains alternating between the ledgers included);
        // a second moves nothing.
        let ends = PAIRINGS[pairing];
        session(&a, &b, ends);
        prop_assert_eq!(session(&a, &b, ends), 0, "a second session still moved events");
        prop_assert_eq!(ids(&a), expected.clone());
        prop_assert_eq!(ids(&b), expected);
        prop_assert_eq!(a.heads(), b.heads());
    }
}

#[test]
fn a_peer_beyond_the_session_limit_is_told_the_server_is_busy() {
    let tmp = tempfile::tempdir().unwrap();
    let (served, mine) = (tmp.path().join("served"), tmp.path().join("mine"));
    run_ok(&["init", "--dir", p(&served)], 0);
    run_ok(&["init", "--dir", p(&mine)], 0);
    let server = Server::start(&served);
    // Every session taken by a peer that says nothing.
    let silent: Vec<TcpStream> = (0..akledger::limits::MAX_SYNC_SESSIONS)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let out = run(&["sync", "--dir", p(&mine), "--peer", &server.addr]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sync peer refused: busy"),
        "{}",
        stderr(&out)
    );
    // Once they leave, a session is served again.
    drop(silent);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let out = run(&["sync", "--dir", p(&mine), "--peer", &server.addr]);
        if out.status.success() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", stderr(&out));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A realm created by a web principal, signed by a key only a keyring can vouch for, in the
/// ledger `mine` (authorized there); returns the `keys add` arguments that authorize it.
fn realm_by_a_web_principal(tmp: &Path, mine: &Path) -> Vec<String> {
    use akledger::{ActorId, DidCoreId, EventBuilder, ScopeRef, Timestamp};
    let key_file = tmp.join("writer.key");
    let did_key = json(&run_ok(&["keygen", "--out", p(&key_file), "--json"], 0))["did_key"]
        .as_str()
        .unwrap()
        .to_string();
    let key = akledger::key_file::read(&key_file).unwrap();
    let principal = "ak:did_core:web:example.org";
    let actor = ActorId::Service {
        service_id: DidCoreId::parse(principal).unwrap(),
    };
    let at = Timestamp::from_millis(akledger::workload::EPOCH_MILLIS).unwrap();
    let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, actor, at)
        .sign(&key)
        .unwrap();
    let log = tmp.join("realm.jsonl");
    std::fs::write(&log, [realm.bytes(), b"\n"].concat()).unwrap();
    let authorize: Vec<String> = [
        "keys",
        "add",
        "--principal",
        principal,
        "--did-key",
        &did_key,
    ]
    .map(String::from)
    .to_vec();
    let mut here = authorize.clone();
    here.extend(["--dir".to_string(), p(mine).to_string()]);
    run_ok(&["init", "--dir", p(mine)], 0);
    run_ok(&here.iter().map(String::as_str).collect::<Vec<_>>(), 0);
    run_ok(&["import", "--dir", p(mine), p(&log)], 0);
    authorize
}

#[test]
fn events_the_server_refuses_are_reported_with_their_code_and_sync_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let (served, mine) = (tmp.path().join("served"), tmp.path().join("mine"));
    run_ok(&["init", "--dir", p(&served)], 0);
    realm_by_a_web_principal(tmp.path(), &mine);
    let server = Server::start(&served);
    // Twice: a refused event is never counted as delivered, so a rerun says it again.
    for _ in 0..2 {
        let out = run_ok(&["sync", "--dir", p(&mine), "--peer", &server.addr], 1);
        let said = stdout(&out);
        assert!(
            said.contains("the peer refused 1 of the events sent"),
            "{said}"
        );
        let out = run_ok(
            &["sync", "--dir", p(&mine), "--peer", &server.addr, "--json"],
            1,
        );
        let report = json(&out);
        let refused = report["refused_by_peer"].as_array().unwrap();
        assert_eq!(refused.len(), 1, "{report}");
        assert!(refused[0]["code"].as_str().unwrap().len() > 3, "{report}");
    }
    drop(server);
    assert_eq!(len(&served), 0);
}

#[test]
fn serve_takes_keys_added_to_its_keyring_while_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (served, mine) = (tmp.path().join("served"), tmp.path().join("mine"));
    run_ok(&["init", "--dir", p(&served)], 0);
    let authorize = realm_by_a_web_principal(tmp.path(), &mine);
    // The server starts without the authorization; it is added beside it, then pushed to.
    let said = tmp.path().join("serve.log");
    let server = Server::start_with(&served, &[], std::fs::File::create(&said).unwrap().into());
    let mut there = authorize.clone();
    there.extend(["--dir".to_string(), p(&served).to_string()]);
    run_ok(&there.iter().map(String::as_str).collect::<Vec<_>>(), 0);
    let out = run_ok(&["sync", "--dir", p(&mine), "--peer", &server.addr], 0);
    drop(server);
    let said = std::fs::read_to_string(&said).unwrap();
    assert!(said.contains("keyring reloaded"), "{said}");
    assert_eq!(len(&served), 1, "{said} {}", stderr(&out));
}

#[test]
fn the_library_serve_takes_keys_written_between_the_open_and_the_start_of_serving() {
    use akledger::ledger::keyring_file;
    use akledger::sync::{stop_serving, ServeEvent, ServeOptions};
    use akledger::{ActorId, Config, DidCoreId, EventBuilder, Keyring, ScopeRef, Timestamp};
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;
    let tmp = tempfile::tempdir().unwrap();
    let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let principal = DidCoreId::parse("ak:did_core:web:example.org").unwrap();
    let mut authorized = Keyring::new();
    authorized
        .authorize(principal.clone(), key.verifying_key())
        .unwrap();
    let actor = ActorId::Service {
        service_id: principal,
    };
    let at = Timestamp::from_millis(akledger::workload::EPOCH_MILLIS).unwrap();
    let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, actor, at)
        .sign(&key)
        .unwrap();
    let client =
        Ledger::open_with(Config::new(tmp.path().join("c")).keyring(authorized.clone())).unwrap();
    client.append(realm.bytes()).unwrap();
    // The server opens without the authorization; it reaches the file before serving starts.
    let server = Ledger::open(tmp.path().join("s")).unwrap();
    let file = tmp.path().join("keyring.json");
    keyring_file::save(&file, &authorized).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    let options = ServeOptions {
        keyring_file: Some(file),
        ..ServeOptions::default()
    };
    let heard = Mutex::new(Vec::new());
    // The server is stopped before anything is asserted: a failure must not leave it serving.
    let pushed = std::thread::scope(|scope| {
        let served = scope.spawn(|| {
            server.serve(listener, &options, &stop, |e| {
                if let ServeEvent::KeyringReloaded(added) = e {
                    heard.lock().unwrap().push(added.authorizations);
                }
            })
        });
        let pushed = client.sync_tcp(addr, &SyncOptions::default());
        stop_serving(&stop, addr);
        served.join().unwrap().unwrap();
        pushed.unwrap()
    });
    assert_eq!(
        (pushed.sent, pushed.refused_by_peer.len()),
        (1, 0),
        "{pushed:?}"
    );
    assert_eq!(server.len(), 1);
    assert_eq!(*heard.lock().unwrap(), vec![1]);
}

/// Two new ledgers in `tmp`: `mine`, returned, and one served with a per-read timeout of
/// `timeout` seconds and a long session limit.
fn two_ledgers_one_served(tmp: &Path, timeout: &str) -> (std::path::PathBuf, Server) {
    let (served, mine) = (tmp.join("served"), tmp.join("mine"));
    run_ok(&["init", "--dir", p(&served)], 0);
    run_ok(&["init", "--dir", p(&mine)], 0);
    let server = Server::start_with(
        &served,
        &["--timeout", timeout, "--session-limit", "600"],
        Stdio::null(),
    );
    (mine, server)
}

#[test]
fn peers_trickling_bytes_to_hold_every_slot_are_cut_for_one_that_syncs() {
    let tmp = tempfile::tempdir().unwrap();
    let (mine, server) = two_ledgers_one_served(tmp.path(), "1");
    let addr = server.addr.clone();
    // 64 peers each announce a hello frame of 1000 bytes and send it a byte every 300 ms:
    // never silent for a whole timeout, never done.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = {
        let (addr, stop) = (addr.clone(), std::sync::Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut peers: Vec<TcpStream> = (0..akledger::limits::MAX_SYNC_SESSIONS)
                .map(|_| TcpStream::connect(&addr).unwrap())
                .collect();
            for peer in &mut peers {
                let _ = peer.write_all(&[1, 1, 0, 0, 3, 232]);
            }
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for peer in &mut peers {
                    let _ = peer.write_all(&[0]);
                }
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
        })
    };
    // A real peer gets a session within a few seconds (the slowest trickler is cut).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let out = run(&["sync", "--dir", p(&mine), "--peer", &addr]);
        if out.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "locked out: {}",
            stderr(&out)
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    trickle.join().unwrap();
}

/// `VmHWM` and `VmRSS` of process `pid`, in MiB.
fn memory_mib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib >> 10
    };
    (field("VmHWM:"), field("VmRSS:"))
}

#[test]
fn hostile_sessions_hold_a_bounded_total_of_memory_and_give_it_back() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc to read a process's memory from");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (mine, server) = two_ledgers_one_served(tmp.path(), "5");
    let pid = server.child.id();
    let (peak_before, _) = memory_mib(pid);
    // Each peer says hello, pushes one frame of sixteen 1 MB junk events (near the 16 MiB
    // frame limit), and stalls: a session that admits the batch holds it until the peer
    // goes on or goes away.
    const PEERS: usize = 100;
    let mut events = Vec::new();
    events.extend_from_slice(&16u32.to_be_bytes());
    for _ in 0..16 {
        events.extend_from_slice(&1_000_000u32.to_be_bytes());
        events.extend(std::iter::repeat_n(b'x', 1_000_000));
    }
    let mut frames = vec![1, 1, 0, 0, 0, 4, 0, 0, 0, 0, 1, 5];
    frames.extend_from_slice(&(events.len() as u32).to_be_bytes());
    frames.extend_from_slice(&events);
    let frames = std::sync::Arc::new(frames);
    let peers: Vec<_> = (0..PEERS)
        .map(|_| {
            let (addr, frames) = (server.addr.clone(), std::sync::Arc::clone(&frames));
            std::thread::spawn(move || {
                let mut peer = TcpStream::connect(&addr).unwrap();
                peer.set_write_timeout(Some(std::time::Duration::from_secs(40)))
                    .unwrap();
                let _ = peer.write_all(&frames);
                std::thread::sleep(std::time::Duration::from_millis(1500));
            })
        })
        .collect();
    for peer in peers {
        peer.join().unwrap();
    }
    // Every peer has gone; an honest peer syncs, and what the sessions held is given back.
    run_ok(&["sync", "--dir", p(&mine), "--peer", &server.addr], 0);
    let (peak, now) = memory_mib(pid);
    eprintln!(
        "{PEERS} hostile sessions of 16 MB: serve peaked at {peak} MiB (from {peak_before}), {now} MiB after"
    );
    // Live bytes stay within the budget; the allocator's per-thread arenas keep some of
    // what was freed, which the bounds allow for.
    let budget_mib = akledger::limits::MAX_SYNC_HELD_BYTES >> 20;
    assert!(
        peak < peak_before + 4 * budget_mib,
        "serve peaked at {peak} MiB with a {budget_mib} MiB budget of received frames"
    );
    assert!(
        now < peak_before + 2 * budget_mib,
        "serve kept {now} MiB after the sessions ended"
    );
}

/// `serve` stops cleanly on SIGTERM and on SIGINT: it lets the running sessions end,
/// closes the ledger (the next open recovers nothing) and exits 0, saying what it served.
#[test]
fn serve_stops_cleanly_on_sigterm_and_sigint() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, _) = divergent(tmp.path());
    for signal in ["-TERM", "-INT"] {
        let server = Server::start_with(&b, &[], Stdio::piped());
        run_ok(&["sync", "--dir", p(&a), "--peer", &server.addr], 0);
        let out = server.signal(signal);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{signal}: {said}");
        assert!(
            said.contains("stopped: 1 sessions served"),
            "{signal}: {said}"
        );
        let next = run_ok(&["heads", "--dir", p(&b)], 0);
        assert!(
            stderr(&next).is_empty(),
            "{signal}: the next open recovered: {}",
            stderr(&next)
        );
    }
}

/// `serve --read-only` lets peers pull and refuses what they push, saying how to sync
/// with it; nothing a peer pushes reaches its ledger.
#[test]
fn a_read_only_server_serves_pulls_and_refuses_pushes() {
    let tmp = tempfile::tempdir().unwrap();
    // `served` has a tail `mine` lacks; `mine`'s own tail waits for it (pending), so once
    // pulled it has events to push.
    let (served, mine, _) = divergent(tmp.path());
    let before_served = ids(&Ledger::open(&served).unwrap());
    let server = Server::start_with(&served, &["--read-only"], Stdio::null());
    let pushed = run(&["sync", "--dir", p(&mine), "--peer", &server.addr]);
    assert_eq!(pushed.status.code(), Some(2));
    let said = stderr(&pushed);
    assert!(
        said.contains("read-only") && said.contains("--pull-only"),
        "{said}"
    );
    run_ok(
        &[
            "sync",
            "--dir",
            p(&mine),
            "--peer",
            &server.addr,
            "--pull-only",
        ],
        0,
    );
    drop(server);
    let (after_served, after_mine) = (
        ids(&Ledger::open(&served).unwrap()),
        ids(&Ledger::open(&mine).unwrap()),
    );
    assert_eq!(
        after_served, before_served,
        "nothing pushed reached the read-only server"
    );
    assert!(after_mine.is_superset(&before_served));
    assert!(
        after_mine.len() > after_served.len(),
        "mine had events to push"
    );
}

/// A server that takes events and listens beyond loopback says so on start; with
/// `--read-only` it does not.
#[test]
fn serving_beyond_loopback_without_read_only_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, b, _) = divergent(tmp.path());
    for (args, warns) in [(&[][..], true), (&["--read-only"][..], false)] {
        let server = Server::listening(&b, "0.0.0.0:0", args, Stdio::piped());
        let out = server.signal("-TERM");
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{said}");
        assert_eq!(said.contains("beyond loopback"), warns, "{args:?}: {said}");
    }
}

/// The library's server and client ends: `Ledger::serve` on a listener with default
/// options serves `Ledger::sync_tcp`, and returns what it served once stopped; a
/// read-only server refuses a client's push, and admits none of it.
#[test]
fn the_library_serves_syncs_over_tcp_and_stops_cleanly() {
    use akledger::sync::{stop_serving, ServeOptions};
    use std::sync::atomic::AtomicBool;
    let events = realm_dag(7, 40, 3, 8).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ledger = |name: &str, n: usize| {
        let l = Ledger::open(tmp.path().join(name)).unwrap();
        for e in events.iter().take(n) {
            l.append(e.bytes()).unwrap();
        }
        l
    };
    for read_only in [false, true] {
        let (server, client) = (
            ledger(&format!("s{read_only}"), 30),
            ledger(&format!("c{read_only}"), 20),
        );
        let more = ledger(&format!("m{read_only}"), 40);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = AtomicBool::new(false);
        let options = ServeOptions {
            read_only,
            ..ServeOptions::default()
        };
        let report = std::thread::scope(|scope| {
            let served = scope.spawn(|| server.serve(listener, &options, &stop, |_| {}).unwrap());
            // A client behind pulls what it lacks; a client ahead pushes, unless the server
            // is read-only. The server is stopped before anything is asserted.
            let pulled = client.sync_tcp(addr, &SyncOptions::default());
            let pushed = more.sync_tcp(addr, &SyncOptions::default());
            stop_serving(&stop, addr);
            (served.join().unwrap(), pulled, pushed)
        });
        let (report, pulled, pushed) = report;
        let pulled = pulled.unwrap();
        assert_eq!((pulled.received, pulled.sent), (10, 0));
        match (read_only, pushed) {
            (false, Ok(r)) => assert_eq!(r.sent, 10),
            (true, Err(akledger::sync::SyncError::Refused(why))) => {
                assert!(why.contains("read-only"), "{why}")
            }
            (_, other) => panic!("read_only {read_only}: {other:?}"),
        }
        assert_eq!(report.sessions, 2);
        assert_eq!(report.failed, u64::from(read_only));
        assert_eq!(server.len(), if read_only { 30 } else { 40 });
        assert_eq!(client.len(), 30);
    }
}
