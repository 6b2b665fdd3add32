//! `akledger gen`: a synthetic signed workload written as a log — a realm DAG of `--events`
//! notes by `--writers` writers, then a sidecar with `--exchanges` exchanges — and,
//! optionally, the keyring that decrypts the sidecar.
//!
//! Deterministic in `--seed`. The DAG is produced in batches whose signatures are computed
//! on every core, so a million events take seconds per core, not minutes.

use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use akledger::log_format::write_item;
use akledger::workload::{sidecar_workload, sign_all, RealmDag, SidecarSpec};
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{open_output, save_keyring, CliError, FormatArg, Outcome};

/// Events signed per batch.
const BATCH: usize = 16_384;
/// Payload text bytes per DAG event.
const PAYLOAD_BYTES: usize = 64;
/// Agents of the generated sidecar.
const AGENTS: usize = 5;

/// Generate a synthetic signed workload as a log (realm DAG + sidecar).
///
/// Writes the realm create, EVENTS notes by WRITERS writers (each refs its writer's
/// previous note and, half the time, another writer's latest), then one sidecar with
/// EXCHANGES exchanges (5 agents, every outcome). Deterministic in the seed. Signing
/// runs on every core. `--keyring-out` writes the keyring that decrypts the sidecar.
///
/// Example: akledger gen --events 1000000 --writers 64 --exchanges 1000 --seed 1 --out /tmp/big.jsonl --keyring-out /tmp/big.keyring.json
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Realm DAG events (besides the realm create).
    #[arg(long, default_value_t = 10_000)]
    pub events: usize,
    /// Writers of the realm DAG.
    #[arg(long, default_value_t = 8)]
    pub writers: usize,
    /// Exchanges in the sidecar (0 for none).
    #[arg(long, default_value_t = 100)]
    pub exchanges: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file (default stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Log encoding.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: FormatArg,
    /// Also write the keyring (sidecar key) here.
    #[arg(long, value_name = "FILE")]
    pub keyring_out: Option<PathBuf>,
    /// Seed 000 in the sidecar: the agents publish actor models offering orders/place,
    /// requests and responses are PNCP messages whose redacted fields are commitments
    /// (the values are not written anywhere), and one observer is granted the responses.
    #[arg(long)]
    pub skills: bool,
}

/// Runs the command.
pub fn run(a: GenArgs) -> Result<Outcome, CliError> {
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (mut writer, name) = open_output(a.out.as_deref())?;
    let io_err = |e| CliError::Io(name.clone(), e);
    let format = a.format.into();
    let bar = (a.events >= 100_000 && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(a.events as u64);
        bar.set_style(
            ProgressStyle::with_template("signing {bar:40} {pos}/{len} {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });

    let (mut dag, realm) = RealmDag::new(a.seed, a.writers, PAYLOAD_BYTES)?;
    write_item(&mut writer, format, realm.bytes()).map_err(io_err)?;
    let mut left = a.events;
    while left > 0 {
        let n = left.min(BATCH);
        for event in sign_all(&dag.plan(n)?, threads)? {
            write_item(&mut writer, format, event.bytes()).map_err(io_err)?;
        }
        left -= n;
        if let Some(bar) = &bar {
            bar.inc(n as u64);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }

    let mut sidecar_events = 0;
    if a.exchanges > 0 {
        let spec = SidecarSpec {
            exchanges: a.exchanges,
            agents: AGENTS,
            forgeries: false,
            skills: a.skills,
        };
        let workload = sidecar_workload(a.seed, spec)?;
        sidecar_events = workload.events.len();
        for event in &workload.events {
            write_item(&mut writer, format, event.bytes()).map_err(io_err)?;
        }
        if let Some(path) = a.keyring_out.as_deref() {
            save_keyring(path, &workload.keyring)?;
        }
    } else if let Some(path) = a.keyring_out.as_deref() {
        save_keyring(path, &akledger::Keyring::new())?;
    }
    writer.flush().map_err(io_err)?;
    eprintln!(
        "wrote {} events ({} realm DAG, {sidecar_events} sidecar) to {} in {:.1}s on {threads} threads",
        a.events + 1 + sidecar_events,
        a.events + 1,
        name.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(Outcome::Clean)
}
