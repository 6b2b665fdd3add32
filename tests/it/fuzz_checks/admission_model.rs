//! `admission_model`: a sequence of appends, batches, reopens and torn-tail crashes against
//! a naive reference model of admission (PROFILE §5, §10).
//!
//! The model: an event is stored iff it passes ingress and its id is not stored yet; it is
//! admitted iff all its dependencies are admitted and it passes its stateful checks, and
//! pending while some dependency is missing; a pending event that fails its checks when
//! released is dropped. The pool is built so that each event's stateful verdict does not
//! depend on arrival order, so the model only needs to know that verdict.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use akledger::canonical::{Json, Object};
use akledger::did::DidCoreId;
use akledger::exchange::{attach_context, create_sidecar, create_strand, SidecarInfo};
use akledger::{
    ActorId, Appended, Code, Config, Durability, Event, EventBuilder, EventId, Keyring, Ledger,
    RealmId, ScopeRef, SidecarAuthor, Unverified, Verifier,
};
use arbitrary::{Arbitrary, Unstructured};

use super::fixtures::{at, key, service, sidecar_key, xof_rng};

/// What the engine must do with a pool event once its dependencies are admitted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    Valid,
    /// Rejected at ingress (parse or proof) with this code: never stored.
    Ingress(Code),
    /// Rejected by the stateful checks with this code.
    Stateful(Code),
}

struct Item {
    bytes: Vec<u8>,
    id: EventId,
    deps: Vec<EventId>,
    verdict: Verdict,
}

struct Pool {
    items: Vec<Item>,
    keyring: Keyring,
}

fn deps_of(e: &Event<Unverified>) -> Vec<EventId> {
    e.dependencies().to_vec()
}

