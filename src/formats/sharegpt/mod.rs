//! ShareGPT conversations, Hermes function-calling style: one session per JSONL
//! line, `{"conversations": [{"from", "value", ...}], "system"?, "tools"?, ...}`.
//!
//! ## Field map (ShareGPT -> canonical)
//! - `from`: `system` -> system, `human` / `user` -> user, `gpt` / `assistant` /
//!   `chatgpt` / `bing` / `bard` / `model` -> assistant, `tool` / `observation`
//!   -> tool, `function_call` -> an assistant message with one tool call,
//!   `developer` -> developer, anything else -> that role, kept verbatim.
//! - `value`: the text. In an assistant turn, every `<tool_call>JSON</tool_call>`
//!   whose JSON is an object with a string `name` becomes a tool call
//!   (`arguments`: an object is kept as its JSON text in the same style, e.g.
//!   `{"a": 1}`; a string is kept as it is); the text around the tags is the
//!   message's content. In a `tool` turn, every `<tool_response>...</tool_response>`
//!   becomes one tool message: a JSON object with `content` (or `tool_call_id`)
//!   is read as `{"tool_call_id"?, "name"?, "content", ...}` (other keys ->
//!   `extra`; a non-string `content` is kept as its JSON text), anything else is
//!   the result text. `function_call` values are one call's JSON without tags,
//!   `observation` values are result text.
//! - Top level: `conversations` -> messages, `system` (a string) -> a leading
//!   system message, `tools` -> tool schemas (any JSON value, e.g. a string),
//!   other keys -> `extra`. Entry keys other than `from` / `value` -> `extra`.
//!
//! ## Tool call ids (ShareGPT usually has none)
//! A call's id is, in order: its own `id` key; the `tool_call_id` of the first
//! later result (in the run of call / result turns that follows it) that names
//! the same tool and is not taken; else the synthetic `sharegpt-<turn>-<k>`
//! (`turn` = the entry's index in `conversations`, `k` = the call's index in
//! the entry). A result's `tool_call_id` is its own, else that of the oldest
//! unanswered call with the same `name` (else the oldest unanswered call).
//! Writing puts `tool_call_id` on each result whose id is real (Hermes agent
//! style), never a synthetic id unless the source had it, and runs the same
//! assignment to add an `id` / `tool_call_id` only where reading would otherwise
//! pair differently (e.g. two calls of one tool answered out of order). After a
//! compaction, synthetic ids are renumbered by position; pairs stay pairs. The
//! name written in a result is the name of the call it answers.
//!
//! ## Exactness
//! Decoding then encoding gives the same `value` strings: tags, JSON text (key
//! order, `", "` / `","` separators, ASCII escaping, Python-literal calls such as
//! `{'arguments': {...}, 'name': 'f'}`), whitespace and the text around them.
//! What the defaults (Hermes agent output: `"\n"` around each JSON text, one
//! `"\n"` between tags, `json.dumps(ensure_ascii=False)`, `{"tool_call_id",
//! "name", "content"}` results) do not reproduce is recorded in the marker
//! below. Every turn is written again while reading and compared with its
//! `value`; a turn that would not come back identical is read as plain text (so
//! nothing is ever lost, only left unparsed).
//!
//! ## Layout marker (kept in the canonical `extra`, so it appears in the output
//! of other dialects)
//! `sharegpt_layout`, an object, present only when the defaults do not say it:
//! - any message: `from` (the label, when not the role's default), `novalue`
//!   (the entry had no `value`); the system prompt: `top` (it was the top-level
//!   `system` key, at this key index);
//! - assistant: `at` + `len` (byte offsets of the calls in the content text, the
//!   text length, when the text is not simply before the calls), `calls` (one
//!   entry per call, `null` or: `fmt` (JSON style: `spaced_ascii`, `compact`,
//!   `compact_ascii`, `python`), `pre` / `post` (whitespace inside the tags),
//!   `id` (the call had an `id` key: `true` last, or its key index),
//!   `args_string` (`arguments` was a JSON string), `raw` (JSON text no style
//!   writes));
//! - tool: `fmt`, `pre`, `post`, `raw` (the result was not a JSON object), `bare`
//!   (a tool turn without tags), `before` / `after` (text around the tag),
//!   `new_turn` (starts a new tool turn), `entry` (keys of the tool turn entry
//!   itself), `content_json` (`content` was JSON, not a string), `noname` (no
//!   `name`), `noid` / `id` (no `tool_call_id` though the id is real / a
//!   synthetic `tool_call_id` that was written).
//!
//! ## Carried fields (written into ShareGPT records for what the dialect cannot
//! express, read back and removed by the decoder; `openai -> sharegpt ->
//! openai` gives back the same JSON values)
//! - entry or result `content_parts`: non-string content, as the parts list
//!   with each text part's `text` replaced by its length in characters (the
//!   texts are the `value` / `content`, joined by `"\n"`); images, thinking
//!   blocks with their signatures and other parts are kept whole here.
//! - entry `openai_content`: `"null"` / `"absent"` / `"string"`, the content
//!   form when the value alone would read back differently.
//! - call JSON `openai_arguments: "value"`: the arguments were a JSON value, not
//!   a string; `openai_call`: the call object's keys other than `id` /
//!   `function` when they are not just `"type": "function"`.
//! - entry `openai_from` / `openai_value`: a message field named `from` / `value`.
//! - entry `openai_role: "developer"`: a developer message, written with the
//!   `system` label ShareGPT templates know (a clean request, without
//!   `--keep-source-fields`, simply makes it a system message).
//! - top level `openai_layout: "bare_array"`, `openai_system`,
//!   `compactor_trailing`, and entry / result `compactor_attached`, as in the
//!   Anthropic dialect.
//!
//! Reasoning (`reasoning_content`), `name` and every other message field are
//! written as entry keys (results: keys of the result JSON) under their own names.

