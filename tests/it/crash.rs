//! Crash consistency with real process kills.
//!
//! The parent tests re-run this test binary as a child (`--exact crash::crash_child`) with the
//! ledger directory and a workload in environment variables. The child opens the ledger
//! (`Durability::Sync`), appends a deterministic plan of batches (sizes 1..=max, some
//! shuffled, some swapped with the next batch, some events held back so that pending events
//! and later cascades happen, a few duplicates) and prints one line per acknowledged batch.
//! The parent kills it with SIGKILL after a seeded 5–300 ms, reopens the ledger and checks:
//!
//! * every acknowledged event is present (admitted, or pending if it was acknowledged as
//!   pending) and its stored bytes verify;
//! * no batch is visible partially: the events of the plan present after recovery are
//!   exactly those of the acknowledged batches, plus all or none of the batch in flight;
//!   in the log, each log batch holds the new events of exactly one plan batch;
//! * `check()` is clean, and the ledger keeps working: the rest of the plan is appended and
//!   everything ends up admitted.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use akledger::store::log::{LogOptions, SegmentLog};
use akledger::workload::{realm_dag, SplitMix};
use akledger::{Appended, Config, Durability, Event, EventId, Ledger, Unverified};

use crate::child_process::{self, Child};

const DIR_VAR: &str = "AKLEDGER_CRASH_DIR";
const SPEC_VAR: &str = "AKLEDGER_CRASH_SPEC";
const START_VAR: &str = "AKLEDGER_CRASH_START";
/// The workload's signed events, one per line, written once by the parent: every child
/// reads them instead of signing the workload again.
const EVENTS_VAR: &str = "AKLEDGER_CRASH_EVENTS";
/// Prefix of the child's protocol lines (libtest prints its own lines too).
const TAG: &str = "CRASH ";

/// A workload: `realm_dag(seed, events, writers, payload)` cut into batches of at most
/// `max_batch` events.
#[derive(Clone, Copy, Debug)]
struct Spec {
    seed: u64,
    events: usize,
    writers: usize,
    payload: usize,
    max_batch: usize,
}

impl Spec {
    fn encode(&self) -> String {
        format!(
            "{},{},{},{},{}",
            self.seed, self.events, self.writers, self.payload, self.max_batch
        )
    }

    fn decode(text: &str) -> Spec {
        let n: Vec<u64> = text.split(',').map(|x| x.parse().expect("spec")).collect();
        let [seed, events, writers, payload, max_batch] = n[..] else {
            panic!("bad spec {text}")
        };
        Spec {
            seed,
            events: events as usize,
            writers: writers as usize,
            payload: payload as usize,
            max_batch: max_batch as usize,
        }
    }
}

/// The events of a workload and the order they are sent in.
struct Plan {
    events: Vec<Event<Unverified>>,
    /// Batches in sending order: indices into `events` (an event may appear again, later,
    /// as a duplicate).
    batches: Vec<Vec<usize>>,
    /// The batch that sends each event first.
    owner: Vec<usize>,
}

fn shuffle<T>(v: &mut [T], rng: &mut SplitMix) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
}

/// The workload's events, signed.
fn workload(spec: &Spec) -> Vec<Event<Unverified>> {
    realm_dag(spec.seed, spec.events, spec.writers, spec.payload).expect("workload")
}

