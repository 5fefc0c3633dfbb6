//! The canonical, dialect-free transcript that every stage works on.
//!
//! A [`Session`] is what one archived agent run becomes after a format adapter
//! has read it: an ordered list of [`Message`]s plus the tool schemas and every
//! top-level field the adapter did not understand. The shape follows the OpenAI
//! chat convention (tool calls live on assistant messages, each tool result is
//! its own `tool` message), because that is the shape the reference compressor
//! reasons about and every other dialect maps onto it without loss.
//!
//! Passthrough is structural, not best-effort: parts keep their JSON object
//! (`raw`) and read their typed fields through accessors, messages and sessions
//! keep an `extra` map of unknown keys, so `--mode none` writes back the same
//! JSON values it read.
//!
//! Contact points: `formats/*` build and encode these types; `policy/*` rewrite
//! them; `tokens` measures them.

pub(crate) mod key;
pub mod lineage;
pub(crate) mod names;
pub mod part;
pub mod reads;
pub mod recorded;

pub use lineage::{Continuation, Parent, Trigger, continuation_id};
pub use part::{ArgsForm, Content, ContentForm, ImageInfo, Part, ToolCall};
pub use reads::{MessageKey, RecordType, SessionKey};
pub use recorded::{CallMark, History, RecordedCompaction, RecordedSummary};

use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// Where a session came from, so that any elided content can be found again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The input path as given (or `-` for standard input).
    pub path: String,
    /// 1-based line for line-oriented inputs.
    pub line: Option<u64>,
    /// 0-based element index for a `.json` file holding an array of sessions,
    /// or for a line holding one.
    pub index: Option<u64>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.index) {
            (Some(line), Some(index)) => write!(f, "{}:{line}[{index}]", self.path),
            (Some(line), None) => write!(f, "{}:{line}", self.path),
            (None, Some(index)) => write!(f, "{}[{index}]", self.path),
            (None, None) => f.write_str(&self.path),
        }
    }
}

/// What the session record's messages came in, so it can be written back the
/// same way (not the output file's layout, `io::output::Layout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Envelope {
    /// `{"messages": [...], ...}`.
    #[default]
    Object,
    /// A bare JSON array of messages. It has nowhere to carry a `compaction`
    /// object, so that goes to the report only.
    BareArray,
}

/// One agent session (transcript).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    /// A stable identifier: the record's own id field when it has one, else its source.
    pub id: String,
    pub source: Source,
    pub layout: Envelope,
    pub messages: Vec<Message>,
    /// Tool schemas as sent to the model, untouched. They count toward the request size.
    pub tools: Option<Value>,
    /// Every other top-level field, written back unchanged. Shared, not copied,
    /// by the sessions a compaction or a replay derives from this one: archives
    /// keep megabytes of metadata here (trajectories, trees, run configs).
    pub extra: Arc<Map<String, Value>>,
    /// Records after the last message that are not chat (file dialects).
    pub trailing: Vec<Value>,
    /// Compactions the agent made before we saw the log (Claude Code
    /// `compact_boundary`, Codex `compacted`), oldest first. Their positions
    /// index `messages` ([`RecordedCompaction::at`]): a copy of the session
    /// holding other messages ([`Session::with_messages`]) has none.
    pub recorded_compactions: Vec<RecordedCompaction>,
    /// For a subagent's own log (Claude Code `subagents/agent-*.jsonl`): the
    /// session and call that started it. It is a session of its own.
    pub parent: Option<Parent>,
    /// Provider calls the log records outside the conversation, one usage
    /// per response: Claude Code's inline sidechain (subagent) events. They
    /// are billed to the session (ccusage counts them in its row) but were
    /// never in the agent's context, so only bills read them.
    pub side_calls: Vec<Usage>,
}

impl Session {
    /// A copy of this session holding `messages` instead of its own (which are
    /// not cloned: a compaction builds new messages and keeps everything else).
    pub fn with_messages(&self, messages: Vec<Message>) -> Session {
        Session {
            id: self.id.clone(),
            source: self.source.clone(),
            layout: self.layout,
            messages,
            tools: self.tools.clone(),
            extra: self.extra.clone(),
            trailing: self.trailing.clone(),
            recorded_compactions: Vec::new(),
            parent: self.parent.clone(),
            side_calls: self.side_calls.clone(),
        }
    }
}

/// The author of a message. Unknown roles are kept verbatim and treated as chat text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
    Other(String),
}

impl Role {
    pub fn parse(s: &str) -> Role {
        match s {
            "system" => Role::System,
            "developer" => Role::Developer,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => Role::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other(s) => s,
        }
    }

    /// Returns true if and only if the role carries instructions (system or developer).
    pub fn is_system(&self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

/// Provider-recorded usage for the API call that produced a message, in
/// Anthropic's terms: `input_tokens` excludes the tokens read from or written
/// to the cache. Adapters of providers that count cached tokens inside the
/// input (OpenAI `prompt_tokens`, Codex `input_tokens`) subtract them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    /// The part of `cache_write_tokens` written with a 1-hour lifetime
    /// (Claude Code's `cache_creation.ephemeral_1h_input_tokens`), priced
    /// higher than a 5-minute write.
    pub cache_write_1h_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// The size of the request as the provider measured it: uncached input,
    /// cache reads and cache writes; `None` when the input was not recorded.
    pub fn prompt_tokens(&self) -> Option<u64> {
        self.input_tokens
            .map(|i| i + self.cache_read_tokens.unwrap_or(0) + self.cache_write_tokens.unwrap_or(0))
    }
}

/// Facts about a message that are not its fields: what an adapter derived from
/// them, and whether we made it. They are never written as such: the original
/// fields stay in `extra` and are what gets written back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageMeta {
    /// ISO-8601 timestamp as recorded, when the transcript has one.
    pub timestamp: Option<String>,
    /// The provider's usage of the call this message opens ([`CallMark::Opens`]).
    pub usage: Option<Usage>,
    /// How an assistant message relates to the provider's calls.
    pub call: CallMark,
    /// True if and only if this message is not the input's as read: we made
    /// it (a summary, a `(tool call removed)` or `(empty)` stub) or changed
    /// it (any pruning stage's rewrite, which goes through
    /// `policy::Slot::write`, a merged summary, calls dropped by stage 8).
    /// Training outputs turn it into each assistant message's loss flag
    /// (`train: false`; `crate::training`).
    pub made: bool,
}

