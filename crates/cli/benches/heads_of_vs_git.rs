//! `akledger heads-of` against `git merge-base --independent`, whole process against whole
//! process, on the same 100 k-event DAG: the ledger holds a generated realm DAG; the git
//! repository holds one empty commit per event whose parents are the event's DAG edges
//! (PROFILE §5, implied edges included), with a commit-graph file. Both answer the maximal
//! heads of the same 100 events (the last 100 admitted, so the answer is not trivially all
//! of them). Before timing, the two answers are checked to be the same set. Skipped, saying
//! why, when `git` is absent.
//!
//! `cargo bench --bench heads_of_vs_git -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use akledger::workload::{sign_all, RealmDag};
use akledger::{Config, Durability, EventId, Ledger};

const EVENTS: usize = 100_000;
const QUERY: usize = 100;
const WRITERS: usize = 16;

fn git(repo: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out
}

/// Writes the DAG as git commits through `git fast-import`; returns each event's commit.
fn git_repo(repo: &Path, events: &[(EventId, Vec<EventId>)]) -> HashMap<EventId, String> {
    git(repo, &["init", "-q"]);
    let mut mark: HashMap<EventId, usize> = HashMap::new();
    let mut stream = Vec::new();
    for (i, (id, parents)) in events.iter().enumerate() {
        let n = i + 1;
        mark.insert(*id, n);
        let parents: Vec<usize> = parents
            .iter()
            .filter_map(|p| mark.get(p).copied())
            .collect();
        if parents.is_empty() {
            stream.extend_from_slice(b"reset refs/heads/dag\n");
        }
        write!(
            stream,
            "commit refs/heads/dag\nmark :{n}\ncommitter a <a@a> {n} +0000\ndata 0\n"
        )
        .expect("write");
        for (k, p) in parents.iter().enumerate() {
            let verb = if k == 0 { "from" } else { "merge" };
            writeln!(stream, "{verb} :{p}").expect("write");
        }
        stream.push(b'\n');
    }
    let marks = repo.join("marks");
    let mut child = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["fast-import", "--quiet"])
        .arg(format!("--export-marks={}", marks.display()))
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream)
        .expect("feed fast-import");
    assert!(child.wait().expect("fast-import").success());
    git(repo, &["commit-graph", "write", "--reachable"]);
    let by_mark: HashMap<usize, String> = std::fs::read_to_string(&marks)
        .expect("marks")
        .lines()
        .filter_map(|l| {
            let (m, sha) = l.strip_prefix(':')?.split_once(' ')?;
            Some((m.parse().ok()?, sha.to_owned()))
        })
        .collect();
    mark.into_iter()
        .filter_map(|(id, m)| Some((id, by_mark.get(&m)?.clone())))
        .collect()
}

fn bench(c: &mut Criterion) {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("heads_of_vs_git: skipped: git is not installed");
        return;
    }
    let (mut dag, realm) = RealmDag::new(11, WRITERS, 64).expect("workload");
    let mut events = vec![realm];
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    events.extend(sign_all(&dag.plan(EVENTS - 1).expect("plan"), threads).expect("events"));

    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ledger");
    {
        let ledger =
            Ledger::open_with(Config::new(&dir).durability(Durability::Buffered)).expect("open");
        let bytes: Vec<Vec<u8>> = events.iter().map(|e| e.bytes().to_vec()).collect();
        for chunk in bytes.chunks(5_000) {
            ledger.append_batch(chunk).expect("append");
        }
    }
    let edges: Vec<(EventId, Vec<EventId>)> = events
        .iter()
        .map(|e| (e.id(), e.dependencies().to_vec()))
        .collect();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let commits = git_repo(&repo, &edges);

    let query: Vec<EventId> = events.iter().rev().take(QUERY).map(|e| e.id()).collect();
    let ids: Vec<String> = query.iter().map(ToString::to_string).collect();
    let shas: Vec<String> = query.iter().map(|id| commits[id].clone()).collect();
    let akledger = env!("CARGO_BIN_EXE_akledger");
    let ours = || {
        Command::new(akledger)
            .arg("heads-of")
            .args(&ids)
            .arg("--dir")
            .arg(&dir)
            .output()
            .expect("akledger heads-of")
    };
    let theirs = || {
        git(
            &repo,
            &[
                &["merge-base", "--independent"][..],
                &shas.iter().map(String::as_str).collect::<Vec<_>>(),
            ]
            .concat(),
        )
    };

    // Same answer, as sets of events.
    let by_sha: HashMap<&str, EventId> = commits
        .iter()
        .map(|(id, sha)| (sha.as_str(), *id))
        .collect();
    let mut git_heads: Vec<EventId> = String::from_utf8_lossy(&theirs().stdout)
        .lines()
        .filter_map(|sha| by_sha.get(sha.trim()).copied())
        .collect();
    let out = ours();
    assert!(out.status.success(), "heads-of: {out:?}");
    let mut our_heads: Vec<EventId> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    git_heads.sort_unstable();
    our_heads.sort_unstable();
    assert_eq!(
        our_heads, git_heads,
        "akledger and git disagree on the heads"
    );
    eprintln!(
        "heads_of_vs_git: {} events, {} query ids, {} heads (same answer from both)",
        EVENTS,
        QUERY,
        our_heads.len()
    );

    let mut group = c.benchmark_group("heads_of_100_on_100k_whole_process");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("akledger_heads_of", |b| b.iter(ours));
    group.bench_function("git_merge_base_independent", |b| b.iter(theirs));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
