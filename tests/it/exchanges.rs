//! The exchange fold inside the ledger: forgeries refused at admission, projections equal
//! to a full refold, bit-identical under any arrival order (with pending in between), kept
//! incrementally, and announced on the change feed.

use std::collections::BTreeSet;

use akledger::exchange::{fold_sidecar, MemoryGraph, Status};
use akledger::ledger::ExchangeChange;
use akledger::workload::{sidecar_workload, SidecarSpec, SidecarWorkload, SplitMix};
use akledger::{Appended, Config, Durability, Event, Ledger, Verified, Verifier};

fn workload(seed: u64, exchanges: usize) -> SidecarWorkload {
    sidecar_workload(
        seed,
        SidecarSpec {
            exchanges,
            agents: 4,
            forgeries: true,
            skills: false,
        },
    )
    .unwrap()
}

fn open(dir: &std::path::Path, w: &SidecarWorkload) -> Ledger {
    Ledger::open_with(
        Config::new(dir)
            .durability(Durability::Buffered)
            .keyring(w.keyring.clone()),
    )
    .unwrap()
}

fn fold_json(ledger: &Ledger, w: &SidecarWorkload) -> Vec<u8> {
    ledger.exchanges(&w.sidecar).unwrap().to_json().to_bytes()
}

/// The fold of `w`'s events appended one at a time, in order.
fn appended_one_at_a_time(w: &SidecarWorkload) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path(), w);
    for e in &w.events {
        ledger.append(e.bytes()).unwrap();
    }
    fold_json(&ledger, w)
}

#[test]
fn projections_equal_a_full_refold_and_forgeries_are_refused() {
    let w = workload(11, 60);
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path(), &w);
    let bytes: Vec<&[u8]> = w.events.iter().map(|e| e.bytes()).collect();
    for out in ledger.append_batch(&bytes).unwrap() {
        assert!(matches!(out, Appended::Admitted(_)), "{out:?}");
    }
    assert!(!w.forgeries.is_empty());
    for f in &w.forgeries {
        match ledger.append(&f.bytes).unwrap() {
            Appended::Rejected { rejection, .. } => {
                assert_eq!(rejection.code(), f.expected, "{}", f.what)
            }
            other => panic!("{}: {other:?}", f.what),
        }
    }
    let fold = ledger.exchanges(&w.sidecar).unwrap();
    assert_eq!(fold.projections.len(), 60);
    let statuses: BTreeSet<&str> = fold.projections.iter().map(|p| p.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["complete", "delivered", "failed", "responding"]
            .into_iter()
            .collect()
    );
    let reasons: BTreeSet<&str> = fold
        .projections
        .iter()
        .filter_map(|p| p.failure_reason_code.as_deref())
        .collect();
    assert!(
        reasons.contains("controller_cancelled") && reasons.contains("agent_deactivated"),
        "{reasons:?}"
    );
    assert!(fold
        .projections
        .iter()
        .any(|p| p.coordinator_assignment_event_id != p.request_event_id));
    let verifier = Verifier::new(w.keyring.clone());
    let verified: Vec<Event<Verified>> = w
        .events
        .iter()
        .map(|e| e.clone().verify(&verifier).unwrap())
        .collect();
    // The sidecar create; fold_sidecar learns the attach from the events.
    let info = akledger::exchange::SidecarInfo::of_create(&verified[1]).unwrap();
    assert_eq!(info.sidecar_id, w.sidecar);
    let full = fold_sidecar(
        &info,
        &verified,
        &w.keyring,
        &MemoryGraph::from_events(&verified),
    );
    assert_eq!(full, fold);
    let one = &fold.projections[3];
    assert_eq!(
        ledger
            .exchange(&w.sidecar, &one.exchange_id)
            .unwrap()
            .as_ref(),
        Some(one)
    );
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn any_arrival_order_gives_bit_identical_projections() {
    let w = workload(12, 25);
    let reference = appended_one_at_a_time(&w);
    for seed in 0..6u64 {
        let mut order: Vec<&[u8]> = w.events.iter().map(|e| e.bytes()).collect();
        let mut rng = SplitMix::new(seed);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let ledger = open(dir.path(), &w);
        // Build the sidecar's fold state early when the sidecar is in, so the rest is
        // maintained incrementally.
        let mut watched = false;
        let mut pending_seen = 0;
        for chunk in order.chunks(1 + rng.below(7)) {
            for out in ledger.append_batch(chunk).unwrap() {
                pending_seen += usize::from(matches!(out, Appended::Pending { .. }));
            }
            if !watched && ledger.sidecars().contains(&w.sidecar) {
                ledger.exchanges(&w.sidecar).unwrap();
                watched = true;
            }
        }
        assert!(pending_seen > 0);
        assert!(ledger.pending().is_empty());
        assert_eq!(fold_json(&ledger, &w), reference, "order {seed}");
        let report = ledger.check().unwrap();
        assert!(report.is_clean(), "{report:?}");
    }
}

