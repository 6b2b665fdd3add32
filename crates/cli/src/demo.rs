//! `akledger demo`: build a realistic sidecar ledger from nothing and summarize it.
//!
//! Generates a sidecar (controller, agents with actor models, PNCP exchanges ending every
//! way, redacted values, one observer, forgeries) and a small realm DAG, writes the keyring next to the ledger, delivers the events partly out of
//! order (some wait as pending and are released when their parents arrive) and the
//! forgeries (rejected), then prints what the ledger holds. `--offered-log F` writes that
//! stream as offered, for `akledger audit F`. Deterministic in the seed, so a
//! second run finds every event a duplicate.

use clap::Args;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use akledger::layout::Layout;
use akledger::log_format::{write_item, LogFormat};
use akledger::workload::skills::{ACTION, SUBJECT};
use akledger::workload::{realm_dag, sidecar_workload, SidecarSpec, SplitMix};
use akledger::{Config, Ledger};

use super::io::Tally;
use super::output::{
    load_keyring_or_new, open_output, print_lines, save_keyring, CliError, Outcome,
};
use super::query::{fold_all, reasons_text, status_text};

/// Events per append batch.
const BATCH: usize = 500;
/// Agents in the demo sidecar.
const AGENTS: usize = 5;
/// Events of the extra realm DAG, and its writers.
const DAG_EVENTS: usize = 200;
const DAG_WRITERS: usize = 4;

/// Build a realistic sidecar ledger from nothing and summarize it.
///
/// Generates one sidecar (a controller, several agents publishing actor models, a few
/// hundred PNCP exchanges ending every possible way with redacted values kept in
/// DIR/disclosures.jsonl, one observer, and forged events) plus a small realm DAG, writes
/// the keyring to DIR/keyring.json, delivers the events partly out of order, and prints
/// what was admitted, pending and rejected, the heads, the exchanges by status and what
/// the observer sees. Running it again on the same directory finds every event already
/// there.
///
/// Example: akledger demo --dir /tmp/demo --seed 7 --exchanges 500
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The ledger directory (created when missing).
    #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
    pub dir: PathBuf,
    /// Seed of the generated workload (same seed, same events).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of exchanges in the sidecar.
    #[arg(long, default_value_t = 300)]
    pub exchanges: usize,
    /// Also write the events as offered (out of order, forgeries included) to FILE as
    /// JSON Lines; the printed `try` line audits it.
    #[arg(long, value_name = "FILE")]
    pub offered_log: Option<PathBuf>,
}