/// Deterministic: the parent and the child compute the same plan from the same spec (the
/// child from the events the parent signed).
fn plan(spec: &Spec, events: Vec<Event<Unverified>>) -> Plan {
    let n = events.len();
    let mut rng = SplitMix::new(spec.seed ^ 0x00C0_FFEE);
    let mut order: Vec<usize> = (0..n).collect();
    // Hold some events back: everything that depends on them waits, then cascades.
    for _ in 0..n / 500 + 1 {
        let from = rng.below(n);
        let to = (from + 1 + rng.below(200)).min(n - 1);
        let x = order.remove(from);
        order.insert(to, x);
    }
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut rest = order.as_slice();
    while !rest.is_empty() {
        let size = if rng.below(3) == 0 {
            1 + rng.below(4)
        } else {
            1 + rng.below(spec.max_batch)
        };
        let (head, tail) = rest.split_at(size.min(rest.len()));
        let mut batch = head.to_vec();
        if rng.below(4) == 0 {
            shuffle(&mut batch, &mut rng);
        }
        batches.push(batch);
        rest = tail;
    }
    for i in 0..batches.len().saturating_sub(1) {
        if rng.below(8) == 0 {
            batches.swap(i, i + 1);
        }
    }
    let mut owner = vec![usize::MAX; n];
    let mut sent: Vec<usize> = Vec::new();
    for (b, batch) in batches.iter_mut().enumerate() {
        for &e in batch.iter() {
            owner[e] = b;
        }
        let fresh = batch.clone();
        // A few duplicates of events sent earlier: acknowledged, never written twice.
        if !sent.is_empty() && rng.below(6) == 0 {
            for _ in 0..1 + rng.below(3) {
                let dup = sent[rng.below(sent.len())];
                batch.insert(rng.below(batch.len() + 1), dup);
            }
        }
        sent.extend(fresh);
    }
    assert!(owner.iter().all(|&b| b != usize::MAX));
    Plan {
        events,
        batches,
        owner,
    }
}

fn say(line: &str) {
    child_process::say(TAG, line);
}

/// The child: does nothing unless started by a parent test with `AKLEDGER_CRASH_DIR`.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(DIR_VAR) else {
        return;
    };
    let spec = Spec::decode(&std::env::var(SPEC_VAR).expect("spec var"));
    let start: usize = std::env::var(START_VAR)
        .expect("start var")
        .parse()
        .expect("start");
    let lines = std::fs::read(std::env::var(EVENTS_VAR).expect("events var")).expect("events");
    let events = lines
        .split(|&b| b == b'\n')
        .map(|line| Event::parse(line).expect("a signed event"))
        .collect();
    let plan = plan(&spec, events);
    say("ready");
    // State snapshots every few batches, so kills also land while one is written and
    // reopens load one and replay the log after it.
    let config = Config::new(&dir)
        .durability(Durability::Sync)
        .snapshot_interval(1 + spec.seed % 23);
    let ledger = Ledger::open_with(config).expect("open");
    let report = ledger.open_report();
    say(&format!(
        "open torn={} rebuilt={} from_snapshot={} replayed={} snapshot={:?} snapshot_ignored={:?}",
        report.log.torn_tail.is_some(),
        report.rebuilt.is_some(),
        report.index_from_snapshot.is_some(),
        report.replayed,
        report.snapshot,
        report.snapshot_ignored
    ));
    for (b, batch) in plan.batches.iter().enumerate().skip(start) {
        let bytes: Vec<&[u8]> = batch.iter().map(|&i| plan.events[i].bytes()).collect();
        say(&format!("begin {b}"));
        let out = ledger.append_batch(&bytes).expect("append");
        let codes: String = out
            .iter()
            .map(|o| match o {
                Appended::Admitted(_) => 'A',
                Appended::Pending { .. } => 'P',
                Appended::Duplicate(_) => 'D',
                _ => 'R',
            })
            .collect();
        say(&format!("ack {b} {codes}"));
    }
    say("done");
}

/// What the child printed before it died.
#[derive(Default, Debug)]
struct ChildRun {
    opened: Option<String>,
    acks: Vec<(usize, String)>,
    /// A batch begun and not acknowledged.
    in_flight: Option<usize>,
    done: bool,
    killed: bool,
}

