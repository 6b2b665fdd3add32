//! How akledger's costs grow with the ledger: whole `akledger` processes at 100 k and 1 M
//! events by default, and at any sizes listed in `AKLEDGER_SCALE_EVENTS`
//! (`100000,1000000,10000000`). For each size N it generates a signed workload with `gen`
//! (N realm events by 64 writers and one sidecar of 1000 exchanges), then times:
//!
//! - `import` of the whole log into an empty ledger (durable, the default);
//! - `audit` of the log (replayed in memory, nothing written);
//! - open: `akledger heads`, a read-only open from the state snapshot;
//! - resident memory of the ledger held open by a writer (`serve`, after its open);
//! - rebuild: a writer's open with `index/`, the snapshot and the graph file removed,
//!   which replays the whole log and rewrites them (`import` of an empty log);
//! - `heads-of` 100 events picked at random, and `covers` of one of them by the newest;
//! - `sync` of the last 1 % of the events into a second ledger that holds the first 99 %
//!   (pulled from `serve --stdio` of the first);
//!
//! and the bytes the ledger takes on disk. Each row prints wall seconds, CPU seconds and
//! the process's peak resident memory (from `/usr/bin/time`), and a last table the cost per
//! event, to read growth from. Queries run five times (median); the rest once.
//!
//! Everything lives in a temporary directory, about 4.2 KB per event (the log, two
//! ledgers): 42 GB at 10 M. `AKLEDGER_SCALE_DIR` chooses where (a larger disk, say), and
//! keeps the generated logs there for the next run. A size whose files would not fit in the free space is skipped, saying so; so is
//! everything when `/usr/bin/time` or `df` is missing. On the project's machine class (2
//! cores, 24 GiB) 10 M takes about half an hour and the audit peaks near its log's size.
//!
//! `cargo bench --bench scale` (`AKLEDGER_SCALE_EVENTS=10000000` for the 10 M row)
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use akledger::{Event, EventId};
use akledger_testkit::timed::{median, timed_feeding, Feed};

/// Bytes one event takes on disk, all files of the run counted (the generated log ~1.05 KB,
/// each of two ledgers ~1.45 KB with their index, snapshot, graph file and tree), with
/// room to spare.
const DISK_PER_EVENT: u64 = 4_200;
const EXCHANGES: usize = 1000;
const WRITERS: usize = 64;

/// One process: its wall time (measured here), its CPU time and peak resident memory (what
/// `/usr/bin/time` says).
#[derive(Clone, Copy, Debug)]
struct Run {
    wall: f64,
    cpu: f64,
    peak_kib: u64,
}

/// Runs `akledger args…` under `/usr/bin/time`, feeding it `stdin` when given; it must
/// exit with one of `ok` codes.
fn timed(args: &[&str], stdin: Option<Feed>, ok: &[i32]) -> Run {
    let run = timed_feeding(Path::new(env!("CARGO_BIN_EXE_akledger")), args, stdin, ok);
    Run {
        wall: run.wall,
        cpu: run.cpu,
        peak_kib: run.peak,
    }
}

/// A short query: its CPU time and peak from one run under `/usr/bin/time`, its wall time
/// the median of five runs without it (whose own start costs about a millisecond).
fn query(args: &[&str], ok: &[i32]) -> Run {
    let mut run = timed(args, None, ok);
    let walls: Vec<f64> = (0..5)
        .map(|_| {
            let started = std::time::Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_akledger"))
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run akledger");
            assert!(ok.contains(&status.code().unwrap_or(-1)), "{args:?}");
            started.elapsed().as_secs_f64()
        })
        .collect();
    run.wall = median(walls);
    run
}

/// Free bytes on the file system that holds `dir` (`df`), `None` when unknown.
fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(dir).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().nth(1)?;
    let kib: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes of every file under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => bytes_under(&e.path()),
                    _ => e.metadata().map_or(0, |m| m.len()),
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Resident memory (KiB) of a writer holding `dir` open: `serve` on a loopback port, read
/// once it prints its address (its open is done), then stopped with SIGTERM.
fn resident_kib(dir: &str) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(["serve", "--listen", "127.0.0.1:0", "--dir", dir])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the bound address");
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("status");
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS");
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(stopped.success());
    assert!(child.wait().expect("wait").success());
    rss
}