use super::openai::decode_part;
use super::{DecodeError, RecordDialect};
use crate::model::{Message, Part, Role, Session, Source};
use serde_json::{Map, Value};

mod decode;
mod encode;
mod ids;
#[cfg(test)]
mod tests;

pub use decode::decode_session;
pub use encode::encode_session;

/// The ShareGPT dialect.
pub struct ShareGpt;

/// The canonical marker key (see the module docs).
pub const LAYOUT: &str = "sharegpt_layout";
const CONTENT_PARTS: &str = "content_parts";
const OPENAI_CALL: &str = "openai_call";
const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";
const RESP_OPEN: &str = "<tool_response>";
const RESP_CLOSE: &str = "</tool_response>";

impl RecordDialect for ShareGpt {
    const NAME: &'static str = "sharegpt";

    /// A record with a `conversations` list of `{"from": ...}` entries.
    fn looks_like(v: &Value) -> bool {
        v.get("conversations").and_then(Value::as_array).is_some_and(|c| {
            c.iter().all(|e| {
                e.get("from").is_some_and(Value::is_string)
                    && e.get("value").is_none_or(Value::is_string)
            })
        })
    }

    fn decode_record(record: Value, source: Source) -> Result<Session, DecodeError> {
        decode_session(record, source)
    }

    fn encode_record(session: &Session, compaction: Option<&Value>) -> Value {
        encode_session(session, compaction)
    }

    fn clean_request(session: Session) -> Session {
        developer_as_system(session)
    }
}

/// The role a `from` label stands for.
fn role_of(label: &str) -> Role {
    match label {
        "system" => Role::System,
        "human" | "user" => Role::User,
        "gpt" | "assistant" | "chatgpt" | "bing" | "bard" | "model" | "function_call" => {
            Role::Assistant
        }
        "tool" | "observation" => Role::Tool,
        "developer" => Role::Developer,
        other => Role::Other(other.to_string()),
    }
}

/// The label a role is written with when nothing says otherwise. ShareGPT
/// has no developer turn (chat templates know `system`, `human`, `gpt`,
/// `tool`): OpenAI's developer message, its system prompt under another
/// name, is written as `system` (a ShareGPT input's own `developer` label is
/// kept in the layout marker and given back).
fn default_label(role: &Role) -> &str {
    match role {
        Role::System | Role::Developer => "system",
        Role::User => "human",
        Role::Assistant => "gpt",
        Role::Tool => "tool",
        Role::Other(s) => s,
    }
}

/// A clean ShareGPT request has no developer turn: OpenAI's developer
/// messages become system messages (the lossless form, `--keep-source-fields`,
/// keeps the role in the entry's `openai_role` instead).
fn developer_as_system(session: Session) -> Session {
    if !session.messages.iter().any(|m| m.role == Role::Developer) {
        return session;
    }
    let messages = session
        .messages
        .iter()
        .map(|m| {
            if m.role == Role::Developer {
                let mut m = m.clone();
                m.role = Role::System;
                m
            } else {
                m.clone()
            }
        })
        .collect();
    session.with_messages(messages)
}

