//! OpenAI chat format: `{"messages": [...], "tools"?: [...], ...}` or a bare array.
//!
//! ## Field map
//! - `role`: any string; unknown roles (`exit`, `function`) are kept as they are.
//! - `content`: a string, `null`, absent, or an array of parts: `text` (and any
//!   part with a string `text`), `image_url` / `input_image` (data URL or URL),
//!   `image` (Anthropic-style source), `thinking` / `reasoning` blocks; any other
//!   part is kept verbatim.
//! - `tool_calls` (`id`, `function.name`, `function.arguments` as a string or a
//!   JSON value), `tool_call_id`, `reasoning_content` / `reasoning` (string).
//! - `timestamp` / `created_at` / `_metadata.timestamp` and `usage` are read for
//!   reports, never rewritten.
//!
//! ## Key order
//! Typed fields are taken out of the message object and a slot marker is left
//! at their key, so encoding fills the same slot: a record written back has its
//! keys in the order it was read, and new keys (`compaction`) go last.

use super::{Adapter, DecodeError, Record, Unit, record_id, single};
use crate::model::{
    ArgsForm, Content, ContentForm, ImageInfo, Layout, Message, MessageMeta, Part, Reasoning, Role,
    Session, Source, ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The OpenAI chat dialect.
pub struct OpenAi;

/// Message fields the reasoning text may be read from, in order of preference.
pub(crate) const REASONING_FIELDS: &[&str] = &["reasoning_content", "reasoning"];

/// Marks the key slot of a field that was taken out into a typed field. It is a
/// Unicode noncharacter, so no real input holds this exact string; encoding
/// either fills the slot or removes it.
pub(crate) const SLOT: &str = "\u{fdd0}compactor:slot";

pub(crate) fn slot() -> Value {
    Value::String(SLOT.to_string())
}

pub(crate) fn is_slot(v: &Value) -> bool {
    v.as_str() == Some(SLOT)
}

/// Message key carrying [`Message::attached`] records when a dialect with
/// non-chat records is converted to a record dialect (conversions are total).
pub(crate) const ATTACHED: &str = "compactor_attached";
/// Session key carrying [`Session::trailing`] records, likewise.
pub(crate) const TRAILING: &str = "compactor_trailing";

/// The prefix of a dialect's private layout keys (see [`carry`]).
pub(crate) const PRIVATE_KEY: &str = "\u{fdd0}compactor:";

/// A non-chat record as carried into another dialect: a dialect's private
/// layout marker (a key starting with a noncharacter) gets a plain key, and an
/// unfilled slot inside it becomes `null`, so the output holds no private text.
pub(crate) fn carry(record: &Value) -> Value {
    match record {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match k.strip_prefix(PRIVATE_KEY) {
                        Some(rest) => format!("compactor_{rest}"),
                        None => k.clone(),
                    };
                    (key, carry(v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(carry).collect()),
        v if is_slot(v) => Value::Null,
        v => v.clone(),
    }
}

/// Fills `key` in place (or appends it), or removes an unfilled slot.
pub(crate) fn fill(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            map.insert(key.to_string(), v);
        }
        None => {
            if map.get(key).is_some_and(is_slot) {
                map.shift_remove(key);
            }
        }
    }
}

impl Adapter for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn unit(&self) -> Unit {
        Unit::Record
    }

    fn detect(&self, first: &[Value]) -> bool {
        let fits = first.iter().filter(|r| looks_like_session(r)).count();
        fits * 2 > first.len()
    }

    fn decode(&self, records: Vec<Record>) -> Result<Session, DecodeError> {
        let Record { source, value } = single(records)?;
        decode_session(value, source)
    }

    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Vec<Value> {
        vec![encode_session(session, compaction)]
    }

    fn encode_lines(&self, session: &Session, compaction: Option<&Value>) -> Vec<Vec<u8>> {
        vec![super::openai_lines::session_line(session, compaction)]
    }
}

/// Returns true if and only if `v` has the shape of an OpenAI session record.
pub fn looks_like_session(v: &Value) -> bool {
    match v {
        Value::Object(map) => map.get("messages").is_some_and(Value::is_array),
        Value::Array(items) => items.iter().all(looks_like_message),
        _ => false,
    }
}

