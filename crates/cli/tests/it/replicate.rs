//! `akledger replicate` against a real `nats-server` (JetStream, loopback port, temporary
//! store), with real processes: three ledgers holding disjoint parts of one log converge
//! through `--once` rounds; a follower killed with SIGKILL and restarted loses and
//! duplicates nothing; the server killed and restarted mid-follow loses nothing; forged
//! messages a stranger publishes straight to the stream are rejected by every ledger and
//! stop nothing. Without `nats-server` installed each test says it is skipped and returns.

use akledger_testkit as common;

use crate::support::*;
use common::nats::{NatsServer, PATIENCE};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use akledger::{Event, Unverified};
use akledger_replicate::limits::{
    MESSAGE_BYTES, MESSAGE_EVENTS, REPLICATE_BATCH_BYTES, REPLICATE_BATCH_EVENTS,
};
use akledger_replicate::message::Packed;
use akledger_replicate::subject::subject_of;

/// A server, a scratch directory and a generated log of `events` notes (and their realm).
struct World {
    server: NatsServer,
    tmp: tempfile::TempDir,
    lines: Vec<String>,
}

impl World {
    /// `None` (the test is skipped) without `nats-server`.
    fn new(test: &str, events: usize) -> Option<World> {
        let server = NatsServer::start(test)?;
        let tmp = tempfile::tempdir().unwrap();
        let lines = log_lines(tmp.path(), events);
        Some(World { server, tmp, lines })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// A ledger `name` holding the lines `range` of the log.
    fn ledger(&self, name: &str, range: std::ops::Range<usize>) -> PathBuf {
        let dir = self.path(name);
        ledger_of(&dir, &self.lines[range].iter().collect::<Vec<_>>());
        dir
    }

    /// `replicate --once --json` on `dir`.
    fn once_output(&self, dir: &Path) -> Output {
        let url = self.server.url();
        run(&[
            "replicate",
            "--dir",
            p(dir),
            "--nats",
            &url,
            "--once",
            "--json",
        ])
    }

    /// The same, requiring exit code `code`.
    fn once(&self, dir: &Path, code: i32) -> serde_json::Value {
        let out = self.once_output(dir);
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let report = json(&out);
        assert_eq!(report["type"], "akledger.replicate", "docs/json.md");
        report
    }

    /// The same until it succeeds (a server just restarted may refuse requests while it
    /// recovers its streams).
    fn once_when_ready(&self, dir: &Path) -> serde_json::Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let out = self.once_output(dir);
            if out.status.code() == Some(0) {
                return json(&out);
            }
            assert!(Instant::now() < deadline, "{}", stderr(&out));
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn n(report: &serde_json::Value, field: &str) -> u64 {
    report[field].as_u64().unwrap()
}

/// A `replicate --follow` process and the lines of its stderr.
struct Follower {
    child: Child,
    lines: Receiver<String>,
}

impl Follower {
    fn start(dir: &Path, server: &NatsServer) -> Follower {
        let mut child = bin()
            .args(["replicate", "--dir", p(dir), "--nats", &server.url()])
            .args(["--follow", "--json", "--timeout", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr: ChildStderr = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follower { child, lines }
    }

    /// Waits for a "caught up" line saying `admitted` events were admitted in this run.
    fn wait_caught_up(&self, admitted: u64) {
        let deadline = Instant::now() + PATIENCE;
        let needle = format!("admitted {admitted},");
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.lines.recv_timeout(left) else {
                panic!("the follower never caught up with {admitted}: {seen:#?}");
            };
            seen.push(line.clone());
            if line.contains("caught up") && line.contains(&needle) {
                eprintln!("follower: {seen:#?}");
                return;
            }
        }
    }

    /// SIGTERM; the process must stop cleanly and print its summary.
    fn stop(mut self) -> serde_json::Value {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(status.code(), Some(0), "stdout: {out}");
        serde_json::from_str(&out).unwrap()
    }
}

#[test]
fn three_ledgers_with_disjoint_parts_of_one_log_converge_through_once_rounds() {
    let Some(w) = World::new("three_ledgers", 1500) else {
        return;
    };
    let total = w.lines.len();
    // Disjoint thirds; the last third's events wait (pending) on the middle third's.
    let third = total / 3;
    let dirs = [
        w.ledger("a", 0..third),
        w.ledger("b", 2 * third..total),
        w.ledger("c", third..2 * third),
    ];
    let mut published = 0;
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(rounds <= 5, "not converged after 4 rounds");
        let mut moved = 0;
        for dir in &dirs {
            let report = w.once(dir, 0);
            published += n(&report, "published");
            moved += n(&report, "published") + n(&report, "admitted");
            assert_eq!(n(&report, "rejected"), 0);
        }
        if moved == 0 {
            break;
        }
    }
    // Every event reached the stream once, and every ledger holds all of them.
    assert_eq!(published as usize, total);
    for dir in &dirs {
        assert_eq!(len(dir), total);
        assert_eq!(heads(dir), heads(&dirs[0]));
    }
}

#[test]
fn a_follower_killed_and_restarted_loses_and_duplicates_nothing() {
    let Some(w) = World::new("follower_killed", 6000) else {
        return;
    };
    let total = w.lines.len();
    let (a, b) = (w.ledger("a", 0..total), w.path("b"));
    assert_eq!(n(&w.once(&a, 0), "published") as usize, total);
    // Killed while it consumes (several batches of 1000): whatever it committed stays,
    // whatever it did not acknowledge is delivered again.
    let mut follower = Follower::start(&b, &w.server);
    std::thread::sleep(Duration::from_millis(700));
    follower.child.kill().unwrap();
    follower.child.wait().unwrap();
    let kept = len(&b);
    eprintln!("the killed follower kept {kept} of {total} events");
    let rerun = w.once(&b, 0);
    eprintln!("the restarted follower: {rerun}");
    // Nothing lost: what the first run kept plus what the rerun admitted is everything; the
    // rerun saw again only what the killed run committed without acknowledging.
    assert_eq!(kept + n(&rerun, "admitted") as usize, total);
    assert_eq!(
        n(&rerun, "consumed"),
        n(&rerun, "admitted") + n(&rerun, "duplicates")
    );
    // The killed run acknowledged every batch but the last one it committed and the one in
    // flight: the rerun (the same durable consumer) sees no more than those again.
    assert!(n(&rerun, "duplicates") as usize <= kept.min(2 * REPLICATE_BATCH_EVENTS));
    assert_eq!(n(&rerun, "published"), 0);
    // Nothing duplicated: the ledger holds each event once and checks clean.
    assert_eq!(len(&b), total);
    let export = w.path("b-export.jsonl");
    run_ok(&["export", "--dir", p(&b), "--out", p(&export)], 0);
    assert_eq!(
        std::fs::read_to_string(&export).unwrap().lines().count(),
        total
    );
    assert_eq!(heads(&a), heads(&b));
}

#[test]
fn the_server_killed_and_restarted_mid_follow_loses_nothing() {
    let Some(mut w) = World::new("server_killed", 4000) else {
        return;
    };
    let total = w.lines.len();
    let half = total / 2;
    let (a, b) = (w.ledger("a", 0..half), w.path("b"));
    let follower = Follower::start(&b, &w.server);
    assert_eq!(n(&w.once(&a, 0), "published") as usize, half);
    // The server dies while the follower consumes, and comes back with its store.
    std::thread::sleep(Duration::from_millis(300));
    w.server.kill_and_restart();
    // More events arrive after the restart.
    w.ledger("a", half..total);
    assert_eq!(
        n(&w.once_when_ready(&a), "published") as usize,
        total - half
    );
    follower.wait_caught_up(total as u64);
    let summary = follower.stop();
    assert_eq!(n(&summary, "admitted") as usize, total);
    assert_eq!(n(&summary, "rejected"), 0);
    assert_eq!(len(&b), total);
    assert_eq!(heads(&a), heads(&b));
}

/// Speaks the plain NATS protocol to `server` as any client could: sends `CONNECT` (with
/// headers allowed) and `wire`, then reads lines until `done` says one ends it (a `-ERR`
/// fails the test); returns that line and the one after it.
fn plain_nats(server: &NatsServer, wire: &[u8], done: impl Fn(&str) -> bool) -> (String, String) {
    let mut tcp = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let mut all = b"CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n".to_vec();
    all.extend_from_slice(wire);
    tcp.write_all(&all).unwrap();
    let mut reader = BufReader::new(tcp);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "server hung up");
        assert!(!line.starts_with("-ERR"), "{line}");
        if done(&line) {
            let mut next = String::new();
            if !line.starts_with("PONG") {
                reader.read_line(&mut next).unwrap();
            }
            return (line, next);
        }
    }
}

