//! Dialogues of the default protocol as AEA 1.x keeps them (`aea.protocols.dialogue.base`),
//! from one agent's side: which dialogue a message belongs to, whether it may come next,
//! and the ids, target and references of a reply. Pure: the references this side assigns
//! are given by the caller (the runtime derives them from the inbound event's digest, so a
//! handler run again after a crash answers the same).
//!
//! The rules, as AEA 1.x applies them:
//! - A dialogue is labelled by (starter reference, responder reference, opponent, starter).
//!   Its starter numbers messages 1, 2, 3, …; the responder −1, −2, …. The first message has
//!   target 0; every later one targets an earlier message of the dialogue, by id, that it
//!   may reply to (default protocol: `bytes` may be answered by `bytes`, `error` or `end`;
//!   `error` and `end` by nothing).
//! - An incoming message with references (s, "") and id 1 starts a dialogue; the responder
//!   reference is assigned when it is created. A message whose references are both empty,
//!   or that names no known dialogue, or that does not fit its dialogue (id, target,
//!   performative), belongs to none: [`Dialogues::update`] answers `None` (AEA's echo skill
//!   then answers `INVALID_DIALOGUE`).
//! - A reference this side started is completed by the opponent's first answer.

use std::collections::{HashMap, VecDeque};

use super::default_protocol::{DefaultMessage, Performative};
use crate::limits::MAX_DIALOGUES;

/// A message's kind, which is all the rules look at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Bytes,
    Error,
    End,
}

impl Kind {
    fn of(performative: &Performative) -> Kind {
        match performative {
            Performative::Bytes(_) => Kind::Bytes,
            Performative::Error { .. } => Kind::Error,
            Performative::End => Kind::End,
        }
    }

    /// May a message of kind `reply` answer one of this kind? (Default protocol: anything
    /// answers `bytes`; nothing answers `error` or `end`.)
    fn answered_by(self, _reply: Kind) -> bool {
        self == Kind::Bytes
    }

    /// May it open a dialogue?
    fn initial(self) -> bool {
        matches!(self, Kind::Bytes | Kind::Error)
    }
}

/// One dialogue.
#[derive(Clone, Debug)]
struct Dialogue {
    /// (starter reference, responder reference).
    reference: (String, String),
    opponent: String,
    /// Started by this side.
    self_initiated: bool,
    /// The kinds of the messages each side sent, in order (message k is at k − 1).
    incoming: Vec<Kind>,
    outgoing: Vec<Kind>,
}

impl Dialogue {
    /// The id the next message from `by_self` carries.
    fn next_id(&self, by_self: bool) -> i32 {
        let sent = if by_self {
            self.outgoing.len()
        } else {
            self.incoming.len()
        };
        let next = i32::try_from(sent + 1).unwrap_or(i32::MAX);
        if by_self == self.self_initiated {
            next
        } else {
            -next
        }
    }

    /// The kind of message `id` (positive ids are the starter's).
    fn kind_of(&self, id: i32) -> Option<Kind> {
        let starters = if self.self_initiated {
            &self.outgoing
        } else {
            &self.incoming
        };
        let responders = if self.self_initiated {
            &self.incoming
        } else {
            &self.outgoing
        };
        let list = if id > 0 { starters } else { responders };
        let index = usize::try_from(id.unsigned_abs()).ok()?.checked_sub(1)?;
        list.get(index).copied()
    }

    /// Whether `message` may come next from `by_self`.
    fn fits(&self, message: &DefaultMessage, by_self: bool) -> bool {
        let kind = Kind::of(&message.performative);
        if message.dialogue_reference.0 != self.reference.0 {
            return false;
        }
        if self.incoming.is_empty() && self.outgoing.is_empty() {
            return message.message_id == 1 && message.target == 0 && kind.initial();
        }
        if message.message_id != self.next_id(by_self) || message.target == 0 {
            return false;
        }
        self.kind_of(message.target)
            .is_some_and(|target| target.answered_by(kind))
    }

    fn push(&mut self, message: &DefaultMessage, by_self: bool) {
        let kind = Kind::of(&message.performative);
        if by_self {
            self.outgoing.push(kind);
        } else {
            self.incoming.push(kind);
        }
    }
}

