//! Logs in and out of a ledger: `append`, `import`, `export`, and [`feed`], the batched
//! log-to-ledger loop that `audit` shares.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use akledger::canonical::Object;
use akledger::log_format::write_item;
use akledger::{Appended, EventId, Json, Ledger, Rejection};
use indicatif::ProgressBar;

use super::output::{
    count, emit, ids_json, json_text, open_log, open_output, parse_ids, rejection_line,
    stdout_error, CliError, FormatArg, LedgerArgs, Outcome,
};

/// Events per ledger batch.
const BATCH: usize = 1000;

/// Bytes of events per ledger batch: a batch is cut at whichever bound comes first, so a
/// log of large events (up to 1 MiB each) stays well within `limits::MAX_BATCH_BYTES`.
const BATCH_BYTES: usize = 32 << 20;

/// One log item after the ledger decided it.
pub struct Fed<'a> {
    /// 0-based position in the log.
    pub index: usize,
    /// Byte offset in the log.
    pub offset: u64,
    /// The item's bytes (empty when it could not be framed).
    pub bytes: &'a [u8],
    /// What the ledger did; items that cannot be framed are `Rejected` with no id.
    pub outcome: Appended,
}

/// A log item waiting for its batch's outcomes.
struct Queued {
    index: usize,
    offset: u64,
    bytes: Result<Arc<[u8]>, Rejection>,
}

