use akledger::internals::graph_file::*;
use akledger::internals::graph_view::*;
use akledger::limits::GRAPH_PAGE_BYTES;
use akledger::workload::realm_dag;
use akledger::Ledger;
#[allow(unused_imports)]
use akledger::*;

/// A closed ledger of `events` realm events; returns its directory and their ids.
fn closed(events: usize) -> (tempfile::TempDir, Vec<EventId>) {
    let tmp = tempfile::tempdir().unwrap();
    let dag = realm_dag(5, events, 4, 8).unwrap();
    let ledger = Ledger::open(tmp.path()).unwrap();
    let bytes: Vec<&[u8]> = dag.iter().map(|e| e.bytes()).collect();
    ledger.append_batch(&bytes).unwrap();
    ledger.close().unwrap();
    (tmp, dag.iter().map(|e| e.id()).collect())
}

/// Recomputes the page table, its chunk checksums and the header checksum of a graph
/// file's bytes.
fn reseal(file: &mut [u8]) {
    let head: &[u8; HEADER_BYTES as usize] = file[..HEADER_BYTES as usize].try_into().unwrap();
    let pages = Header::decode(head).unwrap().pages;
    let (table, body) = (table_at(pages) as usize, body_at(pages) as usize);
    let sums: Vec<u8> = file[body..]
        .chunks(GRAPH_PAGE_BYTES as usize)
        .flat_map(page_sum)
        .collect();
    file[table..body].copy_from_slice(&sums);
    let top: Vec<u8> = sums
        .chunks(GRAPH_PAGE_BYTES as usize)
        .flat_map(page_sum)
        .collect();
    file[HEADER_BYTES as usize..table].copy_from_slice(&top);
    let sum = blake3::hash(&file[HEADER_FIELDS.start..table]);
    file[8..40].copy_from_slice(sum.as_bytes());
}

/// Page checksums are XXH3-128 as `docs/format.md` says, stored little-endian: the values
/// Python's `xxhash` 4.1.0 gives (`xxh3_128_intdigest`) for a 4096-byte page, a short last
/// page and an empty one.
#[test]
fn page_sums_match_an_independent_xxh3() {
    let page: Vec<u8> = (0..4096u32).map(|i| ((i * 31 + 7) % 256) as u8).collect();
    let cases: [(&[u8], u128); 3] = [
        (&page, 0x49d3842b33d51e8aa3c19f8174cde0bb),
        (b"akledger graph page", 0xae7d75f4085d581f47d2d4fb8b5ee42f),
        (b"", 0x99aa06d3014798d86001c324468d497f),
    ];
    for (bytes, want) in cases {
        assert_eq!(
            u128::from_le_bytes(page_sum(bytes)),
            want,
            "{} bytes",
            bytes.len()
        );
    }
}

#[test]
fn contents_that_pass_their_checksums_but_contradict_themselves_never_panic() {
    let (tmp, ids) = closed(300);
    let path = tmp.path().join(layout::GRAPH);
    let good = std::fs::read(&path).unwrap();
    let query: Vec<EventId> = ids.iter().rev().step_by(3).take(40).copied().collect();
    let want = GraphView::open(tmp.path())
        .unwrap()
        .heads_of(&query)
        .unwrap();
    assert!(want.is_some());
    let head: &[u8; HEADER_BYTES as usize] = good[..HEADER_BYTES as usize].try_into().unwrap();
    let body_at = body_at(Header::decode(head).unwrap().pages) as usize;
    let mut answered = 0;
    for (i, at) in (body_at..good.len()).step_by(7).enumerate() {
        let mut bad = good.clone();
        // Alternately a small change and a large one, so sizes, offsets and positions
        // both stay in range and leave it.
        bad[at] = if i % 2 == 0 { bad[at] ^ 1 } else { 0xff };
        reseal(&mut bad);
        std::fs::write(&path, &bad).unwrap();
        let view = GraphView::open(tmp.path()).unwrap();
        if let Ok(Some(_)) = view.heads_of(&query) {
            answered += 1;
        }
        let _ = view.covers(&query[..3], &ids[7]);
    }
    assert!(answered > 0);
}

#[test]
fn a_query_past_its_read_budget_leaves_the_query_to_the_ledger() {
    let (tmp, ids) = closed(400);
    let view = GraphView::open(tmp.path()).unwrap();
    // The first and the last event: the last covers the first.
    let positions = |pages: &Pages| pages.positions(&[ids[0], ids[399]]).unwrap().unwrap();
    let starved = Pages::new(&view, 12);
    let members = positions(&starved);
    assert_eq!(starved.heads(&members), None);
    assert!(starved.failed());
    let fed = Pages::new(&view, 100_000);
    let members = positions(&fed);
    assert_eq!(fed.heads(&members), Some(vec![members[1]]));
    assert!(!fed.failed());
}
