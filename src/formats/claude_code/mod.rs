//! Claude Code session logs (`~/.claude/projects/*/<session>.jsonl`): one JSON event
//! per line, one session per file.
//!
//! ## What becomes a message
//! Only the main chain (`isSidechain` not `true`) is conversation. Read
//! [`History::Full`] (the default), all of it is: each `compact_boundary` and the
//! `isCompactSummary` user event after it become a [`RecordedCompaction`] (position,
//! `compactMetadata.trigger` / `preTokens`, the summary text, the
//! `preservedSegment` messages as `kept`), not messages; so are the messages a
//! compaction kept and wrote after its boundary (ours, [`Adapter::lineage`]:
//! the chat events after the boundary up to its `preservedSegment.tailUuid`
//! when that segment comes after it, else those before its summary), which
//! pass through in place. Read [`History::Live`],
//! only the chain after the last boundary is (what the agent sends next):
//! - a `user` event with string content, or with blocks that are not `tool_result`,
//!   is one [`Role::User`] message (`isMeta` caveats and command output included:
//!   the core recognises those as synthetic);
//! - each `tool_result` block of a `user` event is one [`Role::Tool`] message
//!   (`tool_call_id` = `tool_use_id`); a mixed event gives the tool messages first,
//!   then one user message with its other blocks;
//! - consecutive `assistant` events that share one `message.id` (Claude Code writes
//!   one event per streamed block: thinking, text, each tool_use) are ONE assistant
//!   message: `thinking` / `redacted_thinking` blocks become [`Part::Reasoning`],
//!   text and other blocks parts, `tool_use` blocks [`ToolCall`]s
//!   (`arguments` = `input` as JSON text). Tool-result events and passthrough
//!   records may sit between the parts; they stay where they were.
//!
//! A subagent's own log (`<session>/subagents/agent-<id>.jsonl`: no main-chain
//! chat event, every chat event a sidechain event of one `agentId`) is read
//! the same way with its sidechain as its chain; its session id is
//! `agent-<agentId>` ([`SUBAGENT_ID_PREFIX`]) and [`Session::parent`] names
//! the session whose `sessionId` its events carry.
//!
//! Everything else passes through in place, in the `attached` list of the next
//! message (or [`Session::trailing`]): `file-history-snapshot`, `queue-operation`,
//! `attachment`, `summary`, `permission-mode`, `last-prompt`, `system` events,
//! sidechain events, unknown types, and (read live) every event before the last
//! `compact_boundary`, history the agent already compacted away. Each boundary is
//! recorded in [`Session::recorded_compactions`] either way. Tool schemas and the
//! system prompt are not in the log: `tools` is `None`, no system message is made.
//!
//! ## Field map (message <- event)
//! - `extra`: the event's top-level keys in order (`parentUuid`, `uuid`,
//!   `timestamp`, `cwd`, `gitBranch`, `toolUseResult`, ...), with `message` holding
//!   the event's `message` object minus `content` (`model`, `id`, `usage`, ...).
//!   Converted to another dialect, these stay fields of their own.
//! - [`EVENTS_KEY`] (`claudeCodeEvents`, assistant messages built from several
//!   events, or whose blocks are not "parts, then tool uses"): one entry per source
//!   event in file order, `{"blocks": [kinds], "resultsBefore", "recordsBefore",
//!   "event": {envelope}}` (the first entry's envelope is the message's own `extra`).
//!   A block kind is the part's `type`, or `tool_use:<id>` for a call; a `type`
//!   that starts with `tool_use:` or `=` is written after a `=`.
//! - [`BLOCK_KEY`] (`claudeCodeBlock`, tool messages): the `tool_result` block minus
//!   its `content` (`type`, `tool_use_id`, `is_error`, unknown keys).
//! - [`NEW_EVENT_KEY`] (`claudeCodeNewEvent`, `true`): the first message of an event
//!   that follows tool messages of an event with the same `uuid` (only a corrupt log
//!   repeats a uuid). Without it, encoding writes such messages into that event, as
//!   it writes back the tool messages and the user message of one mixed event.
//! - `meta.timestamp` = the (first) event's `timestamp`; `meta.usage` = the (last)
//!   event's `message.usage` (`input_tokens`, `cache_read_input_tokens`,
//!   `cache_creation_input_tokens`, `output_tokens`).
//!
//! ## Encoding
//! A message is written back from its `extra`: an unchanged message gives the
//! same events (same uuids, same order, interleaved results and records where
//! they were). A changed one keeps its envelopes; its parts are re-assigned to its
//! events by kind (a longest-common-subsequence match, so stripped thinking or a
//! prepended summary land sensibly) and events left empty are not written. A new
//! message (empty `extra`, e.g. the summary) gets a uuid derived from
//! [`UUID_NAMESPACE`], its parent and its text (no clock, no randomness),
//! `sessionId` / `cwd` / `version` / `gitBranch` / `userType` / `entrypoint` and the
//! `timestamp` of the previous written message event (else the first one).
//! When the session was compacted (a `compaction` object is given or a message
//! is new), every main-chain event whose `parentUuid` is
//! not an earlier written event is re-linked to the previous written message event
//! (or `compact_boundary`, which restarts the chain), so the chain Claude Code walks
//! on resume is continuous. Otherwise only parents this encoder itself left out are
//! re-linked, so decode + encode gives the file back record for record, the
//! source's own gaps included. The `compaction` object itself is never written
//! (SPEC 6: report only for file dialects). A compacted session written back
//! as Claude Code is not re-encoded whole: the pipeline writes the input's
//! lines and appends [`Adapter::lineage`]'s events (`lineage.rs`: a
//! `compact_boundary` and the compacted context after it, as Claude Code
//! records its own compactions).
//!
//! ## Where the format is ambiguous
//! - A user event mixing `tool_result` and other blocks is read as "results first";
//!   another interleaving is written back results first (values kept, order not).
//! - A changed tool result keeps its `toolUseResult` (the UI's copy of the full
//!   output): it is never sent to the model, and dropping it would lose data.
//! - `compactMetadata.preservedMessages` (newer partial compaction) is not read:
//!   everything before the last boundary is treated as compacted away.
//!
//! ## Key order
//! Kept, except where `content` is re-inserted: after `role` in `message`
//! (before `context_management` when present) and after `type` in a
//! `tool_result` block (after a `tool_use_id` that directly follows `type` when the
//! content is a block list): the orders Claude Code itself writes.
//! Values are always equal.
//!
//! [`Role::User`]: crate::model::Role::User
//! [`Role::Tool`]: crate::model::Role::Tool
//! [`ToolCall`]: crate::model::ToolCall
//!
//! [`History::Full`]: crate::model::History::Full
//! [`History::Live`]: crate::model::History::Live
//! [`RecordedCompaction`]: crate::model::RecordedCompaction
//! [`Session::recorded_compactions`]: crate::model::Session::recorded_compactions
//! [`Session::parent`]: crate::model::Session::parent

