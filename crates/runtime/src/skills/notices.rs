//! The `notices` skill's handler: every control the decision maker authored (its internal
//! message, [`super::DECISION_PROTOCOL_ID`]) is told to an address as a default-protocol
//! `bytes` message opening a dialogue, its content the internal message's JSON.

use super::{decision_protocol_id, SkillContext};
use crate::default_protocol::Performative;
use crate::dialogue::Dialogues;
use crate::envelope::{Envelope, ProtocolId};
use crate::handlers::{default_protocol_id, dialogue_nonce, Handler, Inbound, Refusal};

/// Tells `to` of every control.
#[derive(Debug)]
pub struct Notices {
    protocol: ProtocolId,
    to: String,
    dialogues: Dialogues,
}

impl Notices {
    /// Tells `to`.
    pub fn new(to: &str) -> Notices {
        Notices {
            protocol: decision_protocol_id(),
            to: to.to_string(),
            dialogues: Dialogues::new(),
        }
    }
}

impl Handler for Notices {
    fn protocol_id(&self) -> &ProtocolId {
        &self.protocol
    }

    fn handle(
        &mut self,
        inbound: Inbound<'_>,
        context: &mut SkillContext<'_>,
    ) -> Result<Vec<Envelope>, Refusal> {
        let nonce = dialogue_nonce(inbound.event_id);
        let content = Performative::Bytes(inbound.envelope.message.clone());
        Ok(self
            .dialogues
            .create(&self.to, &nonce, content)
            .map(|m| {
                Envelope::new(
                    &self.to,
                    context.address(),
                    default_protocol_id(),
                    m.encode(),
                )
            })
            .into_iter()
            .collect())
    }
}
