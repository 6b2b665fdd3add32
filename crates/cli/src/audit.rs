//! `akledger audit LOG`: replay a log into an in-memory ledger (or, `--on-disk`, a scratch
//! ledger in the temporary directory) and report, in the PROFILE §12
//! shape, what was admitted, what is pending and what was rejected (with its log index),
//! and the exchange fold of every sidecar; `--html FILE` also writes it as one
//! self-contained page (see `html`).

use clap::Args;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Seek, SeekFrom, Write};
use std::path::Path;
use std::path::PathBuf;

use akledger::canonical::Object;
use akledger::tlog::{Checkpoint, ConsistencyProof, Hash, TlogError};
use akledger::{
    Appended, Config, Durability, EventId, Json, Ledger, NotFolded, PendingCause, Projection,
};
use indicatif::ProgressBar;

use super::io::{claimed_id, feed, rejected_id, who_text, Position};
use super::output::{
    count, emit_raw, emit_text, ids_json, json_text, load_keyring, stdout_result, CliError,
    Outcome, JSON_FORMAT,
};
use super::query::{decrypt_hint, fold_all, reasons_text, status_text};

/// A rejected log item.
struct RejectedItem {
    pos: Position,
    event_id: Option<EventId>,
    /// The id the item claims when it has none of its own (a digest mismatch).
    claimed: Option<EventId>,
    code: &'static str,
    message: String,
}

impl RejectedItem {
    fn to_json(&self) -> Json {
        let mut obj = self
            .pos
            .add_to(Object::new())
            .with(
                "event_id",
                self.event_id.map_or(Json::Null, |i| i.to_string().into()),
            )
            .with("code", self.code.into())
            .with("message", self.message.as_str().into());
        if let Some(claimed) = self.claimed {
            obj.insert("claimed_event_id", claimed.to_string().into());
        }
        obj.into()
    }

    fn text(&self) -> String {
        let id = who_text(self.event_id, self.claimed);
        format!("{}: {id} {} {}", self.pos.text(), self.code, self.message)
    }

    /// The ids people may look this item up by: its own and the one it claims.
    fn ids(&self) -> impl Iterator<Item = EventId> {
        self.event_id.into_iter().chain(self.claimed)
    }

    /// `rejected at line 500 (byte 776992): code`.
    fn cause_text(&self) -> String {
        format!("rejected at {}: {}", self.pos.text(), self.code)
    }
}

/// Rejections of log items as they stream by, spooled to an anonymous temporary file (as
/// `index TAB ids TAB json-line TAB text-line TAB cause-text`), so the report's memory follows what the ledger
/// holds, not how many bad lines the log has. The file has no name: nothing is left
/// behind however the process ends.
struct Spool {
    file: std::io::BufWriter<std::fs::File>,
    count: usize,
}

impl Spool {
    fn new() -> Result<Spool, CliError> {
        let file = tempfile::tempfile().map_err(|e| CliError::Io(std::env::temp_dir(), e))?;
        Ok(Spool {
            file: std::io::BufWriter::new(file),
            count: 0,
        })
    }

