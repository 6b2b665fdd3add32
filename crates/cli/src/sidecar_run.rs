//! `akledger sidecar run`: the sidecar runtime ([`akledger_runtime`]) on two files until
//! SIGINT or SIGTERM (a clean stop, exit 0), or once over what the input holds (`--once`).
//!
//! The identities come from `--config F`, else from `DIR/sidecar-runtime.json`; a
//! directory that holds no ledger yet is bootstrapped (a controller key file
//! `DIR/controller.key` with mode 0600, a realm, the sidecar with its private strand, the
//! sidecar key in `DIR/keyring.json`) and that configuration file is written for the next
//! run. The configuration file (paths relative to it):
//!
//! ```json
//! {"address": "sidecar", "sidecar_id": "ak:sidecar:…", "epoch": 1,
//!  "controller": {"address": "controller", "key_file": "controller.key"},
//!  "agents": [{"address": "agent_a", "key_file": "agent_a.key"}],
//!  "address_book": {"agent_c": "ak:did_core:key:…"},
//!  "timeout_secs": 3600, "timeout_code": "exchange_timeout"}
//! ```

use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use akledger::canonical::{Json, Object};
use akledger::ed25519_dalek::SigningKey;
use akledger::layout::{Layout, CONTROLLER_KEY, RUNTIME_CONFIG};
use akledger::{Config, DidCoreId, Ledger, Timestamp};
use akledger_runtime::limits::MAX_RUNTIME_CONFIG_BYTES;
use akledger_runtime::{
    bootstrap, EchoHandler, Identity, OutputMode, Policy, Runtime, RuntimeConfig, Stage,
    StubConnection,
};
use rand_core::OsRng;

use super::keys::{load_signing_key, write_key_file};
use super::output::{json_text, parse_id, read_bounded, CliError, Outcome};

/// Run the sidecar runtime on two files: envelopes appended to the input file (AEA stub
/// line format `TO,SENDER,PROTOCOL_ID,MESSAGE,`) become encrypted events of the sidecar,
/// handlers answer them, and every answer becomes an event before it is appended to the
/// output file. Exchange envelopes (`akledger/exchange:1.0.0`) open and answer
/// exchanges; the decision maker closes, fails on timeout and reassigns as the
/// controller. Runs until SIGINT or SIGTERM (exit 0). A directory without a ledger is
/// bootstrapped (controller key DIR/controller.key, realm, sidecar, private strand,
/// sidecar key in DIR/keyring.json, DIR/sidecar-runtime.json) and the command says so.
///
/// Example: akledger sidecar run --dir ./sc --input-file in.txt --output-file out.txt --echo
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The ledger directory (bootstrapped when it holds no ledger).
    #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
    pub dir: PathBuf,
    /// The file envelopes arrive in (followed as it grows; created when missing).
    #[arg(long, value_name = "FILE")]
    pub input_file: PathBuf,
    /// The file envelopes are written to (the agent's input file).
    #[arg(long, value_name = "FILE")]
    pub output_file: PathBuf,
    /// How the output file is written: `handoff` (AEA's stub connection, which reads its
    /// input whole and empties it: one record at a time, each once the agent emptied the
    /// file) or `append` (every record appended, for a file nobody empties).
    #[arg(long, value_name = "MODE", default_value = "handoff")]
    pub output_mode: OutputModeArg,
    /// Identities, address book and policy (default DIR/sidecar-runtime.json).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Install the echo handler: default-protocol bytes messages are answered with the
    /// same content.
    #[arg(long)]
    pub echo: bool,
    /// Handle what the input holds now and exit instead of following it.
    #[arg(long)]
    pub once: bool,
}

/// `--output-mode`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OutputModeArg {
    /// One record at a time, each when the reader has emptied the file.
    Handoff,
    /// Every record appended.
    Append,
}

impl From<OutputModeArg> for OutputMode {
    fn from(mode: OutputModeArg) -> OutputMode {
        match mode {
            OutputModeArg::Handoff => OutputMode::Handoff,
            OutputModeArg::Append => OutputMode::Append,
        }
    }
}