/// Reasoning text kept beside a message (`reasoning_content`, `reasoning`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reasoning {
    /// The field it was read from, so it is written back under the same name.
    pub field: String,
    pub text: String,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Content,
    /// Tool calls of an assistant message, in order. Shared like `extra`
    /// ([`Message::tool_calls_mut`]): arguments can be whole files.
    pub tool_calls: Arc<Vec<ToolCall>>,
    /// For a tool result: the id of the call it answers.
    pub tool_call_id: Option<String>,
    pub reasoning: Option<Reasoning>,
    pub meta: MessageMeta,
    /// Every other key of the message object, written back unchanged. Shared
    /// (copy on write), because compaction and replay copy messages they keep
    /// and these maps can outweigh the chat itself (Claude Code tool results,
    /// event envelopes: a large share of a Claude Code log's bytes).
    pub extra: Arc<Map<String, Value>>,
    /// Records of the source that sit just before this message and carry no
    /// chat content (Claude Code snapshots, Codex turn contexts, sidechains...).
    /// They are written back in place; when the message is folded into a
    /// summary, they move with the summary. Shared like `extra`.
    pub attached: Arc<Vec<Value>>,
}

impl Message {
    /// Builds a plain-text message (content as a JSON string).
    pub fn text(role: Role, text: impl Into<String>) -> Message {
        Message {
            role,
            content: Content::from_text(text),
            tool_calls: Arc::default(),
            tool_call_id: None,
            reasoning: None,
            meta: MessageMeta::default(),
            extra: Arc::default(),
            attached: Arc::default(),
        }
    }

    /// A plain-text message that we wrote (a summary, a stub): [`Message::text`]
    /// marked [`MessageMeta::made`].
    pub fn made(role: Role, text: impl Into<String>) -> Message {
        let mut m = Message::text(role, text);
        m.meta.made = true;
        m
    }

    /// Returns true if and only if this is an assistant message that calls tools.
    pub fn has_tool_calls(&self) -> bool {
        self.role == Role::Assistant && !self.tool_calls.is_empty()
    }

    /// Returns true if and only if this is a tool result.
    pub fn is_tool_result(&self) -> bool {
        self.role == Role::Tool
    }

    /// All text of the content joined by newlines (images and unknown parts
    /// skipped); borrowed when there is one text part.
    pub fn text_content(&self) -> std::borrow::Cow<'_, str> {
        self.content.joined_text()
    }

    /// Returns true if and only if the message shows the reader some non-blank text.
    pub fn has_visible_text(&self) -> bool {
        self.content.parts.iter().any(|p| p.text_str().is_some_and(|t| !t.trim().is_empty()))
    }

    /// The message's unknown keys, to change: copied first if another message
    /// still shares them.
    pub fn extra_mut(&mut self) -> &mut Map<String, Value> {
        Arc::make_mut(&mut self.extra)
    }

    /// The tool calls, to change: copied first if another message still shares them.
    pub fn tool_calls_mut(&mut self) -> &mut Vec<ToolCall> {
        Arc::make_mut(&mut self.tool_calls)
    }

    /// Replaces the unknown key `from` by `to`, holding `value`, at the same
    /// position (keys are written back in the order they were read).
    pub fn replace_key(&mut self, from: &str, to: &str, value: Value) {
        let mut value = Some(value);
        let old = Arc::unwrap_or_clone(std::mem::take(&mut self.extra));
        self.extra = Arc::new(
            old.into_iter()
                .map(|(k, v)| match value.take_if(|_| k == from) {
                    Some(new) => (to.to_string(), new),
                    None => (k, v),
                })
                .collect(),
        );
    }

    /// The attached records, to change: copied first if another message still shares them.
    pub fn attached_mut(&mut self) -> &mut Vec<Value> {
        Arc::make_mut(&mut self.attached)
    }

    /// Moves the attached records out (copied only if another message shares them).
    pub fn take_attached(&mut self) -> Vec<Value> {
        Arc::unwrap_or_clone(std::mem::take(&mut self.attached))
    }

    /// The tool name recorded on a tool result itself (`name`), if any.
    pub fn result_name(&self) -> Option<&str> {
        self.read(MessageKey::Name).and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_key_keeps_the_position_and_leaves_a_sharing_copy_alone() {
        let mut m = Message::text(Role::Tool, "x");
        for (k, v) in [("a", 1), ("old", 2), ("z", 3)] {
            m.extra_mut().insert(k.into(), v.into());
        }
        let shared = m.clone();
        m.replace_key("old", "new", Value::from("v"));
        let keys: Vec<&str> = m.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, ["a", "new", "z"]);
        assert_eq!(m.extra["new"], "v");
        assert_eq!(shared.extra["old"], 2, "the copy still has the old key");
        m.replace_key("absent", "other", Value::Null);
        assert_eq!(m.extra.len(), 3);
        assert!(!m.extra.contains_key("other"));
    }
}