fn build_pool() -> Pool {
    let c = key(1); // controller of sidecar S
    let a = key(2); // agent; controls its own sidecar S3
    let k = key(3); // another writer
    let acct_key = key(5); // account actor with a web principal; keys 5 and 6 are authorized for it
    let alt_key = key(6);
    let acct = ActorId::Account {
        principal_id: DidCoreId::parse("ak:did_core:web:account.example").expect("principal"),
        station_id: DidCoreId::parse("ak:did_core:web:station.example").expect("station"),
    };
    let mut keyring = Keyring::new();
    for signer in [&acct_key, &alt_key] {
        keyring
            .authorize(acct.principal().clone(), signer.verifying_key())
            .expect("a web principal may be widened");
    }
    let mut rng = xof_rng(b"admission pool");
    let mut items: Vec<(Event<Unverified>, Verdict)> = Vec::new();
    let mut raw: Vec<(Vec<u8>, Verdict)> = Vec::new();
    let note = |scope: ScopeRef,
                who: &akledger::ed25519_dalek::SigningKey,
                t: u64,
                after: &[EventId],
                n: i64| {
        EventBuilder::new("ak.note.create", scope, service(who), at(t))
            .after(after.iter().copied())
            .payload(Object::new().with("n", Json::Int(n)).into())
            .sign(who)
            .expect("note")
    };
    let realm = EventBuilder::new(
        "ak.realm.create",
        ScopeRef::RealmGenesis,
        service(&c),
        at(0),
    )
    .sign(&c)
    .expect("realm");
    let realm_id: RealmId = realm.id().retype();
    let rs = ScopeRef::Realm { realm_id };
    let sidecar = EventBuilder::new("ak.sidecar.create", rs, service(&c), at(1))
        .after([realm.id()])
        .sign(&c)
        .expect("sidecar");
    let info = SidecarInfo::new(sidecar.id().retype(), realm_id, service(&c));
    let author = |who: &akledger::ed25519_dalek::SigningKey, info: &SidecarInfo| {
        SidecarAuthor::new(who.clone(), service(who), info.clone(), sidecar_key(), 0)
    };
    let strand_event = create_strand(&c, service(&c), realm_id, at(1)).expect("strand");
    let strand = strand_event.id().retype();
    let attach = attach_context(&c, service(&c), &info, strand, None, at(2)).expect("attach");
    // An agent attaching the controller's sidecar, and an attach naming no strand.
    let attach_by_agent =
        attach_context(&a, service(&a), &info, strand, None, at(2)).expect("agent attach");
    let attach_no_strand = attach_context(&c, service(&c), &info, realm.id().retype(), None, at(2))
        .expect("attach to a realm id");
    // The same principal at two stations: two actors, two sidecars (PROFILE §1, §6).
    let acct_s2 = ActorId::Account {
        principal_id: acct.principal().clone(),
        station_id: DidCoreId::parse("ak:did_core:web:station2.example").expect("station"),
    };
    let acct_sidecar = create_sidecar(&acct_key, acct.clone(), realm_id, at(3)).expect("s");
    let acct2_sidecar = create_sidecar(&acct_key, acct_s2, realm_id, at(3)).expect("s");
    let n1 = note(rs, &a, 2, &[realm.id()], 1);
    let n2 = note(rs, &a, 3, &[n1.id()], 2);
    let n3 = note(rs, &k, 4, &[n1.id(), n2.id()], 3);
    let body = Object::new().with("text", "m".into()).into();
    let m1 = author(&a, &info)
        .message(None, body, &[sidecar.id()], at(5), &mut rng)
        .expect("m1");
    let plain: Json = Object::new().with("x", Json::Int(1)).into();
    let c1 = author(&c, &info)
        .control_raw(strand, &plain, &[attach.id(), m1.id()], at(6), &mut rng)
        .expect("c1");
    // A control that does not follow the attach of the strand it names.
    let c_no_context = author(&c, &info)
        .control_raw(strand, &plain, &[m1.id()], at(6), &mut rng)
        .expect("control without context");
    let forged = author(&a, &info)
        .control_raw(strand, &plain, &[sidecar.id()], at(6), &mut rng)
        .expect("forged control");
    let early = note(rs, &a, 1, &[n2.id()], 4); // created before its parent n2
    let s2 = EventBuilder::new("ak.sidecar.create", rs, service(&c), at(7))
        .after([sidecar.id()])
        .sign(&c)
        .expect("s2");
    let s3 = EventBuilder::new("ak.sidecar.create", rs, service(&a), at(7))
        .after([realm.id()])
        .sign(&a)
        .expect("s3");
    let info3 = SidecarInfo::new(s3.id().retype(), realm_id, service(&a));
    let m3 = author(&a, &info3)
        .message(None, Json::Null, &[], at(8), &mut rng)
        .expect("m3");
    let c_in_s3 = author(&c, &info3)
        .control_raw(strand, &plain, &[s3.id()], at(8), &mut rng)
        .expect("control in S3 by C");
    let realm2 = EventBuilder::new(
        "ak.realm.create",
        ScopeRef::RealmGenesis,
        service(&k),
        at(0),
    )
    .payload(Object::new().with("r", Json::Int(2)).into())
    .sign(&k)
    .expect("realm2");
    let rs2 = ScopeRef::Realm {
        realm_id: realm2.id().retype(),
    };
    let cross = note(rs2, &k, 9, &[n1.id()], 5);
    let ghost = note(rs, &k, 9, &[realm2.id()], 99); // never in the pool: a missing parent
    let orphan = note(rs, &k, 10, &[ghost.id()], 6);
    let orphan2 = note(rs, &a, 11, &[orphan.id()], 7);
    let n1_sha = EventBuilder::new("ak.note.create", rs, service(&a), at(2))
        .after([realm.id()])
        .payload(Object::new().with("n", Json::Int(1)).into())
        .suite(akledger::DigestSuite::Sha256)
        .sign(&a)
        .expect("sha256 note");
    // Same preimage signed by two authorized keys: same id, other bytes.
    let acct_note = |after: EventId, signer: &akledger::ed25519_dalek::SigningKey| {
        EventBuilder::new("ak.note.create", rs, acct.clone(), at(12))
            .after([after])
            .sign(signer)
            .expect("account note")
    };
    let twin_a = acct_note(n3.id(), &acct_key);
    let twin_b = acct_note(n3.id(), &alt_key);
    let ptwin_a = acct_note(orphan.id(), &acct_key);
    let ptwin_b = acct_note(orphan.id(), &alt_key);
    assert_eq!(twin_a.id(), twin_b.id());
    assert_ne!(twin_a.bytes(), twin_b.bytes());
    let joined = note(rs, &a, 13, &[n3.id(), m1.id()], 8);
    let ctl_msg = author(&c, &info)
        .message(None, Json::Int(3), &[c1.id()], at(14), &mut rng)
        .expect("controller message");
    let fake_realm = note(
        ScopeRef::Realm {
            realm_id: n1.id().retype(),
        },
        &a,
        15,
        &[],
        9,
    );
    let wrong_realm = EventBuilder::new(
        "ak.message.create",
        ScopeRef::Sidecar {
            realm_id: realm2.id().retype(),
            sidecar_id: sidecar.id().retype(),
        },
        service(&a),
        at(16),
    )
    .payload(m1.envelope().payload.clone())
    .sign(&a)
    .expect("message naming another realm");
    let after_forged = note(rs, &a, 17, &[forged.id()], 10);
    let late = note(rs, &k, 18, &[joined.id(), s3.id()], 11);

    let stateful = |code| Verdict::Stateful(code);
    items.push((realm, Verdict::Valid));
    items.push((sidecar, Verdict::Valid));
    items.push((n1.clone(), Verdict::Valid));
    items.push((n2.clone(), Verdict::Valid));
    items.push((n3, Verdict::Valid));
    items.push((m1, Verdict::Valid));
    items.push((c1.clone(), Verdict::Valid));
    items.push((strand_event, Verdict::Valid));
    items.push((attach, Verdict::Valid));
    items.push((
        attach_by_agent,
        stateful(Code::SidecarExchangeControlForbidden),
    ));
    items.push((attach_no_strand, stateful(Code::SchemaViolation)));
    items.push((acct_sidecar, Verdict::Valid));
    items.push((acct2_sidecar, Verdict::Valid));
    items.push((
        c_no_context,
        stateful(Code::SidecarExchangeControlForbidden),
    ));
    items.push((forged, stateful(Code::SidecarExchangeControlForbidden)));
    items.push((early, stateful(Code::CreatedAtBeforeCausalPredecessor)));
    items.push((s2, stateful(Code::SidecarSingletonConflict)));
    items.push((s3, Verdict::Valid));
    items.push((m3, Verdict::Valid));
    items.push((c_in_s3, stateful(Code::SidecarExchangeControlForbidden)));
    items.push((realm2, Verdict::Valid));
    items.push((cross, Verdict::Valid));
    items.push((orphan, Verdict::Valid));
    items.push((orphan2, Verdict::Valid));
    items.push((n1_sha, Verdict::Valid));
    items.push((twin_a, Verdict::Valid));
    items.push((twin_b, Verdict::Valid));
    items.push((ptwin_a, Verdict::Valid));
    items.push((ptwin_b, Verdict::Valid));
    items.push((joined, Verdict::Valid));
    items.push((ctl_msg, Verdict::Valid));
    items.push((fake_realm, stateful(Code::SchemaViolation)));
    items.push((wrong_realm, stateful(Code::SchemaViolation)));
    items.push((after_forged, Verdict::Valid));
    items.push((late, Verdict::Valid));
    // Ingress rejections: a flipped byte, and another event's proof.
    let mut flipped = n2.bytes().to_vec();
    flipped[40] ^= 0x01;
    raw.push((flipped, Verdict::Ingress(Code::SchemaViolation)));
    let stolen = {
        let text = String::from_utf8(n2.bytes().to_vec()).expect("utf-8");
        let mine = n2.proof().to_json();
        let theirs = n1.proof().to_json();
        let mine = String::from_utf8(akledger::canonical::to_canonical(&mine)).expect("utf-8");
        let theirs = String::from_utf8(akledger::canonical::to_canonical(&theirs)).expect("utf-8");
        text.replacen(&mine, &theirs, 1).into_bytes()
    };
    raw.push((stolen, Verdict::Ingress(Code::SignatureInvalid)));

    let verifier = Verifier::new(keyring.clone());
    let mut out: Vec<Item> = items
        .into_iter()
        .map(|(e, verdict)| Item {
            bytes: e.bytes().to_vec(),
            id: e.id(),
            deps: deps_of(&e),
            verdict,
        })
        .collect();
    for (bytes, verdict) in raw {
        let Verdict::Ingress(code) = verdict else {
            unreachable!()
        };
        match Event::from_bytes(&bytes, &verifier) {
            Ok(_) => panic!("pool ingress item accepted"),
            Err(e) => assert_eq!(e.code(), code, "pool ingress item code"),
        }
        out.push(Item {
            bytes,
            id: EventId::of_preimage(akledger::DigestSuite::Blake3, b"unused"),
            deps: Vec::new(),
            verdict,
        });
    }
    Pool {
        items: out,
        keyring,
    }
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(build_pool)
}

