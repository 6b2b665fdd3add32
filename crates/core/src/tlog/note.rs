//! Signed notes (C2SP `signed-note`): the text, a blank line, and signature lines
//! `— <key name> <base64(key ID ‖ signature)>`. [`Note::parse`] checks the syntax of
//! untrusted bytes; [`Note::verify`] checks the signatures against the keys a caller trusts.
//!
//! The rules, as C2SP and Go's `sumdb/note` state them: valid UTF-8, no control character
//! but newline, the text ends with a newline and is separated from the signatures by the
//! last blank line, at least one signature line and at most [`MAX_NOTE_SIGNATURES`], at most
//! [`MAX_NOTE_BYTES`] in all. A signature line whose name and key ID match a known key must
//! verify; others are kept but not checked; at least one must verify.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::cosignature::verify_cosignature;
use super::error::{invalid_checkpoint, TlogError};
use super::keys::{is_valid_key_name, KeyKind, VerifierKey};
use crate::limits::{MAX_NOTE_BYTES, MAX_NOTE_SIGNATURES};

/// What starts a signature line: an em dash (U+2014) and a space.
pub const SIGNATURE_PREFIX: &str = "\u{2014} ";

/// One signature line of a note, verified or not.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NoteSignature {
    name: String,
    key_id: u32,
    signature: Vec<u8>,
}

impl NoteSignature {
    /// A signature by the key `name` with `key_id`; `signature` is what follows the key ID
    /// (for Ed25519 the 64 signature bytes, for a cosignature the timestamp and them).
    pub fn new(name: &str, key_id: u32, signature: Vec<u8>) -> Result<Self, TlogError> {
        if !is_valid_key_name(name) {
            return Err(invalid_checkpoint(format!(
                "{name:?} is not a key name (non-empty, no '+', spaces or control characters)"
            )));
        }
        if signature.is_empty() {
            return Err(invalid_checkpoint("a note signature cannot be empty"));
        }
        Ok(NoteSignature {
            name: name.to_owned(),
            key_id,
            signature,
        })
    }

    /// The signer's key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The signer's key ID.
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// The bytes after the key ID.
    pub fn signature(&self) -> &[u8] {
        &self.signature
    }

    /// The signature line, newline included.
    pub fn line(&self) -> String {
        let mut raw = Vec::with_capacity(4 + self.signature.len());
        raw.extend_from_slice(&self.key_id.to_be_bytes());
        raw.extend_from_slice(&self.signature);
        format!("{SIGNATURE_PREFIX}{} {}\n", self.name, STANDARD.encode(raw))
    }

    /// Parses one signature line (without its newline).
    fn parse_line(line: &str) -> Result<Self, TlogError> {
        let bad = || invalid_checkpoint("malformed note signature line");
        let rest = line.strip_prefix(SIGNATURE_PREFIX).ok_or_else(bad)?;
        let (name, encoded) = rest.split_once(' ').ok_or_else(bad)?;
        if !is_valid_key_name(name) || encoded.is_empty() {
            return Err(bad());
        }
        let raw = STANDARD.decode(encoded).map_err(|_| bad())?;
        match raw.as_slice() {
            [a, b, c, d, signature @ ..] if !signature.is_empty() => Ok(NoteSignature {
                name: name.to_owned(),
                key_id: u32::from_be_bytes([*a, *b, *c, *d]),
                signature: signature.to_vec(),
            }),
            _ => Err(bad()),
        }
    }
}

/// A signature that verified, and by which key.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifiedSignature {
    /// The key's name.
    pub name: String,
    /// The key's ID.
    pub key_id: u32,
    /// What the key signs.
    pub kind: KeyKind,
    /// A cosignature's time (POSIX seconds); `None` for a plain signature.
    pub time: Option<u64>,
}

/// A note: its text and its signature lines, as parsed or as built; nothing verified yet.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Note {
    text: String,
    signatures: Vec<NoteSignature>,
}

impl Note {
    /// A note of `text` with `signatures` (at least one), as signers produce them.
    pub fn new(text: &str, signatures: Vec<NoteSignature>) -> Result<Self, TlogError> {
        check_text(text)?;
        if signatures.is_empty() {
            return Err(invalid_checkpoint("a note needs at least one signature"));
        }
        if signatures.len() > MAX_NOTE_SIGNATURES {
            return Err(too_many_signatures());
        }
        let note = Note {
            text: text.to_owned(),
            signatures,
        };
        if note.to_bytes().len() > MAX_NOTE_BYTES {
            return Err(too_large());
        }
        Ok(note)
    }

