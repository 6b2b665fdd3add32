//! The README's library example, compiled by `cargo test` so it cannot rot.
//! Run it with `cargo run --example quickstart`.
// Examples panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use akledger::{ActorId, Appended, EventBuilder, Ledger, ScopeRef, Timestamp};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let ledger = Ledger::open(dir.path())?;
    let key = ed25519_dalek::SigningKey::from_bytes(&[1; 32]);
    let me = ActorId::service_for_key(&key.verifying_key());
    let at = Timestamp::parse("2026-11-29T12:00:00.000Z")?;
    let realm = EventBuilder::new("ak.realm.create", ScopeRef::RealmGenesis, me, at).sign(&key)?;
    assert_eq!(
        ledger.append(realm.bytes())?,
        Appended::Admitted(realm.id())
    );
    assert_eq!(
        ledger.append(realm.bytes())?,
        Appended::Duplicate(realm.id())
    );
    assert_eq!(ledger.heads(), vec![realm.id()]);
    println!("admitted {}", realm.id());
    Ok(())
}
