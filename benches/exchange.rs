//! Exchange fold costs: one exchange with 1 / 100 / 1000 responses, a full refold of a
//! sidecar with 10 000 exchanges, and the incremental unit (classify one more control and
//! refold its exchange), and responses 1001 to 1100 of an exchange folded in incrementally
//! next to a full refold of 1001. Events are signed once, outside the
//! timed loops. Also what authoring one sealed sidecar message costs (sealing, signing,
//! reading it back verified, as the sidecar runtime makes its records) next to the bare
//! Ed25519 signature it carries.
// Benchmarks panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use ed25519_dalek::SigningKey;
use rand_core::OsRng;

use akledger::exchange::{
    classify, create_private_sidecar, create_realm, fold_added_message, Act, Added, Binding,
    Classified, ExchangeItem, ExchangeView, RequestContext, Role, TrackRef,
};
use akledger::{
    fold_exchange, fold_sidecar, ActorId, Event, EventId, ExchangeId, Keyring, MemoryGraph,
    SidecarAuthor, SidecarInfo, SidecarKey, StrandId, Timestamp, Verified, Verifier,
};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Bench {
    controller: SidecarAuthor,
    agent: SidecarAuthor,
    sidecar: SidecarInfo,
    keyring: Keyring,
    events: Vec<Event<Verified>>,
    graph: MemoryGraph,
    verifier: Verifier,
    at: Timestamp,
}

impl Bench {
    fn new() -> Res<Self> {
        let verifier = Verifier::new(Keyring::new());
        let at = Timestamp::parse("2026-11-29T12:00:00.000Z")?;
        let ck = SigningKey::from_bytes(&[1; 32]);
        let ca = ActorId::service_for_key(&ck.verifying_key());
        let realm = create_realm(&ck, ca.clone(), at)?.verify(&verifier)?;
        // The sidecar with its private strand attached (PROFILE §6).
        let private = create_private_sidecar(&ck, ca.clone(), realm.id().retype(), None, at)?;
        let sidecar = private.info.clone();
        let mut keyring = Keyring::new();
        keyring.add_sidecar_key(sidecar.sidecar_id, 1, SidecarKey::from_bytes([9; 32]));
        let ak = SigningKey::from_bytes(&[2; 32]);
        let aa = ActorId::service_for_key(&ak.verifying_key());
        let key = SidecarKey::from_bytes([9; 32]);
        let mut bench = Bench {
            controller: SidecarAuthor::new(ck, ca, sidecar.clone(), key.clone(), 1),
            agent: SidecarAuthor::new(ak, aa, sidecar.clone(), key, 1),
            sidecar,
            keyring,
            events: Vec::new(),
            graph: MemoryGraph::new(),
            verifier,
            at,
        };
        bench.admit(realm);
        for e in private.events() {
            bench.admit(e.clone().verify(&bench.verifier)?);
        }
        Ok(bench)
    }

    /// The attached private strand.
    fn strand(&self) -> StrandId {
        self.sidecar
            .attaches
            .first()
            .map(|a| a.strand_id)
            .unwrap_or_else(|| self.sidecar.sidecar_id.retype())
    }

    fn admit(&mut self, e: Event<Verified>) -> EventId {
        let id = e.id();
        self.graph.insert(&e);
        self.events.push(e);
        id
    }

    /// An exchange with `responses` responses, concurrent or (`chained`) each after the
    /// previous one; returns its view.
    fn exchange(&mut self, n: usize, responses: usize, chained: bool) -> Res<ExchangeView> {
        let x = ExchangeId::parse(&format!("bench-exchange-{n:010}"))?;
        let track = TrackRef {
            realm_id: self.sidecar.realm_id,
            strand_id: self.strand(),
            track_name: "main".into(),
        };
        let ctx = RequestContext::new(track, "k", vec![self.agent.principal().clone()], None)?;
        let e = self
            .controller
            .request(&x, ctx, "go".into(), self.at, &mut OsRng)?;
        let r = self.admit(e.verify(&self.verifier)?);
        let mut facts = vec![r];
        for _ in 0..responses {
            let role = Role::Response {
                request_event_id: r,
                completes: None,
            };
            let binding = Some(Binding {
                exchange_id: x.clone(),
                role,
            });
            let prev = facts.last().copied().filter(|p| chained && *p != r);
            let after: Vec<EventId> = [Some(r), prev].into_iter().flatten().collect();
            let e = self
                .agent
                .message(binding, "ok".into(), &after, self.at, &mut OsRng)?;
            facts.push(self.admit(e.verify(&self.verifier)?));
        }
        Ok(ExchangeView {
            exchange_id: x,
            request_event_id: r,
            strand_id: self.strand(),
            validated_responses: facts.get(1..).unwrap_or_default().to_vec(),
            facts,
        })
    }

