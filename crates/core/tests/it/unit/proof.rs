use akledger_core::canonical::{to_canonical, Object};
use akledger_core::envelope::ProducerProof;
use akledger_core::internals::signing_input;
use akledger_core::proof::*;
use akledger_core::*;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use proptest::prelude::*;

/// The binding object built as a value and written by the canonical writer: what
/// [`binding_bytes`] must equal.
fn binding_through_a_value(
    event_digest: &str,
    actor: &ActorId,
    method: &str,
    created_at: &str,
) -> Vec<u8> {
    let binding = Object::new()
        .with("context", "ak.event_proof.v1".into())
        .with("event_digest", event_digest.into())
        .with("actor_id", actor.to_json())
        .with("verification_method", method.into())
        .with("created_at", created_at.into());
    to_canonical(&binding.into())
}

/// A did_core id whose method-specific part holds any characters the id allows
/// (quotes, backslashes, control characters, non-ASCII: everything the writer escapes).
fn did_core() -> impl Strategy<Value = DidCoreId> {
    "[a-z0-9]{1,6}:[^\\s/?#]{1,24}".prop_filter_map("a valid did_core id", |rest| {
        DidCoreId::parse(&format!("ak:did_core:{rest}")).ok()
    })
}

fn actor() -> impl Strategy<Value = ActorId> {
    prop_oneof![
        did_core().prop_map(|service_id| ActorId::Service { service_id }),
        (did_core(), did_core()).prop_map(|(principal_id, station_id)| ActorId::Account {
            principal_id,
            station_id
        }),
    ]
}

proptest! {
    #[test]
    fn binding_bytes_are_the_canonical_bytes_of_the_binding_object(
        digest in "\\PC{0,40}|[\\x00-\\x1f\"\\\\]{0,8}",
        method in "\\PC{0,60}",
        created_at in "[0-9TZ:.\\-]{0,24}|\\PC{0,8}",
        actor in actor(),
    ) {
        prop_assert_eq!(
            binding_bytes(&digest, &actor, &method, &created_at),
            binding_through_a_value(&digest, &actor, &method, &created_at)
        );
        let mut direct = Vec::new();
        actor.write_canonical(&mut direct);
        prop_assert_eq!(direct, to_canonical(&actor.to_json()));
    }

    #[test]
    fn a_proof_written_directly_is_the_canonical_bytes_of_the_proof_object(
        digest in "\\PC{0,40}|[\\x00-\\x1f\"\\\\]{0,8}",
        method in "\\PC{0,60}",
        jws in "\\PC{0,100}",
        millis in 0u64..=253_402_300_799_999,
    ) {
        let proof = ProducerProof {
            verification_method: method,
            event_digest: digest,
            created_at: Timestamp::from_millis(millis).unwrap(),
            jws,
        };
        let mut direct = Vec::new();
        proof.write_canonical(&mut direct);
        prop_assert_eq!(direct, to_canonical(&proof.to_json()));
    }

    #[test]
    fn the_signing_input_is_the_header_a_dot_and_the_binding_in_base64url(
        binding in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let expected = format!("{JWS_HEADER_B64}.{}", URL_SAFE_NO_PAD.encode(&binding));
        prop_assert_eq!(signing_input(&binding), expected.into_bytes());
    }
}
