//! The actions one cause takes, numbered so that a handler run again after a crash
//! takes none twice.

use super::*;

/// An envelope to send: which action it is, and the connection its cause came in by (an
/// answer goes back that way unless its address is routed elsewhere).
#[derive(Debug)]
pub(super) struct Outgoing {
    pub(super) tag: Tag,
    pub(super) envelope: Envelope,
    pub(super) origin: Option<usize>,
}

/// The actions one cause (an inbox event, a tick, a control) takes, numbered in order; a
/// handler run again after a crash gets the same numbers, and actions already in the
/// ledger are skipped.
#[derive(Debug)]
pub struct Effects<'r> {
    pub(super) cause: EventId,
    pub(super) next: u32,
    pub(super) origin: Option<usize>,
    pub(super) taken: &'r HashSet<Tag>,
    pub(super) sends: &'r mut Vec<Outgoing>,
    pub(super) stage: &'r mut Option<StageObserver>,
}

impl<'r> Effects<'r> {
    /// The actions of `cause` (which came in by the connection at `origin`, if any), none
    /// taken yet; `taken` holds the tags already in the ledger.
    pub(super) fn of(
        cause: EventId,
        origin: Option<usize>,
        taken: &'r HashSet<Tag>,
        sends: &'r mut Vec<Outgoing>,
        stage: &'r mut Option<StageObserver>,
    ) -> Effects<'r> {
        Effects {
            cause,
            next: 0,
            origin,
            taken,
            sends,
            stage,
        }
    }

    /// The next action's tag.
    pub(crate) fn next(&mut self) -> Tag {
        let tag = Tag {
            cause: self.cause,
            effect: self.next,
        };
        self.next += 1;
        tag
    }

    /// True when the action is already in the ledger.
    pub(crate) fn taken(&self, tag: Tag) -> bool {
        self.taken.contains(&tag)
    }

    /// Queues `envelope` to be sent (made an outbox event, then written) unless sent
    /// already.
    pub(crate) fn send(&mut self, envelope: Envelope) {
        let tag = self.next();
        if !self.taken(tag) {
            self.sends.push(Outgoing {
                tag,
                envelope,
                origin: self.origin,
            });
        }
    }

    /// Tells the stage observer, if any, that `stage` was passed.
    pub(crate) fn passed(&mut self, stage: Stage) {
        if let Some(StageObserver(observe)) = self.stage.as_mut() {
            observe(stage);
        }
    }
}
