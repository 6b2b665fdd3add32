#![no_main]
//! Fuzz target `admission_model`: see `tests/it/fuzz_checks/admission_model` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/fuzz_checks/mod.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::TARGETS
    .iter()
    .find(|(name, _)| *name == "admission_model")
    .map(|(_, check)| check(data))
    .unwrap_or_default());