/// Reads one OpenAI session record.
pub fn decode_session(record: Value, source: Source) -> Result<Session, DecodeError> {
    let (layout, mut extra, raw_messages) = match record {
        Value::Object(mut map) => match map.insert("messages".into(), slot()) {
            Some(Value::Array(items)) => (Layout::Object, map, items),
            Some(_) => return Err(DecodeError::new("`messages` is not an array")),
            None => {
                return Err(DecodeError::new(
                    "not an OpenAI session: expected an object with a `messages` array",
                ));
            }
        },
        Value::Array(items) => (Layout::BareArray, Map::new(), items),
        other => {
            return Err(DecodeError::new(format!(
                "not an OpenAI session: expected an object or an array, found {}",
                kind_of(&other)
            )));
        }
    };
    let messages = raw_messages
        .into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            let attached = match m.as_object_mut().and_then(|o| o.shift_remove(ATTACHED)) {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(DecodeError::new(format!(
                        "message {i}: `{ATTACHED}` is {}, expected an array",
                        kind_of(&other)
                    )));
                }
                None => Vec::new(),
            };
            let mut msg =
                decode_message(m).map_err(|e| DecodeError::new(format!("message {i}: {e}")))?;
            msg.attached = attached.into();
            Ok(msg)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let trailing = match extra.shift_remove(TRAILING) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            extra.insert(TRAILING.into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    let tools = match extra.get("tools") {
        Some(v) if !v.is_null() => extra.insert("tools".into(), slot()),
        _ => None,
    };
    let id = record_id(&extra).unwrap_or_else(|| source.to_string());
    if layout == Layout::BareArray {
        extra.clear();
    }
    let extra = extra.into();
    Ok(Session { id, source, layout, messages, tools, extra, trailing, ..Session::default() })
}

/// Writes one OpenAI session record. Non-chat records of file dialects are
/// carried in `compactor_attached` (per message) and `compactor_trailing`, so
/// a conversion loses nothing; a bare array has no room for the trailing ones.
pub fn encode_session(session: &Session, compaction: Option<&Value>) -> Value {
    let messages: Vec<Value> = session
        .messages
        .iter()
        .map(|m| {
            let mut v = encode_message(m);
            if !m.attached.is_empty()
                && let Some(o) = v.as_object_mut()
            {
                o.insert(ATTACHED.into(), Value::Array(m.attached.iter().map(carry).collect()));
            }
            v
        })
        .collect();
    if session.layout == Layout::BareArray {
        return Value::Array(messages);
    }
    let mut map = (*session.extra).clone();
    map.insert("messages".into(), Value::Array(messages));
    fill(&mut map, "tools", session.tools.clone());
    if !session.trailing.is_empty() {
        map.insert(TRAILING.into(), Value::Array(session.trailing.iter().map(carry).collect()));
    }
    if let Some(c) = compaction {
        map.insert("compaction".into(), c.clone());
    }
    Value::Object(map)
}

