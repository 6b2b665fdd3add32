//! Undecryptable events are reported as `not_decryptable`, never panic, never fold.

use rand_core::OsRng;

use super::*;
use akledger_core::canonical::Object;
use akledger_core::encrypted::{AadContext, EncryptedEnvelope, MESSAGE_CONTENT_TYPE};
use akledger_core::envelope::{ScopeRef, MESSAGE_CREATE};
use akledger_core::event::EventBuilder;

fn response_plaintext(x: &ExchangeId, r: EventId) -> Json {
    let binding = Binding {
        exchange_id: x.clone(),
        role: Role::Response {
            request_event_id: r,
            completes: None,
        },
    };
    MessagePlaintext {
        body: Json::Null,
        binding: Some(binding),
        pncp: None,
    }
    .to_json()
}

/// A response by agent 0 whose encrypted payload is `sealed` as given.
fn with_envelope(w: &mut World, sealed: EncryptedEnvelope, r: EventId) -> EventId {
    let (key, actor) = signer(2);
    let scope = ScopeRef::Sidecar {
        realm_id: w.sidecar.realm_id,
        sidecar_id: w.sidecar.sidecar_id,
    };
    let payload = Object::new().with("encrypted_payload", sealed.to_json());
    let e = EventBuilder::new(MESSAGE_CREATE, scope, actor, at())
        .payload(payload.into())
        .after([r])
        .sign(&key);
    w.add(e)
}

fn seal(w: &World, scope: &ScopeRef, kind: &str, plaintext: &Json) -> EncryptedEnvelope {
    let (_, actor) = signer(2);
    let ctx = AadContext {
        scope,
        event_kind: kind,
        sender: &actor,
    };
    let key = w.keyring.sidecar_key(&w.sidecar.sidecar_id, 1).unwrap();
    EncryptedEnvelope::seal(
        key,
        [5; 24],
        MESSAGE_CONTENT_TYPE,
        1,
        "g",
        &ctx,
        &plaintext.to_bytes(),
    )
}

fn assert_undecryptable(w: &World, x: &ExchangeId, id: EventId) {
    assert_eq!(w.reason(id), Some(Reason::NotDecryptable));
    assert_eq!(w.projection(x).status, Status::Delivered);
}

#[test]
fn wrong_key_is_not_decryptable() {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let (k, a) = signer(2);
    let stranger = SidecarAuthor::new(k, a, w.sidecar.clone(), SidecarKey::from_bytes([8; 32]), 1);
    let e = stranger.respond(&x, r, None, Json::Null, at(), &mut OsRng);
    let m = w.add(e);
    assert_undecryptable(&w, &x, m);
}

#[test]
fn missing_epoch_is_not_decryptable() {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let (k, a) = signer(2);
    let later = SidecarAuthor::new(k, a, w.sidecar.clone(), SidecarKey::from_bytes([9; 32]), 2);
    let e = later.respond(&x, r, None, Json::Null, at(), &mut OsRng);
    let m = w.add(e);
    assert_undecryptable(&w, &x, m);
}

#[test]
fn tampered_ciphertext_is_not_decryptable() {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let scope = ScopeRef::Sidecar {
        realm_id: w.sidecar.realm_id,
        sidecar_id: w.sidecar.sidecar_id,
    };
    let good = seal(&w, &scope, MESSAGE_CREATE, &response_plaintext(&x, r));
    let mut bad = good.clone();
    let last = bad.sealed.len() - 1;
    bad.sealed[last] ^= 1;
    let m = with_envelope(&mut w, bad, r);
    assert_undecryptable(&w, &x, m);
    // The untampered twin folds, so the test fails if sealing itself were broken.
    let ok = with_envelope(&mut w, good, r);
    assert_eq!(w.projection(&x).user_facing_response_event_ids, vec![ok]);
}

