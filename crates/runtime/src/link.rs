//! The link between two sidecars: one listens, the other connects, each proves it holds
//! the key the other was configured with, and envelopes flow both ways exactly once across
//! disconnects and crashes of either side (frames, handshake and rules in
//! [`crate::link_protocol`]).
//!
//! How the link keeps the runtime's promises:
//! - an envelope taken in is acknowledged only once the runtime has made it an inbox event
//!   (the runtime's next [`Connection::receive`] says so), and the link's input position is
//!   the sequence number of the next envelope expected, which the inbox records carry: a
//!   run after a crash tells the peer where to resume;
//! - an envelope sent counts as written ([`Connection::deliver`]) only once the peer has
//!   acknowledged it, so the runtime's progress marker never passes one the peer may not
//!   have; after a crash the envelopes not acknowledged are sent again under their old
//!   sequence numbers, and the peer ignores those it has.
//!
//! The link authenticates but does not encrypt: run it over loopback, a private network
//! or a tunnel. A stranger who connects can neither join nor cut an established link.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use akledger::ed25519_dalek::{SigningKey, VerifyingKey};
use rand_core::{OsRng, RngCore as _};

use super::envelope::{Connection, Envelope, InputCursor, Received};
use super::link_protocol::{check_proof, prove, Frame};
use super::socket::Buffered;
use crate::limits::{
    LINK_RETRY_MS, MAX_LINK_HANDSHAKES, MAX_TCP_BUFFERED_BYTES, MAX_TCP_FRAME_BYTES,
    MAX_TCP_READ_BYTES,
};

/// Milliseconds a connection may take to prove who it is before it is closed.
const HANDSHAKE_MS: u64 = 5_000;

/// How a side reaches the other.
#[derive(Debug)]
enum Side {
    Listen(TcpListener),
    Dial {
        address: SocketAddr,
        /// The attempt under way (on a thread of its own: connecting may take long).
        attempt: Option<Receiver<std::io::Result<TcpStream>>>,
        next_try: Instant,
    },
}

/// One TCP connection to the peer.
#[derive(Debug)]
struct Wire {
    buffered: Buffered,
    my_nonce: [u8; 32],
    their_nonce: Option<[u8; 32]>,
    /// The sequence number the peer expects, once it proved who it is.
    proven: Option<u64>,
    opened: Instant,
}

impl Wire {
    fn new(stream: TcpStream) -> std::io::Result<Wire> {
        let mut my_nonce = [0; 32];
        OsRng.fill_bytes(&mut my_nonce);
        let mut buffered = Buffered::new(stream)?;
        buffered
            .out
            .extend(Frame::Hello { nonce: my_nonce }.encode());
        Ok(Wire {
            buffered,
            my_nonce,
            their_nonce: None,
            proven: None,
            opened: Instant::now(),
        })
    }

    /// The next whole frame read, if any; a malformed one closes the wire.
    fn next_frame(&mut self) -> Option<Frame> {
        match Frame::decode(&self.buffered.inbuf, MAX_TCP_FRAME_BYTES + 16) {
            Ok(Some((frame, used))) => {
                self.buffered.consume(used);
                Some(frame)
            }
            Ok(None) => None,
            Err(why) => {
                self.fail(&why);
                None
            }
        }
    }

    fn fail(&mut self, why: &str) {
        if !self.buffered.closed {
            eprintln!(
                "akledger: sidecar: link: {}: {why}; closing",
                self.buffered.peer
            );
        }
        self.buffered.closed = true;
    }

    fn send(&mut self, frame: &Frame) {
        self.buffered.out.extend(frame.encode());
    }
}