    fn push(&mut self, item: &RejectedItem) -> Result<(), CliError> {
        self.count += 1;
        let ids: Vec<String> = item.ids().map(|i| i.to_string()).collect();
        let line = format!(
            "{}\t{}\t{}\t{}\t{}\n",
            item.pos.index,
            ids.join(" "),
            json_text(&item.to_json()),
            item.text().replace(['\t', '\n'], " "),
            item.cause_text().replace(['\t', '\n'], " ")
        );
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| CliError::Io(std::env::temp_dir(), e))
    }

    /// For each of `ids` that a spooled item has or claims, how it was rejected (the first
    /// such item in the log). One pass over the spool, which stays open for writing.
    fn causes(&mut self, ids: &HashSet<EventId>) -> Result<HashMap<EventId, String>, CliError> {
        let io_err = |e| CliError::Io(std::env::temp_dir(), e);
        let mut found = HashMap::new();
        if ids.is_empty() || self.count == 0 {
            return Ok(found);
        }
        self.file.flush().map_err(io_err)?;
        let mut file = self.file.get_ref();
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(io_err)?;
            let mut parts = line.split('\t');
            let (Some(item_ids), Some(cause)) = (parts.nth(1), parts.nth(2)) else {
                continue;
            };
            for id in item_ids.split(' ').filter_map(|t| EventId::parse(t).ok()) {
                if ids.contains(&id) {
                    found.entry(id).or_insert_with(|| cause.to_string());
                }
            }
        }
        file.seek(SeekFrom::End(0)).map_err(io_err)?;
        Ok(found)
    }

    /// The spooled items merged (by log index) with `late` ones, as (json, text) lines.
    /// Reads the spool from its start; it may be read again.
    fn merged<'a>(
        &'a mut self,
        late: &'a [RejectedItem],
    ) -> Result<impl Iterator<Item = Result<(String, String), CliError>> + 'a, CliError> {
        let io_err = |e| CliError::Io(std::env::temp_dir(), e);
        self.file.flush().map_err(io_err)?;
        let mut file = self.file.get_ref();
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        let mut late: Vec<&RejectedItem> = late.iter().collect();
        late.sort_by_key(|r| r.pos.index);
        let mut late = late.into_iter().peekable();
        let mut lines = std::io::BufReader::new(file).lines().peekable();
        Ok(std::iter::from_fn(move || {
            let next_spooled = match lines.peek() {
                None => None,
                Some(Err(_)) => {
                    return lines
                        .next()
                        .map(|r| r.map(|_| Default::default()).map_err(io_err))
                }
                Some(Ok(line)) => line
                    .split('\t')
                    .next()
                    .and_then(|n| n.parse::<usize>().ok()),
            };
            let take_late = match (next_spooled, late.peek()) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(i), Some(r)) => r.pos.index < i,
            };
            if take_late {
                return late.next().map(|r| Ok((json_text(&r.to_json()), r.text())));
            }
            let line = lines.next()?;
            Some(line.map_err(io_err).map(|line| {
                let mut parts = line.split('\t').skip(2);
                let json = parts.next().unwrap_or_default().to_string();
                let text = parts.next().unwrap_or_default().to_string();
                (json, text)
            }))
        }))
    }
}

/// What the replay found.
struct Report {
    events: usize,
    admitted: usize,
    duplicates: usize,
    rejected: Spool,
    released: Vec<RejectedItem>,
    pending: Vec<PendingCause>,
    heads: Vec<EventId>,
    exchanges: Vec<Projection>,
    not_folded: Vec<NotFolded>,
    /// The audit against a checkpoint, when one was given.
    checkpoint: Option<CheckpointOutcome>,
}

/// A checkpoint to audit against: the note opened with its verifier key (or why it does
/// not open).
struct Against {
    opened: Result<Checkpoint, TlogError>,
}

impl Against {
    /// Reads the note and the key (unreadable files and a malformed key are usage errors;
    /// a note that does not open is the audit's `checkpoint_invalid`).
    fn read(note: &Path, vkey: &Path) -> Result<Against, CliError> {
        let vkey = super::checkpoint::read_vkey(vkey)?;
        let note = super::checkpoint::read_note(note)?;
        Ok(Against {
            opened: Checkpoint::open(&note, &vkey),
        })
    }

