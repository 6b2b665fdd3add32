use akledger::internals::snapshot::*;
use akledger::ledger::Ledger;
use akledger::store::log::HighWater;
use akledger::workload::{realm_dag, sidecar_workload, SidecarSpec};
use akledger::ActorId;
use akledger::EventBuilder;
use akledger::ScopeRef;
use akledger::Timestamp;
#[allow(unused_imports)]
use akledger::*;

#[test]
fn a_state_round_trips_and_any_damage_is_refused() {
    let dag = realm_dag(3, 300, 4, 8).unwrap();
    let spec = SidecarSpec {
        exchanges: 3,
        agents: 2,
        forgeries: false,
        skills: false,
    };
    let work = sidecar_workload(4, spec).unwrap();
    // An event older than its parent waits for it, then is rejected on release.
    let key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
    let parent = &dag[5];
    let early = EventBuilder::new(
        "ak.note.create",
        ScopeRef::Realm {
            realm_id: dag[0].id().retype(),
        },
        ActorId::service_for_key(&key.verifying_key()),
        Timestamp::from_millis(parent.created_at().millis() - 1).unwrap(),
    )
    .after([parent.id()])
    .sign(&key)
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let first = ledger.append(early.bytes()).unwrap();
    assert!(
        matches!(first, akledger::ledger::Appended::Pending { .. }),
        "{first:?}"
    );
    // Newest first, all but event 10: what descends from 10 stays pending.
    let dag_bytes: Vec<&[u8]> = (0..dag.len())
        .rev()
        .filter(|i| *i != 10)
        .map(|i| dag[i].bytes())
        .collect();
    ledger.append_batch(&dag_bytes).unwrap();
    let bytes: Vec<&[u8]> = work.events.iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&bytes).unwrap();
    assert_eq!(ledger.rejected_on_release().len(), 1);
    let state = akledger::internals::read_state(&ledger).unwrap();
    assert!(!state.pending.is_empty() && !state.sidecars.is_empty());
    let high = HighWater::default();
    let encoded = state.encode_snapshot(high);
    // The file layout of docs/format.md: magic, the body's blake3, the body.
    assert_eq!(&encoded[..8], b"AKSNAP\x00\x01");
    assert_eq!(&encoded[8..40], blake3::hash(&encoded[40..]).as_bytes());
    let back = Snapshot::decode(&encoded).unwrap();
    assert_eq!(back.high, high);
    assert_eq!(
        back.state.encode_snapshot(high),
        encoded,
        "encoding is stable"
    );
    let mut differences = Vec::new();
    akledger::internals::check::compare_states(&back.state, &state, &mut differences);
    assert!(differences.is_empty(), "{differences:?}");
    assert_eq!(back.state.pending.bytes(), state.pending.bytes());
    for i in (0..encoded.len()).step_by(211) {
        let mut damaged = encoded.clone();
        damaged[i] ^= 1;
        assert!(Snapshot::decode(&damaged).is_err(), "byte {i}");
    }
    assert!(Snapshot::decode(&encoded[..encoded.len() - 1]).is_err());
}

/// The snapshot and the graph file written to disk as they are encoded, a chunk at a time,
/// are byte for byte the encodings held whole, for a state whose files span several
/// chunks; each file is renamed into place only when persisted.
#[test]
fn streamed_files_are_the_encodings_held_whole() {
    let dag = realm_dag(5, 16_000, 8, 16).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    for chunk in dag.chunks(1000) {
        let bytes: Vec<&[u8]> = chunk.iter().map(|e| e.bytes()).collect();
        ledger.append_batch(&bytes).unwrap();
    }
    let state = akledger::internals::read_state(&ledger).unwrap();
    let high = HighWater::default();
    let out = tempfile::tempdir().unwrap();
    let snapshot = state.write_snapshot(out.path(), high).unwrap();
    let graph = state.write_graph(out.path(), high).unwrap();
    assert!(!out.path().join("snapshot").exists() && !out.path().join("graph").exists());
    snapshot.persist(true).unwrap();
    graph.persist(false).unwrap();
    let limit = akledger::limits::DERIVED_WRITE_CHUNK;
    let on_disk = std::fs::read(out.path().join("snapshot")).unwrap();
    assert!(on_disk.len() > limit, "{} bytes", on_disk.len());
    assert!(
        on_disk == state.encode_snapshot(high),
        "the snapshot differs"
    );
    let on_disk = std::fs::read(out.path().join("graph")).unwrap();
    assert!(on_disk.len() > limit, "{} bytes", on_disk.len());
    assert!(
        on_disk == state.encode_graph(high),
        "the graph file differs"
    );
    // One written and never persisted leaves nothing behind.
    drop(state.write_snapshot(out.path(), high).unwrap());
    let names: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "no temporary file is left");
}
