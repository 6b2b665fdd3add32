//! What the exchange bridge reads of a seed-000 skill in an envelope: the runtime withholds
//! the records of exactly those envelopes whose skill declares redacted fields.

use akledger_runtime::bridge::{exchange_protocol_id, skill_message, SkillMessage};
use akledger_runtime::{Envelope, ProtocolId};

fn exchange(message: serde_json::Value) -> Envelope {
    Envelope::new(
        "sidecar",
        "controller",
        exchange_protocol_id(),
        message.to_string().into_bytes(),
    )
}

#[test]
fn a_skill_message_names_its_exchange_skill_and_every_address() {
    let request = serde_json::json!({"performative": "request", "exchange_id": "trip-000000000000000001",
        "agents": ["a", "b"], "coordinator": "b", "skill": "travel/book",
        "data": {"passport": "P-1"}});
    assert_eq!(
        skill_message(&exchange(request.clone())),
        Some(SkillMessage {
            exchange: akledger::exchange::ExchangeId::parse("trip-000000000000000001").unwrap(),
            subject: "travel".into(),
            action: "book".into(),
            addresses: vec!["a".into(), "b".into(), "b".into()],
        })
    );
    let delivery = serde_json::json!({"performative": "request", "exchange_id": "trip-000000000000000001",
        "from": "controller", "skill": "travel/book", "data": {}});
    let read = skill_message(&exchange(delivery)).unwrap();
    assert_eq!(read.addresses, vec!["controller".to_string()]);

    // No skill, a malformed one, no exchange, not JSON, another protocol: nothing to read.
    let mut unnamed = request.clone();
    unnamed.as_object_mut().unwrap().remove("skill");
    let mut malformed = request.clone();
    malformed["skill"] = "travel".into();
    let mut empty_action = request.clone();
    empty_action["skill"] = "travel/".into();
    let mut no_exchange = request.clone();
    no_exchange.as_object_mut().unwrap().remove("exchange_id");
    for message in [unnamed, malformed, empty_action, no_exchange] {
        assert_eq!(skill_message(&exchange(message.clone())), None, "{message}");
    }
    let mut not_json = exchange(request.clone());
    not_json.message = b"{\"skill\":".to_vec();
    assert_eq!(skill_message(&not_json), None);
    let mut other = exchange(request);
    other.protocol_id = ProtocolId::parse("fetchai/default:1.0.0").unwrap();
    assert_eq!(skill_message(&other), None);
}