#[test]
fn the_change_feed_announces_projection_changes() {
    let w = workload(13, 30);
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path(), &w);
    let (head, tail) = w.events.split_at(2);
    ledger
        .append_batch(&head.iter().map(|e| e.bytes()).collect::<Vec<_>>())
        .unwrap();
    let feed = ledger.exchange_feed(&w.sidecar).unwrap();
    for e in tail {
        ledger.append(e.bytes()).unwrap();
    }
    let mut previous: std::collections::HashMap<_, Status> = Default::default();
    let updates: Vec<_> = feed
        .drain()
        .into_iter()
        .map(|c| match c {
            ExchangeChange::Changed {
                previous: before,
                projection,
            } => {
                // Each change carries the status the exchange had at the change before.
                let last = previous.insert(projection.exchange_id.clone(), projection.status);
                assert_eq!(before, last, "{}", projection.exchange_id);
                *projection
            }
            other => panic!("no lag expected: {other:?}"),
        })
        .collect();
    let finals = ledger.exchanges(&w.sidecar).unwrap().projections;
    assert!(
        updates.len() >= finals.len(),
        "one update per change at least"
    );
    for p in &finals {
        let last = updates
            .iter()
            .rev()
            .find(|u| u.exchange_id == p.exchange_id);
        assert_eq!(
            last,
            Some(p),
            "the last update of an exchange is its projection"
        );
    }
    assert!(updates.iter().any(|u| u.status == Status::Delivered));
}

#[test]
fn reopening_refolds_from_the_log() {
    let w = workload(14, 20);
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let ledger = open(dir.path(), &w);
        ledger
            .append_batch(&w.events.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
        fold_json(&ledger, &w)
    };
    let ledger = open(dir.path(), &w);
    assert_eq!(fold_json(&ledger, &w), before);
    // Without the sidecar key nothing decrypts: every exchange event is reported.
    drop(ledger);
    let blind = Ledger::open_with(Config::new(dir.path())).unwrap();
    let fold = blind.exchanges(&w.sidecar).unwrap();
    assert!(fold.projections.is_empty());
    assert!(fold
        .not_folded
        .iter()
        .all(|n| n.reason.as_str() == "not_decryptable"));
    // Realm, sidecar, strand and attach are not exchange events.
    assert_eq!(fold.not_folded.len(), w.events.len() - 4);
}

#[test]
fn a_sidecar_key_added_live_refolds_the_sidecar_and_feeds_the_changes() {
    let w = workload(14, 12);
    let dir = tempfile::tempdir().unwrap();
    let keyless =
        Ledger::open_with(Config::new(dir.path()).durability(Durability::Buffered)).unwrap();
    for e in &w.events {
        keyless.append(e.bytes()).unwrap();
    }
    let before = keyless.exchanges(&w.sidecar).unwrap();
    assert!(before.projections.is_empty());
    assert!(before.nothing_decrypted(), "the missing key is signalled");
    let feed = keyless.exchange_feed(&w.sidecar).unwrap();
    let key = w.keyring.sidecar_key(&w.sidecar, 1).unwrap().clone();
    keyless.add_sidecar_key(w.sidecar, 1, key).unwrap();
    let after = keyless.exchanges(&w.sidecar).unwrap();
    assert!(!after.nothing_decrypted());
    // Exactly what a ledger opened with the key folds, and the full refold agrees.
    let keyed_dir = tempfile::tempdir().unwrap();
    let keyed = open(keyed_dir.path(), &w);
    for e in &w.events {
        keyed.append(e.bytes()).unwrap();
    }
    assert_eq!(after, keyed.exchanges(&w.sidecar).unwrap());
    assert!(keyless.check().unwrap().is_clean());
    let mut announced: Vec<_> = feed
        .drain()
        .into_iter()
        .map(|c| match c {
            ExchangeChange::Changed { projection, .. } => projection.exchange_id,
            other => panic!("no lag expected: {other:?}"),
        })
        .collect();
    announced.sort();
    let expected: Vec<_> = after
        .projections
        .iter()
        .map(|p| p.exchange_id.clone())
        .collect();
    assert_eq!(announced, expected, "one update per exchange that appeared");
}

