//! `akledger sync` against `git fetch` both ways, whole processes on the same DAG: two
//! ledgers of 100 k events that share 90 k and each have a 10 k divergent tail (the
//! workload of `cargo bench --bench sync`), and two git repositories of the same two
//! histories, one commit per event whose parents are the event's DAG edges and whose message
//! is the event's bytes (so both move the same content), packed by `git gc`.
//! - ours: `akledger sync --dir A --peer-cmd "akledger serve --stdio --dir B"`, one session
//!   moving both tails;
//! - git's: `git -C A fetch B` then `git -C B fetch A`, each over git's own local transport
//!   (`git upload-pack` on pipes, as `serve --stdio` is), automatic `gc` and maintenance off.
//!
//! Each round copies the four fixtures afresh and writes the copies back before either
//! clock starts, then times the two in turn (which goes first alternates) under
//! `/usr/bin/time`, each through `sh -c`; the first round checks that each moved exactly
//! the other side's tail. Printed: medians of wall and CPU time and of the per-round
//! ratios. Rounds: `AKLEDGER_BENCH_ROUNDS` (default 5). With `AKLEDGER_BENCH_FIXTURES=DIR`
//! the fixtures are kept in `DIR/sync-100k/` and reused. Skipped, saying why, without `git`
//! or `/usr/bin/time`.
//!
//! `cargo bench --bench sync_vs_git_fetch`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use akledger::{Event, Unverified};
use akledger_testkit::git::{self, git, git_repo};
use akledger_testkit::timed::{self, median, timed, Timed};
use akledger_testkit::{copy_dir, write_back};

use akledger_testkit::{divergent_histories, SYNC_SHARED as SHARED, SYNC_TAIL as TAIL};
/// What a fetch takes: every branch of the peer's, under `refs/remotes/peer/`.
const REFSPEC: &str = "+refs/heads/*:refs/remotes/peer/*";

const SIDES: [&str; 2] = ["a", "b"];

fn akledger_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_akledger"))
}

/// Builds each side's ledger (`ledger/`) and repository (`repo/`) in `root/a` and `root/b`,
/// unless a run before left them complete there.
fn fixture(root: &Path) {
    let ready = root.join("ready");
    if ready.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap();
    let (shared, tails) = divergent_histories();
    for (side, tail) in SIDES.iter().zip(&tails) {
        let events: Vec<&Event<Unverified>> = shared.iter().chain(tail).collect();
        let dir = root.join(side);
        let log = root.join(format!("{side}.jsonl"));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        for event in &events {
            file.write_all(event.bytes()).unwrap();
            file.write_all(b"\n").unwrap();
        }
        file.into_inner().unwrap().sync_all().unwrap();
        let status = Command::new(akledger_bin())
            .arg("import")
            .arg(&log)
            .arg("--dir")
            .arg(dir.join("ledger"))
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "import: {status}");
        std::fs::remove_file(&log).unwrap();
        let edges: Vec<_> = events
            .iter()
            .map(|e| (e.id(), e.dependencies().to_vec()))
            .collect();
        let messages: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
        let repo = dir.join("repo");
        git_repo(&repo, &edges, &messages);
        git(&repo, &["config", "gc.auto", "0"]);
        git(&repo, &["config", "maintenance.auto", "false"]);
        git(&repo, &["gc", "--quiet"]);
    }
    std::fs::write(&ready, "").unwrap();
}

/// Fresh copies of the fixtures in `work`, written back.
fn fresh(root: &Path, work: &Path) {
    let _ = std::fs::remove_dir_all(work);
    for side in SIDES {
        for part in ["ledger", "repo"] {
            let copy = work.join(side).join(part);
            copy_dir(&root.join(side).join(part), &copy);
            write_back(&copy);
        }
    }
}

/// `sh -c script` under `/usr/bin/time`.
fn shell(script: &str) -> Timed {
    timed(Path::new("sh"), &["-c", script], &[0])
}

fn quoted(path: &Path) -> String {
    let text = path.to_str().expect("a path in UTF-8");
    assert!(!text.contains('\''), "a path without quotes");
    format!("'{text}'")
}

fn ours(work: &Path) -> Timed {
    let (a, b) = (work.join("a/ledger"), work.join("b/ledger"));
    let bin = quoted(akledger_bin());
    shell(&format!(
        "exec {bin} sync --dir {} --json --peer-cmd \"exec {bin} serve --stdio --dir {}\"",
        quoted(&a),
        quoted(&b)
    ))
}

