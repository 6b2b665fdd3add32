//! Per-target checks shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the
//! stable replay test (`tests/it/fuzz_regressions.rs`). Each `check(data)` panics exactly
//! when the target has found something; the fuzz targets and the replay test call the same
//! function, so a corpus file means the same thing in both places.
// Each fuzz target includes every check and uses one.
#![allow(dead_code)]

pub mod admission_model;
pub mod canonical;
pub mod event;
pub mod fixtures;
pub mod fold;
pub mod log_reader;
pub mod segment_recovery;

/// A target's check: panics on a finding.
pub type Check = fn(&[u8]);

/// Every target, by the name of its corpus directory.
pub const TARGETS: &[(&str, Check)] = &[
    ("canonical", canonical::check),
    ("event", event::check),
    ("event_mutation", event::check_mutation),
    ("log_reader", log_reader::check),
    ("segment_recovery", segment_recovery::check),
    ("admission_model", admission_model::check),
    ("fold", fold::check),
];