fn looks_like_message(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.get("role").is_some_and(Value::is_string))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads one OpenAI message object.
pub fn decode_message(value: Value) -> Result<Message, String> {
    let Value::Object(mut map) = value else {
        return Err(format!("expected an object, found {}", kind_of(&value)));
    };
    let role = match map.get("role") {
        Some(Value::String(s)) => Role::parse(s),
        Some(other) => return Err(format!("`role` is {}, expected a string", kind_of(other))),
        None => return Err("missing `role`".into()),
    };
    let raw_content =
        if map.contains_key("content") { map.insert("content".into(), slot()) } else { None };
    let content = match raw_content {
        None => Content { parts: Default::default(), form: ContentForm::Absent },
        Some(Value::Null) => Content { parts: Default::default(), form: ContentForm::Null },
        Some(Value::String(s)) => Content::from_text(s),
        Some(Value::Array(items)) => Content {
            parts: Arc::new(items.into_iter().map(decode_part).collect()),
            form: ContentForm::Parts,
        },
        Some(other) => {
            return Err(format!(
                "`content` is {}, expected a string, an array or null",
                kind_of(&other)
            ));
        }
    };
    // A shape we do not understand stays where it is, untouched.
    let tool_calls = match map.get("tool_calls") {
        Some(Value::Array(items)) if items.iter().all(is_tool_call) => {
            match map.insert("tool_calls".into(), slot()) {
                Some(Value::Array(items)) => {
                    items.into_iter().filter_map(decode_tool_call).collect()
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    let tool_call_id = match map.get("tool_call_id") {
        Some(Value::String(_)) => map.insert("tool_call_id".into(), slot()).and_then(string_of),
        _ => None,
    };
    let mut reasoning = None;
    for field in REASONING_FIELDS {
        if map.get(*field).is_some_and(Value::is_string) {
            let text =
                map.insert((*field).to_string(), slot()).and_then(string_of).unwrap_or_default();
            reasoning = Some(Reasoning { field: (*field).to_string(), text });
            break;
        }
    }
    let meta = MessageMeta { timestamp: timestamp_of(&map), usage: usage_of(&map) };
    Ok(Message {
        role,
        content,
        tool_calls: tool_calls.into(),
        tool_call_id,
        reasoning,
        meta,
        extra: map.into(),
        attached: Arc::default(),
    })
}

fn string_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn timestamp_of(map: &Map<String, Value>) -> Option<String> {
    ["timestamp", "created_at"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str))
        .or_else(|| map.get("_metadata")?.get("timestamp")?.as_str())
        .map(str::to_string)
}

fn usage_of(map: &Map<String, Value>) -> Option<Usage> {
    let u = map.get("usage")?.as_object()?;
    let get = |keys: &[&str]| keys.iter().find_map(|k| u.get(*k).and_then(Value::as_u64));
    // OpenAI's prompt_tokens include the cached ones; Anthropic's input_tokens do not.
    let openai_cached =
        u.get("prompt_tokens_details").and_then(|d| d.get("cached_tokens")).and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: match get(&["prompt_tokens"]) {
            Some(p) => Some(p.saturating_sub(openai_cached.unwrap_or(0))),
            None => get(&["input_tokens"]),
        },
        cache_read_tokens: get(&["cache_read_input_tokens"]).or(openai_cached),
        cache_write_tokens: get(&["cache_creation_input_tokens"]),
        output_tokens: get(&["completion_tokens", "output_tokens"]),
    };
    (usage != Usage::default()).then_some(usage)
}

/// Classifies one content part. Never fails: an unknown part is kept as `Other`.
pub(crate) fn decode_part(value: Value) -> Part {
    let Value::Object(raw) = value else { return Part::Other(value) };
    let ty = raw.get("type").and_then(Value::as_str).unwrap_or("");
    match part_kind(ty, raw.get("text").is_some_and(Value::is_string)) {
        PartKind::Image => {
            let info = image_info(&raw);
            Part::Image { raw, info }
        }
        PartKind::Reasoning => Part::Reasoning(raw),
        PartKind::Text => Part::Text(raw),
        PartKind::Other => Part::Other(Value::Object(raw)),
    }
}

/// What a content part object is, by its `type` (`""` when it has no string
/// one) and whether its `text` is a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartKind {
    Image,
    Reasoning,
    Text,
    Other,
}

pub(crate) fn part_kind(ty: &str, text_is_string: bool) -> PartKind {
    match ty {
        "image_url" | "input_image" | "image" => PartKind::Image,
        "thinking" | "redacted_thinking" | "reasoning" => PartKind::Reasoning,
        _ if text_is_string => PartKind::Text,
        _ => PartKind::Other,
    }
}

/// Media type, inline size and URL of an image part, without decoding it.
pub(crate) fn image_info(raw: &Map<String, Value>) -> ImageInfo {
    let url = match raw.get("image_url") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("url").and_then(Value::as_str),
        _ => raw.get("url").and_then(Value::as_str),
    };
    if let Some(url) = url {
        if let Some(rest) = url.strip_prefix("data:") {
            let (header, data) = rest.split_once(',').unwrap_or((rest, ""));
            let media_type = header.split(';').next().filter(|s| !s.is_empty()).map(str::to_string);
            return ImageInfo { media_type, byte_len: data.len() as u64, url: None };
        }
        return ImageInfo { media_type: None, byte_len: 0, url: Some(url.to_string()) };
    }
    // Anthropic-style {"source": {"type": "base64", "media_type", "data"} | {"type": "url", "url"}}.
    let source = raw.get("source").and_then(Value::as_object);
    ImageInfo {
        media_type: source
            .and_then(|s| s.get("media_type"))
            .and_then(Value::as_str)
            .map(str::to_string),
        byte_len: source
            .and_then(|s| s.get("data"))
            .and_then(Value::as_str)
            .map_or(0, |d| d.len() as u64),
        url: source.and_then(|s| s.get("url")).and_then(Value::as_str).map(str::to_string),
    }
}

