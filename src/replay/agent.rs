//! The requests the agent itself sent, as our meter counts them.
//!
//! Read under `--history full`, a log that holds the agent's own compactions
//! is the conversation as it happened; the provider, though, measured the
//! agent's context: after each compaction that context restarts from what
//! the agent kept (its summary, the messages it kept, the system prompt it
//! sends with every request) and grows again with the messages that follow.
//! Comparing the provider's figures with ours, or correcting the trigger by
//! what our compaction removed, needs our count of that same context.
//!
//! ## Invariants
//! - Without a recorded compaction placed in the messages (any log read
//!   `--history live`, every other dialect) the agent's context is the whole
//!   prefix: [`AgentContext::restart_at`] gives nothing.
//! - Restarts are in message order, one per placed compaction.

use crate::model::{Message, Role, Session};
use crate::tokens::Meter;

/// Where the agent's context restarted, and how big it restarted.
#[derive(Clone, Debug, Default)]
pub struct AgentContext {
    /// `(message index, tokens of the messages it restarted with)`, in order.
    restarts: Vec<(usize, u64)>,
}

impl AgentContext {
    /// The restarts of `session`'s recorded compactions, counted by `meter`.
    pub fn new(session: &Session, meter: &Meter) -> AgentContext {
        let system: u64 = session
            .messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .map(|m| meter.message(m))
            .sum();
        let mut restarts: Vec<(usize, u64)> = session
            .recorded_compactions
            .iter()
            .filter_map(|c| {
                let at = c.at?;
                let summary =
                    c.summary.text().map_or(0, |t| meter.message(&Message::text(Role::User, t)));
                let kept: u64 = c.kept.iter().map(|m| meter.message(m)).sum();
                Some((at, system + summary + kept))
            })
            .collect();
        restarts.sort_by_key(|r| r.0);
        AgentContext { restarts }
    }

    /// The tokens of messages the agent's context restarted with just
    /// before message `i`, when one of its compactions sits there (the
    /// last, if several do).
    pub fn restart_at(&self, i: usize) -> Option<u64> {
        let from = self.restarts.partition_point(|r| r.0 < i);
        self.restarts[from..].iter().take_while(|r| r.0 == i).last().map(|r| r.1)
    }

    /// Returns true if and only if the agent never compacted inside these messages.
    pub fn is_whole_history(&self) -> bool {
        self.restarts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RecordedCompaction, RecordedSummary};
    use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};

    #[test]
    fn the_context_restarts_from_the_system_prompt_summary_and_kept_messages() {
        let meter = Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS);
        let system = Message::text(Role::System, "s".repeat(40));
        let kept = Message::text(Role::User, "k".repeat(80));
        let summary = "y".repeat(400);
        let mut s = Session {
            messages: vec![
                system.clone(),
                Message::text(Role::User, "u"),
                Message::text(Role::Assistant, "a"),
            ],
            ..Session::default()
        };
        s.recorded_compactions = vec![
            RecordedCompaction {
                at: Some(2),
                summary: RecordedSummary::Text(summary.clone()),
                kept: vec![kept.clone()],
                ..RecordedCompaction::default()
            },
            // Read `--history live`: placed nowhere, no restart.
            RecordedCompaction::default(),
        ];
        let ctx = AgentContext::new(&s, &meter);
        let expected = meter.message(&system)
            + meter.message(&Message::text(Role::User, summary))
            + meter.message(&kept);
        assert_eq!(ctx.restart_at(2), Some(expected));
        assert_eq!(ctx.restart_at(1), None);
        assert!(!ctx.is_whole_history());
        s.recorded_compactions.remove(0);
        assert!(AgentContext::new(&s, &meter).is_whole_history());
    }
}
