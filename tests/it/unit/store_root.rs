use akledger::store::log::HighWater;
use akledger::store::log::LogPos;
use akledger::store::root::*;
#[allow(unused_imports)]
use akledger::*;
use std::time::Duration;

fn acked(seq: u64) -> Acked {
    Acked {
        high: HighWater {
            seq,
            end: LogPos::new(2, 1000 + seq),
        },
        entries: seq * 3,
    }
}

#[test]
fn the_newest_valid_slot_wins_and_a_torn_slot_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(read_acked(dir.path()).unwrap(), None);
    let w = AckWriter::open(dir.path()).unwrap();
    for seq in 1..=5 {
        w.write(acked(seq)).unwrap();
    }
    assert_eq!(read_acked(dir.path()).unwrap(), Some(acked(5)));
    // Damage slot 1 (seq 5): the other slot's seq 4 remains.
    let path = dir.path().join(layout::ACKED);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[SLOT_LEN + 3] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(read_acked(dir.path()).unwrap(), Some(acked(4)));
}

#[test]
fn a_second_exclusive_lock_is_refused_and_shared_locks_coexist() {
    let dir = tempfile::tempdir().unwrap();
    let first = RootLock::exclusive(dir.path()).unwrap();
    assert!(matches!(
        RootLock::exclusive(dir.path()),
        Err(LockError::Held)
    ));
    let now = Duration::ZERO;
    assert!(matches!(
        RootLock::shared(dir.path(), now),
        Err(LockError::Held)
    ));
    drop(first);
    let a = RootLock::shared(dir.path(), now).unwrap();
    let _b = RootLock::shared(dir.path(), now).unwrap();
    assert!(matches!(
        RootLock::exclusive(dir.path()),
        Err(LockError::Held)
    ));
    drop(a);
}
