//! `akledger heads-of` and `akledger covers` against `git merge-base --independent` and
//! `git merge-base --is-ancestor`, whole process against whole process, on the same DAG: the
//! ledger holds a generated realm DAG (64 writers); the git repository holds one empty
//! commit per event whose parents are the event's DAG edges (PROFILE §5, implied edges
//! included), with a commit-graph file. Queries:
//! - `heads-of` of 100 events picked at random over the whole DAG (seeded), and of the
//!   newest 100;
//! - `covers` of one event picked at random, by the newest event (`--is-ancestor`).
//!
//! Before timing, each pair of answers is checked to be the same. Sizes: 50 k events, or
//! the comma-separated list in `AKLEDGER_BENCH_EVENTS` (`50000,1000000`; a million takes a
//! few minutes to sign and import, and ~1.5 GB of disk). With `AKLEDGER_BENCH_FIXTURES=DIR`
//! the ledgers, repositories and queries are kept in `DIR/heads-of-N/` and reused by the
//! next run (the query ids in `query-random.txt`, their commits in `shas-random.txt`, …),
//! so other tools can time the same commands. Skipped, saying why, when `git` is absent.
//!
//! `cargo bench --bench heads_of_vs_git -- --noplot`
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use akledger::workload::{sign_all, RealmDag};
use akledger::{Config, Durability, EventId, Ledger};
use akledger_testkit::git::{self, git_any, git_repo};

const QUERY: usize = 100;
const WRITERS: usize = 64;

/// A ledger and a repository of the same DAG, and the queries asked of both.
struct Fixture {
    dir: PathBuf,
    repo: PathBuf,
    /// Each admitted id's commit, and back.
    sha_of: HashMap<EventId, String>,
    id_of: HashMap<String, EventId>,
    random: Vec<EventId>,
    newest: Vec<EventId>,
}

/// Builds the fixture of `events` events in `root`, or reads it back when a run before left
/// it complete there.
fn fixture(root: &Path, events: usize) -> Fixture {
    let dir = root.join("ledger");
    let repo = root.join("repo");
    let ready = root.join("ready");
    if !ready.exists() {
        let _ = std::fs::remove_dir_all(root);
        std::fs::create_dir_all(root).expect("mkdir");
        let (mut dag, realm) = RealmDag::new(11, WRITERS, 64).expect("workload");
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let ledger =
            Ledger::open_with(Config::new(&dir).durability(Durability::Buffered)).expect("open");
        ledger.append_batch(&[realm.bytes()]).expect("append");
        let mut edges = vec![(realm.id(), realm.dependencies().to_vec())];
        let mut left = events - 1;
        while left > 0 {
            let n = left.min(50_000);
            let signed = sign_all(&dag.plan(n).expect("plan"), threads).expect("events");
            let bytes: Vec<&[u8]> = signed.iter().map(|e| e.bytes()).collect();
            for chunk in bytes.chunks(5_000) {
                ledger.append_batch(chunk).expect("append");
            }
            edges.extend(signed.iter().map(|e| (e.id(), e.dependencies().to_vec())));
            left -= n;
        }
        ledger.close().expect("close");
        let commits = git_repo(&repo, &edges, &[]);
        let lines = |ids: &mut dyn Iterator<Item = &EventId>| -> String {
            ids.map(|id| format!("{id} {}\n", commits[id])).collect()
        };
        std::fs::write(
            root.join("commits.txt"),
            lines(&mut edges.iter().map(|(id, _)| id)),
        )
        .expect("write");
        // 100 distinct events at random (a fixed xorshift), and the newest 100.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut picked = std::collections::BTreeSet::new();
        while picked.len() < QUERY {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            picked.insert((state % edges.len() as u64) as usize);
        }
        let random: Vec<EventId> = picked.iter().map(|&i| edges[i].0).collect();
        let newest: Vec<EventId> = edges.iter().rev().take(QUERY).map(|e| e.0).collect();
        for (name, ids) in [("random", &random), ("newest", &newest)] {
            let text = |f: &dyn Fn(&EventId) -> String| -> String {
                ids.iter().map(|id| f(id) + "\n").collect()
            };
            std::fs::write(
                root.join(format!("query-{name}.txt")),
                text(&|id| id.to_string()),
            )
            .expect("write");
            std::fs::write(
                root.join(format!("shas-{name}.txt")),
                text(&|id| commits[id].clone()),
            )
            .expect("write");
        }
        std::fs::write(&ready, "").expect("write");
    }
    let pairs: Vec<(EventId, String)> = std::fs::read_to_string(root.join("commits.txt"))
        .expect("commits")
        .lines()
        .map(|l| {
            let (id, sha) = l.split_once(' ').expect("pair");
            (id.parse().expect("id"), sha.to_owned())
        })
        .collect();
    let ids = |name: &str| -> Vec<EventId> {
        std::fs::read_to_string(root.join(format!("query-{name}.txt")))
            .expect("query")
            .lines()
            .map(|l| l.parse().expect("id"))
            .collect()
    };
    Fixture {
        dir,
        repo,
        id_of: pairs.iter().map(|(id, sha)| (sha.clone(), *id)).collect(),
        sha_of: pairs.into_iter().collect(),
        random: ids("random"),
        newest: ids("newest"),
    }
}

