//! Whole processes timed from outside, for benchmarks that set one program against another
//! or against a floor: wall time, and the operating system's accounting of the CPU and peak
//! memory (`/usr/bin/time`, which counts every process the timed one waited for).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The accounting program; callers skip, saying so, where it is absent.
pub const TIME: &str = "/usr/bin/time";

/// Whether [`TIME`] is here.
pub fn available() -> bool {
    Path::new(TIME).exists()
}

/// What one whole-process run took.
pub struct Timed {
    pub wall: f64,
    /// Peak resident KiB of the largest process.
    pub peak: u64,
    /// User and system CPU seconds.
    pub cpu: f64,
    /// Of which system: where a slow hour's extra CPU goes, if it is the kernel's (page
    /// cache, faults) rather than the program's.
    pub system: f64,
    /// What the process wrote on its standard output.
    pub stdout: Vec<u8>,
}

/// Writes a process's standard input.
pub type Feed<'a> = &'a mut dyn FnMut(&mut dyn Write);

/// Runs `program args…` under [`TIME`] with nothing on its standard input; it must exit
/// with one of the codes in `ok`.
pub fn timed<S: AsRef<std::ffi::OsStr>>(program: &Path, args: &[S], ok: &[i32]) -> Timed {
    timed_feeding(program, args, None, ok)
}

/// [`timed`], `stdin` writing the process's standard input when given (closed after it).
pub fn timed_feeding<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: &[S],
    stdin: Option<Feed>,
    ok: &[i32],
) -> Timed {
    let stats = tempfile::NamedTempFile::new().unwrap();
    let started = Instant::now();
    let mut child = Command::new(TIME)
        .args(["-f", "%M %U %S", "-o"])
        .arg(stats.path())
        .arg(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(feed) = stdin {
        feed(&mut child.stdin.take().unwrap());
    }
    let out = child.wait_with_output().unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(
        out.status.code().is_some_and(|code| ok.contains(&code)),
        "{program:?} {:?}: {}: {}",
        args.iter().map(AsRef::as_ref).collect::<Vec<_>>(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = std::fs::read_to_string(stats.path()).unwrap();
    let fields: Vec<&str> = stats.lines().last().unwrap().split_whitespace().collect();
    let seconds = |field: &str| field.parse::<f64>().unwrap();
    Timed {
        wall,
        peak: fields[0].parse().unwrap(),
        cpu: seconds(fields[1]) + seconds(fields[2]),
        system: seconds(fields[2]),
        stdout: out.stdout,
    }
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
