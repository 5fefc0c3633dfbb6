//! Anthropic Messages API request logs: one session per JSONL line,
//! `{"model"?, "system"?, "messages": [...], "tools"?, ...}`.
//!
//! ## Field map (Anthropic -> canonical)
//! - `system` (a string or a list of text blocks, `cache_control` kept) -> a
//!   leading [`Role::System`] message whose content form (string / parts)
//!   remembers the shape. No `system` key, no system message.
//! - `messages[]`: `user` / `assistant` messages; their content blocks become
//!   parts through the OpenAI part reader (`text`, `image` with a `source`,
//!   `thinking` / `redacted_thinking` -> [`Part::Reasoning`](crate::model::Part),
//!   anything else kept verbatim). Unknown message keys stay in `extra`.
//! - `tool_use` blocks of an assistant message -> its `tool_calls` (`id`,
//!   `name`, arguments = the `input` JSON text, `ArgsForm::Value`); other block
//!   keys (`cache_control`, ...) -> the call's `extra`.
//! - A user message holding `tool_result` blocks -> one `tool` message per block
//!   (`tool_use_id` -> `tool_call_id`, `content` string or blocks, `is_error`
//!   and every other block key -> `extra`), followed by one `user` message with
//!   the message's other blocks, if any.
//! - `tools` -> the session's tool schemas; every other top-level key -> `extra`.
//!
//! Decoding goes through [`openai::decode_message`](super::openai::decode_message):
//! each Anthropic message is rewritten as the OpenAI message it means and read
//! by the reference reader, so both dialects give the same canonical session
//! for the same conversation (and the same key slots, which the OpenAI writer
//! knows how to fill). Encoding starts from the OpenAI writer's output likewise.
//!
//! ## Layout marker (kept in the canonical `extra`, so it also appears in the
//! output of other dialects, e.g. `--to openai`)
//! - `anthropic_layout` on an assistant message: `{"order": ["content" |
//!   "tool_use", ...]}`, the original block order, present only when a text /
//!   thinking block came after a `tool_use` block.
//! - `anthropic_layout` on a message of another role (`system`, `tool`,
//!   `exit`, ...) read as it was written, without `openai_role`:
//!   `{"own_role": true}`; it is written back with that role (a message
//!   without the mark has `role: "user"` and the carrier, below).
//! - `anthropic_layout` on a tool message: it starts a new Anthropic user
//!   message (consecutive tool messages are otherwise one message). Fields:
//!   `with_user: true` (the user message right after the tool messages holds the
//!   same Anthropic message's other blocks), `order` (`"tool_result"` /
//!   `"content"` per block, when not all results come first), `message` (other
//!   keys of the Anthropic message when there is no such user message).
//!
//! ## Carried fields (written into Anthropic records for what the dialect cannot
//! express, read back and removed by the decoder; `openai -> anthropic -> openai`
//! gives back the same JSON values)
//! - message `openai_role`: the real role of a message Anthropic has no role for
//!   (`developer`, a system message after the first, a system message with extra
//!   fields, unknown roles such as `exit` or `function`); the message is written
//!   with `role: "user"` and otherwise exactly as the OpenAI message.
//! - message `openai_content`: `"string"` / `"null"` / `"absent"` / `"parts"`,
//!   the OpenAI content form of an assistant message with tool calls, when the
//!   blocks alone would read back differently (one bare text block reads as a
//!   string, no text block as `null`).
//! - `tool_use` block `openai_arguments`: how OpenAI string arguments were
//!   written: `"spaced"` (`{"a": 1}`), `"spaced_ascii"` (Python's
//!   `json.dumps` default), `"compact"`, `"compact_ascii"` (then `input` is the
//!   parsed value), or `"text"` (not reproducible JSON; `input` is the string).
//! - `tool_use` block `openai_type`: the call's `type` when it is not
//!   `"function"` (`null`: no `type` key). `openai_function`: other keys of the
//!   call's `function` object. Other keys of the call object are block keys.
//! - `tool_result` block `openai_type` / `openai_tool_use_id`: a tool message
//!   field named like the block's own keys (e.g. a Claude Code event's `type`);
//!   every other tool message field is a block key under its own name.
//! - image block `openai_image`: an OpenAI `image_url` / `input_image` part
//!   written as an Anthropic `image` block (data URL -> `base64` source, else
//!   `url` source); the carrier is the original part with its URL emptied.
//! - message / block `compactor_attached`: non-chat records attached to the
//!   message (file dialects); top-level `compactor_trailing`: records after the
//!   last message; `openai_layout: "bare_array"`: the OpenAI session was a bare
//!   array of messages; `openai_system`: a top-level `system` field of another
//!   dialect's record that is not the system prompt.
//!
//! Any tool message can be written (a missing id gives a `tool_result` without
//! `tool_use_id`); fields a role cannot hold (`tool_calls` on a user message,
//! `reasoning_content`, `name`, ...) are written under their OpenAI names.

use super::carried::{
    ATTACHED, OPENAI_ARGUMENTS, OPENAI_CONTENT, OPENAI_ROLE, Top, carry_session, put_attached,
    write_top,
};
use super::json_style::{JSON_STYLES, JsonStyle};
use super::openai::{decode_message, encode_message};
use super::slots::insert_after;
use super::{DecodeError, RecordDialect, kind_of};
use crate::model::{ArgsForm, Message, Role, Session, Source};
use serde_json::{Map, Value};

/// The Anthropic Messages dialect.
pub struct Anthropic;

/// The canonical marker key (see the module docs).
pub const LAYOUT: &str = "anthropic_layout";
/// The layout field of a message whose role was written as it is.
const OWN_ROLE: &str = "own_role";
const OPENAI_IMAGE: &str = "openai_image";
const OPENAI_TYPE: &str = "openai_type";
const OPENAI_FUNCTION: &str = "openai_function";

