//! `akledger witness`: a witness's cosignature (C2SP `tlog-cosignature`, `cosignature/v1`)
//! on a log's checkpoint (PROFILE §13), given only once the checkpoint is shown to extend
//! the last one this witness cosigned for that log (kept in a state file). The time of the
//! cosignature is read here, never in the core.

use clap::Args;
use std::path::{Path, PathBuf};

use akledger::tlog::{Checkpoint, ConsistencyProof, Cosigner, Note, TlogError, VerifierKey};
use akledger::Code;

use super::checkpoint::{read_note, read_vkey};
use super::keys::load_signing_key;
use super::output::{emit_raw, print_lines, read_bounded, stdout_result, CliError, Outcome};

/// Cosign a log's checkpoint as a witness, if it extends the last one cosigned.
///
/// Verifies NOTE with the log's verifier key; when the state file S holds a checkpoint this
/// witness cosigned before for the same log, NOTE must be the same tree or a larger one
/// with a consistency proof from it (`--proof`, from `akledger prove --consistency M
/// --json`). Then prints NOTE with this witness's `cosignature/v1` line added (signed with
/// KEYFILE under NAME, at the current time) and keeps it in S. A checkpoint that does not
/// verify or does not extend the last one is refused: exit 1 (checkpoint_invalid,
/// checkpoint_mismatch, proof_invalid), nothing printed or kept. The first checkpoint seen
/// for a log (no state file) is taken on trust.
///
/// Example: akledger witness --key w.key.json --name witness.example --state w.state --log-vkey books.vkey --checkpoint books.checkpoint --proof cons.json
#[derive(Args, Debug)]
pub struct WitnessArgs {
    /// The witness's Ed25519 key file.
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// The witness's key name (a note key name: no spaces or `+`).
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// The state file: the last checkpoint this witness cosigned for the log (created on
    /// the first one).
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,
    /// The log's verifier key file (`akledger checkpoint --print-vkey`).
    #[arg(long, value_name = "VKEY")]
    pub log_vkey: PathBuf,
    /// The checkpoint note to cosign.
    #[arg(long, value_name = "NOTE")]
    pub checkpoint: PathBuf,
    /// The consistency proof from the state's checkpoint to NOTE.
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
}

/// `akledger witness`.
pub fn run(args: WitnessArgs) -> Result<Outcome, CliError> {
    let cosigner = Cosigner::new(&args.name, load_signing_key(&args.key)?)
        .map_err(|e| CliError::Usage(format!("--name {:?}: {}", args.name, e.message())))?;
    let log_key = read_vkey(&args.log_vkey)?;
    let note = read_note(&args.checkpoint)?;
    let proof = args
        .proof
        .as_deref()
        .map(|p| read_bounded(p, 1 << 20))
        .transpose()?;
    let previous = read_state(&args.state)?;
    let verdict = decide(
        &note,
        &log_key,
        previous.as_deref(),
        proof.as_deref(),
        &args,
    );
    let (checkpoint, parsed) = match verdict {
        Ok(v) => v,
        Err(Refusal::Usage(message)) => return Err(CliError::Usage(message)),
        Err(Refusal::Refused(e)) => {
            print_lines([format!("refused: {}: {}", e.code(), e.message())])?;
            return Ok(Outcome::Findings);
        }
    };
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| CliError::Usage(format!("the clock is before 1970: {e}")))?
        .as_secs();
    let cosigned = (|| -> Result<String, TlogError> {
        let line = cosigner.cosign(&checkpoint, time)?;
        let mut signatures: Vec<_> = parsed
            .signatures()
            .iter()
            .filter(|s| s.name() != cosigner.name() || s.key_id() != cosigner.key_id())
            .cloned()
            .collect();
        signatures.push(line);
        Ok(Note::new(parsed.text(), signatures)?.to_text())
    })()
    .map_err(|e| CliError::Ledger(akledger::Error::Tlog(e)))?;
    akledger::store::atomic::replace(&args.state, cosigned.as_bytes(), None)
        .map_err(|e| CliError::Io(args.state.clone(), e))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    emit_raw(&mut out, &cosigned)?;
    stdout_result(std::io::Write::flush(&mut out))?;
    Ok(Outcome::Clean)
}

/// Why a checkpoint is not cosigned.
enum Refusal {
    /// The arguments cannot decide it (exit 2).
    Usage(String),
    /// It does not verify or does not extend the last one (exit 1).
    Refused(TlogError),
}

impl From<TlogError> for Refusal {
    fn from(e: TlogError) -> Self {
        Refusal::Refused(e)
    }
}

/// The state file's note, when there is one.
fn read_state(path: &Path) -> Result<Option<Vec<u8>>, CliError> {
    if !path.exists() {
        return Ok(None);
    }
    read_note(path).map(Some)
}

/// The checkpoint to cosign and its note, when `note` verifies and extends `previous`.
fn decide(
    note: &[u8],
    log_key: &VerifierKey,
    previous: Option<&[u8]>,
    proof: Option<&[u8]>,
    args: &WitnessArgs,
) -> Result<(Checkpoint, Note), Refusal> {
    let checkpoint = Checkpoint::open(note, log_key)?;
    let parsed = Note::parse(note)?;
    let Some(previous) = previous else {
        return Ok((checkpoint, parsed));
    };
    let old = Checkpoint::open(previous, log_key).map_err(|e| {
        Refusal::Usage(format!(
            "{}: not a checkpoint of this log ({}); give each log its own state file",
            args.state.display(),
            e.message()
        ))
    })?;
    let mismatch =
        |message: String| Refusal::Refused(TlogError::new(Code::CheckpointMismatch, message));
    if checkpoint.size() < old.size() {
        return Err(mismatch(format!(
            "the checkpoint's tree of {} events is smaller than the {} already cosigned",
            checkpoint.size(),
            old.size()
        )));
    }
    if checkpoint.size() == old.size() {
        return if checkpoint.root() == old.root() {
            Ok((checkpoint, parsed))
        } else {
            Err(mismatch(format!(
                "the checkpoint's tree of {} events has another root than the one already cosigned",
                checkpoint.size()
            )))
        };
    }
    let Some(proof) = proof else {
        return Err(Refusal::Usage(format!(
            "the checkpoint grows the tree from {} to {} events: pass --proof with the consistency proof (akledger prove --consistency {} --size {} --json)",
            old.size(),
            checkpoint.size(),
            old.size(),
            checkpoint.size()
        )));
    };
    ConsistencyProof::from_json(proof)?.verify_between(&old, &checkpoint)?;
    Ok((checkpoint, parsed))
}
