//! `akledger verify-proof`: checks an inclusion or consistency proof (PROFILE §13 JSON)
//! offline against signed checkpoints and the log's verifier key. Exit 0 when it holds, 1
//! when it does not (`proof_invalid`, `checkpoint_invalid`), 2 on usage errors.

use clap::Args;
use std::path::PathBuf;

use akledger::canonical::parse_value;
use akledger::tlog::{Checkpoint, ConsistencyProof, InclusionProof, TlogError};

use super::checkpoint::{read_note, read_vkey};
use super::output::{print_lines, read_bounded, CliError, Outcome};

/// Check a proof against checkpoints, offline.
///
/// An inclusion proof (`akledger prove ID --json`) is checked against the checkpoint note
/// of its tree size; a consistency proof (`prove --consistency M --json`) between
/// `--old-checkpoint` (size M) and `--checkpoint` (size N). Each note must carry a valid
/// signature by VKEY (`akledger checkpoint --print-vkey`). Prints `ok: …`, or the code and
/// why, and exits 0 when the proof holds, 1 when it does not (proof_invalid,
/// checkpoint_invalid), 2 on usage errors.
///
/// Example: akledger verify-proof --proof event.proof.json --checkpoint books.checkpoint --vkey books.vkey
#[derive(Args, Debug)]
pub struct VerifyProofArgs {
    /// The proof, in PROFILE §13's JSON form.
    #[arg(long, value_name = "FILE")]
    pub proof: PathBuf,
    /// The signed checkpoint note of the proof's (new) tree size.
    #[arg(long, value_name = "NOTE")]
    pub checkpoint: PathBuf,
    /// The log's verifier key file (`<name>+<key id>+<base64>`).
    #[arg(long, value_name = "VKEY")]
    pub vkey: PathBuf,
    /// For a consistency proof: the signed checkpoint note of the old size.
    #[arg(long, value_name = "NOTE")]
    pub old_checkpoint: Option<PathBuf>,
}

/// `akledger verify-proof`.
pub fn run(args: VerifyProofArgs) -> Result<Outcome, CliError> {
    let vkey = read_vkey(&args.vkey)?;
    let proof = read_bounded(&args.proof, 1 << 20)?;
    let note = read_note(&args.checkpoint)?;
    let consistency = parse_value(&proof)
        .ok()
        .and_then(|v| Some(v.as_object()?.get("old_size").is_some()))
        .unwrap_or(false);
    let old_note = match (&args.old_checkpoint, consistency) {
        (Some(path), true) => Some(read_note(path)?),
        (None, false) => None,
        (None, true) => return Err(CliError::Usage(
            "a consistency proof is checked between two checkpoints: pass --old-checkpoint NOTE"
                .into(),
        )),
        (Some(_), false) => {
            return Err(CliError::Usage(
                "--old-checkpoint is for consistency proofs; this is not one".into(),
            ))
        }
    };
    let verdict = (|| -> Result<String, TlogError> {
        let new = Checkpoint::open(&note, &vkey)?;
        match old_note {
            Some(old_note) => {
                let old = Checkpoint::open(&old_note, &vkey)?;
                let proof = ConsistencyProof::from_json(&proof)?;
                proof.verify_between(&old, &new)?;
                Ok(format!(
                    "ok: the tree of {} events of {} extends its tree of {} events",
                    new.size(),
                    new.origin(),
                    old.size()
                ))
            }
            None => {
                let proof = InclusionProof::from_json(&proof)?;
                proof.verify_against(&new)?;
                Ok(format!(
                    "ok: {} is event number {} of the tree of {} events of {}",
                    proof.event_id(),
                    proof.leaf_index(),
                    new.size(),
                    new.origin()
                ))
            }
        }
    })();
    match verdict {
        Ok(line) => {
            print_lines([line])?;
            Ok(Outcome::Clean)
        }
        Err(e) => {
            print_lines([format!("{}: {}", e.code(), e.message())])?;
            Ok(Outcome::Findings)
        }
    }
}