/// A link to another sidecar.
#[derive(Debug)]
pub struct LinkConnection {
    key: SigningKey,
    peer: VerifyingKey,
    side: Side,
    /// The connection whose peer proved who it is.
    current: Option<Wire>,
    /// Connections still proving who they are.
    handshakes: Vec<Wire>,
    /// False until the runtime said where to resume: nothing is read or sent before.
    resumed: bool,
    /// The sequence number of the next envelope to take in.
    next_expected: u64,
    /// Envelopes taken in and not yet handed to the runtime.
    incoming: Vec<Received>,
    /// `next_expected` when the runtime last took the envelopes in: those are in the
    /// ledger by the time the link is next polled (the runtime appends what `receive`
    /// returns before it polls again), so this is what the peer may be told is taken in;
    /// and what it was last told.
    returned: u64,
    acknowledged: u64,
    /// The sequence number of the next envelope queued.
    next_seq: u64,
    /// Envelopes the peer has not acknowledged: sequence number, token, envelope.
    unacknowledged: VecDeque<(u64, u64, Vec<u8>)>,
    /// Sequence numbers below this were written on `current`.
    written_to: u64,
    /// Tokens of envelopes acknowledged, not yet reported.
    done: VecDeque<u64>,
}

impl LinkConnection {
    fn with_side(side: Side, key: SigningKey, peer: VerifyingKey) -> LinkConnection {
        LinkConnection {
            key,
            peer,
            side,
            current: None,
            handshakes: Vec::new(),
            resumed: false,
            next_expected: 0,
            incoming: Vec::new(),
            returned: 0,
            acknowledged: 0,
            next_seq: 0,
            unacknowledged: VecDeque::new(),
            written_to: 0,
            done: VecDeque::new(),
        }
    }

    /// The side that listens on `address` for the peer holding `peer`'s key; this side
    /// proves it holds `key`.
    pub fn listen(
        address: SocketAddr,
        key: SigningKey,
        peer: VerifyingKey,
    ) -> std::io::Result<LinkConnection> {
        let listener = TcpListener::bind(address)?;
        listener.set_nonblocking(true)?;
        Ok(Self::with_side(Side::Listen(listener), key, peer))
    }

    /// The side that connects to `address` (again and again while the peer is away).
    pub fn connect(address: SocketAddr, key: SigningKey, peer: VerifyingKey) -> LinkConnection {
        let side = Side::Dial {
            address,
            attempt: None,
            next_try: Instant::now(),
        };
        Self::with_side(side, key, peer)
    }

