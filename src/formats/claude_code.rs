//! Claude Code session logs (`~/.claude/projects/*/<session>.jsonl`): one JSON event
//! per line, one session per file.
//!
//! ## What becomes a message
//! Only the main chain (`isSidechain` not `true`) after the last `compact_boundary`
//! is the live transcript:
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
//! Everything else passes through in place, in the `attached` list of the next
//! message (or [`Session::trailing`]): `file-history-snapshot`, `queue-operation`,
//! `attachment`, `summary`, `permission-mode`, `last-prompt`, `system` events,
//! sidechain events, unknown types, and every event before the last
//! `compact_boundary` (history the agent already compacted away: not live, not
//! counted). Each boundary is recorded in [`Session::earlier_compactions`]
//! (`compactMetadata.preTokens`, `compactMetadata.trigger`). Tool schemas and the
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
//!   A block kind is the part's `type`, or `tool_use:<id>` for a call.
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
//! (SPEC 6: report only for file dialects).
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

use super::openai::{decode_part, encode_content, encode_part};
use super::{Adapter, DecodeError, Record, Unit, kind_of};
use crate::model::{
    ArgsForm, Content, ContentForm, EarlierCompaction, Message, MessageMeta, Part, Role, Session,
    Source, ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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
/// A block kind naming a tool call in [`EVENTS_KEY`]: `tool_use:<id>`.
const CALL_KIND: &str = "tool_use:";

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

    fn decode(&self, records: Vec<Record>) -> Result<Session, DecodeError> {
        decode_events(records)
    }

    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Vec<Value> {
        encode_events(session, compaction.is_some())
    }
}

/// Returns true if and only if `v` looks like one line of a Claude Code log.
pub fn looks_like_event(v: &Value) -> bool {
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
    type_of(map) == Some("system")
        && map.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
        && !is_sidechain(map)
}

