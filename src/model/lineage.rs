//! Where a session stands among other sessions: the parent a subagent's log
//! was started from, and the continuation our compaction of a session is.
//!
//! What: [`Parent`] links a Claude Code subagent's own log
//! (`<project>/<session>/subagents/agent-<id>.jsonl`) to the session that
//! started it and, where the parent's log says, to the `Agent`/`Task` call
//! that did. [`Continuation`] is our compaction as an agent records its own:
//! the compacted context and where its summary sits, which the Claude Code
//! and Codex writers append to the log they read ([`crate::formats::Adapter::lineage`]),
//! and the id a converted output carries ([`continuation_id`]).
//!
//! Why: an agent that compacts its context goes on from the compaction in
//! the same log (Claude Code's `compact_boundary`, Codex's `compacted`) or,
//! like Hermes, in a continuation that names its parent. Written the same
//! way, nothing of the input is lost, the agent resumes from our compaction,
//! and a later reader finds our compaction beside the agent's own.
//!
//! Invariants: a continuation id is a pure function of the source session's
//! id and the policy (no clock, no randomness): the same run gives the same
//! ids for any thread count.

use super::Session;

/// The session, and the call in it, that started a subagent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parent {
    /// The parent session's id (Claude Code: the `sessionId` a subagent's
    /// events carry, which is also its folder's name).
    pub session_id: String,
    /// The id of the parent's `Agent`/`Task` tool call that started it, when
    /// the parent's log says (its tool result's `toolUseResult.agentId`).
    pub call_id: Option<String>,
}

/// Why we compacted, in the words an agent's log uses (Claude Code's
/// `compactMetadata.trigger`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The request was at or over the trigger threshold.
    Auto,
    /// Asked for under the threshold (`--force`, `--target-tokens`), as a
    /// user's `/compact` is.
    Manual,
}

super::names::named!(Trigger { Auto => "auto", Manual => "manual" });

/// Our compaction of one session, as the writers that record it in the
/// agent's own form need it.
#[derive(Clone, Copy, Debug)]
pub struct Continuation<'a> {
    /// The compacted context: head, summary, kept tail.
    pub compacted: &'a Session,
    /// The index in `compacted.messages` of the message holding our summary
    /// (its own message, or the tail message it was merged into); `None`
    /// when no summary was written (a `tiered` pass that stopped at pruning).
    pub summary_at: Option<usize>,
    pub trigger: Trigger,
    /// The request's size before, by our count.
    pub pre_tokens: u64,
    /// The continuation's id ([`continuation_id`]).
    pub id: &'a str,
}

impl Continuation<'_> {
    /// The messages before the summary (all of them when there is none).
    pub fn head(&self) -> &[super::Message] {
        let end = self.summary_at.unwrap_or(self.compacted.messages.len());
        &self.compacted.messages[..end.min(self.compacted.messages.len())]
    }

    /// The message holding the summary, if any.
    pub fn summary(&self) -> Option<&super::Message> {
        self.compacted.messages.get(self.summary_at?)
    }

    /// The messages after the summary (none when there is no summary).
    pub fn tail(&self) -> &[super::Message] {
        match self.summary_at {
            Some(at) => self.compacted.messages.get(at + 1..).unwrap_or_default(),
            None => &[],
        }
    }
}

/// Hashed with the source id and the policy into a continuation id.
const CONTINUATION_NAMESPACE: &str = "compactor/continuation/v1";

/// The id of the continuation that compacting session `source_id` under
/// `policy` (a text naming everything that decides the compaction) gives:
/// `<source_id>~<16 hex digits>`, deterministic.
pub fn continuation_id(source_id: &str, policy: &str) -> String {
    let input = format!("{CONTINUATION_NAMESPACE}\n{source_id}\n{policy}");
    format!("{source_id}~{:016x}", crate::hash::of64(input.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_ids_depend_on_the_source_and_the_policy_only() {
        let a = continuation_id("s1", "lean/200000");
        assert_eq!(a, continuation_id("s1", "lean/200000"));
        assert!(a.starts_with("s1~") && a.len() == "s1~".len() + 16, "{a}");
        assert_ne!(a, continuation_id("s2", "lean/200000"));
        assert_ne!(a, continuation_id("s1", "tiered/200000"));
    }
}
