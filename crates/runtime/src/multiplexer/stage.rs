//! The stages of a step: the moments after which the work so far is durable.

/// A moment of a [`Runtime::step`](super::Runtime::step) after which its work so far is
/// durable: a crash right after it must lose nothing and repeat nothing.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Stage {
    /// A behaviour's tick recorded; its envelopes not yet.
    Ticked,
    /// Envelopes read from a connection; nothing appended yet.
    Received,
    /// A run of the inbox batch appended; nothing of it handled yet (a batch of more than
    /// [`SIGN_AHEAD_RUN`](crate::limits::SIGN_AHEAD_RUN) envelopes is appended in runs,
    /// each handled while the next is signed).
    Inbox,
    /// A bridge request or response appended; its report not yet.
    Bridged,
    /// Outbox events appended; none written yet.
    Outbox,
    /// The first outbound envelope written; the marker not yet.
    Sent,
    /// A control appended; its report not yet.
    Decided,
    /// The progress marker written (the first one by the recovery that opens every run).
    Marker,
}

impl Stage {
    /// Every stage, in the order a step passes them.
    pub const ALL: [Stage; 8] = [
        Stage::Ticked,
        Stage::Received,
        Stage::Inbox,
        Stage::Bridged,
        Stage::Outbox,
        Stage::Sent,
        Stage::Decided,
        Stage::Marker,
    ];

    /// The stage's name: `ticked`, `received`, `inbox`, `bridged`, `outbox`, `sent`,
    /// `decided`, `marker`.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Ticked => "ticked",
            Stage::Received => "received",
            Stage::Inbox => "inbox",
            Stage::Bridged => "bridged",
            Stage::Outbox => "outbox",
            Stage::Sent => "sent",
            Stage::Decided => "decided",
            Stage::Marker => "marker",
        }
    }

    /// The stage named `name`.
    pub fn parse(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What [`Runtime::on_stage`](super::Runtime::on_stage) installs: called at every stage a step passes.
pub(super) struct StageObserver(pub(super) Box<dyn FnMut(Stage)>);

impl std::fmt::Debug for StageObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageObserver")
    }
}