/// The dialogues of one agent (the sidecar, under one address), the most recent
/// [`MAX_DIALOGUES`] of them.
#[derive(Clone, Debug, Default)]
pub struct Dialogues {
    /// By (starter reference, opponent): a dialogue is found by its starter reference, the
    /// responder reference then checked; the references are nonces, unique per opponent.
    dialogues: HashMap<(String, String), Dialogue>,
    /// Keys in creation order, for evicting the oldest.
    order: VecDeque<(String, String)>,
}

/// Where an incoming message belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialogueRef {
    key: (String, String),
}

impl Dialogues {
    /// No dialogues.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes `message` from `sender` into its dialogue, or starts one (with `nonce` as this
    /// side's responder reference); `None` when it belongs to no dialogue (AEA's
    /// `Dialogues.update` returning `None`), in which case nothing changes.
    pub fn update(
        &mut self,
        message: &DefaultMessage,
        sender: &str,
        nonce: &str,
    ) -> Option<DialogueRef> {
        let (starter, responder) = &message.dialogue_reference;
        if starter.is_empty() {
            return None;
        }
        let key = (starter.clone(), sender.to_string());
        if responder.is_empty() && message.message_id == 1 {
            if self.dialogues.contains_key(&key) {
                return None;
            }
            let dialogue = Dialogue {
                reference: (starter.clone(), nonce.to_string()),
                opponent: sender.to_string(),
                self_initiated: false,
                incoming: Vec::new(),
                outgoing: Vec::new(),
            };
            if !dialogue.fits(message, false) {
                return None;
            }
            self.insert(key.clone(), dialogue);
        } else {
            let dialogue = self.dialogues.get_mut(&key)?;
            let responder_known = !dialogue.reference.1.is_empty();
            if responder.is_empty() {
                // Only this side's own dialogue may still miss the responder's reference.
                if !dialogue.self_initiated || responder_known {
                    return None;
                }
            } else if responder_known && *responder != dialogue.reference.1 {
                return None;
            }
            if !dialogue.fits(message, false) {
                return None;
            }
            if !responder.is_empty() && !responder_known {
                dialogue.reference.1.clone_from(responder);
            }
        }
        let dialogue = self.dialogues.get_mut(&key)?;
        dialogue.push(message, false);
        Some(DialogueRef { key })
    }

    /// This side's answer of `performative` to message `target` of `dialogue`: its id,
    /// target and references, recorded as sent. `None` when the dialogue is gone or may not
    /// be answered so.
    pub fn reply(
        &mut self,
        dialogue: &DialogueRef,
        target: i32,
        performative: Performative,
    ) -> Option<DefaultMessage> {
        let d = self.dialogues.get_mut(&dialogue.key)?;
        let reply = DefaultMessage {
            message_id: d.next_id(true),
            dialogue_reference: d.reference.clone(),
            target,
            performative,
        };
        if !d.fits(&reply, true) {
            return None;
        }
        d.push(&reply, true);
        Some(reply)
    }

    /// A new dialogue this side starts with `counterparty`, under starter reference `nonce`:
    /// its first message (id 1, target 0), recorded as sent. `None` when the reference is
    /// taken or the performative cannot open a dialogue.
    pub fn create(
        &mut self,
        counterparty: &str,
        nonce: &str,
        performative: Performative,
    ) -> Option<DefaultMessage> {
        let key = (nonce.to_string(), counterparty.to_string());
        if nonce.is_empty() || self.dialogues.contains_key(&key) {
            return None;
        }
        let first = DefaultMessage {
            message_id: 1,
            dialogue_reference: (nonce.to_string(), String::new()),
            target: 0,
            performative,
        };
        let mut dialogue = Dialogue {
            reference: (nonce.to_string(), String::new()),
            opponent: counterparty.to_string(),
            self_initiated: true,
            incoming: Vec::new(),
            outgoing: Vec::new(),
        };
        if !dialogue.fits(&first, true) {
            return None;
        }
        dialogue.push(&first, true);
        self.insert(key, dialogue);
        Some(first)
    }

