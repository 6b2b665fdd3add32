//! A git repository holding an event DAG, for benchmarks that time git beside akledger on
//! the same graph: one commit per event, its parents the event's DAG edges, written through
//! `git fast-import`. Skipped by its callers when `git` is absent ([`installed`]).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use akledger::EventId;

/// The branch every event's commit is made on; it ends at the last event.
const BRANCH: &str = "refs/heads/dag";

/// Each head of the DAG (an event that is no other event's parent) has a branch of this
/// prefix, so that every commit is reachable from a branch, as `git fetch` needs.
pub const HEAD_BRANCHES: &str = "refs/heads/head-";

/// Whether a `git` runs here.
pub fn installed() -> bool {
    Command::new("git").arg("--version").output().is_ok()
}

/// `git -C repo args…`, which must succeed.
pub fn git<S: AsRef<std::ffi::OsStr>>(repo: &Path, args: &[S]) -> Output {
    let out = git_any(repo, args);
    assert!(
        out.status.success(),
        "git {:?}: {out:?}",
        args.iter().map(AsRef::as_ref).collect::<Vec<_>>()
    );
    out
}

/// `git -C repo args…`, whatever its exit status.
pub fn git_any<S: AsRef<std::ffi::OsStr>>(repo: &Path, args: &[S]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("run git")
}

/// Writes the DAG into a new repository `repo`, in the order given (parents first), with a
/// branch at each head ([`HEAD_BRANCHES`]) and a commit-graph file; returns each event's
/// commit. Event `i`'s commit
/// message is `messages[i]` (empty past the end of `messages`); its parents are those of
/// its edges that are in `events`.
pub fn git_repo(
    repo: &Path,
    events: &[(EventId, Vec<EventId>)],
    messages: &[&[u8]],
) -> HashMap<EventId, String> {
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, &["init", "-q"]);
    let mut mark: HashMap<EventId, usize> = HashMap::new();
    let mut stream = Vec::new();
    let mut is_parent = vec![false; events.len() + 1];
    for (i, (id, parents)) in events.iter().enumerate() {
        let n = i + 1;
        mark.insert(*id, n);
        let parents: Vec<usize> = parents
            .iter()
            .filter_map(|p| mark.get(p).copied())
            .collect();
        if parents.is_empty() {
            writeln!(stream, "reset {BRANCH}").expect("write");
        }
        let message = messages.get(i).copied().unwrap_or_default();
        write!(
            stream,
            "commit {BRANCH}\nmark :{n}\ncommitter a <a@a> {n} +0000\ndata {}\n",
            message.len()
        )
        .expect("write");
        stream.extend_from_slice(message);
        stream.push(b'\n');
        for (k, &p) in parents.iter().enumerate() {
            let verb = if k == 0 { "from" } else { "merge" };
            writeln!(stream, "{verb} :{p}").expect("write");
            is_parent[p] = true;
        }
        stream.push(b'\n');
    }
    for n in (1..=events.len()).filter(|&n| !is_parent[n]) {
        writeln!(stream, "reset {HEAD_BRANCHES}{n}\nfrom :{n}\n").expect("write");
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
    std::fs::remove_file(&marks).expect("remove marks");
    mark.into_iter()
        .filter_map(|(id, m)| Some((id, by_mark.get(&m)?.clone())))
        .collect()
}
