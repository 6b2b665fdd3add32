//! Names on the server, derived without IO: the subject of a realm's events, the stream's
//! subjects, a valid stream name, and a durable consumer's name.

use crate::limits::MAX_REPLICATE_STREAM_NAME;
use akledger::envelope::ScopeRef;
use akledger::event::Event;
use akledger::id::{hex, RealmId};

/// Every realm subject, as the stream lists it.
pub const STREAM_SUBJECTS: &str = "ak.*.events";

/// The subject token of a realm. A realm id holds `:` and NATS subjects separate tokens by
/// `.`, so the token is the id's digest suite and its 32 digest bytes in lowercase hex,
/// joined by `-`: `blake3-<64 hex digits>`.
pub fn realm_token(realm: &RealmId) -> String {
    format!("{}-{}", realm.suite().name(), hex(&realm.digest()))
}

/// The realm an event belongs to: the realm its scope names, or for a realm's genesis event
/// the realm it creates.
pub fn realm_of<S>(event: &Event<S>) -> RealmId {
    match event.scope() {
        ScopeRef::RealmGenesis => event.id().retype(),
        scope => scope.realm_id().unwrap_or_else(|| event.id().retype()),
    }
}

/// The subject an event is published on: its realm's ([`realm_subject`]).
pub fn subject_of<S>(event: &Event<S>) -> String {
    realm_subject(&realm_of(event))
}

/// The subject of a realm's events: `ak.<realm token>.events`.
pub fn realm_subject(realm: &RealmId) -> String {
    format!("ak.{}.events", realm_token(realm))
}

/// Checks a stream name: 1 to [`MAX_REPLICATE_STREAM_NAME`] ASCII letters, digits, `-` or
/// `_` (NATS forbids `.`, `*`, `>` and whitespace; the name is also a file name here).
pub fn check_stream_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_REPLICATE_STREAM_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "stream name {name:?}: use 1 to {MAX_REPLICATE_STREAM_NAME} ASCII letters, digits, '-' or '_'"
        ))
    }
}

/// The durable consumer name of a ledger: `akledger-` and its 16 identity bytes in hex.
pub fn consumer_name(identity: &[u8; 16]) -> String {
    format!("akledger-{}", hex(identity))
}

#[cfg(test)]
mod tests {
    use super::*;
    use akledger::did::ActorId;
    use akledger::event::EventBuilder;
    use akledger::time::Timestamp;

    #[test]
    fn a_realm_and_its_events_share_one_subject_of_hex_digest() {
        let key = akledger::ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let me = ActorId::service_for_key(&key.verifying_key());
        let realm = EventBuilder::new(
            "ak.realm.create",
            ScopeRef::RealmGenesis,
            me.clone(),
            Timestamp::now(),
        )
        .sign(&key)
        .unwrap();
        let scope = ScopeRef::Realm {
            realm_id: realm.id().retype(),
        };
        let note = EventBuilder::new("ak.note.create", scope, me, Timestamp::now())
            .sign(&key)
            .unwrap();
        let subject = subject_of(&realm);
        assert_eq!(subject, subject_of(&note));
        let token = subject
            .strip_prefix("ak.")
            .and_then(|s| s.strip_suffix(".events"))
            .unwrap();
        let digest = token.strip_prefix("blake3-").unwrap();
        assert_eq!(digest, hex(&realm.id().digest()));
        assert!(digest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }

    #[test]
    fn stream_names_that_nats_or_a_file_name_would_refuse_are_refused() {
        for good in ["AKLEDGER", "ak_ledger-2"] {
            assert!(check_stream_name(good).is_ok(), "{good}");
        }
        let long = "x".repeat(MAX_REPLICATE_STREAM_NAME + 1);
        for bad in ["", "a.b", "a*", "a>", "a b", "../x", "a/b", long.as_str()] {
            assert!(check_stream_name(bad).is_err(), "{bad}");
        }
    }
}