impl RecordDialect for Anthropic {
    const NAME: &'static str = "anthropic";

    fn looks_like(record: &Value) -> bool {
        classify(record).is_some()
    }

    /// At least one record has an Anthropic sign, most are Anthropic-shaped,
    /// and none is an OpenAI request.
    fn fits(first: &[Value]) -> bool {
        let mut yes = 0;
        let mut fits = 0;
        for r in first {
            match classify(r) {
                Some(true) => {
                    yes += 1;
                    fits += 1;
                }
                Some(false) => fits += 1,
                None if looks_openai(r) => return false,
                None => {}
            }
        }
        yes > 0 && fits * 2 > first.len()
    }

    fn decode_record(record: Value, source: Source) -> Result<Session, DecodeError> {
        decode_session(record, source)
    }

    fn encode_record(session: &Session, compaction: Option<&Value>) -> Value {
        encode_session(session, compaction)
    }
}

// ---------------------------------------------------------------- detection

/// `Some(true)`: an Anthropic session with a sign of the dialect (a top-level
/// system prompt, `tool_use` / `tool_result` / `thinking` blocks, an image with
/// a `source`); `Some(false)`: fits but shows no sign (plain chat reads the same
/// in both dialects); `None`: not an Anthropic session.
fn classify(v: &Value) -> Option<bool> {
    let map = v.as_object()?;
    let messages = map.get("messages")?.as_array()?;
    let mut sign = matches!(map.get("system"), Some(Value::String(_) | Value::Array(_)));
    for m in messages {
        let m = m.as_object()?;
        let role = m.get("role")?.as_str()?;
        if !matches!(role, "user" | "assistant") || m.contains_key("tool_calls") {
            return None;
        }
        if let Some(Value::Array(blocks)) = m.get("content") {
            sign |= blocks.iter().any(is_anthropic_block);
        }
    }
    Some(sign)
}

fn is_anthropic_block(b: &Value) -> bool {
    match b.get("type").and_then(Value::as_str) {
        Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking") => true,
        Some("image") => b.get("source").is_some_and(Value::is_object),
        _ => false,
    }
}

/// An OpenAI-only sign: a `tool` / `system` / `developer` role or `tool_calls`.
fn looks_openai(v: &Value) -> bool {
    v.get("messages").and_then(Value::as_array).is_some_and(|ms| {
        ms.iter().any(|m| {
            m.get("tool_calls").is_some()
                || matches!(
                    m.get("role").and_then(Value::as_str),
                    Some("tool" | "system" | "developer")
                )
        })
    })
}

// ---------------------------------------------------------------- decoding

/// Reads one Anthropic session record.
pub fn decode_session(record: Value, source: Source) -> Result<Session, DecodeError> {
    let Value::Object(map) = record else {
        return Err(DecodeError::new(format!(
            "not an Anthropic session: expected an object, found {}",
            kind_of(&record)
        )));
    };
    match map.get("messages") {
        Some(Value::Array(_)) => {}
        Some(other) => {
            return Err(DecodeError::new(format!(
                "`messages` is {}, expected an array",
                kind_of(other)
            )));
        }
        None => {
            return Err(DecodeError::new(
                "not an Anthropic session: expected an object with a `messages` array",
            ));
        }
    }
    let mut top = Top::read(map, "messages", |v| v.is_string() || v.is_array());
    let mut messages = Vec::new();
    if let Some((content, _)) = top.system.take() {
        let mut m = Map::new();
        m.insert("role".into(), Value::String("system".into()));
        m.insert("content".into(), unconvert_content(content));
        messages.push(
            decode_message(Value::Object(m))
                .map_err(|e| DecodeError::new(format!("`system`: {e}")))?,
        );
    }
    for (i, m) in std::mem::take(&mut top.messages).into_iter().enumerate() {
        decode_one(m, &mut messages).map_err(|e| DecodeError::new(format!("message {i}: {e}")))?;
    }
    Ok(top.session(source, messages))
}

/// Takes the `compactor_attached` records out of a message or block.
fn take_attached(map: &mut Map<String, Value>) -> Vec<Value> {
    match map.shift_remove(ATTACHED) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            map.insert(ATTACHED.into(), other);
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// Reads one Anthropic message into one or more canonical messages.
fn decode_one(value: Value, out: &mut Vec<Message>) -> Result<(), String> {
    let Value::Object(mut map) = value else {
        return Err(format!("expected an object, found {}", kind_of(&value)));
    };
    let role = match map.get("role") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!("`role` is {}, expected a string", kind_of(other))),
        None => return Err("missing `role`".into()),
    };
    if let Some(c) = map.get("content")
        && !matches!(c, Value::String(_) | Value::Array(_) | Value::Null)
    {
        return Err(format!("`content` is {}, expected a string, an array or null", kind_of(c)));
    }
    map.shift_remove(LAYOUT);
    let attached = take_attached(&mut map);
    if let Some(real) = map.get(OPENAI_ROLE).and_then(Value::as_str).map(str::to_string) {
        map.shift_remove(OPENAI_ROLE);
        map.insert("role".into(), Value::String(real));
        return push_plain(map, attached, out);
    }
    if role != "user" && role != "assistant" {
        // Written as it is (a role Anthropic has no name for, without the
        // `openai_role` carrier): remember that, or it comes back as `user`.
        let mut layout = Map::new();
        layout.insert(OWN_ROLE.into(), Value::Bool(true));
        map.insert(LAYOUT.into(), Value::Object(layout));
        return push_plain(map, attached, out);
    }
    let blocks = map.get("content").and_then(Value::as_array);
    if role == "assistant" && blocks.is_some_and(|b| b.iter().any(is_tool_use)) {
        let mut m = decode_assistant(map)?;
        m.attached = attached.into();
        out.push(m);
        return Ok(());
    }
    if role == "user" && blocks.is_some_and(|b| b.iter().any(is_tool_result)) {
        return decode_results(map, attached, out);
    }
    push_plain(map, attached, out)
}