/// Returns true if and only if [`decode_tool_call`] reads `value`: an object
/// with a `function` object whose `name` is a string, `null` or absent.
fn is_tool_call(value: &Value) -> bool {
    let function = value.get("function").and_then(Value::as_object);
    function.is_some_and(|f| matches!(f.get("name"), None | Some(Value::Null | Value::String(_))))
}

/// Reads one call, taking its strings and maps (no copies); `None` unless
/// [`is_tool_call`]. Calls are checked first and read after, so that a list
/// with one call we cannot read stays whole.
fn decode_tool_call(value: Value) -> Option<ToolCall> {
    let Value::Object(mut extra) = value else { return None };
    let Some(Value::Object(mut function_extra)) = extra.insert("function".into(), slot()) else {
        return None;
    };
    // A `null` name or arguments stays in `function_extra`: it is written back
    // as read while the typed field is still empty ([`null_kept`]).
    let name = match function_extra.get("name") {
        Some(Value::String(_)) => {
            function_extra.insert("name".into(), slot()).and_then(string_of).unwrap_or_default()
        }
        None | Some(Value::Null) => String::new(),
        Some(_) => return None,
    };
    let (arguments, args_form) = match function_extra.get("arguments") {
        None | Some(Value::Null) => (String::new(), ArgsForm::String),
        Some(_) => match function_extra.insert("arguments".into(), slot()) {
            Some(Value::String(s)) => (s, ArgsForm::String),
            Some(v) => (v.to_string(), ArgsForm::Value),
            None => (String::new(), ArgsForm::String),
        },
    };
    let id = match extra.get("id") {
        Some(Value::String(_)) => {
            extra.insert("id".into(), slot()).and_then(string_of).unwrap_or_default()
        }
        _ => String::new(),
    };
    Some(ToolCall { id, name, arguments, args_form, extra, function_extra })
}

/// Writes one OpenAI message object.
pub fn encode_message(m: &Message) -> Value {
    let mut map = Map::clone(&m.extra);
    map.insert("role".into(), Value::String(m.role.as_str().to_string()));
    fill(&mut map, "content", encode_content(&m.content));
    let calls = (!m.tool_calls.is_empty())
        .then(|| Value::Array(m.tool_calls.iter().map(encode_tool_call).collect()));
    fill(&mut map, "tool_calls", calls);
    fill(&mut map, "tool_call_id", m.tool_call_id.clone().map(Value::String));
    for field in REASONING_FIELDS {
        let text = m
            .reasoning
            .as_ref()
            .filter(|r| r.field == *field)
            .map(|r| Value::String(r.text.clone()));
        fill(&mut map, field, text);
    }
    Value::Object(map)
}

/// The JSON of a content, or `None` when the key should be absent.
pub(crate) fn encode_content(c: &Content) -> Option<Value> {
    let all_text = c.parts.iter().all(|p| matches!(p, Part::Text(_)));
    match c.form {
        ContentForm::Absent if c.parts.is_empty() => None,
        ContentForm::Null if c.parts.is_empty() => Some(Value::Null),
        ContentForm::String | ContentForm::Absent | ContentForm::Null if all_text => {
            Some(Value::String(c.joined_text().into_owned()))
        }
        _ => Some(Value::Array(c.parts.iter().map(encode_part).collect())),
    }
}

pub(crate) fn encode_part(p: &Part) -> Value {
    match p {
        Part::Text(raw) | Part::Reasoning(raw) | Part::Image { raw, .. } => {
            Value::Object(raw.clone())
        }
        Part::Other(v) => v.clone(),
    }
}

/// Whether a call's `key` in its `function` object is written as read: it was
/// `null` and the typed field is still empty (a stage that fills it replaces it).
pub(crate) fn null_kept(function: &Map<String, Value>, key: &str, typed: &str) -> bool {
    typed.is_empty() && function.get(key).is_some_and(Value::is_null)
}