/// Runs the child from batch `start` and kills it `kill_ms` after it is ready.
fn run_child(dir: &Path, t: &Tracker, start: usize, kill_ms: u64) -> ChildRun {
    let start = start.to_string();
    let mut child = Child::spawn(
        "crash::crash_child",
        TAG,
        &[
            (DIR_VAR, dir.as_os_str()),
            (SPEC_VAR, t.spec.encode().as_ref()),
            (EVENTS_VAR, t.events_file.path().as_os_str()),
            (START_VAR, start.as_ref()),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match child.lines.recv_timeout(Duration::from_millis(50)) {
            Ok(line) if line == "ready" => break,
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => break, // the child died (or is stuck): judged below
        }
    }
    std::thread::sleep(Duration::from_millis(kill_ms));
    child.kill();
    let (status, lines, errors) = child.wait();
    let mut run = ChildRun {
        killed: status.signal() == Some(9),
        ..ChildRun::default()
    };
    for line in &lines {
        let mut words = line.split(' ');
        match words.next() {
            Some("open") => run.opened = Some(line.clone()),
            Some("begin") => run.in_flight = Some(words.next().expect("n").parse().expect("n")),
            Some("ack") => {
                let b: usize = words.next().expect("n").parse().expect("n");
                assert_eq!(run.in_flight, Some(b), "ack without begin: {lines:?}");
                run.in_flight = None;
                run.acks
                    .push((b, words.next().unwrap_or_default().to_owned()));
            }
            Some("done") => run.done = true,
            _ => {}
        }
    }
    assert!(
        run.killed || (status.success() && run.done),
        "child failed ({status}): {lines:?}\n{errors}"
    );
    run
}

/// How an event was acknowledged.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ack {
    /// Stored (pending, or a duplicate of a stored event).
    Stored,
    Admitted,
}

/// The parent's knowledge of one workload in a directory.
struct Tracker {
    spec: Spec,
    plan: Plan,
    ids: Vec<EventId>,
    acked: HashMap<EventId, Ack>,
    /// The events, one per line, for the children (see [`EVENTS_VAR`]).
    events_file: tempfile::NamedTempFile,
    /// First batch not acknowledged.
    next: usize,
    /// Batches past `next` found in the log without an acknowledgement.
    landed: BTreeSet<usize>,
}

impl Tracker {
    fn new(spec: Spec) -> Tracker {
        let plan = plan(&spec, workload(&spec));
        let ids = plan.events.iter().map(|e| e.id()).collect();
        let mut events_file = tempfile::NamedTempFile::new().expect("events file");
        let lines: Vec<&[u8]> = plan.events.iter().map(|e| e.bytes()).collect();
        events_file
            .write_all(&lines.join(&b'\n'))
            .expect("write events");
        Tracker {
            spec,
            plan,
            ids,
            acked: HashMap::new(),
            events_file,
            next: 0,
            landed: BTreeSet::new(),
        }
    }

    fn finished(&self) -> bool {
        self.next >= self.plan.batches.len()
    }
}

/// Counts over a test's rounds.
#[derive(Default, Debug)]
struct Tally {
    rounds: usize,
    killed_opening: usize,
    killed_between_batches: usize,
    killed_mid_batch_not_logged: usize,
    killed_mid_batch_logged: usize,
    completed: usize,
    torn_tails_cut: usize,
    index_rebuilt: usize,
    /// Opens (child or parent) that rewrote the index from the state snapshot.
    index_from_snapshot: usize,
    index_replayed: usize,
    entries_replayed: u64,
    child_rebuilt: usize,
    pending_seen: usize,
    acked_batches: usize,
    /// Opens (child or parent) that loaded a state snapshot, and that ignored one.
    snapshot_loaded: usize,
    snapshot_ignored: usize,
}

/// A ledger directory and the workloads sent to it.
struct Chain {
    dir: tempfile::TempDir,
    /// Delete `index/` after every round (and the snapshot after every other): the next
    /// child must rebuild it from the log or rewrite it from the snapshot.
    delete_index: bool,
    done: Vec<Tracker>,
    current: Tracker,
}

impl Chain {
    fn new(spec: Spec) -> Chain {
        Chain {
            dir: tempfile::tempdir().expect("tempdir"),
            delete_index: false,
            done: Vec::new(),
            current: Tracker::new(spec),
        }
    }

