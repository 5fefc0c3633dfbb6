//! Writing: a [`Session`] -> an OpenAI record `Value`, each typed field put
//! back in its slot. `fast/lines.rs` writes the same record as JSON text.

use super::{
    ATTACHED, ContentShape, REASONING_FIELDS, TRAILING, arguments_value, call_fields, carry,
    content_shape, is_slot,
};
use crate::model::{Content, Envelope, Message, Part, Session, ToolCall};
use serde_json::{Map, Value};

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
    if session.layout == Envelope::BareArray {
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

/// Fills `key` in place (or appends it), or removes an unfilled slot.
fn fill(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
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
    match content_shape(c) {
        ContentShape::Absent => None,
        ContentShape::Null => Some(Value::Null),
        ContentShape::Text => Some(Value::String(c.joined_text().into_owned())),
        ContentShape::Parts => Some(Value::Array(c.parts.iter().map(encode_part).collect())),
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

pub(super) fn encode_tool_call(call: &ToolCall) -> Value {
    let set = call_fields(call);
    let mut map = call.extra.clone();
    fill(&mut map, "id", set.id.then(|| Value::String(call.id.clone())));
    let mut function = call.function_extra.clone();
    if set.name {
        function.insert("name".into(), Value::String(call.name.clone()));
    }
    if set.arguments {
        let arguments =
            arguments_value(call).unwrap_or_else(|| Value::String(call.arguments.clone()));
        function.insert("arguments".into(), arguments);
    }
    map.insert("function".into(), Value::Object(function));
    Value::Object(map)
}
