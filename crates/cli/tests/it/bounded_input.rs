//! Input is bounded everywhere: an endless JSON Lines line costs no memory, batches are cut
//! by bytes, `audit` keeps memory proportional to what it holds and cleans up on signals.
//!
//! The memory test reads this process's own peak RSS, so it is the only in-process test
//! in this file; the others run the binary as child processes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use akledger::error::Code;
use akledger::log_format::{LogFormat, LogReader};
use akledger::workload::realm_dag;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `len` bytes of `x` with no newline, then `tail`.
struct LongLine {
    left: u64,
    tail: std::io::Cursor<Vec<u8>>,
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return self.tail.read(buf);
        }
        let n = buf.len().min(self.left as usize);
        buf[..n].fill(b'x');
        self.left -= n as u64;
        Ok(n)
    }
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Peak RSS belongs to the whole process, and this binary runs other tests on other
/// threads: the measurement runs in a process of its own.
#[test]
fn an_endless_json_lines_line_is_refused_without_buffering_it() {
    let name = "bounded_input::endless_line_in_a_process_of_its_own";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", name, "--test-threads", "1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 passed"), "{said}");
}

#[test]
#[ignore = "run in a process of its own by an_endless_json_lines_line_is_refused_without_buffering_it"]
fn endless_line_in_a_process_of_its_own() {
    let event = realm_dag(41, 1, 1, 8).unwrap().remove(0);
    let mut tail = b"\n".to_vec();
    tail.extend_from_slice(event.bytes());
    tail.push(b'\n');
    let before = peak_rss_kib();
    let input = LongLine {
        left: 512 << 20,
        tail: std::io::Cursor::new(tail),
    };
    let mut items = LogReader::new(
        BufReader::with_capacity(1 << 16, input),
        LogFormat::JsonLines,
    );
    let first = items.next().unwrap().unwrap();
    assert_eq!(first.bytes.unwrap_err().code(), Code::PayloadTooLarge);
    let second = items.next().unwrap().unwrap();
    assert_eq!(second.bytes.unwrap(), event.bytes());
    assert_eq!(second.offset, (512 << 20) + 1);
    assert!(items.next().is_none());
    let grew = peak_rss_kib().saturating_sub(before);
    assert!(
        grew < 64 << 10,
        "a 512 MiB line raised peak RSS by {grew} KiB"
    );
}

#[test]
fn megabyte_junk_lines_are_reported_one_by_one_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let event = realm_dag(42, 1, 1, 8).unwrap().remove(0);
    let mut child = bin()
        .args(["import", "-", "--json", "--dir"])
        .arg(tmp.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // 220 lines of 1,000,000 bytes: 220 MB, more than one ledger batch may hold.
        let junk = vec![b'{'; 1_000_000];
        for _ in 0..220 {
            stdin.write_all(&junk).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin.write_all(event.bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["events"], 221);
    assert_eq!(summary["rejected"], 220);
    assert_eq!(summary["admitted"], 1);
}

/// `akledger audit --json LOG` under a heap limit, its report written to `DIR/report.json`
/// (not into this process, whose peak RSS another test of this binary measures).
fn audit_limited(dir: &Path, log: &Path, data_limit: u64) -> (std::process::Output, PathBuf) {
    let report = dir.join("report.json");
    let out = Command::new("prlimit")
        .arg(format!("--data={data_limit}"))
        .arg(env!("CARGO_BIN_EXE_akledger"))
        .args(["audit", "--json"])
        .arg(log)
        .env("TMPDIR", dir)
        .stdout(std::fs::File::create(&report).unwrap())
        .output()
        .unwrap();
    (out, report)
}

#[test]
fn audit_json_memory_follows_findings_held_not_input_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("braces.jsonl");
    std::fs::write(&log, "{}\n".repeat(200_000)).unwrap();
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: prlimit is not installed");
        return;
    }
    // 3 MB of `{}` lines once peaked at 840 MB (so 800 KB at about 224 MB); the heap stays
    // flat now, and 96 MiB is plenty (glibc's arenas take most of it).
    let (out, report) = audit_limited(tmp.path(), &log, 96 << 20);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // Read as a stream: 200 k findings, in order, and the summary at the end.
    let mut findings = 0u64;
    let mut tail = Vec::new(); // the summary's members
    for chunk in BufReader::new(std::fs::File::open(&report).unwrap()).split(b'}') {
        let chunk = chunk.unwrap();
        if let Some(at) = chunk.windows(8).position(|w| w == b"\"index\":") {
            let digits: Vec<u8> = chunk[at + 8..]
                .iter()
                .copied()
                .take_while(u8::is_ascii_digit)
                .collect();
            assert_eq!(String::from_utf8(digits).unwrap(), findings.to_string());
            findings += 1;
        }
        if chunk.windows(10).any(|w| w == b"\"summary\":") {
            tail = chunk;
        }
    }
    assert_eq!(findings, 200_000);
    let summary = String::from_utf8_lossy(&tail).into_owned();
    assert!(
        summary.contains("\"events\":200000,\"pending\":0,\"rejected\":200000"),
        "{summary}"
    );
}

#[test]
fn an_interrupted_on_disk_audit_leaves_no_scratch_ledger_behind() {
    for signal in ["INT", "TERM"] {
        let scratch_root = tempfile::tempdir().unwrap();
        let mut child = bin()
            .args(["audit", "--on-disk", "-"])
            .env("TMPDIR", scratch_root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for event in realm_dag(43, 50, 2, 8).unwrap() {
            stdin.write_all(event.bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin.flush().unwrap();
        // Wait until the scratch ledger exists, then interrupt (stdin stays open).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::fs::read_dir(scratch_root.path()).unwrap().count() == 0 {
            assert!(std::time::Instant::now() < deadline, "no scratch ledger");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let killed = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert!(!status.success());
        let left: Vec<_> = std::fs::read_dir(scratch_root.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let mut err = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut err)
            .unwrap();
        assert!(left.is_empty(), "SIG{signal} left {left:?} ({err})");
    }
}
