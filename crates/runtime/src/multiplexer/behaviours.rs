//! `act()`: the skills' behaviours that are due act; a tick that sends or changes
//! something is recorded as a tick event before its envelopes are sent.

use super::withholding::Unsealed;
use super::*;
use crate::skills::Tick;

impl Runtime<'_> {
    /// Runs the behaviours due at `now`; how many ticks were recorded.
    pub(super) fn act(&mut self, now: Timestamp) -> Result<usize, Error> {
        let at = now.max(self.floor);
        let mut recorded = 0;
        for place in self.skills.due(at) {
            let acted = self.skills.act(place, Tick { at }, &self.config.address);
            if !acted.is_recorded() {
                continue;
            }
            let Some((skill, behaviour, state)) = self.skills.names(place) else {
                continue;
            };
            let body = tick_body(skill, behaviour, state);
            let event = Unsealed {
                body: Box::new(move || body),
                parents: Vec::new(),
                at,
            };
            let ids = self.sign_and_admit(vec![event], vec![None], |_, _| Ok(()))?;
            recorded += 1;
            self.passed(Stage::Ticked);
            let mut sends = Vec::new();
            if let Some(&id) = ids.first() {
                self.tick_effects(id, acted.sends, &mut sends);
            }
            self.send_all(sends)?;
        }
        Ok(recorded)
    }

    /// The envelopes a tick sends, as its effects.
    pub(super) fn tick_effects(
        &mut self,
        id: EventId,
        envelopes: Vec<Envelope>,
        sends: &mut Vec<Outgoing>,
    ) {
        let mut effects = Effects::of(id, None, &self.taken, sends, &mut self.stage);
        for envelope in envelopes {
            effects.send(envelope);
        }
    }
}