/// A message whose content maps one to one (no tool blocks to take out).
fn push_plain(
    mut map: Map<String, Value>,
    attached: Vec<Value>,
    out: &mut Vec<Message>,
) -> Result<(), String> {
    if let Some(c) = map.get_mut("content") {
        *c = unconvert_content(std::mem::take(c));
    }
    let mut m = decode_message(Value::Object(map))?;
    m.attached = attached.into();
    out.push(m);
    Ok(())
}

/// A `tool_use` block we model as a tool call.
fn is_tool_use(b: &Value) -> bool {
    b.get("type").and_then(Value::as_str) == Some("tool_use")
        && b.get("name").is_some_and(Value::is_string)
        && b.get("input").is_some()
        && b.get("id").is_none_or(Value::is_string)
}

fn is_tool_result(b: &Value) -> bool {
    b.get("type").and_then(Value::as_str) == Some("tool_result")
}

/// Returns true if and only if `b` is exactly `{"type": "text", "text": "..."}`.
fn is_bare_text(b: &Value) -> bool {
    b.as_object().is_some_and(|o| {
        o.len() == 2
            && o.get("type").and_then(Value::as_str) == Some("text")
            && o.get("text").is_some_and(Value::is_string)
    })
}

/// The OpenAI content form the blocks of an assistant message with tool calls
/// read back as, without a carrier: no block -> `null`, one bare text block ->
/// a string, anything else -> parts.
fn derived_form(blocks: &[Value]) -> &'static str {
    match blocks {
        [] => "null",
        [b] if is_bare_text(b) => "string",
        _ => "parts",
    }
}

/// An assistant message with `tool_use` blocks.
fn decode_assistant(mut map: Map<String, Value>) -> Result<Message, String> {
    let Some(Value::Array(blocks)) = map.get_mut("content").map(std::mem::take) else {
        return Err("assistant content is not a list".into());
    };
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut string_inputs = Vec::new();
    let mut order = Vec::new();
    let mut seen_call = false;
    let mut interleaved = false;
    for b in blocks {
        if is_tool_use(&b) {
            let (call, string_input) = tool_use_to_openai(b);
            string_inputs.push(string_input);
            calls.push(call);
            order.push(Value::String("tool_use".into()));
            seen_call = true;
        } else {
            parts.push(unconvert_part(b));
            order.push(Value::String("content".into()));
            interleaved |= seen_call;
        }
    }
    let carried = match map.shift_remove(OPENAI_CONTENT) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let form = carried.as_deref().unwrap_or_else(|| derived_form(&parts));
    let content = match (form, parts.as_slice()) {
        ("string", [b]) if is_bare_text(b) => b.get("text").cloned(),
        ("string", []) => Some(Value::String(String::new())),
        ("null", []) => Some(Value::Null),
        ("absent", []) => None,
        _ => Some(Value::Array(parts)),
    };
    match content {
        Some(c) => {
            map.insert("content".into(), c);
        }
        None => {
            map.shift_remove("content");
        }
    }
    map.insert("tool_calls".into(), Value::Array(calls));
    if interleaved {
        let mut layout = Map::new();
        layout.insert("order".into(), Value::Array(order));
        map.insert(LAYOUT.into(), Value::Object(layout));
    }
    let mut m = decode_message(Value::Object(map))?;
    // A string `input` (no carrier) is still the call's JSON value, not OpenAI
    // string arguments: keep it as a value so it is written back as it was.
    for (call, string_input) in m.tool_calls_mut().iter_mut().zip(string_inputs) {
        if string_input {
            call.arguments = Value::String(std::mem::take(&mut call.arguments)).to_string();
            call.args_form = ArgsForm::Value;
        }
    }
    Ok(m)
}

/// Rewrites a `tool_use` block as an OpenAI tool call object. Also returns
/// whether `input` was a string with no carrier saying it stands for OpenAI
/// string arguments.
fn tool_use_to_openai(block: Value) -> (Value, bool) {
    let Value::Object(mut b) = block else { return (Value::Null, false) };
    b.shift_remove("type");
    let mut call = Map::new();
    if let Some(id) = b.shift_remove("id") {
        call.insert("id".into(), id);
    }
    match b.shift_remove(OPENAI_TYPE) {
        Some(Value::Null) => {}
        Some(t) => {
            call.insert("type".into(), t);
        }
        None => {
            call.insert("type".into(), Value::String("function".into()));
        }
    }
    let name = b.shift_remove("name").unwrap_or(Value::Null);
    let input = b.shift_remove("input").unwrap_or(Value::Null);
    let style = match b.shift_remove(OPENAI_ARGUMENTS) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let mut string_input = false;
    let arguments = match style.as_deref() {
        Some("text") => input,
        Some(s) => match JsonStyle::from_name(s) {
            Some(st) => Value::String(st.render(&input)),
            None => input,
        },
        None => {
            string_input = input.is_string();
            input
        }
    };
    let mut function = Map::new();
    function.insert("name".into(), name);
    function.insert("arguments".into(), arguments);
    if let Some(Value::Object(fx)) = b.shift_remove(OPENAI_FUNCTION) {
        for (k, v) in fx {
            function.entry(k).or_insert(v);
        }
    }
    call.insert("function".into(), Value::Object(function));
    for (k, v) in b {
        call.entry(k).or_insert(v);
    }
    (Value::Object(call), string_input)
}

