//! Key material: `init`, `keygen`, `keys add`, and reading key files.
//!
//! A key file is JSON `{"ed25519_secret_key": "<unpadded base64url of 32 bytes>"}`, written
//! with mode 0600. The CLI prints the public ids derived from it, never the secret.

use clap::{Args, Subcommand};
use std::path::PathBuf;

use std::path::Path;

use akledger::canonical::{Json, Object};
use akledger::did::{did_key, key_of_did_key};
use akledger::ed25519_dalek::SigningKey;
use akledger::key_file::{self, MAX_KEY_FILE_BYTES};
use akledger::{DidCoreId, SidecarId, SidecarKey};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand_core::{OsRng, RngCore};

use super::output::{
    load_keyring_or_new, lock_keyring, parse_id, print_json, print_lines, read_bounded,
    save_keyring, typed, write_secret, CliError, LedgerArgs, Outcome,
};

/// Reads a key file ([`akledger::key_file`]), refusing one other users can read (as ssh
/// does).
pub fn load_signing_key(path: &Path) -> Result<SigningKey, CliError> {
    key_file::read(path).map_err(key_file_error)
}

/// A key file's error as the CLI says it: a bad file is a usage error.
fn key_file_error(e: akledger::Error) -> CliError {
    match e {
        akledger::Error::Misuse(why) => CliError::Usage(why),
        akledger::Error::Io { path, source } => CliError::Io(path, source),
        other => CliError::Ledger(other),
    }
}

/// The text of a sidecar key given in a file (or stdin for `-`), surrounding space trimmed.
pub fn read_key_text(path: &Path) -> Result<String, CliError> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin(), MAX_KEY_FILE_BYTES),
            &mut buf,
        )
        .map_err(|e| CliError::Io(path.to_owned(), e))?;
        buf
    } else {
        key_file::check_permissions(path).map_err(key_file_error)?;
        read_bounded(path, MAX_KEY_FILE_BYTES)?
    };
    String::from_utf8(bytes)
        .map(|t| t.trim().to_string())
        .map_err(|_| CliError::Usage(format!("{}: the key is not text", path.display())))
}

/// Create an empty ledger and keyring.
///
/// Example: akledger init --dir ./books
#[derive(Args, Debug)]
pub struct InitArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"dir","keyring","events"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger init`: create the ledger directory and an empty keyring.
pub fn init(args: InitArgs) -> Result<Outcome, CliError> {
    let (ledger, json) = (&args.ledger, args.json);
    let keyring_path = ledger.keyring_target();
    let (opened, creation) = ledger.create()?;
    let result = keyring_and_summary(&opened, ledger, &keyring_path, json);
    creation.settle(opened, result)
}

fn keyring_and_summary(
    opened: &akledger::Ledger,
    ledger: &LedgerArgs,
    keyring_path: &Path,
    json: bool,
) -> Result<Outcome, CliError> {
    if !keyring_path.exists() {
        save_keyring(keyring_path, &akledger::Keyring::new())?;
    }
    if json {
        let doc = Object::new()
            .with("dir", ledger.dir.display().to_string().into())
            .with("keyring", keyring_path.display().to_string().into())
            .with("events", super::output::count(opened.len()));
        print_json(&typed("akledger.init", doc))?;
    } else {
        print_lines([format!(
            "ledger {} ({} events), keyring {}",
            ledger.dir.display(),
            opened.len(),
            keyring_path.display()
        )])?;
    }
    Ok(Outcome::Clean)
}

/// Writes `key` as a key file (mode 0600).
pub fn write_key_file(out: &Path, key: &SigningKey) -> Result<(), CliError> {
    write_secret(out, &akledger::key_file::to_bytes(key))
}

/// Generate an Ed25519 signing key file.
///
/// The file is JSON {"ed25519_secret_key": "<unpadded base64url of 32 bytes>"}, mode
/// 0600. Prints the public `did:key` and the `ak:did_core:key:` principal the key signs
/// as; never the secret.
///
/// Example: akledger keygen --out alice.key.json
#[derive(Args, Debug)]
pub struct KeygenArgs {
    /// The key file to write.
    #[arg(long, value_name = "FILE", default_value = "akledger-key.json")]
    pub out: PathBuf,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
    /// Print {"file","did_key","did_core_id"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger keygen`: a new Ed25519 key file.
pub fn keygen(args: KeygenArgs) -> Result<Outcome, CliError> {
    let (out, force, json) = (args.out.as_path(), args.force, args.json);
    if out.exists() && !force {
        return Err(CliError::Usage(format!(
            "{}: exists; pass --force to replace it",
            out.display()
        )));
    }
    let key = SigningKey::generate(&mut OsRng);
    write_key_file(out, &key)?;
    let public = key.verifying_key();
    let did = did_key(&public);
    let core = DidCoreId::for_key(&public);
    if json {
        let doc = Object::new()
            .with("file", out.display().to_string().into())
            .with("did_key", did.into())
            .with("did_core_id", core.as_str().into());
        print_json(&typed("akledger.keygen", doc))?;
    } else {
        print_lines([
            format!("key file     {} (mode 0600; keep it secret)", out.display()),
            format!("did:key      {did}"),
            format!("principal    {core}"),
        ])?;
    }
    Ok(Outcome::Clean)
}