fn boundary_record(map: &Map<String, Value>) -> EarlierCompaction {
    let meta = map.get("compactMetadata");
    EarlierCompaction {
        pre_tokens: meta.and_then(|m| m.get("preTokens")).and_then(Value::as_u64),
        trigger: meta.and_then(|m| m.get("trigger")).and_then(Value::as_str).map(str::to_string),
    }
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// An event's `message.content`, taken out of it.
enum RawContent {
    Absent,
    Null,
    Text(String),
    Blocks(Vec<Value>),
}

/// A chat event: its envelope (with `message` minus `content`) and its content.
struct Event {
    envelope: Map<String, Value>,
    content: RawContent,
}

fn take_event(mut map: Map<String, Value>, source: &Source) -> Result<Event, DecodeError> {
    let mut message = match map.get_mut("message") {
        Some(Value::Object(m)) => std::mem::take(m),
        Some(other) => {
            return Err(DecodeError::at(
                source,
                format!("`message` is {}, expected an object", kind_of(other)),
            ));
        }
        None => return Err(DecodeError::at(source, "a user/assistant event without `message`")),
    };
    let content = match message.shift_remove("content") {
        None => RawContent::Absent,
        Some(Value::Null) => RawContent::Null,
        Some(Value::String(s)) => RawContent::Text(s),
        Some(Value::Array(blocks)) => RawContent::Blocks(blocks),
        Some(other) => {
            return Err(DecodeError::at(
                source,
                format!("`message.content` is {}, expected a string or an array", kind_of(&other)),
            ));
        }
    };
    map.insert("message".into(), Value::Object(message));
    Ok(Event { envelope: map, content })
}

fn content_of(raw: RawContent) -> Content {
    match raw {
        RawContent::Absent => Content { parts: Default::default(), form: ContentForm::Absent },
        RawContent::Null => Content { parts: Default::default(), form: ContentForm::Null },
        RawContent::Text(s) => Content::from_text(s),
        RawContent::Blocks(blocks) => Content {
            parts: Arc::new(blocks.into_iter().map(decode_part).collect()),
            form: ContentForm::Parts,
        },
    }
}

fn timestamp_of(envelope: &Map<String, Value>) -> Option<String> {
    envelope.get("timestamp").and_then(Value::as_str).map(str::to_string)
}

fn usage_of(envelope: &Map<String, Value>) -> Option<Usage> {
    let u = envelope.get("message")?.get("usage")?.as_object()?;
    let get = |k: &str| u.get(k).and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: get("input_tokens"),
        cache_read_tokens: get("cache_read_input_tokens"),
        cache_write_tokens: get("cache_creation_input_tokens"),
        output_tokens: get("output_tokens"),
    };
    (usage != Usage::default()).then_some(usage)
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
    fn to_value(&self) -> Value {
        match self {
            Desc::Part(kind) => Value::String(kind.clone()),
            Desc::Call(id) => Value::String(format!("{CALL_KIND}{id}")),
        }
    }

    fn from_value(v: &Value) -> Option<Desc> {
        let s = v.as_str()?;
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

/// Reads a `tool_use` block as a call, or `None` when it is not a well-formed one.
fn tool_call_of(block: &Value) -> Option<ToolCall> {
    let map = block.as_object()?;
    if map.get("type").and_then(Value::as_str) != Some("tool_use") {
        return None;
    }
    let id = map.get("id")?.as_str()?.to_string();
    let name = map.get("name")?.as_str()?.to_string();
    let input = map.get("input")?;
    let mut extra = Map::new();
    // OpenAI needs `type: function` on a call; the Claude Code block type is
    // always `tool_use` and is written back as such.
    extra.insert("type".into(), Value::String("function".into()));
    for (k, v) in map {
        if !matches!(k.as_str(), "type" | "id" | "name" | "input") {
            extra.insert(k.clone(), v.clone());
        }
    }
    Some(ToolCall {
        id,
        name,
        arguments: input.to_string(),
        // Written back as an `input` value whatever the form; `String` makes a
        // conversion to OpenAI carry the JSON text its API expects.
        args_form: ArgsForm::String,
        extra,
        function_extra: Map::new(),
    })
}

/// Splits assistant blocks into parts, calls and their layout descriptors.
fn split_blocks(blocks: Vec<Value>) -> (Vec<Part>, Vec<ToolCall>, Vec<Desc>) {
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut descs = Vec::new();
    for block in blocks {
        match tool_call_of(&block) {
            Some(call) => {
                descs.push(Desc::Call(call.id.clone()));
                calls.push(call);
            }
            None => {
                let part = decode_part(block);
                descs.push(Desc::Part(part_kind(&part).to_string()));
                parts.push(part);
            }
        }
    }
    (parts, calls, descs)
}

/// Returns true if and only if every part comes before every call (the order the
/// encoder writes when it has no layout).
fn default_order(descs: &[Desc]) -> bool {
    let first_call = descs.iter().position(|d| matches!(d, Desc::Call(_)));
    first_call.is_none_or(|i| descs[i..].iter().all(|d| matches!(d, Desc::Call(_))))
}

/// Splits a `tool_result` block into (tool_use_id, block minus content, content),
/// or gives the block back when it is not a well-formed one.
fn tool_result_of(block: Value) -> Result<(String, Map<String, Value>, Content), Value> {
    let Value::Object(mut map) = block else { return Err(block) };
    let id = match (map.get("type").and_then(Value::as_str), map.get("tool_use_id")) {
        (Some("tool_result"), Some(Value::String(id))) => id.clone(),
        _ => return Err(Value::Object(map)),
    };
    let content = match map.get("content") {
        None => RawContent::Absent,
        Some(Value::Null | Value::String(_) | Value::Array(_)) => {
            match map.shift_remove("content") {
                Some(Value::String(s)) => RawContent::Text(s),
                Some(Value::Array(a)) => RawContent::Blocks(a),
                _ => RawContent::Null,
            }
        }
        // A content we cannot model: the block stays a part of a user message.
        Some(_) => return Err(Value::Object(map)),
    };
    Ok((id, map, content_of(content)))
}

/// One event of an assistant message, as remembered for encoding.
struct EventLayout {
    blocks: Vec<Desc>,
    results_before: usize,
    records_before: usize,
    /// The event's envelope; `None` for the first (it is the message's `extra`).
    envelope: Option<Map<String, Value>>,
}

/// The assistant message still open for more streamed events of its `message.id`.
struct OpenTurn {
    index: usize,
    id: Option<String>,
    /// Tool-result events seen since its first event.
    results: usize,
    layout: Vec<EventLayout>,
}

#[derive(Default)]
struct Decoder {
    messages: Vec<Message>,
    pending: Vec<Value>,
    open: Option<OpenTurn>,
}

impl Decoder {
    /// Writes the layout of the open assistant message into its `extra` when it
    /// cannot be re-derived (several events, or calls before parts).
    fn close(&mut self) {
        let Some(open) = self.open.take() else { return };
        let needed =
            open.layout.len() > 1 || open.layout.first().is_some_and(|l| !default_order(&l.blocks));
        if !needed {
            return;
        }
        let entries: Vec<Value> = open
            .layout
            .into_iter()
            .enumerate()
            .map(|(k, l)| {
                let mut e = Map::new();
                e.insert(
                    "blocks".into(),
                    Value::Array(l.blocks.iter().map(Desc::to_value).collect()),
                );
                if k > 0 {
                    e.insert("resultsBefore".into(), Value::from(l.results_before));
                    e.insert("recordsBefore".into(), Value::from(l.records_before));
                    e.insert("event".into(), Value::Object(l.envelope.unwrap_or_default()));
                }
                Value::Object(e)
            })
            .collect();
        if let Some(m) = self.messages.get_mut(open.index) {
            m.extra_mut().insert(EVENTS_KEY.into(), Value::Array(entries));
        }
    }

    fn message(&mut self, role: Role, content: Content, extra: Map<String, Value>) -> Message {
        let meta = MessageMeta { timestamp: timestamp_of(&extra), usage: usage_of(&extra) };
        Message {
            role,
            content,
            tool_calls: Default::default(),
            tool_call_id: None,
            reasoning: None,
            meta,
            extra: extra.into(),
            attached: std::mem::take(&mut self.pending).into(),
        }
    }

    fn assistant(&mut self, ev: Event) {
        let Event { envelope, content } = ev;
        let RawContent::Blocks(blocks) = content else {
            self.close();
            let m = self.message(Role::Assistant, content_of(content), envelope);
            self.messages.push(m);
            return;
        };
        let id = envelope
            .get("message")
            .and_then(|m| m.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let (parts, calls, blocks) = split_blocks(blocks);
        // A later streamed block of the open message: only its own tool results
        // (and passthrough records) may have come in between.
        if let Some(open) = self.open.as_mut()
            && id.is_some()
            && open.id == id
            && self
                .messages
                .get(open.index + 1..)
                .is_some_and(|r| r.iter().all(Message::is_tool_result))
            // A repeated call id is a repeated event, not a later block: merged,
            // encoding could not tell which event each copy came from.
            && self.messages.get(open.index).is_some_and(|m| {
                calls.iter().all(|c| m.tool_calls.iter().all(|o| o.id != c.id))
            })
            && let Some(m) = self.messages.get_mut(open.index)
        {
            if !parts.is_empty() {
                m.content.form = ContentForm::Parts;
            }
            m.content.parts_mut().extend(parts);
            m.tool_calls_mut().extend(calls);
            if let Some(u) = usage_of(&envelope) {
                m.meta.usage = Some(u);
            }
            open.layout.push(EventLayout {
                blocks,
                results_before: open.results,
                records_before: self.pending.len(),
                envelope: Some(envelope),
            });
            m.attached_mut().append(&mut self.pending);
            return;
        }
        self.close();
        let mut m = self.message(
            Role::Assistant,
            Content { parts: parts.into(), form: ContentForm::Parts },
            envelope,
        );
        m.tool_calls = calls.into();
        if m.content.parts.is_empty() && !m.tool_calls.is_empty() {
            // Only calls: `content: null` in the OpenAI shape. Blocks are written
            // back as an array whenever a message has calls.
            m.content.form = ContentForm::Null;
        }
        let index = self.messages.len();
        self.messages.push(m);
        self.open = Some(OpenTurn {
            index,
            id,
            results: 0,
            layout: vec![EventLayout {
                blocks,
                results_before: 0,
                records_before: 0,
                envelope: None,
            }],
        });
    }

    /// Pushes the first message of an event, marked when it would pass for part
    /// of the event of the tool messages before it (same `uuid`: a repeated
    /// line; fuzz findings `claude_code_repeated_uuid_user_event` and
    /// `claude_code_repeated_result_event`).
    fn push_first(&mut self, mut m: Message) {
        if let Some(prev) = self.messages.last()
            && prev.role == Role::Tool
            && same_event(prev, &m)
        {
            m.extra_mut().insert(NEW_EVENT_KEY.into(), Value::Bool(true));
        }
        self.messages.push(m);
    }

    fn user(&mut self, ev: Event) {
        let Event { envelope, content } = ev;
        let RawContent::Blocks(blocks) = content else {
            self.close();
            let m = self.message(Role::User, content_of(content), envelope);
            self.push_first(m);
            return;
        };
        let mut results = Vec::new();
        let mut others = Vec::new();
        for block in blocks {
            match tool_result_of(block) {
                Ok(r) => results.push(r),
                Err(other) => others.push(other),
            }
        }
        if results.is_empty() {
            self.close();
            let m = self.message(Role::User, content_of(RawContent::Blocks(others)), envelope);
            self.push_first(m);
            return;
        }
        for (k, (id, block, content)) in results.into_iter().enumerate() {
            let mut extra = envelope.clone();
            extra.insert(BLOCK_KEY.into(), Value::Object(block));
            let mut m = self.message(Role::Tool, content, extra);
            m.tool_call_id = Some(id);
            if k == 0 {
                self.push_first(m);
            } else {
                self.messages.push(m);
            }
        }
        if others.is_empty() {
            if let Some(open) = self.open.as_mut() {
                open.results += 1;
            }
        } else {
            self.close();
            let m = self.message(Role::User, content_of(RawContent::Blocks(others)), envelope);
            self.messages.push(m);
        }
    }
}

/// Reads every record of one Claude Code log as a session.
pub fn decode_events(records: Vec<Record>) -> Result<Session, DecodeError> {
    let Some(first) = records.first() else {
        return Err(DecodeError::new("a Claude Code log without records"));
    };
    let source = Source { path: first.source.path.clone(), line: None, index: None };
    let live_from = records
        .iter()
        .rposition(|r| r.value.as_object().is_some_and(is_boundary))
        .map_or(0, |i| i + 1);
    let mut d = Decoder::default();
    let mut id = None;
    let mut earlier = Vec::new();
    for (i, Record { source: at, value }) in records.into_iter().enumerate() {
        let map = match value {
            Value::Object(map) => map,
            other => {
                return Err(DecodeError::at(
                    &at,
                    format!("expected a JSON object (an event), found {}", kind_of(&other)),
                ));
            }
        };
        for key in [EVENTS_KEY, BLOCK_KEY, NEW_EVENT_KEY] {
            if map.contains_key(key) {
                return Err(DecodeError::at(&at, format!("`{key}` is reserved for compactor")));
            }
        }
        if id.is_none() {
            id = map
                .get("sessionId")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string);
        }
        if is_boundary(&map) {
            earlier.push(boundary_record(&map));
        }
        let chat = i >= live_from && !is_sidechain(&map);
        match type_of(&map) {
            Some("assistant") if chat => d.assistant(take_event(map, &at)?),
            Some("user") if chat => d.user(take_event(map, &at)?),
            _ => d.pending.push(Value::Object(map)),
        }
    }
    d.close();
    Ok(Session {
        id: id.unwrap_or_else(|| source.to_string()),
        source,
        messages: d.messages,
        trailing: d.pending,
        earlier_compactions: earlier,
        ..Session::default()
    })
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

fn uuid_of(m: &Message) -> Option<&str> {
    m.extra.get("uuid").and_then(Value::as_str)
}

/// Returns true if and only if the message was read from an event (it has an envelope).
fn has_envelope(m: &Message) -> bool {
    uuid_of(m).is_some() || m.extra.get("message").is_some_and(Value::is_object)
}

/// Puts `content` back into a `message` object where Claude Code writes it.
fn insert_content(msg: &mut Map<String, Value>, content: Option<Value>) {
    let Some(content) = content else { return };
    let position = |k: &str| msg.keys().position(|x| x == k);
    let at = position("context_management")
        .or_else(|| position("role").map(|p| p + 1))
        .unwrap_or(msg.len());
    msg.shift_insert(at, "content".into(), content);
}

/// A `tool_result` block for a tool message.
fn tool_result_block(t: &Message) -> Value {
    let mut b = match t.extra.get(BLOCK_KEY) {
        Some(Value::Object(b)) => b.clone(),
        _ => {
            let mut b = Map::new();
            b.insert("type".into(), Value::String("tool_result".into()));
            b
        }
    };
    let id = Value::String(t.tool_call_id.clone().unwrap_or_default());
    if b.contains_key("tool_use_id") {
        b.insert("tool_use_id".into(), id);
    } else {
        let at = b.keys().position(|k| k == "type").map_or(0, |p| p + 1);
        b.shift_insert(at, "tool_use_id".into(), id);
    }
    if let Some(content) = encode_content(&t.content) {
        // Claude Code writes `type, content, tool_use_id` for a string result and
        // `type, tool_use_id, content` for a block list.
        let ty = b.keys().position(|k| k == "type");
        let after_id = content.is_array();
        let at = match ty {
            Some(p) if after_id && b.keys().nth(p + 1).is_some_and(|k| k == "tool_use_id") => p + 2,
            Some(p) => p + 1,
            None => b.len(),
        };
        b.shift_insert(at, "content".into(), content);
    }
    Value::Object(b)
}

/// A `tool_use` block for a call.
fn tool_use_block(c: &ToolCall) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), Value::String("tool_use".into()));
    b.insert("id".into(), Value::String(c.id.clone()));
    b.insert("name".into(), Value::String(c.name.clone()));
    let input = if c.arguments.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone()))
    };
    b.insert("input".into(), input);
    for (k, v) in &c.extra {
        if !b.contains_key(k) {
            b.insert(k.clone(), v.clone());
        }
    }
    Value::Object(b)
}