#[test]
fn aad_of_another_scope_or_kind_is_not_decryptable() {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let realm_scope = ScopeRef::Realm {
        realm_id: w.sidecar.realm_id,
    };
    let other_scope = seal(&w, &realm_scope, MESSAGE_CREATE, &response_plaintext(&x, r));
    let m1 = with_envelope(&mut w, other_scope, r);
    let sidecar_scope = ScopeRef::Sidecar {
        realm_id: w.sidecar.realm_id,
        sidecar_id: w.sidecar.sidecar_id,
    };
    let other_kind = seal(
        &w,
        &sidecar_scope,
        "ak.agent.sidecar.exchange.control",
        &response_plaintext(&x, r),
    );
    let m2 = with_envelope(&mut w, other_kind, r);
    assert_undecryptable(&w, &x, m1);
    assert_undecryptable(&w, &x, m2);
}

#[test]
fn envelope_lifted_from_another_event_is_not_decryptable() {
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0, 1], Some(0));
    let original = w.respond(1, &x, r);
    let lifted = match w.events.iter().find(|e| e.id() == original).unwrap().body() {
        akledger_core::envelope::Body::SidecarMessage { encrypted } => encrypted.clone(),
        other => panic!("{other:?}"),
    };
    // Agent 0 re-posts agent 1's ciphertext: the AAD names agent 1 as sender.
    let m = with_envelope(&mut w, lifted, r);
    assert_eq!(w.reason(m), Some(Reason::NotDecryptable));
    assert_eq!(
        w.projection(&x).user_facing_response_event_ids,
        vec![original]
    );
}

/// PROFILE §6: controls are sealed as `application/vnd.arkret.agent-sidecar-exchange-control+json`;
/// a control sealed under another content type does not read as a control.
#[test]
fn control_content_type_is_the_profile_one() {
    use akledger_core::encrypted::CONTROL_CONTENT_TYPE;
    use akledger_core::envelope::EXCHANGE_CONTROL;
    assert_eq!(
        CONTROL_CONTENT_TYPE,
        "application/vnd.arkret.agent-sidecar-exchange-control+json"
    );
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let view = ExchangeView::of(&w.projection(&x));
    let good = w.control_from(&view, Act::Close);
    let sealed = match w.events.last().map(|e| e.body().clone()) {
        Some(akledger_core::envelope::Body::ExchangeControl { encrypted, .. }) => encrypted,
        other => panic!("not a control: {other:?}"),
    };
    assert_eq!(sealed.content_type, CONTROL_CONTENT_TYPE);
    assert_eq!(w.reason(good), None);
    // The same plaintext sealed as a message: not a control plaintext.
    let plaintext = empty_cancel(&x, r);
    let (key, actor) = signer(1);
    let scope = ScopeRef::Sidecar {
        realm_id: w.sidecar.realm_id,
        sidecar_id: w.sidecar.sidecar_id,
    };
    let ctx = AadContext {
        scope: &scope,
        event_kind: EXCHANGE_CONTROL,
        sender: &actor,
    };
    let sidecar_key = w.keyring.sidecar_key(&w.sidecar.sidecar_id, 1).unwrap();
    let wrong = EncryptedEnvelope::seal(
        sidecar_key,
        [6; 24],
        MESSAGE_CONTENT_TYPE,
        1,
        "g",
        &ctx,
        &plaintext.to_json().to_bytes(),
    );
    let context = Object::new()
        .with("kind", "strand".into())
        .with("strand_id", w.strand.to_string().into());
    let payload = Object::new()
        .with("sidecar_id", w.sidecar.sidecar_id.to_string().into())
        .with("source_context_ref", context.into())
        .with("encrypted_payload", wrong.to_json());
    let e = EventBuilder::new(EXCHANGE_CONTROL, scope, actor, at())
        .payload(payload.into())
        .after([r])
        .sign(&key);
    let id = w.add(e);
    assert_eq!(w.reason(id), Some(Reason::ControlPlaintextInvalid));
}