    /// One round: run the child, kill it, verify the recovered ledger.
    fn round(&mut self, kill_ms: u64, tally: &mut Tally) {
        let dir = self.dir.path().to_owned();
        let index_was_deleted = self.delete_index && !dir.join("index").exists();
        let t = &mut self.current;
        let log_was_empty = self.done.is_empty() && t.next == 0 && t.landed.is_empty();
        let run = run_child(&dir, t, t.next, kill_ms);
        tally.rounds += 1;
        if let Some(open) = &run.opened {
            let rebuilt = open.contains("rebuilt=true");
            let from_snapshot = open.contains("from_snapshot=true");
            tally.child_rebuilt += usize::from(rebuilt);
            tally.index_from_snapshot += usize::from(from_snapshot);
            tally.snapshot_loaded += usize::from(open.contains("snapshot=Some"));
            tally.snapshot_ignored += usize::from(open.contains("snapshot_ignored=Some"));
            if index_was_deleted && !log_was_empty {
                assert!(
                    rebuilt || from_snapshot,
                    "index deleted, log not empty, yet: {open}"
                );
            }
        }
        for (b, codes) in &run.acks {
            let batch = &t.plan.batches[*b];
            assert_eq!(codes.len(), batch.len(), "batch {b}: {codes}");
            for (&e, c) in batch.iter().zip(codes.chars()) {
                let ack = match c {
                    'A' => Ack::Admitted,
                    'P' | 'D' => Ack::Stored,
                    other => panic!("batch {b}: event {e} acknowledged as {other}"),
                };
                tally.pending_seen += usize::from(c == 'P');
                let slot = t.acked.entry(t.ids[e]).or_insert(ack);
                *slot = (*slot).max(ack);
            }
            assert_eq!(*b, t.next, "acks in order");
            t.next = b + 1;
            tally.acked_batches += 1;
        }
        t.landed.retain(|&b| b >= t.next);

        let ledger = Ledger::open_with(Config::new(&dir)).expect("reopen after kill");
        let report = ledger.open_report().clone();
        tally.torn_tails_cut += usize::from(report.log.torn_tail.is_some());
        tally.index_rebuilt += usize::from(report.rebuilt.is_some());
        tally.index_from_snapshot += usize::from(report.index_from_snapshot.is_some());
        tally.index_replayed += usize::from(report.replayed > 0 && report.snapshot.is_none());
        tally.snapshot_loaded += usize::from(report.snapshot.is_some());
        tally.snapshot_ignored += usize::from(report.snapshot_ignored.is_some());
        let leftovers: Vec<String> = std::fs::read_dir(&dir)
            .expect("read dir")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with(".snapshot."))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        tally.entries_replayed += report.replayed;

        // The ledger only ever receives the workloads' events: which of them it admitted,
        // and that it admitted nothing else.
        let admitted: BTreeSet<EventId> = self
            .done
            .iter()
            .flat_map(|w| &w.ids)
            .chain(&self.current.ids)
            .filter(|id| ledger.contains(id))
            .copied()
            .collect();
        let t = &mut self.current;
        let pending: BTreeSet<EventId> = ledger.pending().into_iter().map(|(id, _)| id).collect();
        assert_eq!(admitted.len(), ledger.len());
        assert!(admitted.is_disjoint(&pending));

        // Every acknowledged event is there, as acknowledged, and its stored bytes verify.
        for (id, ack) in &t.acked {
            let stored = admitted.contains(id) || pending.contains(id);
            assert!(stored, "acknowledged event {id} lost");
            if *ack == Ack::Admitted {
                assert!(admitted.contains(id), "event {id} acknowledged as admitted");
            }
            if admitted.contains(id) {
                // The very bytes that were signed (`check` below re-verifies them all).
                let got = ledger.get(id).expect("get").expect("admitted event");
                let i = t.ids.iter().position(|x| x == id).expect("known id");
                assert_eq!(got.bytes(), t.plan.events[i].bytes());
            }
        }
        // No batch is visible partially.
        let present = |e: usize| admitted.contains(&t.ids[e]) || pending.contains(&t.ids[e]);
        let in_flight_logged = run.in_flight.map(|b| {
            let owned: Vec<usize> = (0..t.ids.len()).filter(|&e| t.plan.owner[e] == b).collect();
            let there = owned.iter().filter(|&&e| present(e)).count();
            assert!(
                there == 0 || there == owned.len(),
                "batch {b} in flight at the kill is partially visible: {there} of {}",
                owned.len()
            );
            there > 0
        });
        if let (Some(b), Some(true)) = (run.in_flight, in_flight_logged) {
            t.landed.insert(b);
        }
        for (e, &b) in t.plan.owner.iter().enumerate() {
            let expected = b < t.next || t.landed.contains(&b);
            assert_eq!(
                present(e),
                expected,
                "event {e} of batch {b} (next {}, landed {:?})",
                t.next,
                t.landed
            );
        }
        for old in &self.done {
            assert!(old.ids.iter().all(|id| admitted.contains(id)));
        }
        match (run.opened.is_some(), in_flight_logged) {
            _ if run.done => tally.completed += 1,
            (false, _) => tally.killed_opening += 1,
            (true, None) => tally.killed_between_batches += 1,
            (true, Some(false)) => tally.killed_mid_batch_not_logged += 1,
            (true, Some(true)) => tally.killed_mid_batch_logged += 1,
        }

