//! Ledger behaviour through the public API: admission, idempotence, pending release,
//! every admission rejection (with nothing written), out-of-order arrival, reopen and
//! recovery, concurrency, and `check()`.

use akledger_testkit as common;

use std::collections::BTreeSet;
use std::path::Path;

use akledger::ed25519_dalek::SigningKey;
use akledger::exchange::{create_private_sidecar, create_realm};
use akledger::workload::{realm_dag, writer_key, SplitMix};
use akledger::{
    ActorId, Appended, Code, Config, DidCoreId, Durability, Event, EventBuilder, EventId, Ledger,
    ScopeRef, Timestamp, Unverified,
};

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(akledger::workload::EPOCH_MILLIS + ms).unwrap()
}

fn open(dir: &Path) -> Ledger {
    Ledger::open_with(Config::new(dir).durability(Durability::Buffered)).unwrap()
}

fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

fn ids(events: &[Event<Unverified>]) -> BTreeSet<EventId> {
    events.iter().map(|e| e.id()).collect()
}

fn admitted_set(ledger: &Ledger) -> BTreeSet<EventId> {
    ledger.iter().map(|e| e.unwrap().id()).collect()
}

#[test]
fn append_is_idempotent_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let events = realm_dag(1, 200, 4, 64).unwrap();
    {
        let ledger = open(dir.path());
        let out = ledger
            .append_batch(&events.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
        assert!(
            out.iter().all(|o| matches!(o, Appended::Admitted(_))),
            "{out:?}"
        );
        let again = ledger.append(events[5].bytes()).unwrap();
        assert_eq!(again, Appended::Duplicate(events[5].id()));
        assert_eq!(ledger.len(), 201);
        assert!(ledger.check().unwrap().is_clean());
    }
    let ledger = open(dir.path());
    assert_eq!(ledger.len(), 201);
    assert_eq!(admitted_set(&ledger), ids(&events));
    let got = ledger.get(&events[7].id()).unwrap().unwrap();
    assert_eq!(got.bytes(), events[7].bytes());
    assert!(ledger.open_report().rebuilt.is_none());
    assert_eq!(ledger.open_report().replayed, 0);
    let report = ledger.check().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.admitted, 201);
}

#[test]
fn shuffled_arrival_one_by_one_matches_in_order() {
    let events = realm_dag(2, 300, 8, 16).unwrap();
    let in_order = tempfile::tempdir().unwrap();
    let a = open(in_order.path());
    for e in &events {
        a.append(e.bytes()).unwrap();
    }
    for seed in 0..3u64 {
        let mut shuffled: Vec<&Event<Unverified>> = events.iter().collect();
        let mut rng = SplitMix::new(seed);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let b = open(dir.path());
        let mut saw_pending = false;
        for e in &shuffled {
            saw_pending |= matches!(b.append(e.bytes()).unwrap(), Appended::Pending { .. });
        }
        assert!(saw_pending, "a shuffle should make something wait");
        assert!(
            b.pending().is_empty(),
            "left pending: {:?}",
            b.pending().len()
        );
        assert_eq!(admitted_set(&b), admitted_set(&a));
        assert_eq!(b.heads(), a.heads());
        let some: Vec<EventId> = events.iter().step_by(37).map(|e| e.id()).collect();
        assert_eq!(b.heads_of(&some).unwrap(), a.heads_of(&some).unwrap());
        assert_eq!(
            b.ancestors(&events[250].id()).unwrap(),
            a.ancestors(&events[250].id()).unwrap()
        );
        assert!(b.check().unwrap().is_clean());
        drop(b);
        let reopened = open(dir.path());
        assert_eq!(admitted_set(&reopened), admitted_set(&a));
    }
}

#[test]
fn pending_events_wait_durably_and_cascade() {
    let dir = tempfile::tempdir().unwrap();
    let events = realm_dag(3, 50, 1, 8).unwrap();
    {
        let ledger = open(dir.path());
        // Everything but the realm: one chain waiting on its root.
        for e in events.iter().skip(1).rev() {
            assert!(matches!(
                ledger.append(e.bytes()).unwrap(),
                Appended::Pending { .. }
            ));
        }
        assert_eq!(ledger.len(), 0);
        assert_eq!(ledger.pending().len(), 50);
        let missing: BTreeSet<EventId> =
            ledger.pending().into_iter().flat_map(|(_, m)| m).collect();
        assert!(missing.contains(&events[0].id()));
    }
    let ledger = open(dir.path());
    assert_eq!(ledger.pending().len(), 50, "pending events survive reopen");
    assert_eq!(
        ledger.append(events[0].bytes()).unwrap(),
        Appended::Admitted(events[0].id())
    );
    assert_eq!(ledger.len(), 51);
    assert!(ledger.pending().is_empty());
    assert_eq!(ledger.heads(), vec![events[50].id()]);
    assert!(ledger.check().unwrap().is_clean());
}

