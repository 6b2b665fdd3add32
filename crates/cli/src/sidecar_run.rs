//! `akledger sidecar run`: the sidecar runtime ([`akledger_runtime`]) over its
//! connections until SIGINT or SIGTERM (a clean stop, exit 0), or once over what the inputs
//! hold (`--once`).
//!
//! The identities, connections, routes and skills come from `--config F`, else from
//! `DIR/sidecar-runtime.json` (its format: [`akledger_runtime::config_file`]); a directory
//! that holds no ledger yet is bootstrapped (a controller key file `DIR/controller.key`
//! with mode 0600, a realm, the sidecar with its private strand, the sidecar key in
//! `DIR/keyring.json`) and that configuration file is written for the next run.
//! `--input-file`/`--output-file` add a stub connection named `stub` before the configured
//! ones (so it is the default), `--tcp-listen` an AEA TCP connection named `tcp`, and
//! `--echo` the echo skill.

use clap::Args;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use akledger::canonical::{Json, Object};
use akledger::ed25519_dalek::SigningKey;
use akledger::layout::{Layout, CONTROLLER_KEY, RUNTIME_CONFIG};
use akledger::{Config, Ledger, Timestamp};
use akledger_runtime::config_file::ConfigFile;
use akledger_runtime::skills::{SkillCatalog, SkillDeclaration};
use akledger_runtime::{
    bootstrap, Connection, OutputMode, Runtime, RuntimeConfig, Stage, StubConnection, TcpConnection,
};
use rand_core::OsRng;

use super::keys::write_key_file;
use super::output::{json_text, CliError, Outcome};

/// Run the sidecar runtime over its connections: envelopes that arrive (AEA's stub files,
/// AEA's TCP connection, links to other sidecars) become encrypted events of the sidecar,
/// skills answer them, and every answer becomes an event before it is written. Exchange
/// envelopes (`akledger/exchange:1.0.0`) open and answer exchanges; the decision maker
/// closes, fails on timeout and reassigns as the controller. Connections, routes and skills
/// come from the configuration file; --input-file/--output-file add AEA's stub connection,
/// --tcp-listen AEA's TCP connection. Runs until SIGINT or SIGTERM (exit 0). A directory
/// without a ledger is bootstrapped (controller key DIR/controller.key, realm, sidecar,
/// private strand, sidecar key in DIR/keyring.json, DIR/sidecar-runtime.json) and the
/// command says so.
///
/// Example: akledger sidecar run --dir ./sc --input-file in.txt --output-file out.txt --echo
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The ledger directory (bootstrapped when it holds no ledger).
    #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
    pub dir: PathBuf,
    /// The file envelopes arrive in (followed as it grows; created when missing): the stub
    /// connection `stub`, the default.
    #[arg(long, value_name = "FILE", requires = "output_file")]
    pub input_file: Option<PathBuf>,
    /// The file envelopes are written to (the agent's input file).
    #[arg(long, value_name = "FILE", requires = "input_file")]
    pub output_file: Option<PathBuf>,
    /// How the output file is written: `handoff` (AEA's stub connection, which reads its
    /// input whole and empties it: one record at a time, each once the agent emptied the
    /// file) or `append` (every record appended, for a file nobody empties).
    #[arg(long, value_name = "MODE", default_value = "handoff")]
    pub output_mode: OutputModeArg,
    /// Listen for AEA agents' TCP connections (fetchai/tcp) on ADDR:PORT: the connection
    /// `tcp`.
    #[arg(long, value_name = "ADDR:PORT")]
    pub tcp_listen: Option<SocketAddr>,
    /// Identities, address book, policy, connections, routes and skills (default
    /// DIR/sidecar-runtime.json).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Add the echo skill: default-protocol bytes messages are answered with the same
    /// content.
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
    let config_path = match args.config.as_deref() {
        Some(file) => file.to_path_buf(),
        None if default_config.exists() => default_config,
        None if fresh || ledger.is_empty() => {
            bootstrap_dir(&ledger, &args.dir)?;
            default_config
        }
        None => {
            return Err(CliError::Usage(format!(
                "{}: the ledger exists but has no {RUNTIME_CONFIG}; pass --config FILE naming the sidecar and its identities",
                args.dir.display()
            )))
        }
    };
    let mut file = ConfigFile::read(&config_path).map_err(usage)?;
    if args.echo && !file.skills.iter().any(|s| s.kind == "echo") {
        file.skills.push(SkillDeclaration {
            name: "echo".into(),
            kind: "echo".into(),
            settings: akledger::canonical::Object::new().into(),
        });
    }
    let skills = file.build_skills(&SkillCatalog::builtin()).map_err(usage)?;
    let stub: Option<Box<dyn Connection>> = match (&args.input_file, &args.output_file) {
        (Some(input), Some(output)) => Some(Box::new(
            StubConnection::open_with(input, output, args.output_mode.into())
                .map_err(|e| CliError::Io(input.clone(), e))?,
        )),
        _ => None,
    };
    let mut connections = file.multiplexer(stub.map(|c| ("stub", c))).map_err(usage)?;
    if let Some(address) = args.tcp_listen {
        let tcp = TcpConnection::listen(address)
            .map_err(|e| CliError::Io(address.to_string().into(), e))?;
        connections.add("tcp", tcp).map_err(usage)?;
    }
    if connections.is_empty() {
        return Err(CliError::Usage(format!(
            "no connection: pass --input-file and --output-file, or --tcp-listen, or declare connections in {}",
            config_path.display()
        )));
    }
    let described = describe(&connections);
    let sidecar = file.runtime.sidecar;
    let mut runtime = Runtime::new(&ledger, connections, file.runtime)?;
    if let Some(crash) = crash_hook()? {
        runtime.on_stage(crash);
    }
    let mut names = Vec::new();
    for skill in skills {
        names.push(skill.name().to_string());
        runtime.add_skill(skill).map_err(usage)?;
    }
    eprintln!(
        "akledger: sidecar {sidecar}: {described}; skills: {}{}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        },
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
                "akledger: sidecar: {} envelopes wait for their readers to take the ones before; the next run writes them",
                runtime.unwritten(),
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

/// A configuration error as the CLI says it.
fn usage(e: akledger::Error) -> CliError {
    match e {
        akledger::Error::Misuse(why) => CliError::Usage(why),
        akledger::Error::Io { path, source } => CliError::Io(path, source),
        other => CliError::Ledger(other),
    }
}

/// `NAME: what it does` for each connection, for the start line.
fn describe(connections: &akledger_runtime::Multiplexer) -> String {
    connections
        .names()
        .map(|name| match connections.get(name) {
            Some(c) => format!("{name}: {}", c.describe()),
            None => name.to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