/// The naive reference model.
#[derive(Default, Clone)]
struct Model {
    /// id → index of the pool item whose bytes are stored.
    stored: BTreeMap<EventId, usize>,
    admitted: BTreeSet<EventId>,
    pending: BTreeSet<EventId>,
    /// Pool items written to the log, one inner list per non-empty log batch.
    batches: Vec<Vec<usize>>,
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Admitted,
    Duplicate,
    Pending,
    Rejected(Code),
}

impl Model {
    fn decide(&mut self, i: usize, written: &mut Vec<usize>) -> Outcome {
        let items = &pool().items;
        let item = &items[i];
        if let Verdict::Ingress(code) = item.verdict {
            return Outcome::Rejected(code);
        }
        if let Some(&j) = self.stored.get(&item.id) {
            if items[j].bytes != item.bytes {
                return Outcome::Rejected(Code::DuplicateConflict);
            }
            return if self.admitted.contains(&item.id) {
                Outcome::Duplicate
            } else {
                Outcome::Pending
            };
        }
        if item.deps.iter().any(|d| !self.admitted.contains(d)) {
            self.stored.insert(item.id, i);
            self.pending.insert(item.id);
            written.push(i);
            return Outcome::Pending;
        }
        if let Verdict::Stateful(code) = item.verdict {
            return Outcome::Rejected(code);
        }
        self.stored.insert(item.id, i);
        self.admitted.insert(item.id);
        written.push(i);
        self.cascade();
        Outcome::Admitted
    }

