//! Codex CLI rollout JSONL (`~/.codex/sessions/**/rollout-*.jsonl`): one session per file.
//!
//! Every line is `{"timestamp", "type", "payload"}`. This file is table-like (one
//! arm per item type) and keeps the exact line sequence, so it is long.
//!
//! ## Field map
//! - `session_meta` (the first one whose `payload.base_instructions.text` is a
//!   string) → the system message; its text is written back into that field.
//!   `dynamic_tools` stay in the line (Codex's built-in tool schemas are not in
//!   the log, so a partial `tools` list would mislead more than it helps).
//! - `response_item` / `message` (`role`, `content` parts `input_text` /
//!   `output_text` / `input_image`) → a message of that role.
//! - `function_call` (`name`, `arguments` JSON text), `custom_tool_call` (`name`,
//!   raw `input`, e.g. an `apply_patch` patch; arguments become `{"input": ...}`)
//!   and `local_shell_call` (`action`; name `local_shell`) → tool calls.
//!   Consecutive calls (only non-chat lines or reasoning between them) are ONE
//!   assistant message, so parallel calls form one tool group. An assistant
//!   text message before the calls stays its own message: merging would make
//!   the text line's position depend on the calls and gains nothing.
//! - `function_call_output` / `custom_tool_call_output` (`output`: a string, an
//!   array of content items, or anything else kept as one opaque part) → a
//!   `tool` message. An output whose call is not in the live context is what
//!   Codex's own history normalisation drops before a request: it is kept as
//!   a passthrough record, not a message.
//! - `reasoning` → a [`Part::Reasoning`] of the next assistant message (text or
//!   calls), kept verbatim. It has no `text`, so it costs no tokens: its
//!   `encrypted_content` is not text a model reads back, and stage 4 drops it
//!   outside the tail, as it drops any reasoning. Reasoning that no assistant
//!   output follows stays a passthrough record.
//! - `event_msg` (`token_count`, `exec_command_end`, `agent_message`, ...),
//!   `turn_context`, `web_search_call`, `ghost_snapshot`, unknown item types and
//!   any item whose shape is not understood → passthrough records, in place
//!   ([`Message::attached`], [`Session::trailing`]).
//! - `token_count`: the first count with a new running total after an
//!   assistant message gives that message's `meta.usage` (its
//!   `last_token_usage`: input, cached input, output tokens), since Codex logs
//!   it right after the response it measures. Counts that repeat the previous
//!   total (rate-limit updates), a second new total before the next assistant
//!   message (a request whose output is no message, e.g. a web search) and
//!   counts while reasoning waits for its message are skipped.
//! - `compacted` (`message`, `replacement_history`): an earlier compaction,
//!   recorded in [`Session::earlier_compactions`] (`pre_tokens`: the last
//!   request's `total_tokens` before it; the log has no trigger). Everything before the LAST
//!   one is history it replaced and passes through untouched (except the
//!   system prompt, which Codex sends with every request). The items of its
//!   `replacement_history` are the live context: they decode as messages like
//!   any other item and are written back into the same line; its non-chat items
//!   (the encrypted `compaction` summary) pass through in place and cost no
//!   tokens, since their text is unknown. A `compacted` line with a `message`
//!   and no `replacement_history` (older Codex) is a user message holding that
//!   summary.
//!
//! ## Keeping every line
//! Typed fields are taken out of the payload and a slot marker is left at
//! their key, under the OpenAI names (`role`, `content`, `tool_call_id`; a call's
//! `call_id` at `id`, its name and arguments at `function`), so `--to openai`
//! fills the same slots. The envelope's `timestamp` goes into `extra`. What has
//! no OpenAI field (per-line timestamps of a message made of several lines,
//! non-chat lines between them, the `session_meta` and `compacted` line
//! templates) lives in private marker records in `attached`, which only this
//! encoder reads and which the OpenAI encoder never writes. New messages (the
//! summary, with an empty `extra`) become `response_item` message lines with the
//! timestamp of the line before them. An envelope with keys besides
//! `timestamp`, `type` and `payload`, or without a timestamp, passes through.

use super::openai::{decode_part, encode_part};
use super::{Adapter, DecodeError, Record, Unit};
use crate::model::{
    ArgsForm, Content, ContentForm, EarlierCompaction, Message, MessageMeta, Part, Role, Session,
    ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// The Codex rollout dialect.
pub struct Codex;

/// Line types of a rollout; a file whose first lines are mostly these is Codex.
const LINE_TYPES: &[&str] =
    &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

// The OpenAI adapter's slot marker, so its encoder fills (or removes) these
// slots when a Codex session is converted with `--to openai`.
use super::openai::{is_slot, slot};

/// Key of a private marker record (a Unicode noncharacter: no real line has it).
const MARK: &str = "\u{fdd0}compactor:codex";

/// The tool name given to `local_shell_call` items, which carry none.
const LOCAL_SHELL: &str = "local_shell";

/// Wraps private data as a marker record.
fn marker(key: &str, data: Value) -> Value {
    let mut inner = Map::new();
    inner.insert(key.to_string(), data);
    let mut outer = Map::new();
    outer.insert(MARK.to_string(), Value::Object(inner));
    Value::Object(outer)
}

/// The private data of a marker record, if `v` is one.
fn marker_of(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()?.get(MARK)?.as_object()
}

/// The `payload` of a `session_meta` line, whether the line passed through as
/// a record or became the system message's marker (`crate::discover::facts` reads the
/// session's `cwd` from it).
pub fn session_meta_payload(v: &Value) -> Option<&Map<String, Value>> {
    let line = match marker_of(v).and_then(|k| k.get("session_meta")) {
        Some(line) => line,
        None => v,
    };
    if line.get("type")?.as_str()? != "session_meta" {
        return None;
    }
    line.get("payload")?.as_object()
}

/// The value left at `content` of a tool result whose `output` was neither a
/// string nor an array: the single opaque part is written back as it was.
fn raw_output_slot() -> Value {
    marker("raw_output", Value::Bool(true))
}

impl Adapter for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn unit(&self) -> Unit {
        Unit::File
    }

    fn detect(&self, first: &[Value]) -> bool {
        let lines = first.iter().filter(|v| line_type(v).is_some()).count();
        lines * 2 > first.len()
            && first.iter().any(|v| {
                matches!(line_type(v), Some("session_meta" | "response_item" | "compacted"))
            })
    }

    fn decode(&self, records: Vec<Record>) -> Result<Session, DecodeError> {
        decode_records(records)
    }

    fn encode(&self, session: &Session, _compaction: Option<&Value>) -> Vec<Value> {
        // The compaction object goes to the report only: the file stays a rollout Codex reads.
        encode_session(session)
    }
}

