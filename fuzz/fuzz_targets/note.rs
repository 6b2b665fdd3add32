#![no_main]
//! Fuzz target `note`: see `crates/core/tests/it/fuzz_tlog.rs` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/core/tests/it/fuzz_tlog.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check_note(data));