/// What `keys add` adds.
pub enum KeyToAdd {
    /// Authorize a did:key for a principal.
    Principal {
        /// The principal (`ak:did_core:…`).
        principal: String,
        /// The `did:key:z…` text.
        did_key: String,
    },
    /// A sidecar key at an epoch: given (base64url) or generated.
    Sidecar {
        /// The sidecar.
        sidecar: String,
        /// The epoch.
        epoch: u64,
        /// The key, when given.
        key: Option<String>,
    },
}

/// List or edit the keyring file (PROFILE §11).
#[derive(Args, Debug)]
pub struct KeysArgs {
    #[command(subcommand)]
    pub action: KeysCmd,
}

/// `keys`'s subcommands.
#[derive(Subcommand, Debug)]
pub enum KeysCmd {
    List(KeysListArgs),
    Add(KeysAddArgs),
}

/// List the keyring: principals with their authorized did:keys, sidecars with the
/// epochs it holds keys for. Never prints a secret.
///
/// Example: akledger keys list --json
#[derive(Args, Debug)]
pub struct KeysListArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// Print {"keyring","principals":[{"principal","did_keys"}],"sidecars":[{"sidecar_id","epochs"}]}.
    #[arg(long)]
    pub json: bool,
}

/// Authorize a did:key for a principal, or add a sidecar key.
///
/// Examples:
///   akledger keys add --principal ak:did_core:web:example.com --did-key did:key:z6Mk…
///   akledger keys add --sidecar ak:sidecar:… --epoch 2 --generate
///   akledger keys add --sidecar ak:sidecar:… --epoch 3 --key-file - < key.b64
#[derive(Args, Debug)]
pub struct KeysAddArgs {
    #[command(flatten)]
    pub ledger: LedgerArgs,
    /// The principal to authorize a key for.
    #[arg(long, requires = "did_key", conflicts_with_all = ["sidecar", "epoch", "key", "generate"])]
    pub principal: Option<String>,
    /// The `did:key:z…` to authorize.
    #[arg(long, requires = "principal")]
    pub did_key: Option<String>,
    /// The sidecar to add a key for.
    #[arg(long, requires = "epoch")]
    pub sidecar: Option<String>,
    /// The key's epoch.
    #[arg(long, requires = "sidecar")]
    pub epoch: Option<u64>,
    /// The sidecar key: unpadded base64url of 32 bytes. Visible to other users in the
    /// process list; prefer --key-file.
    #[arg(long, conflicts_with_all = ["generate", "key_file"], requires = "sidecar")]
    pub key: Option<String>,
    /// Read the sidecar key (unpadded base64url of 32 bytes) from FILE, or stdin for `-`.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "generate",
        requires = "sidecar"
    )]
    pub key_file: Option<PathBuf>,
    /// Generate a fresh random sidecar key.
    #[arg(long, requires = "sidecar")]
    pub generate: bool,
    /// Print {"keyring","added"}.
    #[arg(long)]
    pub json: bool,
}

/// `akledger keys list|add`.
pub fn keys(args: KeysArgs) -> Result<Outcome, CliError> {
    match args.action {
        KeysCmd::List(a) => list(&a.ledger, a.json),
        KeysCmd::Add(a) => {
            let what = a.key_to_add()?;
            add(&a.ledger, what, a.json)
        }
    }
}

impl KeysAddArgs {
    /// What the flags ask to add.
    fn key_to_add(&self) -> Result<KeyToAdd, CliError> {
        let key = match &self.key_file {
            Some(file) => Some(read_key_text(file)?),
            None => self.key.clone(),
        };
        match (&self.principal, &self.did_key, &self.sidecar, self.epoch) {
            (Some(principal), Some(did_key), None, None) => Ok(KeyToAdd::Principal {
                principal: principal.clone(),
                did_key: did_key.clone(),
            }),
            (None, None, Some(sidecar), Some(epoch)) if key.is_some() || self.generate => {
                Ok(KeyToAdd::Sidecar {
                    sidecar: sidecar.clone(),
                    epoch,
                    key,
                })
            }
            _ => Err(CliError::Usage(
                "keys add: give --principal P --did-key K, or --sidecar S --epoch N with --key-file FILE, --key B64URL or --generate".into(),
            )),
        }
    }
}