#[test]
fn a_feed_opened_before_the_sidecar_exists_sees_its_exchanges() {
    let w = workload(15, 6);
    let dir = tempfile::tempdir().unwrap();
    let ledger = open(dir.path(), &w);
    let feed = ledger.exchange_feed(&w.sidecar).unwrap();
    // Send everything but the first two events (the realm and the sidecar): all pending.
    let (head, tail) = w.events.split_at(2);
    for e in tail {
        ledger.append(e.bytes()).unwrap();
    }
    assert!(feed.try_next().is_none());
    let report = ledger
        .append_batch_report(&head.iter().map(|e| e.bytes()).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(report.released.len(), tail.len());
    let finals = ledger.exchanges(&w.sidecar).unwrap().projections;
    let mut seen: Vec<_> = feed
        .drain()
        .into_iter()
        .map(|c| match c {
            ExchangeChange::Changed {
                previous,
                projection,
            } => {
                assert_eq!(previous, None);
                *projection
            }
            other => panic!("{other:?}"),
        })
        .collect();
    seen.sort_by(|a, b| a.exchange_id.cmp(&b.exchange_id));
    assert_eq!(seen, finals);
}

#[test]
fn a_live_ledger_authorizes_keys_and_saves_them_to_its_keyring_file() {
    // Here rather than beside the CLI keyring tests: those spawn processes, and a child
    // forked while this test holds the ledger's lock briefly inherits it, so the reopen
    // below could see `AlreadyOpen`.
    let saved_ring = |file: &std::path::Path| {
        akledger::Keyring::from_json_bytes(&std::fs::read(file).unwrap()).unwrap()
    };
    use akledger::ed25519_dalek::SigningKey;
    use akledger::{
        ActorId, Appended, Config, DidCoreId, EventBuilder, Ledger, ScopeRef, Timestamp,
    };

    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("keyring.json");
    let config = || Config::new(tmp.path().join("ledger")).keyring_file(&file);
    let ops = DidCoreId::parse("ak:did_core:web:ops.example").unwrap();
    let key = SigningKey::from_bytes(&[9; 32]);
    let actor = ActorId::Service {
        service_id: ops.clone(),
    };
    let at = Timestamp::parse("2026-11-30T06:00:00.000Z").unwrap();
    let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, actor, at)
        .sign(&key)
        .unwrap();
    let ledger = Ledger::open_with(config()).unwrap();
    let refused = ledger.append(realm.bytes()).unwrap();
    assert!(matches!(refused, Appended::Rejected { .. }), "{refused:?}");
    // Key principals are self-certifying: refused, and nothing is written.
    let own = DidCoreId::for_key(&key.verifying_key());
    assert!(ledger.authorize(own, key.verifying_key()).is_err());
    assert!(!file.exists());

    ledger.authorize(ops.clone(), key.verifying_key()).unwrap();
    assert!(saved_ring(&file).authorizes(&ops, &key.verifying_key()));
    let admitted = ledger.append(realm.bytes()).unwrap();
    assert_eq!(admitted, Appended::Admitted(realm.id()));

    // A sidecar key added live is saved beside the authorization, and both survive a
    // restart.
    let sidecar: akledger::SidecarId = akledger::workload::realm_dag(3, 1, 1, 8).unwrap()[0]
        .id()
        .retype();
    let secret = akledger::SidecarKey::generate(&mut rand_core::OsRng);
    ledger.add_sidecar_key(sidecar, 4, secret.clone()).unwrap();
    drop(ledger);
    let saved = saved_ring(&file);
    assert_eq!(saved.sidecar_key(&sidecar, 4), Some(&secret));
    assert!(saved.authorizes(&ops, &key.verifying_key()));
    let ledger = Ledger::open_with(config()).unwrap();
    assert!(ledger
        .verifier()
        .keyring()
        .authorizes(&ops, &key.verifying_key()));
    assert_eq!(ledger.len(), 1);
}

/// A sidecar's fold state kept through one large batch, whose events are read (decrypted
/// and classified) on several threads, then taken in in order: built before the strand is
/// attached (the attach in the batch) and after, the projections equal those of events
/// appended one at a time, and `check` finds nothing.
#[test]
fn a_large_batch_read_in_parallel_folds_as_one_event_at_a_time() {
    let w = workload(13, 40);
    let reference = appended_one_at_a_time(&w);
    // Realm and sidecar, then the strand and its attach, then the exchanges.
    for built_after in [2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open_with(
            Config::new(dir.path())
                .durability(Durability::Buffered)
                .keyring(w.keyring.clone())
                .verify_threads(2),
        )
        .unwrap();
        let (head, rest) = w.events.split_at(built_after);
        ledger
            .append_batch(&head.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
        ledger.exchanges(&w.sidecar).unwrap();
        assert!(
            rest.len() >= 64,
            "{} events: read on one thread",
            rest.len()
        );
        ledger
            .append_batch(&rest.iter().map(|e| e.bytes()).collect::<Vec<_>>())
            .unwrap();
        assert_eq!(
            fold_json(&ledger, &w),
            reference,
            "built after {built_after}"
        );
        let report = ledger.check().unwrap();
        assert!(report.is_clean(), "{report:?}");
    }
}
