//! Prints, as a JSON array of `{"action", "plaintext"}`, every control plaintext the
//! authoring helpers write for the sample sidecar
//! ([`akledger::workload::control_plaintext_samples`]). Its output is
//! `tests/data/vectors/control_plaintexts.json`, the input of `check_control_schema.py`:
//!
//!     cargo run --example control_plaintexts > tests/data/vectors/control_plaintexts.json
// Examples panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let samples = akledger::workload::control_plaintext_samples()?;
    let mut items = Vec::with_capacity(samples.len());
    for (action, bytes) in samples {
        items.push(serde_json::json!({
            "action": action,
            "plaintext": String::from_utf8(bytes)?,
        }));
    }
    println!("{}", serde_json::to_string_pretty(&items)?);
    Ok(())
}