    /// The replay's tree against the checkpoint (PROFILE §13).
    fn outcome(self, ledger: &Ledger) -> Result<CheckpointOutcome, CliError> {
        let size = ledger.tree_size();
        let root = ledger.root()?;
        let mut out = CheckpointOutcome {
            code: None,
            message: String::new(),
            tree_size: size,
            root,
            consistency: None,
        };
        let checkpoint = match self.opened {
            Ok(checkpoint) => checkpoint,
            Err(e) => {
                out.code = Some(e.code());
                out.message = e.message().to_string();
                return Ok(out);
            }
        };
        let at_size = if checkpoint.size() <= size {
            ledger.root_at(checkpoint.size())?
        } else {
            root
        };
        match checkpoint.check_log(size, &at_size) {
            Err(e) => {
                out.code = Some(e.code());
                out.message = e.message().to_string();
            }
            Ok(()) => {
                out.message = format!(
                    "the replay's tree of {size} events has the checkpoint's root at its size, {}",
                    checkpoint.size()
                );
                if size > checkpoint.size() {
                    out.consistency = Some(ledger.consistency_proof(checkpoint.size(), None)?);
                }
            }
        }
        Ok(out)
    }
}

/// What the audit against a checkpoint found: `code` is `None` when the replay's tree has
/// the checkpoint's root at its size; `tree_size` and `root` are the replay's.
struct CheckpointOutcome {
    code: Option<akledger::Code>,
    message: String,
    tree_size: u64,
    root: Hash,
    consistency: Option<ConsistencyProof>,
}

impl CheckpointOutcome {
    fn status(&self) -> &'static str {
        self.code.map_or("ok", |c| c.as_str())
    }

    /// `{"status", "tree_size", "root", "message", "consistency"?}`.
    fn to_json(&self) -> Json {
        let mut obj = Object::new()
            .with("status", self.status().into())
            .with("tree_size", count(self.tree_size as usize))
            .with("root", self.root.to_base64().into())
            .with("message", self.message.as_str().into());
        if let Some(proof) = &self.consistency {
            if let Ok(value) = akledger::canonical::parse_value(&proof.to_json()) {
                obj.insert("consistency", value);
            }
        }
        obj.into()
    }

    fn text(&self) -> String {
        format!(
            "checkpoint {}: {} (tree of {} events, root {})",
            self.status(),
            self.message,
            self.tree_size,
            self.root.to_base64()
        )
    }
}

/// Replay a log in memory and report what is valid, what is not and why.
///
/// Every event is verified and admitted, left pending or rejected with its PROFILE
/// code; every sidecar's exchanges are folded. `--json` prints the PROFILE §12 report:
/// summary, rejected (by log index), pending, heads, exchanges, not_folded. Exits 0
/// when nothing was rejected or left pending, 1 otherwise, 2 on usage or IO errors.
///
/// The log is replayed into memory (an in-memory ledger that refers to the events in the
/// log file instead of copying them: about 400 bytes an event, a log read from stdin
/// about its size) and nothing is written; the file must not change meanwhile (bytes that
/// changed are an error where they are read). `--on-disk` replays into a scratch ledger in
/// the temporary directory instead, for logs whose state outgrows memory.
///
/// Example: akledger audit big.jsonl --keyring big.keyring.json --json | jq .summary
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The log: JSON Lines or a CBOR sequence (detected), `-` for stdin.
    pub log: PathBuf,
    /// Keyring file: authorized keys and the sidecar keys that decrypt exchanges.
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
    /// Print the PROFILE §12 JSON report instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as one self-contained HTML page (no network, no external
    /// assets): summary, rejections, pending, the exchanges table, and each exchange's
    /// timeline with a picture of its events.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Replay into a scratch ledger in the temporary directory (removed at exit, also on
    /// SIGINT or SIGTERM) instead of memory: for a log larger than memory.
    #[arg(long)]
    pub on_disk: bool,
    /// A signed checkpoint of the log (`akledger checkpoint`): the replay's tree must have
    /// its root at its size (PROFILE §13), else `checkpoint_mismatch` (a log truncated,
    /// reordered or missing an event); a note whose body or signature does not verify is
    /// `checkpoint_invalid`. Either exits 1. Needs --vkey.
    #[arg(long, value_name = "NOTE", requires = "vkey")]
    pub checkpoint: Option<PathBuf>,
    /// The checkpoint's verifier key file (`akledger checkpoint --print-vkey`).
    #[arg(long, value_name = "VKEY", requires = "checkpoint")]
    pub vkey: Option<PathBuf>,
}

