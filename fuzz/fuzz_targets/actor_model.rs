#![no_main]
//! Fuzz target `actor_model`: see `crates/core/tests/it/fuzz_actors.rs` (shared with the stable replay test).

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/core/tests/it/fuzz_actors.rs"]
mod check;

fuzz_target!(|data: &[u8]| check::check_actor_model(data));