/// `gen`: N realm events by 64 writers and one sidecar of 1000 exchanges, into `log`.
fn generate(log: &str, events: usize) {
    let (events_s, writers, exchanges) = (
        events.to_string(),
        WRITERS.to_string(),
        EXCHANGES.to_string(),
    );
    let args = [
        "gen",
        "--events",
        &events_s,
        "--writers",
        &writers,
        "--exchanges",
        &exchanges,
        "--out",
        log,
    ];
    let gen = timed(&args, None, &[0]);
    eprintln!("scale: {events}: generated in {:.1} s", gen.wall);
}

/// The rows of one size.
struct Size {
    events: usize,
    rows: Vec<(&'static str, Run)>,
    resident_kib: u64,
    disk: u64,
}

fn measure(root: &Path, events: usize, keep_log: bool) -> Size {
    let log = root.join(format!("log-{events}.jsonl"));
    let (a, b) = (root.join("a"), root.join("b"));
    for p in [&a, &b] {
        let _ = std::fs::remove_dir_all(p);
    }
    let path = |p: &PathBuf| p.to_str().expect("utf-8 path").to_owned();
    let (log_s, a_s, b_s) = (path(&log), path(&a), path(&b));
    let ready = root.join(format!("log-{events}.ready"));
    if !ready.exists() {
        generate(&log_s, events);
        std::fs::write(&ready, "").expect("write");
    }
    // 100 events at random (a fixed xorshift) and the newest, by parsing those lines.
    let lines = BufReader::new(std::fs::File::open(&log).expect("log"))
        .lines()
        .count();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut picked = std::collections::BTreeSet::new();
    while picked.len() < 100 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Realm events only: line 1 ..= events (line 0 is the realm create).
        picked.insert(1 + (state % events as u64) as usize);
    }
    let mut ids: Vec<EventId> = Vec::new();
    let mut newest = None;
    for (i, line) in BufReader::new(std::fs::File::open(&log).expect("log"))
        .lines()
        .enumerate()
    {
        if picked.contains(&i) || i == events {
            let id = Event::parse(line.expect("line").as_bytes())
                .expect("event")
                .id();
            if i == events {
                newest = Some(id);
            }
            if picked.contains(&i) {
                ids.push(id);
            }
        }
    }
    let newest = newest.expect("the newest realm event").to_string();
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();

    let mut rows = Vec::new();
    rows.push((
        "import",
        timed(&["import", &log_s, "--dir", &a_s], None, &[0]),
    ));
    rows.push(("audit", timed(&["audit", &log_s], None, &[0, 1])));
    rows.push((
        "open (read-only, from the snapshot)",
        query(&["heads", "--dir", &a_s], &[0]),
    ));
    let resident_kib = resident_kib(&a_s);
    let mut heads_of = vec!["heads-of"];
    heads_of.extend(ids.iter().map(String::as_str));
    heads_of.extend(["--dir", &a_s]);
    rows.push(("heads-of 100 random ids", query(&heads_of, &[0])));
    let covers = ["covers", "--basis", &newest, &ids[50], "--dir", &a_s];
    rows.push(("covers of a random id", query(&covers, &[0, 1])));
    let disk = bytes_under(&a);
    for derived in ["index", "snapshot", "graph"] {
        let p = a.join(derived);
        let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
    }
    rows.push((
        "rebuild (index, snapshot, graph file)",
        timed(&["import", "-", "--dir", &a_s], Some(&mut |_| {}), &[0]),
    ));
    // The second ledger: the first 99 % of the log.
    let keep = lines - lines / 100;
    let mut feed = |pipe: &mut dyn Write| {
        for line in BufReader::new(std::fs::File::open(&log).expect("log"))
            .lines()
            .take(keep)
        {
            let _ = writeln!(pipe, "{}", line.expect("line"));
        }
    };
    timed(&["import", "-", "--dir", &b_s], Some(&mut feed), &[0]);
    let peer = format!(
        "{} serve --stdio --dir {a_s}",
        env!("CARGO_BIN_EXE_akledger")
    );
    rows.push((
        "sync of the last 1 % (pull)",
        timed(
            &["sync", "--dir", &b_s, "--peer-cmd", &peer, "--pull-only"],
            None,
            &[0],
        ),
    ));
    for p in [&a, &b] {
        let _ = std::fs::remove_dir_all(p);
    }
    if !keep_log {
        let _ = std::fs::remove_file(&log);
        let _ = std::fs::remove_file(&ready);
    }
    Size {
        events: lines,
        rows,
        resident_kib,
        disk,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or `--list` from `cargo test --benches` is
    // not for this harness.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    for tool in ["/usr/bin/time", "df"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("scale: skipped: {tool} is not installed");
            return;
        }
    }
    let sizes: Vec<usize> = std::env::var("AKLEDGER_SCALE_EVENTS")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .map(|n| n.trim().parse().expect("AKLEDGER_SCALE_EVENTS: numbers"))
        .collect();
    let chosen = std::env::var_os("AKLEDGER_SCALE_DIR").map(PathBuf::from);
    let base = chosen.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(&base).expect("tmp");
    // A chosen directory keeps the generated logs for the next run.
    let root = chosen.as_deref().unwrap_or(tmp.path());
    let mut done = Vec::new();
    for events in sizes {
        let need = events as u64 * DISK_PER_EVENT;
        let kept = root.join(format!("log-{events}.ready")).exists();
        let need = if kept { need / 4 * 3 } else { need };
        match free_bytes(root) {
            Some(free) if free >= need => {}
            free => {
                eprintln!(
                    "scale: {events} events skipped: needs about {:.1} GB free in {}, has {}",
                    need as f64 / 1e9,
                    base.display(),
                    free.map_or("an unknown amount".into(), |f| format!(
                        "{:.1} GB",
                        f as f64 / 1e9
                    ))
                );
                continue;
            }
        }
        let size = measure(root, events, chosen.is_some());
        print_size(&size);
        done.push(size);
    }
    print_growth(&done);
}