/// Runs the command. With `offered_log`, the events are also written there as offered
/// (out of order, forgeries included), and the printed `try` line audits that file.
pub fn run(args: DemoArgs) -> Result<Outcome, CliError> {
    let DemoArgs {
        ref dir,
        seed,
        exchanges,
        ref offered_log,
    } = args;
    let offered_log = offered_log.as_deref();
    let spec = SidecarSpec {
        exchanges,
        agents: AGENTS,
        forgeries: true,
        skills: true,
    };
    let workload = sidecar_workload(seed, spec)?;
    let dag = realm_dag(seed, DAG_EVENTS, DAG_WRITERS, 32)?;

    std::fs::create_dir_all(dir).map_err(|e| CliError::Io(dir.to_owned(), e))?;
    let keyring_path = Layout::new(dir).keyring();
    let mut keyring = load_keyring_or_new(&keyring_path)?;
    if let Some(key) = workload.keyring.sidecar_key(&workload.sidecar, 1) {
        keyring.add_sidecar_key(workload.sidecar, 1, key.clone());
    }
    save_keyring(&keyring_path, &keyring)?;
    let ledger = Ledger::open_with(Config::new(dir).keyring(keyring))?;

    // Arrival order: the DAG, then the sidecar; every fifth run of 40 events arrives
    // reversed, and a few requests are held back to the very end, so their answers wait.
    let mut arrivals: Vec<&[u8]> = dag.iter().map(|e| e.bytes()).collect();
    let sidecar: Vec<&[u8]> = workload.events.iter().map(|e| e.bytes()).collect();
    let mut held = Vec::new();
    let mut rng = SplitMix::new(seed);
    for (n, run) in sidecar.chunks(40).enumerate() {
        let mut run = run.to_vec();
        if n % 5 == 2 {
            run.reverse();
        }
        if n % 7 == 3 && run.len() > 2 {
            held.push(run.remove(rng.below(run.len())));
        }
        arrivals.extend(run);
    }
    arrivals.extend(held);
    let offered = arrivals.len();
    let forged: Vec<&[u8]> = workload
        .forgeries
        .iter()
        .map(|f| f.bytes.as_slice())
        .collect();
    arrivals.extend(forged.iter().copied());
    if let Some(path) = offered_log {
        write_offered(path, &arrivals)?;
    }

    let mut tally = Tally::default();
    let len_before = ledger.len();
    let released_before = ledger.rejected_on_release().len();
    for batch in arrivals.chunks(BATCH) {
        for outcome in ledger.append_batch(batch)? {
            tally.add(&outcome);
        }
    }
    for (_, rejection) in ledger.rejected_on_release().iter().skip(released_before) {
        tally.reject(rejection);
    }

    // The authors' disclosure stores, kept with the ledger (once: a second run finds them
    // there): `akledger disclose` prints each.
    let mut new = Vec::new();
    for d in &workload.disclosures {
        if ledger.disclosure(&d.event_id, &d.field)?.is_none() {
            new.push(d.clone());
        }
    }
    ledger.keep_disclosures(&new)?;
    let observed = match &workload.observation {
        Some((grant, observer)) => Some((*grant, observer, ledger.observer_feed(grant)?.len())),
        None => None,
    };

    let still_pending = ledger.pending_count();
    let heads = ledger.heads();
    let (projections, not_folded) = fold_all(&ledger)?;
    let mut head_text: Vec<String> = heads.iter().take(3).map(ToString::to_string).collect();
    if heads.len() > 3 {
        head_text.push("…".into());
    }
    let d = dir.display();
    print_lines([
        format!(
            "akledger demo: seed {seed}, one sidecar with {exchanges} exchanges and {AGENTS} agents, plus a {DAG_EVENTS}-event realm DAG"
        ),
        format!(
            "offered      {} events ({offered} valid, {} forged), some out of order",
            offered + forged.len(),
            forged.len()
        ),
        format!(
            "admitted     {} now ({} arrived before their parents: pending, then released)",
            ledger.len() - len_before,
            tally.pending.saturating_sub(still_pending)
        ),
        format!("duplicates   {} (already in the ledger)", tally.duplicates),
        format!("pending      {still_pending} still waiting"),
        format!("rejected     {}", tally.rejected_text()),
        format!("ledger       {} events", ledger.len()),
        format!("heads        {}: {}", heads.len(), head_text.join(" ")),
        format!("exchanges    {}", status_text(&projections)),
        format!("not folded   {}", reasons_text(&not_folded)),
        format!(
            "skills       each agent offers {SUBJECT}/{ACTION} (seed 000); requests and responses are PNCP messages, {} redacted values kept in {d}/disclosures.jsonl, none in the log",
            workload.disclosures.len()
        ),
        match &observed {
            Some((grant, observer, items)) => format!(
                "observer     {observer} is granted the responses: {items} items (grant {grant})"
            ),
            None => "observer     none".into(),
        },
        format!("files        {d} (ledger), {} (keyring, mode 0600)", keyring_path.display()),
        format!(
            "try          akledger exchanges --dir {d} --status complete | head; akledger exchange --dir {d} {} --history; {}",
            projections
                .iter()
                .find(|p| p.status == akledger::Status::Complete)
                .or(projections.first())
                .map_or_else(|| "EXCHANGE-ID".to_string(), |p| p.exchange_id.to_string()),
            audit_hint(dir, &keyring_path, offered_log)
        ),
        format!(
            "try          {}akledger actor show --dir {d} {}",
            observed.as_ref().map_or_else(String::new, |(g, _, _)| format!(
                "akledger observe feed --dir {d} --grant {g} | head; "
            )),
            workload
                .agents
                .first()
                .map_or_else(|| "AGENT".to_string(), ToString::to_string)
        ),
    ])?;
    Ok(Outcome::Clean)
}

/// The `try` line's audit: of the offered log when one was written, else of an export into
/// the working directory (paths as the user gave them; no shared temporary names).
fn audit_hint(dir: &Path, keyring: &Path, offered_log: Option<&Path>) -> String {
    let k = keyring.display();
    match offered_log {
        Some(log) => format!(
            "akledger audit {} --keyring {k}   # the stream as offered: forgeries rejected, late parents",
            log.display()
        ),
        None => format!(
            "akledger export --dir {} --out demo-export.jsonl && akledger audit demo-export.jsonl --keyring {k}",
            dir.display()
        ),
    }
}

/// Writes the events as offered, one canonical event per line.
fn write_offered(path: &Path, events: &[&[u8]]) -> Result<(), CliError> {
    let (mut out, name) = open_output(Some(path))?;
    let io_err = |e| CliError::Io(name.clone(), e);
    for bytes in events {
        write_item(&mut out, LogFormat::JsonLines, bytes).map_err(io_err)?;
    }
    out.flush().map_err(io_err)
}