/// Appends `bytes` and requires a rejection with `code` that wrote nothing.
fn rejects(ledger: &Ledger, dir: &Path, bytes: &[u8], code: Code) {
    let before = log_bytes(dir);
    let len = ledger.len();
    let pending = ledger.pending().len();
    match ledger.append(bytes).unwrap() {
        Appended::Rejected { rejection, .. } => assert_eq!(rejection.code(), code, "{rejection}"),
        other => panic!("expected {code}, got {other:?}"),
    }
    assert_eq!(log_bytes(dir), before, "a rejected event wrote to the log");
    assert_eq!((ledger.len(), ledger.pending().len()), (len, pending));
}

struct World {
    controller: SigningKey,
    agent: SigningKey,
    realm: Event<Unverified>,
    sidecar: Event<Unverified>,
    /// The controller's private strand and its attach.
    strand: Event<Unverified>,
    attach: Event<Unverified>,
}

fn service(key: &SigningKey) -> ActorId {
    ActorId::service_for_key(&key.verifying_key())
}

fn world(seed: u64) -> World {
    let controller = writer_key(seed, 100);
    let agent = writer_key(seed, 101);
    let realm = create_realm(&controller, service(&controller), at(0)).unwrap();
    let private = create_private_sidecar(
        &controller,
        service(&controller),
        realm.id().retype(),
        None,
        at(1),
    )
    .unwrap();
    World {
        controller,
        agent,
        realm,
        sidecar: private.sidecar,
        strand: private.strand,
        attach: private.attach,
    }
}

/// A control naming the world's private strand, after its attach.
fn control(w: &World, by: &SigningKey, scope: ScopeRef, created: u64) -> Event<Unverified> {
    let payload = common::control_payload_in(scope, &service(by), w.strand.id().retype());
    EventBuilder::new(
        "ak.agent.sidecar.exchange.control",
        scope,
        service(by),
        at(created),
    )
    .after([w.attach.id()])
    .payload(payload.into())
    .sign(by)
    .unwrap()
}

