//! `akledger tiles`: the ledger tree written as a static C2SP `tlog-tiles` directory
//! (PROFILE §13) that any tlog-tiles client can check.

use clap::Args;
use std::path::PathBuf;

use super::checkpoint::{load_checkpoint_key, open_tree};
use super::output::{print_lines, CliError, LedgerArgs, Outcome};

/// Write the ledger tree as a static tlog-tiles directory.
///
/// OUT gets `checkpoint` (signed with KEYFILE, as `akledger checkpoint` signs), the hash
/// tiles `tile/<L>/<N>[.p/<W>]` and the entry bundles `tile/entries/<N>[.p/<W>]` (each
/// entry an event's 33-byte binary id behind its 16-bit length). Serve OUT over HTTP as it
/// is; rerunning replaces the files.
///
/// Example: akledger tiles --dir ./books --key ckpt.key.json --out ./books-tiles
#[derive(Args, Debug)]
pub struct TilesArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The checkpoint key file (an Ed25519 key file; never a sidecar key).
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// The directory to write.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The log's origin, also the key's name [default: akledger/<first event's token>].
    #[arg(long, value_name = "ORIGIN")]
    pub origin: Option<String>,
}

/// `akledger tiles`.
pub fn run(args: TilesArgs) -> Result<Outcome, CliError> {
    let key = load_checkpoint_key(&args.ledger, &args.key)?;
    let ledger = open_tree(&args.ledger, args.origin.as_deref(), true)?;
    let report = ledger.write_tiles(&args.out, &key)?;
    print_lines([format!(
        "wrote the tree of {} events to {}: {} hash tiles, {} entry bundles, checkpoint",
        report.tree_size,
        args.out.display(),
        report.hash_tiles,
        report.entry_bundles
    )])?;
    Ok(Outcome::Clean)
}