fn encode_tool_call(call: &ToolCall) -> Value {
    let mut map = call.extra.clone();
    let id =
        (!call.id.is_empty() || map.contains_key("id")).then(|| Value::String(call.id.clone()));
    fill(&mut map, "id", id);
    let mut function = call.function_extra.clone();
    // A `function` read with a name but no `arguments` (a malformed record) is
    // written back without them while they are still empty (fuzz finding
    // `openai_function_without_arguments`); a call made here always has them.
    let arguments_absent = call.arguments.is_empty()
        && function.contains_key("name")
        && !function.contains_key("arguments");
    if !null_kept(&function, "name", &call.name) {
        function.insert("name".into(), Value::String(call.name.clone()));
    }
    let arguments_absent = arguments_absent || null_kept(&function, "arguments", &call.arguments);
    let arguments = match call.args_form {
        ArgsForm::String => Value::String(call.arguments.clone()),
        ArgsForm::Value => serde_json::from_str(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone())),
    };
    if !arguments_absent {
        function.insert("arguments".into(), arguments);
    }
    map.insert("function".into(), Value::Object(function));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(v: Value) -> Result<Session, DecodeError> {
        OpenAi.decode(vec![Record { source: Source::default(), value: v }])
    }

    fn encode(s: &Session, c: Option<&Value>) -> Value {
        OpenAi.encode(s, c).remove(0)
    }

    fn roundtrip(v: Value) -> Value {
        encode(&decode(v).expect("decodes"), None)
    }

    /// Found by the `decode` fuzz target: a `function` without `arguments`
    /// came back with `"arguments": ""`.
    #[test]
    fn fuzz_decode_openai_function_without_arguments() {
        let v = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Read", "argumEnts": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]});
        assert_eq!(roundtrip(v.clone()), v);
        // A call made without an input object still gets its arguments.
        let call = ToolCall { id: "c2".into(), name: "Bash".into(), ..ToolCall::default() };
        assert_eq!(encode_tool_call(&call)["function"]["arguments"], "");
    }

    #[test]
    fn roundtrip_is_identical_with_key_order() {
        let v = json!({
            "id": "s1",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
                                              {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
                {"role": "assistant", "content": null, "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}}]},
                {"tool_call_id": "c1", "role": "tool", "content": "fn main() {}", "name": "read_file"},
                {"role": "exit", "content": "bye", "weird": [1, 2]}
            ],
            "tools": [{"type": "function", "function": {"name": "read_file"}}],
            "meta": {"k": 1}
        });
        let out = roundtrip(v.clone());
        assert_eq!(out, v);
        assert_eq!(serde_json::to_string(&out).unwrap(), serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn bare_array_roundtrip() {
        let v = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]);
        assert_eq!(roundtrip(v.clone()), v);
        assert!(OpenAi.detect(std::slice::from_ref(&v)));
    }

    #[test]
    fn arguments_as_object_are_kept_as_object() {
        let v = json!({"messages": [{"role": "assistant", "tool_calls": [
            {"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}]}]});
        let s = decode(v.clone()).unwrap();
        assert_eq!(s.messages[0].tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(encode(&s, None), v);
    }

    #[test]
    fn unknown_tool_call_shapes_pass_through() {
        let good = json!({"id": "c1", "function": {"name": "Read", "arguments": "{}"}});
        for bad in [
            json!({"weird": true}),
            json!({"function": "Read"}),
            json!({"function": {"name": 3}}),
            json!(["Read"]),
        ] {
            // One call we cannot read keeps the whole list as it was, good calls too.
            let v = json!({"messages": [{"role": "assistant", "content": "x", "tool_calls": [good, bad]}]});
            let s = decode(v.clone()).unwrap();
            assert!(s.messages[0].tool_calls.is_empty(), "{bad}");
            assert_eq!(encode(&s, None), v);
        }
        let args = json!({"function": {"arguments": {"path": "a.rs"}, "name": "Read"}, "x": 1});
        let v = json!({"messages": [{"role": "assistant", "tool_calls": [good, args]}]});
        let s = decode(v.clone()).unwrap();
        assert_eq!(s.messages[0].tool_calls.len(), 2);
        assert_eq!(s.messages[0].tool_calls[0].arguments, "{}");
        assert_eq!(s.messages[0].tool_calls[1].arguments, r#"{"path":"a.rs"}"#);
        assert_eq!(encode(&s, None), v);
    }

    #[test]
    fn image_info_reads_data_urls() {
        let v = json!({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJDRA=="}},
            {"type": "image_url", "image_url": "https://x.test/a.png"}]}]});
        let s = decode(v).unwrap();
        match &s.messages[0].content.parts[0] {
            Part::Image { info, .. } => {
                assert_eq!(info.media_type.as_deref(), Some("image/jpeg"));
                assert_eq!(info.byte_len, 8);
            }
            other => panic!("not an image: {other:?}"),
        }
        match &s.messages[0].content.parts[1] {
            Part::Image { info, .. } => {
                assert_eq!(info.url.as_deref(), Some("https://x.test/a.png"))
            }
            other => panic!("not an image: {other:?}"),
        }
    }

    #[test]
    fn bad_records_are_errors_not_panics() {
        for bad in [
            json!(42),
            json!("text"),
            json!({"no": "messages"}),
            json!({"messages": {}}),
            json!({"messages": [1]}),
            json!({"messages": [{"content": "no role"}]}),
            json!({"messages": [{"role": 5}]}),
            json!({"messages": [{"role": "user", "content": 5}]}),
            json!({"messages": [{"role": "user", "content": {"text": "obj"}}]}),
        ] {
            let err = decode(bad.clone());
            assert!(err.is_err(), "accepted {bad}");
        }
    }

    #[test]
    fn removed_reasoning_and_calls_leave_no_placeholder() {
        let v = json!({"messages": [{"role": "assistant", "content": "x", "reasoning_content": "r",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]});
        let mut s = decode(v).unwrap();
        s.messages[0].reasoning = None;
        s.messages[0].tool_calls_mut().clear();
        assert_eq!(encode(&s, None), json!({"messages": [{"role": "assistant", "content": "x"}]}));
    }

    #[test]
    fn nulls_in_the_input_stay_nulls() {
        let v = json!({"messages": [{"role": "assistant", "content": "x", "tool_calls": null, "reasoning": null,
            "tool_call_id": null}], "tools": null});
        assert_eq!(roundtrip(v.clone()), v);
        // A call's null name and arguments too, until something fills them.
        let v = json!({"messages": [{"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": null, "arguments": null}},
            {"id": "b", "function": {"arguments": null, "name": "Read"}}]}]});
        assert_eq!(roundtrip(v.clone()), v);
        let mut s = decode(v).unwrap();
        let calls = Arc::make_mut(&mut s.messages[0].tool_calls);
        calls[0].name = "Bash".into();
        calls[0].arguments = "{}".into();
        let out = encode(&s, None);
        assert_eq!(
            out["messages"][0]["tool_calls"][0]["function"],
            json!({"name": "Bash", "arguments": "{}"})
        );
        assert_eq!(
            out["messages"][0]["tool_calls"][1]["function"],
            json!({"arguments": null, "name": "Read"})
        );
    }

    #[test]
    fn non_chat_records_are_carried_and_read_back() {
        let mut s = decode(json!({"messages": [{"role": "user", "content": "a"}]})).unwrap();
        s.messages[0].attached = vec![json!({"type": "snapshot"})].into();
        s.trailing = vec![json!({"type": "summary"})];
        let v = encode(&s, None);
        assert_eq!(v["messages"][0]["compactor_attached"], json!([{"type": "snapshot"}]));
        assert_eq!(v["compactor_trailing"], json!([{"type": "summary"}]));
        let back = decode(v.clone()).unwrap();
        assert_eq!(back.messages[0].attached, s.messages[0].attached);
        assert_eq!(back.trailing, s.trailing);
        assert_eq!(encode(&back, None), v);
    }

    #[test]
    fn usage_counts_cached_tokens_once() {
        let m = json!({"role": "assistant", "content": "x",
            "usage": {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 60}, "completion_tokens": 5}});
        let u = decode(json!({"messages": [m]})).unwrap().messages[0].meta.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_tokens, u.prompt_tokens()),
            (Some(40), Some(60), Some(100))
        );
        // Anthropic's convention: input excludes what the cache served or stored.
        let m = json!({"role": "assistant", "content": "x",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5}});
        let u = decode(json!({"messages": [m]})).unwrap().messages[0].meta.usage.unwrap();
        assert_eq!(u.prompt_tokens(), Some(105));
    }

    #[test]
    fn compaction_goes_last() {
        let v = json!({"messages": [], "z": 1});
        let s = decode(v).unwrap();
        let out = encode(&s, Some(&json!({"mode": "lean"})));
        let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["messages", "z", "compaction"]);
    }
}