/// `akledger args… --dir dir`.
fn akledger(args: &[String], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run akledger")
}

impl Fixture {
    fn heads_of(&self, query: &[EventId]) -> (Vec<String>, Vec<String>) {
        let ours = [vec!["heads-of".to_owned()], strings(query)].concat();
        let shas: Vec<String> = query.iter().map(|id| self.sha_of[id].clone()).collect();
        let theirs = [vec!["merge-base".into(), "--independent".into()], shas].concat();
        (ours, theirs)
    }

    fn covers(&self, basis: EventId, x: EventId) -> (Vec<String>, Vec<String>) {
        let ours = vec![
            "covers".into(),
            "--basis".into(),
            basis.to_string(),
            x.to_string(),
        ];
        let theirs = vec![
            "merge-base".into(),
            "--is-ancestor".into(),
            self.sha_of[&x].clone(),
            self.sha_of[&basis].clone(),
        ];
        (ours, theirs)
    }

    /// Checks both answer `heads-of` alike, as sets of events; returns how many heads.
    fn same_heads(&self, ours: &[String], theirs: &[String]) -> usize {
        let out = akledger(ours, &self.dir);
        assert!(out.status.success(), "heads-of: {out:?}");
        let mut our_heads: Vec<EventId> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let out = git_any(&self.repo, theirs);
        assert!(out.status.success(), "git: {out:?}");
        let mut git_heads: Vec<EventId> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|sha| self.id_of[sha.trim()])
            .collect();
        our_heads.sort_unstable();
        git_heads.sort_unstable();
        assert_eq!(
            our_heads, git_heads,
            "akledger and git disagree on the heads"
        );
        our_heads.len()
    }

    /// Checks both answer `covers` alike (exit 0 covered, 1 not, for both); returns it.
    fn same_cover(&self, ours: &[String], theirs: &[String]) -> bool {
        let (a, b) = (akledger(ours, &self.dir), git_any(&self.repo, theirs));
        assert_eq!(a.status.code(), b.status.code(), "{a:?} vs {b:?}");
        a.status.success()
    }
}

fn strings(ids: &[EventId]) -> Vec<String> {
    ids.iter().map(ToString::to_string).collect()
}

fn bench(c: &mut Criterion) {
    if !git::installed() {
        eprintln!("heads_of_vs_git: skipped: git is not installed");
        return;
    }
    let sizes: Vec<usize> = std::env::var("AKLEDGER_BENCH_EVENTS")
        .unwrap_or_else(|_| "50000".into())
        .split(',')
        .map(|n| n.trim().parse().expect("AKLEDGER_BENCH_EVENTS: numbers"))
        .collect();
    let tmp = tempfile::tempdir().expect("tmp");
    let keep = std::env::var_os("AKLEDGER_BENCH_FIXTURES").map(PathBuf::from);
    for events in sizes {
        let root = keep
            .as_deref()
            .unwrap_or(tmp.path())
            .join(format!("heads-of-{events}"));
        let f = fixture(&root, events);
        let newest = f.newest[0];
        let mut group = c.benchmark_group(format!("queries_on_{events}_whole_process"));
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(10));
        for (name, query) in [("random", &f.random), ("newest", &f.newest)] {
            let (ours, theirs) = f.heads_of(query);
            let heads = f.same_heads(&ours, &theirs);
            eprintln!(
                "heads_of_vs_git: {events} events, {QUERY} {name} ids, {heads} heads (same from both)"
            );
            group.bench_function(format!("akledger_heads_of_{name}"), |b| {
                b.iter(|| akledger(&ours, &f.dir))
            });
            group.bench_function(format!("git_merge_base_independent_{name}"), |b| {
                b.iter(|| git_any(&f.repo, &theirs))
            });
        }
        let (ours, theirs) = f.covers(newest, f.random[QUERY / 2]);
        let covered = f.same_cover(&ours, &theirs);
        eprintln!(
            "heads_of_vs_git: {events} events, covers of a random id: {covered} (same from both)"
        );
        group.bench_function("akledger_covers_random", |b| {
            b.iter(|| akledger(&ours, &f.dir))
        });
        group.bench_function("git_merge_base_is_ancestor_random", |b| {
            b.iter(|| git_any(&f.repo, &theirs))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
