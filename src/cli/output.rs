//! Shared output plumbing: the CLI error type, exit codes, broken pipes, file helpers.

use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use akledger::{Keyring, Rejection};

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

/// Maps a command result to the exit code, printing errors on stderr.
pub fn finish(result: Result<Outcome, CliError>) -> ExitCode {
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
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
    let bytes = std::fs::read(path).map_err(|e| CliError::Io(path.to_owned(), e))?;
    Keyring::from_json_bytes(&bytes)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
}

/// A rejection as the one-line text the CLI prints.
pub fn rejection_line(r: &Rejection) -> String {
    format!("{} {}", r.code(), r.message())
}

/// Writes a line to stdout; a broken pipe surfaces as an IO error that exits quietly.
pub fn emit(out: &mut impl Write, line: &str) -> Result<(), CliError> {
    writeln!(out, "{line}").map_err(|e| CliError::Io(PathBuf::from("<stdout>"), e))
}
