//! One scenario per rule of PROFILE §8.1–§8.6.

use rand_core::OsRng;

use super::*;

fn setup() -> (World, ExchangeId, EventId) {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0, 1], Some(0));
    (w, x, r)
}

#[test]
fn request_only_is_delivered() {
    let (w, x, r) = setup();
    let p = w.projection(&x);
    assert_eq!(p.status, Status::Delivered);
    assert_eq!(p.request_event_id, r);
    assert_eq!(p.coordinator_agent_id, w.agent(0));
    assert_eq!(p.coordinator_assignment_event_id, r);
    assert_eq!(p.checkpoint_heads, vec![r]);
    assert_eq!(p.folded_event_ids, vec![r]);
    assert!(w.fold().not_folded.is_empty());
}

#[test]
fn internal_message_keeps_delivered_but_participates() {
    let (mut w, x, r) = setup();
    let i = w.internal(1, &x, r);
    let p = w.projection(&x);
    assert_eq!(p.status, Status::Delivered);
    assert!(p.user_facing_response_event_ids.is_empty());
    assert_eq!(p.participating_agent_ids, vec![w.agent(1)]);
    assert_eq!(p.checkpoint_heads, vec![i]);
}

#[test]
fn plain_message_is_not_an_exchange_event() {
    let (mut w, x, r) = setup();
    let e = w.agents[0].message(None, Json::str("hi"), &[r], at(), &mut OsRng);
    let m = w.add(e);
    assert_eq!(w.reason(m), None);
    assert_eq!(w.projection(&x).folded_event_ids, vec![r]);
}

#[test]
fn validated_response_makes_responding() {
    let (mut w, x, r) = setup();
    let a = w.respond(0, &x, r);
    let b = w.respond(1, &x, r);
    let p = w.projection(&x);
    assert_eq!(p.status, Status::Responding);
    let mut both = vec![a, b];
    both.sort();
    assert_eq!(p.user_facing_response_event_ids, both);
    assert_eq!(p.checkpoint_heads, both);
}