/// A user message holding `tool_result` blocks: one tool message per result,
/// then a user message for the other blocks.
fn decode_results(
    mut map: Map<String, Value>,
    attached: Vec<Value>,
    out: &mut Vec<Message>,
) -> Result<(), String> {
    let Some(Value::Array(blocks)) = map.get_mut("content").map(std::mem::take) else {
        return Err("user content is not a list".into());
    };
    let prev_is_tool = out.last().is_some_and(Message::is_tool_result);
    let mut tools = Vec::new();
    let mut others = Vec::new();
    let mut order = Vec::new();
    let mut interleaved = false;
    for b in blocks {
        if is_tool_result(&b) {
            interleaved |= !others.is_empty();
            tools.push(decode_result_block(b)?);
            order.push(Value::String("tool_result".into()));
        } else {
            others.push(unconvert_part(b));
            order.push(Value::String("content".into()));
        }
    }
    let mut layout = Map::new();
    let user = if others.is_empty() {
        let rest: Map<String, Value> =
            map.into_iter().filter(|(k, _)| k != "role" && k != "content").collect();
        if !rest.is_empty() {
            layout.insert("message".into(), Value::Object(rest));
        }
        if !attached.is_empty() {
            layout.insert("attached".into(), Value::Array(attached));
        }
        None
    } else {
        layout.insert("with_user".into(), Value::Bool(true));
        if interleaved {
            layout.insert("order".into(), Value::Array(order));
        }
        map.insert("content".into(), Value::Array(others));
        let mut u = decode_message(Value::Object(map))?;
        u.attached = attached.into();
        Some(u)
    };
    if let Some(first) = tools.first_mut()
        && (prev_is_tool || !layout.is_empty())
    {
        first.extra_mut().insert(LAYOUT.into(), Value::Object(layout));
    }
    out.extend(tools);
    out.extend(user);
    Ok(())
}

/// A `tool_result` block as a tool message.
fn decode_result_block(block: Value) -> Result<Message, String> {
    let Value::Object(mut b) = block else { return Err("tool_result is not an object".into()) };
    let attached = take_attached(&mut b);
    let mut j = Map::new();
    j.insert("role".into(), Value::String("tool".into()));
    for (k, v) in b {
        match k.as_str() {
            "type" => {}
            "tool_use_id" => {
                j.insert("tool_call_id".into(), v);
            }
            "content" => {
                j.insert("content".into(), unconvert_content(v));
            }
            _ => match unescape_key(&k) {
                Some(real) => {
                    j.insert(real.to_string(), v);
                }
                None => {
                    j.insert(k, v);
                }
            },
        }
    }
    let mut m = decode_message(Value::Object(j)).map_err(|e| format!("tool_result: {e}"))?;
    m.attached = attached.into();
    Ok(m)
}

// ---------------------------------------------------------------- images

/// Where an OpenAI image part keeps its URL, in the order `image_info` reads it.
fn image_url_of(raw: &Map<String, Value>) -> Option<&str> {
    match raw.get("image_url") {
        Some(Value::String(s)) => Some(s),
        Some(Value::Object(o)) => o.get("url").and_then(Value::as_str),
        _ => raw.get("url").and_then(Value::as_str),
    }
}

/// Empties the URL of an OpenAI image part (the carrier keeps everything else).
fn empty_url(raw: &mut Map<String, Value>) {
    match raw.get_mut("image_url") {
        Some(v @ Value::String(_)) => *v = Value::String(String::new()),
        Some(Value::Object(o)) if o.get("url").is_some_and(Value::is_string) => {
            o.insert("url".into(), Value::String(String::new()));
        }
        _ => {
            raw.insert("url".into(), Value::String(String::new()));
        }
    }
}

/// Puts `url` back where [`empty_url`] emptied it. False if there is no such place.
fn restore_url(raw: &mut Map<String, Value>, url: String) -> bool {
    match raw.get_mut("image_url") {
        Some(v @ Value::String(_)) if v.as_str() == Some("") => {
            *v = Value::String(url);
            true
        }
        Some(Value::Object(o)) if o.get("url").and_then(Value::as_str) == Some("") => {
            o.insert("url".into(), Value::String(url));
            true
        }
        _ => match raw.get_mut("url") {
            Some(v) if v.as_str() == Some("") => {
                *v = Value::String(url);
                true
            }
            _ => false,
        },
    }
}

/// An OpenAI content part as an Anthropic block: `image_url` / `input_image`
/// parts become `image` blocks carrying the rest of the part; everything else
/// is written as it is.
fn convert_part(part: Value) -> Value {
    let Value::Object(raw) = part else { return part };
    let is_openai_image =
        matches!(raw.get("type").and_then(Value::as_str), Some("image_url" | "input_image"));
    let url = match image_url_of(&raw) {
        Some(u) if is_openai_image && !u.is_empty() => u.to_string(),
        _ => return Value::Object(raw),
    };
    let mut source = Map::new();
    match url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
        Some((media_type, data)) if !media_type.is_empty() && !media_type.contains([';', ',']) => {
            source.insert("type".into(), Value::String("base64".into()));
            source.insert("media_type".into(), Value::String(media_type.into()));
            source.insert("data".into(), Value::String(data.into()));
        }
        _ => {
            source.insert("type".into(), Value::String("url".into()));
            source.insert("url".into(), Value::String(url));
        }
    }
    let mut carrier = raw;
    empty_url(&mut carrier);
    let mut block = Map::new();
    block.insert("type".into(), Value::String("image".into()));
    block.insert("source".into(), Value::Object(source));
    block.insert(OPENAI_IMAGE.into(), Value::Object(carrier));
    Value::Object(block)
}

