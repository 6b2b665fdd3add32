//! `akledger audit LOG`: replay a log into a scratch ledger and report, in the PROFILE §12
//! shape, what was admitted, what is pending and what was rejected (with its log index),
//! and the exchange fold of every sidecar.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;

use akledger::canonical::Object;
use akledger::{Appended, Config, Durability, EventId, Json, Ledger, NotFolded, Projection};
use indicatif::{ProgressBar, ProgressStyle};

use super::io::{feed, rejected_id};
use super::output::{count, ids_json, load_keyring, print_json, print_lines, CliError, Outcome};
use super::query::{fold_all, reasons_text, status_text};

/// Logs at least this large get a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

/// A rejected log item.
struct RejectedItem {
    index: usize,
    event_id: Option<EventId>,
    code: &'static str,
    message: String,
}

/// What the replay found.
struct Report {
    events: usize,
    admitted: usize,
    duplicates: usize,
    rejected: Vec<RejectedItem>,
    pending: Vec<(EventId, Vec<EventId>)>,
    heads: Vec<EventId>,
    exchanges: Vec<Projection>,
    not_folded: Vec<NotFolded>,
}

/// Runs the command.
pub fn run(log: &Path, keyring: Option<&Path>, json: bool) -> Result<Outcome, CliError> {
    let keyring = load_keyring(keyring)?;
    let scratch = tempfile::tempdir().map_err(|e| CliError::Io(std::env::temp_dir(), e))?;
    let ledger = Ledger::open_with(
        Config::new(scratch.path())
            .keyring(keyring)
            .durability(Durability::Buffered),
    )?;
    let progress = progress_bar(log);
    let report = replay(&ledger, log, progress.as_ref())?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    drop(ledger);
    if json {
        print_json(&report.to_json())?;
    } else {
        print_lines(report.text(log))?;
    }
    Ok(if report.rejected.is_empty() && report.pending.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

fn progress_bar(log: &Path) -> Option<ProgressBar> {
    let len = std::fs::metadata(log).ok()?.len();
    if len < PROGRESS_MIN_BYTES || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn replay(ledger: &Ledger, log: &Path, progress: Option<&ProgressBar>) -> Result<Report, CliError> {
    let mut events = 0usize;
    let mut duplicates = 0usize;
    let mut rejected = Vec::new();
    // Where each pending event first appeared, to place rejections on release.
    let mut pending_at: HashMap<EventId, usize> = HashMap::new();
    feed(ledger, log, progress, |fed| {
        events += 1;
        match fed.outcome {
            Appended::Duplicate(_) => duplicates += 1,
            Appended::Pending { id, .. } => {
                if let std::collections::hash_map::Entry::Vacant(slot) = pending_at.entry(id) {
                    slot.insert(fed.index);
                } else {
                    duplicates += 1;
                }
            }
            Appended::Rejected { id, rejection } => rejected.push(RejectedItem {
                index: fed.index,
                event_id: rejected_id(id, fed.bytes),
                code: rejection.code().as_str(),
                message: rejection.message().to_string(),
            }),
            _ => {}
        }
        Ok(())
    })?;
    for (id, rejection) in ledger.rejected_on_release() {
        rejected.push(RejectedItem {
            index: pending_at.get(&id).copied().unwrap_or(usize::MAX),
            event_id: Some(id),
            code: rejection.code().as_str(),
            message: rejection.message().to_string(),
        });
    }
    rejected.sort_by_key(|r| r.index);
    let (exchanges, not_folded) = fold_all(ledger)?;
    Ok(Report {
        events,
        admitted: ledger.len(),
        duplicates,
        rejected,
        pending: ledger.pending(),
        heads: ledger.heads(),
        exchanges,
        not_folded,
    })
}

impl Report {
    /// The §12 object.
    fn to_json(&self) -> Json {
        let summary = Object::new()
            .with("events", count(self.events))
            .with("admitted", count(self.admitted))
            .with("duplicates", count(self.duplicates))
            .with("pending", count(self.pending.len()))
            .with("rejected", count(self.rejected.len()));
        let rejected = self
            .rejected
            .iter()
            .map(|r| {
                Object::new()
                    .with("index", count(r.index))
                    .with(
                        "event_id",
                        r.event_id.map_or(Json::Null, |i| i.to_string().into()),
                    )
                    .with("code", r.code.into())
                    .with("message", r.message.as_str().into())
                    .into()
            })
            .collect();
        let pending = self
            .pending
            .iter()
            .map(|(id, missing)| {
                Object::new()
                    .with("event_id", id.to_string().into())
                    .with("missing", ids_json(missing))
                    .into()
            })
            .collect();
        Object::new()
            .with("summary", summary.into())
            .with("rejected", Json::Array(rejected))
            .with("pending", Json::Array(pending))
            .with("heads", ids_json(&self.heads))
            .with(
                "exchanges",
                Json::Array(self.exchanges.iter().map(Projection::to_json).collect()),
            )
            .with(
                "not_folded",
                Json::Array(self.not_folded.iter().map(NotFolded::to_json).collect()),
            )
            .into()
    }

    /// The human report.
    fn text(&self, log: &Path) -> Vec<String> {
        let mut lines = vec![
            format!("audit of {}", log.display()),
            format!(
                "events {}: {} admitted, {} duplicates, {} pending, {} rejected",
                self.events,
                self.admitted,
                self.duplicates,
                self.pending.len(),
                self.rejected.len()
            ),
        ];
        for r in &self.rejected {
            let id = r.event_id.map_or("-".to_string(), |i| i.to_string());
            lines.push(format!("index {}: {id} {} {}", r.index, r.code, r.message));
        }
        for (id, missing) in &self.pending {
            let missing: Vec<String> = missing.iter().map(ToString::to_string).collect();
            lines.push(format!("pending {id}: missing {}", missing.join(" ")));
        }
        lines.push(format!("heads {}", self.heads.len()));
        lines.push(format!("exchanges {}", status_text(&self.exchanges)));
        lines.push(format!("not folded {}", reasons_text(&self.not_folded)));
        lines
    }
}
