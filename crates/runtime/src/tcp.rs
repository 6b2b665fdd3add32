//! AEA's TCP connection (`fetchai/tcp`), the server side: agents whose `fetchai/tcp`
//! client connects here talk to the runtime as over the stub files.
//!
//! The wire, as AEA 1.x's `tcp/base.py` has it: every frame is a 4-byte length in the
//! sender's native byte order (`struct.pack("I", n)`: little-endian on every platform AEA
//! runs on) followed by that many bytes. A client's first frame is its agent address
//! (UTF-8); every later frame, either way, is an envelope as AEA serializes it
//! ([`Envelope::encode_protobuf`]). The server writes an envelope to the client that
//! connected under the envelope's `to`.
//!
//! What the runtime adds, and what it cannot:
//! - each destination address is a lane ([`Connection::lane`]): envelopes for an agent
//!   that is not connected wait for it, in order, and hold up nobody else; a client that
//!   drops mid-frame gets that frame again, whole, when it reconnects;
//! - an envelope whose `sender` is not the address its client connected under is logged
//!   and dropped (an agent speaks for itself only); a frame longer than
//!   [`MAX_TCP_FRAME_BYTES`] or that is not an envelope closes that client;
//! - TCP carries no acknowledgement, so an envelope read in the instant before the runtime
//!   crashed is lost, and one written in the instant before is written again by the next
//!   run (AEA's dialogues refuse the copy). Two sidecars that must lose and double nothing
//!   use the [`LinkConnection`](crate::LinkConnection).

use std::collections::{BTreeMap, VecDeque};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};

use super::envelope::{Connection, Envelope, InputCursor, Received};
use super::socket::Buffered;
use crate::limits::{
    MAX_ENVELOPE_HEADER_FIELD_BYTES, MAX_TCP_BUFFERED_BYTES, MAX_TCP_CLIENTS, MAX_TCP_FRAME_BYTES,
    MAX_TCP_READ_BYTES,
};

/// One connected agent.
#[derive(Debug)]
struct Client {
    wire: Buffered,
    /// The agent address it sent first.
    address: Option<String>,
    /// The frames in `wire.out`: where each ends there, its token, its envelope.
    in_out: VecDeque<(usize, u64, Vec<u8>)>,
}

/// The server side of AEA's TCP connection.
#[derive(Debug)]
pub struct TcpConnection {
    listener: TcpListener,
    local: SocketAddr,
    clients: Vec<Client>,
    /// Envelopes taken in (the input cursor: a count, as a stream has no position).
    received: u64,
    /// Per destination address, the frames waiting for it, with their tokens.
    queues: BTreeMap<String, VecDeque<(u64, Vec<u8>)>>,
    /// Tokens of frames written whole, not yet reported.
    done: VecDeque<u64>,
}

/// `frame` with its length before it, as AEA's `_send` writes it.
fn framed(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.len() + 4);
    out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    out.extend_from_slice(frame);
    out
}

impl TcpConnection {
    /// Listens on `address` (port 0: any free port; see [`TcpConnection::local_addr`]).
    pub fn listen(address: SocketAddr) -> std::io::Result<TcpConnection> {
        let listener = TcpListener::bind(address)?;
        listener.set_nonblocking(true)?;
        Ok(TcpConnection {
            local: listener.local_addr()?,
            listener,
            clients: Vec::new(),
            received: 0,
            queues: BTreeMap::new(),
            done: VecDeque::new(),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The addresses of the agents connected now.
    pub fn agents(&self) -> impl Iterator<Item = &str> {
        self.clients
            .iter()
            .filter(|c| !c.wire.closed)
            .filter_map(|c| c.address.as_deref())
    }

    /// Takes every connection waiting to be accepted.
    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if self.clients.len() >= MAX_TCP_CLIENTS {
                        eprintln!(
                            "akledger: sidecar: tcp: {peer} refused: {MAX_TCP_CLIENTS} clients already"
                        );
                        continue;
                    }
                    match Buffered::new(stream) {
                        Ok(wire) => self.clients.push(Client {
                            wire,
                            address: None,
                            in_out: VecDeque::new(),
                        }),
                        Err(e) => eprintln!("akledger: sidecar: tcp: {peer}: {e}"),
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors and the like: the next poll tries again.
                    eprintln!("akledger: sidecar: tcp: accepting: {e}");
                    return;
                }
            }
        }
    }

    /// Closes the clients that asked for it or failed, putting the frames they did not
    /// take back in front of their address's queue.
    fn reap(&mut self) {
        let mut i = 0;
        while i < self.clients.len() {
            if !self.clients.get(i).is_some_and(|c| c.wire.closed) {
                i += 1;
                continue;
            }
            let client = self.clients.swap_remove(i);
            let Some(address) = client.address else {
                continue;
            };
            eprintln!(
                "akledger: sidecar: tcp: agent {address:?} ({}) disconnected",
                client.wire.peer
            );
            let queue = self.queues.entry(address).or_default();
            for (_, token, frame) in client.in_out.into_iter().rev() {
                queue.push_front((token, frame));
            }
        }
    }