/// The line type when `v` has the shape of a rollout line.
fn line_type(v: &Value) -> Option<&str> {
    let map = v.as_object()?;
    let ty = map.get("type")?.as_str()?;
    (LINE_TYPES.contains(&ty) && map.get("payload").is_some_and(Value::is_object)).then_some(ty)
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// What a chat item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Message,
    Call,
    Output,
    Reasoning,
}

/// One step of the flattened line stream.
enum Step {
    /// A record written back verbatim, or a private marker.
    Keep(Value),
    /// A chat item. `ts` is the line's timestamp, `None` inside a replacement
    /// history, whose items take their `compacted` line's time as `meta.timestamp` only.
    Item {
        kind: Kind,
        payload: Map<String, Value>,
        ts: Option<String>,
        at: Option<String>,
        fallback: Value,
    },
    /// The `session_meta` line that holds the system prompt.
    Meta { line: Map<String, Value>, text: String },
    /// A `compacted` line whose summary is its `message` (no replacement history).
    Summary { line: Map<String, Value>, text: String },
}

/// A line that waits to be placed: kept as is, or reasoning looking for its message.
enum Pending {
    Keep(Value),
    Reasoning { raw: Map<String, Value>, ts: Option<String>, fallback: Value },
}

/// A message being built, with its layout entries (their shape is described at [`encode_message`]).
struct Building {
    message: Message,
    entries: Vec<Value>,
    /// Whether the encoder needs the entries (several lines, or per-call timestamps).
    layout: bool,
}

#[derive(Default)]
struct Decoder {
    done: Vec<Building>,
    pending: Vec<Pending>,
    /// The last message is a call group that the next call joins.
    group_open: bool,
    /// Ids of every call decoded as a tool call.
    calls: HashSet<String>,
    /// The running total of the previous `token_count`, to skip repeats.
    last_total: Option<Value>,
}

fn decode_records(records: Vec<Record>) -> Result<Session, DecodeError> {
    let first_source = records.first().map(|r| r.source.clone()).unwrap_or_default();
    for r in &records {
        match r.value.as_object() {
            Some(m) if m.get("type").is_some_and(Value::is_string) => {}
            Some(_) => {
                return Err(DecodeError::at(
                    &r.source,
                    "a Codex rollout line needs a string `type`",
                ));
            }
            None => {
                return Err(DecodeError::at(
                    &r.source,
                    "expected a Codex rollout line (a JSON object)",
                ));
            }
        }
    }
    let last_compacted = records.iter().rposition(|r| is_compacted(&r.value));
    let mut earlier = Vec::new();
    let mut last_usage_total: Option<u64> = None;
    let mut id = None;
    let mut meta_seen = false;
    let mut steps = Vec::with_capacity(records.len());
    for (i, r) in records.into_iter().enumerate() {
        let value = r.value;
        if let Some(total) = token_total(&value) {
            last_usage_total = Some(total);
        }
        if is_compacted(&value) {
            earlier.push(EarlierCompaction { pre_tokens: last_usage_total, trigger: None });
        }
        if !meta_seen
            && value.get("timestamp").is_some_and(Value::is_string)
            && let Some((line, text)) = session_meta(&value)
        {
            meta_seen = true;
            id = value
                .get("payload")
                .and_then(|p| p.get("id"))
                .and_then(Value::as_str)
                .map(str::to_string);
            steps.push(Step::Meta { line, text });
            continue;
        }
        match last_compacted {
            Some(k) if i < k => steps.push(Step::Keep(value)),
            Some(k) if i == k => expand_compacted(value, &mut steps),
            _ => steps.push(line_step(value)),
        }
    }
    let mut d = Decoder::default();
    for step in steps {
        d.step(step);
    }
    d.flush_reasoning();
    let trailing = d.pending.drain(..).filter_map(|p| match p {
        Pending::Keep(v) => Some(v),
        Pending::Reasoning { .. } => None,
    });
    let trailing: Vec<Value> = trailing.collect();
    let messages = d.done.into_iter().map(Building::finish).collect();
    Ok(Session {
        id: id.unwrap_or_else(|| first_source.to_string()),
        source: first_source,
        messages,
        trailing,
        earlier_compactions: earlier,
        ..Session::default()
    })
}

fn is_compacted(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("compacted")
        && v.get("payload").is_some_and(Value::is_object)
}

/// The request size a `token_count` line reports (its last call's total), if any.
fn token_total(v: &Value) -> Option<u64> {
    let p = v.get("payload")?;
    if v.get("type")?.as_str()? != "event_msg" || p.get("type")?.as_str()? != "token_count" {
        return None;
    }
    let last = p.get("info")?.get("last_token_usage")?;
    last.get("total_tokens").or_else(|| last.get("input_tokens"))?.as_u64()
}

/// The `session_meta` line as a template (its prompt text taken out) and the prompt.
fn session_meta(v: &Value) -> Option<(Map<String, Value>, String)> {
    let mut line = v.as_object()?.clone();
    if line.get("type")?.as_str()? != "session_meta" {
        return None;
    }
    let text = line
        .get_mut("payload")?
        .as_object_mut()?
        .get_mut("base_instructions")?
        .as_object_mut()?
        .get_mut("text")?;
    let prompt = text.as_str()?.to_string();
    *text = slot();
    Some((line, prompt))
}

/// The steps of the last `compacted` line: its replacement history becomes live items.
fn expand_compacted(value: Value, steps: &mut Vec<Step>) {
    let Value::Object(mut line) = value else { return };
    let ts = line.get("timestamp").and_then(Value::as_str).map(str::to_string);
    let Some(payload) = line.get_mut("payload").and_then(Value::as_object_mut) else {
        steps.push(Step::Keep(Value::Object(line)));
        return;
    };
    match payload.get("replacement_history") {
        Some(Value::Array(_)) => {
            let Some(Value::Array(items)) = payload.insert("replacement_history".into(), slot())
            else {
                return;
            };
            steps.push(Step::Keep(marker("open", Value::Object(line))));
            for item in items {
                let fallback = marker("rh_item", item.clone());
                match item {
                    Value::Object(p) => match classify(&p) {
                        Some(kind) => steps.push(Step::Item {
                            kind,
                            payload: p,
                            ts: None,
                            at: ts.clone(),
                            fallback,
                        }),
                        None => steps.push(Step::Keep(fallback)),
                    },
                    _ => steps.push(Step::Keep(fallback)),
                }
            }
            steps.push(Step::Keep(marker("close", Value::Bool(true))));
        }
        None => match payload.get("message") {
            Some(Value::String(s)) if !s.is_empty() && ts.is_some() => {
                let text = s.clone();
                payload.insert("message".into(), slot());
                steps.push(Step::Summary { line, text });
            }
            _ => steps.push(Step::Keep(Value::Object(line))),
        },
        Some(_) => steps.push(Step::Keep(Value::Object(line))),
    }
}

