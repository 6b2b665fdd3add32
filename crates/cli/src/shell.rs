//! Shell habits generated from the one clap definition: `completions <shell>` (clap_complete)
//! and `man` (a roff man page, clap_mangen), both on stdout.

use clap::Args;
use std::io::Write;

use clap::CommandFactory;

use super::output::{emit_raw, stdout_result, CliError, Outcome};
use super::Cli;

/// Print a shell completion script.
///
/// Example: akledger completions bash > ~/.local/share/bash-completion/completions/akledger
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `akledger completions <shell>`: the completion script for that shell.
pub fn completions(args: CompletionsArgs) -> Result<Outcome, CliError> {
    let shell = args.shell;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "akledger", &mut script);
    print_bytes(&script)
}

/// `akledger man`: the man page (roff), e.g. `akledger man > akledger.1`.
pub fn man() -> Result<Outcome, CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| CliError::Io("<man page>".into(), e))?;
    print_bytes(&page)
}

fn print_bytes(bytes: &[u8]) -> Result<Outcome, CliError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    emit_raw(&mut out, &String::from_utf8_lossy(bytes))?;
    stdout_result(out.flush())?;
    Ok(Outcome::Clean)
}
