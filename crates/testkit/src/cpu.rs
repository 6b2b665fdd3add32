//! CPU time a process has used, for benchmarks that say where a run's cycles went (this
//! process against a server beside it on the same cores). Linux only: read from
//! `/proc/<pid>/stat`, in the kernel's clock ticks of 10 ms; `None` elsewhere.

use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux build).
const TICKS_PER_SECOND: u64 = 100;

/// The CPU time one process uses from the moment the meter starts.
pub struct Meter {
    /// `None`: this process.
    pid: Option<u32>,
    start: Option<Duration>,
}

impl Meter {
    /// Starts metering this process.
    pub fn of_self() -> Meter {
        Meter::start(None)
    }

    /// Starts metering process `pid`.
    pub fn of(pid: u32) -> Meter {
        Meter::start(Some(pid))
    }

    fn start(pid: Option<u32>) -> Meter {
        Meter {
            pid,
            start: used(pid),
        }
    }

    /// User and system CPU seconds the process used since the meter started (all its
    /// threads, ended ones included); `None` where `/proc` does not say.
    pub fn seconds(&self) -> Option<f64> {
        let now = used(self.pid)?;
        Some(now.saturating_sub(self.start?).as_secs_f64())
    }
}

/// User and system CPU time of process `pid` (this one for `None`) so far.
fn used(pid: Option<u32>) -> Option<Duration> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces: state is
    // field 3 of the whole line, utime 14 and stime 15.
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = after_name.split(' ').skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (user + system) * 1000 / TICKS_PER_SECOND,
    ))
}
