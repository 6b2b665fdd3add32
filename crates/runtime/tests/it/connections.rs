//! The network connections inside a runtime: AEA's `fetchai/tcp` framing spoken by a plain
//! client (an agent answered, an impostor and an oversized frame dropped without hurting
//! anyone else), and two runtimes linked, relaying between their stub files exactly once
//! while either side fails at every stage of a step and reconnects.

use crate::support::{append, written};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use akledger::ed25519_dalek::SigningKey;
use akledger::ledger::Ledger;
use akledger::time::Timestamp;
use akledger_runtime::handlers::default_protocol_id;
use akledger_runtime::skills::Skill;
use akledger_runtime::stub_format::encode_record;
use akledger_runtime::{
    bootstrap, DefaultMessage, EchoHandler, Envelope, LinkConnection, Multiplexer, OutputMode,
    Performative, Runtime, RuntimeConfig, Stage, StubConnection, TcpConnection,
};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn ping(to: &str, from: &str, n: u32) -> Envelope {
    let message = DefaultMessage::bytes(&format!("ref{n}"), n.to_be_bytes().to_vec());
    Envelope::new(to, from, default_protocol_id(), message.encode())
}

/// A frame as AEA's `fetchai/tcp` writes it: `struct.pack("I", len)` then the bytes.
fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = (bytes.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(bytes);
    out
}

/// An AEA `fetchai/tcp` client: connects and sends its address first.
fn agent(server: SocketAddr, address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(server).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    stream.write_all(&frame(address.as_bytes())).unwrap();
    stream
}

/// Steps `runtime` until `done` or ten seconds pass.
fn step_until(runtime: &mut Runtime<'_>, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "gave up after 10 s");
        runtime.step(Timestamp::now()).unwrap();
    }
}

/// Reads into `buf` what the socket has (waiting at most its read timeout); false once the
/// server closed it.
fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0; 4096];
    match stream.read(&mut chunk) {
        Ok(0) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => true,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => false,
        Err(e) => panic!("{e}"),
    }
}

/// The envelopes whole in `buf`.
fn frames(buf: &[u8]) -> Vec<Envelope> {
    let mut out = Vec::new();
    let mut rest = buf;
    while rest.len() >= 4 {
        let n = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        if rest.len() < 4 + n {
            break;
        }
        out.push(Envelope::decode_protobuf(&rest[4..4 + n]).unwrap());
        rest = &rest[4 + n..];
    }
    out
}

#[test]
fn a_tcp_agent_is_answered_and_an_impostor_or_a_giant_frame_hurts_nobody_else() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
    let config = bootstrap(&ledger, SigningKey::from_bytes(&[7; 32])).unwrap();
    let me = config.address.clone();
    let tcp = TcpConnection::listen(loopback()).unwrap();
    let server = tcp.local_addr();
    let mut runtime = Runtime::new(&ledger, tcp, config).unwrap();
    runtime
        .add_skill(
            Skill::new("echo")
                .unwrap()
                .handler(EchoHandler::default())
                .unwrap(),
        )
        .unwrap();

    let mut alice = agent(server, "alice");
    let mut mallory = agent(server, "mallory");
    let mut giant = agent(server, "giant");
    // Mallory speaks for Alice; the giant announces a frame of 4 GiB - 1.
    mallory
        .write_all(&frame(&ping(&me, "alice", 99).encode_protobuf()))
        .unwrap();
    giant.write_all(&u32::MAX.to_le_bytes()).unwrap();
    for n in 1..=3 {
        alice
            .write_all(&frame(&ping(&me, "alice", n).encode_protobuf()))
            .unwrap();
    }

    let (mut got, mut giant_open) = (Vec::new(), true);
    step_until(&mut runtime, || {
        read_some(&mut alice, &mut got);
        giant_open = giant_open && read_some(&mut giant, &mut Vec::new());
        frames(&got).len() >= 3 && !giant_open
    });
    let replies = frames(&got);
    assert_eq!(replies.len(), 3, "one echo per ping, none for mallory's");
    for (reply, n) in replies.iter().zip(1u32..) {
        assert_eq!(
            (reply.to.as_str(), reply.sender.as_str()),
            ("alice", me.as_str())
        );
        let message = DefaultMessage::decode(&reply.message).unwrap();
        assert_eq!((message.message_id, message.target), (-1, 1));
        assert_eq!(
            message.performative,
            Performative::Bytes(n.to_be_bytes().to_vec())
        );
    }
    let mut nothing = Vec::new();
    assert!(
        read_some(&mut mallory, &mut nothing),
        "mallory stays connected"
    );
    assert!(nothing.is_empty(), "mallory's forgery was not answered");
    // Three pings and three echoes, besides the realm and the sidecar's four events.
    assert_eq!(ledger.len(), 4 + 6);
}