/// Publishes `payloads` on `subject` (no JetStream acknowledgement asked) and waits until
/// the server read them.
fn stranger_publishes(server: &NatsServer, subject: &str, payloads: &[Vec<u8>]) {
    let mut wire = Vec::new();
    for payload in payloads {
        wire.extend_from_slice(format!("PUB {subject} {}\r\n", payload.len()).as_bytes());
        wire.extend_from_slice(payload);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"PING\r\n");
    plain_nats(server, &wire, |l| l.starts_with("PONG"));
}

#[test]
fn forged_messages_from_a_stranger_are_rejected_by_every_ledger_and_stop_nothing() {
    let Some(w) = World::new("forged", 300) else {
        return;
    };
    let total = w.lines.len();
    let note = &w.lines[1];
    let subject = subject_of(&Event::<Unverified>::parse(note.as_bytes()).unwrap());
    // A note with its text changed (its id no longer matches), one with its signature
    // changed, and bytes that are no event at all.
    let bad_id = note.replacen("xxxx", "yyyy", 1);
    assert_ne!(&bad_id, note);
    let jws_at = note.find("\"jws\":\"").unwrap() + 60;
    let mut bad_signature = note.clone().into_bytes();
    bad_signature[jws_at] = if bad_signature[jws_at] == b'A' {
        b'B'
    } else {
        b'A'
    };
    let forged = [bad_id.into_bytes(), bad_signature, b"not an event".to_vec()];
    let (b, c) = (w.path("b"), w.path("c"));
    // A first run makes the stream; the forgeries come first in it, the honest events after.
    assert_eq!(n(&w.once(&c, 0), "consumed"), 0);
    stranger_publishes(&w.server, &subject, &forged);
    let a = w.ledger("a", 0..total);
    let first = w.once(&a, 1);
    assert_eq!(n(&first, "published") as usize, total);
    assert_eq!(n(&first, "rejected"), 3);
    for dir in [&b, &c] {
        let report = w.once(dir, 1);
        assert_eq!(n(&report, "rejected"), 3);
        assert_eq!(n(&report, "admitted") as usize, total);
        assert_eq!(heads(dir), heads(&a));
    }
    // Acknowledged with the rest: never delivered again.
    for dir in [&a, &b, &c] {
        let again = w.once(dir, 0);
        assert_eq!((n(&again, "consumed"), n(&again, "rejected")), (0, 0));
    }
    // A message of empty lines holds no event: consumed alone, it stops nothing either.
    stranger_publishes(&w.server, &subject, &[b"\n\n".to_vec()]);
    for dir in [&a, &b, &c] {
        let again = w.once(dir, 0);
        assert_eq!((n(&again, "consumed"), n(&again, "rejected")), (0, 0));
    }
}

