//! `akledger prove`: an inclusion proof of an admitted event, or a consistency proof
//! between two sizes of the ledger tree (PROFILE §13), as §13's JSON or as text.

use clap::Args;

use akledger::tlog::Hash;

use super::checkpoint::open_tree;
use super::output::{
    emit_raw, print_lines, resolve_id_at, stdout_result, CliError, LedgerArgs, Outcome,
};

/// Print the proof that an event is in the ledger tree, or that the tree extends an
/// earlier size.
///
/// `prove ID` proves that event ID is in the tree of N events (`--size N`, default the
/// whole tree); `prove --consistency M` proves that the tree of N events extends the tree
/// of M. `--json` prints PROFILE §13's JSON form, which `akledger verify-proof` checks
/// against checkpoints. Sizes past the tree, an event not admitted or admitted at or after
/// N are refused (proof_invalid, exit 2).
///
/// Example: akledger prove --dir ./books ak:event:… --json > event.proof.json
#[derive(Args, Debug)]
pub struct ProveArgs {
    /// The event to prove (an inclusion proof).
    #[arg(
        required_unless_present = "consistency",
        conflicts_with = "consistency"
    )]
    pub id: Option<String>,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Prove that the tree extends its first M events (a consistency proof).
    #[arg(long, value_name = "M")]
    pub consistency: Option<u64>,
    /// The tree's size [default: every admitted event].
    #[arg(long, value_name = "N")]
    pub size: Option<u64>,
    /// The log's origin named in the proof [default: akledger/<first event's token>].
    #[arg(long, value_name = "ORIGIN")]
    pub origin: Option<String>,
    /// Print the proof's JSON form (PROFILE §13).
    #[arg(long)]
    pub json: bool,
}

/// `akledger prove`.
pub fn run(args: ProveArgs) -> Result<Outcome, CliError> {
    let id = args
        .id
        .as_deref()
        .map(|id| resolve_id_at(&args.ledger, id))
        .transpose()?;
    let ledger = open_tree(&args.ledger, args.origin.as_deref(), true)?;
    let (json, lines) = match (id, args.consistency) {
        (Some(id), _) => {
            let proof = ledger.inclusion_proof(&id, args.size)?;
            let head = format!(
                "inclusion of {} (event number {}) in the tree of {} events of {}",
                proof.event_id(),
                proof.leaf_index(),
                proof.tree_size(),
                proof.origin()
            );
            (proof.to_json(), with_hashes(head, proof.hashes()))
        }
        (None, Some(old)) => {
            let proof = ledger.consistency_proof(old, args.size)?;
            let head = format!(
                "consistency of the tree of {} events with its first {} events, of {}",
                proof.new_size(),
                proof.old_size(),
                proof.origin()
            );
            (proof.to_json(), with_hashes(head, proof.hashes()))
        }
        (None, None) => {
            return Err(CliError::Usage(
                "name an event to prove, or --consistency M".into(),
            ))
        }
    };
    if args.json {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        emit_raw(&mut out, &format!("{}\n", String::from_utf8_lossy(&json)))?;
        stdout_result(std::io::Write::flush(&mut out))?;
    } else {
        print_lines(lines)?;
    }
    Ok(Outcome::Clean)
}

/// The text form: a heading, then one `hash <base64>` line per hash of the path.
fn with_hashes(head: String, hashes: &[Hash]) -> Vec<String> {
    std::iter::once(head)
        .chain(hashes.iter().map(|h| format!("hash {}", h.to_base64())))
        .collect()
}