#[test]
fn every_admission_rejection_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let w = world(4);
    let ledger = open(dir.path());
    for e in [&w.realm, &w.sidecar, &w.strand, &w.attach] {
        ledger.append(e.bytes()).unwrap();
    }
    let realm_id = w.realm.id().retype();
    let sidecar_id = w.sidecar.id().retype();
    let sidecar_scope = ScopeRef::Sidecar {
        realm_id,
        sidecar_id,
    };

    // Bad bytes: a core rejection.
    let mut tampered = w.sidecar.bytes().to_vec();
    tampered[30] ^= 1;
    rejects(&ledger, dir.path(), &tampered, Code::SchemaViolation);

    // created_at earlier than a causal parent's.
    let early = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm { realm_id },
        service(&w.agent),
        at(0),
    )
    .after([w.sidecar.id()])
    .sign(&w.agent)
    .unwrap();
    rejects(
        &ledger,
        dir.path(),
        early.bytes(),
        Code::CreatedAtBeforeCausalPredecessor,
    );

    // A second, different sidecar for the same controller in the same realm.
    let second = EventBuilder::new(
        "ak.sidecar.create",
        ScopeRef::Realm { realm_id },
        service(&w.controller),
        at(5),
    )
    .after([w.realm.id()])
    .sign(&w.controller)
    .unwrap();
    rejects(
        &ledger,
        dir.path(),
        second.bytes(),
        Code::SidecarSingletonConflict,
    );

    // A control authored by an agent.
    rejects(
        &ledger,
        dir.path(),
        control(&w, &w.agent, sidecar_scope, 6).bytes(),
        Code::SidecarExchangeControlForbidden,
    );
    // The controller's own control is admitted.
    let ok = control(&w, &w.controller, sidecar_scope, 6);
    assert_eq!(
        ledger.append(ok.bytes()).unwrap(),
        Appended::Admitted(ok.id())
    );

    // A sidecar-scoped event naming a realm the sidecar is not in.
    let other_realm = EventBuilder::new(
        "ak.realm.create",
        ScopeRef::RealmGenesis,
        service(&w.agent),
        at(0),
    )
    .sign(&w.agent)
    .unwrap();
    ledger.append(other_realm.bytes()).unwrap();
    let wrong = ScopeRef::Sidecar {
        realm_id: other_realm.id().retype(),
        sidecar_id,
    };
    let misplaced = EventBuilder::new("ak.note.create", wrong, service(&w.agent), at(7))
        .sign(&w.agent)
        .unwrap();
    rejects(
        &ledger,
        dir.path(),
        misplaced.bytes(),
        Code::SchemaViolation,
    );
    rejects(
        &ledger,
        dir.path(),
        control(&w, &w.controller, wrong, 7).bytes(),
        Code::SidecarExchangeControlForbidden,
    );

    // A scope naming an event that is not a sidecar create.
    let fake = ScopeRef::Sidecar {
        realm_id,
        sidecar_id: w.realm.id().retype(),
    };
    let bogus = EventBuilder::new("ak.note.create", fake, service(&w.agent), at(8))
        .sign(&w.agent)
        .unwrap();
    rejects(&ledger, dir.path(), bogus.bytes(), Code::SchemaViolation);

    // Same id, other bytes: one envelope signed by two keys authorized for one principal.
    let principal = DidCoreId::parse("ak:did_core:web:example.org").unwrap();
    let (k1, k2) = (writer_key(4, 200), writer_key(4, 201));
    let keyring = common::keyring_authorizing(&principal, &[&k1, &k2]);
    let dir2 = tempfile::tempdir().unwrap();
    let ledger2 = Ledger::open_with(Config::new(dir2.path()).keyring(keyring)).unwrap();
    let actor = ActorId::Service {
        service_id: principal,
    };
    let one = EventBuilder::new(
        "ak.realm.create",
        ScopeRef::RealmGenesis,
        actor.clone(),
        at(0),
    )
    .sign(&k1)
    .unwrap();
    let two = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, actor, at(0))
        .sign(&k2)
        .unwrap();
    assert_eq!(one.id(), two.id());
    assert_ne!(one.bytes(), two.bytes());
    assert_eq!(
        ledger2.append(one.bytes()).unwrap(),
        Appended::Admitted(one.id())
    );
    rejects(&ledger2, dir2.path(), two.bytes(), Code::DuplicateConflict);
    // A pending event, resubmitted with other bytes, is a conflict too.
    let realm2: akledger::RealmId =
        EventId::of_preimage(akledger::DigestSuite::Blake3, b"absent").retype();
    let actor2 = ActorId::Service {
        service_id: DidCoreId::parse("ak:did_core:web:example.org").unwrap(),
    };
    let p1 = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm { realm_id: realm2 },
        actor2.clone(),
        at(1),
    )
    .sign(&k1)
    .unwrap();
    let p2 = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm { realm_id: realm2 },
        actor2,
        at(1),
    )
    .sign(&k2)
    .unwrap();
    assert!(matches!(
        ledger2.append(p1.bytes()).unwrap(),
        Appended::Pending { .. }
    ));
    assert!(matches!(
        ledger2.append(p1.bytes()).unwrap(),
        Appended::Pending { .. }
    ));
    rejects(&ledger2, dir2.path(), p2.bytes(), Code::DuplicateConflict);
    assert!(ledger.check().unwrap().is_clean());
    assert!(ledger2.check().unwrap().is_clean());
}

