//! A sidecar program: a controller and two agents, each in its own thread, on one ledger.
//!
//! The controller opens four exchanges and drives each to a different end — closed with a
//! response (complete), cancelled, failed, and handed over to another agent who answers —
//! while the agents follow the exchange feed and answer what is theirs, and a watcher
//! follows every admitted event. Then the program restarts (keys come back from the
//! keyring file), works some more, and ships its log, shuffled, to a peer ledger that folds
//! the same projections.
//!
//! Run it with `cargo run --example sidecar`; `cargo test` runs it too (see the test at
//! the end, built because `Cargo.toml` marks this example `test = true`).
// Examples panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use akledger::log_format::{write_item, LogFormat};
use akledger::prelude::*;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const TICK: Duration = Duration::from_millis(20);

fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config =
        || Config::new(dir.path().join("ledger")).keyring_file(dir.path().join("keyring.json"));
    let ledger = Ledger::open_with(config())?;
    let boss_key = SigningKey::generate(&mut OsRng);
    let agent_keys = [
        SigningKey::generate(&mut OsRng),
        SigningKey::generate(&mut OsRng),
    ];
    let [a1, a2] = agent_keys
        .each_ref()
        .map(|k| DidCoreId::for_key(&k.verifying_key()));

    // A realm, a sidecar on the controller's private strand, and the sidecar's key (saved
    // to the keyring file by the ledger).
    let boss = ActorId::service_for_key(&boss_key.verifying_key());
    let realm = create_realm(&boss_key, boss.clone(), Timestamp::now())?;
    ledger.append(realm.bytes())?;
    let at = Timestamp::now_after([realm.created_at()]);
    let private = create_private_sidecar(&boss_key, boss, realm.id().retype(), None, at)?;
    for event in private.events() {
        ledger.append(event.bytes())?;
    }
    let sidecar = private.info.sidecar_id;
    ledger.add_sidecar_key(sidecar, 1, SidecarKey::generate(&mut OsRng))?;

    // Subscribe before anything happens, so nothing is missed.
    let events = ledger.watch_events();
    let boss_feed = ledger.exchange_feed(&sidecar)?;
    let agent_feeds = [
        ledger.exchange_feed(&sidecar)?,
        ledger.exchange_feed(&sidecar)?,
    ];
    let done = AtomicBool::new(false);

    let (answered, watched) = std::thread::scope(|s| -> Result<_> {
        let agents: Vec<_> = agent_keys
            .iter()
            .zip(agent_feeds)
            .map(|(key, feed)| s.spawn(|| agent(&ledger, key.clone(), sidecar, feed, &done)))
            .collect();
        let watcher = s.spawn(|| watch(&ledger, &events, &done));

        // The controller; whatever it ends with, the other threads are told to stop.
        let controlled = (|| -> Result<()> {
            let handle = ledger.sidecar(&ledger.sidecar_author(boss_key.clone(), sidecar, 1)?);
            let ask = |id: &ExchangeId, to: Vec<DidCoreId>, coordinator| -> Result<EventId> {
                let context = handle.request_context("orders", id.as_str(), to, coordinator)?;
                Ok(handle.request(id, context, Json::from("please handle this order"))?)
            };
            let [answered_x, cancelled_x, failed_x, handed_x] =
                ["ask-close", "cancel", "fail", "handover"].map(exchange_id);
            ask(&answered_x, vec![a1.clone()], None)?;
            ask(&cancelled_x, vec![a2.clone()], None)?;
            ask(&failed_x, vec![a1.clone()], None)?;
            ask(&handed_x, vec![a1.clone(), a2.clone()], Some(a1.clone()))?;
            handle.cancel(&cancelled_x)?;
            handle.fail(&failed_x, "out_of_stock")?;
            handle.reassign(&handed_x, a2.clone())?;
            // Close each answered exchange once its response is folded.
            let mut open: HashSet<ExchangeId> = [answered_x, handed_x].into();
            while !open.is_empty() {
                if agents.iter().any(|a| a.is_finished()) {
                    return Err("an agent stopped early".into());
                }
                for p in changes(&ledger, sidecar, &boss_feed)? {
                    if p.status == Status::Responding && open.remove(&p.exchange_id) {
                        handle.close(&p.exchange_id)?;
                    }
                }
            }
            Ok(())
        })();
        done.store(true, Ordering::Release);
        let mut answered = 0;
        for a in agents {
            answered += a.join().map_err(|_| "an agent panicked")??;
        }
        let watched = watcher.join().map_err(|_| "watcher panicked")??;
        controlled?;
        Ok((answered, watched))
    })?;
    assert_eq!(
        answered, 2,
        "one answer each: a1 the asked one, a2 the handed-over one"
    );
    assert_eq!(
        watched,
        ledger.len() - 4,
        "every event after the subscription"
    );
    let fold = ledger.exchanges(&sidecar)?;
    for p in &fold.projections {
        let why = p.failure_reason_code.as_deref().unwrap_or("-");
        println!(
            "{:<32} {:<9} {why}",
            p.exchange_id.as_str(),
            p.status.as_str()
        );
    }
    let ended: Vec<_> = fold
        .projections
        .iter()
        .map(|p| (p.exchange_id.clone(), p.status))
        .collect();
    let expected = [
        ("ask-close", Status::Complete),
        ("cancel", Status::Failed),
        ("fail", Status::Failed),
        ("handover", Status::Complete),
    ];
    assert_eq!(
        ended,
        expected.map(|(name, status)| (exchange_id(name), status))
    );

    // Restart: the sidecar key comes back from the keyring file, and so do the projections.
    let before = fold.to_json();
    drop(ledger);
    let ledger = Ledger::open_with(config())?;
    assert_eq!(ledger.exchanges(&sidecar)?.to_json(), before);
    let handle = ledger.sidecar(&ledger.sidecar_author(boss_key, sidecar, 1)?);
    let empty = exchange_id("after-restart");
    let context = handle.request_context("orders", "late", vec![a2], None)?;
    handle.request(&empty, context, Json::from("anyone?"))?;
    handle.close(&empty)?;
    let p = ledger.exchange(&sidecar, &empty)?.ok_or("no projection")?;
    assert_eq!(
        p.failure_reason_code.as_deref(),
        Some("controller_closed_empty")
    );

    // A peer gets the log in a shuffled order, with the same keys, and folds the same.
    let mut lines = Vec::new();
    for event in ledger.iter() {
        let mut line = Vec::new();
        write_item(&mut line, LogFormat::JsonLines, event?.bytes())?;
        lines.push(line);
    }
    let mut rng = akledger::workload::SplitMix::new(7);
    for i in (1..lines.len()).rev() {
        lines.swap(i, rng.below(i + 1));
    }
    let peer_dir = tempfile::tempdir()?;
    std::fs::copy(
        dir.path().join("keyring.json"),
        peer_dir.path().join("keyring.json"),
    )?;
    let peer = Ledger::open_with(
        Config::new(peer_dir.path().join("ledger"))
            .keyring_file(peer_dir.path().join("keyring.json")),
    )?;
    let summary = peer.append_log(&lines.concat()[..])?.summary;
    println!(
        "peer: {} events, {} pending on arrival, {} released",
        summary.items,
        summary.pending,
        summary.released.len()
    );
    assert!(peer.pending().is_empty());
    assert_eq!(
        peer.exchanges(&sidecar)?.to_json(),
        ledger.exchanges(&sidecar)?.to_json()
    );
    Ok(())
}

