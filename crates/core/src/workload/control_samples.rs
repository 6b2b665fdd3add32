//! The control plaintexts the authoring helpers write, collected from a generated sidecar:
//! what `tests/data/vectors/check_control_schema.py` validates against the published Arkret
//! schema (its input is dumped by `examples/control_plaintexts.rs`).

use crate::envelope::Body;
use crate::error::{schema, Rejection};
use crate::exchange::classify::decrypt;

use super::sidecar::{sidecar_workload, SidecarSpec};

/// The seed and shape of the sample sidecar: enough exchanges that every scenario (reassign,
/// close with and without responses, cancel, fail) occurs.
const SEED: u64 = 11;
const SPEC: SidecarSpec = SidecarSpec {
    exchanges: 40,
    agents: 3,
    forgeries: false,
    skills: false,
};

/// Every control plaintext of the sample sidecar, decrypted byte for byte, in log order,
/// each with its `action`.
pub fn control_plaintext_samples() -> Result<Vec<(String, Vec<u8>)>, Rejection> {
    let w = sidecar_workload(SEED, SPEC)?;
    let mut out = Vec::new();
    for event in &w.events {
        let Body::ExchangeControl { encrypted, .. } = event.body() else {
            continue;
        };
        let bytes = decrypt(&w.sidecar, event, &w.keyring, encrypted)
            .map_err(|_| schema("a sample control does not decrypt"))?;
        let action = crate::canonical::parse_value(&bytes)?
            .as_object()
            .and_then(|o| o.get("action"))
            .and_then(|a| a.as_str())
            .unwrap_or_default()
            .to_owned();
        out.push((action, bytes));
    }
    Ok(out)
}
