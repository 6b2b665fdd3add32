#![no_main]
//! Fuzz target `stub_envelope`: see `tests/fuzz_checks/stub_envelope` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::TARGETS
    .iter()
    .find(|(name, _)| *name == "stub_envelope")
    .map(|(_, check)| check(data))
    .unwrap_or_default());
