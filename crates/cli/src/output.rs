//! Shared output plumbing: the CLI error type, exit codes, broken pipes, file helpers.

use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use akledger::canonical::to_canonical;
use akledger::id::{Id, IdKind};
use akledger::id_prefix::IdPrefix;
use akledger::layout::Layout;
use akledger::ledger::keyring_file;
use akledger::log_format::{LogFormat, LogReader};
use akledger::{Config, EventId, Json, Keyring, Ledger, Object, Rejection};

/// What can stop a command.
#[derive(Debug)]
pub enum CliError {
    /// Wrong arguments or unusable input files (exit 2).
    Usage(String),
    /// IO failure (exit 2).
    Io(PathBuf, io::Error),
    /// The library failed (exit 2).
    Ledger(akledger::Error),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            CliError::Ledger(e) => write!(f, "{e}"),
        }
    }
}

impl From<Rejection> for CliError {
    fn from(r: Rejection) -> Self {
        CliError::Ledger(akledger::Error::Rejected(r))
    }
}

impl From<akledger::Error> for CliError {
    fn from(e: akledger::Error) -> Self {
        CliError::Ledger(e)
    }
}

/// How a command ended when it did not fail.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// Everything was fine (exit 0).
    Clean,
    /// The input had problems the command reported (exit 1).
    Findings,
}

/// Set once stdout's reader has gone (EPIPE): later output is dropped, and the command
/// carries on to its verdict, so `akledger audit bad.jsonl | head -2` still exits 1.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// True once stdout's reader has gone (a follower stops then).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Maps a command result to the exit code, printing errors on stderr.
pub fn finish(result: Result<Outcome, CliError>) -> ExitCode {
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        // Only output with no verdict (export, gen to stdout) gets here: nothing was wrong
        // with the input, the reader just stopped reading.
        Err(CliError::Io(_, e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("akledger: {e}");
            ExitCode::from(2)
        }
    }
}

/// Opens a file (or stdin for `-`) for buffered reading.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead>, CliError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    let file = std::fs::File::open(path).map_err(|e| CliError::Io(path.to_owned(), e))?;
    Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
}

/// Reads a keyring file, or an empty keyring when none is given.
pub fn load_keyring(path: Option<&Path>) -> Result<Keyring, CliError> {
    let Some(path) = path else {
        return Ok(Keyring::new());
    };
    keyring_file::load(path).map_err(|e| keyring_error(path, e))
}

/// A keyring-file failure as the CLI reports it: IO as IO, a bad or oversized keyring as a
/// usage error naming the file.
fn keyring_error(path: &Path, e: akledger::Error) -> CliError {
    match e {
        akledger::Error::Io { path, source } => CliError::Io(path, source),
        akledger::Error::Rejected(r) => CliError::Usage(format!("{}: {r}", path.display())),
        other => CliError::Ledger(other),
    }
}

/// Reads a whole file of at most `limit` bytes, refusing a larger one without reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| CliError::Io(path.to_owned(), e))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Io(path.to_owned(), e))?;
    if bytes.len() as u64 > limit {
        return Err(CliError::Usage(format!(
            "{}: larger than {limit} bytes; not read",
            path.display()
        )));
    }
    Ok(bytes)
}

/// Holds `<keyring>.lock` exclusively (waiting for it) while a keyring is read, changed
/// and written, so concurrent writers never lose each other's keys.
pub fn lock_keyring(path: &Path) -> Result<std::fs::File, CliError> {
    keyring_file::lock(path).map_err(|e| keyring_error(path, e))
}

/// A rejection as the one-line text the CLI prints.
pub fn rejection_line(r: &Rejection) -> String {
    format!("{} {}", r.code(), r.message())
}

/// Writes a line to stdout; once stdout's reader has gone, output is dropped quietly and
/// the command goes on to its verdict (see [`stdout_result`]).
pub fn emit(out: &mut impl Write, line: &str) -> Result<(), CliError> {
    emit_raw(out, line)?;
    emit_raw(out, "\n")
}

/// Writes text to stdout as [`emit`] does, without adding a newline.
pub fn emit_raw(out: &mut impl Write, text: &str) -> Result<(), CliError> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    stdout_result(out.write_all(text.as_bytes()))
}

/// The result of a write (or flush) to stdout: a broken pipe marks stdout closed and is not
/// an error, so the exit code stays the command's verdict; any other failure is.
pub fn stdout_result(result: io::Result<()>) -> Result<(), CliError> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other.map_err(stdout_error),
    }
}

/// Where the ledger lives and which keyring it uses; shared by every ledger command.
#[derive(clap::Args, Debug, Clone)]
pub struct LedgerArgs {
    /// The ledger directory.
    #[arg(long, value_name = "DIR", default_value = "./akledger-data")]
    pub dir: PathBuf,
    /// Keyring file (PROFILE §11) [default: DIR/keyring.json when it exists].
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
}

