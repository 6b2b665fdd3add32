use akledger::internals::state::State;
use akledger::internals::stored::Stored;
#[allow(unused_imports)]
use akledger::*;
use std::collections::HashMap;

use akledger::internals::admit::*;
use akledger::store::log::LogPos;
use akledger::workload::realm_dag;

/// Committed events in a map: what admission asks of the log, without one.
#[derive(Default)]
struct MapStore(HashMap<LogPos, Vec<u8>>);

impl Stored for MapStore {
    fn event(&self, at: LogPos) -> Result<Event, Error> {
        let bytes = self.0.get(&at).ok_or(Error::Misuse(format!("{at:?}")))?;
        akledger::internals::stored::reread(bytes, at)
    }

    fn holds(&self, at: LogPos, bytes: &[u8]) -> bool {
        self.0.get(&at).is_some_and(|b| b == bytes)
    }
}

fn verified(e: &Event<akledger::event::Unverified>) -> Event {
    Event::reread_unchecked(e.bytes()).unwrap()
}

#[test]
fn a_committed_pending_event_is_read_back_from_the_store_and_released() {
    let events = realm_dag(3, 2, 1, 8).unwrap();
    let (realm, first, second) = (&events[0], &events[1], &events[2]);
    let mut store = MapStore::default();
    let mut state = State::default();
    // Batch 1 (replayed from "the log"): the second note waits for the first.
    let at = LogPos::new(0, 100);
    store.0.insert(at, second.bytes().to_vec());
    let staged = {
        let mut decider = Decider::new(&state, &store);
        let outcome = decider.decide(verified(second), Source::Log(at));
        assert!(matches!(outcome, Appended::Pending { .. }), "{outcome:?}");
        decider.finish().unwrap()
    };
    state.apply(staged, &[]).unwrap();
    assert!(state.pending.get(&second.id()).is_some());
    // Batch 2: the realm and the first note arrive; the second is read back from the
    // store and released in the same batch.
    let arrivals = [(LogPos::new(0, 200), realm), (LogPos::new(0, 300), first)];
    for (at, e) in arrivals {
        store.0.insert(at, e.bytes().to_vec());
    }
    let staged = {
        let mut decider = Decider::new(&state, &store);
        for (at, e) in arrivals {
            assert_eq!(
                decider.decide(verified(e), Source::Log(at)),
                Appended::Admitted(e.id())
            );
        }
        decider.finish().unwrap()
    };
    let admitted: Vec<_> = staged.admitted.iter().map(|a| a.event.id()).collect();
    assert_eq!(admitted, [realm.id(), first.id(), second.id()]);
}

#[test]
fn a_store_that_lost_a_pending_event_fails_the_batch() {
    let events = realm_dag(4, 2, 1, 8).unwrap();
    let (realm, first, second) = (&events[0], &events[1], &events[2]);
    let empty = MapStore::default();
    let mut state = State::default();
    let staged = {
        let mut decider = Decider::new(&state, &empty);
        decider.decide(verified(second), Source::Log(LogPos::new(0, 100)));
        decider.finish().unwrap()
    };
    state.apply(staged, &[]).unwrap();
    let mut decider = Decider::new(&state, &empty);
    decider.decide(verified(realm), Source::Log(LogPos::new(0, 200)));
    decider.decide(verified(first), Source::Log(LogPos::new(0, 300)));
    assert!(
        decider.finish().is_err(),
        "the pending event could not be read back"
    );
}