    /// Reads what `client` has sent, as frames; envelopes go to `received`. Returns the
    /// address it named, if its first frame arrived now.
    fn read_client(
        client: &mut Client,
        count: &mut u64,
        received: &mut Vec<Received>,
    ) -> Option<String> {
        client.wire.read_available(MAX_TCP_READ_BYTES);
        let mut named = None;
        let mut at = 0;
        let peer = client.wire.peer;
        while let Some(header) = client.wire.inbuf.get(at..at + 4) {
            let mut len = [0; 4];
            len.copy_from_slice(header);
            let len = u32::from_le_bytes(len) as usize;
            if len > MAX_TCP_FRAME_BYTES {
                eprintln!(
                    "akledger: sidecar: tcp: {peer}: a frame of {len} bytes (more than {MAX_TCP_FRAME_BYTES}); closing"
                );
                client.wire.closed = true;
                break;
            }
            let Some(frame) = client.wire.inbuf.get(at + 4..at + 4 + len) else {
                break;
            };
            at += 4 + len;
            match &client.address {
                None => match std::str::from_utf8(frame) {
                    Ok(a) if !a.is_empty() && a.len() <= MAX_ENVELOPE_HEADER_FIELD_BYTES => {
                        client.address = Some(a.to_string());
                        named = Some(a.to_string());
                    }
                    _ => {
                        eprintln!(
                            "akledger: sidecar: tcp: {peer}: the first frame is no agent address; closing"
                        );
                        client.wire.closed = true;
                        break;
                    }
                },
                Some(address) => match Envelope::decode_protobuf(frame) {
                    Ok(envelope) if envelope.sender == *address => {
                        received.push(Received {
                            envelope,
                            start: *count,
                            end: InputCursor {
                                offset: *count + 1,
                                file: None,
                            },
                        });
                        *count += 1;
                    }
                    Ok(envelope) => eprintln!(
                        "akledger: sidecar: tcp: agent {address:?} sent an envelope as {:?}; dropped",
                        envelope.sender
                    ),
                    Err(why) => {
                        eprintln!(
                            "akledger: sidecar: tcp: agent {address:?}: a frame is not an envelope ({why}); closing"
                        );
                        client.wire.closed = true;
                        break;
                    }
                },
            }
        }
        client.wire.consume(at);
        named
    }

    /// Moves waiting frames to their clients and writes what the sockets take.
    fn pump(&mut self) {
        for client in &mut self.clients {
            let Some(address) = client.address.as_ref().filter(|_| !client.wire.closed) else {
                continue;
            };
            if let Some(queue) = self.queues.get_mut(address) {
                while client.wire.pending() < MAX_TCP_BUFFERED_BYTES {
                    let Some((token, frame)) = queue.pop_front() else {
                        break;
                    };
                    client.wire.out.extend_from_slice(&framed(&frame));
                    client
                        .in_out
                        .push_back((client.wire.out.len(), token, frame));
                }
            }
            client.wire.write_pending();
            while client
                .in_out
                .front()
                .is_some_and(|(end, _, _)| *end <= client.wire.written)
            {
                if let Some((_, token, _)) = client.in_out.pop_front() {
                    self.done.push_back(token);
                }
            }
            if client.wire.pending() == 0 {
                client.wire.compact();
            }
        }
        self.reap();
    }
}

impl Connection for TcpConnection {
    fn kind(&self) -> &'static str {
        "tcp"
    }

    fn describe(&self) -> String {
        format!("AEA TCP, listening on {}", self.local)
    }

    fn receive(&mut self) -> std::io::Result<Vec<Received>> {
        self.accept();
        let mut received = Vec::new();
        let mut named = Vec::new();
        for client in &mut self.clients {
            if !client.wire.closed {
                named.extend(Self::read_client(client, &mut self.received, &mut received));
            }
        }
        for address in named {
            // A newer client under the same address replaces the older (as AEA's server's
            // table of writers does).
            let mut newest = true;
            for client in self.clients.iter_mut().rev() {
                if client.address.as_deref() == Some(address.as_str()) && !client.wire.closed {
                    if newest {
                        eprintln!(
                            "akledger: sidecar: tcp: agent {address:?} connected from {}",
                            client.wire.peer
                        );
                        newest = false;
                    } else {
                        client.wire.closed = true;
                    }
                }
            }
        }
        self.reap();
        Ok(received)
    }

    fn input_cursor(&self) -> InputCursor {
        InputCursor {
            offset: self.received,
            file: None,
        }
    }

    fn resume_at(&mut self, cursor: &InputCursor) -> std::io::Result<()> {
        // A stream cannot be rewound: only the count goes on.
        self.received = self.received.max(cursor.offset);
        Ok(())
    }

    fn lane(&self, envelope: &Envelope) -> String {
        envelope.to.clone()
    }

    fn send(&mut self, envelope: &Envelope, token: u64) -> std::io::Result<()> {
        self.queues
            .entry(envelope.to.clone())
            .or_default()
            .push_back((token, envelope.encode_protobuf()));
        Ok(())
    }

    fn deliver(&mut self) -> std::io::Result<Option<u64>> {
        if self.done.is_empty() {
            self.pump();
        }
        Ok(self.done.pop_front())
    }

    fn queued(&self) -> usize {
        let waiting: usize = self.queues.values().map(VecDeque::len).sum();
        let in_flight: usize = self.clients.iter().map(|c| c.in_out.len()).sum();
        waiting + in_flight
    }

    fn output_position(&mut self) -> std::io::Result<u64> {
        Ok(0)
    }

    fn already_sent(&mut self, _from: u64, _expected: &[Envelope]) -> std::io::Result<usize> {
        // Nothing to compare with: what was written in the instant before a crash is
        // written again.
        Ok(0)
    }
}