    fn control(&self, view: &ExchangeView, act: Act) -> Res<Event<Verified>> {
        let e = self
            .controller
            .control(view, act, &self.graph, self.at, &mut OsRng)?;
        Ok(e.verify(&self.verifier)?)
    }

    fn items(&self) -> Vec<ExchangeItem> {
        self.events
            .iter()
            .filter_map(|e| match classify(&self.sidecar, e, &self.keyring) {
                Some(Classified::Exchange(item)) => Some(*item),
                _ => None,
            })
            .collect()
    }
}

fn one_exchange(c: &mut Criterion) -> Res<()> {
    let mut group = c.benchmark_group("fold_exchange");
    for responses in [1usize, 100, 1000] {
        let mut b = Bench::new()?;
        let view = b.exchange(0, responses, false)?;
        let items = b.items();
        group.throughput(Throughput::Elements(items.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("responses", responses),
            &items,
            |bench, items| {
                bench.iter(|| fold_exchange(&b.sidecar, &view.exchange_id, items, &b.graph))
            },
        );
        group.bench_with_input(
            BenchmarkId::new("classify+fold", responses),
            &b,
            |bench, b| bench.iter(|| fold_sidecar(&b.sidecar, &b.events, &b.keyring, &b.graph)),
        );
    }
    group.finish();
    Ok(())
}

fn whole_sidecar(c: &mut Criterion) -> Res<()> {
    let mut b = Bench::new()?;
    for n in 0..10_000 {
        let view = b.exchange(n, 1, false)?;
        let close = b.control(&view, Act::Close)?;
        b.admit(close);
    }
    let mut group = c.benchmark_group("fold_sidecar");
    group.sample_size(10);
    group.throughput(Throughput::Elements(b.events.len() as u64));
    group.bench_function("10k_exchanges_3_events_each", |bench| {
        bench.iter(|| fold_sidecar(&b.sidecar, &b.events, &b.keyring, &b.graph))
    });
    group.finish();
    Ok(())
}

fn one_more_control(c: &mut Criterion) -> Res<()> {
    let mut group = c.benchmark_group("refold_after_control");
    for responses in [1usize, 100, 1000] {
        let mut b = Bench::new()?;
        let view = b.exchange(0, responses, true)?;
        let close = b.control(&view, Act::Close)?;
        b.graph.insert(&close);
        let cached = b.items();
        group.bench_with_input(
            BenchmarkId::new("responses", responses),
            &cached,
            |bench, cached| {
                bench.iter_batched(
                    || cached.clone(),
                    |mut items| {
                        if let Some(Classified::Exchange(item)) =
                            classify(&b.sidecar, &close, &b.keyring)
                        {
                            items.push(*item);
                        }
                        fold_exchange(&b.sidecar, &view.exchange_id, &items, &b.graph)
                    },
                    BatchSize::SmallInput,
                )
            },
        );
    }
    group.finish();
    Ok(())
}

/// Responses folded in, one after the other, in one timed iteration of
/// [`one_more_response`].
const MORE_RESPONSES: usize = 100;

/// Issue #12 row "incremental fold cost per response": responses 1001 to 1100 of an
/// exchange folded one at a time ([`fold_added_message`]) into the outcome of the first
/// 1000, updated in place as the ledger keeps it (so its vectors grow as they do there,
/// not from a fresh exact-size copy per response), against a full refold of 1001 — what
/// each response cost before. Criterion reports the incremental time per
/// `MORE_RESPONSES` responses (and responses per second); both in one run.
fn one_more_response(c: &mut Criterion) -> Res<()> {
    let mut b = Bench::new()?;
    let view = b.exchange(0, 1000 + MORE_RESPONSES, false)?;
    let items = b.items();
    let first = items.len() - MORE_RESPONSES;
    let before = items.get(..first).unwrap_or_default();
    let outcome = fold_exchange(&b.sidecar, &view.exchange_id, before, &b.graph);
    // The timed loop must take the shortcut every time and end where a refold does.
    let mut checked = outcome.clone();
    for end in first + 1..=items.len() {
        let items = items.get(..end).unwrap_or_default();
        if fold_added_message(&b.sidecar, items, &mut checked, &b.graph) != Added::Changed {
            return Err("a response was not folded in incrementally".into());
        }
    }
    if checked != fold_exchange(&b.sidecar, &view.exchange_id, &items, &b.graph) {
        return Err("the incremental fold differs from a refold".into());
    }
    let mut group = c.benchmark_group("fold_one_more_response_of_1000");
    group.throughput(Throughput::Elements(MORE_RESPONSES as u64));
    group.bench_function("incremental", |bench| {
        bench.iter_batched(
            || outcome.clone(),
            |mut o| {
                for end in first + 1..=items.len() {
                    let items = items.get(..end).unwrap_or_default();
                    fold_added_message(&b.sidecar, items, &mut o, &b.graph);
                }
                o
            },
            BatchSize::SmallInput,
        )
    });
    group.throughput(Throughput::Elements(1));
    let refolded = items.get(..=first).unwrap_or_default();
    group.bench_function("full_refold", |bench| {
        bench.iter(|| fold_exchange(&b.sidecar, &view.exchange_id, refolded, &b.graph))
    });
    group.finish();
    Ok(())
}

/// Authoring a request (sign and seal): plain (the data's text as its body), and as a PNCP
/// request with the data sealed as given and with its redacted field committed to (PROFILE
/// §14.3). The goal: redaction adds at most 10 % to authoring a request.
fn redacted_request(c: &mut Criterion) -> Res<()> {
    use akledger::actors::{ActorModel, EntityId, PncpKind};
    use akledger::exchange::PncpDraft;
    let b = Bench::new()?;
    let x = ExchangeId::parse("bench-exchange-redacted-0001")?;
    let track = TrackRef {
        realm_id: b.sidecar.realm_id,
        strand_id: b.strand(),
        track_name: "main".into(),
    };
    let agent = b.agent.principal().clone();
    let ctx = RequestContext::new(track, "k", vec![agent.clone()], None)?;
    let entity = EntityId::new(agent, 1)?;
    let model_text = format!(
        r#"{{"id":"{entity}","skills":{{"skills":[{{"subject":"travel","actions":[{{"action":"book","input":[{{"name":"destination","optional":false,"redacted":false}},{{"name":"passport","optional":false,"redacted":true}}]}}]}}]}}}}"#
    );
    let model = ActorModel::parse(
        &akledger::canonical::parse_value(model_text.as_bytes())?,
        &entity,
    )?;
    let input = model.action("travel", "book").and_then(|a| a.input.clone());
    let data_text = r#"{"destination":"Lyon","passport":"P-4417-XXXX"}"#;
    let data = akledger::canonical::parse_value(data_text.as_bytes())?;
    let data = data.as_object().cloned().unwrap_or_default();
    let attach = b
        .sidecar
        .latest_attach()
        .map(|a| a.event_id)
        .ok_or("no attach")?;
    // The plain request carries the same bytes of text, unredacted, as its body.
    let body: akledger::Json = data_text.into();
    let mut group = c.benchmark_group("author_request");
    group.bench_function("plain", |bench| {
        bench.iter(|| {
            b.controller
                .request(&x, ctx.clone(), body.clone(), b.at, &mut OsRng)
                .unwrap()
        })
    });
    // One PNCP request, its data sealed as given (no model) or with the passport committed
    // to (the action's input model).
    let seal_one = |model: Option<&akledger::actors::DataModel>| {
        let draft = PncpDraft {
            kind: PncpKind::Request,
            subject: "travel".into(),
            action: "book".into(),
            question_id: None,
            data: data.clone(),
            model,
            after: Vec::new(),
        };
        let binding = Binding {
            exchange_id: x.clone(),
            role: Role::Request(ctx.clone()),
        };
        b.controller
            .pncp_message(
                binding,
                akledger::Json::Null,
                draft,
                &[attach],
                b.at,
                &mut OsRng,
            )
            .unwrap()
    };
    // What redaction adds, measured the way a noisy machine allows: 30 pairs of 500
    // requests each, sealed as given and redacted in alternation, and the median ratio.
    let seal = |model: Option<&akledger::actors::DataModel>, n: usize| {
        let started = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(seal_one(model));
        }
        started.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..30)
        .map(|_| seal(input.as_ref(), 500) / seal(None, 500))
        .collect();
    ratios.sort_by(f64::total_cmp);
    eprintln!(
        "author_request: redacting 1 field costs {:.3}x sealing the same data as given (median of 30 alternating pairs of 500)",
        ratios[15]
    );
    for (name, model) in [
        ("pncp_unredacted", None),
        ("pncp_redacted_1_field", input.as_ref()),
    ] {
        group.bench_function(name, |bench| bench.iter(|| seal_one(model)));
    }
    group.finish();
    Ok(())
}