/// The AAD header is written member by member in canonical order; it must be exactly the
/// canonical form of the header as a value (PROFILE §7), for every scope, sender kind,
/// epoch (the largest safe integer included) and strings that need escaping.
#[test]
fn the_aad_header_is_the_canonical_form_of_its_value() {
    use akledger_core::canonical::to_canonical;
    use akledger_core::did::DidCoreId;
    let w = World::new();
    let (_, service) = signer(2);
    let web = DidCoreId::parse("ak:did_core:web:example.org").unwrap();
    let account = ActorId::Account {
        principal_id: web.clone(),
        station_id: DidCoreId::parse("ak:did_core:web:station.example").unwrap(),
    };
    let senders = [service, account, ActorId::Service { service_id: web }];
    let scopes = [
        ScopeRef::RealmGenesis,
        ScopeRef::Realm {
            realm_id: w.sidecar.realm_id,
        },
        ScopeRef::Sidecar {
            realm_id: w.sidecar.realm_id,
            sidecar_id: w.sidecar.sidecar_id,
        },
    ];
    let mut compared = 0;
    for scope in &scopes {
        for sender in &senders {
            for (epoch, content_type, group) in [
                (1, MESSAGE_CONTENT_TYPE, "g"),
                (0, "text/\"quoted\"\n", "é\u{1F600}\\"),
                (u64::MAX, "application/x", ""),
            ] {
                let ctx = AadContext {
                    scope,
                    event_kind: MESSAGE_CREATE,
                    sender,
                };
                let sealed = EncryptedEnvelope::seal(
                    w.keyring.sidecar_key(&w.sidecar.sidecar_id, 1).unwrap(),
                    [7; 24],
                    content_type,
                    epoch,
                    group,
                    &ctx,
                    b"x",
                );
                let epoch = i64::try_from(epoch)
                    .unwrap_or(akledger_core::limits::MAX_SAFE_INTEGER)
                    .min(akledger_core::limits::MAX_SAFE_INTEGER);
                let value = Object::new()
                    .with("purpose", "arkret_event_content".into())
                    .with("envelope_version", "1.0".into())
                    .with("content_type", content_type.into())
                    .with("scheme", "xchacha20poly1305_v1".into())
                    .with("effective_scope", scope.to_json())
                    .with("event_kind", MESSAGE_CREATE.into())
                    .with("epoch", Json::Int(epoch))
                    .with("group_state_ref", group.into())
                    .with("sender_actor_id", sender.to_json());
                assert_eq!(sealed.aad(&ctx), to_canonical(&value.into()));
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 27);
}

#[test]
fn an_event_sealed_here_classifies_as_its_bytes_read_afresh() {
    // The author's sealing spares the ledger decrypting what was just encrypted; it must
    // give what decrypting gives, and only to a reader holding the key it sealed with.
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let sealed_here = verify(w.agents[0].respond(&x, r, None, Json::Null, at(), &mut OsRng));
    let read_afresh = verify(Event::parse(sealed_here.bytes()));
    let classified = classify(&w.sidecar, &sealed_here, &w.keyring);
    assert!(
        matches!(classified, Some(Classified::Exchange(_))),
        "{classified:?}"
    );
    assert_eq!(classified, classify(&w.sidecar, &read_afresh, &w.keyring));
    let mut another = Keyring::new();
    another.add_sidecar_key(w.sidecar.sidecar_id, 1, SidecarKey::from_bytes([7; 32]));
    let not_opened = classify(&w.sidecar, &sealed_here, &another);
    assert!(
        matches!(&not_opened, Some(Classified::Unbound(n)) if n.reason == Reason::NotDecryptable),
        "{not_opened:?}"
    );
    assert_eq!(not_opened, classify(&w.sidecar, &read_afresh, &another));
}

/// The parts a reader takes from an event's bytes.
fn assert_reads_as_its_bytes(event: &Event<Verified>) {
    let read = verify(Event::parse(event.bytes()));
    assert_eq!(event.id(), read.id());
    assert_eq!(event.envelope(), read.envelope());
    assert_eq!(event.proof(), read.proof());
    assert_eq!(event.body(), read.body());
    assert_eq!(event.dependencies(), read.dependencies());
}

#[test]
fn events_made_here_are_what_reading_their_bytes_gives() {
    // A sidecar author's events are built from their parts, not read back: the parts must be
    // what a reader takes from the bytes, for messages bound or not, and controls.
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let verifier = Verifier::new(Keyring::new());
    let agent = &w.agents[0];
    let plain = agent.message_unsigned(None, Json::from("hi"), &[r], at(), &mut OsRng);
    let response = verify(agent.respond(&x, r, None, Json::Null, at(), &mut OsRng));
    let cancel = w.controller.control_raw(
        w.strand,
        &empty_cancel(&x, r).to_json(),
        &[r],
        at(),
        &mut OsRng,
    );
    for event in [
        agent.sign_verified(plain, &verifier).unwrap(),
        response,
        verify(cancel),
    ] {
        assert_reads_as_its_bytes(&event);
    }
}

#[test]
fn a_message_made_here_over_the_size_limit_is_refused_as_its_bytes_would_be() {
    let w = World::new();
    let body = Json::from("x".repeat(akledger_core::limits::MAX_EVENT_BYTES).as_str());
    let refused = w.agents[0]
        .message(None, body, &[], at(), &mut OsRng)
        .unwrap_err();
    assert_eq!(refused.code(), akledger_core::error::Code::PayloadTooLarge);
}

#[test]
fn a_message_builder_changed_after_sealing_signs_what_its_bytes_say() {
    // Replacing the payload or adding a ref after sealing leaves the builder's parts no
    // longer the author's own: the signed event must still classify, and read, as its bytes.
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let verifier = Verifier::new(Keyring::new());
    let agent = &w.agents[0];
    let other = verify(agent.respond(&x, r, None, Json::Null, at(), &mut OsRng));
    let replaced = agent
        .message_unsigned(None, Json::from("hi"), &[r], at(), &mut OsRng)
        .payload(other.envelope().payload.clone());
    let referred = agent
        .message_unsigned(None, Json::from("hi"), &[], at(), &mut OsRng)
        .reference(akledger_core::envelope::SemanticRef::after(r));
    let [replaced, referred] =
        [replaced, referred].map(|builder| agent.sign_verified(builder, &verifier).unwrap());
    for event in [&replaced, &referred] {
        assert_reads_as_its_bytes(event);
        let read = verify(Event::parse(event.bytes()));
        assert_eq!(
            classify(&w.sidecar, event, &w.keyring),
            classify(&w.sidecar, &read, &w.keyring)
        );
    }
    // The replaced payload is the response's: it opens, and binds the message to `x`.
    assert!(matches!(
        classify(&w.sidecar, &replaced, &w.keyring),
        Some(Classified::Exchange(_))
    ));
}

#[test]
fn events_signed_together_are_those_signed_one_by_one() {
    // The signing threads sign a piece of builders together: each event must be, byte for
    // byte, the one signing its builder alone gives (Ed25519 signing is deterministic), with
    // what the author knew as it sealed, in the builders' order.
    let mut w = World::new();
    let x = xid(1);
    let r = w.request(&x, &[0], None);
    let verifier = Verifier::new(Keyring::new());
    let agent = &w.agents[0];
    let builders: Vec<EventBuilder> = (0..20)
        .map(|i| {
            let parents = if i % 2 == 0 { vec![r] } else { vec![] };
            agent.message_unsigned(
                None,
                Json::from(i.to_string().as_str()),
                &parents,
                at(),
                &mut OsRng,
            )
        })
        .collect();
    let alone: Vec<Event<Verified>> = builders
        .iter()
        .map(|b| agent.sign_verified(b.clone(), &verifier).unwrap())
        .collect();
    let together = agent.sign_verified_many(builders, &verifier).unwrap();
    assert_eq!(together.len(), alone.len());
    for (t, a) in together.iter().zip(&alone) {
        assert_eq!(t.bytes(), a.bytes());
        assert_eq!(t.id(), a.id());
        assert_eq!(
            classify(&w.sidecar, t, &w.keyring),
            classify(&w.sidecar, a, &w.keyring)
        );
        assert_reads_as_its_bytes(t);
    }
    assert!(agent
        .sign_verified_many(Vec::new(), &verifier)
        .unwrap()
        .is_empty());
}