/// Returns true if and only if `id` has the synthetic shape `sharegpt-<n>-<n>`.
fn is_synthetic(id: &str) -> bool {
    id.strip_prefix("sharegpt-").and_then(|r| r.split_once('-')).is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit())
    })
}

fn synthetic_id(turn: usize, k: usize) -> String {
    format!("sharegpt-{turn}-{k}")
}

fn layout_of(m: &Message) -> Option<&Map<String, Value>> {
    m.extra.get(LAYOUT).and_then(Value::as_object)
}

fn layout_str<'a>(l: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
    l.and_then(|l| l.get(key)).and_then(Value::as_str)
}

fn layout_flag(l: Option<&Map<String, Value>>, key: &str) -> bool {
    l.and_then(|l| l.get(key)) == Some(&Value::Bool(true))
}

/// Whether `m` was read from an entry without a `value` key.
fn novalue(m: &Message) -> bool {
    layout_flag(layout_of(m), "novalue")
}

/// Leading and trailing whitespace of `s`, and what is between.
fn split_ws(s: &str) -> (&str, &str, &str) {
    let body = s.trim();
    let start = s.len() - s.trim_start().len();
    let end = start + body.len();
    (&s[..start], body, &s[end..])
}

/// A piece of a `value`: text, or the inside of a tag pair.
enum Seg<'a> {
    Text(&'a str),
    Tag(&'a str),
}

/// Splits `s` into text and tag insides: always text, tag, text, ..., text.
fn split_tags<'a>(s: &'a str, open: &str, close: &str) -> Vec<Seg<'a>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(o) = s[pos..].find(open).map(|o| pos + o) {
        let inner_start = o + open.len();
        let Some(c) = s[inner_start..].find(close).map(|c| inner_start + c) else { break };
        out.push(Seg::Text(&s[pos..o]));
        out.push(Seg::Tag(&s[inner_start..c]));
        pos = c + close.len();
    }
    out.push(Seg::Text(&s[pos..]));
    out
}

/// Text parts joined by `"\n"`, and the `content_parts` carrier (each text
/// part's `text` replaced by its length in characters).
fn parts_carrier(parts: &[Value]) -> (String, Vec<Value>) {
    let mut texts = Vec::new();
    let mut carrier = Vec::new();
    for p in parts {
        match decode_part(p.clone()) {
            Part::Text(mut raw) => {
                let t = raw.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                raw.insert("text".into(), Value::from(t.chars().count()));
                texts.push(t);
                carrier.push(Value::Object(raw));
            }
            _ => carrier.push(p.clone()),
        }
    }
    (texts.join("\n"), carrier)
}

/// The parts a `content_parts` carrier stands for, given the joined text;
/// `None` when the lengths do not fit the text.
fn parts_from_carrier(text: &str, carrier: &[Value]) -> Option<Vec<Value>> {
    let mut rest = text;
    let mut parts = Vec::new();
    let mut first = true;
    for p in carrier {
        let n = match p.get("text") {
            Some(Value::Number(n)) if p.get("type").is_some() || p.is_object() => n.as_u64(),
            _ => None,
        };
        let Some(n) = n else {
            parts.push(p.clone());
            continue;
        };
        if !first {
            rest = rest.strip_prefix('\n')?;
        }
        first = false;
        let end = rest.char_indices().nth(n as usize).map_or(rest.len(), |(i, _)| i);
        if rest[..end].chars().count() != n as usize {
            return None;
        }
        let mut raw = p.as_object()?.clone();
        raw.insert("text".into(), Value::String(rest[..end].to_string()));
        rest = &rest[end..];
        parts.push(Value::Object(raw));
    }
    // All the text is used, and there is text only if there are text parts.
    (rest.is_empty() && (!first || text.is_empty())).then_some(parts)
}

/// Sets one field of the layout marker of a message's JSON.
fn set_layout(j: &mut Map<String, Value>, key: &str, v: Value) {
    let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(l) = l {
        l.insert(key.into(), v);
    }
}

/// Inserts `key` at index `at` (or last).
fn insert_at(
    map: Map<String, Value>,
    key: &str,
    v: Value,
    at: Option<usize>,
) -> Map<String, Value> {
    let at = at.unwrap_or(usize::MAX).min(map.len());
    let mut out = Map::new();
    let mut v = Some(v);
    for (i, (k, x)) in map.into_iter().enumerate() {
        if i == at
            && let Some(v) = v.take()
        {
            out.insert(key.to_string(), v);
        }
        out.insert(k, x);
    }
    if let Some(v) = v {
        out.insert(key.to_string(), v);
    }
    out
}