/// Reasoning kept beside a message (other dialects) as a leading thinking block.
fn reasoning_block(m: &Message) -> Option<Value> {
    let r = m.reasoning.as_ref()?;
    let mut b = Map::new();
    b.insert("type".into(), Value::String("thinking".into()));
    b.insert("thinking".into(), Value::String(r.text.clone()));
    Some(Value::Object(b))
}

/// Every block of an assistant message without a layout: parts, then calls.
fn assistant_blocks(m: &Message) -> Vec<Value> {
    reasoning_block(m)
        .into_iter()
        .chain(m.content.parts.iter().map(encode_part))
        .chain(m.tool_calls.iter().map(tool_use_block))
        .collect()
}

/// The content of a single-event assistant message, in the form it was read.
fn assistant_content(m: &Message) -> Option<Value> {
    if m.tool_calls.is_empty() && m.reasoning.is_none() {
        encode_content(&m.content)
    } else {
        Some(Value::Array(assistant_blocks(m)))
    }
}

/// A layout entry read back from [`EVENTS_KEY`].
struct Layout<'a> {
    blocks: Vec<Desc>,
    results_before: usize,
    records_before: usize,
    envelope: &'a Map<String, Value>,
}

/// The layout of an assistant message, or `None` when it has none (or a broken one).
fn layout_of(m: &Message) -> Option<Vec<Layout<'_>>> {
    let entries = m.extra.get(EVENTS_KEY)?.as_array()?;
    if entries.is_empty() {
        return None;
    }
    entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let e = e.as_object()?;
            let blocks = e
                .get("blocks")?
                .as_array()?
                .iter()
                .map(Desc::from_value)
                .collect::<Option<Vec<_>>>()?;
            let count = |key: &str| {
                e.get(key)
                    .and_then(Value::as_u64)
                    .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
            };
            let envelope = if k == 0 { &m.extra } else { e.get("event")?.as_object()? };
            Some(Layout {
                blocks,
                results_before: count("resultsBefore"),
                records_before: count("recordsBefore"),
                envelope,
            })
        })
        .collect()
}