    /// The address it listens on (the listening side).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match &self.side {
            Side::Listen(l) => l.local_addr().ok(),
            Side::Dial { .. } => None,
        }
    }

    /// True while the peer is connected and proven.
    pub fn is_established(&self) -> bool {
        self.current.is_some()
    }

    /// Opens connections: accepts newcomers, or dials when there is no link.
    fn open(&mut self) {
        let idle = self.current.is_none() && self.handshakes.is_empty();
        match &mut self.side {
            Side::Listen(listener) => loop {
                match listener.accept() {
                    Ok((stream, peer)) if self.handshakes.len() < MAX_LINK_HANDSHAKES => {
                        match Wire::new(stream) {
                            Ok(w) => self.handshakes.push(w),
                            Err(e) => eprintln!("akledger: sidecar: link: {peer}: {e}"),
                        }
                    }
                    Ok((_, peer)) => eprintln!(
                        "akledger: sidecar: link: {peer} refused: {MAX_LINK_HANDSHAKES} connections are proving who they are"
                    ),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            },
            Side::Dial {
                address,
                attempt,
                next_try,
            } => {
                if let Some(rx) = attempt {
                    match rx.try_recv() {
                        Ok(Ok(stream)) => {
                            *attempt = None;
                            match Wire::new(stream) {
                                Ok(w) => self.handshakes.push(w),
                                Err(e) => eprintln!("akledger: sidecar: link: {address}: {e}"),
                            }
                        }
                        Ok(Err(_)) | Err(TryRecvError::Disconnected) => {
                            *attempt = None;
                            *next_try = Instant::now() + Duration::from_millis(LINK_RETRY_MS);
                        }
                        Err(TryRecvError::Empty) => {}
                    }
                } else if idle && Instant::now() >= *next_try {
                    let (tx, rx) = mpsc::channel();
                    let to = *address;
                    let spawned = std::thread::Builder::new()
                        .name("akledger-link-dial".into())
                        .spawn(move || {
                            let _ =
                                tx.send(TcpStream::connect_timeout(&to, Duration::from_secs(5)));
                        });
                    match spawned {
                        Ok(_) => *attempt = Some(rx),
                        Err(_) => *next_try = Instant::now() + Duration::from_millis(LINK_RETRY_MS),
                    }
                }
            }
        }
    }

    /// Moves the handshakes on; the first whose peer proves who it is becomes the link.
    fn handshake(&mut self) {
        let mut proven = None;
        for (i, wire) in self.handshakes.iter_mut().enumerate() {
            wire.buffered.read_available(MAX_TCP_READ_BYTES);
            while let Some(frame) = wire.next_frame() {
                match (&frame, wire.their_nonce) {
                    (Frame::Hello { nonce }, None) => {
                        wire.their_nonce = Some(*nonce);
                        // What the runtime has made durable (see `returned`), not what is
                        // read and not yet in the ledger.
                        let proof = prove(&self.key, nonce, &wire.my_nonce, self.returned);
                        wire.send(&proof);
                    }
                    (Frame::Proof { .. }, Some(theirs)) => {
                        match check_proof(&frame, &self.peer, &wire.my_nonce, &theirs) {
                            Ok(n) if n > self.next_seq => wire.fail(&format!(
                                "the peer expects envelope {n}, but this side has sent {} only: the two ledgers disagree (was one restored from an older copy?)",
                                self.next_seq
                            )),
                            Ok(n) => wire.proven = Some(n),
                            Err(why) => wire.fail(&why),
                        }
                        break;
                    }
                    _ => wire.fail("a frame out of order in the handshake"),
                }
            }
            wire.buffered.write_pending();
            if wire.opened.elapsed() > Duration::from_millis(HANDSHAKE_MS) && wire.proven.is_none()
            {
                wire.fail("no proof in time");
            }
            if wire.proven.is_some() && proven.is_none() && !wire.buffered.closed {
                proven = Some(i);
            }
        }
        if let Some(i) = proven {
            let wire = self.handshakes.swap_remove(i);
            self.establish(wire);
        }
        self.handshakes.retain(|w| !w.buffered.closed);
    }

    /// Makes `wire` the link: what the peer expects is acknowledged, the rest resent.
    fn establish(&mut self, wire: Wire) {
        let expected = wire.proven.unwrap_or(0);
        eprintln!(
            "akledger: sidecar: link: established with {} (it expects envelope {expected}, this side expects {})",
            wire.buffered.peer, self.returned
        );
        self.current = Some(wire);
        self.acknowledge(expected);
        self.written_to = expected;
        self.acknowledged = self.returned;
    }

    /// The peer has everything before `next_expected`.
    fn acknowledge(&mut self, next_expected: u64) {
        while let Some(&(seq, token, _)) = self.unacknowledged.front() {
            if seq >= next_expected {
                break;
            }
            self.unacknowledged.pop_front();
            self.done.push_back(token);
        }
    }

    /// Reads the link's frames and writes what is waiting.
    fn exchange(&mut self) {
        let Some(wire) = self.current.as_mut() else {
            return;
        };
        wire.buffered.read_available(MAX_TCP_READ_BYTES);
        let mut acked = None;
        while let Some(frame) = wire.next_frame() {
            match frame {
                Frame::Envelope { seq, envelope } if seq == self.next_expected => {
                    match Envelope::decode_protobuf(&envelope) {
                        Ok(envelope) => {
                            self.incoming.push(Received {
                                envelope,
                                start: seq,
                                end: InputCursor {
                                    offset: seq + 1,
                                    file: None,
                                },
                            });
                            self.next_expected = seq + 1;
                        }
                        Err(why) => wire.fail(&format!("envelope {seq} is malformed ({why})")),
                    }
                }
                // Sent again after a reconnect; taken in already.
                Frame::Envelope { seq, .. } if seq < self.next_expected => {}
                Frame::Envelope { seq, .. } => wire.fail(&format!(
                    "envelope {seq} where {} was expected",
                    self.next_expected
                )),
                Frame::Ack { next_expected } if next_expected <= self.next_seq => {
                    acked = Some(acked.unwrap_or(0).max(next_expected));
                }
                _ => wire.fail("a frame out of order"),
            }
        }
        let mut sent = self.written_to;
        for (seq, _, envelope) in &self.unacknowledged {
            if wire.buffered.pending() >= MAX_TCP_BUFFERED_BYTES {
                break;
            }
            if *seq >= sent {
                wire.send(&Frame::Envelope {
                    seq: *seq,
                    envelope: envelope.clone(),
                });
                sent = seq + 1;
            }
        }
        self.written_to = sent;
        wire.buffered.write_pending();
        wire.buffered.compact();
        if wire.buffered.closed {
            eprintln!("akledger: sidecar: link: {} lost", wire.buffered.peer);
            self.current = None;
        }
        if let Some(n) = acked {
            self.acknowledge(n);
        }
    }

    /// Everything a poll does.
    fn service(&mut self) {
        if !self.resumed {
            return;
        }
        self.open();
        self.handshake();
        self.exchange();
    }
}