    /// Parses the bytes of a signed note (syntax only: [`Note::verify`] checks signatures).
    pub fn parse(bytes: &[u8]) -> Result<Self, TlogError> {
        if bytes.len() > MAX_NOTE_BYTES {
            return Err(too_large());
        }
        let all = std::str::from_utf8(bytes)
            .map_err(|_| invalid_checkpoint("the note is not valid UTF-8"))?;
        if all.chars().any(|c| c < ' ' && c != '\n') {
            return Err(control_character());
        }
        // The text is separated from the signatures by the last blank line.
        let split = all
            .rfind("\n\n")
            .ok_or_else(|| invalid_checkpoint("the note has no blank line before signatures"))?;
        let (Some(text), Some(block)) = (all.get(..split + 1), all.get(split + 2..)) else {
            return Err(invalid_checkpoint("malformed note"));
        };
        if block.is_empty() || !block.ends_with('\n') {
            return Err(invalid_checkpoint(
                "the note's signatures must be lines, each ending in a newline",
            ));
        }
        let mut signatures = Vec::new();
        // No line of the block is empty: an empty one would be a later blank line.
        for line in block.split_terminator('\n') {
            if signatures.len() == MAX_NOTE_SIGNATURES {
                return Err(too_many_signatures());
            }
            signatures.push(NoteSignature::parse_line(line)?);
        }
        Ok(Note {
            text: text.to_owned(),
            signatures,
        })
    }

    /// The text: every line, the last newline included, the separating blank line not.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The signature lines, in order.
    pub fn signatures(&self) -> &[NoteSignature] {
        &self.signatures
    }

    /// The note's bytes: the text, a blank line, the signature lines. For a parsed note these
    /// are exactly the bytes parsed.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_text().into_bytes()
    }

    /// The note as text (what [`Note::to_bytes`] returns, as a `String`).
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 1 + 100 * self.signatures.len());
        out.push_str(&self.text);
        out.push('\n');
        for s in &self.signatures {
            out.push_str(&s.line());
        }
        out
    }

    /// Checks the signatures against `known` keys: every line whose name and key ID match a
    /// known key must verify under it; lines by unknown keys are skipped; at least one
    /// must verify. Returns the verified ones, in note order. Errors are
    /// `checkpoint_invalid` and say only whose signature failed.
    pub fn verify(&self, known: &[VerifierKey]) -> Result<Vec<VerifiedSignature>, TlogError> {
        let mut verified = Vec::new();
        for sig in &self.signatures {
            let mut matching = known
                .iter()
                .filter(|k| k.name() == sig.name && k.key_id() == sig.key_id);
            let Some(key) = matching.next() else {
                continue;
            };
            if matching.any(|other| other != key) {
                return Err(invalid_checkpoint(format!(
                    "two different verifier keys are named {}+{:08x}",
                    sig.name, sig.key_id
                )));
            }
            let time = match key.kind() {
                KeyKind::Ed25519 => key
                    .verifies(self.text.as_bytes(), &sig.signature)
                    .then_some(None),
                KeyKind::CosignatureV1 => {
                    verify_cosignature(key, &self.text, &sig.signature).map(Some)
                }
            };
            let Some(time) = time else {
                return Err(invalid_checkpoint(format!(
                    "the signature by {} does not verify",
                    sig.name
                )));
            };
            verified.push(VerifiedSignature {
                name: sig.name.clone(),
                key_id: sig.key_id,
                kind: key.kind(),
                time,
            });
        }
        if verified.is_empty() {
            return Err(invalid_checkpoint(
                "the note has no signature by a known key",
            ));
        }
        Ok(verified)
    }
}

/// A note text as signers require it: at most [`MAX_NOTE_BYTES`], ending in a newline, no
/// control character but newline.
pub(crate) fn check_text(text: &str) -> Result<(), TlogError> {
    if text.len() > MAX_NOTE_BYTES {
        return Err(too_large());
    }
    if !text.ends_with('\n') {
        return Err(invalid_checkpoint("a note's text must end with a newline"));
    }
    if text.chars().any(|c| c < ' ' && c != '\n') {
        return Err(control_character());
    }
    Ok(())
}

fn too_large() -> TlogError {
    invalid_checkpoint(format!("the note is over {MAX_NOTE_BYTES} bytes"))
}

fn too_many_signatures() -> TlogError {
    invalid_checkpoint(format!(
        "the note has more than {MAX_NOTE_SIGNATURES} signatures"
    ))
}

fn control_character() -> TlogError {
    invalid_checkpoint("the note holds a control character other than newline")
}