/// A realm and one event of its, the event `len` bytes long (payload tuned to it).
fn realm_with_an_event_of(len: usize) -> (String, String) {
    let mut payload = len - 2_000;
    for _ in 0..4 {
        let events = akledger::workload::realm_dag(77, 1, 1, payload).unwrap();
        let got = events[1].bytes().len();
        if got == len {
            let text = |e: &Event<Unverified>| String::from_utf8(e.bytes().to_vec()).unwrap();
            return (text(&events[0]), text(&events[1]));
        }
        payload = payload + len - got;
    }
    panic!("no event of exactly {len} bytes");
}

#[test]
fn an_event_over_the_server_s_max_payload_is_skipped_with_its_reason_and_blocks_nothing() {
    let Some(w) = World::new("an event over max_payload", 30) else {
        return;
    };
    // Within the ledger's 1 MiB bound, over a stock server's 1 MiB max_payload once the
    // message's headers are added; published between ordinary events.
    let (realm, big) = realm_with_an_event_of(1_048_500);
    let mut lines: Vec<&String> = w.lines[..20].iter().collect();
    lines.extend([&realm, &big]);
    lines.extend(&w.lines[20..]);
    let a = w.path("a");
    ledger_of(&a, &lines);
    let out = w.once_output(&a);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("max_payload is 1048576 bytes"), "{said}");
    assert!(said.contains("skipped ak:event:"), "{said}");
    let report = json(&out);
    let others = w.lines.len() as u64 + 1;
    assert_eq!(
        (n(&report, "published"), n(&report, "skipped")),
        (others, 1)
    );
    let skipped = std::fs::read_to_string(a.join("replicate/AKLEDGER.skipped.jsonl")).unwrap();
    let big_id = Event::<Unverified>::parse(big.as_bytes())
        .unwrap()
        .id()
        .to_string();
    assert!(skipped.contains(&big_id), "{skipped}");

    // Another ledger gets everything else; a rerun skips nothing again.
    let b = w.ledger("b", 0..0);
    let report = w.once(&b, 0);
    assert_eq!(n(&report, "admitted"), others);
    assert_eq!(n(&w.once(&a, 0), "skipped"), 0);
}