/// One ordinary line: a chat item when it is a well-formed `response_item`, else kept.
fn line_step(value: Value) -> Step {
    let understood = value.as_object().is_some_and(|m| {
        m.len() == 3
            && m.get("type").and_then(Value::as_str) == Some("response_item")
            && m.get("timestamp").is_some_and(Value::is_string)
            && m.get("payload").and_then(Value::as_object).is_some_and(|p| classify(p).is_some())
    });
    if !understood {
        return Step::Keep(value);
    }
    let ts = value.get("timestamp").and_then(Value::as_str).map(str::to_string);
    let payload = value.get("payload").and_then(Value::as_object).cloned().unwrap_or_default();
    match classify(&payload) {
        Some(kind) => Step::Item { kind, payload, at: ts.clone(), ts, fallback: value },
        None => Step::Keep(value),
    }
}

/// What kind of chat item a payload is, or `None` when it is not one we can
/// take apart and put back exactly (it then passes through).
fn classify(p: &Map<String, Value>) -> Option<Kind> {
    let s = |k: &str| p.get(k).is_some_and(Value::is_string);
    let has = |k: &str| p.contains_key(k);
    match p.get("type")?.as_str()? {
        "message" => {
            (s("role") && p.get("content").is_some_and(Value::is_array) && !has("timestamp"))
                .then_some(Kind::Message)
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            let args = match p.get("type")?.as_str()? {
                "function_call" => s("name") && s("arguments"),
                "custom_tool_call" => s("name") && s("input"),
                _ => has("action") && !has("name"),
            };
            let clash = has("function") || (has("id") && has("item_id"));
            (args && s("call_id") && !clash).then_some(Kind::Call)
        }
        "function_call_output" | "custom_tool_call_output" => {
            let clash = ["timestamp", "tool_call_id", "content", "role"].iter().any(|k| has(k));
            (s("call_id") && has("output") && !clash).then_some(Kind::Output)
        }
        "reasoning" => Some(Kind::Reasoning),
        _ => None,
    }
}

impl Building {
    fn new(message: Message) -> Building {
        Building { message, entries: Vec::new(), layout: false }
    }

    /// The message, with its layout marker last in `attached` when it needs one.
    fn finish(mut self) -> Message {
        if self.layout {
            self.message.attached_mut().push(marker("layout", Value::Array(self.entries)));
        }
        self.message
    }
}

fn entry(key: &str, value: Value, ts: Option<&String>) -> Value {
    let mut e = Map::new();
    e.insert(key.to_string(), value);
    if let Some(ts) = ts {
        e.insert("timestamp".into(), Value::String(ts.clone()));
    }
    Value::Object(e)
}

impl Decoder {
    fn step(&mut self, step: Step) {
        match step {
            Step::Keep(v) => self.keep(v),
            Step::Item { kind, payload, ts, at, fallback } => match kind {
                Kind::Reasoning => {
                    self.pending.push(Pending::Reasoning { raw: payload, ts, fallback })
                }
                Kind::Message => self.message(payload, ts, at),
                Kind::Call => self.call(payload, ts, at),
                Kind::Output => self.output(payload, ts, at, fallback),
            },
            Step::Meta { line, text } => self.marked(Role::System, text, line, "session_meta"),
            Step::Summary { line, text } => {
                self.marked(Role::User, text, line, "compacted_message")
            }
        }
    }

    /// A message made from a whole non-item line (the session's metadata, a
    /// compaction summary), carrying that line as its marker for re-encoding.
    fn marked(&mut self, role: Role, text: String, line: Map<String, Value>, name: &str) {
        self.flush_reasoning();
        let ts = line.get("timestamp").and_then(Value::as_str).map(str::to_string);
        let mut m = Message::text(role, text);
        if let Some(ts) = &ts {
            m.extra_mut().insert("timestamp".into(), Value::String(ts.clone()));
        }
        m.meta.timestamp = ts;
        m.attached = self.take_keeps().into();
        m.attached_mut().push(marker(name, Value::Object(line)));
        self.push(Building::new(m));
    }

    fn push(&mut self, b: Building) {
        self.group_open = false;
        self.done.push(b);
    }

    fn keep(&mut self, v: Value) {
        if marker_of(&v).is_some() {
            // Reasoning never reaches across a replacement-history boundary.
            self.flush_reasoning();
            self.group_open = false;
        } else {
            self.note_usage(&v);
        }
        self.pending.push(Pending::Keep(v));
    }

    /// Turns waiting reasoning into passthrough records, in place.
    fn flush_reasoning(&mut self) {
        for p in &mut self.pending {
            if let Pending::Reasoning { fallback, .. } = p {
                *p = Pending::Keep(std::mem::take(fallback));
            }
        }
    }

    /// The waiting records (reasoning already flushed).
    fn take_keeps(&mut self) -> Vec<Value> {
        self.pending
            .drain(..)
            .filter_map(|p| match p {
                Pending::Keep(v) => Some(v),
                Pending::Reasoning { .. } => None,
            })
            .collect()
    }

