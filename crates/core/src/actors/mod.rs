//! Seed 000 in the core (PROFILE §14): versioned actor models and the skills they offer
//! (`model.rs`), PNCP messages and their data checked against an action's models
//! (`pncp.rs`), and redaction before sealing: salted commitments and disclosures
//! (`redaction.rs`); the current model as seen from an event, on the DAG index
//! (`current.rs`); observation grants and observer feeds (`observe.rs`). Pure: no IO, no
//! clock, and salts come from the caller.

pub mod current;
pub mod model;
pub mod observe;
pub mod pncp;
pub mod redaction;

pub use current::current_model_at;
pub use model::{
    publish_model, Action, ActorModel, DataModel, EntityId, Field, Question, SkillLock, Subject,
};
pub use observe::{Filter, Grant, GrantInForce, Observation, ObserverItem, Revoke};
pub use pncp::{check_data, redact, DataFault, Pncp, PncpKind, Withheld};
pub use redaction::{commitment, placeholder, placeholder_commitment, Disclosure, Salt};