/// An agent: answers the exchanges it coordinates that it is asked to (`ask-…`) or that
/// were handed over to it. Returns how many it answered.
fn agent(
    ledger: &Ledger,
    key: SigningKey,
    sidecar: SidecarId,
    feed: ExchangeFeed,
    done: &AtomicBool,
) -> Result<usize> {
    let me = DidCoreId::for_key(&key.verifying_key());
    let handle = ledger.sidecar(&ledger.sidecar_author(key, sidecar, 1)?);
    let mut answered = HashSet::new();
    while !done.load(Ordering::Acquire) {
        for p in changes(ledger, sidecar, &feed)? {
            let handed_over = p.coordinator_assignment_event_id != p.request_event_id;
            let asked = p.exchange_id.as_str().starts_with("ask-") || handed_over;
            if p.coordinator_agent_id == me
                && p.status == Status::Delivered
                && asked
                && answered.insert(p.exchange_id.clone())
            {
                handle.respond(&p.exchange_id, Json::from("done"), true)?;
            }
        }
    }
    Ok(answered.len())
}

/// The next projections from a feed (waiting a tick at most); after a lag, all of them.
fn changes(ledger: &Ledger, sidecar: SidecarId, feed: &ExchangeFeed) -> Result<Vec<Projection>> {
    Ok(match feed.next_timeout(TICK) {
        Some(ExchangeChange::Changed { projection, .. }) => vec![*projection],
        Some(ExchangeChange::Lagged) => ledger.exchanges(&sidecar)?.projections,
        _ => Vec::new(),
    })
}

/// Follows every admitted event until `done`; checks positions are consecutive (re-reading
/// the gap after a lag) and returns how many it saw.
fn watch(ledger: &Ledger, feed: &EventFeed, done: &AtomicBool) -> Result<usize> {
    let mut next = feed.start();
    loop {
        let finished = done.load(Ordering::Acquire);
        match feed.next_timeout(TICK) {
            Some(WatchedEvent::Admitted { position, .. }) if position == next => next += 1,
            Some(WatchedEvent::Lagged) => next += ledger.iter_from(next).count() as u64,
            None if finished => return Ok((next - feed.start()) as usize),
            // Events queued before a lag were counted by the re-read: skip them.
            _ => {}
        }
    }
}

fn exchange_id(name: &str) -> ExchangeId {
    ExchangeId::parse(&format!("{name}-{:0>20}", 1)).expect("a valid exchange id")
}

#[cfg(test)]
mod tests {
    /// `cargo test` runs the example end to end.
    #[test]
    fn the_example_runs() {
        super::main().unwrap();
    }
}