mod align;
mod decode;
mod encode;
mod lineage;
#[cfg(test)]
mod tests;

use super::{Adapter, DecodeError, Record, Unit};
use crate::model::{
    Continuation, History, Message, Part, RecordedCompaction, RecordedSummary, Session,
};
use serde_json::{Map, Value};

pub use decode::decode_events;
pub use encode::encode_events;

/// The claude-code dialect.
pub struct ClaudeCode;

/// Message `extra` key holding the per-event layout of an assistant message.
pub const EVENTS_KEY: &str = "claudeCodeEvents";
/// Message `extra` key holding a tool message's `tool_result` block (minus content).
pub const BLOCK_KEY: &str = "claudeCodeBlock";
/// Message `extra` key marking the first message of an event whose `uuid` repeats
/// the previous event's (see the module docs).
pub const NEW_EVENT_KEY: &str = "claudeCodeNewEvent";
/// Hashed with a new message's parent uuid, role and text to derive its uuid.
pub const UUID_NAMESPACE: &str = "compactor/claude-code/uuid/v1";
/// A subagent's session id is its `agentId` after this (its file's stem,
/// `agent-<agentId>`).
pub const SUBAGENT_ID_PREFIX: &str = "agent-";
/// A block kind naming a tool call in [`EVENTS_KEY`]: `tool_use:<id>`.
const CALL_KIND: &str = "tool_use:";
/// Before a part's kind in [`EVENTS_KEY`] that starts with [`CALL_KIND`] or
/// with this (never a kind Claude Code writes).
const PART_ESCAPE: &str = "=";