    fn cascade(&mut self) {
        let items = &pool().items;
        loop {
            let ready: Vec<EventId> = self
                .pending
                .iter()
                .filter(|id| {
                    let item = &items[self.stored[*id]];
                    item.deps.iter().all(|d| self.admitted.contains(d))
                })
                .copied()
                .collect();
            if ready.is_empty() {
                return;
            }
            for id in ready {
                self.pending.remove(&id);
                let j = self.stored[&id];
                if items[j].verdict == Verdict::Valid {
                    self.admitted.insert(id);
                } else {
                    self.stored.remove(&id);
                }
            }
        }
    }

    /// Applies a batch; returns the outcomes.
    fn batch(&mut self, indices: &[usize]) -> Vec<Outcome> {
        let mut written = Vec::new();
        let out = indices
            .iter()
            .map(|i| self.decide(*i, &mut written))
            .collect();
        if !written.is_empty() {
            self.batches.push(written);
        }
        out
    }

    /// The model after losing the last log batch: replay the rest.
    fn without_last_batch(&self) -> Model {
        let mut batches = self.batches.clone();
        batches.pop();
        let mut m = Model::default();
        for b in batches {
            let mut written = Vec::new();
            for i in b {
                m.decide(i, &mut written);
            }
            assert!(!written.is_empty());
            m.batches.push(written);
        }
        m
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Append(u8),
    AppendBatch(Vec<u8>),
    Reopen,
    CrashReopen(u16),
}

fn outcome(a: &Appended) -> Outcome {
    match a {
        Appended::Admitted(_) => Outcome::Admitted,
        Appended::Duplicate(_) => Outcome::Duplicate,
        Appended::Pending { .. } => Outcome::Pending,
        Appended::Rejected { rejection, .. } => Outcome::Rejected(rejection.code()),
        other => panic!("unknown outcome {other:?}"),
    }
}

struct Harness {
    dir: tempfile::TempDir,
    ledger: Option<Ledger>,
    /// Size of the log's segment after each model batch.
    sizes: Vec<u64>,
    /// Model batches at the last clean close or writer open: synced and marked acknowledged,
    /// so no crash can lose them.
    closed_with: usize,
}

impl Harness {
    fn config(&self) -> Config {
        Config::new(self.dir.path())
            .durability(Durability::Buffered)
            .keyring(pool().keyring.clone())
            .verify_threads(1)
    }

