//! `akledger disclose` and `akledger verify-disclosure` (PROFILE §14.3): print one value
//! this ledger's author kept off the ledger, with its salt, and check a disclosure against
//! the sealed event it belongs to.

use clap::Args;

use akledger::actors::Disclosure;
use akledger::canonical::parse_value;
use akledger::EventId;

use super::output::{
    json_text, print_lines, read_bounded, resolve_id, CliError, LedgerArgs, Outcome,
};

/// Print the disclosure of a redacted field of an event this ledger's author sealed.
///
/// The disclosure is {"event_id","field","salt","value"} (exit 1 when the disclosure store
/// has none).
///
/// Hand it only to whoever may see the value; `verify-disclosure` checks it against the
/// sealed event.
///
/// Example: akledger disclose ak:event:… passport > passport.json
#[derive(Args, Debug)]
pub struct DiscloseArgs {
    /// The sealed event.
    pub event: String,
    /// The redacted field.
    pub field: String,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Accepted for symmetry: the output is always the disclosure's JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Check a disclosure file against the sealed event it names.
///
/// Exit 0 when its value and salt open the commitment the event holds in that field, 1
/// when they do not.
///
/// The event is decrypted with the keyring's sidecar key (`--keyring`, default
/// DIR/keyring.json).
///
/// Example: akledger verify-disclosure passport.json
#[derive(Args, Debug)]
pub struct VerifyDisclosureArgs {
    /// The disclosure file (JSON, as `disclose` prints it).
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub ledger: LedgerArgs,
}

/// A disclosure file is one small JSON object; values are at most an event's size.
const MAX_DISCLOSURE_FILE: u64 = 2 * akledger::limits::MAX_EVENT_BYTES as u64;

/// `akledger disclose EVENT FIELD`.
pub fn disclose(args: DiscloseArgs) -> Result<Outcome, CliError> {
    let ledger = args.ledger.open()?;
    let event: EventId = resolve_id(&ledger, &args.event)?;
    match ledger.disclosure(&event, &args.field)? {
        Some(d) => {
            print_lines([json_text(&d.to_json())])?;
            Ok(Outcome::Clean)
        }
        None => {
            eprintln!(
                "akledger: disclose: the disclosure store of {} holds no {:?} of {event}",
                args.ledger.dir.display(),
                args.field
            );
            Ok(Outcome::Findings)
        }
    }
}

/// `akledger verify-disclosure FILE`.
pub fn verify(args: VerifyDisclosureArgs) -> Result<Outcome, CliError> {
    let bytes = read_bounded(&args.file, MAX_DISCLOSURE_FILE)?;
    let text = std::str::from_utf8(&bytes).unwrap_or_default().trim_end();
    let disclosure = parse_value(text.as_bytes())
        .and_then(|v| Disclosure::from_json(&v))
        .map_err(|r| CliError::Usage(format!("{}: {r}", args.file.display())))?;
    let ledger = args.ledger.open()?;
    let opens = ledger.verify_disclosure(&disclosure)?;
    let verdict = if opens {
        "opens the commitment"
    } else {
        "does NOT open the commitment"
    };
    print_lines([format!(
        "{}: {verdict} in field {:?} of {}",
        args.file.display(),
        disclosure.field,
        disclosure.event_id
    )])?;
    Ok(if opens {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
