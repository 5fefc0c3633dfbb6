//! Reading a Codex rollout: lines flattened into steps (a `compacted` line's
//! replacement history expanded in place), chat items made into messages
//! (calls of one turn grouped, reasoning joined to its message), everything
//! else kept in place, and the layout each message needs to be written back
//! line for line.

use super::*;
use crate::formats::openai::decode_part;
use crate::formats::{DecodeError, Record, event_message};
use crate::model::{
    ArgsForm, Content, ContentForm, EarlierCompaction, Message, MessageMeta, Part, Role, Session,
    ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

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

/// A message being built, with its layout entries (their shape is described at
/// [`encode_message`](super::encode::encode_message)).
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

pub(super) fn decode_records(records: Vec<Record>) -> Result<Session, DecodeError> {
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
pub(super) fn session_meta(v: &Value) -> Option<(Map<String, Value>, String)> {
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

pub(super) fn entry(key: &str, value: Value, ts: Option<&String>) -> Value {
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
                    let parts = &b.message.content.parts;
                    let reasoning = |p: &&Part| matches!(p, Part::Reasoning(_));
                    let k = parts.iter().filter(reasoning).count();
                    let at = parts.iter().take_while(reasoning).count();
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
        let content = Content { parts: Default::default(), form: ContentForm::Parts };
        let message = line_message(role.clone(), content, extra, at);
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
        let content = Content { parts: Default::default(), form: ContentForm::Null };
        let mut message = line_message(Role::Assistant, content, extra, at);
        message.tool_calls = Arc::new(vec![call]);
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
        let mut message = line_message(Role::Tool, content, extra, at);
        message.tool_call_id = Some(call_id);
        message.attached = self.take_keeps().into();
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

/// A message read from a line: its role and content, the line's envelope
/// fields and time.
fn line_message(
    role: Role,
    content: Content,
    extra: Map<String, Value>,
    at: Option<String>,
) -> Message {
    event_message(role, content, MessageMeta { timestamp: at, usage: None, made: false }, extra)
}
