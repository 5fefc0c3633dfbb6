//! Reading a Claude Code log: the live main chain after the last
//! `compact_boundary` made into messages (the streamed events of one
//! assistant message joined, tool results split out of their user event),
//! everything else attached in place, and the layout each message needs to be
//! written back event for event.

use super::*;
use crate::formats::openai::decode_part;
use crate::formats::{DecodeError, Record, event_message, kind_of};
use crate::model::{
    ArgsForm, CallMark, Content, ContentForm, History, Message, MessageMeta, Parent, Part, Role,
    Session, Source, ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::sync::Arc;

/// An event's `message.content`, taken out of it.
enum RawContent {
    Absent,
    Null,
    Text(String),
    Blocks(Vec<Value>),
}

/// A chat event: its envelope (with `message` minus `content`) and its content.
pub(super) struct Event {
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
        cache_write_1h_tokens: u
            .get("cache_creation")
            .and_then(|c| c.get("ephemeral_1h_input_tokens"))
            .and_then(Value::as_u64),
        output_tokens: get("output_tokens"),
    };
    (usage != Usage::default()).then_some(usage)
}

/// The model Claude Code names on the messages it writes itself (API errors,
/// "No response requested."): no provider call made them.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// An assistant event's `message.id`.
fn message_id(envelope: &Map<String, Value>) -> Option<&str> {
    envelope.get("message")?.get("id")?.as_str()
}