#[test]
fn check_1_response_in_another_sidecar_does_not_count() {
    let (mut w, x, r) = setup();
    let (k, a) = signer(7);
    let realm = w.sidecar.realm_id;
    let other = verify(create_sidecar(&k, a, realm, at()));
    let other = SidecarInfo::of_create(&other).unwrap();
    let (k, a) = signer(2);
    let agent = SidecarAuthor::new(k, a, other, SidecarKey::from_bytes([9; 32]), 1);
    let e = agent.respond(&x, r, None, Json::Null, at(), &mut OsRng);
    let m = w.add(e);
    assert_eq!(w.reason(m), None);
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn check_2_invalid_binding_is_listed() {
    let (mut w, x, r) = setup();
    let bad = Binding {
        exchange_id: x.clone(),
        role: Role::Response {
            request_event_id: r,
            completes: None,
        },
    }
    .to_json();
    let mut obj = bad.as_object().unwrap().clone();
    obj.insert("role", "internal".into());
    obj.insert("completes_exchange", true.into());
    let plaintext = akledger_core::canonical::Object::new()
        .with("body", Json::Null)
        .with("sidecar_exchange_binding", obj.into());
    let e = w.agents[0].message_raw(&plaintext.into(), &[r], at(), &mut OsRng);
    let m = w.add(e);
    assert_eq!(w.reason(m), Some(Reason::BindingInvalid));
    let listed = w
        .fold()
        .not_folded
        .into_iter()
        .find(|n| n.event_id == m)
        .unwrap();
    assert_eq!(listed.exchange_id, Some(x.clone()));
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn check_3_other_exchange_id_does_not_count() {
    let (mut w, x, r) = setup();
    let m = w.respond(0, &xid(2), r);
    assert_eq!(w.reason(m), Some(Reason::UnknownRequest));
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn check_4_response_to_a_retry_does_not_count() {
    let (mut w, x, r) = setup();
    let ctx = w.context(&[0, 1], Some(0));
    let e = w.controller.message(
        Some(Binding {
            exchange_id: x.clone(),
            role: Role::Request(ctx),
        }),
        Json::Null,
        &[r],
        at(),
        &mut OsRng,
    );
    let retry = w.add(e);
    assert_eq!(w.reason(retry), Some(Reason::RetryRequest));
    let m = w.respond(0, &x, retry);
    assert_eq!(w.reason(m), Some(Reason::UnknownRequest));
    let p = w.projection(&x);
    assert_eq!((p.request_event_id, p.status), (r, Status::Delivered));
}

#[test]
fn check_5_author_not_addressed_or_controller() {
    let (mut w, x, r) = setup();
    let m = w.respond(2, &x, r);
    assert_eq!(w.reason(m), Some(Reason::NotAddressed));
    let e = w
        .controller
        .respond(&x, r, None, Json::Null, at(), &mut OsRng);
    let c = w.add(e);
    assert_eq!(w.reason(c), Some(Reason::AuthorIsController));
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn check_6_role_internal_is_not_a_response() {
    let (mut w, x, r) = setup();
    w.internal(0, &x, r);
    assert!(w.projection(&x).user_facing_response_event_ids.is_empty());
}

#[test]
fn check_7_response_without_after_ref_does_not_count() {
    let (mut w, x, r) = setup();
    let b = Binding {
        exchange_id: x.clone(),
        role: Role::Response {
            request_event_id: r,
            completes: None,
        },
    };
    let e = w.agents[0].message(Some(b), Json::Null, &[], at(), &mut OsRng);
    let m = w.add(e);
    assert_eq!(w.reason(m), Some(Reason::MissingAfterRef));
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn duplicate_response_counts_once() {
    let (mut w, x, r) = setup();
    let a = w.respond(0, &x, r);
    let again = w.events.last().unwrap().clone();
    w.events.push(again);
    assert_eq!(w.projection(&x).user_facing_response_event_ids, vec![a]);
}

#[test]
fn request_by_an_agent_never_folds() {
    let mut w = World::new();
    let x = xid(1);
    let ctx = w.context(&[0], None);
    let e = w.agents[0].request(&x, ctx, Json::Null, at(), &mut OsRng);
    let r = w.add(e);
    assert_eq!(w.reason(r), Some(Reason::RequestNotByController));
    assert!(w.fold().projections.is_empty());
}

#[test]
fn concurrent_requests_greatest_digest_is_canonical() {
    let mut w = World::new();
    let x = xid(1);
    let r1 = w.request(&x, &[0], None);
    let r2 = w.request(&x, &[0], None);
    let (win, lose) = if r1.digest() > r2.digest() {
        (r1, r2)
    } else {
        (r2, r1)
    };
    assert_eq!(w.projection(&x).request_event_id, win);
    assert_eq!(w.reason(lose), Some(Reason::RetryRequest));
}

#[test]
fn close_with_two_responses_completes() {
    let (mut w, x, r) = setup();
    let a = w.respond(0, &x, r);
    let b = w.respond(1, &x, r);
    let c = w.control(&x, Act::Close);
    let p = w.projection(&x);
    assert_eq!(p.status, Status::Complete);
    assert_eq!(p.terminal_event_id, Some(c));
    assert_eq!(p.failure_reason_code, None);
    assert_eq!(p.user_facing_response_event_ids.len(), 2);
    assert_eq!(p.checkpoint_heads, vec![c]);
    let mut all = vec![r, a, b, c];
    all.sort();
    assert_eq!(p.folded_event_ids, all);
}

#[test]
fn empty_terminals_fail_with_their_codes() {
    for (act, code) in [
        (Act::Close, "controller_closed_empty"),
        (Act::Cancel, "controller_cancelled"),
        (Act::Fail("agent_deactivated".into()), "agent_deactivated"),
    ] {
        let (mut w, x, _) = setup();
        let c = w.control(&x, act);
        let p = w.projection(&x);
        assert_eq!(p.status, Status::Failed);
        assert_eq!(p.failure_reason_code.as_deref(), Some(code));
        assert_eq!(p.terminal_event_id, Some(c));
    }
}

#[test]
fn fail_with_responses_completes() {
    let (mut w, x, r) = setup();
    w.respond(0, &x, r);
    w.control(&x, Act::Fail("timeout".into()));
    let p = w.projection(&x);
    assert_eq!(p.status, Status::Complete);
    assert_eq!(p.failure_reason_code, None);
}

#[test]
fn close_with_inexact_responses_is_ignored() {
    let (mut w, x, r) = setup();
    w.respond(0, &x, r);
    let mut view = ExchangeView::of(&w.projection(&x));
    view.validated_responses.clear();
    let c = w.control_from(&view, Act::Close);
    assert_eq!(w.reason(c), Some(Reason::ControlResponsesMismatch));
    let p = w.projection(&x);
    assert_eq!((p.status, p.terminal_event_id), (Status::Responding, None));
}

#[test]
fn control_by_an_agent_is_reported() {
    let (mut w, x, r) = setup();
    let p = empty_cancel(&x, r);
    let e = w.agents[0].control_raw(w.strand, &p.to_json(), &[r], at(), &mut OsRng);
    let c = w.add(e);
    assert_eq!(w.reason(c), Some(Reason::ControlNotByController));
    assert_eq!(w.projection(&x).status, Status::Delivered);
}

#[test]
fn terminal_absorbs_later_controls() {
    let (mut w, x, _) = setup();
    let first = w.control(&x, Act::Cancel);
    let later = w.control(&x, Act::Close);
    assert_eq!(w.reason(later), Some(Reason::ControlAfterTerminal));
    let p = w.projection(&x);
    assert_eq!(p.terminal_event_id, Some(first));
    assert_eq!(
        p.failure_reason_code.as_deref(),
        Some("controller_cancelled")
    );
}

#[test]
fn reassign_applies_once_then_cas_fails() {
    let (mut w, x, _) = setup();
    let s_to_t = Act::Reassign {
        expected: w.agent(0),
        new: w.agent(1),
    };
    let first = w.control(&x, s_to_t.clone());
    let p = w.projection(&x);
    assert_eq!(
        (
            p.coordinator_agent_id.clone(),
            p.coordinator_assignment_event_id
        ),
        (w.agent(1), first)
    );
    let second = w.control(&x, s_to_t);
    assert_eq!(w.reason(second), Some(Reason::CasMismatch));
    let p = w.projection(&x);
    assert_eq!(
        (p.coordinator_agent_id, p.coordinator_assignment_event_id),
        (w.agent(1), first)
    );
    assert_eq!(p.status, Status::Delivered);
}

#[test]
fn reassign_to_a_non_addressed_agent_is_ignored() {
    let (mut w, x, r) = setup();
    let c = w.control(
        &x,
        Act::Reassign {
            expected: w.agent(0),
            new: w.agent(2),
        },
    );
    assert_eq!(w.reason(c), Some(Reason::CoordinatorNotAddressed));
    let p = w.projection(&x);
    assert_eq!(
        (p.coordinator_agent_id, p.coordinator_assignment_event_id),
        (w.agent(0), r)
    );
}

#[test]
fn concurrent_terminals_greatest_digest_wins() {
    let (mut w, x, r) = setup();
    w.respond(0, &x, r);
    let view = ExchangeView::of(&w.projection(&x));
    let a = w.control_from(&view, Act::Close);
    let b = w.control_from(&view, Act::Fail("other_device".into()));
    let (win, lose) = if a.digest() > b.digest() {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(w.reason(lose), Some(Reason::ConflictLoser));
    assert_eq!(w.reason(win), None);
    assert_eq!(w.projection(&x).terminal_event_id, Some(win));
}

#[test]
fn conflict_losers_name_every_concurrent_control_that_beat_them() {
    let (mut w, x, r) = setup();
    let answer = w.respond(0, &x, r);
    let view = ExchangeView::of(&w.projection(&x));
    let mut three = [
        w.control_from(&view, Act::Close),
        w.control_from(&view, Act::Cancel),
        w.control_from(&view, Act::Fail("other_device".into())),
    ];
    three.sort_by_key(|c| std::cmp::Reverse(c.digest()));
    let [win, second, third] = three;
    let h = w.history(&x);
    let verdict = |id: EventId| {
        h.entries
            .iter()
            .find(|e| e.event_id == id)
            .map(|e| e.verdict.clone())
            .unwrap()
    };
    assert_eq!(verdict(win), Verdict::Terminal);
    assert_eq!(
        verdict(second),
        Verdict::Ignored {
            reason: Reason::ConflictLoser,
            beaten_by: vec![win]
        }
    );
    assert_eq!(
        verdict(third),
        Verdict::Ignored {
            reason: Reason::ConflictLoser,
            beaten_by: vec![win, second]
        }
    );
    assert_eq!(verdict(r), Verdict::Folded);
    assert_eq!(verdict(answer), Verdict::Folded);
    // Every item once. All carry the same time here, so the order is causal (the request,
    // then the answer, then the controls), ties by id.
    let order: Vec<EventId> = h.entries.iter().map(|e| e.event_id).collect();
    let mut controls = vec![win, second, third];
    controls.sort();
    assert_eq!(order, [vec![r, answer], controls].concat());
    assert_eq!(
        verdict(third).text(),
        format!("ignored: conflict_loser (beaten by {win}, {second})")
    );
}

#[test]
fn history_verdicts_follow_the_fold() {
    let (mut w, x, r) = setup();
    let a = w.respond(0, &x, r);
    let reassign = w.control(
        &x,
        Act::Reassign {
            expected: w.agent(0),
            new: w.agent(1),
        },
    );
    let close = w.control(&x, Act::Close);
    let late = w.respond(1, &x, r);
    let h = w.history(&x);
    let by_id = |id: EventId| h.entries.iter().find(|e| e.event_id == id).unwrap();
    assert_eq!(by_id(reassign).verdict, Verdict::Applied);
    assert_eq!(by_id(reassign).step.action(), Some("reassign_coordinator"));
    assert_eq!(by_id(close).verdict, Verdict::Terminal);
    assert_eq!(by_id(a).verdict, Verdict::Folded);
    assert_eq!(
        by_id(late).verdict,
        Verdict::Ignored {
            reason: Reason::AfterTerminal,
            beaten_by: vec![]
        }
    );
    assert!(by_id(r).by_controller && !by_id(a).by_controller);
    assert_eq!(h.projection, Some(w.projection(&x)));
}

#[test]
fn response_outside_the_terminal_basis_does_not_fold() {
    let (mut w, x, r) = setup();
    let a = w.respond(0, &x, r);
    let c = w.control(&x, Act::Close);
    let late = w.respond(1, &x, r);
    assert_eq!(w.reason(late), Some(Reason::AfterTerminal));
    let p = w.projection(&x);
    assert_eq!(p.user_facing_response_event_ids, vec![a]);
    assert_eq!(p.participating_agent_ids, vec![w.agent(0)]);
    assert_eq!(p.checkpoint_heads, vec![c]);
}

/// §8.3, one failing condition each, on a control that is otherwise valid.
#[test]
fn static_validity_of_controls() {
    let (mut w, x, r) = setup();
    let cancel = |request, basis: Vec<EventId>| ControlPlaintext {
        exchange_id: xid(1),
        request_event_id: request,
        basis_event_ids: basis,
        action: Action::Terminal {
            kind: TerminalKind::Cancel,
            response_event_ids: vec![],
        },
    };
    let create = w
        .sidecar
        .sidecar_id
        .retype::<akledger_core::id::EventKind>();
    let ghost = EventId::of_preimage(DigestSuite::Blake3, b"never admitted");
    let wrong_request = w.raw_control(&cancel(create, vec![r]), &[r]);
    let ghost_basis = w.raw_control(&cancel(r, vec![ghost]), &[r]);
    let no_after = w.raw_control(&cancel(r, vec![r]), &[]);
    // An exchange fact that does not cover the request: the controller's own message bound
    // to this exchange (never folds: author_is_controller) without an `after` ref.
    let unanchored = Binding {
        exchange_id: x.clone(),
        role: Role::Internal {
            request_event_id: r,
        },
    };
    let e = w
        .controller
        .message(Some(unanchored), Json::Null, &[], at(), &mut OsRng);
    let fact = w.add(e);
    let uncovered = w.raw_control(&cancel(r, vec![fact]), &[fact]);
    let not_fact = w.raw_control(&cancel(r, vec![create]), &[create]);
    let e = w.controller.control_raw(
        create.retype(),
        &cancel(r, vec![r]).to_json(),
        &[r],
        at(),
        &mut OsRng,
    );
    let wrong_strand = w.add(e);
    let garbage = Json::str("not a control");
    let e = w
        .controller
        .control_raw(w.strand, &garbage, &[r], at(), &mut OsRng);
    let invalid = w.add(e);
    for (id, reason) in [
        (wrong_request, Reason::ControlWrongRequest),
        (ghost_basis, Reason::ControlBasisNotAdmitted),
        (no_after, Reason::ControlMissingAfterRef),
        (uncovered, Reason::ControlRequestNotCovered),
        (not_fact, Reason::ControlBasisNotExchangeFact),
        (wrong_strand, Reason::ControlWrongStrand),
        (invalid, Reason::ControlPlaintextInvalid),
    ] {
        assert_eq!(w.reason(id), Some(reason), "{reason}");
    }
    assert_eq!(w.projection(&x).status, Status::Delivered);
    let valid = w.raw_control(&cancel(r, vec![r]), &[r]);
    assert_eq!(w.projection(&x).terminal_event_id, Some(valid));
}

/// §8.3 (v1.1): the basis is an antichain of this exchange's facts. Before v1.1 both of
/// these controls closed the exchange.
#[test]
fn basis_must_be_maximal_heads_of_exchange_facts() {
    let (mut w, x, r) = setup();
    let resp = w.respond(0, &x, r);
    let close = |basis: Vec<EventId>| ControlPlaintext {
        exchange_id: x.clone(),
        request_event_id: r,
        basis_event_ids: basis,
        action: Action::Terminal {
            kind: TerminalKind::Close,
            response_event_ids: vec![resp],
        },
    };
    let mut pair = vec![r, resp];
    pair.sort();
    let not_maximal = w.raw_control(&close(pair.clone()), &pair);
    assert_eq!(w.reason(not_maximal), Some(Reason::ControlBasisNotMaximal));
    // A plain message after the response covers everything, but is no exchange fact.
    let e = w
        .controller
        .message(None, Json::str("unrelated"), &[resp], at(), &mut OsRng);
    let plain = w.add(e);
    let not_fact = w.raw_control(&close(vec![plain]), &[plain]);
    assert_eq!(
        w.reason(not_fact),
        Some(Reason::ControlBasisNotExchangeFact)
    );
    assert_eq!(w.projection(&x).status, Status::Responding);
    let valid = w.raw_control(&close(vec![resp]), &[resp]);
    assert_eq!(w.reason(valid), None);
    assert_eq!(w.projection(&x).terminal_event_id, Some(valid));
    assert_eq!(w.projection(&x).status, Status::Complete);
}

#[test]
fn projection_json_has_the_profile_members() {
    let (mut w, x, r) = setup();
    w.respond(0, &x, r);
    w.control(&x, Act::Fail("x".into()));
    let json = w.projection(&x).to_json();
    let keys: Vec<&str> = json.as_object().unwrap().keys().collect();
    let mut want = vec![
        "addressed_agent_ids",
        "coordinator_agent_id",
        "coordinator_assignment_event_id",
        "exchange_id",
        "folded_checkpoint",
        "participating_agent_ids",
        "request_event_id",
        "sidecar_id",
        "source_context_ref",
        "status",
        "terminal_event_id",
        "user_facing_response_event_ids",
    ];
    want.sort();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, want);
    let digest = json
        .as_object()
        .unwrap()
        .get("folded_checkpoint")
        .unwrap()
        .as_object()
        .unwrap()
        .get("event_set_digest")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let p = w.projection(&x);
    let array = Json::Array(
        p.folded_event_ids
            .iter()
            .map(|i| i.to_string().into())
            .collect(),
    );
    let expect = blake3::hash(&array.to_bytes());
    assert_eq!(
        digest,
        format!("blake3:{}", akledger_core::id::hex(expect.as_bytes()))
    );
}

#[test]
fn reason_names_are_snake_case_and_unique() {
    let mut names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    assert!(names.iter().all(|n| akledger_core::envelope::is_code(n)));
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Reason::ALL.len());
}