/// One sealed sidecar message authored and signed as the sidecar runtime makes its
/// records (`message_unsigned`, then `sign_verified`), next to the bare Ed25519 signature of a
/// message the size of a proof's JWS signing input: what authoring adds to the signature.
fn author_message(c: &mut Criterion) -> Res<()> {
    use ed25519_dalek::Signer as _;
    let b = Bench::new()?;
    let body: akledger::Json = akledger::canonical::parse_value(
        br#"{"connection":"stub","envelope":{"message":"CAESBWhlbGxvGgEwIgA","protocol_id":"fetchai/default:1.0.0","sender":"sender_aea","to":"my_first_aea"},"input":{"end":"0","start":0},"record":"inbox"}"#,
    )?;
    let key = SigningKey::from_bytes(&[1; 32]);
    let binding = vec![b'x'; 480];
    let mut group = c.benchmark_group("author_message");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sealed_signed_verified", |bench| {
        bench.iter(|| {
            let sealed = b
                .controller
                .message_unsigned(None, body.clone(), &[], b.at, &mut OsRng);
            b.controller.sign_verified(sealed, &b.verifier).unwrap()
        })
    });
    group.bench_function("bare_ed25519_signature", |bench| {
        bench.iter(|| key.sign(std::hint::black_box(&binding)))
    });
    group.finish();
    // A signing thread's piece: 16 sealed messages signed together (their nonce points
    // encoded with one field inversion for all), against the same signed one by one.
    let sealed = || -> Vec<_> {
        (0..16)
            .map(|_| {
                b.controller
                    .message_unsigned(None, body.clone(), &[], b.at, &mut OsRng)
            })
            .collect()
    };
    let mut group = c.benchmark_group("sign_16_messages");
    group.throughput(Throughput::Elements(16));
    group.bench_function("together", |bench| {
        bench.iter_batched(
            sealed,
            |builders| {
                b.controller
                    .sign_verified_many(builders, &b.verifier)
                    .unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("one_by_one", |bench| {
        bench.iter_batched(
            sealed,
            |builders| {
                builders
                    .into_iter()
                    .map(|sealed| b.controller.sign_verified(sealed, &b.verifier).unwrap())
                    .collect::<Vec<_>>()
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
    Ok(())
}

fn benches(c: &mut Criterion) {
    for run in [
        author_message,
        redacted_request,
        one_exchange,
        one_more_control,
        one_more_response,
        whole_sidecar,
    ] {
        if let Err(e) = run(c) {
            eprintln!("bench setup failed: {e}");
        }
    }
}

criterion_group!(exchange, benches);
criterion_main!(exchange);
