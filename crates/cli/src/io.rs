//! Logs in and out of a ledger: `append`, `import`, `export`, and [`feed`], the batched
//! log-to-ledger loop that `audit` shares.

use clap::Args;
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use akledger::canonical::Object;
use akledger::ledger::{LogPosition, LogSummary};
use akledger::log_format::write_item;
use akledger::{Appended, EventId, Json, Ledger, Rejection};
use indicatif::ProgressBar;

use super::output::{
    count, emit, ids_json, json_text, open_input, open_output, rejection_line, resolve_id,
    resolve_ids, stdout_result, typed, CliError, FormatArg, LedgerArgs, Outcome,
};

/// Where an item is in a log, in the one form every report uses: `line 500 (byte 776992)`
/// in text (`index 499 (byte …)` for a CBOR sequence, which has no lines) and
/// `index`/`line`/`byte` in JSON.
#[derive(Copy, Clone, Debug)]
pub struct Position {
    /// 0-based item index.
    pub index: usize,
    /// 1-based line (JSON Lines only: one item per line).
    pub line: Option<usize>,
    /// Byte offset of the item's start.
    pub byte: u64,
}

impl Position {
    /// The position of item `index` starting at `byte` in a log of `format`.
    pub fn new(index: usize, byte: u64, format: akledger::log_format::LogFormat) -> Position {
        LogPosition::new(index, byte, format).into()
    }

    /// `line 500 (byte 776992)`, or `index 499 (byte 776992)` without lines.
    pub fn text(&self) -> String {
        LogPosition::from(*self).to_string()
    }

    /// Adds `index`, `line` (null without lines) and `byte` to a JSON object.
    pub fn add_to(&self, obj: Object) -> Object {
        obj.with("index", count(self.index))
            .with("line", self.line.map_or(Json::Null, count))
            .with(
                "byte",
                Json::Int(i64::try_from(self.byte).unwrap_or(i64::MAX)),
            )
    }
}

impl From<LogPosition> for Position {
    fn from(p: LogPosition) -> Position {
        Position {
            index: p.index,
            line: p.line,
            byte: p.byte,
        }
    }
}

impl From<Position> for LogPosition {
    fn from(p: Position) -> LogPosition {
        LogPosition {
            index: p.index,
            line: p.line,
            byte: p.byte,
        }
    }
}

/// One log item after the ledger decided it.
pub struct Fed<'a> {
    /// Where the item is in the log.
    pub pos: Position,
    /// The item's bytes (empty when it could not be framed).
    pub bytes: &'a [u8],
    /// What the ledger did; items that cannot be framed are `Rejected` with no id.
    pub outcome: Appended,
}

/// Reads `file` and appends its items to `ledger` with [`Ledger::append_log_with`] (format
/// detection, bounded lines, batches cut by count and bytes, pipelined), calling `on` for
/// each item in log order. `progress`, when given, follows the byte offset.
pub fn feed(
    ledger: &Ledger,
    file: &Path,
    progress: Option<&ProgressBar>,
    mut on: impl FnMut(Fed<'_>) -> Result<(), CliError>,
) -> Result<LogSummary, CliError> {
    let mut handle = |item: akledger::ledger::AppendedItem<'_>| {
        if let Some(bar) = progress {
            bar.set_position(item.position.byte);
        }
        on(Fed {
            pos: item.position.into(),
            bytes: item.bytes,
            outcome: item.outcome,
        })
    };
    // A file (not stdin) is handed over whole: an in-memory ledger (audit) then refers to
    // the events in it instead of holding them.
    let fed = if file.as_os_str() == "-" {
        ledger.append_log_with(open_input(file)?, &mut handle)
    } else {
        let input = std::fs::File::open(file).map_err(|e| CliError::Io(file.to_owned(), e))?;
        ledger.append_log_file_with(input, &mut handle)
    };
    fed.map_err(|e| match e {
        CliError::Ledger(akledger::Error::ReadLog { source, .. }) => {
            CliError::Io(file.to_owned(), source)
        }
        CliError::Ledger(akledger::Error::Rejected(r)) => {
            CliError::Usage(format!("{}: {}", file.display(), rejection_line(&r)))
        }
        other => other,
    })
}