#[test]
fn a_copied_ledger_reads_the_stream_with_a_consumer_of_its_own() {
    let Some(w) = World::new("a copied ledger", 40) else {
        return;
    };
    let a = w.ledger("a", 0..20);
    w.once(&a, 0);
    let copy = w.path("copy");
    common::copy_dir(&a, &copy);
    // Another ledger publishes the rest; the original and its copy each get all of it.
    let b = w.ledger("b", 20..w.lines.len());
    w.once(&b, 0);
    let out = w.once_output(&copy);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a durable consumer of its own"),
        "{}",
        stderr(&out)
    );
    w.once(&a, 0);
    for dir in [&a, &copy] {
        assert_eq!(len(dir), w.lines.len(), "{}", dir.display());
    }
    // The copy's next run is an ordinary one.
    let out = w.once_output(&copy);
    assert!(
        !stderr(&out).contains("consumer of its own"),
        "{}",
        stderr(&out)
    );
}

/// Deletes `stream` through the JetStream API and waits for the server's answer.
fn delete_stream(server: &NatsServer, stream: &str) {
    let wire = format!(
        "SUB _INBOX.delete 1\r\nPUB $JS.API.STREAM.DELETE.{stream} _INBOX.delete 0\r\n\r\n"
    );
    let (_, answer) = plain_nats(server, wire.as_bytes(), |l| {
        l.starts_with("MSG _INBOX.delete")
    });
    assert!(answer.contains("\"success\":true"), "{answer}");
}

#[test]
fn a_stream_deleted_and_made_again_is_refilled_from_the_ledger() {
    let Some(w) = World::new("a stream made again", 40) else {
        return;
    };
    let a = w.ledger("a", 0..w.lines.len());
    w.once(&a, 0);
    delete_stream(&w.server, "AKLEDGER");
    // A newcomer makes the stream again, empty.
    let b = w.ledger("b", 0..0);
    assert_eq!(n(&w.once(&b, 0), "admitted"), 0);
    // The ledger that published before sees a new stream and publishes everything again.
    let out = w.once_output(&a);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the stream was made anew"),
        "{}",
        stderr(&out)
    );
    assert_eq!(n(&json(&out), "published"), w.lines.len() as u64);
    assert_eq!(n(&w.once(&b, 0), "admitted"), w.lines.len() as u64);
}

/// Publishes `payload` on `subject` under the message id `id` (a header) and waits until
/// the server read it.
fn stranger_publishes_under(server: &NatsServer, subject: &str, id: &str, payload: &[u8]) {
    stranger_publishes_headed(server, subject, &[("Nats-Msg-Id", id)], payload);
}

/// Publishes `payload` on `subject` with `headers` and waits until the server read it.
fn stranger_publishes_headed(
    server: &NatsServer,
    subject: &str,
    headers: &[(&str, &str)],
    payload: &[u8],
) {
    let fields: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let headers = format!("NATS/1.0\r\n{fields}\r\n");
    let mut wire = format!(
        "HPUB {subject} {} {}\r\n{headers}",
        headers.len(),
        headers.len() + payload.len()
    )
    .into_bytes();
    wire.extend_from_slice(payload);
    wire.extend_from_slice(b"\r\nPING\r\n");
    plain_nats(server, &wire, |l| l.starts_with("PONG"));
}