impl LedgerArgs {
    /// The keyring file in use: the explicit one, else `DIR/keyring.json` when present.
    pub fn keyring_path(&self) -> Option<PathBuf> {
        self.keyring.clone().or_else(|| {
            let default = self.default_keyring();
            default.exists().then_some(default)
        })
    }

    /// `DIR/keyring.json`, where commands that write keys put them by default.
    pub fn default_keyring(&self) -> PathBuf {
        Layout::new(&self.dir).keyring()
    }

    /// The keyring file to write to: the explicit one, else `DIR/keyring.json`.
    pub fn keyring_target(&self) -> PathBuf {
        self.keyring
            .clone()
            .unwrap_or_else(|| self.default_keyring())
    }

    /// Opens an existing ledger read-only: read commands never create or modify a file
    /// (they work on read-only media and on a full disk).
    pub fn open(&self) -> Result<Ledger, CliError> {
        self.require_ledger()?;
        self.open_with(true)
    }

    /// Opens an existing ledger for writing. Only `init` and `import` create a ledger
    /// ([`LedgerArgs::create`]): a mistyped `--dir` makes nothing.
    pub fn open_for_writing(&self) -> Result<Ledger, CliError> {
        self.require_ledger()?;
        self.open_with(false)
    }

    /// Opens the ledger for writing, creating it (and saying so on stderr) when `DIR` holds
    /// none; the [`Creation`] undoes that if the command then fails with nothing stored.
    pub fn create(&self) -> Result<(Ledger, Creation), CliError> {
        let layout = Layout::new(&self.dir);
        let made = if layout.is_ledger() {
            None
        } else if self.dir.exists() {
            Some(Made::Entries(entry_names(&self.dir)?))
        } else {
            Some(Made::Dir)
        };
        let ledger = self.open_with(false);
        let creation = Creation {
            dir: self.dir.clone(),
            made,
        };
        let ledger = match ledger {
            Ok(ledger) => ledger,
            Err(e) => return Err(creation.undo(e)),
        };
        Ok((ledger, creation))
    }

    /// A usage error naming `DIR` unless it holds a ledger (its segment log).
    pub fn require_ledger(&self) -> Result<(), CliError> {
        if Layout::new(&self.dir).is_ledger() {
            return Ok(());
        }
        let d = self.dir.display();
        Err(CliError::Usage(format!(
            "no ledger at {d} (create one with `akledger init --dir {d}` or `akledger demo --dir {d}`, or pass the --dir of an existing one)"
        )))
    }

    fn open_with(&self, read_only: bool) -> Result<Ledger, CliError> {
        let keyring = load_keyring(self.keyring_path().as_deref())?;
        let config = Config::new(&self.dir).keyring(keyring).read_only(read_only);
        let ledger = Ledger::open_with(config)?;
        for action in ledger.open_report().actions() {
            eprintln!("akledger: recovery: {action}");
        }
        Ok(ledger)
    }
}

/// What [`LedgerArgs::create`] made: nothing (the ledger was there), the directory, or
/// entries in a directory that held other names.
pub struct Creation {
    dir: PathBuf,
    made: Option<Made>,
}

enum Made {
    Dir,
    Entries(std::collections::BTreeSet<std::ffi::OsString>),
}

impl Creation {
    /// Passes `result` on. When it is an error and the ledger this command created holds
    /// no event, the ledger is closed and what the command made is removed first, so a
    /// failing command leaves nothing behind; a ledger it created and kept is named on
    /// stderr.
    pub fn settle<T>(self, ledger: Ledger, result: Result<T, CliError>) -> Result<T, CliError> {
        if self.made.is_none() {
            return result;
        }
        match result {
            Err(e) if ledger.is_empty() && ledger.pending_count() == 0 => {
                drop(ledger);
                Err(self.undo(e))
            }
            other => {
                eprintln!("akledger: created a new ledger at {}", self.dir.display());
                other
            }
        }
    }

    /// Removes what the command made (best effort: the error `e` is what is reported).
    fn undo(self, e: CliError) -> CliError {
        match self.made {
            None => {}
            Some(Made::Dir) => {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
            Some(Made::Entries(before)) => {
                if let Ok(now) = entry_names(&self.dir) {
                    for name in now.difference(&before) {
                        let path = self.dir.join(name);
                        let _ =
                            std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                    }
                }
            }
        }
        e
    }
}

/// The names in directory `dir`.
fn entry_names(dir: &Path) -> Result<std::collections::BTreeSet<std::ffi::OsString>, CliError> {
    let io = |source| CliError::Io(dir.to_path_buf(), source);
    std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.file_name()).map_err(io))
        .collect()
}