/// One side of a link: a ledger whose runtime has a stub connection to its agent
/// (appending its output) and the link, with a route for each agent.
struct Side {
    dir: tempfile::TempDir,
    ledger: Ledger,
    key: SigningKey,
    config: RuntimeConfig,
}

impl Side {
    fn new(seed: u8) -> Side {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path().join("ledger")).unwrap();
        let key = SigningKey::from_bytes(&[seed; 32]);
        let config = bootstrap(&ledger, key.clone()).unwrap();
        Side {
            dir,
            ledger,
            key,
            config,
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn runtime(&self, link: LinkConnection, mine: &str, other: &str) -> Runtime<'_> {
        let mut connections = Multiplexer::new();
        let stub =
            StubConnection::open_with(&self.path("in"), &self.path("out"), OutputMode::Append)
                .unwrap();
        connections
            .add("agent", stub)
            .unwrap()
            .add("link", link)
            .unwrap()
            .route(other, "link")
            .unwrap()
            .route(mine, "agent")
            .unwrap();
        Runtime::new(&self.ledger, connections, self.config.clone()).unwrap()
    }
}

#[test]
fn linked_sidecars_relay_exactly_once_while_either_fails_at_every_stage() {
    let (a, b) = (Side::new(1), Side::new(2));
    let listen = LinkConnection::listen(loopback(), a.key.clone(), b.key.verifying_key()).unwrap();
    let port = listen.local_addr().unwrap();
    let dial = || LinkConnection::connect(port, b.key.clone(), a.key.verifying_key());
    let mut ra = Some(a.runtime(listen, "alice", "bob"));
    let mut rb = Some(b.runtime(dial(), "bob", "alice"));

    // Alice (beside A) and Bob (beside B) each send 40 pings, one a round. Every other
    // round one side, in turn, is stepped (with the other) until it fails right after the
    // next of the stages a relay passes, and is started again.
    let pings = 40u32;
    let stages = [
        Stage::Received,
        Stage::Inbox,
        Stage::Outbox,
        Stage::Sent,
        Stage::Marker,
    ];
    let mut failures = stages.iter().copied().cycle();
    let mut failed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for round in 0.. {
        let (at_bob, at_alice) = (written(&b.path("out")).len(), written(&a.path("out")).len());
        if round >= pings && at_bob == pings as usize && at_alice == pings as usize {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "gave up after 60 s: {at_bob} at bob, {at_alice} at alice"
        );
        if round < pings {
            append(&a.path("in"), &encode_record(&ping("bob", "alice", round)));
            append(&b.path("in"), &encode_record(&ping("alice", "bob", round)));
        }
        if round % 2 == 1 && round < pings {
            let stage = failures.next().unwrap();
            let (victim, other, side, agents) = if round % 4 == 1 {
                (&mut ra, &mut rb, &a, ["alice", "bob"])
            } else {
                (&mut rb, &mut ra, &b, ["bob", "alice"])
            };
            let mut runtime = victim.take().unwrap();
            runtime.on_stage(move |s| {
                if s == stage {
                    panic!("failing at {}", s.name());
                }
            });
            for _ in 0..10_000 {
                if catch_unwind(AssertUnwindSafe(|| runtime.step(Timestamp::now()))).is_err() {
                    failed.push(stage);
                    break;
                }
                other.as_mut().unwrap().step(Timestamp::now()).unwrap();
            }
            drop(runtime);
            let link = if std::ptr::eq(side, &a) {
                LinkConnection::listen(port, a.key.clone(), b.key.verifying_key()).unwrap()
            } else {
                dial()
            };
            *victim = Some(side.runtime(link, agents[0], agents[1]));
        }
        for r in [&mut ra, &mut rb] {
            r.as_mut().unwrap().step(Timestamp::now()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Each stage failed at, on both sides.
    for stage in stages {
        assert!(
            failed.iter().filter(|s| **s == stage).count() >= 2,
            "failed at {failed:?}"
        );
    }
    let expect = |from: &str, to: &str| (0..pings).map(|n| ping(to, from, n)).collect::<Vec<_>>();
    assert_eq!(written(&b.path("out")), expect("alice", "bob"));
    assert_eq!(written(&a.path("out")), expect("bob", "alice"));
}

/// Reads from a stranger's socket until the server closes it.
fn closed_by_server(stream: &mut TcpStream, runtime: &mut Runtime<'_>) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut sink = Vec::new();
    while Instant::now() < deadline {
        runtime.step(Timestamp::now()).unwrap();
        if !read_some(stream, &mut sink) {
            return true;
        }
    }
    false
}

#[test]
fn strangers_can_neither_join_nor_cut_a_link() {
    use akledger_runtime::link_protocol::{prove, Frame};
    let (a, b) = (Side::new(3), Side::new(4));
    let listen = LinkConnection::listen(loopback(), a.key.clone(), b.key.verifying_key()).unwrap();
    let port = listen.local_addr().unwrap();
    let mut ra = a.runtime(listen, "alice", "bob");
    let mut rb = b.runtime(
        LinkConnection::connect(port, b.key.clone(), a.key.verifying_key()),
        "bob",
        "alice",
    );
    let connect = || {
        let s = TcpStream::connect(port).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
        s
    };
    let hello_of = |s: &mut TcpStream, runtime: &mut Runtime<'_>| -> [u8; 32] {
        let mut got = Vec::new();
        loop {
            runtime.step(Timestamp::now()).unwrap();
            read_some(s, &mut got);
            if let Ok(Some((Frame::Hello { nonce }, _))) = Frame::decode(&got, 1 << 20) {
                return nonce;
            }
        }
    };

    // Garbage: a frame longer than any the link takes.
    let mut garbage = connect();
    garbage.write_all(&[0xff; 64]).unwrap();
    assert!(closed_by_server(&mut garbage, &mut ra));
    // A proof by a key that is not Bob's.
    let mut impostor = connect();
    let theirs = hello_of(&mut impostor, &mut ra);
    let mine = [9; 32];
    let stranger = SigningKey::from_bytes(&[5; 32]);
    impostor
        .write_all(&Frame::Hello { nonce: mine }.encode())
        .unwrap();
    impostor
        .write_all(&prove(&stranger, &theirs, &mine, 0).encode())
        .unwrap();
    assert!(closed_by_server(&mut impostor, &mut ra));
    // An envelope pushed before any proof.
    let mut pusher = connect();
    hello_of(&mut pusher, &mut ra);
    let forged = ping("alice", "bob", 666).encode_protobuf();
    pusher
        .write_all(&Frame::Hello { nonce: [1; 32] }.encode())
        .unwrap();
    pusher
        .write_all(
            &Frame::Envelope {
                seq: 0,
                envelope: forged,
            }
            .encode(),
        )
        .unwrap();
    assert!(closed_by_server(&mut pusher, &mut ra));

    // The link between the sidecars still carries Bob's pings, and nothing else arrived.
    for n in 0..3 {
        append(&b.path("in"), &encode_record(&ping("alice", "bob", n)));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while written(&a.path("out")).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the link no longer carries pings"
        );
        rb.step(Timestamp::now()).unwrap();
        ra.step(Timestamp::now()).unwrap();
    }
    let expect: Vec<_> = (0..3).map(|n| ping("alice", "bob", n)).collect();
    assert_eq!(written(&a.path("out")), expect);
}