/// The reverse of [`convert_part`]; other blocks are returned as they are.
fn unconvert_part(block: Value) -> Value {
    let Value::Object(b) = block else { return block };
    let (Some(Value::Object(carrier)), Some(Value::Object(source))) =
        (b.get(OPENAI_IMAGE), b.get("source"))
    else {
        return Value::Object(b);
    };
    let str_of = |k: &str| source.get(k).and_then(Value::as_str);
    let url = match str_of("type") {
        Some("base64") => match (str_of("media_type"), str_of("data")) {
            (Some(mt), Some(data)) => format!("data:{mt};base64,{data}"),
            _ => return Value::Object(b),
        },
        Some("url") => match str_of("url") {
            Some(u) => u.to_string(),
            None => return Value::Object(b),
        },
        _ => return Value::Object(b),
    };
    let mut part = carrier.clone();
    if restore_url(&mut part, url) { Value::Object(part) } else { Value::Object(b) }
}

fn convert_content(v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(convert_part).collect()),
        other => other,
    }
}

fn unconvert_content(v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(unconvert_part).collect()),
        other => other,
    }
}

// ---------------------------------------------------------------- encoding

/// The OpenAI JSON of a message as an object (never anything else).
fn message_json(m: &Message) -> Map<String, Value> {
    match encode_message(m) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The system prompt value when the session opens with a system message that
/// is nothing but a prompt (string or blocks).
fn plain_system(m: &Message) -> Option<Value> {
    if m.role != Role::System || !m.attached.is_empty() {
        return None;
    }
    let j = message_json(m);
    let only_prompt = j.keys().all(|k| k == "role" || k == "content")
        && j.get("role").and_then(Value::as_str) == Some("system");
    match j.get("content") {
        Some(c @ (Value::String(_) | Value::Array(_))) if only_prompt => {
            Some(convert_content(c.clone()))
        }
        _ => None,
    }
}

/// Writes one Anthropic session record.
pub fn encode_session(session: &Session, compaction: Option<&Value>) -> Value {
    let (system, rest) = match session.messages.split_first() {
        Some((first, rest)) => match plain_system(first) {
            Some(s) => (Some(s), rest),
            None => (None, session.messages.as_slice()),
        },
        None => (None, &[][..]),
    };
    let has_prompt = system.is_some();
    let mut messages: Vec<(&str, Value)> = system.map(|s| ("system", s)).into_iter().collect();
    messages.push(("messages", Value::Array(encode_messages(rest))));
    // `system` is the prompt's key: a source field of that name is carried
    // aside when there is a prompt, or when it would be read back as one.
    let not_prompt = |v: &Value| has_prompt || v.is_string() || v.is_array();
    let mut out = write_top(session, messages, not_prompt);
    carry_session(&mut out, session, compaction);
    Value::Object(out)
}

/// The layout marker of a canonical message, as an object.
fn layout_of(m: &Message) -> Option<&Map<String, Value>> {
    m.extra.get(LAYOUT).and_then(Value::as_object)
}

/// Whether `m` was read from an Anthropic message with a role other than
/// `user` / `assistant` written as it is; it is written back the same way.
fn own_role(m: &Message) -> bool {
    layout_of(m).is_some_and(|l| l.get(OWN_ROLE) == Some(&Value::Bool(true)))
}

/// Writes canonical messages as Anthropic messages, regrouping tool results.
fn encode_messages(msgs: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        match m.role {
            Role::Tool if !own_role(m) => {
                let mut j = i + 1;
                while j < msgs.len() && msgs[j].role == Role::Tool && layout_of(&msgs[j]).is_none()
                {
                    j += 1;
                }
                let marker = layout_of(m).cloned().unwrap_or_default();
                let with_user = marker.get("with_user") == Some(&Value::Bool(true));
                let user =
                    (with_user && j < msgs.len() && msgs[j].role == Role::User).then(|| &msgs[j]);
                out.push(encode_group(&msgs[i..j], user, &marker));
                i = j + usize::from(user.is_some());
            }
            Role::Assistant if !m.tool_calls.is_empty() => {
                out.push(Value::Object(encode_assistant(m)));
                i += 1;
            }
            _ => {
                out.push(Value::Object(encode_plain(m)));
                i += 1;
            }
        }
    }
    out
}

/// A message whose content maps one to one.
fn encode_plain(m: &Message) -> Map<String, Value> {
    let mut j = message_json(m);
    j.shift_remove(LAYOUT);
    if !matches!(m.role, Role::User | Role::Assistant) && !own_role(m) {
        let mut out = Map::new();
        for (k, v) in j {
            if k == "role" {
                out.insert("role".into(), Value::String("user".into()));
                out.insert(OPENAI_ROLE.into(), v);
            } else {
                out.insert(k, v);
            }
        }
        j = out;
    }
    if let Some(c) = j.get_mut("content") {
        *c = convert_content(std::mem::take(c));
    }
    put_attached(&mut j, m);
    j
}

