//! The whole-sidecar fold: classify every admitted event once, group by exchange id, fold
//! each exchange.

use std::collections::BTreeMap;

use crate::event::{Event, Verified};
use crate::keyring::Keyring;

use super::causality::Causality;
use super::classify::{classify, Classified, ExchangeItem, SidecarInfo};
use super::fold::fold_exchange;
use super::plaintext::ExchangeId;
use super::report::{NotFolded, Projection};

/// What folding one sidecar gives.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct SidecarFold {
    /// One projection per exchange with a canonical request, ordered by exchange id.
    pub projections: Vec<Projection>,
    /// Every exchange event that did not fold, ordered by event id.
    pub not_folded: Vec<NotFolded>,
}

/// Folds every exchange of `sidecar` over `events` (events of other scopes are skipped;
/// duplicates count once).
pub fn fold_sidecar(
    sidecar: &SidecarInfo,
    events: &[Event<Verified>],
    keyring: &Keyring,
    causality: &impl Causality,
) -> SidecarFold {
    let mut not_folded = Vec::new();
    let mut exchanges: BTreeMap<ExchangeId, Vec<ExchangeItem>> = BTreeMap::new();
    let mut sidecar = sidecar.clone();
    for event in events {
        match classify(&sidecar, event, keyring) {
            Some(Classified::Exchange(item)) => exchanges
                .entry(item.exchange_id.clone())
                .or_default()
                .push(*item),
            Some(Classified::Unbound(n)) => not_folded.push(n),
            Some(Classified::Attach(a)) => sidecar.attaches.push(a),
            Some(Classified::Plain(_)) | None => {}
        }
    }
    let mut projections = Vec::with_capacity(exchanges.len());
    for (exchange_id, items) in &exchanges {
        let outcome = fold_exchange(&sidecar, exchange_id, items, causality);
        projections.extend(outcome.projection);
        not_folded.extend(outcome.not_folded);
    }
    not_folded.sort();
    not_folded.dedup();
    SidecarFold {
        projections,
        not_folded,
    }
}

impl SidecarFold {
    /// True when the sidecar has exchange events but not one of them decrypted: the
    /// keyring has no (or the wrong) key for the sidecar's epochs. Without this check an
    /// empty fold looks like a sidecar with no exchanges.
    pub fn nothing_decrypted(&self) -> bool {
        self.projections.is_empty()
            && !self.not_folded.is_empty()
            && self
                .not_folded
                .iter()
                .all(|n| n.reason == super::report::Reason::NotDecryptable)
    }

    /// `{"exchanges": [...], "not_folded": [...]}` as in the §12 report.
    pub fn to_json(&self) -> crate::canonical::Json {
        crate::canonical::Object::new()
            .with(
                "exchanges",
                self.projections
                    .iter()
                    .map(Projection::to_json)
                    .collect::<Vec<_>>()
                    .into(),
            )
            .with(
                "not_folded",
                self.not_folded
                    .iter()
                    .map(NotFolded::to_json)
                    .collect::<Vec<_>>()
                    .into(),
            )
            .into()
    }
}

/// Serializes as `{"exchanges": [§8.6 projections], "not_folded": [...]}`
/// ([`SidecarFold::to_json`]).
impl serde::Serialize for SidecarFold {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}