        let check = ledger.check().expect("check");
        assert!(check.is_clean(), "{check:?}");
        assert_eq!(check.admitted, ledger.len());
        assert_eq!(check.pending, pending.len());
        drop(ledger);
        self.check_log_batches();
        if self.delete_index {
            std::fs::remove_dir_all(dir.join("index")).expect("delete index");
            // Every other round the snapshot goes too: the index is then rebuilt from the
            // log, not rewritten from the snapshot.
            if tally.rounds % 2 == 0 {
                let _ = std::fs::remove_file(dir.join("snapshot"));
            }
        }
        if self.current.finished() {
            self.next_workload();
        }
    }

    /// In the log, each batch holds new events of exactly one plan batch, and each plan
    /// batch's events are in one log batch.
    fn check_log_batches(&self) {
        let mut where_is: HashMap<EventId, (usize, usize)> = HashMap::new();
        for (w, t) in self.done.iter().chain([&self.current]).enumerate() {
            for (e, id) in t.ids.iter().enumerate() {
                where_is.insert(*id, (w, t.plan.owner[e]));
            }
        }
        let (log, _) =
            SegmentLog::open(self.dir.path().join("log"), LogOptions::default()).expect("log");
        let mut seq_of: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut batch_of: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
        for entry in log.iter() {
            let entry = entry.expect("log entry");
            let id = Event::parse(&entry.payload)
                .expect("stored event parses")
                .id();
            let key = *where_is.get(&id).expect("log holds only sent events");
            assert_eq!(
                *batch_of.entry(entry.seq).or_insert(key),
                key,
                "log batch {} mixes plan batches",
                entry.seq
            );
            assert_eq!(
                *seq_of.entry(key).or_insert(entry.seq),
                entry.seq,
                "plan batch {key:?} split across log batches"
            );
        }
    }

    fn next_workload(&mut self) {
        let spec = Spec {
            seed: self.current.spec.seed + 1000,
            ..self.current.spec
        };
        let old = std::mem::replace(&mut self.current, Tracker::new(spec));
        self.done.push(old);
    }

    /// Appends the rest of the current workload in this process: everything is admitted.
    fn finish(&mut self) {
        let ledger = Ledger::open_with(Config::new(self.dir.path())).expect("open");
        let t = &mut self.current;
        for batch in t.plan.batches.iter().skip(t.next) {
            let bytes: Vec<&[u8]> = batch.iter().map(|&i| t.plan.events[i].bytes()).collect();
            let out = ledger.append_batch(&bytes).expect("append the rest");
            assert!(out
                .iter()
                .all(|o| o.code().is_none() || matches!(o, Appended::Pending { .. })));
        }
        t.next = t.plan.batches.len();
        assert!(ledger.pending().is_empty(), "left pending");
        let admitted: BTreeSet<EventId> = ledger.iter().map(|e| e.expect("iter").id()).collect();
        for w in self.done.iter().chain([&self.current]) {
            assert!(w.ids.iter().all(|id| admitted.contains(id)));
        }
        let total: usize = self
            .done
            .iter()
            .chain([&self.current])
            .map(|w| w.ids.len())
            .sum();
        assert_eq!(ledger.len(), total);
        let check = ledger.check().expect("check");
        assert!(check.is_clean(), "{check:?}");
    }
}

