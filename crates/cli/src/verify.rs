//! `akledger verify FILE`: each event of a log checked on its own.

use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;

use akledger::canonical::{to_canonical, Json, Object};
use akledger::{Event, EventId, Verifier};

use super::io::{claimed_id, who_text, Position};
use super::output::{
    emit, load_keyring, open_log, rejection_line, stdout_result, typed, CliError, Outcome,
};

/// Check each event of a log on its own (id, canonical form, proof), without a ledger.
///
/// Prints one line per event: its id and `ok`, or the PROFILE error code and why.
/// Exits 0 when every event is valid, 1 when any event is rejected, 2 on usage or IO
/// errors.
///
/// Example: akledger verify events.jsonl --json
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
    pub file: PathBuf,
    /// Keyring file authorizing keys for non-self-certifying principals (PROFILE §11).
    #[arg(long)]
    pub keyring: Option<PathBuf>,
    /// Print one JSON object per event instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: VerifyArgs) -> Result<Outcome, CliError> {
    let (file, keyring, json) = (args.file.as_path(), args.keyring.as_deref(), args.json);
    let verifier = Verifier::new(load_keyring(keyring)?);
    let reader = open_log(file)?;
    let format = reader.format();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut outcome = Outcome::Clean;
    for item in reader {
        let item = item.map_err(|e| CliError::Io(file.to_owned(), e))?;
        let pos = Position::new(item.index, item.offset, format);
        let claimed = item.bytes.as_deref().ok().and_then(claimed_id);
        let parsed = item.bytes.and_then(|b| Event::parse(&b));
        let parsed_id = parsed.as_ref().ok().map(Event::id);
        let id = parsed_id.map(|i| i.to_string());
        let result = parsed.and_then(|e| e.verify(&verifier));
        if result.is_err() {
            outcome = Outcome::Findings;
        }
        let line = match (&result, json) {
            (Ok(e), false) => format!("{} ok", e.id()),
            (Err(r), false) => {
                let who = who_text(parsed_id, claimed);
                format!("{}: {who} {}", pos.text(), rejection_line(r))
            }
            (Ok(_), true) => to_json_line(&pos, id.as_deref(), None, None),
            (Err(r), true) => to_json_line(&pos, id.as_deref(), claimed, Some(r)),
        };
        emit(&mut out, &line)?;
    }
    stdout_result(out.flush())?;
    Ok(outcome)
}

fn to_json_line(
    pos: &Position,
    id: Option<&str>,
    claimed: Option<EventId>,
    rejection: Option<&akledger::Rejection>,
) -> String {
    let mut obj = pos
        .add_to(Object::new())
        .with("event_id", id.map_or(Json::Null, Json::from))
        .with("ok", rejection.is_none().into());
    if let Some(r) = rejection {
        obj.insert("code", r.code().as_str().into());
        obj.insert("message", r.message().into());
    }
    if let (None, Some(c)) = (id, claimed) {
        obj.insert("claimed_event_id", c.to_string().into());
    }
    String::from_utf8_lossy(&to_canonical(&typed("akledger.verify.event", obj))).into_owned()
}