/// Matches `b` (current part kinds) to `a` (remembered kinds) in order, keeping
/// as many as possible; on ties a current part is left unmatched (it is then an
/// addition, such as a prepended summary). Returns, per `b`, the matched `a` index.
fn align(a: &[&str], b: &[&str]) -> Vec<Option<usize>> {
    let (n, m) = (a.len(), b.len());
    let mut out = vec![None; m];
    if n.saturating_mul(m) > MAX_ALIGN_CELLS {
        let mut i = 0;
        for (j, kind) in b.iter().enumerate() {
            if let Some(k) = a[i.min(n)..].iter().position(|x| x == kind) {
                out[j] = Some(i + k);
                i += k + 1;
            }
        }
        return out;
    }
    // lcs[i * (m + 1) + j] = LCS length of a[i..] and b[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let here = lcs[i * w + j];
        if lcs[i * w + j + 1] == here {
            j += 1;
        } else if a[i] == b[j] && lcs[(i + 1) * w + j + 1] + 1 == here {
            out[j] = Some(i);
            i += 1;
            j += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Distributes an assistant message's current parts and calls over its events.
fn assign(layout: &[Layout<'_>], m: &Message) -> Vec<Vec<Value>> {
    let n = layout.len();
    let mut out: Vec<Vec<Value>> = vec![Vec::new(); n];
    if n == 0 {
        return out;
    }
    let parts = &m.content.parts;
    let calls = &m.tool_calls;
    // Remembered part kinds, with their event, in order.
    let remembered: Vec<(usize, &str)> = layout
        .iter()
        .enumerate()
        .flat_map(|(e, l)| {
            l.blocks.iter().filter_map(move |d| match d {
                Desc::Part(kind) => Some((e, kind.as_str())),
                Desc::Call(_) => None,
            })
        })
        .collect();
    let kinds: Vec<&str> = parts.iter().map(part_kind).collect();
    let wanted: Vec<&str> = remembered.iter().map(|r| r.1).collect();
    let matched = align(&wanted, &kinds);
    // Each part's event: its match's, else the next matched part's, else the
    // previous one's, else the first event that held parts.
    let fallback = remembered.first().map_or(0, |r| r.0);
    let mut event_of = vec![None; parts.len()];
    let mut next = None;
    for j in (0..parts.len()).rev() {
        if let Some(k) = matched[j] {
            next = Some(remembered[k].0);
        }
        event_of[j] = next;
    }
    let mut prev = None;
    for j in 0..parts.len() {
        if let Some(k) = matched[j] {
            prev = Some(remembered[k].0);
        }
        event_of[j] = event_of[j].or(prev);
    }
    let event_of: Vec<usize> = event_of.into_iter().map(|e| e.unwrap_or(fallback)).collect();
    // Each call's event by id; unknown ids go to the last event that held calls.
    let mut call_event: HashMap<&str, usize> = HashMap::new();
    for (e, l) in layout.iter().enumerate() {
        for d in &l.blocks {
            if let Desc::Call(id) = d {
                call_event.entry(id.as_str()).or_insert(e);
            }
        }
    }
    let last_call_event = call_event.values().copied().max().unwrap_or(n - 1);
    let calls_of: Vec<usize> = calls
        .iter()
        .map(|c| call_event.get(c.id.as_str()).copied().unwrap_or(last_call_event))
        .collect();
    // Parts and calls per event, in current order.
    let mut parts_in: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, &e) in event_of.iter().enumerate() {
        parts_in[e].push(j);
    }
    let mut calls_in: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, &e) in calls_of.iter().enumerate() {
        calls_in[e].push(c);
    }
    let mut part_done = vec![false; parts.len()];
    let mut call_done = vec![false; calls.len()];
    let mut by_remembered = vec![None; remembered.len()];
    for (j, k) in matched.iter().enumerate() {
        if let Some(k) = k {
            by_remembered[*k] = Some(j);
        }
    }
    let mut k = 0;
    for (e, l) in layout.iter().enumerate() {
        // This event's parts in current order; `cursor` walks them.
        let mine = &parts_in[e];
        let mut cursor = 0;
        for d in &l.blocks {
            match d {
                Desc::Part(_) => {
                    if let Some(j) = by_remembered.get(k).copied().flatten() {
                        while cursor < mine.len() && mine[cursor] <= j {
                            let p = mine[cursor];
                            if !part_done[p] {
                                out[e].push(encode_part(&parts[p]));
                                part_done[p] = true;
                            }
                            cursor += 1;
                        }
                    }
                    k += 1;
                }
                Desc::Call(id) => {
                    let found =
                        calls_in[e].iter().copied().find(|&c| !call_done[c] && calls[c].id == *id);
                    if let Some(c) = found {
                        out[e].push(tool_use_block(&calls[c]));
                        call_done[c] = true;
                    }
                }
            }
        }
        for &p in mine {
            if !part_done[p] {
                out[e].push(encode_part(&parts[p]));
                part_done[p] = true;
            }
        }
        for &c in &calls_in[e] {
            if !call_done[c] {
                out[e].push(tool_use_block(&calls[c]));
                call_done[c] = true;
            }
        }
    }
    out
}

/// A user event made of tool results (and the other blocks of the same event).
struct ResultEvent<'a> {
    tools: Vec<&'a Message>,
    user: Option<&'a Message>,
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

/// Returns true if and only if `m` was read as the first message of an event
/// that repeats the previous event's `uuid` ([`NEW_EVENT_KEY`]).
fn starts_event(m: &Message) -> bool {
    m.extra.get(NEW_EVENT_KEY) == Some(&Value::Bool(true))
}

/// Groups the tool messages `msgs[start..end]` into the events they came from,
/// absorbing a following user message of the same event. Returns the events and
/// the index after them.
fn result_events(msgs: &[Message], start: usize, end: usize) -> (Vec<ResultEvent<'_>>, usize) {
    let mut events: Vec<ResultEvent<'_>> = Vec::new();
    for m in &msgs[start..end] {
        match events.last_mut() {
            Some(last) if same_event(last.tools[0], m) && !starts_event(m) => last.tools.push(m),
            _ => events.push(ResultEvent { tools: vec![m], user: None }),
        }
    }
    let mut next = end;
    if let (Some(last), Some(u)) = (events.last_mut(), msgs.get(end))
        && u.role == Role::User
        && same_event(last.tools[0], u)
        && !starts_event(u)
    {
        last.user = Some(u);
        next = end + 1;
    }
    (events, next)
}

/// Formats 128 bits as a UUID string (version 8, RFC 9562 variant).
fn format_uuid(x: u128) -> String {
    let x = (x & !(0xF << 76)) | (0x8 << 76);
    let x = (x & !(0x3 << 62)) | (0x2 << 62);
    let h = format!("{x:032x}");
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// The uuid of a new event: a hash of [`UUID_NAMESPACE`], its parent, its type and
/// its text, re-salted in the (unlikely) case it is already taken.
fn derive_uuid(parent: Option<&str>, kind: &str, text: &str, taken: &HashSet<String>) -> String {
    let mut salt: u32 = 0;
    loop {
        let input = format!("{UUID_NAMESPACE}\n{}\n{kind}\n{salt}\n{text}", parent.unwrap_or(""));
        let uuid = format_uuid(xxhash_rust::xxh3::xxh3_128(input.as_bytes()));
        if !taken.contains(&uuid) || salt == u32::MAX {
            return uuid;
        }
        salt += 1;
    }
}

/// Builds the output events in order, re-linking parents where needed.
struct Writer {
    out: Vec<Value>,
    /// Re-link every main-chain parent that is not an earlier written event.
    relink: bool,
    written: HashSet<String>,
    /// Uuids of source events this encoder left out (their children are re-linked).
    dropped: HashSet<String>,
    /// The uuid of the last written main-chain message event.
    last_message: Option<String>,
    /// Per-session fields and timestamp for new events (from the last message event).
    neighbour: Map<String, Value>,
}

impl Writer {
    fn remember(&mut self, ev: &Map<String, Value>) {
        for k in COPIED_FIELDS.iter().chain(&["timestamp"]) {
            if let Some(v) = ev.get(*k) {
                self.neighbour.insert((*k).to_string(), v.clone());
            }
        }
    }

    fn push(&mut self, mut v: Value) {
        if let Value::Object(map) = &mut v {
            let main = !is_sidechain(map);
            if main && map.contains_key("parentUuid") {
                let keep = match map.get("parentUuid") {
                    Some(Value::String(p)) => {
                        !self.dropped.contains(p) && (!self.relink || self.written.contains(p))
                    }
                    Some(Value::Null) => true,
                    _ => !self.relink,
                };
                if !keep {
                    let parent = self.last_message.clone().map_or(Value::Null, Value::String);
                    map.insert("parentUuid".into(), parent);
                }
            }
            if let Some(Value::String(u)) = map.get("uuid") {
                self.written.insert(u.clone());
                if main && matches!(type_of(map), Some("user" | "assistant")) {
                    self.last_message = Some(u.clone());
                    self.remember(map);
                } else if is_boundary(map) {
                    // A boundary restarts the chain: what follows hangs from it,
                    // as Claude Code's own compact summary does.
                    self.last_message = Some(u.clone());
                }
            }
        }
        self.out.push(v);
    }

    fn records(&mut self, records: &[Value]) {
        for r in records {
            self.push(r.clone());
        }
    }

    /// A new event of `kind` holding `message`, linked after the last message event.
    fn new_event(
        &self,
        kind: &str,
        message: Map<String, Value>,
        m: &Message,
    ) -> Map<String, Value> {
        let mut text = m.text_content().into_owned();
        for c in m.tool_calls.iter() {
            text.push('\n');
            text.push_str(&c.id);
        }
        if let Some(id) = &m.tool_call_id {
            text.push('\n');
            text.push_str(id);
        }
        let uuid = derive_uuid(self.last_message.as_deref(), kind, &text, &self.written);
        let mut ev = Map::new();
        ev.insert(
            "parentUuid".into(),
            self.last_message.clone().map_or(Value::Null, Value::String),
        );
        ev.insert("isSidechain".into(), Value::Bool(false));
        ev.insert("type".into(), Value::String(kind.to_string()));
        ev.insert("message".into(), Value::Object(message));
        ev.insert("uuid".into(), Value::String(uuid));
        if let Some(ts) = self.neighbour.get("timestamp") {
            ev.insert("timestamp".into(), ts.clone());
        }
        for k in COPIED_FIELDS {
            if let Some(v) = self.neighbour.get(*k) {
                ev.insert((*k).to_string(), v.clone());
            }
        }
        // Fields a message from another dialect carried (its own timestamp, ...).
        for (k, v) in m.extra.iter() {
            if !matches!(k.as_str(), "parentUuid" | "isSidechain" | "type" | "message" | "uuid") {
                ev.insert(k.clone(), v.clone());
            }
        }
        ev
    }

    /// The event of a message read from the log, with `content` put back.
    fn from_envelope(envelope: &Map<String, Value>, role: &str, content: Option<Value>) -> Value {
        let mut ev = envelope.clone();
        ev.shift_remove(EVENTS_KEY);
        ev.shift_remove(BLOCK_KEY);
        ev.shift_remove(NEW_EVENT_KEY);
        let mut msg = match ev.get("message") {
            Some(Value::Object(m)) => m.clone(),
            _ => {
                let mut m = Map::new();
                m.insert("role".into(), Value::String(role.to_string()));
                m
            }
        };
        insert_content(&mut msg, content);
        ev.insert("message".into(), Value::Object(msg));
        Value::Object(ev)
    }

    fn user(&mut self, m: &Message) {
        self.records(&m.attached);
        let content = encode_content(&m.content);
        if has_envelope(m) {
            self.push(Writer::from_envelope(&m.extra, "user", content));
        } else {
            let mut msg = Map::new();
            msg.insert("role".into(), Value::String("user".into()));
            insert_content(&mut msg, content);
            let ev = self.new_event("user", msg, m);
            self.push(Value::Object(ev));
        }
    }

    fn result_event(&mut self, r: &ResultEvent<'_>) {
        for m in r.tools.iter().chain(r.user.iter()) {
            self.records(&m.attached);
        }
        let mut blocks: Vec<Value> = r.tools.iter().map(|t| tool_result_block(t)).collect();
        if let Some(u) = r.user {
            blocks.extend(u.content.parts.iter().map(encode_part));
        }
        let content = Some(Value::Array(blocks));
        match r.tools.first() {
            Some(first) if has_envelope(first) => {
                self.push(Writer::from_envelope(&first.extra, "user", content));
            }
            Some(first) => {
                let mut msg = Map::new();
                msg.insert("role".into(), Value::String("user".into()));
                insert_content(&mut msg, content);
                let ev = self.new_event("user", msg, first);
                self.push(Value::Object(ev));
            }
            None => {}
        }
    }

    fn assistant(&mut self, m: &Message, results: &[ResultEvent<'_>]) {
        if !has_envelope(m) {
            self.records(&m.attached);
            let mut msg = Map::new();
            msg.insert("model".into(), Value::String("<synthetic>".into()));
            msg.insert("type".into(), Value::String("message".into()));
            msg.insert("role".into(), Value::String("assistant".into()));
            msg.insert("content".into(), Value::Array(assistant_blocks(m)));
            let mut ev = self.new_event("assistant", msg, m);
            // The API message id of a synthetic reply: its own uuid, as Claude Code does.
            if let (Some(uuid), Some(Value::Object(msg))) =
                (ev.get("uuid").cloned(), ev.get_mut("message"))
            {
                msg.shift_insert(0, "id".into(), uuid);
            }
            self.push(Value::Object(ev));
            for r in results {
                self.result_event(r);
            }
            return;
        }
        let Some(layout) = layout_of(m) else {
            self.records(&m.attached);
            self.push(Writer::from_envelope(&m.extra, "assistant", assistant_content(m)));
            for r in results {
                self.result_event(r);
            }
            return;
        };
        let blocks = assign(&layout, m);
        let later: usize = layout.iter().skip(1).map(|l| l.records_before).sum();
        let mut at = m.attached.len().saturating_sub(later);
        self.records(&m.attached[..at]);
        let anything = blocks.iter().any(|b| !b.is_empty());
        let mut done = 0;
        for (k, (l, b)) in layout.iter().zip(blocks).enumerate() {
            if k > 0 {
                while done < l.results_before.min(results.len()) {
                    self.result_event(&results[done]);
                    done += 1;
                }
                let take = l.records_before.min(m.attached.len() - at);
                self.records(&m.attached[at..at + take]);
                at += take;
            }
            if b.is_empty() && (anything || k > 0) {
                if let Some(u) = l.envelope.get("uuid").and_then(Value::as_str) {
                    self.dropped.insert(u.to_string());
                }
                continue;
            }
            self.push(Writer::from_envelope(l.envelope, "assistant", Some(Value::Array(b))));
        }
        self.records(&m.attached[at..]);
        for r in &results[done..] {
            self.result_event(r);
        }
    }
}

/// The envelope new events copy per-session fields from before any message is written.
fn first_neighbour(session: &Session) -> Map<String, Value> {
    let has = |v: &Map<String, Value>| v.contains_key("sessionId");
    let found = session.messages.iter().map(|m| &*m.extra).find(|e| has(e)).or_else(|| {
        session
            .messages
            .iter()
            .flat_map(|m| m.attached.iter())
            .chain(&session.trailing)
            .filter_map(Value::as_object)
            .find(|e| has(e))
    });
    let mut out = Map::new();
    if let Some(e) = found {
        for k in COPIED_FIELDS.iter().chain(&["timestamp"]) {
            if let Some(v) = e.get(*k) {
                out.insert((*k).to_string(), v.clone());
            }
        }
    }
    out
}

/// Writes a session back as Claude Code events. `compacted` says the session was
/// compacted (the chain is then re-linked wherever it is broken).
pub fn encode_events(session: &Session, compacted: bool) -> Vec<Value> {
    let msgs = &session.messages;
    // Not "a message carries our summary": a file compacted earlier and read
    // back unchanged is written back as it was (fuzz finding
    // `claude_code_dangling_parent`).
    let relink = compacted || msgs.iter().any(|m| !has_envelope(m));
    let mut w = Writer {
        out: Vec::new(),
        relink,
        written: HashSet::new(),
        dropped: HashSet::new(),
        last_message: None,
        neighbour: first_neighbour(session),
    };
    let run_end = |from: usize| {
        (from..msgs.len()).find(|&j| msgs[j].role != Role::Tool).unwrap_or(msgs.len())
    };
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        match m.role {
            Role::Assistant => {
                let (results, next) = result_events(msgs, i + 1, run_end(i + 1));
                w.assistant(m, &results);
                i = next;
            }
            Role::Tool => {
                let (results, next) = result_events(msgs, i, run_end(i));
                for r in &results {
                    w.result_event(r);
                }
                i = next;
            }
            Role::User | Role::System | Role::Developer | Role::Other(_) => {
                w.user(m);
                i += 1;
            }
        }
    }
    w.records(&session.trailing);
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::summary::SUMMARY_PREFIX;
    use serde_json::json;

    fn recs(values: &[Value]) -> Vec<Record> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Record {
                source: Source { path: "t.jsonl".into(), line: Some(i as u64 + 1), index: None },
                value: v.clone(),
            })
            .collect()
    }

    fn decode(values: &[Value]) -> Session {
        ClaudeCode.decode(recs(values)).expect("decodes")
    }

    /// Decode + encode must give the same values and the same bytes.
    fn assert_round_trip(values: &[Value]) -> Session {
        let s = decode(values);
        let out = ClaudeCode.encode(&s, None);
        assert_eq!(out, values);
        for (a, b) in out.iter().zip(values) {
            assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
        }
        s
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
        json!({"parentUuid": parent, "isSidechain": false, "type": "user",
               "message": {"role": "user", "content": content}, "uuid": uuid,
               "timestamp": format!("2026-05-01T10:00:{:02}.000Z", uuid.len()),
               "cwd": "/repo", "sessionId": "S1", "version": "2.1.89", "gitBranch": "main"})
    }

    fn asst(uuid: &str, parent: &str, id: &str, blocks: Value) -> Value {
        json!({"parentUuid": parent, "isSidechain": false,
               "message": {"model": "claude-opus-4-6", "id": id, "type": "message", "role": "assistant",
                           "content": blocks, "stop_reason": null, "stop_sequence": null,
                           "usage": {"input_tokens": 3, "cache_creation_input_tokens": 10,
                                     "cache_read_input_tokens": 900, "output_tokens": uuid.len()}},
               "requestId": "req_1", "type": "assistant", "uuid": uuid, "timestamp": "2026-05-01T10:01:00.000Z",
               "cwd": "/repo", "sessionId": "S1", "version": "2.1.89", "gitBranch": "main"})
    }

    fn result(uuid: &str, parent: &str, id: &str, content: Value) -> Value {
        let mut v = user(
            uuid,
            Some(parent),
            json!([{"tool_use_id": id, "type": "tool_result", "content": content}]),
        );
        v["toolUseResult"] = json!({"stdout": "full output", "interrupted": false});
        v["sourceToolAssistantUUID"] = json!(parent);
        v
    }

    fn snapshot(n: u32) -> Value {
        json!({"type": "file-history-snapshot", "messageId": format!("m{n}"),
               "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": false})
    }

    fn tool_use(id: &str, cmd: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd},
               "caller": {"type": "direct"}})
    }

    /// u1, then one streamed message (thinking, text, call a, [result a], snapshot,
    /// call b, [result b]), then a closing text and a system event.
    fn streamed() -> Vec<Value> {
        vec![
            snapshot(0),
            user("u1", None, json!("run the tests")),
            asst(
                "a1",
                "u1",
                "msg_1",
                json!([{"type": "thinking", "thinking": "", "signature": "sig"}]),
            ),
            asst("a2", "a1", "msg_1", json!([{"type": "text", "text": "Running both."}])),
            asst("a3", "a2", "msg_1", json!([tool_use("t_a", "cargo test")])),
            result("r1", "a3", "t_a", json!("test ok")),
            snapshot(1),
            asst("a4", "r1", "msg_1", json!([tool_use("t_b", "cargo clippy")])),
            result("r2", "a4", "t_b", json!([{"type": "text", "text": "no warnings"}])),
            asst("a5", "r2", "msg_2", json!([{"type": "text", "text": "All green."}])),
            json!({"parentUuid": "a5", "isSidechain": false, "type": "system",
                   "subtype": "turn_duration", "durationMs": 5, "uuid": "d1"}),
        ]
    }

    #[test]
    fn streamed_parts_merge_into_one_message_and_split_back() {
        let s = assert_round_trip(&streamed());
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
        let a = &s.messages[1];
        assert_eq!(a.content.parts.len(), 2);
        assert!(matches!(a.content.parts[0], Part::Reasoning(_)));
        assert_eq!(a.text_content(), "Running both.");
        let ids: Vec<&str> = a.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["t_a", "t_b"]);
        assert_eq!(a.tool_calls[0].name, "Bash");
        assert_eq!(a.tool_calls[0].arguments, r#"{"command":"cargo test"}"#);
        assert_eq!(a.tool_calls[0].extra["type"], "function");
        assert_eq!(a.tool_calls[0].extra["caller"], json!({"type": "direct"}));
        assert_eq!(a.extra["uuid"], "a1");
        assert_eq!(a.extra[EVENTS_KEY].as_array().map(Vec::len), Some(4));
        assert_eq!(a.extra[EVENTS_KEY][3]["resultsBefore"], 1);
        assert_eq!(a.extra[EVENTS_KEY][3]["recordsBefore"], 1);
        assert_eq!(a.extra[EVENTS_KEY][3]["blocks"], json!(["tool_use:t_b"]));
        // Usage of the last part, timestamp of the first.
        assert_eq!(a.meta.usage.and_then(|u| u.output_tokens), Some(2));
        assert_eq!(a.meta.usage.and_then(|u| u.cache_read_tokens), Some(900));
        assert_eq!(a.meta.usage.and_then(|u| u.cache_write_tokens), Some(10));
        assert_eq!(a.meta.timestamp.as_deref(), Some("2026-05-01T10:01:00.000Z"));
        assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("t_a"));
        assert_eq!(s.messages[2].extra["toolUseResult"]["stdout"], "full output");
        assert_eq!(s.messages[3].content.form, ContentForm::Parts);
        // The snapshot before call b is kept for that event (recordsBefore above).
        assert_eq!(s.messages[1].attached.as_slice(), [snapshot(1)]);
        assert!(s.messages[3].attached.is_empty());
        assert_eq!(s.messages[0].attached.as_slice(), [snapshot(0)]);
        assert_eq!(s.trailing.len(), 1);
        assert_eq!(s.id, "S1");
        assert!(s.tools.is_none());
    }

    #[test]
    fn calls_issued_before_their_results_keep_their_order() {
        let v = vec![
            user("u1", None, json!("go")),
            asst("a1", "u1", "msg_1", json!([tool_use("t_a", "ls")])),
            snapshot(1),
            asst("a2", "a1", "msg_1", json!([tool_use("t_b", "pwd")])),
            snapshot(2),
            result("r1", "a1", "t_a", json!("a")),
            result("r2", "a2", "t_b", json!("b")),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages.len(), 4);
        assert_eq!(s.messages[1].tool_calls.len(), 2);
        assert_eq!(s.messages[1].attached.as_slice(), [snapshot(1)]);
        assert_eq!(s.messages[2].attached.as_slice(), [snapshot(2)]);
    }

    #[test]
    fn one_event_with_several_results_and_text_round_trips() {
        let mut both = user(
            "r1",
            Some("a1"),
            json!([{"tool_use_id": "t_a", "type": "tool_result", "content": "a"},
                   {"type": "tool_result", "content": "b", "is_error": true, "tool_use_id": "t_b"},
                   {"type": "text", "text": "and hurry"}]),
        );
        both["toolUseResult"] = json!("Error: b");
        let v = vec![
            user("u1", None, json!("go")),
            asst("a1", "u1", "msg_1", json!([tool_use("t_a", "ls"), tool_use("t_b", "pwd")])),
            both,
            asst("a2", "r1", "msg_2", json!([{"type": "text", "text": "ok"}])),
        ];
        let s = assert_round_trip(&v);
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "assistant"]);
        assert_eq!(s.messages[3].extra[BLOCK_KEY]["is_error"], true);
        assert_eq!(s.messages[4].text_content(), "and hurry");
        assert!(s.messages[1].extra.get(EVENTS_KEY).is_none(), "one event, default order");
    }

    #[test]
    fn an_event_without_uuid_is_regrouped_by_its_envelope() {
        let mut both = user(
            "",
            Some("a1"),
            json!([{"tool_use_id": "t_a", "type": "tool_result", "content": "a"},
                   {"tool_use_id": "t_b", "type": "tool_result", "content": "b"},
                   {"type": "text", "text": "more"}]),
        );
        both.as_object_mut().unwrap().shift_remove("uuid");
        let mut later = both.clone();
        later["timestamp"] = json!("2026-05-01T11:00:00.000Z");
        let mut results_only = later.clone();
        results_only["message"]["content"].as_array_mut().unwrap().pop();
        let mut last = results_only.clone();
        last["timestamp"] = json!("2026-05-01T12:00:00.000Z");
        let v = vec![
            user("u1", None, json!("go")),
            asst("a1", "u1", "msg_1", json!([tool_use("t_a", "ls"), tool_use("t_b", "pwd")])),
            both,
            later,
            results_only,
            last,
        ];
        let s = assert_round_trip(&v);
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        // Two results + text, twice; then two results-only events: 4 tool messages
        // in a row, split back into their two events by their envelopes.
        let expected = ["user", "assistant", "tool", "tool", "user", "tool", "tool", "user"];
        assert_eq!(roles[..8], expected);
        assert_eq!(roles[8..], ["tool"; 4]);
    }

    #[test]
    fn a_call_before_its_text_in_one_event_keeps_the_order() {
        let v = vec![
            user("u1", None, json!("go")),
            asst(
                "a1",
                "u1",
                "msg_1",
                json!([tool_use("t_a", "ls"), {"type": "text", "text": "after"}]),
            ),
            result("r1", "a1", "t_a", json!("x")),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages[1].extra[EVENTS_KEY], json!([{"blocks": ["tool_use:t_a", "text"]}]));
    }

    #[test]
    fn compact_boundary_history_is_passthrough_and_recorded() {
        let boundary = json!({"parentUuid": null, "logicalParentUuid": "a1", "isSidechain": false,
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "uuid": "b1", "compactMetadata": {"trigger": "manual", "preTokens": 123456}});
        let mut summary = user(
            "u2",
            Some("b1"),
            json!(
                "This session is being continued from a previous conversation that ran out of context. Summary: x"
            ),
        );
        summary["isCompactSummary"] = json!(true);
        let v = vec![
            user("u1", None, json!("old ask")),
            asst("a1", "u1", "msg_1", json!([{"type": "text", "text": "old answer"}])),
            boundary.clone(),
            summary,
            asst("a2", "u2", "msg_2", json!([{"type": "text", "text": "continuing"}])),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages.len(), 2, "only the live context");
        assert_eq!(s.messages[0].attached.len(), 3);
        assert_eq!(s.messages[0].attached[2], boundary);
        assert!(crate::policy::summary::is_summary(&s.messages[0]));
        assert_eq!(
            s.earlier_compactions,
            [EarlierCompaction { pre_tokens: Some(123456), trigger: Some("manual".into()) }]
        );
    }

    #[test]
    fn sidechains_and_unknown_records_pass_through_in_place() {
        let mut side = asst("s1", "x", "msg_s", json!([{"type": "text", "text": "sub-agent"}]));
        side["isSidechain"] = json!(true);
        let v = vec![
            json!({"type": "summary", "summary": "old", "leafUuid": "u1"}),
            user("u1", None, json!("go")),
            side.clone(),
            json!({"type": "who-knows", "n": 1}),
            json!({"type": "system", "subtype": "api_error", "uuid": "e1", "parentUuid": "u1",
                   "content": "overloaded"}),
            asst("a1", "e1", "msg_1", json!([{"type": "text", "text": "done"}])),
            json!({"no_type": true}),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages.len(), 2);
        assert_eq!(s.messages[1].attached.len(), 3);
        assert_eq!(s.messages[1].attached[0], side);
        assert_eq!(s.trailing, [json!({"no_type": true})]);
    }

    #[test]
    fn orphans_and_forward_parents_are_kept() {
        let v = vec![
            user("u1", None, json!("go")),
            result("r0", "gone", "t_missing", json!("orphan")),
            asst("a1", "u9", "msg_1", json!([{"type": "text", "text": "forward parent"}])),
            user("u9", Some("r0"), json!("later")),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages[1].role, Role::Tool);
        assert_eq!(s.messages[1].tool_call_id.as_deref(), Some("t_missing"));
    }

    #[test]
    fn malformed_events_are_errors_naming_the_line() {
        for (bad, line) in [
            (vec![user("u1", None, json!("a")), json!([1, 2])], 2),
            (vec![json!({"type": "user", "uuid": "u1", "message": "text"})], 1),
            (vec![snapshot(0), json!({"type": "assistant", "uuid": "a1"})], 2),
            (
                vec![
                    json!({"type": "user", "uuid": "u1", "message": {"role": "user", "content": 5}}),
                ],
                1,
            ),
            (vec![json!({"type": "user", "claudeCodeBlock": {}, "message": {"content": "x"}})], 1),
        ] {
            let err = ClaudeCode.decode(recs(&bad)).expect_err("rejected");
            assert_eq!(err.source.and_then(|s| s.line), Some(line), "{}", err.message);
        }
        assert!(ClaudeCode.decode(Vec::new()).is_err());
    }

    #[test]
    fn odd_blocks_stay_parts() {
        let v = vec![
            user(
                "u1",
                None,
                json!([{"type": "tool_result", "content": "no id"}, "bare string",
                       {"type": "tool_result", "tool_use_id": "x", "content": 5}]),
            ),
            asst(
                "a1",
                "u1",
                "msg_1",
                json!([{"type": "tool_use", "id": "t1", "name": "Bash"}, {"type": "text", "text": "x"}]),
            ),
            asst("a2", "a1", "msg_2", json!("plain string reply")),
            asst("a3", "a2", "msg_3", json!(null)),
        ];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages.len(), 4);
        assert_eq!(s.messages[0].role, Role::User);
        assert_eq!(s.messages[0].content.parts.len(), 3);
        assert!(s.messages[1].tool_calls.is_empty(), "a tool_use without input is a plain part");
        assert_eq!(s.messages[2].content.form, ContentForm::String);
        assert_eq!(s.messages[3].content.form, ContentForm::Null);
    }

    #[test]
    fn detection_claims_claude_code_and_nothing_else() {
        assert!(ClaudeCode.detect(&streamed()));
        assert!(
            ClaudeCode
                .detect(&[snapshot(0), json!({"type": "queue-operation", "operation": "enqueue"})])
        );
        let openai =
            json!({"messages": [{"role": "user", "content": "hi"}], "type": "x", "uuid": "u"});
        assert!(!ClaudeCode.detect(&[openai]));
        let codex = json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}});
        assert!(!ClaudeCode.detect(&[codex.clone(), codex]));
        assert!(!ClaudeCode.detect(&[json!({"type": "message", "role": "user"})]));
        assert!(!ClaudeCode.detect(&[json!([1, 2])]));
    }

    #[test]
    fn stripped_thinking_drops_its_event_and_relinks_its_children() {
        let mut s = decode(&streamed());
        s.messages[1].content.parts_mut().remove(0);
        let out = ClaudeCode.encode(&s, None);
        let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
        assert_eq!(uuids, ["u1", "a2", "a3", "r1", "a4", "r2", "a5", "d1"]);
        assert_eq!(out[2]["parentUuid"], "u1", "a2 pointed at the dropped a1");
        assert_eq!(
            out[2]["message"]["content"],
            json!([{"type": "text", "text": "Running both."}])
        );
    }

    #[test]
    fn a_prepended_summary_lands_in_the_event_of_the_next_part() {
        let mut s = decode(&streamed());
        s.messages[1].content.prepend_text("SUMMARY");
        let out = ClaudeCode.encode(&s, None);
        let a1 = out.iter().find(|v| v["uuid"] == "a1").unwrap();
        assert_eq!(a1["message"]["content"][0]["text"], "SUMMARY");
        assert_eq!(a1["message"]["content"][1]["type"], "thinking");
        let a2 = out.iter().find(|v| v["uuid"] == "a2").unwrap();
        assert_eq!(a2["message"]["content"], json!([{"type": "text", "text": "Running both."}]));
    }

    #[test]
    fn dropped_calls_leave_only_the_others() {
        let mut s = decode(&streamed());
        s.messages[1].tool_calls_mut().remove(1);
        s.messages.remove(3);
        let out = ClaudeCode.encode(&s, Some(&json!({})));
        let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
        assert_eq!(uuids, ["u1", "a1", "a2", "a3", "r1", "a5", "d1"]);
        let a5 = out.iter().find(|v| v["uuid"] == "a5").unwrap();
        assert_eq!(a5["parentUuid"], "r1", "re-linked past the dropped result");
    }

    #[test]
    fn changed_results_keep_their_envelope() {
        let mut s = decode(&streamed());
        let line = "[terminal] ran `cargo test` -> exit 0, 1 lines output";
        s.messages[2].content.replace_with_text(line);
        let out = ClaudeCode.encode(&s, None);
        let r1 = out.iter().find(|v| v["uuid"] == "r1").unwrap();
        assert_eq!(r1["message"]["content"][0]["content"], line);
        assert_eq!(r1["message"]["content"][0]["tool_use_id"], "t_a");
        assert_eq!(r1["toolUseResult"]["stdout"], "full output");
    }

    #[test]
    fn a_new_summary_message_gets_a_derived_uuid_and_a_continuous_chain() {
        let mut s = decode(&streamed());
        // Fold messages 1..4 (the tool group) into a summary, as the core does.
        let folded: Vec<Value> =
            s.messages.drain(1..4).flat_map(|mut m| m.take_attached()).collect();
        let mut summary = Message::text(Role::User, format!("{SUMMARY_PREFIX} Earlier turns ..."));
        summary.attached = folded.into();
        s.messages.insert(1, summary);
        let out = ClaudeCode.encode(&s, None);
        assert_eq!(out, ClaudeCode.encode(&s, None), "deterministic");
        let new = out
            .iter()
            .find(|v| {
                v["message"]["content"].as_str().is_some_and(|t| t.starts_with(SUMMARY_PREFIX))
            })
            .unwrap();
        let uuid = new["uuid"].as_str().unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "8", "version 8");
        assert!(matches!(&uuid[19..20], "8" | "9" | "a" | "b"), "RFC 9562 variant");
        assert_eq!(new["parentUuid"], "u1");
        assert_eq!(new["type"], "user");
        assert_eq!(new["isSidechain"], false);
        assert_eq!(new["sessionId"], "S1");
        assert_eq!(new["cwd"], "/repo");
        assert_eq!(new["gitBranch"], "main");
        assert_eq!(new["version"], "2.1.89");
        assert_eq!(new["timestamp"], s.messages[0].extra["timestamp"], "the neighbour's time");
        // The next kept message pointed at a folded event: re-linked to the summary.
        let a5 = out.iter().find(|v| v["uuid"] == "a5").unwrap();
        assert_eq!(a5["parentUuid"], uuid);
        // Another parent gives another uuid.
        s.messages[0].extra_mut().insert("uuid".into(), json!("u1-other"));
        let other = ClaudeCode.encode(&s, None);
        assert!(other.iter().all(|v| v["uuid"] != uuid));
    }

    #[test]
    fn a_new_summary_after_an_old_boundary_hangs_from_the_boundary() {
        let boundary = json!({"parentUuid": null, "isSidechain": false, "type": "system",
            "subtype": "compact_boundary", "uuid": "b1", "compactMetadata": {"preTokens": 9}});
        let v = vec![
            user("u1", None, json!("old ask")),
            asst("a1", "u1", "msg_1", json!([{"type": "text", "text": "old answer"}])),
            boundary,
            user("u2", Some("b1"), json!("This session is being continued from ...")),
            asst("a2", "u2", "msg_2", json!([{"type": "text", "text": "continuing"}])),
        ];
        let mut s = decode(&v);
        // The core folds the old summary into a new one, which carries its records.
        let old = s.messages.remove(0);
        let mut summary = Message::text(Role::User, format!("{SUMMARY_PREFIX} updated"));
        summary.attached = old.attached;
        s.messages.insert(0, summary);
        let out = ClaudeCode.encode(&s, Some(&json!({})));
        let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
        assert_eq!(uuids.len(), 5);
        assert_eq!(&uuids[..3], ["u1", "a1", "b1"]);
        assert_eq!(out[2]["parentUuid"], Value::Null, "the boundary stays a root");
        assert_eq!(out[3]["parentUuid"], "b1");
        assert_eq!(out[4]["parentUuid"], out[3]["uuid"], "a2 lost its parent u2");
    }

    #[test]
    fn a_new_assistant_message_is_a_valid_event() {
        let mut s = decode(&[user("u1", None, json!("go"))]);
        s.messages.push(Message::text(Role::Assistant, "reply"));
        let out = ClaudeCode.encode(&s, Some(&json!({})));
        assert_eq!(out.len(), 2);
        assert_eq!(out[1]["type"], "assistant");
        assert_eq!(out[1]["parentUuid"], "u1");
        assert_eq!(out[1]["message"]["role"], "assistant");
        assert_eq!(out[1]["message"]["id"], out[1]["uuid"]);
        assert_eq!(out[1]["message"]["content"], json!([{"type": "text", "text": "reply"}]));
    }

    /// Found by the `decode` fuzz target: a file carrying our summary (compacted
    /// earlier) with a parent naming no event was re-linked when written back
    /// unchanged; decode + encode must give it back record for record.
    #[test]
    fn fuzz_decode_claude_code_dangling_parent() {
        let v = vec![
            user("u1", None, json!(format!("{SUMMARY_PREFIX} earlier turns"))),
            asst("a1", "lost", "msg_1", json!([{"type": "text", "text": "b"}])),
        ];
        let s = decode(&v);
        assert_eq!(ClaudeCode.encode(&s, None), v, "the source's own gap stays");
        let out = ClaudeCode.encode(&s, Some(&json!({"mode": "lean"})));
        assert_eq!(out[1]["parentUuid"], "u1", "compacted: re-linked");
    }

    #[test]
    fn relinking_only_when_compacted() {
        let v = vec![
            user("u1", None, json!("a")),
            asst("a1", "lost", "msg_1", json!([{"type": "text", "text": "b"}])),
        ];
        let s = decode(&v);
        assert_eq!(ClaudeCode.encode(&s, None), v, "the source's own gap stays");
        let out = ClaudeCode.encode(&s, Some(&json!({"mode": "lean"})));
        assert_eq!(out[1]["parentUuid"], "u1");
        assert!(out.iter().all(|v| v.get("compaction").is_none()));
    }

    /// Found by the `decode` fuzz target: two events of one message id
    /// carrying the same call were merged, and encoding put both copies of the
    /// call into the first event.
    #[test]
    fn fuzz_decode_claude_code_repeated_message_id() {
        let ev = |uuid: &str| {
            json!({"parentUuid": null, "type": "assistant", "uuid": uuid, "message": {
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]}})
        };
        let v = vec![ev("a"), ev("b")];
        let s = decode(&v);
        assert_eq!(ClaudeCode.encode(&s, None), v);
    }

    /// Found by the `decode` fuzz target: a tool-result event written twice (same
    /// uuid, same call id) was written back as one event holding both results.
    #[test]
    fn fuzz_decode_claude_code_repeated_result_event() {
        let call = json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]);
        let r = result("r1", "a1", "toolu_1", json!("out"));
        let v = vec![user("u1", None, json!("go")), asst("a1", "u1", "msg_1", call), r.clone(), r];
        assert_round_trip(&v);
    }

    /// Found by the `decode` fuzz target: a tool-result event and a user event
    /// with the same uuid (a corrupt log) were written back as one event, as if
    /// the user message were the rest of a mixed event.
    #[test]
    fn fuzz_decode_claude_code_repeated_uuid_user_event() {
        let r = result("u3", "a1", "toolu_b1", json!("FAILED"));
        let v = vec![r, user("u3", Some("a1"), json!("Also handle whitespace."))];
        let s = assert_round_trip(&v);
        assert_eq!(s.messages[1].extra[NEW_EVENT_KEY], true, "marked as an event of its own");
        // A mixed event (results, then text, in one event) is still one message pair
        // written back as one event, with no mark.
        let mixed = vec![user(
            "u4",
            None,
            json!([{"tool_use_id": "toolu_c1", "type": "tool_result", "content": "ok"},
                   {"type": "text", "text": "and more"}]),
        )];
        let s = assert_round_trip(&mixed);
        assert!(s.messages.iter().all(|m| !m.extra.contains_key(NEW_EVENT_KEY)));
        // Two result events with one uuid and two call ids stay two events.
        let two = vec![
            result("u5", "a1", "toolu_d1", json!("one")),
            result("u5", "a1", "toolu_d2", json!("two")),
        ];
        let s = assert_round_trip(&two);
        assert_eq!(s.messages[1].extra[NEW_EVENT_KEY], true);
        // One event with two results of one call id stays one event.
        let twice = json!([{"tool_use_id": "toolu_e1", "type": "tool_result", "content": "a"},
                           {"tool_use_id": "toolu_e1", "type": "tool_result", "content": "b"}]);
        assert_round_trip(&[user("u6", None, twice)]);
    }

    #[test]
    fn any_order_or_gap_round_trips() {
        // Every record removed, and every pair swapped: orphans, forward parents,
        // parts before their first part, results before their calls.
        let base = streamed();
        let mut cases = Vec::new();
        for i in 0..base.len() {
            let mut v = base.clone();
            v.remove(i);
            cases.push(v);
            for j in i + 1..base.len() {
                let mut v = base.clone();
                v.swap(i, j);
                cases.push(v);
            }
        }
        for v in &cases {
            let s = decode(v);
            assert_eq!(&ClaudeCode.encode(&s, None), v);
            // Compacted-mode encoding never panics and leaves no dangling parent.
            let out = ClaudeCode.encode(&s, Some(&json!({})));
            let mut seen = HashSet::new();
            for e in &out {
                if let Some(Value::String(p)) = e.get("parentUuid") {
                    assert!(seen.contains(p.as_str()), "{p} in {out:?}");
                }
                if let Some(u) = e.get("uuid").and_then(Value::as_str) {
                    seen.insert(u);
                }
            }
        }
    }

    #[test]
    fn align_prefers_matches_and_treats_leading_extras_as_additions() {
        assert_eq!(align(&["a", "b"], &["a", "b"]), [Some(0), Some(1)]);
        assert_eq!(align(&["thinking", "text"], &["text"]), [Some(1)]);
        assert_eq!(
            align(&["thinking", "text"], &["text", "thinking", "text"]),
            [None, Some(0), Some(1)]
        );
        assert_eq!(align(&["text", "text"], &["text", "text", "text"]), [None, Some(0), Some(1)]);
        assert_eq!(align(&[], &["x"]), [None]);
    }
}
