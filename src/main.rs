//! The `akledger` command line: a thin shell over the library.
//!
//! Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 when the input had
//! rejected (or, for audits, pending) events or a check found differences, 2 on usage or IO
//! errors. A closed stdout (broken pipe) ends the program quietly.

mod cli;

use std::process::ExitCode;

/// The binary's allocator. The library allocates many small short-lived buffers (parsed
/// events) and a few large ones (the snapshot, log batches); mimalloc serves both with less
/// system time than the system allocator (see the measurement by its entry in Cargo.toml).
/// An embedder picks its own allocator the same way.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run()
}