/// Record types of Claude Code that are never chat (detection).
const PASSTHROUGH_TYPES: &[&str] = &[
    "file-history-snapshot",
    "queue-operation",
    "summary",
    "permission-mode",
    "last-prompt",
    "custom-title",
    "agent-name",
    "progress",
];
/// Event types that carry the chain fields (`uuid`, `sessionId`, ...).
const EVENT_TYPES: &[&str] = &["user", "assistant", "system", "attachment"];
/// Per-session envelope fields a new event copies from its neighbour.
const COPIED_FIELDS: &[&str] =
    &["userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch"];
/// Above this many cells, part alignment falls back to a greedy in-order match.
const MAX_ALIGN_CELLS: usize = 1 << 20;

impl Adapter for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn unit(&self) -> Unit {
        Unit::File
    }

    fn detect(&self, first: &[Value]) -> bool {
        let fits = first.iter().filter(|r| looks_like_event(r)).count();
        fits * 2 > first.len()
    }

    fn decode(&self, records: Vec<Record>, history: History) -> Result<Session, DecodeError> {
        decode_events(records, history)
    }

    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Vec<Value> {
        encode_events(session, compaction.is_some())
    }

    fn lineage(&self, original: &Session, c: &Continuation<'_>) -> Option<Vec<Value>> {
        Some(lineage::lineage_events(original, c))
    }
}

/// Returns true if and only if `v` looks like one line of a Claude Code log.
fn looks_like_event(v: &Value) -> bool {
    let Some(map) = v.as_object() else { return false };
    // OpenAI / Anthropic sessions and Codex rollout lines.
    if map.contains_key("messages") || map.contains_key("payload") {
        return false;
    }
    let Some(ty) = map.get("type").and_then(Value::as_str) else { return false };
    if PASSTHROUGH_TYPES.contains(&ty) {
        return true;
    }
    let chained = map.contains_key("uuid") || map.contains_key("sessionId");
    (EVENT_TYPES.contains(&ty) && chained)
        || (map.contains_key("uuid") && map.contains_key("parentUuid"))
}

fn is_sidechain(map: &Map<String, Value>) -> bool {
    map.get("isSidechain") == Some(&Value::Bool(true))
}

fn type_of(map: &Map<String, Value>) -> Option<&str> {
    map.get("type").and_then(Value::as_str)
}

/// Returns true if and only if `map` is a main-chain `compact_boundary` event.
fn is_boundary(map: &Map<String, Value>) -> bool {
    is_boundary_kind(map) && !is_sidechain(map)
}

/// Returns true if and only if `map` is a `compact_boundary` event, of any chain.
fn is_boundary_kind(map: &Map<String, Value>) -> bool {
    type_of(map) == Some("system")
        && map.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
}