    /// Moves waiting lines into an assistant message: records before the first
    /// reasoning go to `attached`, the rest become layout entries.
    fn absorb(&mut self, b: &mut Building, start: bool) {
        let mut seen_reasoning = !start;
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pending::Keep(v) if !seen_reasoning => b.message.attached_mut().push(v),
                Pending::Keep(v) => b.entries.push(entry("record", v, None)),
                Pending::Reasoning { raw, ts, .. } => {
                    seen_reasoning = true;
                    b.layout = true;
                    let k = b
                        .message
                        .content
                        .parts
                        .iter()
                        .filter(|p| matches!(p, Part::Reasoning(_)))
                        .count();
                    let at = b
                        .message
                        .content
                        .parts
                        .iter()
                        .take_while(|p| matches!(p, Part::Reasoning(_)))
                        .count();
                    b.message.content.parts_mut().insert(at, Part::Reasoning(raw));
                    b.message.content.form = ContentForm::Parts;
                    b.entries.push(entry("reasoning", Value::from(k), ts.as_ref()));
                }
            }
        }
    }

    fn message(&mut self, payload: Map<String, Value>, ts: Option<String>, at: Option<String>) {
        let role = Role::parse(payload.get("role").and_then(Value::as_str).unwrap_or_default());
        let mut extra = Map::new();
        if let Some(ts) = &ts {
            extra.insert("timestamp".into(), Value::String(ts.clone()));
        }
        let mut parts = Vec::new();
        for (k, v) in payload {
            match k.as_str() {
                "role" => {
                    extra.insert(k, slot());
                }
                "content" => {
                    if let Value::Array(items) = v {
                        parts = items.into_iter().map(decode_part).collect();
                    }
                    extra.insert(k, slot());
                }
                _ => {
                    extra.insert(k, v);
                }
            }
        }
        let message = Message {
            role: role.clone(),
            content: Content { parts: Default::default(), form: ContentForm::Parts },
            tool_calls: Default::default(),
            tool_call_id: None,
            reasoning: None,
            meta: MessageMeta { timestamp: at, usage: None },
            extra: extra.into(),
            attached: Default::default(),
        };
        let mut b = Building::new(message);
        if role == Role::Assistant {
            self.absorb(&mut b, true);
        } else {
            self.flush_reasoning();
            b.message.attached = self.take_keeps().into();
        }
        b.message.content.parts_mut().extend(parts);
        // Every decoded message ends its `attached` with its own marker, so
        // records moved in front of it later are never mistaken for its own.
        b.layout = true;
        b.entries.push(entry("content", Value::Bool(true), None));
        self.push(b);
    }

    fn call(&mut self, payload: Map<String, Value>, ts: Option<String>, at: Option<String>) {
        let call = decode_call(payload);
        self.calls.insert(call.id.clone());
        let e = entry("call", Value::String(call.id.clone()), ts.as_ref());
        if self.group_open
            && let Some(mut b) = self.done.pop()
        {
            self.absorb(&mut b, false);
            b.entries.push(e);
            b.message.tool_calls_mut().push(call);
            self.done.push(b);
            return;
        }
        let mut extra = Map::new();
        if let Some(ts) = &ts {
            extra.insert("timestamp".into(), Value::String(ts.clone()));
        }
        let message = Message {
            role: Role::Assistant,
            content: Content { parts: Default::default(), form: ContentForm::Null },
            tool_calls: Arc::new(vec![call]),
            tool_call_id: None,
            reasoning: None,
            meta: MessageMeta { timestamp: at, usage: None },
            extra: extra.into(),
            attached: Default::default(),
        };
        let mut b = Building::new(message);
        b.layout = true;
        self.absorb(&mut b, true);
        b.entries.push(e);
        self.push(b);
        self.group_open = true;
    }

    fn output(
        &mut self,
        payload: Map<String, Value>,
        ts: Option<String>,
        at: Option<String>,
        fallback: Value,
    ) {
        let call_id =
            payload.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
        if !self.calls.contains(&call_id) {
            // Codex drops an output whose call is gone before it builds a request.
            self.keep(fallback);
            return;
        }
        self.flush_reasoning();
        let mut extra = Map::new();
        if let Some(ts) = &ts {
            extra.insert("timestamp".into(), Value::String(ts.clone()));
        }
        let mut content = Content { parts: Default::default(), form: ContentForm::String };
        for (k, v) in payload {
            match k.as_str() {
                "call_id" => {
                    extra.insert("tool_call_id".into(), slot());
                }
                "output" => match v {
                    Value::String(s) => {
                        content = Content::from_text(s);
                        extra.insert("content".into(), slot());
                    }
                    Value::Array(items) => {
                        content = Content {
                            parts: Arc::new(items.into_iter().map(decode_part).collect()),
                            form: ContentForm::Parts,
                        };
                        extra.insert("content".into(), slot());
                    }
                    other => {
                        content = Content {
                            parts: Arc::new(vec![Part::Other(other)]),
                            form: ContentForm::Parts,
                        };
                        extra.insert("content".into(), raw_output_slot());
                    }
                },
                _ => {
                    extra.insert(k, v);
                }
            }
        }
        let message = Message {
            role: Role::Tool,
            content,
            tool_calls: Default::default(),
            tool_call_id: Some(call_id),
            reasoning: None,
            meta: MessageMeta { timestamp: at, usage: None },
            extra: extra.into(),
            attached: self.take_keeps().into(),
        };
        self.push(Building::new(message));
    }

    /// Gives a `token_count`'s per-request usage to the assistant message it follows.
    fn note_usage(&mut self, v: &Value) {
        let Some(p) =
            v.get("payload").filter(|_| v.get("type").and_then(Value::as_str) == Some("event_msg"))
        else {
            return;
        };
        if p.get("type").and_then(Value::as_str) != Some("token_count") {
            return;
        }
        let Some(info) = p.get("info").filter(|i| i.is_object()) else { return };
        let total = info.get("total_token_usage").cloned();
        if total.is_some() && total == self.last_total {
            return;
        }
        self.last_total = total;
        let Some(last) = info.get("last_token_usage").and_then(Value::as_object) else { return };
        // Reasoning still waiting means this request's output is not decoded yet.
        if self.pending.iter().any(|p| matches!(p, Pending::Reasoning { .. })) {
            return;
        }
        let Some(b) = self.done.last_mut() else { return };
        if b.message.role != Role::Assistant || b.message.meta.usage.is_some() {
            return;
        }
        let get = |k: &str| last.get(k).and_then(Value::as_u64);
        // Codex's input_tokens include the cached ones (OpenAI's convention).
        let cached = get("cached_input_tokens");
        let usage = Usage {
            input_tokens: get("input_tokens").map(|i| i.saturating_sub(cached.unwrap_or(0))),
            cache_read_tokens: cached,
            cache_write_tokens: None,
            output_tokens: get("output_tokens"),
        };
        if usage != Usage::default() {
            b.message.meta.usage = Some(usage);
        }
    }
}

