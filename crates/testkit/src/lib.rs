//! Fixtures shared by the crates' integration tests and benchmarks: everything of
//! `akledger-testkit-core` (fixed keys, a small realm/sidecar world, `reseal`, the replay of
//! fuzz corpora), and what needs the engine or a process: a `nats-server` of a test's own
//! ([`nats`]), the aea test partner ([`aea`]), ledger and directory helpers. Test code: it
//! panics on what it sets up itself.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

pub use akledger_testkit_core::*;

pub mod aea;
pub mod cpu;
pub mod git;
pub mod nats;
pub mod timed;

use akledger::ed25519_dalek::SigningKey;
use akledger::{ActorId, Event, EventBuilder, Object, ScopeRef, Timestamp, Unverified};

/// Runs `append` (which appends batches of `batch` events after one committed event) on
/// another thread while this one asserts that every length it reads is a whole number of
/// batches and the heads it reads are consistent.
pub fn assert_readers_see_whole_batches(
    ledger: &akledger::Ledger,
    batch: usize,
    append: impl FnOnce() + Send,
) {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            append();
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut observed = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let len = ledger.len();
            assert_eq!((len - 1) % batch, 0, "saw {len} events: part of a batch");
            let heads = ledger.heads();
            assert_eq!(ledger.heads_of(&heads).unwrap(), heads);
            observed += 1;
        }
        assert!(observed > 0);
    });
}

/// A keyring authorizing each of `keys` for the (not self-certifying) `principal`.
pub fn keyring_authorizing(
    principal: &akledger::DidCoreId,
    keys: &[&SigningKey],
) -> akledger::Keyring {
    let mut keyring = akledger::Keyring::new();
    for key in keys {
        keyring
            .authorize(principal.clone(), key.verifying_key())
            .expect("a principal of another method may be widened");
    }
    keyring
}

/// Every file under `dir` with its bytes.
pub fn files(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    paths(dir)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

/// Every file under `dir`.
pub fn paths(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Copies directory `from`, files and subdirectories, into `to` (created).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Writes back every file under `dir` (`fdatasync`): a benchmark that times work on fresh
/// copies calls it before the clock starts, or the first sync inside the timed work (a
/// log segment's rotation, a fetched pack's) waits for the copies' dirty pages too.
pub fn write_back(dir: &std::path::Path) {
    for path in paths(dir) {
        std::fs::File::open(&path).unwrap().sync_data().unwrap();
    }
}

/// The items laid out one after another in one buffer, each after `gap` (bytes in no
/// item), and where each one is: a batch as `Pipeline::push_spans` takes it.
pub fn one_buffer<B: AsRef<[u8]>>(
    items: &[B],
    gap: &[u8],
) -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let mut buffer = Vec::new();
    let mut spans = Vec::new();
    for item in items {
        buffer.extend_from_slice(gap);
        let start = buffer.len();
        buffer.extend_from_slice(item.as_ref());
        spans.push(start..buffer.len());
    }
    (buffer, spans)
}

/// A realm and `n` realm notes whose texts are about `size` bytes each, all by one key.
pub fn notes(n: usize, size: usize) -> Vec<Event<Unverified>> {
    let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let me = ActorId::service_for_key(&key.verifying_key());
    let t0 = Timestamp::parse("2026-11-29T12:00:00.000Z").unwrap();
    let realm = akledger::exchange::create_realm(&key, me.clone(), t0).unwrap();
    let scope = ScopeRef::Realm {
        realm_id: realm.id().retype(),
    };
    let mut out = vec![realm];
    for i in 0..n {
        let text = format!("{i:06}{}", "x".repeat(size));
        let note = EventBuilder::new("ak.note.create", scope, me.clone(), t0)
            .payload(Object::new().with("text", text.as_str().into()).into())
            .sign(&key)
            .unwrap();
        out.push(note);
    }
    out
}

/// Events both ledgers of the sync benches hold (`benches/sync.rs`, `sync_vs_git_fetch`).
pub const SYNC_SHARED: usize = 90_000;
/// Events of each of their two divergent tails.
pub const SYNC_TAIL: usize = 10_000;

/// The sync benches' two histories, signed on every core: a realm DAG of 16 writers with
/// payloads of about 256 bytes (seed 7), its first [`SYNC_SHARED`] events (the realm
/// first), and two tails of [`SYNC_TAIL`] events forked from there (forks 1 and 2).
pub fn divergent_histories() -> (Vec<Event<Unverified>>, [Vec<Event<Unverified>>; 2]) {
    use akledger::workload::{sign_all, RealmDag};
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (mut dag, realm) = RealmDag::new(7, 16, 256).unwrap();
    let mut shared = vec![realm];
    shared.extend(sign_all(&dag.plan(SYNC_SHARED - 1).unwrap(), threads).unwrap());
    let tails =
        [1, 2].map(|fork| sign_all(&dag.fork(fork).plan(SYNC_TAIL).unwrap(), threads).unwrap());
    (shared, tails)
}