/// Reads `file` and appends its items to `ledger` in batches through a [`Ledger::pipeline`]
/// (one batch is verified while the one before it is committed), calling `on` for each item
/// in log order. A batch is cut at [`BATCH`] items or [`BATCH_BYTES`] bytes, whichever comes
/// first. `progress`, when given, follows the byte offset.
pub fn feed(
    ledger: &Ledger,
    file: &Path,
    progress: Option<&ProgressBar>,
    mut on: impl FnMut(Fed<'_>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut pipeline = ledger.pipeline();
    // The batch whose outcomes the next push or finish returns.
    let mut committing: Vec<Queued> = Vec::new();
    let mut batch: Vec<Queued> = Vec::with_capacity(BATCH);
    let mut bytes = 0usize;
    let mut push = |batch: &mut Vec<Queued>,
                    committing: &mut Vec<Queued>,
                    on: &mut dyn FnMut(Fed<'_>) -> Result<(), CliError>|
     -> Result<(), CliError> {
        let good = batch.iter().filter_map(|q| q.bytes.clone().ok()).collect();
        let outcomes = pipeline.push(good)?;
        if let (Some(bar), Some(last)) = (progress, batch.last()) {
            bar.set_position(last.offset);
        }
        let decided = std::mem::replace(
            committing,
            std::mem::replace(batch, Vec::with_capacity(BATCH)),
        );
        report(&decided, outcomes.unwrap_or_default(), on)
    };
    for item in open_log(file)? {
        let item = item.map_err(|e| CliError::Io(file.to_owned(), e))?;
        let size = item.bytes.as_ref().map_or(0, Vec::len);
        if !batch.is_empty() && bytes + size > BATCH_BYTES {
            push(&mut batch, &mut committing, &mut on)?;
            bytes = 0;
        }
        bytes += size;
        batch.push(Queued {
            index: item.index,
            offset: item.offset,
            bytes: item.bytes.map(Arc::from),
        });
        if batch.len() == BATCH {
            push(&mut batch, &mut committing, &mut on)?;
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        push(&mut batch, &mut committing, &mut on)?;
    }
    report(&committing, pipeline.finish()?.unwrap_or_default(), &mut on)
}

/// Calls `on` for each item of a committed batch with its outcome (items that could not be
/// framed get their framing rejection).
fn report(
    batch: &[Queued],
    outcomes: Vec<Appended>,
    on: &mut dyn FnMut(Fed<'_>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut outcomes = outcomes.into_iter();
    for item in batch {
        let (bytes, outcome) = match &item.bytes {
            Ok(bytes) => {
                let outcome = outcomes
                    .next()
                    .ok_or_else(|| CliError::Usage("ledger returned too few outcomes".into()))?;
                (&bytes[..], outcome)
            }
            Err(rejection) => (
                &[][..],
                Appended::Rejected {
                    id: None,
                    rejection: rejection.clone(),
                },
            ),
        };
        on(Fed {
            index: item.index,
            offset: item.offset,
            bytes,
            outcome,
        })?;
    }
    Ok(())
}

/// The id of a rejected item: the ledger's, else the one its bytes name when they parse
/// (a bad signature still has an id; a digest mismatch does not).
pub fn rejected_id(id: Option<EventId>, bytes: &[u8]) -> Option<EventId> {
    id.or_else(|| akledger::Event::parse(bytes).ok().map(|e| e.id()))
}

/// Counts of outcomes.
#[derive(Default, Debug)]
pub struct Tally {
    /// Admitted on arrival.
    pub admitted: usize,
    /// Already stored with the same bytes.
    pub duplicates: usize,
    /// Stored, waiting for dependencies on arrival.
    pub pending: usize,
    /// Rejections by code.
    pub rejected: BTreeMap<&'static str, usize>,
}

impl Tally {
    /// Counts one outcome.
    pub fn add(&mut self, outcome: &Appended) {
        match outcome {
            Appended::Admitted(_) => self.admitted += 1,
            Appended::Duplicate(_) => self.duplicates += 1,
            Appended::Pending { .. } => self.pending += 1,
            Appended::Rejected { rejection, .. } => self.reject(rejection),
            _ => {}
        }
    }

    /// Counts one rejection.
    pub fn reject(&mut self, rejection: &Rejection) {
        *self.rejected.entry(rejection.code().as_str()).or_default() += 1;
    }

    /// All rejections.
    pub fn rejected_total(&self) -> usize {
        self.rejected.values().sum()
    }

    /// `N (code n, code n)`.
    pub fn rejected_text(&self) -> String {
        by_kind(self.rejected_total(), &self.rejected)
    }

    /// `{"admitted", "duplicates", "pending", "rejected", "rejected_by_code"}`.
    pub fn to_json(&self) -> Json {
        let mut codes = Object::new();
        for (code, n) in &self.rejected {
            codes.insert(*code, count(*n));
        }
        Object::new()
            .with("admitted", count(self.admitted))
            .with("duplicates", count(self.duplicates))
            .with("pending", count(self.pending))
            .with("rejected", count(self.rejected_total()))
            .with("rejected_by_code", codes.into())
            .into()
    }
}

/// `total (kind n, kind n)`, or just `total` when there is nothing to break down.
pub fn by_kind<K: std::fmt::Display>(total: usize, kinds: &BTreeMap<K, usize>) -> String {
    if kinds.is_empty() {
        return total.to_string();
    }
    let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
}

/// The short outcome word.
pub fn outcome_word(outcome: &Appended) -> &'static str {
    match outcome {
        Appended::Admitted(_) => "admitted",
        Appended::Duplicate(_) => "duplicate",
        Appended::Pending { .. } => "pending",
        _ => "rejected",
    }
}

/// `{"event_id", "outcome", "missing"?, "code"?, "message"?}` for one appended event.
pub fn outcome_json(outcome: &Appended, bytes: &[u8]) -> Object {
    let (id, extra) = match outcome {
        Appended::Admitted(id) | Appended::Duplicate(id) => (Some(*id), None),
        Appended::Pending { id, missing } => (Some(*id), Some(("missing", ids_json(missing)))),
        Appended::Rejected { id, .. } => (rejected_id(*id, bytes), None),
        _ => (None, None),
    };
    let mut obj = Object::new()
        .with("event_id", id.map_or(Json::Null, |i| i.to_string().into()))
        .with("outcome", outcome_word(outcome).into());
    if let Some((k, v)) = extra {
        obj.insert(k, v);
    }
    if let Appended::Rejected { rejection, .. } = outcome {
        obj.insert("code", rejection.code().as_str().into());
        obj.insert("message", rejection.message().into());
    }
    obj
}

/// The one-line text of an outcome: `<id> admitted`, `<id> pending (missing n)`, …
pub fn outcome_text(outcome: &Appended, bytes: &[u8]) -> String {
    match outcome {
        Appended::Admitted(id) => format!("{id} admitted"),
        Appended::Duplicate(id) => format!("{id} duplicate"),
        Appended::Pending { id, missing } => {
            format!("{id} pending (missing {})", missing.len())
        }
        Appended::Rejected { id, rejection } => {
            let who = rejected_id(*id, bytes).map_or("-".to_string(), |i| i.to_string());
            format!("{who} rejected {}", rejection_line(rejection))
        }
        _ => "unknown outcome".into(),
    }
}

/// `akledger append FILE|-`: one outcome line per event.
pub fn append(ledger: &LedgerArgs, file: &Path, json: bool) -> Result<Outcome, CliError> {
    let ledger = ledger.open_or_create()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut outcome = Outcome::Clean;
    feed(&ledger, file, None, |fed| {
        if matches!(fed.outcome, Appended::Rejected { .. }) {
            outcome = Outcome::Findings;
        }
        let line = if json {
            let obj = outcome_json(&fed.outcome, fed.bytes).with("index", count(fed.index));
            json_text(&obj.into())
        } else {
            format!(
                "index {}: {}",
                fed.index,
                outcome_text(&fed.outcome, fed.bytes)
            )
        };
        emit(&mut out, &line)
    })?;
    out.flush().map_err(stdout_error)?;
    Ok(outcome)
}

/// `akledger import FILE`: a summary.
pub fn import(ledger: &LedgerArgs, file: &Path, json: bool) -> Result<Outcome, CliError> {
    let ledger = ledger.open_or_create()?;
    let released_before = ledger.rejected_on_release().len();
    let mut tally = Tally::default();
    let mut events = 0usize;
    let mut first_problem: Option<String> = None;
    let fed = feed(&ledger, file, None, |fed| {
        events += 1;
        tally.add(&fed.outcome);
        if let (None, Appended::Rejected { rejection, .. }) = (&first_problem, &fed.outcome) {
            first_problem = Some(format!(
                "{}: item {} (byte {}): {}",
                file.display(),
                fed.index,
                fed.offset,
                rejection_line(rejection)
            ));
        }
        Ok(())
    });
    if let Err(e) = fed {
        if events == 0 {
            return Err(e);
        }
        eprintln!(
            "akledger: import stopped after {events} items of {}: {} admitted and {} pending were stored before the failure",
            file.display(),
            tally.admitted,
            tally.pending
        );
        return Err(e);
    }
    for (_, rejection) in ledger.rejected_on_release().iter().skip(released_before) {
        tally.reject(rejection);
    }
    let still_pending = ledger.pending().len();
    if json {
        let Json::Object(mut obj) = tally.to_json() else {
            unreachable!("tally is an object")
        };
        obj.insert("events", count(events));
        obj.insert("still_pending", count(still_pending));
        obj.insert("ledger_events", count(ledger.len()));
        super::output::print_json(&obj.into())?;
    } else {
        super::output::print_lines([
            format!(
                "{}: {events} events: {} admitted, {} duplicates, {} pending on arrival ({still_pending} still pending), {} rejected",
                file.display(),
                tally.admitted,
                tally.duplicates,
                tally.pending,
                tally.rejected_text()
            ),
            format!("ledger now holds {} events", ledger.len()),
        ])?;
        if let Some(line) = first_problem {
            eprintln!("akledger: first rejection: {line}");
        }
    }
    Ok(if tally.rejected_total() > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// `akledger export`: admitted events in admission order.
pub fn export(
    ledger: &LedgerArgs,
    format: FormatArg,
    since: &[String],
    out: Option<&Path>,
) -> Result<Outcome, CliError> {
    let ledger = ledger.open()?;
    let since = parse_ids(since)?;
    let keep: Option<HashSet<EventId>> = if since.is_empty() {
        None
    } else {
        Some(
            ledger
                .difference(&ledger.heads(), &since)?
                .into_iter()
                .collect(),
        )
    };
    let (mut writer, name) = open_output(out)?;
    let io_err = |e| CliError::Io(name.clone(), e);
    for event in ledger.iter() {
        let event = event?;
        if keep.as_ref().is_none_or(|k| k.contains(&event.id())) {
            write_item(&mut writer, format.into(), event.bytes()).map_err(io_err)?;
        }
    }
    writer.flush().map_err(io_err)?;
    Ok(Outcome::Clean)
}

/// `akledger drop-pending ID`: drop one pending event (recorded in the log).
pub fn drop_pending(ledger: &LedgerArgs, id: &str) -> Result<Outcome, CliError> {
    let id: EventId = super::output::parse_id(id)?;
    if ledger.open_or_create()?.drop_pending(&id)? {
        println!("dropped {id}");
        Ok(Outcome::Clean)
    } else {
        Err(CliError::Usage(format!("{id}: no such pending event")))
    }
}
