use akledger::store::log::{HighWater, LogPos};
use akledger::store::tables::*;
#[allow(unused_imports)]
use akledger::*;
use std::path::Path;

const IDS: Table<[u8; 4], LogPos> = Table::new("ids");
const CHILDREN: Table<([u8; 4], u64), ()> = Table::new("children");
const DOCS: Table<u64, Cbor<Vec<String>>> = Table::new("docs");

fn store(dir: &Path) -> Store {
    Store::open(dir, &StoreOptions::default()).expect("open")
}

#[test]
fn codecs_round_trip() {
    let k = ([1u8, 2, 3, 4], 7u64, b"tail".to_vec());
    assert_eq!(<([u8; 4], u64, Vec<u8>)>::decode(&k.encode()), Ok(k));
    let p = LogPos::new(3, 1 << 40);
    assert_eq!(<LogPos as Key>::decode(&Key::encode(&p)), Ok(p));
    let hw = HighWater { seq: 9, end: p };
    assert_eq!(HighWater::decode(&hw.encode()), Ok(hw));
    assert!(<u64 as Key>::decode(&[1, 2, 3]).is_err());
    assert!(<(u32, u64)>::decode(&[0; 11]).is_err());
    let c = Cbor(vec!["a".to_string()]);
    assert_eq!(Cbor::<Vec<String>>::decode(&c.encode()), Ok(c));
    assert!(Cbor::<Vec<String>>::decode(&[0xff]).is_err());
}

#[test]
fn big_endian_keys_order_numerically() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    let t = s.tree(&Table::<u64, ()>::new("nums")).expect("tree");
    let nums = [300u64, 1, 256, 0, u64::MAX, 255, 65536];
    for n in nums {
        t.insert(&n, &()).expect("insert");
    }
    let got: Vec<u64> = t.iter().map(|r| r.expect("item").0).collect();
    let mut want = nums.to_vec();
    want.sort_unstable();
    assert_eq!(got, want);
    // LogPos keys order like the log.
    let p = s.tree(&Table::<LogPos, ()>::new("pos")).expect("tree");
    for pos in [
        LogPos::new(1, 5),
        LogPos::new(0, 1 << 33),
        LogPos::new(0, 40),
    ] {
        p.insert(&pos, &()).expect("insert");
    }
    let got: Vec<LogPos> = p.iter().map(|r| r.expect("item").0).collect();
    assert!(got.is_sorted());
}

#[test]
fn prefix_scan_and_atomic_batch_and_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let s = store(dir.path());
        let mut b = WriteBatch::new();
        b.insert(&IDS, &[9; 4], &LogPos::new(0, 32));
        for child in [5u64, 1, 3] {
            b.insert(&CHILDREN, &([9; 4], child), &());
        }
        b.insert(&CHILDREN, &([8; 4], 1), &());
        b.insert(&DOCS, &1, &Cbor(vec!["x".into(), "y".into()]));
        Store::set_high_water(&mut b, HighWater::default());
        s.apply(&b).expect("apply");
        let mut b = WriteBatch::new();
        b.remove(&CHILDREN, &([9; 4], 3));
        s.apply(&b).expect("apply");
        s.flush().expect("flush");
    }
    let s = store(dir.path());
    let ids = s.tree(&IDS).expect("tree");
    assert_eq!(ids.get(&[9; 4]).expect("get"), Some(LogPos::new(0, 32)));
    assert_eq!(ids.get(&[7; 4]).expect("get"), None);
    let children = s.tree(&CHILDREN).expect("tree");
    let kids: Vec<u64> = children
        .scan_prefix(&[9u8; 4])
        .map(|r| r.expect("item").0 .1)
        .collect();
    assert_eq!(kids, vec![1, 5]);
    let docs = s.tree(&DOCS).expect("tree");
    assert_eq!(docs.get(&1).expect("get").map(|c| c.0.len()), Some(2));
    assert_eq!(s.high_water().expect("hw"), Some(HighWater::default()));
    assert_eq!(children.len(), 3);
}

#[test]
fn undecodable_bytes_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    let raw = s
        .tree(&Table::<Vec<u8>, Vec<u8>>::new("ids"))
        .expect("tree");
    raw.insert(&vec![1, 2], &vec![3]).expect("insert");
    let ids = s.tree(&IDS).expect("tree");
    assert!(matches!(
        ids.iter().next(),
        Some(Err(StoreError::Codec { .. }))
    ));
}
