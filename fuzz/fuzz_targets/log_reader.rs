#![no_main]
//! Fuzz target `log_reader`: see `tests/it/fuzz_checks/log_reader` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/fuzz_checks/mod.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::TARGETS
    .iter()
    .find(|(name, _)| *name == "log_reader")
    .map(|(_, check)| check(data))
    .unwrap_or_default());