fn spec(seed: u64, max_batch: usize) -> Spec {
    Spec {
        seed,
        events: 1500,
        writers: 8,
        payload: 256,
        max_batch,
    }
}

fn kill_delay(rng: &mut SplitMix) -> u64 {
    5 + rng.below(296) as u64
}

#[test]
fn sigkill_during_appends_loses_nothing_acknowledged() {
    let started = Instant::now();
    let mut rng = SplitMix::new(0xC4A5_0001);
    let mut tally = Tally::default();
    // Recovery on top of recovery: one directory through many kills.
    let mut chain = Chain::new(spec(11, 200));
    for _ in 0..14 {
        chain.round(kill_delay(&mut rng), &mut tally);
    }
    chain.finish();
    eprintln!(
        "sigkill_during_appends: {tally:?} in {:?}",
        started.elapsed()
    );
    assert!(tally.rounds >= 14);
    assert!(
        tally.snapshot_loaded > 0,
        "no open loaded a snapshot: {tally:?}"
    );
}

#[test]
fn sigkill_during_the_first_appends_to_a_directory_loses_nothing_acknowledged() {
    // (Its own test, beside the chain above, so that the two run in parallel.)
    let started = Instant::now();
    let mut rng = SplitMix::new(0xC4A5_0004);
    let mut tally = Tally::default();
    for seed in 0..8 {
        let mut chain = Chain::new(spec(100 + seed, 200));
        chain.round(kill_delay(&mut rng), &mut tally);
        chain.finish();
    }
    eprintln!(
        "sigkill_during_first_appends: {tally:?} in {:?}",
        started.elapsed()
    );
    assert!(tally.rounds >= 8);
}

#[test]
fn sigkill_while_the_index_is_written_behind_the_log() {
    // Many small batches: many commits (log write, then sled, then the acknowledgement),
    // so kills land between the log write and the index write. sled flushes lazily, so
    // after a kill the index is behind the log and the gap is replayed.
    let started = Instant::now();
    let mut rng = SplitMix::new(0xC4A5_0002);
    let mut tally = Tally::default();
    let mut chain = Chain::new(spec(21, 20));
    for _ in 0..12 {
        chain.round(kill_delay(&mut rng), &mut tally);
    }
    chain.finish();
    eprintln!(
        "sigkill_while_the_index_is_written: {tally:?} in {:?}",
        started.elapsed()
    );
    // The log ahead of what the index (or the snapshot, taken every 22 entries here) holds:
    // some open replayed the gap. Which of the two it started from is up to timing.
    assert!(
        tally.entries_replayed > 0,
        "never saw the log ahead of the index: {tally:?}"
    );
}

#[test]
fn sigkill_with_the_index_deleted_between_rounds() {
    let started = Instant::now();
    let mut rng = SplitMix::new(0xC4A5_0003);
    let mut tally = Tally::default();
    let mut chain = Chain::new(spec(31, 200));
    chain.delete_index = true;
    for _ in 0..8 {
        chain.round(kill_delay(&mut rng), &mut tally);
    }
    chain.finish();
    eprintln!(
        "sigkill_with_the_index_deleted: {tally:?} in {:?}",
        started.elapsed()
    );
    assert!(
        tally.child_rebuilt + tally.index_rebuilt > 0,
        "no rebuild from the log seen: {tally:?}"
    );
    // Which opens the kills interrupt is up to timing; whatever they hit, an index removed
    // beside a usable snapshot is rewritten from it, not rebuilt from the log.
    let dir = chain.dir.path();
    Ledger::open(dir).unwrap().close().unwrap();
    std::fs::remove_dir_all(dir.join("index")).expect("delete index");
    let ledger = Ledger::open(dir).unwrap();
    let report = ledger.open_report();
    assert!(report.index_from_snapshot.is_some(), "{report:?}");
    assert!(report.rebuilt.is_none(), "{report:?}");
    assert!(ledger.check().unwrap().is_clean());
}
