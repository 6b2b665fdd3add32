//! The `akledger` command line: a thin shell over the library.
//!
//! Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 when the input had
//! rejected (or, for audits, pending) events or a check found differences, 2 on usage or IO
//! errors. A closed stdout (broken pipe) ends the program quietly.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