/// The id of a rejected item: the ledger's, else the one its bytes name when they parse
/// (a bad signature still has an id; a digest mismatch does not).
pub fn rejected_id(id: Option<EventId>, bytes: &[u8]) -> Option<EventId> {
    id.or_else(|| akledger::Event::parse(bytes).ok().map(|e| e.id()))
}

/// The id a rejected item claims in its `event_id` member when that is a well-formed event
/// id, even though the item is not a valid event (a digest mismatch: the claim is what
/// other events refer to, so it is how people find the item).
pub fn claimed_id(bytes: &[u8]) -> Option<EventId> {
    let value = akledger::canonical::parse_value(bytes).ok()?;
    let text = value.as_object()?.get("event_id")?.as_str()?;
    EventId::parse(text).ok()
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

/// `{"event_id", "outcome", "missing"?, "code"?, "message"?, "claimed_event_id"?}` for one
/// appended event.
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
        if let (None, Some(claimed)) = (id, claimed_id(bytes)) {
            obj.insert("claimed_event_id", claimed.to_string().into());
        }
    }
    obj
}

/// The one-line text of an outcome: `<id> admitted`, `<id> pending (missing <ids>)`, …
pub fn outcome_text(outcome: &Appended, bytes: &[u8]) -> String {
    match outcome {
        Appended::Admitted(id) => format!("{id} admitted"),
        Appended::Duplicate(id) => format!("{id} duplicate"),
        Appended::Pending { id, missing } => {
            let missing: Vec<String> = missing.iter().map(ToString::to_string).collect();
            format!("{id} pending (missing {})", missing.join(" "))
        }
        Appended::Rejected { id, rejection } => {
            let id = rejected_id(*id, bytes);
            let claimed = id.is_none().then(|| claimed_id(bytes)).flatten();
            format!(
                "{} rejected {}",
                who_text(id, claimed),
                rejection_line(rejection)
            )
        }
        _ => "unknown outcome".into(),
    }
}

/// A rejected item's id as text: its id, else `(claims <id>)` when it names one, else `-`.
pub fn who_text(id: Option<EventId>, claimed: Option<EventId>) -> String {
    match (id, claimed) {
        (Some(id), _) => id.to_string(),
        (None, Some(claimed)) => format!("(claims {claimed})"),
        (None, None) => "-".into(),
    }
}