    /// How many dialogues are kept.
    pub fn len(&self) -> usize {
        self.dialogues.len()
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.dialogues.is_empty()
    }

    fn insert(&mut self, key: (String, String), dialogue: Dialogue) {
        debug_assert_eq!(dialogue.opponent, key.1);
        while self.dialogues.len() >= MAX_DIALOGUES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.dialogues.remove(&oldest);
        }
        self.order.push_back(key.clone());
        self.dialogues.insert(key, dialogue);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(reference: (&str, &str), message_id: i32, target: i32) -> DefaultMessage {
        DefaultMessage {
            message_id,
            dialogue_reference: (reference.0.to_string(), reference.1.to_string()),
            target,
            performative: Performative::Bytes(b"x".to_vec()),
        }
    }

    #[test]
    fn a_responder_counts_down_and_the_starter_up() {
        let mut d = Dialogues::new();
        let at = d.update(&bytes(("s", ""), 1, 0), "agent", "r").unwrap();
        let echo = d.reply(&at, 1, Performative::Bytes(b"x".to_vec())).unwrap();
        assert_eq!((echo.message_id, echo.target), (-1, 1));
        assert_eq!(echo.dialogue_reference, ("s".into(), "r".into()));
        // The agent's second message, then this side's second answer.
        let at = d
            .update(&bytes(("s", "r"), 2, -1), "agent", "unused")
            .unwrap();
        let again = d.reply(&at, 2, Performative::Bytes(b"y".to_vec())).unwrap();
        assert_eq!((again.message_id, again.target), (-2, 2));
    }

    #[test]
    fn messages_of_no_dialogue_or_out_of_turn_belong_to_none() {
        let mut d = Dialogues::new();
        assert!(d.update(&bytes(("", ""), 1, 0), "a", "r").is_none());
        assert!(
            d.update(&bytes(("f", "e"), 2, -1), "a", "r").is_none(),
            "never started"
        );
        assert!(
            d.update(&bytes(("s", ""), 1, 3), "a", "r").is_none(),
            "a first with a target"
        );
        let at = d.update(&bytes(("s", ""), 1, 0), "a", "r").unwrap();
        assert!(
            d.update(&bytes(("s", ""), 1, 0), "a", "r2").is_none(),
            "started twice"
        );
        assert!(
            d.update(&bytes(("s", "r"), 3, -1), "a", "x").is_none(),
            "id skips"
        );
        assert!(
            d.update(&bytes(("s", "other"), 2, 1), "a", "x").is_none(),
            "wrong responder"
        );
        assert!(
            d.update(&bytes(("s", "r"), 2, -1), "b", "x").is_none(),
            "another opponent"
        );
        d.reply(&at, 1, Performative::End).unwrap();
        // Nothing answers an `end`.
        assert!(d.update(&bytes(("s", "r"), 2, -1), "a", "x").is_none());
        assert!(
            d.update(&bytes(("s", "r"), 2, 1), "a", "x").is_some(),
            "answers message 1"
        );
    }

    #[test]
    fn a_dialogue_this_side_starts_is_completed_by_the_first_answer() {
        let mut d = Dialogues::new();
        let first = d
            .create("agent", "n", Performative::Bytes(b"hi".to_vec()))
            .unwrap();
        assert_eq!((first.message_id, first.target), (1, 0));
        assert!(d.create("agent", "n", Performative::End).is_none());
        let at = d
            .update(&bytes(("n", "theirs"), -1, 1), "agent", "unused")
            .unwrap();
        let next = d
            .reply(&at, -1, Performative::Bytes(b"more".to_vec()))
            .unwrap();
        assert_eq!((next.message_id, next.target), (2, -1));
        assert_eq!(next.dialogue_reference, ("n".into(), "theirs".into()));
    }

    #[test]
    fn the_oldest_dialogues_are_dropped_past_the_bound() {
        let mut d = Dialogues::new();
        for n in 0..MAX_DIALOGUES + 3 {
            d.update(&bytes((&n.to_string(), ""), 1, 0), "a", "r")
                .unwrap();
        }
        assert_eq!(d.len(), MAX_DIALOGUES);
        assert!(d.update(&bytes(("0", "r"), 2, -1), "a", "x").is_none());
    }
}