/// An exchange id argument; when it is not one, the error says so in plain words with the
/// rule (PROFILE §8.1), not a PROFILE code: the mistake is the caller's, not a log's.
pub fn exchange_arg(text: &str) -> Result<akledger::exchange::ExchangeId, CliError> {
    akledger::exchange::ExchangeId::parse(text).map_err(|_| {
        CliError::Usage(format!(
            "{text:?} is not an exchange id: an exchange id is 22 to 128 characters, each a letter, a digit or one of . _ ~ = -"
        ))
    })
}

/// Parses a whole id argument (`ak:event:…`, `ak:sidecar:…`, …); when it is not one, the
/// error says so in plain words with the form an id has.
pub fn parse_id<K: IdKind>(text: &str) -> Result<Id<K>, CliError> {
    Id::parse(text).map_err(|_| {
        CliError::Usage(format!(
            "{text:?} is not an id: an id is {}… and 44 characters of base64url",
            K::PREFIX
        ))
    })
}

/// An id argument read against `ledger`: a whole id, or a unique abbreviation of one among
/// its admitted and pending events (`ak:event:AvW3IN7c`, `AvW3IN7c`, a report's
/// `AvW3IN7cfBmr…`), as git resolves an abbreviated object name; an ambiguous one is
/// refused with its candidates listed.
pub fn resolve_id<K: IdKind>(ledger: &Ledger, text: &str) -> Result<Id<K>, CliError> {
    if let Ok(id) = Id::<K>::parse(text) {
        return Ok(id);
    }
    // In plain words: the message says what an id is and what an abbreviation must give.
    let prefix = IdPrefix::parse::<K>(text).map_err(|r| CliError::Usage(r.message().into()))?;
    const SHOWN: usize = 10;
    let found = ledger.ids_starting_with(&prefix, SHOWN + 1);
    match found.as_slice() {
        [] => Err(CliError::Usage(format!(
            "{text:?}: no event here has an id that starts so"
        ))),
        [one] => Ok(one.retype()),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(SHOWN)
                .map(|id| format!("  {}", id.retype::<K>()))
                .collect();
            let count = match many.len() > SHOWN {
                true => format!("more than {SHOWN}"),
                false => many.len().to_string(),
            };
            Err(CliError::Usage(format!(
                "{text:?} is ambiguous: {count} ids start so; give more characters:\n{}",
                listed.join("\n")
            )))
        }
    }
}

/// [`resolve_id`] for a command that opens the ledger only when it must: a whole id needs
/// no ledger; an abbreviation is resolved on a read-only open of `at`.
pub fn resolve_id_at<K: IdKind>(at: &LedgerArgs, text: &str) -> Result<Id<K>, CliError> {
    match Id::<K>::parse(text) {
        Ok(id) => Ok(id),
        Err(_) => resolve_id(&at.open()?, text),
    }
}

/// [`resolve_ids`] for a command that opens the ledger only when it must.
pub fn resolve_ids_at(at: &LedgerArgs, texts: &[String]) -> Result<Vec<EventId>, CliError> {
    match parse_ids(texts) {
        Ok(ids) => Ok(ids),
        Err(_) => resolve_ids(&at.open()?, texts),
    }
}

/// [`resolve_id`] of each of `texts`.
pub fn resolve_ids(ledger: &Ledger, texts: &[String]) -> Result<Vec<EventId>, CliError> {
    texts.iter().map(|t| resolve_id(ledger, t)).collect()
}

/// Parses a list of event ids.
pub fn parse_ids(texts: &[String]) -> Result<Vec<EventId>, CliError> {
    texts.iter().map(|t| parse_id(t)).collect()
}

/// The version of every `--json` shape (docs/json.md): raised when a shape changes in a way
/// a reader would notice (a member removed or changing meaning); new members do not.
pub const JSON_FORMAT: i64 = 1;

/// `value` (an object: every `--json` shape is one) as a `--json` output of type `kind`
/// (docs/json.md): with `"type": kind` and `"format":` [`JSON_FORMAT`].
pub fn typed(kind: &str, value: impl Into<Json>) -> Json {
    match value.into() {
        Json::Object(obj) => obj
            .with("type", kind.into())
            .with("format", Json::Int(JSON_FORMAT))
            .into(),
        other => other,
    }
}

/// A JSON value as one line of canonical JSON.
pub fn json_text(value: &Json) -> String {
    String::from_utf8_lossy(&to_canonical(value)).into_owned()
}

/// An id shortened for a label or a table cell: the part after its last `:`, cut to 12
/// characters and marked `…` (`ak:event:AtFVPEEJi6R2wS2r…` → `AtFVPEEJi6R2…`).
pub fn short_id(id: &str) -> String {
    let tail = id.rsplit(':').next().unwrap_or(id);
    let head: String = tail.chars().take(12).collect();
    format!("{head}…")
}