/// Append events from a log, printing one outcome line per event.
///
/// Each event is admitted, a duplicate, pending (waiting for its parents, which are
/// named) or rejected with its PROFILE code. Exits 0 when nothing was rejected, 1 when
/// any event was rejected, 2 on usage or IO errors.
///
/// Example: akledger append events.jsonl --json
#[derive(Args, Debug)]
pub struct AppendArgs {
    /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
    pub file: PathBuf,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// One JSON object per event: {"index","event_id","outcome","code"?,"message"?,"missing"?}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger append FILE|-`: one outcome line per event.
pub fn append(args: AppendArgs) -> Result<Outcome, CliError> {
    let (ledger, file, json) = (&args.ledger, args.file.as_path(), args.json);
    let ledger = ledger.open_for_writing()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut outcome = Outcome::Clean;
    feed(&ledger, file, None, |fed| {
        if matches!(fed.outcome, Appended::Rejected { .. }) {
            outcome = Outcome::Findings;
        }
        let line = if json {
            let obj = fed.pos.add_to(outcome_json(&fed.outcome, fed.bytes));
            json_text(&typed("akledger.append.outcome", obj))
        } else {
            format!(
                "{}: {}",
                fed.pos.text(),
                outcome_text(&fed.outcome, fed.bytes)
            )
        };
        emit(&mut out, &line)
    })?;
    stdout_result(out.flush())?;
    Ok(outcome)
}

/// Import a log (JSON Lines or CBOR, detected) in batches and print a summary.
///
/// Exits 0 when nothing was rejected, 1 when any event was rejected, 2 on usage or IO
/// errors.
///
/// Example: akledger import export.cbor --dir ./copy
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The log file, `-` for stdin.
    pub file: PathBuf,
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `akledger import FILE`: a summary. Creates the ledger when `--dir` holds none (and
/// removes it again when the import fails before storing anything).
pub fn import(args: ImportArgs) -> Result<Outcome, CliError> {
    let (ledger, creation) = args.ledger.create()?;
    let result = import_into(&ledger, args.file.as_path(), args.json);
    creation.settle(ledger, result)
}

fn import_into(ledger: &Ledger, file: &Path, json: bool) -> Result<Outcome, CliError> {
    let mut tally = Tally::default();
    let mut events = 0usize;
    let mut first_problem: Option<String> = None;
    let progress = super::progress::log_bytes(file);
    let fed = feed(ledger, file, progress.as_ref(), |fed| {
        events += 1;
        tally.add(&fed.outcome);
        if let (None, Appended::Rejected { rejection, .. }) = (&first_problem, &fed.outcome) {
            first_problem = Some(format!(
                "{}: {}: {}",
                file.display(),
                fed.pos.text(),
                rejection_line(rejection)
            ));
        }
        Ok(())
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let summary = match fed {
        Ok(summary) => summary,
        Err(e) if events == 0 => return Err(e),
        Err(e) => {
            eprintln!(
                "akledger: import stopped after {events} items of {}: {} admitted and {} pending were stored before the failure",
                file.display(),
                tally.admitted,
                tally.pending
            );
            return Err(e);
        }
    };
    for (_, rejection) in &summary.rejected_on_release {
        tally.reject(rejection);
    }
    let still_pending = ledger.pending_count();
    if json {
        let Json::Object(mut obj) = tally.to_json() else {
            unreachable!("tally is an object")
        };
        obj.insert("events", count(events));
        obj.insert("still_pending", count(still_pending));
        obj.insert("ledger_events", count(ledger.len()));
        super::output::print_json(&typed("akledger.import", obj))?;
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

/// Write the admitted events as a log, in admission order.
///
/// With `--out F`, says how many events it wrote.
///
/// With `--since`, only the events not covered by those ids (what a peer at those heads
/// is missing).
///
/// Example: akledger export --format cbor --out all.cbor
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Log encoding.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: FormatArg,
    /// Leave out every event this id covers (repeat, or separate with commas).
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    pub since: Vec<String>,
    /// Output file (default stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `akledger export`: admitted events in admission order.
pub fn export(args: ExportArgs) -> Result<Outcome, CliError> {
    let (ledger, format, since) = (&args.ledger, args.format, &args.since);
    let out = args.out.as_deref();
    let ledger = ledger.open()?;
    let since = resolve_ids(&ledger, since)?;
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
    let mut written = 0usize;
    let progress = super::progress::events(ledger.len());
    for event in ledger.iter() {
        let event = event?;
        if keep.as_ref().is_none_or(|k| k.contains(&event.id())) {
            write_item(&mut writer, format.into(), event.bytes()).map_err(io_err)?;
            written += 1;
        }
        if let Some(bar) = &progress {
            bar.inc(1);
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    writer.flush().map_err(io_err)?;
    if let Some(file) = out.filter(|p| p.as_os_str() != "-") {
        super::output::print_lines([format!("wrote {written} events to {}", file.display())])?;
    }
    Ok(Outcome::Clean)
}

/// Drop a pending event (one waiting for dependencies).
///
/// The drop is recorded in the log, so every replay agrees; the event may be submitted
/// again later.
///
/// Example: akledger drop-pending ak:event:Ak2d…
#[derive(Args, Debug)]
pub struct DropPendingArgs {
    /// The pending event's id.
    pub id: String,
    #[command(flatten)]
    pub ledger: LedgerArgs,
}

/// `akledger drop-pending ID`: drop one pending event (recorded in the log).
pub fn drop_pending(args: DropPendingArgs) -> Result<Outcome, CliError> {
    let (ledger, id) = (&args.ledger, args.id.as_str());
    let ledger = ledger.open_for_writing()?;
    let id: EventId = resolve_id(&ledger, id)?;
    if ledger.drop_pending(&id)? {
        super::output::print_lines([format!("dropped {id}")])?;
        Ok(Outcome::Clean)
    } else {
        Err(CliError::Usage(format!("{id}: no such pending event")))
    }
}
