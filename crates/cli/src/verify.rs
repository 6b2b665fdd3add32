//! `akledger verify FILE`: each event of a log checked on its own.

use std::io::{self, Write};
use std::path::Path;

use akledger::canonical::{to_canonical, Json, Object};
use akledger::{Event, EventId, Verifier};

use super::io::{claimed_id, who_text, Position};
use super::output::{
    emit, load_keyring, open_log, rejection_line, stdout_result, CliError, Outcome,
};

/// Runs the command.
pub fn run(file: &Path, keyring: Option<&Path>, json: bool) -> Result<Outcome, CliError> {
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
    String::from_utf8_lossy(&to_canonical(&obj.into())).into_owned()
}
