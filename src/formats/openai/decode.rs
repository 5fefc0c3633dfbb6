//! Reading: an OpenAI record `Value` -> a [`Session`], typed fields taken out
//! of their maps with a slot left at their key (see the parent's key order).

use super::{ATTACHED, REASONING_FIELDS, TRAILING, decode_part, slot};
use crate::formats::{DecodeError, kind_of, record_id};
use crate::model::{
    ArgsForm, Content, ContentForm, Envelope, Message, MessageMeta, Reasoning, Role, Session,
    Source, ToolCall, Usage,
};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Session keys this decoder takes or reads (besides the record id keys,
/// `formats::RECORD_ID_KEYS`): the kept path leaves them parsed.
pub(super) const DECODED_SESSION_KEYS: &[&str] = &["messages", "tools", super::TRAILING];

/// Message keys this decoder takes or reads (besides [`super::REASONING_FIELDS`]
/// and `compactor_attached`, whose records it carries): the kept path leaves
/// them parsed.
pub(super) const DECODED_MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "timestamp",
    "created_at",
    "_metadata",
    "usage",
];

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
            Some(Value::Array(items)) => (Envelope::Object, map, items),
            Some(_) => return Err(DecodeError::new("`messages` is not an array")),
            None => {
                return Err(DecodeError::new(
                    "not an OpenAI session: expected an object with a `messages` array",
                ));
            }
        },
        Value::Array(items) => (Envelope::BareArray, Map::new(), items),
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
    if layout == Envelope::BareArray {
        extra.clear();
    }
    let extra = extra.into();
    Ok(Session { id, source, layout, messages, tools, extra, trailing, ..Session::default() })
}

fn looks_like_message(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.get("role").is_some_and(Value::is_string))
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
    let meta = MessageMeta {
        timestamp: timestamp_of(&map),
        usage: usage_of(&map),
        ..MessageMeta::default()
    };
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
        cache_write_1h_tokens: u
            .get("cache_creation")
            .and_then(|c| c.get("ephemeral_1h_input_tokens"))
            .and_then(Value::as_u64),
        output_tokens: get(&["completion_tokens", "output_tokens"]),
    };
    (usage != Usage::default()).then_some(usage)
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
    // as read while the typed field is still empty (`left_as_read`).
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
