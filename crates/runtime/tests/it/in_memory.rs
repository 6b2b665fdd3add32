//! The runtime needs a ledger on disk: an in-memory one (what `audit` replays into) is
//! refused before anything runs.

use akledger::{Config, Error, Ledger};

#[test]
fn the_sidecar_runtime_refuses_an_in_memory_ledger() {
    use akledger_runtime::{bootstrap, Runtime, StubConnection};
    let memory = Ledger::open_with(Config::in_memory()).unwrap();
    let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let config = bootstrap(&memory, key).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (input, output) = (tmp.path().join("in"), tmp.path().join("out"));
    std::fs::write(&input, b"").unwrap();
    let connection = StubConnection::open(&input, &output).unwrap();
    let refused = Runtime::new(&memory, connection, config);
    assert!(
        matches!(refused, Err(Error::Misuse(ref why)) if why.contains("on disk")),
        "{:?}",
        refused.err()
    );
}
