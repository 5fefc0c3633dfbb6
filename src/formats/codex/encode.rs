//! Writing a Codex rollout: each message back into the lines it was read from
//! (from its layout entries), new messages as `response_item` lines with the
//! timestamp of the line before them, kept records and markers in place.

use super::*;
use crate::formats::openai::encode_part;
use crate::model::{ContentForm, Message, Part, Role, Session, ToolCall};
use serde_json::{Map, Value};

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

pub(super) fn encode_session(session: &Session) -> Vec<Value> {
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