/// Runs the command.
pub fn run(args: RunArgs) -> Result<Outcome, CliError> {
    let args = &args;
    let layout = Layout::new(&args.dir);
    let fresh = !layout.log().exists();
    let ledger = Ledger::open_with(Config::new(&args.dir).keyring_file(layout.keyring()))?;
    for action in ledger.open_report().actions() {
        eprintln!("akledger: recovery: {action}");
    }
    let default_config = args.dir.join(RUNTIME_CONFIG);
    let config = match args.config.as_deref() {
        Some(file) => read_config(file)?,
        None if default_config.exists() => read_config(&default_config)?,
        None if fresh || ledger.is_empty() => bootstrap_dir(&ledger, &args.dir)?,
        None => {
            return Err(CliError::Usage(format!(
                "{}: the ledger exists but has no {RUNTIME_CONFIG}; pass --config FILE naming the sidecar and its identities",
                args.dir.display()
            )))
        }
    };
    let connection =
        StubConnection::open_with(&args.input_file, &args.output_file, args.output_mode.into())
            .map_err(|e| CliError::Io(args.input_file.clone(), e))?;
    let sidecar = config.sidecar;
    let mut runtime = Runtime::new(&ledger, connection, config)?;
    if let Some(crash) = crash_hook()? {
        runtime.on_stage(crash);
    }
    if args.echo {
        runtime.register(Box::new(EchoHandler::default()));
    }
    eprintln!(
        "akledger: sidecar {sidecar}: following {}, writing {}{}",
        args.input_file.display(),
        args.output_file.display(),
        if args.once {
            " (once)"
        } else {
            "; stop with Ctrl-C"
        }
    );
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Release));
    if args.once {
        // Until a step finds nothing more to do (or a signal asks to stop between steps).
        while !stop.load(Ordering::Acquire) && !runtime.step(Timestamp::now())?.is_idle() {}
        runtime.finish()?;
        if runtime.unwritten() > 0 {
            eprintln!(
                "akledger: sidecar: {} envelopes wait for the reader of {} to take the one before; the next run writes them",
                runtime.unwritten(),
                args.output_file.display()
            );
        }
    } else {
        runtime.run(&stop)?;
        eprintln!("akledger: sidecar: stopped");
    }
    Ok(Outcome::Clean)
}

/// The environment variable of the crash test hook: `<stage>` or `<stage>:<n>` aborts the
/// process (as a crash would) the n-th time (default: the first) the runtime passes
/// `<stage>` (`received`, `inbox`, `bridged`, `outbox`, `sent`, `decided`, `marker`; see
/// [`Stage`]). The crash tests run the shipped binary with it; the library never reads the
/// environment.
pub const CRASH_AT_ENV: &str = "AKLEDGER_RUNTIME_CRASH_AT";

/// The crash test hook [`CRASH_AT_ENV`] asks for, if it is set.
fn crash_hook() -> Result<Option<impl FnMut(Stage)>, CliError> {
    let Ok(spec) = std::env::var(CRASH_AT_ENV) else {
        return Ok(None);
    };
    let (name, nth) = match spec.split_once(':') {
        Some((name, n)) => (name, n.parse::<u64>().ok()),
        None => (spec.as_str(), Some(1)),
    };
    let (Some(at), Some(nth)) = (Stage::parse(name), nth) else {
        return Err(CliError::Usage(format!(
            "{CRASH_AT_ENV}={spec:?}: expected <stage>[:<n>], a stage one of {}",
            Stage::ALL.map(Stage::name).join(", ")
        )));
    };
    let mut seen = 0;
    Ok(Some(move |stage: Stage| {
        if stage == at {
            seen += 1;
            if seen == nth {
                eprintln!(
                    "akledger: sidecar: {CRASH_AT_ENV}: aborting at {name} (test hook)",
                    name = at.name()
                );
                std::process::abort();
            }
        }
    }))
}

