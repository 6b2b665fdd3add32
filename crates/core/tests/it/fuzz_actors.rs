//! The fuzz target `actor_model` (PROFILE §14): `check_actor_model` is shared with the
//! cargo-fuzz target (`fuzz/fuzz_targets/actor_model.rs`); its corpus is replayed here on
//! stable.

use akledger_core::actors::{check_data, redact, ActorModel, DataFault, EntityId, Pncp, Salt};
use akledger_core::canonical::{parse_value, Json, Object};
use akledger_core::ExchangeId;

/// Arbitrary bytes as an entity id, a `pncp` member and an actor model. Nothing panics;
/// what parses writes back as parsed; a model that parses offers each action it lists; for
/// every data model of every action, data holding each field raw is refused exactly when a
/// field is redacted, and the same data redacted passes with one value withheld per
/// redacted field.
pub fn check_actor_model(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(entity) = EntityId::parse(text) {
            assert_eq!(
                entity.to_string(),
                text,
                "an entity id writes back as parsed"
            );
        }
    }
    let Ok(json) = parse_value(data) else {
        return;
    };
    if let Ok(pncp) = Pncp::from_json(&json) {
        assert_eq!(Pncp::from_json(&pncp.to_json()), Ok(pncp));
    }
    let Some(entity) = json
        .as_object()
        .and_then(|o| o.get("id"))
        .and_then(Json::as_str)
        .and_then(|id| EntityId::parse(id).ok())
    else {
        return;
    };
    let Ok(model) = ActorModel::parse(&json, &entity) else {
        return;
    };
    let exchange = ExchangeId::parse("exchange-00000000-00000000").expect("an exchange id");
    for subject in model.offered() {
        for action in &subject.actions {
            assert!(model.offers(&subject.name, &action.name));
            let questions = action
                .requester_questions
                .iter()
                .chain(&action.fulfiller_questions)
                .flat_map(|q| [&q.question, &q.answer]);
            for data_model in [&action.input, &action.output].into_iter().chain(questions) {
                let Some(data_model) = data_model else {
                    continue;
                };
                let mut raw = Object::new();
                for field in &data_model.fields {
                    raw.insert(field.name.clone(), Json::str("raw"));
                }
                let redacted = data_model.redacted().count();
                let checked = check_data(Some(&raw), Some(data_model));
                assert_eq!(
                    matches!(checked, Err(DataFault::RawRedacted(_))),
                    redacted > 0
                );
                let (sealed, withheld) =
                    redact(&raw, Some(data_model), &exchange, || Salt([1; 32]));
                assert_eq!(withheld.len(), redacted);
                assert_eq!(check_data(Some(&sealed), Some(data_model)), Ok(()));
            }
        }
    }
}

#[cfg(test)]
mod replay {
    use super::*;

    #[test]
    fn actor_model() {
        let n = akledger_testkit_core::replay_corpus("actor_model", check_actor_model);
        assert!(n > 0, "no corpus for actor_model");
    }
}
