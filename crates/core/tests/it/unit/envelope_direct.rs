use proptest::prelude::*;

use akledger_core::canonical::{to_canonical, Json};
use akledger_core::internals::read_direct;
use akledger_core::workload::{realm_dag, sidecar_workload, SidecarSpec};
use akledger_core::Event;

/// Valid events of every kind the workloads write: realm DAG events with one to
/// several refs, and a sidecar's realm, sidecar, strand, attach and exchange events
/// (account and service actors, sidecar scopes, encrypted controls), forgeries too.
fn samples() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = realm_dag(3, 40, 3, 96)
        .expect("realm DAG")
        .iter()
        .map(|e| e.bytes().to_vec())
        .collect();
    let spec = SidecarSpec {
        exchanges: 6,
        agents: 2,
        forgeries: true,
        skills: false,
    };
    let sidecar = sidecar_workload(5, spec).expect("sidecar workload");
    out.extend(sidecar.events.iter().map(|e| e.bytes().to_vec()));
    out.extend(sidecar.forgeries.into_iter().map(|f| f.bytes));
    out
}

#[test]
fn every_valid_event_of_the_workloads_is_read_directly() {
    for bytes in samples() {
        if Event::parse(&bytes).is_ok() {
            assert!(
                read_direct(&bytes).is_some(),
                "not read directly: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}

proptest! {
    /// Whatever the direct reader accepts, the general way reads alike — for bytes
    /// changed, inserted or cut anywhere in valid events.
    #[test]
    fn what_is_read_directly_the_general_way_reads_alike(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let samples = samples();
        let mut bytes = pick.get(&samples).clone();
        for (at, byte, how) in edits {
            let i = at.index(bytes.len() + 1);
            match how {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ if i < bytes.len() => {
                    bytes.remove(i);
                }
                _ => {}
            }
        }
        if let Some(direct) = read_direct(&bytes) {
            akledger_core::internals::same_as_general(&bytes, &direct);
        }
    }
}

#[test]
fn preimage_bytes_are_the_canonical_preimage_and_place_the_id_and_proof() {
    // Signing writes the preimage directly and splices `event_id` and `producer_proof` in:
    // the bytes must be those of the value, and the splice the event's own bytes.
    for bytes in samples() {
        let Ok(event) = Event::parse(&bytes) else {
            continue;
        };
        let envelope = event.envelope();
        let (preimage, [after_created_at, after_payload]) = envelope.preimage_bytes();
        assert_eq!(preimage, to_canonical(&Json::Object(envelope.preimage())));
        let mut spliced = preimage[..after_created_at].to_vec();
        spliced.extend_from_slice(b",\"event_id\":");
        spliced.extend_from_slice(&to_canonical(&event.id().to_string().into()));
        spliced.extend_from_slice(&preimage[after_created_at..after_payload]);
        spliced.extend_from_slice(b",\"producer_proof\":");
        spliced.extend_from_slice(&to_canonical(&event.proof().to_json()));
        spliced.extend_from_slice(&preimage[after_payload..]);
        assert_eq!(spliced, bytes);
    }
}
