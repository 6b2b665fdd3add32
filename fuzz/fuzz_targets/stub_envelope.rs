#![no_main]
//! Fuzz target `stub_envelope`: see `crates/runtime/tests/it/fuzz_stub_envelope.rs` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/runtime/tests/it/fuzz_stub_envelope.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check(data));
