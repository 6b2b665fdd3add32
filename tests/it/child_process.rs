//! This test binary re-run as a child process for one of its tests (`--exact NAME`), the
//! way the crash tests run what they kill: the child prints protocol lines behind a tag
//! ([`say`]), which the parent reads as they come ([`Child::lines`]) while it decides when
//! to kill it.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Prints one protocol line behind `tag` (libtest prints lines of its own too), flushed at
/// once so that a kill right after it cannot lose it.
pub fn say(tag: &str, line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{tag}{line}").expect("stdout");
    out.flush().expect("flush");
}

/// A running child and its protocol lines.
pub struct Child {
    pub process: std::process::Child,
    /// The child's protocol lines, tag removed, as they come.
    pub lines: mpsc::Receiver<String>,
    reader: JoinHandle<Vec<String>>,
    errors: JoinHandle<String>,
}

impl Child {
    /// Starts this binary's test `test` alone, with `envs` set, reading the lines it prints
    /// behind `tag`.
    pub fn spawn(test: &str, tag: &'static str, envs: &[(&str, &OsStr)]) -> Child {
        let exe = std::env::current_exe().expect("current exe");
        let mut process = Command::new(exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let stdout = process.stdout.take().expect("stdout");
        let mut stderr = process.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // libtest's "test NAME ... " may precede the first line.
                if let Some((_, msg)) = line.split_once(tag) {
                    let _ = tx.send(msg.to_owned());
                    seen.push(msg.to_owned());
                }
            }
            seen
        });
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Child {
            process,
            lines,
            reader,
            errors,
        }
    }

    /// Kills the child (SIGKILL on unix), if it still runs.
    pub fn kill(&mut self) {
        let _ = self.process.kill();
    }

    /// Waits for the child to end: its status, every protocol line it printed, and what it
    /// wrote to stderr.
    pub fn wait(mut self) -> (ExitStatus, Vec<String>, String) {
        let status = self.process.wait().expect("wait child");
        let lines = self.reader.join().expect("reader thread");
        let errors = self.errors.join().expect("stderr thread");
        (status, lines, errors)
    }
}