/// `akledger keys add`.
fn add(ledger: &LedgerArgs, what: KeyToAdd, json: bool) -> Result<Outcome, CliError> {
    // DIR/keyring.json is a ledger directory's: a mistyped --dir makes no directory (a
    // keyring of its own goes where --keyring says).
    if ledger.keyring.is_none() && !ledger.dir.is_dir() {
        ledger.require_ledger()?;
    }
    let path = ledger.keyring_target();
    // Read, change and write under the keyring's lock, so concurrent adds all survive.
    let _lock = lock_keyring(&path)?;
    let mut keyring = load_keyring_or_new(&path)?;
    let what_text = match what {
        KeyToAdd::Principal { principal, did_key } => {
            let principal = DidCoreId::parse(&principal)
                .map_err(|r| CliError::Usage(format!("--principal {principal:?}: {r}")))?;
            if principal.is_self_certifying() {
                return Err(CliError::Usage(format!(
                    "--principal {principal}: a key principal is self-certifying (only its own key signs for it); the keyring cannot authorize other keys for it (PROFILE §11)"
                )));
            }
            let key = key_of_did_key(&did_key)
                .map_err(|r| CliError::Usage(format!("--did-key {did_key:?}: {r}")))?;
            keyring
                .authorize(principal.clone(), key)
                .map_err(|r| CliError::Usage(format!("--principal {principal}: {r}")))?;
            format!("{did_key} may sign for {principal}")
        }
        KeyToAdd::Sidecar {
            sidecar,
            epoch,
            key,
        } => {
            let sidecar: SidecarId = parse_id(&sidecar)?;
            let bytes = match key {
                Some(text) => URL_SAFE_NO_PAD
                    .decode(&text)
                    .ok()
                    .and_then(|k| <[u8; 32]>::try_from(k).ok())
                    .ok_or_else(|| {
                        CliError::Usage("--key: expected 32 bytes of unpadded base64url".into())
                    })?,
                None => {
                    let mut raw = [0u8; 32];
                    OsRng.fill_bytes(&mut raw);
                    raw
                }
            };
            keyring.add_sidecar_key(sidecar, epoch, SidecarKey::from_bytes(bytes));
            format!("sidecar key for {sidecar} at epoch {epoch}")
        }
    };
    save_keyring(&path, &keyring)?;
    if json {
        let doc = Object::new()
            .with("keyring", path.display().to_string().into())
            .with("added", what_text.into());
        print_json(&typed("akledger.keys.added", doc))?;
    } else {
        print_lines([format!("added {what_text} to {}", path.display())])?;
    }
    Ok(Outcome::Clean)
}

/// Adds a fresh key for `sidecar` at `epoch` to the keyring file unless it has one.
/// Returns whether a key was added.
pub fn ensure_sidecar_key(path: &Path, sidecar: SidecarId, epoch: u64) -> Result<bool, CliError> {
    let _lock = lock_keyring(path)?;
    let mut keyring = load_keyring_or_new(path)?;
    if keyring.sidecar_key(&sidecar, epoch).is_some() {
        return Ok(false);
    }
    let mut raw = [0u8; 32];
    OsRng.fill_bytes(&mut raw);
    keyring.add_sidecar_key(sidecar, epoch, SidecarKey::from_bytes(raw));
    save_keyring(path, &keyring)?;
    Ok(true)
}

/// `akledger keys list`: the principals with their authorized `did:key`s and the sidecars
/// with the epochs the keyring holds keys for; never a secret.
fn list(ledger: &LedgerArgs, json: bool) -> Result<Outcome, CliError> {
    let path = ledger.keyring_target();
    let keyring = load_keyring_or_new(&path)?;
    let (principals, sidecars) = (keyring.principals(), keyring.sidecar_epochs());
    if json {
        let principals = principals
            .iter()
            .map(|(p, keys)| {
                Object::new()
                    .with("principal", p.as_str().into())
                    .with("did_keys", super::output::ids_json(keys))
                    .into()
            })
            .collect();
        let sidecars = sidecars
            .iter()
            .map(|(s, epochs)| {
                let epochs = epochs
                    .iter()
                    .map(|e| Json::Int(i64::try_from(*e).unwrap_or(i64::MAX)));
                Object::new()
                    .with("sidecar_id", s.to_string().into())
                    .with("epochs", Json::Array(epochs.collect()))
                    .into()
            })
            .collect();
        let doc = Object::new()
            .with("keyring", path.display().to_string().into())
            .with("principals", Json::Array(principals))
            .with("sidecars", Json::Array(sidecars));
        print_json(&typed("akledger.keys.list", doc))?;
    } else {
        let mut lines = vec![format!("keyring {}", path.display())];
        for (p, keys) in &principals {
            lines.push(format!("principal {p} {}", keys.join(" ")));
        }
        for (s, epochs) in &sidecars {
            let epochs: Vec<String> = epochs.iter().map(u64::to_string).collect();
            lines.push(format!("sidecar {s} epochs {}", epochs.join(" ")));
        }
        super::output::print_lines(lines)?;
    }
    Ok(Outcome::Clean)
}