/// Interleaves `a` and `b` following `order` (names `a_name` / `b_name`), when
/// the order names exactly as many of each; otherwise `a` then `b`.
fn interleave(
    a: Vec<Value>,
    b: Vec<Value>,
    order: Option<&Value>,
    a_name: &str,
    b_name: &str,
) -> Vec<Value> {
    let names: Vec<&str> = order
        .and_then(Value::as_array)
        .map(|o| o.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let count = |n: &str| names.iter().filter(|x| **x == n).count();
    let fits = !names.is_empty()
        && names.iter().all(|x| *x == a_name || *x == b_name)
        && count(a_name) == a.len()
        && count(b_name) == b.len();
    if !fits {
        return a.into_iter().chain(b).collect();
    }
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    names.iter().filter_map(|n| if *n == a_name { a.next() } else { b.next() }).collect()
}

/// An assistant message with tool calls.
fn encode_assistant(m: &Message) -> Map<String, Value> {
    let mut j = message_json(m);
    let calls = match j.shift_remove("tool_calls") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let layout = j.shift_remove(LAYOUT);
    let (form, content_blocks) = match j.get("content") {
        Some(Value::String(s)) => {
            let mut b = Map::new();
            b.insert("type".into(), Value::String("text".into()));
            b.insert("text".into(), Value::String(s.clone()));
            ("string", vec![Value::Object(b)])
        }
        Some(Value::Array(parts)) => ("parts", parts.iter().cloned().map(convert_part).collect()),
        Some(_) => ("null", Vec::new()),
        None => ("absent", Vec::new()),
    };
    let carrier = (derived_form(&content_blocks) != form).then_some(form);
    let tool_blocks: Vec<Value> = calls
        .into_iter()
        .zip(m.tool_calls.iter())
        .map(|(cj, call)| Value::Object(tool_use_block(cj, call.args_form, &call.arguments)))
        .collect();
    let order = layout.as_ref().and_then(|l| l.get("order"));
    let blocks = interleave(content_blocks, tool_blocks, order, "content", "tool_use");
    let mut out = put_content(j, Value::Array(blocks));
    if let Some(f) = carrier {
        out.insert(OPENAI_CONTENT.into(), Value::String(f.into()));
    }
    put_attached(&mut out, m);
    out
}

/// Sets `content` in place, or right after `role` when the message has none.
fn put_content(j: Map<String, Value>, content: Value) -> Map<String, Value> {
    if j.contains_key("content") {
        let mut j = j;
        j.insert("content".into(), content);
        return j;
    }
    insert_after(j, "role", "content", content)
}

/// One OpenAI tool call object as a `tool_use` block.
fn tool_use_block(cj: Value, args_form: ArgsForm, arguments: &str) -> Map<String, Value> {
    let mut cj = match cj {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    let mut b = Map::new();
    b.insert("type".into(), Value::String("tool_use".into()));
    if let Some(id) = cj.shift_remove("id") {
        b.insert("id".into(), id);
    }
    let mut function = match cj.shift_remove("function") {
        Some(Value::Object(f)) => f,
        _ => Map::new(),
    };
    b.insert("name".into(), function.shift_remove("name").unwrap_or(Value::Null));
    function.shift_remove("arguments");
    let (input, style) = tool_input(args_form, arguments);
    b.insert("input".into(), input);
    let ty = cj.shift_remove("type");
    for (k, v) in cj {
        b.entry(k).or_insert(v);
    }
    if let Some(s) = style {
        b.insert(OPENAI_ARGUMENTS.into(), Value::String(s.into()));
    }
    match ty {
        Some(Value::String(t)) if t == "function" => {}
        Some(t) => {
            b.insert(OPENAI_TYPE.into(), t);
        }
        None => {
            b.insert(OPENAI_TYPE.into(), Value::Null);
        }
    }
    if !function.is_empty() {
        b.insert(OPENAI_FUNCTION.into(), Value::Object(function));
    }
    b
}

/// The `input` of a tool call, and the `openai_arguments` carrier it needs.
fn tool_input(args_form: ArgsForm, arguments: &str) -> (Value, Option<&'static str>) {
    let parsed = serde_json::from_str::<Value>(arguments);
    match (args_form, parsed) {
        (ArgsForm::Value, Ok(v)) => (v, None),
        (ArgsForm::Value, Err(_)) => (Value::String(arguments.to_string()), Some("text")),
        (ArgsForm::String, Ok(v)) => match JsonStyle::detect(&v, arguments, JSON_STYLES) {
            Some(style) => (v, Some(style.name())),
            None => (Value::String(arguments.to_string()), Some("text")),
        },
        (ArgsForm::String, Err(_)) => (Value::String(arguments.to_string()), Some("text")),
    }
}

/// A tool message as a `tool_result` block (the marker is left out).
fn result_block(m: &Message) -> Map<String, Value> {
    let mut b = Map::new();
    b.insert("type".into(), Value::String("tool_result".into()));
    for (k, v) in message_json(m) {
        match k.as_str() {
            "role" | LAYOUT => {}
            "tool_call_id" => {
                b.insert("tool_use_id".into(), v);
            }
            "content" => {
                b.insert("content".into(), convert_content(v));
            }
            _ => {
                b.insert(escape_key(k), v);
            }
        }
    }
    put_attached(&mut b, m);
    b
}

/// Block keys a tool message's own field of the same name would clash with.
const RESULT_KEYS: &[&str] = &["type", "tool_use_id"];

/// A tool message field named like a `tool_result` block key is written as
/// `openai_<key>` (e.g. the `type` of a Claude Code event).
fn escape_key(k: String) -> String {
    if RESULT_KEYS.contains(&k.as_str()) { format!("openai_{k}") } else { k }
}

fn unescape_key(k: &str) -> Option<&str> {
    k.strip_prefix("openai_").filter(|real| RESULT_KEYS.contains(real))
}

/// Consecutive tool messages (and the user message of the same Anthropic
/// message, if the marker says so) as one user message.
fn encode_group(tools: &[Message], user: Option<&Message>, marker: &Map<String, Value>) -> Value {
    let results: Vec<Value> = tools.iter().map(|t| Value::Object(result_block(t))).collect();
    let Some(u) = user else {
        let mut out = Map::new();
        out.insert("role".into(), Value::String("user".into()));
        out.insert("content".into(), Value::Array(results));
        if let Some(Value::Object(rest)) = marker.get("message") {
            for (k, v) in rest {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if let Some(att @ Value::Array(_)) = marker.get("attached") {
            out.insert(ATTACHED.into(), att.clone());
        }
        return Value::Object(out);
    };
    let j = encode_plain(u);
    let others = match j.get("content") {
        Some(Value::String(s)) => {
            let mut b = Map::new();
            b.insert("type".into(), Value::String("text".into()));
            b.insert("text".into(), Value::String(s.clone()));
            vec![Value::Object(b)]
        }
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let blocks = interleave(results, others, marker.get("order"), "tool_result", "content");
    Value::Object(put_content(j, Value::Array(blocks)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Adapter;
    use crate::formats::carried::OPENAI_LAYOUT;
    use crate::formats::openai::OpenAi;
    use crate::formats::testing::{assert_same_json, decode_one};
    use crate::model::Part;
    use serde_json::json;

    fn decode(v: Value) -> Session {
        decode_one(&Anthropic, v).expect("decodes")
    }

    fn encode(s: &Session) -> Value {
        Anthropic.encode(s, None).remove(0)
    }

    fn openai(v: Value) -> Session {
        decode_one(&OpenAi, v).expect("decodes")
    }

    /// openai -> anthropic -> openai.
    fn through(v: &Value) -> (Value, Value) {
        let a = encode(&openai(v.clone()));
        let back = OpenAi.encode(&decode(a.clone()), None).remove(0);
        (a, back)
    }

    /// Found by the `decode` fuzz target: a message with an unknown role
    /// (`ass*stant`) holding `tool_use` blocks came back as `role: "user"`
    /// with `openai_role`.
    #[test]
    fn fuzz_decode_anthropic_unknown_role_with_tool_use() {
        let v = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "ass*stant", "content": [{"type": "tool_use", "id": "a", "name": "B", "input": {}}]}]});
        let s = decode(v.clone());
        assert_eq!(s.messages[1].role, Role::Other("ass*stant".into()));
        assert_eq!(encode(&s), v);
        // Every role Anthropic has no name for, written as it is, anywhere.
        let v = json!({"messages": [
            {"role": "system", "content": "not the prompt"},
            {"role": "developer", "content": [{"type": "text", "text": "d"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "tool", "content": "r2"},
            {"role": "exit", "content": "bye"}]});
        let s = decode(v.clone());
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "developer", "tool", "tool", "exit"]);
        assert_eq!(encode(&s), v);
        // The mark travels through OpenAI and back.
        let via = OpenAi.encode(&s, None).remove(0);
        assert_eq!(via["messages"][4]["anthropic_layout"], json!({"own_role": true}));
        assert_eq!(encode(&openai(via)), v);
        // Without the mark (an OpenAI message), the carrier as before.
        let a = encode(&openai(json!({"messages": [{"role": "exit", "content": "bye"}]})));
        assert_eq!(
            a["messages"][0],
            json!({"role": "user", "openai_role": "exit", "content": "bye"})
        );
    }

    #[test]
    fn native_roundtrip_keeps_blocks_and_order() {
        let v = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": "first"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}},
                    {"type": "text", "text": "between"},
                    {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}, "cache_control": {"type": "ephemeral"}}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "note"},
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": true},
                    {"type": "tool_result", "tool_use_id": "t2", "content": [
                        {"type": "text", "text": "y"},
                        {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}]}]},
                {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "zz"}, {"type": "text", "text": "done"}]}
            ],
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}]
        });
        let s = decode(v.clone());
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "user", "assistant"]);
        let a = &s.messages[2];
        assert_eq!(a.tool_calls.len(), 2);
        assert_eq!(a.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(a.tool_calls[0].args_form, ArgsForm::Value);
        assert!(matches!(a.content.parts[0], Part::Reasoning(_)));
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("t1"));
        assert_eq!(s.messages[3].extra["is_error"], json!(true));
        assert!(s.messages[4].content.parts[1].is_image());
        assert_eq!(s.messages[5].text_content(), "note");
        let out = encode(&s);
        assert_same_json(&out, &v);
    }

    #[test]
    fn openai_roundtrip_is_identical() {
        let v = json!({
            "id": "s1",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "developer", "content": "dev note"},
                {"role": "user", "content": [{"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "high"}}], "name": "alice"},
                {"role": "assistant", "content": "calling", "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.rs\"}"}},
                                {"id": "c2", "type": "function", "function": {"name": "raw", "arguments": "not json"}},
                                {"id": "c3", "index": 2, "function": {"name": "obj", "arguments": {"a": 1}}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "fn main() {}", "name": "read_file"},
                {"role": "tool", "tool_call_id": "c2", "content": [{"type": "image_url", "image_url": "https://x.test/i.png"}]},
                {"role": "tool", "tool_call_id": "c3", "content": null},
                {"role": "user", "content": "next"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c4", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c4", "content": "ok"},
                {"role": "assistant", "tool_calls": [{"id": "c5", "type": "function", "function": {"name": "f", "arguments": "{\"k\":\"é\"}"}}]},
                {"role": "tool", "tool_call_id": "c5", "content": "ok"},
                {"role": "assistant", "content": [{"type": "text", "text": "p"}], "tool_calls": [{"id": "c6", "type": "function", "function": {"name": "f", "arguments": "{\"k\": \"\\u00e9\"}"}}]},
                {"role": "tool", "tool_call_id": "c6", "content": "ok"},
                {"role": "system", "content": "late system"},
                {"role": "exit", "content": "bye", "weird": [1, 2]}
            ],
            "tools": [{"type": "function", "function": {"name": "read_file"}}],
            "meta": {"k": 1}
        });
        let (a, back) = through(&v);
        assert_eq!(back, v, "anthropic form: {a}");
        assert_eq!(a["system"], json!("be brief"));
        assert_eq!(a["messages"][0]["openai_role"], json!("developer"));
        let img = &a["messages"][1]["content"][1];
        assert_eq!(
            img["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
        );
        let asst = &a["messages"][2];
        assert_eq!(asst["content"][1]["input"], json!({"path": "a.rs"}));
        assert_eq!(asst["content"][1]["openai_arguments"], json!("spaced"));
        assert_eq!(asst["content"][2]["input"], json!("not json"));
        assert_eq!(asst["content"][2]["openai_arguments"], json!("text"));
        assert_eq!(asst["content"][3]["openai_type"], json!(null));
        let results = &a["messages"][3]["content"];
        assert_eq!(results.as_array().unwrap().len(), 3);
        assert_eq!(results[0]["name"], json!("read_file"));
        assert_eq!(results[1]["content"][0]["source"]["url"], json!("https://x.test/i.png"));
        assert!(Anthropic.detect(std::slice::from_ref(&a)));
    }

    #[test]
    fn bare_array_and_attached_survive() {
        let v = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]);
        let (a, back) = through(&v);
        assert_eq!(a[OPENAI_LAYOUT], json!("bare_array"));
        assert_eq!(back, v);
        let mut s = openai(json!({"messages": [{"role": "user", "content": "a"}]}));
        s.messages[0].attached_mut().push(json!({"type": "snapshot"}));
        s.trailing.push(json!({"type": "end"}));
        let again = decode(encode(&s));
        assert_eq!(again.messages[0].attached, s.messages[0].attached);
        assert_eq!(again.trailing, s.trailing);
    }

    #[test]
    fn separate_result_messages_stay_separate() {
        let v = json!({"messages": [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "f", "input": "raw"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "2"}], "x": 1},
            {"role": "user", "content": "next"}
        ]});
        let s = decode(v.clone());
        assert_eq!(s.messages.len(), 4);
        assert_eq!(s.messages[0].tool_calls[1].arguments, r#""raw""#);
        assert_eq!(encode(&s), v);
    }

    #[test]
    fn compacted_sessions_encode_without_markers() {
        let v = json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}, {"type": "text", "text": "t"}]}
        ]});
        let mut s = decode(v);
        assert!(s.messages[1].extra.contains_key(LAYOUT));
        s.messages.insert(0, Message::text(Role::User, "summary"));
        s.messages[2].content = crate::model::Content::from_text("cleared");
        let out = encode(&s);
        let text = out.to_string();
        assert!(!text.contains(LAYOUT), "{text}");
        assert!(!text.contains("compactor:slot"), "{text}");
        assert_eq!(out["messages"][2]["content"][1], json!({"type": "text", "text": "t"}));
    }

    /// Blocks a generated message is built from.
    fn block(i: usize) -> Value {
        match i {
            0 => json!({"type": "text", "text": "t"}),
            1 => json!({"type": "tool_use", "id": "a", "name": "f", "input": {"k": 1}}),
            2 => {
                json!({"type": "tool_use", "id": "b", "name": "g", "input": "s", "cache_control": {"type": "ephemeral"}})
            }
            3 => json!({"type": "tool_result", "tool_use_id": "a", "content": "r"}),
            4 => {
                json!({"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": "x"}], "is_error": true})
            }
            5 => json!({"type": "thinking", "thinking": "h", "signature": "s"}),
            6 => json!({"type": "image", "source": {"type": "url", "url": "https://x.test/i.png"}}),
            7 => json!({"type": "text", "text": "u", "cache_control": {"type": "ephemeral"}}),
            _ => json!({"type": "tool_result", "content": "no id"}),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// Any sequence of messages and blocks reads and writes back exactly.
        #[test]
        fn any_blocks_roundtrip(msgs in proptest::collection::vec(
            (proptest::bool::ANY, proptest::collection::vec(0usize..9, 0..5), proptest::bool::ANY), 0..8),
            system in proptest::bool::ANY) {
            let messages: Vec<Value> = msgs.iter().map(|(user, blocks, string)| {
                let role = if *user { "user" } else { "assistant" };
                if *string && blocks.is_empty() {
                    json!({"role": role, "content": "plain"})
                } else {
                    json!({"role": role, "content": blocks.iter().map(|&i| block(i)).collect::<Vec<_>>()})
                }
            }).collect();
            let mut v = json!({"messages": messages});
            if system {
                v["system"] = json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]);
            }
            let s = decode(v.clone());
            proptest::prop_assert_eq!(encode(&s), v);
            let o = OpenAi.encode(&s, None).remove(0);
            let back = decode(encode(&openai(o.clone())));
            proptest::prop_assert_eq!(OpenAi.encode(&back, None).remove(0), o);
        }
    }

    #[test]
    fn detection() {
        let anth = json!({"system": "s", "messages": [{"role": "user", "content": "hi"}]});
        let oai = json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]});
        let plain = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert!(Anthropic.detect(std::slice::from_ref(&anth)));
        assert!(!Anthropic.detect(std::slice::from_ref(&oai)));
        assert!(!Anthropic.detect(std::slice::from_ref(&plain)));
        assert!(!Anthropic.detect(&[anth, oai]));
    }

    #[test]
    fn bad_records_are_errors_not_panics() {
        for bad in [
            json!(42),
            json!({"no": "messages"}),
            json!({"messages": {}}),
            json!({"messages": [1]}),
            json!({"messages": [{"content": "no role"}]}),
            json!({"messages": [{"role": "user", "content": 5}]}),
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "content": 5}]}]}),
        ] {
            let r = decode_one(&Anthropic, bad.clone());
            assert!(r.is_err(), "accepted {bad}");
        }
        // Odd but readable shapes are kept as they are.
        for odd in [
            json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": 5, "input": {}}]}]}),
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}),
            json!({"messages": [{"role": "user", "content": [{"type": "image", "source": {}, "openai_image": {}}]}], "system": null}),
        ] {
            assert_eq!(encode(&decode(odd.clone())), odd);
        }
    }
}
