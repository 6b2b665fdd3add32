//! The Arkret sidecar exchange (PROFILE §8): a pure fold from the admitted events of one
//! sidecar and its keys to one projection per exchange, plus the producer helpers that
//! author real exchange events.
//!
//! - [`causality`]: the coverage / heads questions the fold asks, and an in-memory graph.
//! - [`plaintext`]: binding, request context, message and control plaintexts.
//! - [`classify()`]: decrypt and read one event (the cacheable per-event step).
//! - [`fold`]: one exchange; [`sidecar`]: every exchange of a sidecar.
//! - [`history`]: one exchange's timeline (what the fold made of each item, in time).
//! - [`incremental`]: one more agent message folded in without refolding its exchange.
//! - `controls`: static validity, conflicts, chain order and transitions of controls.
//! - [`mod@preview`]: what the fold would do with one more event, before it is appended.
//! - [`report`]: projections and the not-folded list with its closed reasons.
//! - [`author`]: producer helpers.

pub mod author;
pub mod causality;
pub mod classify;
mod controls;
pub mod fold;
pub mod history;
pub mod incremental;
pub mod plaintext;
mod pncp_rules;
pub mod preview;
pub mod report;
pub mod sidecar;

pub use author::{
    attach_context, create_private_sidecar, create_realm, create_sidecar, create_strand, Act,
    ExchangeView, PncpDraft, PrivateSidecar, SidecarAuthor, MAX_CONTROL_BASIS,
};
pub use causality::{Causality, MemoryGraph};
pub use classify::{classify, Classified, ContextAttach, ExchangeItem, Fact, SidecarInfo};
pub use controls::Conflict;
pub use fold::{fold_exchange, ExchangeOutcome};
pub use history::{exchange_history, ExchangeHistory, HistoryEntry, PncpLabel, Step, Verdict};
pub use incremental::{fold_added_message, Added};
pub use plaintext::{
    Action, Binding, ControlPlaintext, ExchangeId, MessageError, MessagePlaintext, RequestContext,
    Role, TerminalKind, TrackRef,
};
pub use preview::{preview, Preview};
pub use report::{NotFolded, Projection, Reason, Status};
pub use sidecar::{fold_sidecar, SidecarFold};
