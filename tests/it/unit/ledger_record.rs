use akledger::dag::Pos;
use akledger::internals::record::*;
use akledger::store::log::LogPos;
use akledger::DigestSuite;
#[allow(unused_imports)]
use akledger::*;

#[test]
fn records_round_trip_and_damage_is_detected() {
    let id = EventId::of_preimage(DigestSuite::Blake3, b"a");
    let realm: RealmId = EventId::of_preimage(DigestSuite::Sha256, b"r").retype();
    let p = akledger::did::DidCoreId::parse("ak:did_core:key:z6Mkabc").unwrap();
    let s = akledger::did::DidCoreId::parse("ak:did_core:web:station").unwrap();
    let account = ActorId::Account {
        principal_id: p.clone(),
        station_id: s,
    };
    for role in [
        Role::Plain,
        Role::RealmCreate,
        Role::SidecarCreate {
            realm,
            controller: ActorId::Service { service_id: p },
        },
        Role::SidecarCreate {
            realm,
            controller: account,
        },
        Role::InSidecar(id.retype()),
        Role::StrandCreate { realm },
        Role::Attach {
            sidecar: id.retype(),
            strand: realm.retype(),
            version: 3,
        },
    ] {
        let rec = Record {
            id,
            at: LogPos::new(3, 99),
            stamp: 7,
            parents: vec![Pos::new(1), Pos::new(5)],
            role,
        };
        let bytes = rec.encode();
        assert_eq!(Record::decode(&bytes), Some(rec));
        for cut in 0..bytes.len() {
            assert_eq!(Record::decode(&bytes[..cut]), None);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Record::decode(&longer), None);
    }
}
