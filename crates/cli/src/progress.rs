//! Progress on a terminal: one bar style for work over a log's bytes (`audit`, `import`),
//! one for work over a count of events (`export`), a spinner for work with no measure
//! (`check`), and a spinner counting the bytes of a `sync` each way. Shown only when stderr is a terminal and the work is large enough to take a
//! while; otherwise nothing is drawn, so scripts and pipes see no progress noise.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Logs at least this large get a bar.
const MIN_BYTES: u64 = 16 << 20;

/// Work over at least this many events gets a bar (or a spinner): about as many events
/// as `MIN_BYTES` of log holds.
const MIN_EVENTS: usize = 16_000;

/// How often a spinner redraws.
const SPIN: Duration = Duration::from_millis(120);

fn shown(large: bool) -> bool {
    large && std::io::stderr().is_terminal()
}

fn bar(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// A bar over the bytes of the log file at `log` (none for stdin).
pub fn log_bytes(log: &Path) -> Option<ProgressBar> {
    let len = std::fs::metadata(log).ok()?.len();
    shown(len >= MIN_BYTES).then(|| {
        bar(
            len,
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
    })
}

/// A bar over `n` events.
pub fn events(n: usize) -> Option<ProgressBar> {
    shown(n >= MIN_EVENTS).then(|| bar(n as u64, "{bar:40} {pos}/{len} events eta {eta}"))
}

/// A spinner for a transfer of unknown size (`sync`), on any terminal: its message says how
/// many bytes went each way ([`Transfer`]).
pub fn transfer() -> Option<ProgressBar> {
    shown(true).then(|| {
        let s = ProgressBar::new_spinner();
        s.set_style(
            ProgressStyle::with_template("{spinner} sync: {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        s.enable_steady_tick(SPIN);
        s
    })
}

/// A stream that counts the bytes through it on a [`transfer`] spinner.
pub struct Transfer<S> {
    inner: S,
    bar: Option<ProgressBar>,
    sent: u64,
    received: u64,
}

impl<S> Transfer<S> {
    /// Counts what goes through `inner` on `bar`.
    pub fn new(inner: S, bar: Option<ProgressBar>) -> Self {
        Transfer {
            inner,
            bar,
            sent: 0,
            received: 0,
        }
    }

    fn show(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} sent, {} received",
                indicatif::HumanBytes(self.sent),
                indicatif::HumanBytes(self.received)
            ));
        }
    }
}

impl<S> Drop for Transfer<S> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl<S: std::io::Read> std::io::Read for Transfer<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.received += n as u64;
        self.show();
        Ok(n)
    }
}

impl<S: std::io::Write> std::io::Write for Transfer<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sent += n as u64;
        self.show();
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A spinner saying what is being done over `n` events.
pub fn spinner(n: usize, what: &str) -> Option<ProgressBar> {
    shown(n >= MIN_EVENTS).then(|| {
        let s = ProgressBar::new_spinner();
        s.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        s.set_message(what.to_string());
        s.enable_steady_tick(SPIN);
        s
    })
}