/// A list of ids as a JSON array.
pub fn ids_json<T: ToString>(ids: &[T]) -> Json {
    Json::Array(ids.iter().map(|i| i.to_string().into()).collect())
}

/// A count as a JSON integer.
pub fn count(n: usize) -> Json {
    Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A JSON object of named counts (a command's `--json` summary).
pub fn counts(fields: &[(&str, u64)]) -> Object {
    fields.iter().fold(Object::new(), |object, &(name, v)| {
        object.with(name, Json::Int(i64::try_from(v).unwrap_or(i64::MAX)))
    })
}

/// Prints lines to stdout, flushing at the end; a broken pipe exits quietly.
pub fn print_lines<I, S>(lines: I) -> Result<(), CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    write_lines(lines, emit)
}

/// Writes each line to stdout with `write` (flushing at the end).
fn write_lines<I, S>(
    lines: I,
    write: fn(&mut io::BufWriter<io::StdoutLock<'static>>, &str) -> Result<(), CliError>,
) -> Result<(), CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in lines {
        write(&mut out, line.as_ref())?;
    }
    stdout_result(out.flush())
}

/// Prints lines of a text view to stdout as [`print_lines`] does, each made
/// [`terminal_safe`]: a view shows strings from the log, which anyone who wrote to it chose.
pub fn print_text_lines<I, S>(lines: I) -> Result<(), CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    write_lines(lines, emit_text)
}

/// Writes one line of a text view, made [`terminal_safe`], as [`emit`] does.
pub fn emit_text(out: &mut impl Write, line: &str) -> Result<(), CliError> {
    emit(out, &terminal_safe(line))
}

/// `text` safe to show on a terminal: every control character (C0, DEL and C1: what moves
/// the cursor, erases lines, rings the bell or retitles the window) written as its Rust
/// escape (`\u{1b}`, `\u{7}`, `\n`, `\t`), everything else as it is. JSON output needs
/// none of this: canonical JSON escapes C0 itself, and its bytes must stay exact.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() {
            safe.extend(c.escape_default());
        } else {
            safe.push(c);
        }
    }
    std::borrow::Cow::Owned(safe)
}

/// Prints one JSON value as a line on stdout.
pub fn print_json(value: &Json) -> Result<(), CliError> {
    print_lines([json_text(value)])
}

/// An error writing to stdout.
fn stdout_error(e: io::Error) -> CliError {
    CliError::Io(PathBuf::from("<stdout>"), e)
}

/// Writes a file readable only by its owner (keys, keyrings), replacing it atomically.
pub fn write_secret(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    keyring_file::write_private(path, bytes).map_err(|e| keyring_error(path, e))
}

/// Reads a keyring file when it exists, else an empty keyring (for commands adding keys).
pub fn load_keyring_or_new(path: &Path) -> Result<Keyring, CliError> {
    keyring_file::load_or_new(path).map_err(|e| keyring_error(path, e))
}

/// Writes a keyring file (mode 0600).
pub fn save_keyring(path: &Path, keyring: &Keyring) -> Result<(), CliError> {
    keyring_file::save(path, keyring).map_err(|e| keyring_error(path, e))
}

/// A log encoding on the command line.
#[derive(clap::ValueEnum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// JSON Lines: one canonical event per line.
    Jsonl,
    /// CBOR sequence (RFC 8742) of byte strings.
    Cbor,
}

impl From<FormatArg> for LogFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Jsonl => LogFormat::JsonLines,
            FormatArg::Cbor => LogFormat::CborSeq,
        }
    }
}

/// Opens a log (JSON Lines or CBOR sequence, detected) for reading; `-` is stdin.
pub fn open_log(file: &Path) -> Result<LogReader<Box<dyn BufRead>>, CliError> {
    LogReader::detect(open_input(file)?)
        .map_err(|e| CliError::Io(file.to_owned(), e))?
        .map_err(|r| CliError::Usage(format!("{}: {}", file.display(), rejection_line(&r))))
}

/// Opens an output: a file (created or truncated) or stdout when `None` or `-`.
pub fn open_output(path: Option<&Path>) -> Result<(Box<dyn Write>, PathBuf), CliError> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => Ok((
            Box::new(io::BufWriter::with_capacity(1 << 16, io::stdout())),
            PathBuf::from("<stdout>"),
        )),
        Some(p) => {
            let file = std::fs::File::create(p).map_err(|e| CliError::Io(p.to_owned(), e))?;
            Ok((
                Box::new(io::BufWriter::with_capacity(1 << 20, file)),
                p.to_owned(),
            ))
        }
    }
}