/// A call item as a tool call: `call_id` → the `id` slot, the name and
/// arguments → the `function` slot, an item `id` → `item_id`, the rest kept.
fn decode_call(payload: Map<String, Value>) -> ToolCall {
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut call = ToolCall { args_form: ArgsForm::String, ..ToolCall::default() };
    call.name = match payload.get("name").and_then(Value::as_str) {
        Some(n) => n.to_string(),
        None => LOCAL_SHELL.to_string(),
    };
    for (k, v) in payload {
        match k.as_str() {
            "call_id" => {
                call.id = v.as_str().unwrap_or_default().to_string();
                call.extra.insert("id".into(), slot());
            }
            "name" | "arguments" | "input" | "action" => {
                match (kind.as_str(), k.as_str(), v) {
                    ("function_call", "arguments", Value::String(s)) => call.arguments = s,
                    ("custom_tool_call", "input", input) => {
                        let mut wrapped = Map::new();
                        wrapped.insert("input".into(), input);
                        call.arguments = Value::Object(wrapped).to_string();
                    }
                    ("local_shell_call", "action", action) => call.arguments = action.to_string(),
                    _ => {}
                }
                if !call.extra.contains_key("function") {
                    call.extra.insert("function".into(), slot());
                }
            }
            "id" => {
                call.extra.insert("item_id".into(), v);
            }
            _ => {
                call.extra.insert(k, v);
            }
        }
    }
    call
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// Writes lines in order, collecting a replacement history while one is open.
struct Writer {
    out: Vec<Value>,
    /// Timestamp of the last line written: new lines take their neighbour's.
    last_ts: Option<String>,
    /// An open `compacted` line and the items gathered for its history.
    history: Option<(Map<String, Value>, Vec<Value>)>,
}

impl Writer {
    /// A record from `attached` / `trailing`: written as is, or a marker acted on.
    fn record(&mut self, v: &Value) {
        let Some(mark) = marker_of(v) else {
            self.close();
            self.note_ts(v);
            self.out.push(v.clone());
            return;
        };
        if let Some(Value::Object(line)) = mark.get("open") {
            self.close();
            self.history = Some((line.clone(), Vec::new()));
        } else if let Some(item) = mark.get("rh_item") {
            match self.history.as_mut() {
                Some((_, items)) => items.push(item.clone()),
                // Its history was closed by a change around it: keep it as a line.
                None => self.item(item.clone(), None),
            }
        } else if mark.contains_key("close") {
            self.close();
        } else if let Some(Value::Array(entries)) = mark.get("layout") {
            // Another message's layout (moved here with folded records): only its records stay.
            for e in entries {
                if let Some(r) = e.get("record") {
                    self.record(r);
                }
            }
        }
    }

    /// An owned item: into the open replacement history, or as a `response_item` line.
    fn item(&mut self, payload: Value, ts: Option<&str>) {
        if let Some((_, items)) = self.history.as_mut() {
            items.push(payload);
            return;
        }
        let ts = ts.map(str::to_string).or_else(|| self.last_ts.clone());
        let mut line = Map::new();
        if let Some(ts) = &ts {
            line.insert("timestamp".into(), Value::String(ts.clone()));
        }
        line.insert("type".into(), Value::String("response_item".into()));
        line.insert("payload".into(), payload);
        self.last_ts = ts;
        self.out.push(Value::Object(line));
    }

    /// A whole line built from a template.
    fn line(&mut self, line: Value) {
        self.close();
        self.note_ts(&line);
        self.out.push(line);
    }

    fn note_ts(&mut self, v: &Value) {
        if let Some(ts) = v.get("timestamp").and_then(Value::as_str) {
            self.last_ts = Some(ts.to_string());
        }
    }

    /// Writes the open `compacted` line with the history gathered.
    fn close(&mut self) {
        let Some((mut line, items)) = self.history.take() else { return };
        if let Some(p) = line.get_mut("payload").and_then(Value::as_object_mut) {
            p.insert("replacement_history".into(), Value::Array(items));
        }
        self.note_ts(&Value::Object(line.clone()));
        self.out.push(Value::Object(line));
    }
}

fn encode_session(session: &Session) -> Vec<Value> {
    let mut w = Writer { out: Vec::new(), last_ts: None, history: None };
    for m in &session.messages {
        encode_message(&mut w, m);
    }
    for r in &session.trailing {
        w.record(r);
    }
    w.close();
    w.out
}

/// Returns true if and only if `m` was made by the pipeline (the summary), not
/// decoded: every decoded message keeps at least its timestamp or its payload
/// template in `extra`, or has calls.
fn is_new(m: &Message) -> bool {
    m.extra.is_empty() && m.tool_calls.is_empty()
}

/// Returns true if and only if `v` is a marker that describes its message's own lines.
fn is_own_marker(v: &Value) -> bool {
    marker_of(v).is_some_and(|k| {
        ["layout", "session_meta", "compacted_message"].iter().any(|x| k.contains_key(*x))
    })
}

/// Writes one message's lines. Its own marker (last in `attached`) is either
/// a line template (`session_meta`, `compacted_message`) or a `layout`: the
/// message's lines in order, each entry one of `{"reasoning": k, "timestamp"}`
/// (its k-th reasoning part), `{"content": true}` (its message line, dated by
/// `extra.timestamp`), `{"call": id, "timestamp"}` and `{"record": line}` (a
/// non-chat line between them). Parts and calls the layout does not name (or
/// that the pipeline removed) are written at the end, or skipped.
fn encode_message(w: &mut Writer, m: &Message) {
    // A decoded message's own marker is the last element of `attached`:
    // records moved here from folded or dropped messages always come before it.
    let own = match m.attached.last() {
        Some(v) if !is_new(m) && m.role != Role::Tool && is_own_marker(v) => {
            Some(m.attached.len() - 1)
        }
        _ => None,
    };
    for (i, v) in m.attached.iter().enumerate() {
        if Some(i) != own {
            w.record(v);
        }
    }
    let own = own.and_then(|i| marker_of(&m.attached[i]));
    if let Some(Value::Object(line)) = own.and_then(|k| k.get("session_meta")) {
        let mut line = line.clone();
        if let Some(t) = line
            .get_mut("payload")
            .and_then(|p| p.get_mut("base_instructions"))
            .and_then(|b| b.get_mut("text"))
        {
            *t = Value::String(m.text_content().into_owned());
        }
        w.line(Value::Object(line));
        return;
    }
    if let Some(Value::Object(line)) = own.and_then(|k| k.get("compacted_message")) {
        let mut line = line.clone();
        if let Some(t) = line.get_mut("payload").and_then(|p| p.get_mut("message")) {
            *t = Value::String(m.text_content().into_owned());
        }
        w.line(Value::Object(line));
        return;
    }
    let ts = m.extra.get("timestamp").and_then(Value::as_str);
    if m.role == Role::Tool {
        w.item(output_payload(m), ts);
        return;
    }
    let has_template = m.extra.get("type").and_then(Value::as_str) == Some("message");
    let visible = m.content.parts.iter().any(|p| !matches!(p, Part::Reasoning(_)));
    let content_due = has_template || visible || m.tool_calls.is_empty();
    let reasoning: Vec<&Map<String, Value>> = m
        .content
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Reasoning(raw) => Some(raw),
            _ => None,
        })
        .collect();
    let mut reasoning_done = vec![false; reasoning.len()];
    let mut calls_done = vec![false; m.tool_calls.len()];
    let mut content_done = !content_due;
    let entries = own.and_then(|k| k.get("layout")).and_then(Value::as_array);
    let layout_has_content =
        entries.is_some_and(|es| es.iter().any(|e| e.get("content").is_some()));
    for e in entries.into_iter().flatten() {
        let ets = e.get("timestamp").and_then(Value::as_str).or(ts);
        if let Some(k) = e.get("reasoning").and_then(Value::as_u64) {
            let k = k as usize;
            if let (Some(raw), Some(done)) = (reasoning.get(k), reasoning_done.get_mut(k))
                && !*done
            {
                *done = true;
                w.item(Value::Object((*raw).clone()), ets);
            }
        } else if let Some(r) = e.get("record") {
            w.record(r);
        } else if e.get("content").is_some() {
            if !content_done {
                content_done = true;
                w.item(content_payload(m), ts);
            }
        } else if let Some(id) = e.get("call").and_then(Value::as_str) {
            if !content_done && !layout_has_content {
                content_done = true;
                w.item(content_payload(m), ets);
            }
            // The first call with this id not yet written: ids may repeat
            // (fuzz finding `codex_repeated_call_id`).
            if let Some(k) =
                (0..m.tool_calls.len()).find(|&k| m.tool_calls[k].id == id && !calls_done[k])
            {
                calls_done[k] = true;
                w.item(call_payload(&m.tool_calls[k]), ets);
            }
        }
    }
    for (k, raw) in reasoning.iter().enumerate() {
        if !reasoning_done[k] {
            w.item(Value::Object((*raw).clone()), ts);
        }
    }
    if !content_done {
        w.item(content_payload(m), ts);
    }
    for (k, call) in m.tool_calls.iter().enumerate() {
        if !calls_done[k] {
            w.item(call_payload(call), ts);
        }
    }
}

