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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use akledger::canonical::{Json, Object};
use akledger::ed25519_dalek::SigningKey;
use akledger::{Config, DidCoreId, Ledger, Timestamp};
use akledger_runtime::limits::MAX_RUNTIME_CONFIG_BYTES;
use akledger_runtime::{
    bootstrap, EchoHandler, Identity, Policy, Runtime, RuntimeConfig, StubConnection,
};
use rand_core::OsRng;

use super::keys::{load_signing_key, write_key_file};
use super::output::{json_text, parse_id, read_bounded, CliError, Outcome};

/// The configuration file a bootstrap writes, in the ledger directory.
const CONFIG_FILE: &str = "sidecar-runtime.json";

/// The controller key file a bootstrap writes, in the ledger directory.
const CONTROLLER_KEY_FILE: &str = "controller.key";

/// The command's arguments.
#[derive(Debug)]
pub struct RunArgs<'a> {
    /// The ledger directory.
    pub dir: &'a Path,
    /// The input file.
    pub input: &'a Path,
    /// The output file.
    pub output: &'a Path,
    /// `--config`.
    pub config: Option<&'a Path>,
    /// `--echo`.
    pub echo: bool,
    /// `--once`.
    pub once: bool,
}

/// Runs the command.
pub fn run(args: &RunArgs<'_>) -> Result<Outcome, CliError> {
    let fresh = !args.dir.join("log").exists();
    let ledger =
        Ledger::open_with(Config::new(args.dir).keyring_file(args.dir.join("keyring.json")))?;
    for action in ledger.open_report().actions() {
        eprintln!("akledger: recovery: {action}");
    }
    let default_config = args.dir.join(CONFIG_FILE);
    let config = match args.config {
        Some(file) => read_config(file)?,
        None if default_config.exists() => read_config(&default_config)?,
        None if fresh || ledger.is_empty() => bootstrap_dir(&ledger, args.dir)?,
        None => {
            return Err(CliError::Usage(format!(
                "{}: the ledger exists but has no {CONFIG_FILE}; pass --config FILE naming the sidecar and its identities",
                args.dir.display()
            )))
        }
    };
    let connection = StubConnection::open(args.input, args.output)
        .map_err(|e| CliError::Io(args.input.to_path_buf(), e))?;
    let sidecar = config.sidecar;
    let mut runtime = Runtime::new(&ledger, connection, config)?;
    if args.echo {
        runtime.register(Box::new(EchoHandler::default()));
    }
    eprintln!(
        "akledger: sidecar {sidecar}: following {}, writing {}{}",
        args.input.display(),
        args.output.display(),
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
    } else {
        runtime.run(&stop)?;
        eprintln!("akledger: sidecar: stopped");
    }
    Ok(Outcome::Clean)
}

/// Bootstraps an empty ledger directory and writes its configuration file.
fn bootstrap_dir(ledger: &Ledger, dir: &Path) -> Result<RuntimeConfig, CliError> {
    let key = SigningKey::generate(&mut OsRng);
    let key_file = dir.join(CONTROLLER_KEY_FILE);
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
                .with("key_file", CONTROLLER_KEY_FILE.into())
                .into(),
        )
        .with("agents", Json::Array(Vec::new()))
        .with("address_book", Object::new().into());
    let path = dir.join(CONFIG_FILE);
    let mut text = json_text(&doc.into()).into_bytes();
    text.push(b'\n');
    std::fs::write(&path, text).map_err(|e| CliError::Io(path.clone(), e))?;
    eprintln!(
        "akledger: bootstrapped {}: controller key {} (mode 0600, principal {}), realm, sidecar {} with its private strand, sidecar key in {}; configuration {}",
        dir.display(),
        key_file.display(),
        config.controller.did(),
        config.sidecar,
        dir.join("keyring.json").display(),
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
