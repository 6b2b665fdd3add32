//! CPU time a process has used, for benchmarks that say where a run's cycles went (this
//! process against a server beside it on the same cores). Linux only: read from
//! `/proc/<pid>/stat`, in the kernel's clock ticks of 10 ms; `None` elsewhere.

use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux build).
const TICKS_PER_SECOND: u64 = 100;

/// User and system CPU time of process `pid` (all its threads, ended ones included) so far.
pub fn of(pid: u32) -> Option<Duration> {
    read(&format!("/proc/{pid}/stat"))
}

/// [`of`] this process.
pub fn of_self() -> Option<Duration> {
    read("/proc/self/stat")
}

fn read(path: &str) -> Option<Duration> {
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
