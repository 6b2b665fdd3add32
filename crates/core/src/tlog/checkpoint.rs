//! Checkpoints (C2SP `tlog-checkpoint`, PROFILE §13): the note text
//! `<origin>\n<size>\n<root>\n` and any extension lines, signed by the log's key, whose name
//! is the origin.
//!
//! [`Checkpoint::parse`] and [`Checkpoint::to_text`] are the body's two directions;
//! [`Checkpoint::sign`] and [`Checkpoint::open`] add and check the log's signature;
//! [`Checkpoint::check_log`] is the audit's comparison (`checkpoint_mismatch`).

use std::slice;

use super::error::{invalid_checkpoint, TlogError};
use super::hash::Hash;
use super::keys::{KeyKind, VerifierKey};
use super::note::Note;
use super::signer::NoteSigner;
use crate::error::Code;

/// A log's signed statement of its size and root, without the signatures.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Checkpoint {
    origin: String,
    size: u64,
    root: Hash,
    extensions: Vec<String>,
}

impl Checkpoint {
    /// The checkpoint of the tree of `size` leaves with `root`, for the log `origin` (a
    /// non-empty line without control characters).
    pub fn new(origin: &str, size: u64, root: Hash) -> Result<Self, TlogError> {
        if !is_line(origin) {
            return Err(invalid_checkpoint(
                "a checkpoint's origin is a non-empty line without control characters",
            ));
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions: Vec::new(),
        })
    }

    /// The same checkpoint with `lines` as its extension lines (each non-empty, no control
    /// characters). C2SP does not recommend them: monitors cannot audit them.
    pub fn with_extensions(mut self, lines: Vec<String>) -> Result<Self, TlogError> {
        if !lines.iter().all(|l| is_line(l)) {
            return Err(invalid_checkpoint(
                "an extension line is non-empty and holds no control character",
            ));
        }
        self.extensions = lines;
        Ok(self)
    }

    /// Parses a checkpoint body (a note's text): at least three lines, each ending in a
    /// newline; a non-empty origin; the size in decimal without leading zeros; the root in
    /// standard base64 of 32 bytes; non-empty extension lines, kept.
    pub fn parse(text: &str) -> Result<Self, TlogError> {
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| invalid_checkpoint("a checkpoint ends with a newline"))?;
        let mut lines = body.split('\n');
        let (Some(origin), Some(size), Some(root)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(invalid_checkpoint("a checkpoint has at least three lines"));
        };
        if !is_line(origin) {
            return Err(invalid_checkpoint("the checkpoint's origin line is empty"));
        }
        let size = parse_decimal(size)
            .ok_or_else(|| invalid_checkpoint("the checkpoint's size is not a decimal number"))?;
        let root = Hash::from_base64(root).ok_or_else(|| {
            invalid_checkpoint("the checkpoint's root is not 32 bytes of standard base64")
        })?;
        let extensions: Vec<String> = lines.map(str::to_owned).collect();
        Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions: Vec::new(),
        }
        .with_extensions(extensions)
    }

    /// The body: origin, size and root lines, then the extension lines, each ending in a
    /// newline.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n{}\n{}\n", self.origin, self.size, self.root);
        for line in &self.extensions {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The log's origin.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The tree size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The tree's root at that size.
    pub fn root(&self) -> &Hash {
        &self.root
    }

    /// The extension lines, without newlines.
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// The signed checkpoint note. The signer's name must be the origin (PROFILE §13).
    pub fn sign(&self, signer: &NoteSigner) -> Result<String, TlogError> {
        if signer.name() != self.origin {
            return Err(invalid_checkpoint(
                "a checkpoint is signed by the key named after its origin",
            ));
        }
        signer.sign(&self.to_text())
    }

    /// Opens a signed checkpoint note with the log's verifier key (an Ed25519 note key named
    /// after the origin): the note must parse, carry a signature by that key that verifies
    /// (other signatures are skipped), and hold a checkpoint whose origin is the key's name.
    /// Any failure is `checkpoint_invalid`.
    pub fn open(note: &[u8], log_key: &VerifierKey) -> Result<Checkpoint, TlogError> {
        if log_key.kind() != KeyKind::Ed25519 {
            return Err(invalid_checkpoint(
                "a log's checkpoint key is an Ed25519 note key, not a cosigner's",
            ));
        }
        let note = Note::parse(note)?;
        note.verify(slice::from_ref(log_key))?;
        let checkpoint = Checkpoint::parse(note.text())?;
        if checkpoint.origin != log_key.name() {
            return Err(invalid_checkpoint(format!(
                "the checkpoint's origin {:?} is not its key's name {:?}",
                checkpoint.origin,
                log_key.name()
            )));
        }
        Ok(checkpoint)
    }

    /// The audit's comparison (PROFILE §13): a log whose tree holds `log_size` leaves, with
    /// `root_at_size` its root at this checkpoint's size, must be at least as long and have
    /// this root there; otherwise `checkpoint_mismatch`. (`root_at_size` is not looked at
    /// when the log is shorter.)
    pub fn check_log(&self, log_size: u64, root_at_size: &Hash) -> Result<(), TlogError> {
        if log_size < self.size {
            return Err(TlogError::new(
                Code::CheckpointMismatch,
                format!(
                    "the log holds {log_size} events, fewer than the checkpoint's {}",
                    self.size
                ),
            ));
        }
        if *root_at_size != self.root {
            return Err(TlogError::new(
                Code::CheckpointMismatch,
                format!(
                    "the log's tree of {} events does not have the checkpoint's root",
                    self.size
                ),
            ));
        }
        Ok(())
    }
}

/// A non-empty line without control characters.
fn is_line(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(char::is_control)
}

/// A decimal `u64` spelled without sign or leading zeros ("0" for zero).
pub(crate) fn parse_decimal(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}