/// A content part as Codex writes it: plain `text` parts (added by the
/// pipeline) become `input_text` / `output_text`, which is all Codex writes.
fn codex_part(p: &Part, role: &Role) -> Value {
    match p {
        Part::Text(raw) if raw.get("type").and_then(Value::as_str) == Some("text") => {
            let mut raw = raw.clone();
            let ty = if *role == Role::Assistant { "output_text" } else { "input_text" };
            raw.insert("type".into(), Value::String(ty.into()));
            Value::Object(raw)
        }
        other => encode_part(other),
    }
}

/// The `message` payload of a message: its template filled, or a fresh one.
fn content_payload(m: &Message) -> Value {
    let parts: Vec<Value> = m
        .content
        .parts
        .iter()
        .filter(|p| !matches!(p, Part::Reasoning(_)))
        .map(|p| codex_part(p, &m.role))
        .collect();
    let role = Value::String(m.role.as_str().to_string());
    let mut payload = Map::new();
    if m.extra.get("type").and_then(Value::as_str) == Some("message") {
        for (k, v) in m.extra.iter() {
            match k.as_str() {
                "timestamp" => {}
                "role" if is_slot(v) => {
                    payload.insert(k.clone(), role.clone());
                }
                "content" if is_slot(v) => {
                    payload.insert(k.clone(), Value::Array(parts.clone()));
                }
                _ => {
                    payload.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if payload.is_empty() {
        payload.insert("type".into(), Value::String("message".into()));
    }
    if !payload.contains_key("role") {
        payload.insert("role".into(), role);
    }
    if !payload.contains_key("content") {
        payload.insert("content".into(), Value::Array(parts));
    }
    Value::Object(payload)
}

/// The `*_output` payload of a tool result.
fn output_payload(m: &Message) -> Value {
    let raw = m.extra.get("content").is_some_and(|v| marker_of(v).is_some());
    let output = match (&m.content.form, m.content.parts.as_slice()) {
        (_, [Part::Other(v)]) if raw => v.clone(),
        (ContentForm::Parts, parts) => {
            Value::Array(parts.iter().map(|p| codex_part(p, &Role::Tool)).collect())
        }
        _ => Value::String(m.content.joined_text().into_owned()),
    };
    let call_id = Value::String(m.tool_call_id.clone().unwrap_or_default());
    let mut payload = Map::new();
    for (k, v) in m.extra.iter() {
        match k.as_str() {
            "timestamp" => {}
            "tool_call_id" => {
                payload.insert("call_id".into(), call_id.clone());
            }
            "content" => {
                payload.insert("output".into(), output.clone());
            }
            _ => {
                payload.insert(k.clone(), v.clone());
            }
        }
    }
    if !payload.contains_key("type") {
        payload.insert("type".into(), Value::String("function_call_output".into()));
    }
    if !payload.contains_key("call_id") {
        payload.insert("call_id".into(), call_id);
    }
    if !payload.contains_key("output") {
        payload.insert("output".into(), output);
    }
    Value::Object(payload)
}

/// The call item of a tool call, filled back into its template.
fn call_payload(call: &ToolCall) -> Value {
    let kind = call.extra.get("type").and_then(Value::as_str).unwrap_or("function_call");
    let mut payload = Map::new();
    let put_function = |payload: &mut Map<String, Value>| match kind {
        "custom_tool_call" => {
            payload.insert("name".into(), Value::String(call.name.clone()));
            let input = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(Value::Object(mut o)) if o.len() == 1 && o.contains_key("input") => {
                    o.remove("input").unwrap_or_default()
                }
                _ => Value::String(call.arguments.clone()),
            };
            payload.insert("input".into(), input);
        }
        "local_shell_call" => {
            let action = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            payload.insert("action".into(), action);
        }
        _ => {
            payload.insert("name".into(), Value::String(call.name.clone()));
            payload.insert("arguments".into(), Value::String(call.arguments.clone()));
        }
    };
    let call_id = Value::String(call.id.clone());
    for (k, v) in &call.extra {
        match k.as_str() {
            "id" => {
                payload.insert("call_id".into(), call_id.clone());
            }
            "function" => put_function(&mut payload),
            "item_id" => {
                payload.insert("id".into(), v.clone());
            }
            _ => {
                payload.insert(k.clone(), v.clone());
            }
        }
    }
    if !payload.contains_key("type") {
        payload.insert("type".into(), Value::String(kind.to_string()));
    }
    if !call.extra.contains_key("function") {
        put_function(&mut payload);
    }
    if !payload.contains_key("call_id") {
        payload.insert("call_id".into(), call_id);
    }
    Value::Object(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::openai::OpenAi;
    use crate::model::Source;
    use serde_json::json;

    fn rec(i: usize, value: Value) -> Record {
        Record {
            source: Source { path: "t.jsonl".into(), line: Some(i as u64 + 1), index: None },
            value,
        }
    }

    fn decode(lines: &[Value]) -> Session {
        Codex.decode(lines.iter().cloned().enumerate().map(|(i, v)| rec(i, v)).collect()).unwrap()
    }

    fn line(ts: &str, ty: &str, payload: Value) -> Value {
        json!({"timestamp": ts, "type": ty, "payload": payload})
    }

    fn item(ts: &str, payload: Value) -> Value {
        line(ts, "response_item", payload)
    }

    fn meta() -> Value {
        line(
            "t0",
            "session_meta",
            json!({"id": "s-1", "cwd": "/w", "base_instructions": {"text": "be good"}}),
        )
    }

    fn text(role: &str, t: &str) -> Value {
        let ty = if role == "assistant" { "output_text" } else { "input_text" };
        json!({"type": "message", "role": role, "content": [{"type": ty, "text": t}]})
    }

    fn call(id: &str) -> Value {
        json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": id})
    }

    fn output(id: &str, out: Value) -> Value {
        json!({"type": "function_call_output", "call_id": id, "output": out})
    }

    fn sample() -> Vec<Value> {
        vec![
            meta(),
            line("t1", "turn_context", json!({"cwd": "/w"})),
            item("t2", text("user", "list the files")),
            item(
                "t3",
                json!({"type": "reasoning", "summary": [], "content": null, "encrypted_content": "gAAA"}),
            ),
            line("t4", "event_msg", json!({"type": "agent_message", "message": "ok"})),
            item("t5", text("assistant", "Listing.")),
            item("t6", call("a")),
            line("t7", "event_msg", json!({"type": "exec_command_end", "call_id": "a"})),
            item("t8", call("b")),
            line(
                "t9",
                "event_msg",
                json!({"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": 10}, "last_token_usage": {"input_tokens": 10, "output_tokens": 3}}}),
            ),
            item("t10", output("b", json!("b.txt"))),
            item("t11", output("a", json!("a.txt"))),
            item("t12", text("assistant", "Two files.")),
        ]
    }

    /// Found by the `decode` fuzz target: two calls of one message with the
    /// same `call_id` (a corrupt rollout) were written back with the first
    /// call's timestamp for both.
    #[test]
    fn fuzz_decode_codex_repeated_call_id() {
        let lines = vec![
            meta(),
            item("t1", text("user", "go")),
            item("t2", call("c2")),
            line("t3", "event_msg", json!({"type": "agent_message", "message": "ok"})),
            item("t4", call("c2")),
            item("t5", output("c2", json!("done"))),
            item("t6", text("assistant", "Done.")),
        ];
        let s = decode(&lines);
        assert_eq!(Codex.encode(&s, None), lines);
    }

    #[test]
    fn roundtrip_keeps_every_line_and_key_order() {
        let lines = sample();
        let s = decode(&lines);
        let out = Codex.encode(&s, Some(&json!({"mode": "lean"})));
        assert_eq!(out, lines);
        let text = |v: &[Value]| v.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
        assert_eq!(text(&out), text(&lines));
    }

    #[test]
    fn parallel_calls_are_one_group_with_interleaved_records() {
        let s = decode(&sample());
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "assistant", "tool", "tool", "assistant"]
        );
        assert_eq!(s.id, "s-1");
        assert_eq!(s.messages[0].text_content(), "be good");
        let group = &s.messages[3];
        let ids: Vec<&str> = group.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(group.meta.usage.and_then(|u| u.output_tokens), Some(3));
        assert!(matches!(s.messages[2].content.parts[0], Part::Reasoning(_)));
        assert_eq!(s.messages[2].text_content(), "Listing.");
        assert_eq!(s.messages[4].tool_call_id.as_deref(), Some("b"));
        assert_eq!(s.messages[5].meta.timestamp.as_deref(), Some("t11"));
    }

    #[test]
    fn openai_conversion_fills_every_slot() {
        let s = decode(&sample());
        let v = OpenAi.encode(&s, None).remove(0);
        let text = v.to_string();
        assert!(!text.contains('\u{fdd0}'), "{text}");
        let m = &v["messages"];
        assert_eq!(m[3]["tool_calls"][0]["id"], "a");
        assert_eq!(m[3]["tool_calls"][1]["function"]["name"], "shell");
        assert_eq!(m[4]["tool_call_id"], "b");
        assert_eq!(m[4]["content"], "b.txt");
        assert_eq!(m[1]["content"][0]["text"], "list the files");
        assert_eq!(m[0]["content"], "be good");
        // Non-chat lines travel with their message; the session_meta line keeps its data.
        let carried = &m[0]["compactor_attached"][0]["compactor_codex"]["session_meta"]["payload"];
        assert_eq!(carried["id"], "s-1");
        assert_eq!(m[1]["compactor_attached"][0]["type"], "turn_context");
    }

    #[test]
    fn new_messages_take_the_previous_lines_timestamp() {
        let mut s = decode(&sample());
        // What assemble does: a fresh summary message and a note on the prompt.
        s.messages.insert(2, Message::text(Role::User, "[CONTEXT COMPACTION — REFERENCE ONLY] x"));
        s.messages[0].content.append_text("NOTE");
        s.messages[3].content.prepend_text("merged");
        let out = Codex.encode(&s, None);
        assert_eq!(out[0]["payload"]["base_instructions"]["text"], "be good\n\nNOTE");
        assert_eq!(out[2]["payload"]["content"][0]["text"], "list the files");
        assert_eq!(
            out[3],
            item(
                "t2",
                json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "[CONTEXT COMPACTION — REFERENCE ONLY] x"}]})
            )
        );
        // A part added to a decoded message is written the way Codex writes parts.
        let merged = out.iter().find(|l| l["timestamp"] == "t5").unwrap();
        assert_eq!(
            merged["payload"]["content"][0],
            json!({"type": "output_text", "text": "merged"})
        );
        assert_eq!(merged["payload"]["content"][1]["text"], "Listing.");
    }

    #[test]
    fn dropped_calls_and_folded_records_stay_consistent() {
        let mut s = decode(&sample());
        // Sanitize-like: call `b` and its result go; its records move on.
        s.messages[3].tool_calls_mut().retain(|c| c.id == "a");
        let mut dropped = s.messages.remove(4);
        let mut carried = dropped.take_attached();
        carried.append(&mut s.messages[4].take_attached());
        s.messages[4].attached = carried.into();
        let out = Codex.encode(&s, None);
        let kinds: Vec<String> = out
            .iter()
            .map(|l| {
                format!(
                    "{}/{}",
                    l["type"].as_str().unwrap(),
                    l["payload"]["type"].as_str().unwrap_or("")
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "session_meta/",
                "turn_context/",
                "response_item/message",
                "response_item/reasoning",
                "event_msg/agent_message",
                "response_item/message",
                "response_item/function_call",
                "event_msg/exec_command_end",
                "event_msg/token_count",
                "response_item/function_call_output",
                "response_item/message"
            ]
        );
        assert!(!out.iter().any(|l| l.to_string().contains('\u{fdd0}')));
        // Folding the group into a (new) summary keeps its non-chat records.
        let mut s = decode(&sample());
        let folded: Vec<Value> =
            s.messages.drain(2..6).flat_map(|mut m| m.take_attached()).collect();
        let mut summary = Message::text(Role::User, "summary");
        summary.attached = folded.into();
        s.messages.insert(2, summary);
        let out = Codex.encode(&s, None);
        assert!(out.iter().any(|l| l["payload"]["type"] == "exec_command_end"));
        assert!(out.iter().any(|l| l["payload"]["type"] == "agent_message"));
        assert!(!out.iter().any(|l| l["payload"]["type"] == "function_call"));
        let summary_line =
            out.iter().find(|l| l["payload"]["content"][0]["text"] == "summary").unwrap();
        assert_eq!(summary_line["timestamp"], "t9");
    }

    #[test]
    fn replacement_history_is_live_and_written_back_in_its_line() {
        let lines = vec![
            meta(),
            item("t1", text("user", "old ask")),
            item("t2", call("old")),
            line(
                "t3",
                "compacted",
                json!({"message": "", "replacement_history": [
                    text("user", "old ask"),
                    {"type": "compaction", "encrypted_content": "gAAAsummary"},
                    text("user", "<environment_context>x</environment_context>")
                ]}),
            ),
            item("t4", output("old", json!("late"))),
            item("t5", text("user", "new ask")),
        ];
        let s = decode(&lines);
        let texts: Vec<_> = s.messages.iter().map(Message::text_content).collect();
        assert_eq!(
            texts,
            ["be good", "old ask", "<environment_context>x</environment_context>", "new ask"]
        );
        assert_eq!(s.messages[1].meta.timestamp.as_deref(), Some("t3"));
        assert_eq!(s.earlier_compactions.len(), 1);
        assert_eq!(Codex.encode(&s, None), lines);
        // A summary inserted inside the replacement history goes into it.
        let mut s2 = s.clone();
        s2.messages.insert(2, Message::text(Role::Assistant, "S"));
        let out = Codex.encode(&s2, None);
        assert_eq!(out.len(), lines.len());
        let h = out[3]["payload"]["replacement_history"].as_array().unwrap();
        assert_eq!(h.len(), 4);
        assert_eq!(
            h[1],
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "S"}]})
        );
        assert_eq!(h[2]["type"], "compaction");
        // Folding the history's last message moves the compaction item and the close with it.
        let mut s3 = s;
        let mut folded = s3.messages.remove(2);
        let mut carried = folded.take_attached();
        carried.append(&mut s3.messages[2].take_attached());
        s3.messages[2].attached = carried.into();
        let out = Codex.encode(&s3, None);
        let h = out[3]["payload"]["replacement_history"].as_array().unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[1]["type"], "compaction");
        assert_eq!(out[4]["payload"]["output"], "late");
    }

    #[test]
    fn call_shapes_roundtrip_and_convert() {
        let lines = vec![
            meta(),
            item(
                "t1",
                json!({"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}", "call_id": "c1"}),
            ),
            item(
                "t2",
                json!({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch\n"}),
            ),
            item(
                "t3",
                json!({"type": "local_shell_call", "call_id": "c3", "status": "completed", "action": {"type": "exec", "command": ["ls"]}}),
            ),
            item("t4", output("c1", json!([{"type": "input_text", "text": "x"}]))),
            item("t5", json!({"type": "custom_tool_call_output", "call_id": "c2", "output": "ok"})),
            item("t6", output("c3", json!({"content": "done", "success": true}))),
        ];
        let s = decode(&lines);
        assert_eq!(Codex.encode(&s, None), lines);
        let calls = &s.messages[1].tool_calls;
        assert_eq!(calls[1].args_object().unwrap()["input"], "*** Begin Patch\n");
        assert_eq!(calls[2].name, LOCAL_SHELL);
        let v = OpenAi.encode(&s, None).remove(0);
        assert!(!v.to_string().contains('\u{fdd0}'));
        assert_eq!(v["messages"][1]["tool_calls"][0]["item_id"], "fc_1");
        assert_eq!(v["messages"][2]["content"][0]["text"], "x");
        // Shrunk arguments are written back in the item's own field.
        let mut s = s;
        s.messages[1].tool_calls_mut()[1].arguments = r#"{"input":"short"}"#.into();
        s.messages[2].content.replace_with_text("[terminal] one-liner");
        let out = Codex.encode(&s, None);
        assert_eq!(out[2]["payload"]["input"], "short");
        assert_eq!(
            out[4]["payload"]["output"],
            json!([{"type": "input_text", "text": "[terminal] one-liner"}])
        );
    }

    #[test]
    fn detection_is_specific() {
        assert!(Codex.detect(&sample()));
        assert!(Codex.detect(&sample()[1..]), "no session_meta (a resumed tail)");
        assert!(!Codex.detect(&[json!({"messages": [{"role": "user", "content": "x"}]})]));
        assert!(
            !Codex.detect(&[json!({"type": "user", "message": {"role": "user", "content": "x"},
            "uuid": "u", "timestamp": "t"})])
        );
        assert!(
            !Codex.detect(&[line("t", "event_msg", json!({"type": "token_count"}))]),
            "events only"
        );
        assert!(!Codex.detect(&[]));
    }

    #[test]
    fn bad_lines_are_errors_that_name_the_line() {
        for bad in [json!(5), json!("x"), json!({"payload": {}})] {
            let mut lines = sample();
            lines.insert(3, bad);
            let err = Codex
                .decode(lines.into_iter().enumerate().map(|(i, v)| rec(i, v)).collect())
                .unwrap_err();
            assert_eq!(err.source.and_then(|s| s.line), Some(4));
        }
    }

    #[test]
    fn unknown_and_malformed_items_pass_through() {
        let lines = vec![
            meta(),
            item("t1", json!({"type": "message", "role": "user", "content": "not an array"})),
            item(
                "t2",
                json!({"type": "function_call", "name": "f", "arguments": {"a": 1}, "call_id": "x"}),
            ),
            item("t3", json!({"type": "brand_new", "x": 1})),
            json!({"timestamp": "t4", "type": "response_item", "payload": text("user", "hi"), "extra": 1}),
            item("t5", text("user", "real")),
        ];
        let s = decode(&lines);
        assert_eq!(s.messages.len(), 2);
        assert_eq!(s.messages[1].attached.len(), 5);
        assert_eq!(Codex.encode(&s, None), lines);
    }

    #[test]
    fn any_value_in_any_field_roundtrips_or_errors() {
        // Every key of every line, and of every replacement-history item, set
        // to each JSON kind: never a panic, and whatever decodes encodes back.
        let mut base = sample();
        base.push(line(
            "t13",
            "compacted",
            json!({"message": "m", "replacement_history": [
            text("user", "u"), {"type": "compaction", "encrypted_content": "e"}, call("z")]}),
        ));
        base.push(item("t14", output("z", json!("late"))));
        let kinds = [
            json!(null),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
            json!([{"type": "input_text"}]),
        ];
        let mut tried = 0;
        for i in 0..base.len() {
            let mut paths: Vec<Vec<String>> = Vec::new();
            if let Some(line) = base[i].as_object() {
                for (k, v) in line {
                    paths.push(vec![k.clone()]);
                    for k2 in
                        v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_else(Vec::new)
                    {
                        paths.push(vec![k.clone(), k2]);
                    }
                }
            }
            for path in paths {
                for kind in &kinds {
                    let mut lines = base.clone();
                    let mut at = &mut lines[i];
                    for k in &path {
                        at = &mut at[k.as_str()];
                    }
                    *at = kind.clone();
                    tried += 1;
                    let records =
                        lines.iter().cloned().enumerate().map(|(i, v)| rec(i, v)).collect();
                    if let Ok(s) = Codex.decode(records) {
                        assert_eq!(Codex.encode(&s, None), lines, "{i} {path:?} {kind}");
                    }
                }
            }
        }
        assert!(tried > 300, "{tried}");
    }
}
