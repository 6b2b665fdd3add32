//! The link between two sidecars, its frames and its handshake (pure: the nonces come from
//! the caller). The IO is in [`crate::link`].
//!
//! Every frame is a 4-byte big-endian length, then that many bytes: a type byte and a
//! body (see `docs/format.md`):
//!
//! | type | frame      | body |
//! |------|------------|------|
//! | 1    | `Hello`    | version (1), nonce (32 bytes) |
//! | 2    | `Proof`    | Ed25519 public key (32), next expected sequence number (u64 BE), signature (64) |
//! | 3    | `Envelope` | sequence number (u64 BE), the envelope as AEA serializes it |
//! | 4    | `Ack`      | next expected sequence number (u64 BE) |
//!
//! **Handshake.** Each side sends `Hello` with a fresh nonce, then, once it has the other's,
//! `Proof`: its key, the sequence number of the next envelope it expects from the other,
//! and its signature over `"akledger link v1"`, the other's nonce, its own nonce, its key
//! and that number. A side accepts a proof by the one key it was configured with, over its
//! own fresh nonce: nobody else can join the link, and no recorded handshake replays.
//!
//! **Exactly once.** Envelopes carry consecutive sequence numbers per direction. The
//! receiver takes the next expected one, ignores one it already has, and closes the link on
//! a gap; it acknowledges what it has made durable. The sender keeps every envelope until
//! it is acknowledged and, after a reconnect, resends from the number the peer's `Proof`
//! names.

use akledger::ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};

/// The handshake's version.
pub const LINK_VERSION: u8 = 1;

/// What a proof signs first.
const CONTEXT: &[u8] = b"akledger link v1";

/// One frame.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Frame {
    /// A side's nonce.
    Hello {
        /// Fresh random bytes.
        nonce: [u8; 32],
    },
    /// A side's proof that it holds its key.
    Proof {
        /// Its public key.
        key: [u8; 32],
        /// The next sequence number it expects.
        next_expected: u64,
        /// Its signature (see the module doc).
        signature: [u8; 64],
    },
    /// An envelope.
    Envelope {
        /// Its sequence number.
        seq: u64,
        /// The envelope as AEA serializes it.
        envelope: Vec<u8>,
    },
    /// Everything before this sequence number is taken in.
    Ack {
        /// The next sequence number expected.
        next_expected: u64,
    },
}

fn be64(bytes: &[u8]) -> Option<u64> {
    let mut b = [0; 8];
    b.copy_from_slice(bytes.get(..8)?);
    Some(u64::from_be_bytes(b))
}

fn array<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    let mut a = [0; N];
    a.copy_from_slice(bytes.get(..N)?);
    Some(a)
}

impl Frame {
    /// The frame's bytes, its length first.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        match self {
            Frame::Hello { nonce } => {
                body.extend([1, LINK_VERSION]);
                body.extend(nonce);
            }
            Frame::Proof {
                key,
                next_expected,
                signature,
            } => {
                body.push(2);
                body.extend(key);
                body.extend(next_expected.to_be_bytes());
                body.extend(signature);
            }
            Frame::Envelope { seq, envelope } => {
                body.push(3);
                body.extend(seq.to_be_bytes());
                body.extend(envelope);
            }
            Frame::Ack { next_expected } => {
                body.push(4);
                body.extend(next_expected.to_be_bytes());
            }
        }
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
        out
    }

    /// The first frame of `bytes` and how many bytes it took; `Ok(None)` when more bytes
    /// are needed; an error for a frame longer than `max` or malformed.
    pub fn decode(bytes: &[u8], max: usize) -> Result<Option<(Frame, usize)>, String> {
        let Some(len) = bytes.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(array(len).unwrap_or_default()) as usize;
        if len > max {
            return Err(format!("a frame of {len} bytes (more than {max})"));
        }
        let Some(frame) = bytes.get(4..4 + len) else {
            return Ok(None);
        };
        let malformed = || format!("a malformed frame of {len} bytes");
        let (&kind, body) = frame.split_first().ok_or_else(malformed)?;
        let frame = match (kind, body.len()) {
            (1, 33) => {
                if body.first() != Some(&LINK_VERSION) {
                    return Err(format!(
                        "link version {:?}, not {LINK_VERSION}",
                        body.first()
                    ));
                }
                Frame::Hello {
                    nonce: array(body.get(1..).unwrap_or_default()).ok_or_else(malformed)?,
                }
            }
            (2, 104) => Frame::Proof {
                key: array(body).ok_or_else(malformed)?,
                next_expected: be64(body.get(32..).unwrap_or_default()).ok_or_else(malformed)?,
                signature: array(body.get(40..).unwrap_or_default()).ok_or_else(malformed)?,
            },
            (3, 8..) => Frame::Envelope {
                seq: be64(body).ok_or_else(malformed)?,
                envelope: body.get(8..).unwrap_or_default().to_vec(),
            },
            (4, 8) => Frame::Ack {
                next_expected: be64(body).ok_or_else(malformed)?,
            },
            _ => return Err(malformed()),
        };
        Ok(Some((frame, 4 + len)))
    }
}

