//! Progress on a terminal: one bar style for work over a log's bytes (`audit`, `import`),
//! one for work over a count of events (`export`), a spinner for work with no measure
//! (`check`), and a spinner counting the bytes of a `sync` each way. Shown only when stderr
//! is a terminal and the work is large enough to take a while; otherwise nothing is drawn,
//! so scripts and pipes see no progress noise.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use akledger::sync::Duplex;
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

/// One end of a stream (its reading or its writing end) that counts the bytes through it on
/// a [`transfer`] spinner, which both ends share ([`counting`] makes the two).
pub struct Transfer<S> {
    inner: S,
    counts: Arc<Counts>,
}

/// What went each way, and where it is shown.
struct Counts {
    bar: Option<ProgressBar>,
    sent: AtomicU64,
    received: AtomicU64,
}

impl Counts {
    fn show(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} sent, {} received",
                indicatif::HumanBytes(self.sent.load(Ordering::Relaxed)),
                indicatif::HumanBytes(self.received.load(Ordering::Relaxed))
            ));
        }
    }
}

impl Drop for Counts {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The two ends of one stream, `reader` and `writer`, counting on `bar` (cleared once both
/// are dropped).
pub fn counting<R, W>(
    reader: R,
    writer: W,
    bar: Option<ProgressBar>,
) -> Duplex<Transfer<R>, Transfer<W>> {
    let counts = Arc::new(Counts {
        bar,
        sent: AtomicU64::new(0),
        received: AtomicU64::new(0),
    });
    Duplex {
        reader: Transfer {
            inner: reader,
            counts: Arc::clone(&counts),
        },
        writer: Transfer {
            inner: writer,
            counts,
        },
    }
}

impl<S: std::io::Read> std::io::Read for Transfer<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counts.received.fetch_add(n as u64, Ordering::Relaxed);
        self.counts.show();
        Ok(n)
    }
}

impl<S: std::io::Write> std::io::Write for Transfer<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.counts.sent.fetch_add(n as u64, Ordering::Relaxed);
        self.counts.show();
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