#[test]
fn a_pending_event_rejected_on_release_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let w = world(5);
    let ledger = open(dir.path());
    let realm_id = w.realm.id().retype();
    let sidecar_scope = ScopeRef::Sidecar {
        realm_id,
        sidecar_id: w.sidecar.id().retype(),
    };
    let forged = control(&w, &w.agent, sidecar_scope, 9);
    assert!(matches!(
        ledger.append(forged.bytes()).unwrap(),
        Appended::Pending { .. }
    ));
    ledger
        .append_batch(&[
            w.realm.bytes(),
            w.sidecar.bytes(),
            w.strand.bytes(),
            w.attach.bytes(),
        ])
        .unwrap();
    assert_eq!(ledger.len(), 4);
    assert!(ledger.pending().is_empty());
    let rejected = ledger.rejected_on_release();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, forged.id());
    assert_eq!(rejected[0].1.code(), Code::SidecarExchangeControlForbidden);
    drop(ledger);
    let ledger = open(dir.path());
    assert_eq!(ledger.rejected_on_release().len(), 1);
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn ten_thousand_pending_released_in_one_cascade() {
    let events = realm_dag(6, 10_000, 1, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let rest: Vec<&[u8]> = events.iter().skip(1).map(|e| e.bytes()).collect();
    for chunk in rest.chunks(2000) {
        let out = ledger.append_batch(chunk).unwrap();
        assert!(out.iter().all(|o| matches!(o, Appended::Pending { .. })));
    }
    assert_eq!(ledger.pending().len(), 10_000);
    let before = log_bytes(dir.path());
    assert_eq!(
        ledger.append(events[0].bytes()).unwrap(),
        Appended::Admitted(events[0].id())
    );
    assert_eq!(ledger.len(), 10_001);
    assert!(ledger.pending().is_empty());
    assert!(
        log_bytes(dir.path()) - before < 4096,
        "release must not rewrite the events"
    );
    assert_eq!(ledger.heads(), vec![events[10_000].id()]);
}

#[test]
fn deleting_the_index_rebuilds_it_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let events = realm_dag(7, 100, 3, 8).unwrap();
    {
        let ledger = open(dir.path());
        ledger
            .append_batch(&events.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
    }
    std::fs::remove_dir_all(dir.path().join("index")).unwrap();
    let ledger = open(dir.path());
    assert!(ledger.open_report().rebuilt.is_some());
    assert_eq!(admitted_set(&ledger), ids(&events));
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn truncated_log_recovers_and_flipped_byte_is_a_clear_error() {
    let events = realm_dag(8, 40, 2, 8).unwrap();
    let build = |dir: &Path| {
        let ledger = Ledger::open_with(Config::new(dir)).unwrap();
        ledger
            .append_batch(&events[..20].iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
        ledger
            .append_batch(&events[20..].iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
    };
    let segment = |dir: &Path| {
        dir.join("log")
            .join(akledger::store::log::segment_file_name(0))
    };

    // Cut the last (acknowledged) batch in the middle of a record: the open refuses,
    // naming the file and what is missing, and changes nothing.
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let len = std::fs::metadata(segment(dir.path())).unwrap().len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(segment(dir.path()))
        .unwrap();
    file.set_len(len - 300).unwrap();
    let err = Ledger::open(dir.path()).unwrap_err();
    assert_eq!(err.fault(), akledger::Fault::Corruption, "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&akledger::store::log::segment_file_name(0))
            && text.contains("21 acknowledged events are missing"),
        "{text}"
    );
    assert_eq!(
        std::fs::metadata(segment(dir.path())).unwrap().len(),
        len - 300
    );

    // Flip a byte inside the first batch: a writer's open is a corruption error naming the
    // file. A read-only open scans only past the acknowledged mark, so it opens (from the
    // snapshot), and reading the damaged entry is the same corruption error.
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let mut bytes = std::fs::read(segment(dir.path())).unwrap();
    bytes[400] ^= 0x40;
    std::fs::write(segment(dir.path()), &bytes).unwrap();
    let reader = Ledger::open_with(Config::new(dir.path()).read_only(true)).unwrap();
    assert_eq!(reader.len(), events.len());
    let err = reader.get(&events[0].id()).unwrap_err();
    assert_eq!(err.fault(), akledger::Fault::Corruption, "{err}");
    drop(reader);
    let err = Ledger::open(dir.path()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(".log") && text.contains("400") || text.contains("corrupt"),
        "{text}"
    );
    assert_eq!(err.fault(), akledger::Fault::Corruption, "{text}");
}

#[test]
fn concurrent_appenders_and_readers_match_a_serial_replay() {
    let events = realm_dag(9, 2000, 8, 32).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(events[0].bytes()).unwrap();
    let per_thread: Vec<Vec<&Event<Unverified>>> = (0..8)
        .map(|t| events.iter().skip(1).skip(t).step_by(8).collect())
        .collect();
    let root = events[0].id();
    std::thread::scope(|s| {
        for mine in &per_thread {
            let ledger = &ledger;
            s.spawn(move || {
                for chunk in mine.chunks(17) {
                    let bytes: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
                    ledger.append_batch(&bytes).unwrap();
                    let heads = ledger.heads();
                    assert!(!heads.is_empty());
                    ledger.covers(&heads, &root).unwrap();
                }
            });
        }
        s.spawn(|| {
            for _ in 0..200 {
                let n = ledger.len();
                assert!(ledger.iter().take(n).all(|e| e.is_ok()));
            }
        });
    });
    assert!(ledger.pending().is_empty());
    assert_eq!(admitted_set(&ledger), ids(&events));
    let serial_dir = tempfile::tempdir().unwrap();
    let serial = open(serial_dir.path());
    for e in &events {
        serial.append(e.bytes()).unwrap();
    }
    assert_eq!(ledger.heads(), serial.heads());
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn a_batch_whose_sync_failed_is_never_read_and_reopening_recovers_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let events = realm_dag(2, 40, 4, 64).unwrap();
    let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let (first, second) = bytes.split_at(20);
    {
        // Synced batches: each is applied to the state while its sync is under way.
        let ledger = Ledger::open(dir.path()).unwrap();
        ledger.append_batch(first).unwrap();
        assert_eq!(ledger.len(), 20);
        akledger::internals::FAIL_LOG_SYNCS.with(|f| f.set(true));
        let failed = ledger.append_batch(second);
        akledger::internals::FAIL_LOG_SYNCS.with(|f| f.set(false));
        assert!(failed.is_err(), "{failed:?}");
        // The state holds the second batch, which the disk may not: nothing reads it.
        assert!(matches!(
            ledger.get(&events[0].id()),
            Err(akledger::Error::Poisoned)
        ));
        assert_eq!(ledger.len(), 0);
        assert!(ledger.append_batch(&second[..1]).is_err());
    }
    // The bytes were written (only the sync was made to fail): reopening finds both
    // batches, and the ledger is whole.
    let ledger = Ledger::open(dir.path()).unwrap();
    assert_eq!(admitted_set(&ledger), ids(&events));
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn the_ledger_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Ledger>();
}

#[test]
fn readers_never_see_part_of_a_batch() {
    const BATCH: usize = 50;
    let events = realm_dag(10, 40 * BATCH, 4, 8).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    ledger.append(events[0].bytes()).unwrap();
    common::assert_readers_see_whole_batches(&ledger, BATCH, || {
        for chunk in events[1..].chunks(BATCH) {
            let bytes: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
            ledger.append_batch(&bytes).unwrap();
        }
    });
    assert_eq!(ledger.len(), events.len());
}

#[test]
fn a_directory_holds_one_open_ledger_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path());
    let err = Ledger::open(dir.path()).unwrap_err();
    assert!(matches!(err, akledger::Error::AlreadyOpen { .. }), "{err}");
    assert!(err.to_string().contains("already open"), "{err}");
    // Read-only opens share the lock with each other; beside a writer they read unlocked.
    let read_only = || Ledger::open_with(Config::new(dir.path()).read_only(true));
    assert!(read_only().unwrap().open_report().beside_writer);
    drop(first);
    let (a, b) = (read_only().unwrap(), read_only().unwrap());
    assert!(matches!(
        Ledger::open(dir.path()),
        Err(akledger::Error::AlreadyOpen { .. })
    ));
    drop((a, b));
    assert!(
        Ledger::open(dir.path()).is_ok(),
        "usable again once the first is closed"
    );
}

/// Readers beside a writer (SQLite's WAL readers): each read-only open while the writer
/// holds the ledger sees every batch whole in the log, and the tree, checkpoint and state
/// snapshot the writer recorded agree with it; a batch still being written is left for the
/// next open without a word; nothing on disk changes.
#[test]
fn readers_beside_a_writer_see_every_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let events = realm_dag(3, 400, 4, 64).unwrap();
    let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let key = SigningKey::from_bytes(&[7; 32]);
    let writer_config = || {
        Config::new(dir.path())
            .checkpoint_every(50, key.clone())
            .snapshot_interval(100)
            .origin("example.com/beside")
    };
    let read = || {
        let reader = Ledger::open_with(Config::new(dir.path()).read_only(true)).unwrap();
        assert!(reader.open_report().beside_writer);
        assert!(
            reader.open_report().actions().is_empty(),
            "{:?}",
            reader.open_report()
        );
        reader
    };
    let writer = Ledger::open_with(writer_config()).unwrap();
    let (first, rest) = bytes.split_at(240);
    for chunk in first.chunks(60) {
        writer.append_batch(chunk).unwrap();
        let reader = read();
        assert_eq!(reader.len(), writer.len());
        assert_eq!(reader.root().unwrap(), writer.root().unwrap());
        assert_eq!(reader.heads(), writer.heads());
    }
    // A batch being written: bytes past the last whole batch, with no commit frame yet.
    let segment = std::fs::read_dir(dir.path().join("log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    let whole = std::fs::read(&segment).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[whole.len() - 90..whole.len() - 40]);
    std::fs::write(&segment, &torn).unwrap();
    let reader = read();
    assert_eq!(reader.len(), writer.len());
    assert!(reader.open_report().log.torn_tail_left.is_some());
    drop(reader);
    std::fs::write(&segment, &whole).unwrap();
    // Closed (a state snapshot written), reopened and appended to: the reader starts from
    // the snapshot and replays the log after it.
    writer.close().unwrap();
    let writer = Ledger::open_with(writer_config()).unwrap();
    writer.append_batch(rest).unwrap();
    let reader = read();
    assert!(reader.open_report().snapshot.is_some());
    assert_eq!(admitted_set(&reader), ids(&events));
    assert_eq!(reader.root().unwrap(), writer.root().unwrap());
    drop((reader, writer));
    assert!(open(dir.path()).check().unwrap().is_clean());
}

#[test]
fn an_oversized_batch_is_refused_without_poisoning_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path());
    let big = vec![b'x'; 1 << 20];
    let too_many: Vec<&[u8]> = vec![&big; 200];
    let err = ledger.append_batch(&too_many).unwrap_err();
    assert_eq!(err.fault(), akledger::Fault::CallerMisuse, "{err}");
    let events = realm_dag(11, 3, 1, 8).unwrap();
    assert_eq!(
        ledger.append(events[0].bytes()).unwrap(),
        Appended::Admitted(events[0].id())
    );
}

/// `append_verified` admits events verified already as `append_batch` admits their bytes
/// (the same outcomes, the same log), and checks each one's authorization against the
/// ledger's own keyring: an event verified against a keyring that authorizes its key, but
/// not this ledger's, is rejected with the code verification gives, and nothing is written.
#[test]
fn events_verified_already_are_admitted_as_their_bytes_are() {
    use akledger::{Keyring, Object, Verifier};
    let events = realm_dag(3, 50, 4, 64).unwrap();
    let verifier = Verifier::new(Keyring::new());
    let verified: Vec<Event> = events
        .iter()
        .map(|e| e.clone().verify(&verifier).unwrap())
        .collect();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (by_bytes, by_events) = (open(a.path()), open(b.path()));
    let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let expected = by_bytes.append_batch(&bytes).unwrap();
    let got = by_events
        .append_verified(verified.clone())
        .unwrap()
        .outcomes;
    assert_eq!(got, expected);
    let read =
        |l: &Ledger| -> Vec<Vec<u8>> { l.iter().map(|e| e.unwrap().bytes().to_vec()).collect() };
    assert_eq!(read(&by_events), read(&by_bytes));
    let again = by_events.append_verified(verified[..3].to_vec()).unwrap();
    assert!(again
        .outcomes
        .iter()
        .all(|o| matches!(o, Appended::Duplicate(_))));

    let key = writer_key(3, 99);
    let web = DidCoreId::parse("ak:did_core:web:example.org").unwrap();
    let mut ring = Keyring::new();
    ring.authorize(web.clone(), key.verifying_key()).unwrap();
    let realm = events[0].id();
    let foreign = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm {
            realm_id: realm.retype(),
        },
        ActorId::Service { service_id: web },
        at(10_000),
    )
    .payload(Object::new().with("text", "hello".into()).into())
    .after([realm])
    .sign_verified(&key, &Verifier::new(ring))
    .unwrap();
    let (length, log) = (by_events.len(), log_bytes(b.path()));
    let refused = by_events.append_verified(vec![foreign]).unwrap().outcomes;
    assert!(
        matches!(&refused[..], [Appended::Rejected { rejection, .. }] if rejection.code() == Code::SignatureInvalid),
        "{refused:?}"
    );
    assert_eq!((by_events.len(), log_bytes(b.path())), (length, log));
}