/// Runs the command; with `html`, also writes the HTML page there. The log is replayed
/// into an in-memory ledger, or with `on_disk` into a scratch ledger in the temporary
/// directory.
pub fn run(args: AuditArgs) -> Result<Outcome, CliError> {
    let (log, keyring, html) = (&args.log, args.keyring.as_deref(), args.html.as_deref());
    let (json, on_disk) = (args.json, args.on_disk);
    let keyring = load_keyring(keyring)?;
    let against = match (&args.checkpoint, &args.vkey) {
        (Some(note), Some(vkey)) => Some(Against::read(note, vkey)?),
        _ => None,
    };
    let mut scratch = None;
    let config = if on_disk {
        let dir = tempfile::tempdir().map_err(|e| CliError::Io(std::env::temp_dir(), e))?;
        remove_on_signal(dir.path());
        let config = Config::new(dir.path()).durability(Durability::Buffered);
        scratch = Some(dir);
        config
    } else {
        Config::in_memory()
    };
    let mut config = config.keyring(keyring);
    if let Some(Ok(checkpoint)) = against.as_ref().map(|a| &a.opened) {
        config = config.origin(checkpoint.origin());
    }
    let ledger = Ledger::open_with(config)?;
    let progress = super::progress::log_bytes(log);
    let mut report = replay(&ledger, log, progress.as_ref())?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    report.checkpoint = against.map(|a| a.outcome(&ledger)).transpose()?;
    if let Some(path) = html {
        report.write_html(path, log, &ledger)?;
    }
    drop(ledger);
    drop(scratch);
    if let Some(hint) = decrypt_hint(
        &report.exchanges,
        &report.not_folded,
        "--keyring FILE (the demo writes DIR/keyring.json, gen writes --keyring-out)",
    ) {
        eprintln!("akledger: {hint}");
    }
    let checkpoint_failed = report.checkpoint.as_ref().is_some_and(|c| c.code.is_some());
    let findings = report.rejected.count
        + report.released.len()
        + report.pending.len()
        + usize::from(checkpoint_failed);
    if json {
        report.write_json()?;
    } else {
        report.write_text(log)?;
    }
    Ok(if findings == 0 {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// On SIGINT or SIGTERM, removes the scratch ledger before exiting (130), so an
/// interrupted audit leaves nothing behind.
fn remove_on_signal(scratch: &Path) {
    let scratch = scratch.to_path_buf();
    // Only one handler per process; if one is already set, the tempdir guard still runs
    // on every ordinary exit.
    let _ = ctrlc::set_handler(move || {
        let _ = std::fs::remove_dir_all(&scratch);
        std::process::exit(130);
    });
}

fn replay(ledger: &Ledger, log: &Path, progress: Option<&ProgressBar>) -> Result<Report, CliError> {
    let mut events = 0usize;
    let mut duplicates = 0usize;
    let mut rejected = Spool::new()?;
    // Where each pending event first appeared, to place rejections on release.
    let mut pending_at: HashMap<EventId, Position> = HashMap::new();
    feed(ledger, log, progress, |fed| {
        events += 1;
        match fed.outcome {
            Appended::Duplicate(_) => duplicates += 1,
            Appended::Pending { id, .. } => {
                if let std::collections::hash_map::Entry::Vacant(slot) = pending_at.entry(id) {
                    slot.insert(fed.pos);
                } else {
                    duplicates += 1;
                }
            }
            Appended::Rejected { id, rejection } => rejected.push(&RejectedItem {
                pos: fed.pos,
                event_id: rejected_id(id, fed.bytes),
                claimed: rejected_id(id, fed.bytes)
                    .is_none()
                    .then(|| claimed_id(fed.bytes))
                    .flatten(),
                code: rejection.code().as_str(),
                message: rejection.message().to_string(),
            })?,
            _ => {}
        }
        Ok(())
    })?;
    let released = ledger
        .rejected_on_release()
        .into_iter()
        .map(|(id, rejection)| RejectedItem {
            pos: pending_at.get(&id).copied().unwrap_or(Position {
                index: usize::MAX,
                line: None,
                byte: 0,
            }),
            event_id: Some(id),
            claimed: None,
            code: rejection.code().as_str(),
            message: rejection.message().to_string(),
        })
        .collect();
    let (exchanges, not_folded) = fold_all(ledger)?;
    Ok(Report {
        events,
        admitted: ledger.len(),
        duplicates,
        rejected,
        released,
        pending: ledger.pending_causes(),
        heads: ledger.heads(),
        exchanges,
        not_folded,
        checkpoint: None,
    })
}

impl Report {
    /// How each root missing id of a pending event fared in the log: `rejected at line 500
    /// (byte 776992): code` when an item had or claimed that id; absent when never seen.
    fn root_causes(&mut self) -> Result<HashMap<EventId, String>, CliError> {
        let roots: HashSet<EventId> = self
            .pending
            .iter()
            .flat_map(|p| p.root_missing.iter().copied())
            .collect();
        let mut causes = self.rejected.causes(&roots)?;
        for item in &self.released {
            if let Some(id) = item.ids().find(|i| roots.contains(i)) {
                causes.entry(id).or_insert_with(|| item.cause_text());
            }
        }
        Ok(causes)
    }

    /// `pending X: missing …` and `  waits for R, which was …` lines.
    fn pending_lines(&self, causes: &HashMap<EventId, String>) -> Vec<String> {
        let mut lines = Vec::new();
        for p in &self.pending {
            let missing: Vec<String> = p.missing.iter().map(ToString::to_string).collect();
            lines.push(format!("pending {}: missing {}", p.id, missing.join(" ")));
            for root in &p.root_missing {
                let why = causes
                    .get(root)
                    .map_or("never seen in this log", String::as_str);
                lines.push(format!("  waits for {root}, which was {why}"));
            }
        }
        lines
    }

    /// Writes the HTML page: the report, and each exchange's timeline and picture (read
    /// from the replayed ledger, which is still open).
    fn write_html(&mut self, path: &Path, log: &Path, ledger: &Ledger) -> Result<(), CliError> {
        let histories = super::dag::all_histories(ledger)?;
        let mut dependencies = HashMap::new();
        for id in histories
            .iter()
            .flat_map(|h| h.entries.iter().map(|e| e.event_id))
        {
            if let Some(event) = ledger.get(&id)? {
                dependencies.insert(id, event.dependencies().to_vec());
            }
        }
        let causes = self.root_causes()?;
        // Each pending event under every root it waits for, once per root.
        let mut groups: std::collections::BTreeMap<EventId, Vec<EventId>> = Default::default();
        for p in &self.pending {
            for root in &p.root_missing {
                groups.entry(*root).or_default().push(p.id);
            }
        }
        let mut held_back: Vec<super::html::HeldBack> = groups
            .into_iter()
            .map(|(root, events)| super::html::HeldBack {
                cause: causes
                    .get(&root)
                    .cloned()
                    .unwrap_or_else(|| "never seen in this log".into()),
                root,
                events,
            })
            .collect();
        // The cause that holds back the most first.
        held_back.sort_by(|a, b| {
            b.events
                .len()
                .cmp(&a.events.len())
                .then(a.root.cmp(&b.root))
        });
        let rejected_total = self.rejected_total();
        let mut rejections = Vec::new();
        let mut by_code: std::collections::BTreeMap<String, usize> = Default::default();
        for item in self.rejected.merged(&self.released)? {
            let (json, text) = item?;
            let code = akledger::canonical::parse_value(json.as_bytes())
                .ok()
                .and_then(|v| Some(v.as_object()?.get("code")?.as_str()?.to_string()));
            *by_code.entry(code.unwrap_or_default()).or_default() += 1;
            if super::html::wants_rejection(rejections.len()) {
                rejections.push(text);
            }
        }
        let summary = vec![
            ("events", self.events),
            ("admitted", self.admitted),
            ("duplicates", self.duplicates),
            ("pending", self.pending.len()),
            ("rejected", rejected_total),
            ("heads", self.heads.len()),
            ("exchanges", self.exchanges.len()),
            ("not folded", self.not_folded.len()),
        ];
        super::html::write(
            path,
            &super::html::HtmlReport {
                log_name: log.display().to_string(),
                summary,
                clean: rejected_total + self.pending.len() == 0,
                rejections,
                rejected_by_code: by_code.into_iter().collect(),
                rejected_total,
                pending_total: self.pending.len(),
                held_back,
                not_folded: &self.not_folded,
                exchanges: &self.exchanges,
                histories: &histories,
                dependencies: &dependencies,
            },
        )
    }

    fn rejected_total(&self) -> usize {
        self.rejected.count + self.released.len()
    }

    /// The §12 object, streamed in canonical key order (`rejected` may be long).
    fn write_json(mut self) -> Result<(), CliError> {
        let summary = Object::new()
            .with("events", count(self.events))
            .with("admitted", count(self.admitted))
            .with("duplicates", count(self.duplicates))
            .with("pending", count(self.pending.len()))
            .with("rejected", count(self.rejected_total()));
        let pending = self
            .pending
            .iter()
            .map(|p| {
                Object::new()
                    .with("event_id", p.id.to_string().into())
                    .with("missing", ids_json(&p.missing))
                    .with("root_missing", ids_json(&p.root_missing))
                    .into()
            })
            .collect();
        let exchanges = Json::Array(self.exchanges.iter().map(Projection::to_json).collect());
        let not_folded = Json::Array(self.not_folded.iter().map(NotFolded::to_json).collect());
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut put = |text: &str| emit_raw(&mut out, text);
        let checkpoint = self
            .checkpoint
            .as_ref()
            .map(|c| format!("\"checkpoint\":{},", json_text(&c.to_json())))
            .unwrap_or_default();
        // Keys in canonical order; `format` and `type` as every --json output has them.
        put(&format!(
            "{{{checkpoint}\"exchanges\":{},\"format\":{JSON_FORMAT},\"heads\":{},\"not_folded\":{},\"pending\":{},\"rejected\":[",
            json_text(&exchanges),
            json_text(&ids_json(&self.heads)),
            json_text(&not_folded),
            json_text(&Json::Array(pending)),
        ))?;
        for (i, item) in self.rejected.merged(&self.released)?.enumerate() {
            if i > 0 {
                put(",")?;
            }
            put(&item?.0)?;
        }
        put(&format!(
            "],\"summary\":{},\"type\":\"akledger.audit\"}}\n",
            json_text(&summary.into())
        ))?;
        stdout_result(out.flush())
    }

    /// The human report.
    fn write_text(mut self, log: &Path) -> Result<(), CliError> {
        let causes = self.root_causes()?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        emit_text(&mut out, &format!("audit of {}", log.display()))?;
        emit_text(
            &mut out,
            &format!(
                "events {}: {} admitted, {} duplicates, {} pending, {} rejected",
                self.events,
                self.admitted,
                self.duplicates,
                self.pending.len(),
                self.rejected_total()
            ),
        )?;
        let mut tail = self.pending_lines(&causes);
        tail.push(format!("heads {}", self.heads.len()));
        tail.push(format!("exchanges {}", status_text(&self.exchanges)));
        tail.push(format!("not folded {}", reasons_text(&self.not_folded)));
        if let Some(checkpoint) = &self.checkpoint {
            tail.push(checkpoint.text());
        }
        for item in self.rejected.merged(&self.released)? {
            emit_text(&mut out, &item?.1)?;
        }
        for line in tail {
            emit_text(&mut out, &line)?;
        }
        stdout_result(out.flush())
    }
}