fn print_size(s: &Size) {
    println!("\n{} events (log lines)\n", s.events);
    println!("| step | wall s | CPU s | peak MiB |");
    println!("| --- | --- | --- | --- |");
    for (name, r) in &s.rows {
        println!(
            "| {name} | {:.4} | {:.2} | {:.0} |",
            r.wall,
            r.cpu,
            r.peak_kib as f64 / 1024.0
        );
    }
    println!(
        "| resident, open writer | | | {:.0} ({:.1} B/event) |",
        s.resident_kib as f64 / 1024.0,
        s.resident_kib as f64 * 1024.0 / s.events as f64
    );
    println!(
        "| on disk | | | {:.0} ({:.0} B/event) |",
        s.disk as f64 / 1048576.0,
        s.disk as f64 / s.events as f64
    );
}

/// Each size beside the others: per event for the steps whose work grows with the events
/// (flat means linear; sync per event of the 1 % tail it moves), milliseconds for the
/// queries (flat means their cost does not grow with the ledger).
fn print_growth(sizes: &[Size]) {
    if sizes.is_empty() {
        return;
    }
    println!("\nhow costs grow: µs per event for whole-log steps, ms for queries\n");
    let head: Vec<String> = sizes.iter().map(|s| s.events.to_string()).collect();
    println!("| step | {} |", head.join(" | "));
    println!("|---{}|", " | ---".repeat(sizes.len()));
    for (i, (name, _)) in sizes[0].rows.iter().enumerate() {
        let cells: Vec<String> = sizes
            .iter()
            .map(|s| {
                let wall = s.rows[i].1.wall;
                match *name {
                    n if n.starts_with("sync") => {
                        format!("{:.2} µs", wall * 1e6 / (s.events / 100) as f64)
                    }
                    "import" | "audit" => format!("{:.2} µs", wall * 1e6 / s.events as f64),
                    n if n.starts_with("rebuild") => {
                        format!("{:.2} µs", wall * 1e6 / s.events as f64)
                    }
                    _ => format!("{:.1} ms", wall * 1e3),
                }
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    let cells = |f: &dyn Fn(&Size) -> f64| -> String {
        sizes
            .iter()
            .map(|s| format!("{:.1}", f(s)))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    println!(
        "| resident B/event | {} |",
        cells(&|s| s.resident_kib as f64 * 1024.0 / s.events as f64)
    );
    println!(
        "| disk B/event | {} |",
        cells(&|s| s.disk as f64 / s.events as f64)
    );
}
