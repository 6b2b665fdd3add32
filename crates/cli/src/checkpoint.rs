//! `akledger checkpoint`: the ledger tree's signed checkpoint (PROFILE §13), a C2SP
//! `tlog-checkpoint` note signed with a key file of its own (never a sidecar key), or with
//! `--print-vkey` the verifier key that checks it. Also the helpers the tree's other
//! commands share: opening a ledger under an origin, reading key, note and proof files.

use clap::Args;
use std::path::{Path, PathBuf};

use akledger::ed25519_dalek::SigningKey;
use akledger::layout;
use akledger::limits::MAX_NOTE_BYTES;
use akledger::tlog::{NoteSigner, VerifierKey};
use akledger::{Config, Ledger};

use super::keys::load_signing_key;
use super::output::{
    emit_raw, load_keyring, read_bounded, stdout_result, CliError, LedgerArgs, Outcome,
};

/// Print the ledger tree's signed checkpoint (a C2SP tlog-checkpoint note).
///
/// The note says the tree's size and root, signed with KEYFILE (an Ed25519 key file of
/// `akledger keygen`, used for checkpoints only) under the key name ORIGIN [default:
/// akledger/ followed by the token of the ledger's first event]. `--print-vkey` prints
/// instead the verifier key (`<name>+<key id>+<base64>`) auditors check notes with.
///
/// The note is also recorded as the ledger's latest checkpoint, DIR/checkpoint (after the
/// log is made durable): every later open, by any command, refuses a log that no longer
/// extends it (checkpoint_mismatch: a log rolled back or replaced). `--no-record` only
/// prints (a read-only open, while another process writes the ledger too).
///
/// Example: akledger checkpoint --dir ./books --key ckpt.key.json > books.checkpoint
#[derive(Args, Debug)]
pub struct CheckpointArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The checkpoint key file (an Ed25519 key file; never a sidecar key).
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// The log's origin, also the key's name [default: akledger/<first event's token>].
    #[arg(long, value_name = "ORIGIN")]
    pub origin: Option<String>,
    /// Print the verifier key text instead of a checkpoint.
    #[arg(long)]
    pub print_vkey: bool,
    /// Print the checkpoint without recording it in the ledger directory.
    #[arg(long)]
    pub no_record: bool,
}

/// `akledger checkpoint`.
pub fn run(args: CheckpointArgs) -> Result<Outcome, CliError> {
    let key = load_checkpoint_key(&args.ledger, &args.key)?;
    let read_only = args.print_vkey || args.no_record;
    let ledger = open_tree(&args.ledger, args.origin.as_deref(), read_only)?;
    let text = if args.print_vkey {
        let signer = NoteSigner::new(&ledger.origin()?, key).map_err(akledger::Error::from)?;
        format!("{}\n", signer.verifier_key())
    } else if args.no_record {
        ledger.checkpoint(&key)?
    } else {
        ledger.record_checkpoint(&key)?
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    emit_raw(&mut out, &text)?;
    stdout_result(std::io::Write::flush(&mut out))?;
    Ok(Outcome::Clean)
}

/// The checkpoint key from its key file: an Ed25519 key file, and not the sidecar
/// runtime's controller key in the ledger directory (a checkpoint key signs nothing else).
pub fn load_checkpoint_key(ledger: &LedgerArgs, path: &Path) -> Result<SigningKey, CliError> {
    let controller = ledger.dir.join(layout::CONTROLLER_KEY);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(path, &controller) {
        return Err(CliError::Usage(format!(
            "{}: this is the sidecar runtime's controller key; a checkpoint key is a key file of its own (`akledger keygen --out ckpt.key.json`)",
            path.display()
        )));
    }
    load_signing_key(path)
}

/// Opens the existing ledger in `ledger.dir` (read-only when asked), its tree under
/// `origin` when one is given.
pub fn open_tree(
    ledger: &LedgerArgs,
    origin: Option<&str>,
    read_only: bool,
) -> Result<Ledger, CliError> {
    ledger.require_ledger()?;
    let keyring = load_keyring(ledger.keyring_path().as_deref())?;
    let mut config = Config::new(&ledger.dir)
        .keyring(keyring)
        .read_only(read_only);
    if let Some(origin) = origin {
        config = config.origin(origin);
    }
    let opened = Ledger::open_with(config)?;
    for action in opened.open_report().actions() {
        eprintln!("akledger: recovery: {action}");
    }
    Ok(opened)
}

/// A verifier key file: its text, `<name>+<8 hex digits>+<base64>`; a usage error
/// otherwise.
pub fn read_vkey(path: &Path) -> Result<VerifierKey, CliError> {
    let bytes = read_bounded(path, 4096)?;
    let text = String::from_utf8(bytes).unwrap_or_default();
    VerifierKey::parse(text.trim()).map_err(|e| {
        CliError::Usage(format!(
            "{}: not a note verifier key (<name>+<key id>+<base64>): {}",
            path.display(),
            e.message()
        ))
    })
}

/// A signed note's bytes, at most [`MAX_NOTE_BYTES`].
pub fn read_note(path: &Path) -> Result<Vec<u8>, CliError> {
    read_bounded(path, MAX_NOTE_BYTES as u64)
}