/// The `agentId` of a subagent's own log (Claude Code 2.1+:
/// `<session>/subagents/agent-<id>.jsonl`): a log with no main-chain chat
/// event whose chat events are all sidechain events of one agent. Its
/// sidechain is its chain. `None` for any other log (older logs keep
/// sidechains inline, beside a main chain).
fn subagent_of<'a>(records: impl IntoIterator<Item = &'a Value>) -> Option<&'a str> {
    let chat =
        |v: &&Value| matches!(v.get("type").and_then(Value::as_str), Some("user" | "assistant"));
    let mut agent = None;
    for v in records.into_iter().filter(chat) {
        let map = v.as_object()?;
        if !is_sidechain(map) {
            return None;
        }
        let id = map.get("agentId").and_then(Value::as_str).filter(|s| !s.is_empty())?;
        match agent {
            Some(a) if a != id => return None,
            _ => agent = Some(id),
        }
    }
    agent
}

/// A boundary as a recorded compaction after `at` messages (its summary and
/// kept messages are read by the caller).
fn boundary_record(map: &Map<String, Value>, at: Option<usize>) -> RecordedCompaction {
    let meta = map.get("compactMetadata");
    RecordedCompaction {
        at,
        timestamp: map.get("timestamp").and_then(Value::as_str).map(str::to_string),
        pre_tokens: meta.and_then(|m| m.get("preTokens")).and_then(Value::as_u64),
        trigger: meta.and_then(|m| m.get("trigger")).and_then(Value::as_str).map(str::to_string),
        ..RecordedCompaction::default()
    }
}

/// One block of an assistant event, as the layout remembers it.
#[derive(Clone, Debug, PartialEq)]
enum Desc {
    /// A content part of this `type`.
    Part(String),
    /// A tool call with this id.
    Call(String),
}

impl Desc {
    /// A part's kind as is, a call as `tool_use:<id>`; a kind that would read
    /// as a call, or as such an escape, gets [`PART_ESCAPE`] before it (a
    /// corrupt log's block `type` can be any text: fuzz finding
    /// `claude_code_repeated_assistant_event`).
    fn to_value(&self) -> Value {
        match self {
            Desc::Part(kind) if kind.starts_with(CALL_KIND) || kind.starts_with(PART_ESCAPE) => {
                Value::String(format!("{PART_ESCAPE}{kind}"))
            }
            Desc::Part(kind) => Value::String(kind.clone()),
            Desc::Call(id) => Value::String(format!("{CALL_KIND}{id}")),
        }
    }

    fn from_value(v: &Value) -> Option<Desc> {
        let s = v.as_str()?;
        if let Some(kind) = s.strip_prefix(PART_ESCAPE) {
            return Some(Desc::Part(kind.to_string()));
        }
        Some(match s.strip_prefix(CALL_KIND) {
            Some(id) => Desc::Call(id.to_string()),
            None => Desc::Part(s.to_string()),
        })
    }
}

/// The `type` of a part (or of a raw block), `""` when it has none.
fn part_kind(p: &Part) -> &str {
    match p {
        Part::Text(raw) | Part::Reasoning(raw) | Part::Image { raw, .. } => {
            raw.get("type").and_then(Value::as_str).unwrap_or("")
        }
        Part::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
    }
}

fn uuid_of(m: &Message) -> Option<&str> {
    m.extra.get("uuid").and_then(Value::as_str)
}

/// Returns true if and only if the message was read from an event (it has an envelope).
fn has_envelope(m: &Message) -> bool {
    uuid_of(m).is_some() || m.extra.get("message").is_some_and(Value::is_object)
}

/// Returns true if and only if two messages were read from the same event: the
/// same `uuid`, or (for an event without one) the same envelope.
fn same_event(a: &Message, b: &Message) -> bool {
    match (uuid_of(a), uuid_of(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => {
            let own = |k: &String| !matches!(k.as_str(), BLOCK_KEY | NEW_EVENT_KEY);
            let a_env = a.extra.iter().filter(|(k, _)| own(k));
            let b_env = b.extra.iter().filter(|(k, _)| own(k));
            has_envelope(a) && a_env.eq(b_env)
        }
        _ => false,
    }
}