#[test]
fn messages_that_do_not_decompress_are_unreadable_acknowledged_and_stop_nothing() {
    let Some(w) = World::new("unreadable", 40) else {
        return;
    };
    let total = w.lines.len();
    let subject = subject_of(&Event::<Unverified>::parse(w.lines[1].as_bytes()).unwrap());
    let c = w.path("c");
    // A first run makes the stream; a stranger's messages come first in it.
    assert_eq!(n(&w.once(&c, 0), "consumed"), 0);
    let lz4 = [("Ak-Encoding", "lz4")];
    // Bytes that are no LZ4 block of the 1000 bytes they state; a block stating 2 GiB (no
    // reader allocates that); an encoding nobody reads.
    stranger_publishes_headed(&w.server, &subject, &lz4, b"\xe8\x03\0\0not lz4 at all");
    stranger_publishes_headed(&w.server, &subject, &lz4, b"\0\0\0\x80\x10x");
    stranger_publishes_headed(&w.server, &subject, &[("Ak-Encoding", "zstd")], b"x");
    let a = w.ledger("a", 0..total);
    for dir in [&a, &c] {
        let report = w.once(dir, 1);
        assert_eq!(n(&report, "unreadable"), 3, "{report}");
        assert_eq!(n(&report, "rejected"), 0);
        assert_eq!(
            n(&report, "admitted") as usize,
            if dir == &a { 0 } else { total }
        );
    }
    // Acknowledged with the rest: never delivered again.
    for dir in [&a, &c] {
        let again = w.once(dir, 0);
        assert_eq!((n(&again, "consumed"), n(&again, "unreadable")), (0, 0));
    }
    assert_eq!(heads(&a), heads(&c));
}

#[test]
fn junk_published_first_under_a_message_s_id_does_not_keep_its_events_out() {
    let Some(w) = World::new("junk under an id", 30) else {
        return;
    };
    // The stream exists (an empty ledger's run makes it); then junk takes two message ids.
    let b = w.ledger("b", 0..0);
    w.once(&b, 0);
    let events: Vec<Event<Unverified>> = w
        .lines
        .iter()
        .map(|line| Event::parse(line.as_bytes()).unwrap())
        .collect();
    let subject = subject_of(&events[0]);
    // A's first run packs all the events but the last (the realm's create, which would
    // strand the whole realm, among them) into one message; its second sends the last alone,
    // under the event's own id.
    let (first, last) = events.split_at(events.len() - 1);
    let mut packed = Packed::default();
    for event in first {
        assert!(
            packed.fits(event.bytes().len(), MESSAGE_BYTES),
            "one message"
        );
        packed.push(event.id(), event.bytes());
    }
    for id in [packed.message_id(), last[0].id().to_string()] {
        stranger_publishes_under(&w.server, &subject, &id, b"{\"junk\":true}");
    }
    let a = w.ledger("a", 0..first.len());
    // (It consumes the junk too, and rejects it: exit 1.)
    let report = w.once(&a, 1);
    let published = |r: &serde_json::Value| (n(r, "published"), n(r, "squatted"));
    let packed_events = first.len() as u64;
    assert_eq!(
        published(&report),
        (packed_events, packed_events),
        "{report}"
    );
    ledger_of(&a, &[&w.lines[first.len()]]);
    let report = w.once(&a, 0);
    assert_eq!(published(&report), (1, 1), "{report}");
    // Every event reaches the other ledger; the junk is rejected there.
    let report = w.once(&b, 1);
    assert_eq!(n(&report, "rejected"), 2, "{report}");
    assert_eq!(len(&b), w.lines.len(), "{report}");
}

#[test]
fn a_stream_of_more_bytes_than_one_fetch_asks_for_is_consumed_whole() {
    // Packed messages reach a fetch's byte bound before its message bound: the server ends
    // such a fetch with a status, and what came before it must be taken, not lost or failed.
    let events = 40_000;
    let Some(w) = World::new("more than one fetch", events) else {
        return;
    };
    let a = w.ledger("a", 0..w.lines.len());
    // The bytes the stream holds: the events packed 64 to a message, compressed.
    let mut bytes = 0;
    for lines in w.lines.chunks(MESSAGE_EVENTS) {
        let mut packed = Packed::default();
        for line in lines {
            let event = Event::<Unverified>::parse(line.as_bytes()).unwrap();
            packed.push(event.id(), line.as_bytes());
        }
        bytes += packed.encoded().0.len();
    }
    assert!(
        bytes > REPLICATE_BATCH_BYTES,
        "{bytes} bytes: not over one fetch"
    );
    assert_eq!(n(&w.once(&a, 0), "published") as usize, w.lines.len());
    let b = w.ledger("b", 0..0);
    let report = w.once(&b, 0);
    assert_eq!(n(&report, "consumed") as usize, w.lines.len(), "{report}");
    assert_eq!(n(&report, "admitted") as usize, w.lines.len(), "{report}");
    assert_eq!(heads(&b), heads(&a));
}
