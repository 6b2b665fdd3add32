//! `akledger verify FILE`: each event of a log checked on its own.

use std::io::{self, Write};
use std::path::Path;

use akledger::canonical::{to_canonical, Json, Object};
use akledger::{Event, Verifier};

use super::output::{emit, load_keyring, open_log, rejection_line, CliError, Outcome};

/// Runs the command.
pub fn run(file: &Path, keyring: Option<&Path>, json: bool) -> Result<Outcome, CliError> {
    let verifier = Verifier::new(load_keyring(keyring)?);
    let reader = open_log(file)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut outcome = Outcome::Clean;
    for item in reader {
        let item = item.map_err(|e| CliError::Io(file.to_owned(), e))?;
        let parsed = item.bytes.and_then(|b| Event::parse(&b));
        let id = parsed.as_ref().ok().map(|e| e.id().to_string());
        let result = parsed.and_then(|e| e.verify(&verifier));
        if result.is_err() {
            outcome = Outcome::Findings;
        }
        let line = match (&result, json) {
            (Ok(e), false) => format!("{} ok", e.id()),
            (Err(r), false) => {
                let who =
                    id.unwrap_or_else(|| format!("item {} (byte {})", item.index, item.offset));
                format!("{who} {}", rejection_line(r))
            }
            (Ok(_), true) => to_json_line(item.index, id.as_deref(), None),
            (Err(r), true) => to_json_line(item.index, id.as_deref(), Some(r)),
        };
        emit(&mut out, &line)?;
    }
    out.flush()
        .map_err(|e| CliError::Io("<stdout>".into(), e))?;
    Ok(outcome)
}

fn to_json_line(index: usize, id: Option<&str>, rejection: Option<&akledger::Rejection>) -> String {
    let mut obj = Object::new()
        .with("index", Json::Int(i64::try_from(index).unwrap_or(i64::MAX)))
        .with("event_id", id.map_or(Json::Null, Json::from))
        .with("ok", rejection.is_none().into());
    if let Some(r) = rejection {
        obj.insert("code", r.code().as_str().into());
        obj.insert("message", r.message().into());
    }
    String::from_utf8_lossy(&to_canonical(&obj.into())).into_owned()
}
