//! What an agent's own log says about its compactions and its provider calls.
//!
//! Claude Code and Codex compact their context themselves and keep the whole
//! story in the log: the conversation before, a marker of the compaction (a
//! Claude Code `compact_boundary` with the `isCompactSummary` message after
//! it, a Codex `compacted` line), and the conversation after. [`History`]
//! says which of it a reader makes into messages; a [`RecordedCompaction`] is
//! one of the agent's compactions, kept apart from the conversation, so it
//! can be measured like one of ours.
//!
//! A provider call is one response as the log records its usage (Claude Code:
//! one `message.id`; Codex: one response, closed by its `token_count`). A
//! response may be written as several assistant messages, and some assistant
//! messages are no response at all (Claude Code's `<synthetic>` ones):
//! [`CallMark`] on each assistant message says which, so every command counts
//! the same calls.

use super::Message;

/// Which part of an agent log a reader makes into messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum History {
    /// The conversation as it happened: every main-chain message before and
    /// after each compaction the agent made, in order. The agent's own
    /// summaries are not conversation: each compaction is a
    /// [`RecordedCompaction`], its marker lines pass through in place.
    #[default]
    Full,
    /// The context a resumed agent sees: what comes after the last
    /// compaction (its summary, and Codex's replacement history, as
    /// messages); everything before it passes through unread.
    Live,
}

super::names::named!(History { Full => "full", Live => "live" });

/// One compaction the agent made, as its log records it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordedCompaction {
    /// Messages of the session before it: under [`History::Full`] the
    /// conversation it replaced is `messages[..at]`. `None` under
    /// [`History::Live`]: it happened before the first message read.
    pub at: Option<usize>,
    /// When the log says it happened.
    pub timestamp: Option<String>,
    /// `auto` or `manual`, where the log says (Claude Code does, Codex not).
    pub trigger: Option<String>,
    /// The request size the agent measured before compacting: Claude Code's
    /// `compactMetadata.preTokens`, else the last call's recorded usage.
    pub pre_tokens: Option<u64>,
    /// The agent's summary.
    pub summary: RecordedSummary,
    /// What the agent's context held after it besides the summary: Codex's
    /// replacement history (its user and developer messages), a Claude Code
    /// preserved segment. Read only under [`History::Full`].
    pub kept: Vec<Message>,
}

/// The agent's summary of a compaction, as far as the log shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RecordedSummary {
    /// Its text.
    Text(String),
    /// Only an encrypted copy (Codex's remote compaction: an empty `message`
    /// and an encrypted `compaction` item): what it kept cannot be read.
    Encrypted,
    /// The log holds none.
    #[default]
    Absent,
}

impl RecordedSummary {
    /// Its text, when the log holds it readable.
    pub fn text(&self) -> Option<&str> {
        match self {
            RecordedSummary::Text(t) => Some(t),
            RecordedSummary::Encrypted | RecordedSummary::Absent => None,
        }
    }
}

/// How an assistant message relates to the provider's calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallMark {
    /// It opens a call of its own: the request was the history before it.
    /// Every assistant message of a dialect that records no calls is one.
    #[default]
    Opens,
    /// It is more of the response the assistant message before it opened
    /// (Codex writes a reply's text and its calls as separate items).
    Continues,
    /// The client wrote it; no provider was called (Claude Code's
    /// `<synthetic>` messages: "No response requested.", API errors).
    NoCall,
}

impl Message {
    /// Returns true if and only if this message opens a provider call: an
    /// assistant message that is neither more of the previous response nor
    /// written by the client.
    pub fn opens_call(&self) -> bool {
        self.role == super::Role::Assistant && self.meta.call == CallMark::Opens
    }
}
