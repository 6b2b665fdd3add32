//! PNCP messages inside an exchange through the sidecar handle (PROFILE §14.2–§14.3):
//! questions, answers and status for the skill of the request, their data checked against
//! and redacted for the question's models, answers tied to their questions, the history
//! naming each kind; and the fold naming a controller's raw redacted value.

use akledger::actors::PncpKind;
use akledger::exchange::{Binding, PncpDraft, Reason, Role};
use akledger::{Appended, Error, EventId, Json};
use rand_core::OsRng;

use crate::sidecar_handle::{data, found_under, plaintexts, publish_travel_model, Setup};

#[test]
fn questions_answers_and_status_follow_the_skill_of_the_request() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let (x, _) = s.skill_request("qa-handle", 0, r#"{"destination":"Oslo","passport":"P-1"}"#);
    let send = |by_controller: bool, kind, question: Option<&str>, text: &str| {
        let handle = if by_controller { s.boss() } else { s.agent(0) };
        handle.pncp(&x, kind, question, data(text), Json::Null)
    };
    // The fulfiller asks for a visa; the controller answers with its number (redacted).
    let asked = send(
        false,
        PncpKind::Question,
        Some("visa"),
        r#"{"country":"NO"}"#,
    )
    .unwrap();
    let secret = "V-SECRET-7731";
    let answered = send(
        true,
        PncpKind::Answer,
        Some("visa"),
        &format!(r#"{{"visa_number":"{secret}"}}"#),
    )
    .unwrap();
    // The controller asks when; the fulfiller answers and reports its status.
    let when = send(true, PncpKind::Question, Some("eta"), "{}").unwrap();
    let eta = send(false, PncpKind::Answer, Some("eta"), r#"{"eta":"5 min"}"#).unwrap();
    let status = send(false, PncpKind::Status, None, r#"{"progress":"half"}"#).unwrap();
    // An answer refers to its question; the agent's messages fold, the controller's are
    // facts that never fold as participation.
    assert!(s.ledger.covers(&[answered], &asked).unwrap());
    assert!(s.ledger.covers(&[eta], &when).unwrap());
    for id in [asked, eta, status] {
        assert_eq!(s.not_folded_reason(id), None);
    }
    for id in [answered, when] {
        assert_eq!(s.not_folded_reason(id), Some(Reason::AuthorIsController));
    }
    // The visa number is a commitment in the sealed answer, and only the disclosure store
    // holds it.
    let d = s
        .ledger
        .disclosure(&answered, "visa_number")
        .unwrap()
        .unwrap();
    assert_eq!(d.value, Json::from(secret));
    assert!(s.ledger.verify_disclosure(&d).unwrap());
    assert!(plaintexts(&s)
        .iter()
        .all(|p| !p.windows(secret.len()).any(|w| w == secret.as_bytes())));
    let dir = s.ledger.config().dir().to_path_buf();
    assert!(found_under(&dir, "disclosures.jsonl", secret.as_bytes()).is_empty());
    // The history names each kind and skill.
    let history = s.ledger.exchange_history(&s.sidecar, &x).unwrap().unwrap();
    let mut described: Vec<String> = history.entries.iter().map(|e| e.describe()).collect();
    described.sort();
    let mut expected = [
        "request Request travel/book",
        "internal Question travel/book (question visa)",
        "internal Answer travel/book (question visa)",
        "internal Question travel/book (question eta)",
        "internal Answer travel/book (question eta)",
        "internal Status travel/book",
    ];
    expected.sort();
    assert_eq!(described, expected);
    // Its order is causal: no entry comes before one it covers. Concurrent messages follow
    // by claimed time, then id, where causality allows; these are sent within milliseconds
    // of one another, often within one, so the test does not fix their order.
    for (i, earlier) in history.entries.iter().enumerate() {
        for later in &history.entries[i + 1..] {
            assert!(!s
                .ledger
                .covers(&[earlier.event_id], &later.event_id)
                .unwrap());
        }
    }
    let json = String::from_utf8(history.to_json().to_bytes()).unwrap();
    assert!(
        json.contains(
            r#""pncp":{"action":"book","kind":"Answer","question_id":"visa","subject":"travel"}"#
        ),
        "{json}"
    );

    // Refused, with nothing written (no event, no disclosure).
    let (y, _) = s.skill_request(
        "qa-refused",
        0,
        r#"{"destination":"Rome","passport":"P-2"}"#,
    );
    let before = (
        s.ledger.len(),
        s.ledger.disclosures_of(&answered).unwrap().len(),
    );
    let on_y = |by_controller: bool, kind, question: Option<&str>, text: &str| {
        let handle = if by_controller { s.boss() } else { s.agent(0) };
        handle.pncp(&y, kind, question, data(text), Json::Null)
    };
    let would_not = |result: Result<EventId, Error>| match result {
        Err(Error::WouldNotFold { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    // An answer to a question nobody asked in this exchange; a question the action does not
    // declare; a question missing its required data.
    assert_eq!(
        would_not(on_y(false, PncpKind::Answer, Some("eta"), r#"{"eta":"1"}"#)),
        Reason::PncpAnswerWithoutQuestion
    );
    assert_eq!(
        would_not(on_y(true, PncpKind::Question, Some("nope"), "{}")),
        Reason::PncpDataInvalid
    );
    assert_eq!(
        would_not(on_y(false, PncpKind::Question, Some("visa"), "{}")),
        Reason::PncpDataInvalid
    );
    // Kinds that are not this call's, or not the controller's; a question id out of place.
    for (by_controller, kind, question) in [
        (true, PncpKind::Request, None),
        (false, PncpKind::Response, None),
        (true, PncpKind::Status, None),
        (true, PncpKind::Error, None),
        (false, PncpKind::Status, Some("eta")),
        (false, PncpKind::Question, None),
    ] {
        let result = on_y(by_controller, kind, question, "{}");
        assert!(
            matches!(result, Err(Error::Misuse(_))),
            "{kind}: {result:?}"
        );
    }
    // An exchange whose request names no skill carries no PNCP.
    let plain = s.open("qa-plain", &[0]);
    let result = s
        .agent(0)
        .pncp(&plain, PncpKind::Status, None, data("{}"), Json::Null);
    assert!(matches!(result, Err(Error::Misuse(_))), "{result:?}");
    let len = s.ledger.len();
    assert_eq!(
        (len - 1, s.ledger.disclosures_of(&answered).unwrap().len()),
        before,
        "only the plain request was written"
    );
    assert!(s.ledger.check().unwrap().is_clean());
}

/// A controller's answer sealed by hand with the raw visa number: it never folds (the
/// controller's messages do not), and the fold names the leak rather than
/// `author_is_controller`, so that the audit lists it.
#[test]
fn a_controllers_raw_redacted_value_is_named_by_the_fold() {
    let s = Setup::new();
    publish_travel_model(&s, 0);
    let (x, request) = s.skill_request("qa-leak", 0, r#"{"destination":"Oslo","passport":"P-1"}"#);
    let asked = s
        .agent(0)
        .pncp(
            &x,
            PncpKind::Question,
            Some("visa"),
            data(r#"{"country":"NO"}"#),
            Json::Null,
        )
        .unwrap();
    let author = s
        .ledger
        .sidecar_author(s.controller.clone(), s.sidecar, 1)
        .unwrap();
    let draft = PncpDraft {
        kind: PncpKind::Answer,
        subject: "travel".into(),
        action: "book".into(),
        question_id: Some("visa".into()),
        data: data(r#"{"visa_number":"V-RAW-1"}"#),
        model: None,
        after: vec![],
    };
    let binding = Binding {
        exchange_id: x.clone(),
        role: Role::Internal {
            request_event_id: request,
        },
    };
    let refs = [request, asked];
    let at = s.ledger.now_after(&refs).unwrap();
    let (leak, _) = author
        .pncp_message(binding, Json::Null, draft, &refs, at, &mut OsRng)
        .unwrap();
    assert!(matches!(
        s.ledger.append(leak.bytes()).unwrap(),
        Appended::Admitted(_)
    ));
    assert_eq!(
        s.not_folded_reason(leak.id()),
        Some(Reason::RedactionViolation)
    );
}