/// How an assistant event relates to the provider's calls, given the
/// `message.id` of the call the assistant message before it belongs to.
fn call_mark(envelope: &Map<String, Value>, previous_call: Option<&str>) -> CallMark {
    let model = envelope.get("message").and_then(|m| m.get("model")).and_then(Value::as_str);
    if model == Some(SYNTHETIC_MODEL) {
        return CallMark::NoCall;
    }
    match message_id(envelope) {
        Some(id) if Some(id) == previous_call => CallMark::Continues,
        _ => CallMark::Opens,
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
    /// The `message.id` of the provider call the last assistant message belongs to.
    last_call: Option<String>,
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
        let meta = MessageMeta {
            timestamp: timestamp_of(&extra),
            usage: usage_of(&extra),
            call: CallMark::Opens,
            made: false,
        };
        let mut m = event_message(role, content, meta, extra);
        m.attached = std::mem::take(&mut self.pending).into();
        m
    }

    fn assistant(&mut self, ev: Event) {
        let Event { envelope, content } = ev;
        let RawContent::Blocks(blocks) = content else {
            self.close();
            let mark = call_mark(&envelope, self.last_call.as_deref());
            if mark != CallMark::NoCall {
                self.last_call = message_id(&envelope).map(str::to_string);
            }
            let mut m = self.message(Role::Assistant, content_of(content), envelope);
            m.meta.call = mark;
            if mark == CallMark::Continues {
                m.meta.usage = None;
            }
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
        let mark = call_mark(&envelope, self.last_call.as_deref());
        if mark != CallMark::NoCall {
            self.last_call = id.clone();
        }
        let mut m = self.message(
            Role::Assistant,
            Content { parts: parts.into(), form: ContentForm::Parts },
            envelope,
        );
        m.meta.call = mark;
        if mark == CallMark::Continues {
            // The call's usage is on the message that opened it.
            m.meta.usage = None;
        }
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
        let Event { mut envelope, content } = ev;
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
        // Each result keeps the event's envelope; the last one takes it when
        // nothing else needs it (it can hold the whole result again, as
        // `toolUseResult`).
        let last = results.len() - 1;
        for (k, (id, block, content)) in results.into_iter().enumerate() {
            let mut extra = if k == last && others.is_empty() {
                std::mem::take(&mut envelope)
            } else {
                envelope.clone()
            };
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

/// Reads every record of one Claude Code log as a session, its `history`
/// made into messages (the module docs say which events).
pub fn decode_events(records: Vec<Record>, history: History) -> Result<Session, DecodeError> {
    let Some(first) = records.first() else {
        return Err(DecodeError::new("a Claude Code log without records"));
    };
    let source = Source { path: first.source.path.clone(), line: None, index: None };
    let agent = subagent_of(records.iter().map(|r| &r.value)).map(str::to_string);
    let chain = Chain { subagent: agent.is_some() };
    let live_from = match history {
        History::Full => 0,
        History::Live => records
            .iter()
            .rposition(|r| r.value.as_object().is_some_and(|m| chain.boundary(m)))
            .map_or(0, |i| i + 1),
    };
    let mut d = Decoder::default();
    let mut id = None;
    let mut recorded: Vec<RecordedCompaction> = Vec::new();
    let mut keeping: Option<Keeping> = None;
    let segments_after = segments_after(&records, chain);
    let mut side = SideCalls::default();
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
        if chain.boundary(&map) {
            if let Some(k) = keeping.take() {
                k.finish(&mut recorded);
            }
            let position = (history == History::Full).then_some(d.messages.len());
            let mut c = boundary_record(&map, position);
            if history == History::Full {
                c.kept = preserved(&map, &d.messages);
                // Kept messages written after the boundary (ours): read as the
                // record's, not as conversation.
                let after = segment_tail(&map).filter(|_| segments_after.contains(&i));
                keeping = Some(Keeping {
                    decoder: Decoder::default(),
                    until: after,
                    summary_seen: false,
                    index: recorded.len(),
                });
            }
            recorded.push(c);
        }
        let summary = chain.summary(&map);
        if summary && let Some(c) = recorded.last_mut() {
            c.summary = match (std::mem::take(&mut c.summary), summary_text(&map)) {
                (RecordedSummary::Text(a), RecordedSummary::Text(b)) => {
                    RecordedSummary::Text(format!("{a}\n{b}"))
                }
                (RecordedSummary::Text(a), _) => RecordedSummary::Text(a),
                (_, b) => b,
            };
        }
        // A subagent's own log: its sidechain is its conversation, not side calls.
        if !chain.on(&map) && type_of(&map) == Some("assistant") {
            side.add(&map);
        }
        // Under `full`, the agent's summary is a recorded compaction's, not conversation.
        let chat = i >= live_from && chain.on(&map) && !(summary && history == History::Full);
        let chat_type = matches!(type_of(&map), Some("assistant" | "user"));
        if let Some(k) = keeping.as_mut() {
            if summary {
                k.summary_seen = true;
            }
            if chat && chat_type && (k.until.is_some() || !k.summary_seen) {
                let uuid = map.get("uuid").and_then(Value::as_str);
                let last = k.until.is_some() && uuid == k.until.as_deref();
                let copy = take_event(map.clone(), &at)?;
                match type_of(&map) {
                    Some("assistant") => k.decoder.assistant(copy),
                    _ => k.decoder.user(copy),
                }
                d.pending.push(Value::Object(map));
                if last && let Some(k) = keeping.take() {
                    k.finish(&mut recorded);
                }
                continue;
            }
            if k.until.is_none()
                && k.summary_seen
                && let Some(k) = keeping.take()
            {
                k.finish(&mut recorded);
            }
        }
        match type_of(&map) {
            Some("assistant") if chat => d.assistant(take_event(map, &at)?),
            Some("user") if chat => d.user(take_event(map, &at)?),
            _ => d.pending.push(Value::Object(map)),
        }
    }
    if let Some(k) = keeping.take() {
        k.finish(&mut recorded);
    }
    d.close();
    // A subagent's log carries its parent's `sessionId`: it is named by its agent.
    let (id, parent) = match (agent, id) {
        (Some(agent), parent) => (
            Some(format!("{SUBAGENT_ID_PREFIX}{agent}")),
            parent.map(|session_id| Parent { session_id, call_id: None }),
        ),
        (None, id) => (id, None),
    };
    Ok(Session {
        id: id.unwrap_or_else(|| source.to_string()),
        source,
        messages: d.messages,
        trailing: d.pending,
        recorded_compactions: recorded,
        parent,
        side_calls: side.calls.into_iter().map(|(_, u)| u).collect(),
        ..Session::default()
    })
}

/// Messages a compaction kept that its log writes after its boundary (ours:
/// [`super::lineage`]), read under [`History::Full`] as the record's `kept`
/// rather than conversation: every chat event after the boundary up to its
/// `preservedSegment.tailUuid` when the segment is written after it, else
/// those before its summary.
struct Keeping {
    decoder: Decoder,
    /// The uuid of the segment's last event, when the segment comes after the boundary.
    until: Option<String>,
    summary_seen: bool,
    /// The recorded compaction they belong to.
    index: usize,
}

impl Keeping {
    fn finish(mut self, recorded: &mut [RecordedCompaction]) {
        self.decoder.close();
        if let Some(c) = recorded.get_mut(self.index) {
            c.kept.extend(self.decoder.messages);
        }
    }
}

/// The indices of the boundaries whose `preservedSegment` ends after them
/// (ours; Claude Code's own segments are written before their boundary).
fn segments_after(records: &[Record], chain: Chain) -> std::collections::HashSet<usize> {
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(u) = r.value.get("uuid").and_then(Value::as_str) {
            at.entry(u).or_insert(i);
        }
    }
    let boundary_tail = |(i, r): (usize, &Record)| {
        let map = r.value.as_object().filter(|m| chain.boundary(m))?;
        let tail = segment_tail(map)?;
        at.get(tail.as_str()).is_some_and(|&t| t > i).then_some(i)
    };
    records.iter().enumerate().filter_map(boundary_tail).collect()
}

/// A boundary's `preservedSegment.tailUuid`.
fn segment_tail(map: &Map<String, Value>) -> Option<String> {
    let segment = map.get("compactMetadata")?.get("preservedSegment")?;
    segment.get("tailUuid")?.as_str().map(str::to_string)
}

/// Which events of a log are its chain: the main chain's, or in a
/// subagent's own log ([`subagent_of`]) its sidechain's.
#[derive(Clone, Copy)]
struct Chain {
    subagent: bool,
}

impl Chain {
    /// Returns true if and only if `map` is an event of the chain.
    fn on(self, map: &Map<String, Value>) -> bool {
        self.subagent || !is_sidechain(map)
    }

    /// Returns true if and only if `map` is a `compact_boundary` of the chain.
    fn boundary(self, map: &Map<String, Value>) -> bool {
        is_boundary_kind(map) && self.on(map)
    }

    /// Returns true if and only if `map` is the agent's summary of a
    /// compaction (a `user` event of the chain with `isCompactSummary:
    /// true`; ours may be an `assistant` one, when our summary took that role).
    fn summary(self, map: &Map<String, Value>) -> bool {
        matches!(type_of(map), Some("user" | "assistant"))
            && map.get("isCompactSummary") == Some(&Value::Bool(true))
            && self.on(map)
    }
}

/// The provider calls of sidechain events, one per `message.id` (the last
/// event's usage: Claude Code writes one event per streamed block), in the
/// order first seen; `<synthetic>` messages are no call.
#[derive(Default)]
struct SideCalls {
    calls: Vec<(Option<String>, Usage)>,
    /// Position in `calls` of each `message.id` seen.
    by_id: std::collections::HashMap<String, usize>,
}

impl SideCalls {
    fn add(&mut self, map: &Map<String, Value>) {
        let model = map.get("message").and_then(|m| m.get("model")).and_then(Value::as_str);
        let Some(usage) = usage_of(map).filter(|_| model != Some(SYNTHETIC_MODEL)) else {
            return;
        };
        let id = message_id(map).map(str::to_string);
        if let Some(&k) = id.as_ref().and_then(|id| self.by_id.get(id)) {
            self.calls[k].1 = usage;
            return;
        }
        if let Some(id) = &id {
            self.by_id.insert(id.clone(), self.calls.len());
        }
        self.calls.push((id, usage));
    }
}

/// The text of a summary event (a string content, or its text blocks joined).
fn summary_text(map: &Map<String, Value>) -> RecordedSummary {
    let Some(content) = map.get("message").and_then(|m| m.get("content")) else {
        return RecordedSummary::Absent;
    };
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.is_empty() { RecordedSummary::Absent } else { RecordedSummary::Text(text) }
}

/// The messages a boundary's `compactMetadata.preservedSegment` kept verbatim
/// (`headUuid` through `tailUuid`, read before it), copied; none when it has
/// no segment or names messages not read.
fn preserved(map: &Map<String, Value>, messages: &[Message]) -> Vec<Message> {
    let segment = map.get("compactMetadata").and_then(|m| m.get("preservedSegment"));
    let uuid = |k: &str| segment.and_then(|s| s.get(k)).and_then(Value::as_str);
    let (Some(head), Some(tail)) = (uuid("headUuid"), uuid("tailUuid")) else { return Vec::new() };
    let at = |u: &str| messages.iter().position(|m| uuid_of(m) == Some(u));
    let end = messages.iter().rposition(|m| uuid_of(m) == Some(tail));
    match (at(head), end) {
        (Some(h), Some(t)) if h <= t => messages[h..=t].to_vec(),
        _ => Vec::new(),
    }
}