/// Bootstraps an empty ledger directory and writes its configuration file.
fn bootstrap_dir(ledger: &Ledger, dir: &Path) -> Result<RuntimeConfig, CliError> {
    let key = SigningKey::generate(&mut OsRng);
    let key_file = dir.join(CONTROLLER_KEY);
    write_key_file(&key_file, &key)?;
    let config = bootstrap(ledger, key)?;
    let doc = Object::new()
        .with("address", config.address.as_str().into())
        .with("sidecar_id", config.sidecar.to_string().into())
        .with("epoch", Json::Int(1))
        .with(
            "controller",
            Object::new()
                .with("address", config.controller.address.as_str().into())
                .with("key_file", CONTROLLER_KEY.into())
                .into(),
        )
        .with("agents", Json::Array(Vec::new()))
        .with("address_book", Object::new().into());
    let path = dir.join(RUNTIME_CONFIG);
    let mut text = json_text(&doc.into()).into_bytes();
    text.push(b'\n');
    std::fs::write(&path, text).map_err(|e| CliError::Io(path.clone(), e))?;
    eprintln!(
        "akledger: bootstrapped {}: controller key {} (mode 0600, principal {}), realm, sidecar {} with its private strand, sidecar key in {}; configuration {}",
        dir.display(),
        key_file.display(),
        config.controller.did(),
        config.sidecar,
        Layout::new(dir).keyring().display(),
        path.display()
    );
    Ok(config)
}

/// Reads a configuration file.
fn read_config(path: &Path) -> Result<RuntimeConfig, CliError> {
    let bytes = read_bounded(path, MAX_RUNTIME_CONFIG_BYTES)?;
    let bad = |why: String| CliError::Usage(format!("{}: {why}", path.display()));
    let doc: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("not JSON ({e})")))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let text = |v: &serde_json::Value, k: &str| -> Result<String, CliError> {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::to_string)
            .ok_or_else(|| bad(format!("{k} is missing or not a string")))
    };
    let identity = |v: &serde_json::Value| -> Result<Identity, CliError> {
        let file = PathBuf::from(text(v, "key_file")?);
        Ok(Identity {
            address: text(v, "address")?,
            key: load_signing_key(&base.join(file))?,
        })
    };
    let controller = identity(
        doc.get("controller")
            .ok_or_else(|| bad("controller is missing".into()))?,
    )?;
    let sidecar = parse_id(&text(&doc, "sidecar_id")?)?;
    let mut config = RuntimeConfig::new(sidecar, controller);
    if let Some(a) = doc.get("address").and_then(|x| x.as_str()) {
        config.address = a.to_string();
    }
    if let Some(e) = doc.get("epoch") {
        config.epoch = e
            .as_u64()
            .ok_or_else(|| bad("epoch is not a positive integer".into()))?;
    }
    for agent in doc
        .get("agents")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        config.agents.push(identity(agent)?);
    }
    let mut book = BTreeMap::new();
    for (address, did) in doc
        .get("address_book")
        .and_then(|x| x.as_object())
        .into_iter()
        .flatten()
    {
        let did = did
            .as_str()
            .and_then(|d| DidCoreId::parse(d).ok())
            .ok_or_else(|| bad(format!("address_book.{address} is not a did_core_id")))?;
        book.insert(address.clone(), did);
    }
    config.address_book = book;
    let mut policy = Policy::default();
    if let Some(t) = doc.get("timeout_secs") {
        let secs = t
            .as_u64()
            .ok_or_else(|| bad("timeout_secs is not a positive integer".into()))?;
        policy.timeout_ms = Some(secs.saturating_mul(1000));
    }
    if let Some(c) = doc.get("timeout_code") {
        policy.timeout_code = c
            .as_str()
            .ok_or_else(|| bad("timeout_code is not a string".into()))?
            .to_string();
    }
    config.policy = policy;
    Ok(config)
}