fn theirs(work: &Path) -> Timed {
    let (a, b) = (work.join("a/repo"), work.join("b/repo"));
    let fetch = |into: &Path, from: &Path| {
        format!(
            "git -C {} fetch --quiet {} {REFSPEC}",
            quoted(into),
            quoted(from)
        )
    };
    shell(&format!("{} && {}", fetch(&a, &b), fetch(&b, &a)))
}

/// Checks each moved exactly the other side's tail; prints what each moved.
fn check(work: &Path, ours: &Timed) {
    let report: serde_json::Value = serde_json::from_slice(&ours.stdout).unwrap();
    assert_eq!(report["sent"], TAIL, "{report}");
    assert_eq!(report["received"], TAIL, "{report}");
    let wire = report["bytes_sent"].as_u64().unwrap() + report["bytes_received"].as_u64().unwrap();
    let mut packs = 0;
    for side in SIDES {
        let repo = work.join(side).join("repo");
        let count = |range: &[&str]| -> usize {
            let out = git(&repo, &[&["rev-list", "--count"], range].concat());
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        assert_eq!(count(&["--remotes=peer", "--not", "--branches"]), TAIL);
        assert_eq!(count(&["--remotes=peer"]), SHARED + TAIL);
        assert_eq!(count(&["--branches"]), SHARED + TAIL);
        packs += newest_pack_bytes(&repo);
    }
    eprintln!(
        "sync_vs_git_fetch: each side received the other's {TAIL} events; akledger moved \
         {wire} B on the wire, git's two fetched packs hold {packs} B"
    );
}

/// The size of the newest pack file in `repo`: the one a fetch just wrote.
fn newest_pack_bytes(repo: &Path) -> u64 {
    std::fs::read_dir(repo.join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pack"))
        .map(|p| std::fs::metadata(p).unwrap())
        .max_by_key(|m| m.modified().unwrap())
        .unwrap()
        .len()
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    if !git::installed() {
        eprintln!("sync_vs_git_fetch: skipped: git is not installed");
        return;
    }
    if !timed::available() {
        eprintln!(
            "sync_vs_git_fetch: skipped: {} is not installed",
            timed::TIME
        );
        return;
    }
    let rounds: usize = std::env::var("AKLEDGER_BENCH_ROUNDS")
        .map_or(5, |n| n.parse().expect("AKLEDGER_BENCH_ROUNDS: a number"));
    let tmp = tempfile::tempdir().unwrap();
    let root = std::env::var_os("AKLEDGER_BENCH_FIXTURES")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from)
        .join("sync-100k");
    fixture(&root);
    let work = tmp.path().join("work");
    let (mut walls, mut cpus) = ([vec![], vec![]], [vec![], vec![]]);
    let (mut wall_ratios, mut cpu_ratios) = (vec![], vec![]);
    for round in 0..rounds {
        fresh(&root, &work);
        let (ours, theirs) = if round % 2 == 0 {
            let o = ours(&work);
            (o, theirs(&work))
        } else {
            let t = theirs(&work);
            (ours(&work), t)
        };
        if round == 0 {
            check(&work, &ours);
        }
        eprintln!(
            "sync_vs_git_fetch: round {round}: akledger sync {:.3} s (CPU {:.3} s), git fetch \
             both ways {:.3} s (CPU {:.3} s)",
            ours.wall, ours.cpu, theirs.wall, theirs.cpu
        );
        for (k, t) in [&ours, &theirs].into_iter().enumerate() {
            walls[k].push(t.wall);
            cpus[k].push(t.cpu);
        }
        wall_ratios.push(ours.wall / theirs.wall);
        cpu_ratios.push(ours.cpu / theirs.cpu);
    }
    let [our_walls, git_walls] = walls;
    let [our_cpus, git_cpus] = cpus;
    println!(
        "akledger sync {:.3} s (CPU {:.3} s) vs git fetch both ways {:.3} s (CPU {:.3} s): \
         {:.3}x the wall, {:.3}x the CPU (medians of {rounds} per-round ratios)",
        median(our_walls),
        median(our_cpus),
        median(git_walls),
        median(git_cpus),
        median(wall_ratios),
        median(cpu_ratios)
    );
}