impl Connection for LinkConnection {
    fn kind(&self) -> &'static str {
        "link"
    }

    fn describe(&self) -> String {
        let peer = akledger::did::DidCoreId::for_key(&self.peer);
        match &self.side {
            Side::Listen(l) => match l.local_addr() {
                Ok(a) => format!("link to {peer}, listening on {a}"),
                Err(_) => format!("link to {peer}, listening"),
            },
            Side::Dial { address, .. } => format!("link to {peer}, connecting to {address}"),
        }
    }

    fn receive(&mut self) -> std::io::Result<Vec<Received>> {
        // What the last call returned is in the ledger now.
        if self.returned > self.acknowledged {
            if let Some(wire) = self.current.as_mut() {
                wire.send(&Frame::Ack {
                    next_expected: self.returned,
                });
                self.acknowledged = self.returned;
            }
        }
        self.service();
        let received = std::mem::take(&mut self.incoming);
        if let Some(last) = received.last() {
            self.returned = last.end.offset;
        }
        Ok(received)
    }

    fn input_cursor(&self) -> InputCursor {
        InputCursor {
            offset: self.returned,
            file: None,
        }
    }

    fn resume_at(&mut self, cursor: &InputCursor) -> std::io::Result<()> {
        self.next_expected = cursor.offset;
        self.returned = cursor.offset;
        self.acknowledged = cursor.offset;
        self.incoming.clear();
        self.resumed = true;
        Ok(())
    }

    fn send(&mut self, envelope: &Envelope, token: u64) -> std::io::Result<()> {
        self.unacknowledged
            .push_back((self.next_seq, token, envelope.encode_protobuf()));
        self.next_seq += 1;
        Ok(())
    }

    fn deliver(&mut self) -> std::io::Result<Option<u64>> {
        if self.done.is_empty() {
            self.service();
        }
        Ok(self.done.pop_front())
    }

    fn queued(&self) -> usize {
        self.unacknowledged.len()
    }

    fn output_position(&mut self) -> std::io::Result<u64> {
        Ok(self
            .unacknowledged
            .front()
            .map_or(self.next_seq, |(seq, _, _)| *seq))
    }

    fn already_sent(&mut self, from: u64, _expected: &[Envelope]) -> std::io::Result<usize> {
        // Each is sent again under its old number; the peer ignores those it has.
        if self.unacknowledged.is_empty() {
            self.next_seq = from;
        }
        Ok(0)
    }
}
