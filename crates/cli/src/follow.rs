//! `--follow`: look at the ledger again each time its log grows, until interrupted or
//! until stdout closes. Each look opens the ledger read-only and closes it again: with a
//! shared lock, held only while reading, when no writer holds the ledger (so a writer is
//! never kept out for longer than one look), and beside the writer when one does.

use std::time::Duration;

use akledger::layout::Layout;
use akledger::Ledger;

use super::output::{print_text_lines, stdout_closed, CliError, LedgerArgs, Outcome};

/// How often a follower looks at the log's segments for growth.
const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// The log as it was before a command's first look: following starts from there, so an
/// event admitted between that look and the first poll is not missed.
pub struct Mark(Option<Vec<(std::ffi::OsString, u64)>>);

/// Marks the log now; take it before the first look.
pub fn mark(ledger: &LedgerArgs) -> Mark {
    Mark(log_sizes(&ledger.dir))
}

/// Calls `look` on a fresh read-only open whenever the log changed since `mark` or the
/// last look, and prints the lines it returns; never returns but on an error or a closed
/// stdout.
pub fn follow(
    ledger: &LedgerArgs,
    mark: Mark,
    mut look: impl FnMut(&Ledger) -> Result<Vec<String>, CliError>,
) -> Result<Outcome, CliError> {
    let Mark(mut looked_at) = mark;
    loop {
        std::thread::sleep(FOLLOW_POLL);
        // Opening is not free (a state snapshot read, the log after it replayed): only
        // reopen when the log's segments changed since the last look.
        let now = log_sizes(&ledger.dir);
        if now.is_some() && now == looked_at {
            continue;
        }
        // Marked before opening: what is admitted while this look reads is seen next time.
        looked_at = now;
        let opened: Ledger = ledger.open()?;
        let lines = look(&opened)?;
        drop(opened);
        print_text_lines(lines)?;
        if stdout_closed() {
            return Ok(Outcome::Clean);
        }
    }
}

/// The names and lengths of the ledger's log segments (`DIR/log/*.log`, see
/// docs/format.md): the log only grows, so any admitted event changes them.
fn log_sizes(dir: &std::path::Path) -> Option<Vec<(std::ffi::OsString, u64)>> {
    let mut sizes: Vec<(std::ffi::OsString, u64)> = std::fs::read_dir(Layout::new(dir).log())
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| Some((e.file_name(), e.metadata().ok()?.len())))
        .collect();
    sizes.sort();
    Some(sizes)
}
