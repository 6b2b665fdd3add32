//! `Ledger::check`: re-verify every stored event from the log, rebuild every index in
//! memory by replay, and compare with the live state, with sled, with the graph file
//! that `heads-of` answers from and with the ledger tree's stored hashes. Differences are reported, never silently fixed.
#![cfg_attr(
    feature = "internals",
    allow(missing_docs, clippy::len_without_is_empty)
)]

use crate::error::Error;
use crate::store::log::HighWater;

use super::index::Changes;
use super::record::Record;
use super::replay::{replay, Reverify};
use super::state::State;
use super::Ledger;

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Log entries read and re-verified.
    pub entries: u64,
    /// Admitted events in the rebuilt state.
    pub admitted: usize,
    /// Pending events in the rebuilt state.
    pub pending: usize,
    /// Every difference found; empty when the ledger is consistent.
    pub differences: Vec<String>,
}

impl CheckReport {
    /// True when nothing differs.
    pub fn is_clean(&self) -> bool {
        self.differences.is_empty()
    }
}

impl Ledger {
    /// Re-verifies every event in the log, rebuilds the state and the index records from
    /// it, and compares them with the live state and sled. Appends wait while it runs.
    pub fn check(&self) -> Result<CheckReport, Error> {
        let writer = self.writer.lock().map_err(|_| Error::Poisoned)?;
        let mut fresh = State::default();
        let mut records: Vec<Record> = Vec::new();
        let mut high = HighWater::default();
        let mut sink = |_: usize, r: &[Record], _: &Changes, h: HighWater| {
            records.extend_from_slice(r);
            high = h;
            Ok(())
        };
        let reverify = Reverify {
            verifier: &self.verifier,
            threads: self.config.verify_threads,
        };
        let replayed = replay(
            &self.reader,
            &mut fresh,
            None,
            Some(&reverify),
            1,
            &mut sink,
        )?;
        let mut report = CheckReport {
            entries: replayed.entries,
            admitted: fresh.len(),
            pending: fresh.pending.len(),
            differences: replayed.failures,
        };
        {
            let live = self.read_state()?;
            compare_states(&fresh, &live, &mut report.differences);
        }
        if let Some(index) = &self.index {
            index.compare(&records, &fresh, high, &mut report.differences)?;
        }
        self.compare_exchanges(&fresh, &mut report.differences)?;
        self.compare_graph_file(&fresh, high, &mut report.differences);
        self.compare_tree(fresh.ids.raw(), &mut report.differences)?;
        drop(writer);
        Ok(report)
    }

    /// The graph file, when it claims to describe the log as it is (the one state in which
    /// a query trusts it), must be byte for byte the file a rebuild writes: its checksums
    /// prove it undamaged, not true. A file for another log is refused by every query and is
    /// not a difference; neither is none.
    fn compare_graph_file(&self, fresh: &State, high: HighWater, diffs: &mut Vec<String>) {
        if self.config.is_in_memory() {
            return;
        }
        let path = crate::layout::Layout::new(self.config.dir()).graph();
        let Ok(on_disk) = std::fs::read(&path) else {
            return;
        };
        if super::graph_file::head_claims(&on_disk, high) && on_disk != fresh.encode_graph(high) {
            diffs.push(format!(
                "the graph file {} describes this log but differs from a rebuild from it (heads-of would answer from it); remove it and a close writes it anew",
                path.display()
            ));
        }
    }
}

/// Every difference between two states, as sentences (empty when they agree).
pub fn compare_states(fresh: &State, live: &State, diffs: &mut Vec<String>) {
    let mut differ = |what: &str, same: bool| {
        if !same {
            diffs.push(format!(
                "in-memory {what} differs from a rebuild from the log"
            ));
        }
    };
    differ("admission order", fresh.ids == live.ids);
    differ("log positions", fresh.at == live.at);
    differ("timestamps", fresh.stamps == live.stamps);
    differ("DAG index", fresh.dag == live.dag);
    differ("heads", fresh.heads() == live.heads());
    differ("realm registry", fresh.realms == live.realms);
    differ("sidecar registry", fresh.sidecars == live.sidecars);
    differ("singleton registry", fresh.singletons == live.singletons);
    differ("strand registry", fresh.strands == live.strands);
    differ("context attaches", fresh.attaches == live.attaches);
    differ("per-sidecar attach lists", fresh.contexts == live.contexts);
    differ("actor model registry", fresh.actors == live.actors);
    differ("per-sidecar lists", fresh.by_sidecar == live.by_sidecar);
    differ("pending set", fresh.pending == live.pending);
    differ(
        "rejections on release",
        fresh.released_rejections == live.released_rejections,
    );
}