    fn open(&mut self) {
        self.ledger = Some(Ledger::open_with(self.config()).expect("open ledger"));
    }

    fn ledger(&self) -> &Ledger {
        self.ledger.as_ref().expect("open")
    }

    fn segment(&self) -> std::path::PathBuf {
        self.dir
            .path()
            .join("log")
            .join(akledger::store::log::segment_file_name(0))
    }

    fn size(&self) -> u64 {
        std::fs::metadata(self.segment()).map_or(0, |m| m.len())
    }

    fn agree(&self, model: &Model, when: &str) {
        let ledger = self.ledger();
        let items = &pool().items;
        assert_eq!(ledger.len(), model.admitted.len(), "{when}: admitted count");
        for id in &model.admitted {
            let got = ledger
                .get(id)
                .expect("get")
                .unwrap_or_else(|| panic!("{when}: {id} not admitted"));
            assert_eq!(
                got.bytes(),
                items[model.stored[id]].bytes,
                "{when}: stored bytes"
            );
        }
        let pending: BTreeSet<EventId> = ledger.pending().into_iter().map(|(id, _)| id).collect();
        assert_eq!(pending, model.pending, "{when}: pending set");
    }
}

/// Runs up to 24 ops; the ledger must agree with the model after each, and check clean.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let n = pool().items.len();
    let mut model = Model::default();
    let mut h = Harness {
        dir: tempfile::tempdir().expect("tempdir"),
        ledger: None,
        sizes: Vec::new(),
        closed_with: 0,
    };
    h.open();
    for step in 0..24 {
        let Ok(op) = Op::arbitrary(&mut u) else {
            break;
        };
        let when = format!("step {step} {op:?}");
        match op {
            Op::Append(i) => {
                let i = usize::from(i) % n;
                let expected = model.batch(&[i]);
                let got = h.ledger().append(&pool().items[i].bytes).expect("append");
                assert_eq!(vec![outcome(&got)], expected, "{when}");
            }
            Op::AppendBatch(list) => {
                let list: Vec<usize> = list.iter().take(12).map(|i| usize::from(*i) % n).collect();
                let expected = model.batch(&list);
                let bytes: Vec<&[u8]> = list
                    .iter()
                    .map(|i| pool().items[*i].bytes.as_slice())
                    .collect();
                let got = h.ledger().append_batch(&bytes).expect("append_batch");
                let got: Vec<Outcome> = got.iter().map(outcome).collect();
                assert_eq!(got, expected, "{when}");
            }
            Op::Reopen => {
                h.ledger = None;
                h.closed_with = model.batches.len();
                h.open();
            }
            Op::CrashReopen(cut) => {
                // A crash skips the close, where a Buffered ledger records what it synced
                // as acknowledged: the marker stays as the last close left it.
                let marker = h.dir.path().join("acked");
                let before_close = std::fs::read(&marker).ok();
                h.ledger = None;
                match &before_close {
                    Some(bytes) => std::fs::write(&marker, bytes).expect("marker"),
                    None => {
                        let _ = std::fs::remove_file(&marker);
                    }
                }
                if h.sizes.len() == model.batches.len() && model.batches.len() > h.closed_with {
                    let last = h.sizes.pop().expect("size");
                    let prev = h.sizes.last().copied().unwrap_or(32);
                    let cut = 1 + u64::from(cut) % (last - prev);
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(h.segment())
                        .expect("segment");
                    f.set_len(last - cut).expect("truncate");
                    model = model.without_last_batch();
                }
                h.open();
                // The open made the log it recovered durable and marked it acknowledged:
                // no later crash can lose those batches either.
                h.closed_with = model.batches.len();
            }
        }
        while h.sizes.len() < model.batches.len() {
            h.sizes.push(h.size());
        }
        h.agree(&model, &when);
    }
    let report = h.ledger().check().expect("check");
    assert!(report.is_clean(), "check: {:?}", report.differences);
}
