use akledger::codec::Reader;
use akledger::dag::Pos;
use akledger::internals::index::{decode_records, encode_records};
use akledger::internals::record::*;
use akledger::store::log::LogPos;
use akledger::DigestSuite;
#[allow(unused_imports)]
use akledger::*;

use proptest::prelude::*;

/// One of each role, two of them in the same sidecar's scope (the second stores no id).
fn roles() -> Vec<Role> {
    let id = EventId::of_preimage(DigestSuite::Blake3, b"a");
    let other = EventId::of_preimage(DigestSuite::Blake3, b"b");
    let realm: RealmId = EventId::of_preimage(DigestSuite::Sha256, b"r").retype();
    let p = akledger::did::DidCoreId::parse("ak:did_core:key:z6Mkabc").unwrap();
    let s = akledger::did::DidCoreId::parse("ak:did_core:web:station").unwrap();
    let account = ActorId::Account {
        principal_id: p.clone(),
        station_id: s,
    };
    vec![
        Role::Plain,
        Role::RealmCreate,
        Role::SidecarCreate {
            realm,
            controller: ActorId::Service {
                service_id: p.clone(),
            },
        },
        Role::SidecarCreate {
            realm,
            controller: account,
        },
        Role::InSidecar(id.retype()),
        Role::InSidecar(id.retype()),
        Role::InSidecar(other.retype()),
        Role::StrandCreate { realm },
        Role::Attach {
            sidecar: id.retype(),
            strand: realm.retype(),
            version: 3,
        },
        Role::InSidecar(id.retype()),
        Role::ActorModel { did: p, version: 2 },
    ]
}

#[test]
fn records_round_trip_in_a_row_and_damage_is_detected() {
    let id = EventId::of_preimage(DigestSuite::Blake3, b"e");
    let records: Vec<Record> = roles()
        .into_iter()
        .enumerate()
        .map(|(i, role)| Record {
            id,
            // Segments and stamps going back as well as forward (a released pending event
            // was written earlier than the batch that admits it).
            at: LogPos::new(3 - (i as u32 % 3), 99 + 1000 * i as u64),
            stamp: 1_700_000_000_000 - 7 * i as u64 + (i as u64 % 2) * 100,
            parents: vec![Pos::new(1), Pos::new(5 + i as u32)],
            role,
        })
        .collect();
    let first = 40;
    let bytes = encode_records(first, &records);
    assert_eq!(decode_records(first, &bytes), Some(records.clone()));
    // The same bytes at another position name other parents: a row reads only where it
    // was written.
    let elsewhere = decode_records(first + 1, &bytes).unwrap();
    assert_ne!(elsewhere, records);
    for cut in 0..bytes.len() {
        assert_eq!(decode_records(first, &bytes[..cut]), None, "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(decode_records(first, &longer), None);
    // A row whose positions would pass 2^32 is damage, not a panic.
    assert_eq!(decode_records(u32::MAX - 1, &bytes), None);
    // A same-sidecar role with no sidecar named before it in the row is damage.
    let alone = encode_records(first, &records[5..6]);
    let mut r = Reader::new(&alone[4..]);
    assert!(Record::decode_in_row(&mut r, first, &mut RowContext::default()).is_some());
    let mut second_only = encode_records(first, &records[4..6]);
    let one = encode_records(first, &records[4..5]).len() - 4;
    second_only.drain(4..4 + one);
    second_only[..4].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(decode_records(first + 1, &second_only), None);
}

fn any_record(own: u32) -> impl Strategy<Value = Record> {
    let sidecars = [b"s0", b"s1"].map(|s| EventId::of_preimage(DigestSuite::Blake3, s));
    (
        any::<[u8; 32]>(),
        (0u32..5, any::<u32>()),
        any::<u64>(),
        proptest::collection::vec(0..=own, 0..6),
        0usize..4,
    )
        .prop_map(move |(digest, (segment, offset), stamp, parents, role)| {
            let id = EventId::of_preimage(DigestSuite::Blake3, &digest);
            Record {
                id,
                at: LogPos::new(segment, u64::from(offset)),
                stamp,
                parents: parents.into_iter().map(Pos::new).collect(),
                role: match role {
                    0 => Role::Plain,
                    1 => Role::InSidecar(sidecars[0].retype()),
                    2 => Role::InSidecar(sidecars[1].retype()),
                    _ => Role::StrandCreate {
                        realm: sidecars[0].retype(),
                    },
                },
            }
        })
}

proptest! {
    /// Any records (any stamps, segments, offsets, parents up to their own position,
    /// sidecars repeated or not) come back from their row exactly.
    #[test]
    fn any_row_round_trips(
        first in 0u32..1_000_000,
        records in proptest::collection::vec(any_record(1_000_000), 0..40),
    ) {
        let bytes = encode_records(first, &records);
        prop_assert_eq!(decode_records(first, &bytes), Some(records));
    }

    /// Any bytes, and any row with a byte changed, decode to records or to nothing, and
    /// never panic.
    #[test]
    fn any_bytes_decode_without_a_panic(
        first in any::<u32>(),
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        records in proptest::collection::vec(any_record(1_000), 1..8),
        flip in any::<(usize, u8)>(),
    ) {
        let _ = decode_records(first, &bytes);
        let mut row = encode_records(1_000, &records);
        let at = flip.0 % row.len();
        row[at] ^= flip.1 | 1;
        let _ = decode_records(1_000, &row);
    }
}