/// What a proof signs.
fn signed(
    verifier_nonce: &[u8; 32],
    signer_nonce: &[u8; 32],
    key: &[u8; 32],
    next: u64,
) -> Vec<u8> {
    let mut m = Vec::with_capacity(CONTEXT.len() + 104);
    m.extend(CONTEXT);
    m.extend(verifier_nonce);
    m.extend(signer_nonce);
    m.extend(key);
    m.extend(next.to_be_bytes());
    m
}

/// This side's proof, for a peer that sent `their_nonce`.
pub fn prove(
    key: &SigningKey,
    their_nonce: &[u8; 32],
    my_nonce: &[u8; 32],
    next_expected: u64,
) -> Frame {
    let public = key.verifying_key().to_bytes();
    let signature = key.sign(&signed(their_nonce, my_nonce, &public, next_expected));
    Frame::Proof {
        key: public,
        next_expected,
        signature: signature.to_bytes(),
    }
}

/// Checks the peer's proof: by `peer`'s key, over `my_nonce` (sent in this side's `Hello`)
/// and `their_nonce`. Returns the sequence number the peer expects next.
pub fn check_proof(
    proof: &Frame,
    peer: &VerifyingKey,
    my_nonce: &[u8; 32],
    their_nonce: &[u8; 32],
) -> Result<u64, String> {
    let Frame::Proof {
        key,
        next_expected,
        signature,
    } = proof
    else {
        return Err("the peer did not send its proof".into());
    };
    if key != peer.as_bytes() {
        return Err("the peer proved another key than the one configured".into());
    }
    peer.verify_strict(
        &signed(my_nonce, their_nonce, key, *next_expected),
        &Signature::from_bytes(signature),
    )
    .map_err(|_| "the peer's proof does not verify".to_string())?;
    Ok(*next_expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_arrive_in_pieces() {
        let frames = [
            Frame::Hello { nonce: [7; 32] },
            prove(&SigningKey::from_bytes(&[1; 32]), &[2; 32], &[3; 32], 9),
            Frame::Envelope {
                seq: u64::MAX,
                envelope: b"\x0a\x01a".to_vec(),
            },
            Frame::Envelope {
                seq: 0,
                envelope: Vec::new(),
            },
            Frame::Ack { next_expected: 5 },
        ];
        let mut bytes = Vec::new();
        for f in &frames {
            bytes.extend(f.encode());
        }
        let mut at = 0;
        for f in &frames {
            for cut in at..at + 4 {
                assert_eq!(
                    Frame::decode(bytes.get(at..cut).unwrap(), 1 << 20),
                    Ok(None)
                );
            }
            let (got, used) = Frame::decode(bytes.get(at..).unwrap(), 1 << 20)
                .unwrap()
                .unwrap();
            assert_eq!(&got, f);
            at += used;
        }
        assert_eq!(at, bytes.len());
    }

    #[test]
    fn malformed_frames_are_errors() {
        let frame = |body: &[u8]| {
            let mut f = (body.len() as u32).to_be_bytes().to_vec();
            f.extend(body);
            f
        };
        for bad in [
            frame(&[]),
            frame(&[9]),
            frame(&[1, 2]),
            frame(&[4, 0, 0]),
            frame(&[3, 0, 0, 0]),
        ] {
            assert!(Frame::decode(&bad, 1 << 20).is_err(), "{bad:?}");
        }
        let mut other_version = Frame::Hello { nonce: [0; 32] }.encode();
        other_version[5] = 2;
        assert!(Frame::decode(&other_version, 1 << 20)
            .unwrap_err()
            .contains("version"));
        let long = Frame::Envelope {
            seq: 1,
            envelope: vec![0; 100],
        }
        .encode();
        assert!(Frame::decode(&long, 50)
            .unwrap_err()
            .contains("more than 50"));
    }

    #[test]
    fn a_proof_binds_the_key_both_nonces_and_the_number() {
        let key = SigningKey::from_bytes(&[1; 32]);
        let peer = key.verifying_key();
        let (mine, theirs) = ([2; 32], [3; 32]);
        // The peer signs over my nonce, then its own.
        let proof = prove(&key, &mine, &theirs, 42);
        assert_eq!(check_proof(&proof, &peer, &mine, &theirs), Ok(42));
        assert!(
            check_proof(&proof, &peer, &[9; 32], &theirs).is_err(),
            "another nonce of mine"
        );
        assert!(
            check_proof(&proof, &peer, &mine, &[9; 32]).is_err(),
            "another nonce of theirs"
        );
        let stranger = SigningKey::from_bytes(&[4; 32]).verifying_key();
        assert!(check_proof(&proof, &stranger, &mine, &theirs)
            .unwrap_err()
            .contains("another key"));
        let Frame::Proof {
            key: k, signature, ..
        } = proof
        else {
            unreachable!()
        };
        let changed = Frame::Proof {
            key: k,
            next_expected: 41,
            signature,
        };
        assert!(
            check_proof(&changed, &peer, &mine, &theirs).is_err(),
            "another number"
        );
        assert!(check_proof(&Frame::Ack { next_expected: 1 }, &peer, &mine, &theirs).is_err());
    }
}
