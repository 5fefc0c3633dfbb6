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

use super::carried::{
    ATTACHED, OPENAI_ARGUMENTS, OPENAI_CONTENT, OPENAI_ROLE, Top, carry_session, put_attached,
    write_top,
};
use super::json_style::{JSON_STYLES, JsonStyle, parse_object};
use super::openai::{decode_message, decode_part, encode_message};
use super::{DecodeError, RecordDialect, kind_of};
use crate::model::{ArgsForm, Message, Part, Role, Session, Source, ToolCall};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

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
}

// ---------------------------------------------------------------- small helpers

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
pub fn developer_as_system(session: Session) -> Session {
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

// ---------------------------------------------------------------- id assignment

/// What one entry says about tool call ids, for [`assign`].
#[derive(Clone, Debug)]
enum IdTurn {
    /// Calls: name and explicit id.
    Calls(Vec<(String, Option<String>)>),
    /// Results: explicit `tool_call_id` and written tool name.
    Results(Vec<(Option<String>, Option<String>)>),
    Other,
}

/// Ids given to calls and results, and the name of the call each result answers.
#[derive(Debug, Default)]
struct Assigned {
    calls: Vec<Vec<String>>,
    results: Vec<Vec<Option<String>>>,
    answered_name: Vec<Vec<Option<String>>>,
}

/// The id assignment of the module docs.
fn assign(turns: &[IdTurn]) -> Assigned {
    let mut claimed: Vec<Vec<bool>> = turns
        .iter()
        .map(|t| match t {
            IdTurn::Results(r) => vec![false; r.len()],
            _ => Vec::new(),
        })
        .collect();
    let mut out = Assigned {
        calls: turns
            .iter()
            .map(|t| match t {
                IdTurn::Calls(c) => vec![String::new(); c.len()],
                _ => Vec::new(),
            })
            .collect(),
        results: claimed.iter().map(|c| vec![None; c.len()]).collect(),
        answered_name: claimed.iter().map(|c| vec![None; c.len()]).collect(),
    };
    // Explicit call ids first take the first later result with the same id.
    for (t, turn) in turns.iter().enumerate() {
        let IdTurn::Calls(calls) = turn else { continue };
        for (k, (_, id)) in calls.iter().enumerate() {
            let Some(id) = id else { continue };
            out.calls[t][k] = id.clone();
            'scan: for u in t + 1..turns.len() {
                if let IdTurn::Results(rs) = &turns[u] {
                    for (r, (rid, _)) in rs.iter().enumerate() {
                        if !claimed[u][r] && rid.as_deref() == Some(id.as_str()) {
                            claimed[u][r] = true;
                            break 'scan;
                        }
                    }
                }
            }
        }
    }
    // Calls without an id take the first free result naming the same tool in
    // the run of call / result turns that follows.
    for (t, turn) in turns.iter().enumerate() {
        let IdTurn::Calls(calls) = turn else { continue };
        for (k, (name, id)) in calls.iter().enumerate() {
            if id.is_some() {
                continue;
            }
            let mut found = None;
            'find: for u in t + 1..turns.len() {
                match &turns[u] {
                    IdTurn::Results(rs) => {
                        for (r, (rid, rname)) in rs.iter().enumerate() {
                            if claimed[u][r] {
                                continue;
                            }
                            if let Some(rid) = rid
                                && rname.as_deref().is_none_or(|n| n == name)
                            {
                                claimed[u][r] = true;
                                found = Some(rid.clone());
                                break 'find;
                            }
                        }
                    }
                    IdTurn::Calls(_) => {}
                    IdTurn::Other => break,
                }
            }
            out.calls[t][k] = found.unwrap_or_else(|| synthetic_id(t, k));
        }
    }
    // Results pair with the oldest unanswered call. A result without an id
    // never takes a call whose id a result names explicitly: that result is
    // its answer (fuzz finding `sharegpt_anonymous_result_takes_a_named_call`).
    let named: HashSet<&str> = turns
        .iter()
        .filter_map(|t| match t {
            IdTurn::Results(rs) => Some(rs.iter().filter_map(|(rid, _)| rid.as_deref())),
            _ => None,
        })
        .flatten()
        .collect();
    let mut pending: Vec<(String, String)> = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        match turn {
            IdTurn::Calls(calls) => {
                for (k, (name, _)) in calls.iter().enumerate() {
                    pending.push((out.calls[t][k].clone(), name.clone()));
                }
            }
            IdTurn::Results(rs) => {
                for (r, (rid, rname)) in rs.iter().enumerate() {
                    let pick = match rid {
                        Some(id) => pending.iter().position(|(p, _)| p == id),
                        None => {
                            let free = |p: &(String, String)| !named.contains(p.0.as_str());
                            rname
                                .as_ref()
                                .and_then(|n| pending.iter().position(|p| free(p) && p.1 == *n))
                                .or_else(|| pending.iter().position(free))
                        }
                    };
                    let call = pick.map(|i| pending.remove(i));
                    out.results[t][r] = rid.clone().or_else(|| call.as_ref().map(|c| c.0.clone()));
                    out.answered_name[t][r] = call.map(|c| c.1);
                }
            }
            IdTurn::Other => {}
        }
    }
    out
}

// ---------------------------------------------------------------- decoding

/// Reads one ShareGPT session record.
pub fn decode_session(record: Value, source: Source) -> Result<Session, DecodeError> {
    let Value::Object(map) = record else {
        return Err(DecodeError::new(format!(
            "not a ShareGPT session: expected an object, found {}",
            kind_of(&record)
        )));
    };
    if !map.get("conversations").is_some_and(Value::is_array) {
        return Err(DecodeError::new(
            "not a ShareGPT session: expected an object with a `conversations` array",
        ));
    }
    if map.contains_key("messages") {
        return Err(DecodeError::new(
            "a ShareGPT record with both `conversations` and `messages` is not supported",
        ));
    }
    let mut top = Top::read(map, "conversations", Value::is_string);
    let entries = std::mem::take(&mut top.messages);
    let mut entry_maps = Vec::with_capacity(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        let blame = |msg: String| DecodeError::new(format!("conversation entry {i}: {msg}"));
        let Value::Object(e) = e else {
            return Err(blame(format!("expected an object, found {}", kind_of(&e))));
        };
        match e.get("from") {
            Some(Value::String(_)) => {}
            Some(other) => return Err(blame(format!("`from` is {}", kind_of(other)))),
            None => return Err(blame("missing `from`".into())),
        }
        match e.get("value") {
            Some(Value::String(_)) | None => {}
            Some(other) => {
                return Err(blame(format!("`value` is {}, expected a string", kind_of(other))));
            }
        }
        entry_maps.push(e);
    }
    let mut messages = Vec::new();
    if let Some((s, at)) = top.system.take() {
        let mut j = Map::new();
        j.insert("role".into(), Value::String("system".into()));
        j.insert("content".into(), s);
        let mut l = Map::new();
        l.insert("top".into(), Value::from(at));
        j.insert(LAYOUT.into(), Value::Object(l));
        messages.push(decode_message(Value::Object(j)).map_err(DecodeError::new)?);
    }
    messages.extend(decode_entries(&entry_maps).map_err(DecodeError::new)?);
    Ok(top.session(source, messages))
}

/// A tool call read from its JSON text.
#[derive(Clone, Debug)]
struct ParsedCall {
    name: String,
    explicit_id: Option<String>,
    /// The OpenAI `function` object (`name`, `arguments`, other keys in order).
    function: Map<String, Value>,
    /// Other keys of the OpenAI call object (`openai_call`), if carried.
    call_extra: Option<Map<String, Value>>,
    /// The call's `sharegpt_layout` entry (empty: defaults).
    layout: Map<String, Value>,
}

/// A tool result read from a `<tool_response>` (or an observation).
#[derive(Clone, Debug)]
struct ParsedResult {
    /// The OpenAI message object, without an inferred `tool_call_id`.
    json: Map<String, Value>,
    explicit_id: Option<String>,
    /// The tool name written in the result, and its key index.
    name: Option<(String, usize)>,
    /// Index where a derived name would be written.
    name_slot: usize,
}

/// One entry, read.
enum Parsed {
    Plain(Map<String, Value>),
    Calls { json: Map<String, Value>, calls: Vec<ParsedCall> },
    Results(Vec<ParsedResult>),
}

/// Reads the entries, falling back to plain text for any entry whose tool
/// calls or results would not be written back exactly.
fn decode_entries(entries: &[Map<String, Value>]) -> Result<Vec<Message>, String> {
    let mut plain = vec![false; entries.len()];
    loop {
        let parsed: Vec<Parsed> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| parse_entry(e, plain[i]))
            .collect::<Result<_, _>>()?;
        let turns: Vec<IdTurn> = parsed.iter().map(id_turn).collect();
        let ids = assign(&turns);
        let mut out = Vec::new();
        let mut failed = false;
        let mut prev_results = false;
        for (t, p) in parsed.into_iter().enumerate() {
            let (mut msgs, kind) =
                build_entry(p, t, &ids).map_err(|e| format!("conversation entry {t}: {e}"))?;
            let value = entries[t].get("value").and_then(Value::as_str);
            if !matches!(kind, EntryKind::Plain) {
                let again = render_entry(&msgs, &kind, &turns, &ids, t);
                if again.as_deref() != value && !plain[t] {
                    plain[t] = true;
                    failed = true;
                }
            }
            let results = matches!(kind, EntryKind::Results);
            if results
                && prev_results
                && let Some(Value::Object(l)) = msgs.first_mut().map(|m| {
                    m.extra_mut().entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()))
                })
            {
                l.insert("new_turn".into(), Value::Bool(true));
            }
            prev_results = results;
            out.extend(msgs);
        }
        if !failed {
            drop_redundant_ids(&mut out);
            return Ok(out);
        }
    }
}

/// Forgets the explicit call ids of decoded messages when writing would put
/// exactly the same ids in the same places on its own (so that a session
/// converted to ShareGPT and back carries no marker for them).
fn drop_redundant_ids(msgs: &mut [Message]) {
    let mut stripped = msgs.to_vec();
    let mut any = false;
    for m in &mut stripped {
        if !m.extra.contains_key(LAYOUT) {
            continue;
        }
        let Some(Value::Object(l)) = m.extra_mut().get_mut(LAYOUT) else { continue };
        if l.get("id") == Some(&Value::Bool(true)) {
            l.shift_remove("id");
            any = true;
        }
        if let Some(Value::Array(calls)) = l.get_mut("calls") {
            for c in calls.iter_mut() {
                if let Value::Object(o) = c
                    && o.get("id") == Some(&Value::Bool(true))
                {
                    o.shift_remove("id");
                    any = true;
                    if o.is_empty() {
                        *c = Value::Null;
                    }
                }
            }
            if calls.iter().all(Value::is_null) {
                l.shift_remove("calls");
            }
        }
        if l.is_empty() {
            m.extra_mut().shift_remove(LAYOUT);
        }
    }
    // Same plan (which call and result ids get written) with and without the
    // marks: the marks are redundant.
    let ids = |m: &[Message]| plan_ids(m, &plan(m), &answered_names(m));
    if any && ids(&stripped) == ids(msgs) {
        msgs.clone_from_slice(&stripped);
    }
}

/// What [`build_entry`] made, for the exactness check.
enum EntryKind {
    Plain,
    Calls,
    FunctionCall,
    Results,
    Observation,
}

fn id_turn(p: &Parsed) -> IdTurn {
    match p {
        Parsed::Plain(_) => IdTurn::Other,
        Parsed::Calls { calls, .. } => {
            IdTurn::Calls(calls.iter().map(|c| (c.name.clone(), c.explicit_id.clone())).collect())
        }
        Parsed::Results(rs) => IdTurn::Results(
            rs.iter()
                .map(|r| (r.explicit_id.clone(), r.name.as_ref().map(|n| n.0.clone())))
                .collect(),
        ),
    }
}

/// Rewrites an entry's keys as an OpenAI message (`from` -> `role`, `value` ->
/// `content`), reading the content carriers. Returns the map and the label.
fn entry_json(e: &Map<String, Value>, content_text: &str) -> (Map<String, Value>, String) {
    let label = e.get("from").and_then(Value::as_str).unwrap_or_default().to_string();
    let role = role_of(&label);
    let parts = match e.get(CONTENT_PARTS) {
        Some(Value::Array(c)) => parts_from_carrier(content_text, c),
        _ => None,
    };
    let form = match e.get(OPENAI_CONTENT).and_then(Value::as_str) {
        Some(f @ ("null" | "absent")) if content_text.is_empty() && parts.is_none() => Some(f),
        Some("string") if parts.is_none() => Some("string"),
        _ => None,
    };
    let mut j = Map::new();
    let mut has_value = false;
    for (k, v) in e {
        match k.as_str() {
            "from" => {
                j.insert("role".into(), Value::String(role.as_str().to_string()));
            }
            "value" => {
                has_value = true;
                match (&parts, form) {
                    (Some(p), _) => {
                        j.insert("content".into(), Value::Array(p.clone()));
                    }
                    (None, Some("null")) => {
                        j.insert("content".into(), Value::Null);
                    }
                    (None, Some("absent")) => {}
                    _ => {
                        j.insert("content".into(), Value::String(content_text.to_string()));
                    }
                }
            }
            CONTENT_PARTS if parts.is_some() => {}
            OPENAI_CONTENT if form.is_some() => {}
            LAYOUT => {}
            OPENAI_ROLE => {
                j.insert("role".into(), v.clone());
            }
            "openai_from" | "openai_value" => {
                j.insert(k["openai_".len()..].to_string(), v.clone());
            }
            _ => {
                j.insert(k.clone(), v.clone());
            }
        }
    }
    if !has_value {
        // No `value` key at all: an absent content, written back without one.
        j.shift_remove("content");
        j.insert(
            LAYOUT.into(),
            Value::Object(Map::from_iter([("novalue".into(), Value::Bool(true))])),
        );
    }
    (j, label)
}

/// Reads one entry (not yet knowing ids).
fn parse_entry(e: &Map<String, Value>, plain: bool) -> Result<Parsed, String> {
    let label = e.get("from").and_then(Value::as_str).unwrap_or_default();
    let value = e.get("value").and_then(Value::as_str).unwrap_or_default();
    if plain || !e.contains_key("value") {
        if e.contains_key("value") && role_of(label) == Role::Tool && label != "observation" {
            return Ok(bare_result(e, value));
        }
        let (mut j, label) = entry_json(e, value);
        note_label(&mut j, &label);
        return Ok(Parsed::Plain(j));
    }
    match label {
        "function_call" => {
            let (pre, body, post) = split_ws(value);
            match parse_call(body, pre, post, "", "") {
                Some(call) => {
                    let (mut j, label) = entry_json(e, "");
                    if !j.contains_key(OPENAI_CONTENT)
                        && j.get("content") == Some(&Value::String(String::new()))
                    {
                        j.insert("content".into(), Value::Null);
                    }
                    note_label(&mut j, &label);
                    Ok(Parsed::Calls { json: j, calls: vec![call] })
                }
                None => parse_entry(e, true),
            }
        }
        "observation" => {
            let (mut j, label) = entry_json(e, value);
            note_label(&mut j, &label);
            let explicit_id = j.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
            let name = j.get("name").and_then(Value::as_str).map(|n| (n.to_string(), usize::MAX));
            Ok(Parsed::Results(vec![ParsedResult { json: j, explicit_id, name, name_slot: 0 }]))
        }
        _ if role_of(label) == Role::Assistant => parse_calls_entry(e, value),
        _ if role_of(label) == Role::Tool => Ok(parse_results_entry(e, value)),
        _ => parse_entry(e, true),
    }
}

/// Adds the label to the layout marker when it is not the role's default.
fn note_label(j: &mut Map<String, Value>, label: &str) {
    let role = role_of(label);
    if default_label(&role) != label {
        let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(l) = l {
            l.insert("from".into(), Value::String(label.to_string()));
        }
    }
}

/// Reads a call's JSON text (`pre` / `post`: the whitespace around it inside
/// the tags; `dpre` / `dpost`: the defaults for this kind of turn).
fn parse_call(body: &str, pre: &str, post: &str, dpre: &str, dpost: &str) -> Option<ParsedCall> {
    let (obj, style) = parse_object(body)?;
    let name = obj.get("name")?.as_str()?.to_string();
    let mut layout = Map::new();
    let value_form = obj.get(OPENAI_ARGUMENTS).and_then(Value::as_str) == Some("value");
    let call_extra = obj.get(OPENAI_CALL).and_then(Value::as_object).cloned();
    let mut explicit_id = None;
    let mut function = Map::new();
    let args = obj.get("arguments");
    let carried = |k: &str| {
        (k == OPENAI_ARGUMENTS && value_form) || (k == OPENAI_CALL && call_extra.is_some())
    };
    let last_plain = obj.keys().rposition(|k| !carried(k));
    let json_style = style.filter(|s| *s != JsonStyle::Python).unwrap_or(JsonStyle::Spaced);
    // The style the writer picks on its own for these arguments.
    let mut writer_style = JsonStyle::Spaced;
    for (i, (k, v)) in obj.iter().enumerate() {
        match k.as_str() {
            "name" => {
                function.insert("name".into(), v.clone());
            }
            "arguments" => {
                let a = match v {
                    _ if value_form => v.clone(),
                    Value::String(s) => {
                        if let Ok(parsed) = serde_json::from_str::<Value>(s)
                            && JsonStyle::detect(&parsed, s, JSON_STYLES).is_some()
                        {
                            layout.insert("args_string".into(), Value::Bool(true));
                        }
                        v.clone()
                    }
                    other => {
                        let text = json_style.render(other);
                        writer_style = JsonStyle::detect(other, &text, JSON_STYLES)
                            .unwrap_or(JsonStyle::Spaced);
                        Value::String(text)
                    }
                };
                function.insert("arguments".into(), a);
            }
            "id" if v.is_string() => {
                explicit_id = v.as_str().map(str::to_string);
                let at = if last_plain == Some(i) { Value::Bool(true) } else { Value::from(i) };
                layout.insert("id".into(), at);
            }
            OPENAI_ARGUMENTS if value_form => {}
            OPENAI_CALL if call_extra.is_some() => {}
            _ => {
                function.insert(k.clone(), v.clone());
            }
        }
    }
    if args.is_none() {
        layout.insert("raw".into(), Value::String(body.to_string()));
    }
    match style {
        Some(s) if s != writer_style => {
            layout.insert("fmt".into(), Value::String(s.name().into()));
        }
        Some(_) => {}
        None => {
            layout.insert("raw".into(), Value::String(body.to_string()));
        }
    }
    if pre != dpre {
        layout.insert("pre".into(), Value::String(pre.into()));
    }
    if post != dpost {
        layout.insert("post".into(), Value::String(post.into()));
    }
    Some(ParsedCall { name, explicit_id, function, call_extra, layout })
}

/// An assistant entry: tool calls in `<tool_call>` tags, text around them.
fn parse_calls_entry(e: &Map<String, Value>, value: &str) -> Result<Parsed, String> {
    let segs = split_tags(value, CALL_OPEN, CALL_CLOSE);
    // Texts between the calls (unparsable tags stay text), and the calls.
    let mut texts = vec![String::new()];
    let mut calls = Vec::new();
    for seg in segs {
        match seg {
            Seg::Text(t) => {
                if let Some(last) = texts.last_mut() {
                    last.push_str(t);
                }
            }
            Seg::Tag(inner) => {
                let (pre, body, post) = split_ws(inner);
                match parse_call(body, pre, post, "\n", "\n") {
                    Some(c) => {
                        calls.push(c);
                        texts.push(String::new());
                    }
                    None => {
                        if let Some(last) = texts.last_mut() {
                            last.push_str(CALL_OPEN);
                            last.push_str(inner);
                            last.push_str(CALL_CLOSE);
                        }
                    }
                }
            }
        }
    }
    if calls.is_empty() {
        return parse_entry(e, true);
    }
    // The default layout: the text, a newline, then the calls one per line.
    let default_text = match texts.as_slice() {
        [first, between @ .., last] if last.is_empty() && between.iter().all(|t| t == "\n") => {
            if first.is_empty() {
                Some(String::new())
            } else {
                first.strip_suffix('\n').filter(|t| !t.is_empty()).map(str::to_string)
            }
        }
        _ => None,
    };
    let mut at = Vec::new();
    let text = match default_text {
        Some(t) => t,
        None => {
            let mut joined = String::new();
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    at.push(Value::from(joined.len()));
                }
                joined.push_str(t);
            }
            joined
        }
    };
    let (mut j, label) = entry_json(e, &text);
    note_label(&mut j, &label);
    if j.get("content") == Some(&Value::String(String::new())) && !e.contains_key(OPENAI_CONTENT) {
        j.insert("content".into(), Value::Null);
    }
    if !at.is_empty() {
        let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(l) = l {
            l.insert("at".into(), Value::Array(at));
            l.insert("len".into(), Value::from(text.len()));
        }
    }
    Ok(Parsed::Calls { json: j, calls })
}

/// A tool entry read as one result whose text is the whole value.
fn bare_result(e: &Map<String, Value>, value: &str) -> Parsed {
    let (mut j, label) = entry_json(e, value);
    note_label(&mut j, &label);
    set_layout(&mut j, "bare", Value::Bool(true));
    let explicit_id = j.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
    Parsed::Results(vec![ParsedResult { json: j, explicit_id, name: None, name_slot: 0 }])
}

/// A tool entry: one result per `<tool_response>` (or the whole value).
fn parse_results_entry(e: &Map<String, Value>, value: &str) -> Parsed {
    let segs = split_tags(value, RESP_OPEN, RESP_CLOSE);
    let (base, _) = entry_json(e, "");
    if segs.len() == 1 {
        return bare_result(e, value);
    }
    let mut results = Vec::new();
    let mut gap = String::new();
    let n_tags = segs.len() / 2;
    for seg in segs {
        match seg {
            Seg::Text(t) => gap = t.to_string(),
            Seg::Tag(inner) => {
                let default_gap = if results.is_empty() { "" } else { "\n" };
                let mut r = parse_result(inner);
                if gap != default_gap {
                    set_layout(&mut r.json, "before", Value::String(std::mem::take(&mut gap)));
                }
                if results.is_empty() {
                    // Entry keys (other than `from` / `value`) are kept on the
                    // first result, and the marker says they belong to the entry.
                    let mut keys = Vec::new();
                    for (k, v) in &base {
                        if !matches!(k.as_str(), "role" | "content" | LAYOUT)
                            && !r.json.contains_key(k)
                        {
                            r.json.insert(k.clone(), v.clone());
                            keys.push(Value::String(k.clone()));
                        }
                    }
                    if !keys.is_empty() {
                        set_layout(&mut r.json, "entry", Value::Array(keys));
                    }
                }
                results.push(r);
            }
        }
    }
    if !gap.is_empty()
        && let Some(last) = results.last_mut()
    {
        set_layout(&mut last.json, "after", Value::String(gap));
    }
    if results.len() != n_tags {
        return bare_result(e, value);
    }
    Parsed::Results(results)
}

fn set_layout(j: &mut Map<String, Value>, key: &str, v: Value) {
    let l = j.entry(LAYOUT).or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(l) = l {
        l.insert(key.into(), v);
    }
}

/// Reads the inside of one `<tool_response>` tag.
fn parse_result(inner: &str) -> ParsedResult {
    let (pre, body, post) = split_ws(inner);
    let mut j = Map::new();
    j.insert("role".into(), Value::String("tool".into()));
    if pre != "\n" {
        set_layout(&mut j, "pre", Value::String(pre.into()));
    }
    if post != "\n" {
        set_layout(&mut j, "post", Value::String(post.into()));
    }
    let structured = parse_object(body).and_then(|(obj, style)| {
        let style = style?;
        (obj.contains_key("content") || obj.get("tool_call_id").is_some_and(Value::is_string))
            .then_some((obj, style))
    });
    let Some((obj, style)) = structured else {
        j.insert("content".into(), Value::String(body.to_string()));
        set_layout(&mut j, "raw", Value::Bool(true));
        return ParsedResult { json: j, explicit_id: None, name: None, name_slot: 0 };
    };
    if style != JsonStyle::Spaced {
        set_layout(&mut j, "fmt", Value::String(style.name().into()));
    }
    let explicit_id = obj.get("tool_call_id").and_then(Value::as_str).map(str::to_string);
    let name_slot = usize::from(obj.keys().next().map(String::as_str) == Some("tool_call_id"));
    let mut name = None;
    let carrier = obj.get(CONTENT_PARTS).and_then(Value::as_array);
    let mut used_carrier = false;
    for (i, (k, v)) in obj.iter().enumerate() {
        match (k.as_str(), v) {
            ("name", Value::String(n)) => {
                name = Some((n.clone(), i));
                j.insert(k.clone(), v.clone());
            }
            ("content", Value::String(s)) => match carrier.and_then(|c| parts_from_carrier(s, c)) {
                Some(parts) => {
                    used_carrier = true;
                    j.insert("content".into(), Value::Array(parts));
                }
                None => {
                    j.insert("content".into(), v.clone());
                }
            },
            ("content", Value::Null) => {
                j.insert("content".into(), Value::Null);
            }
            ("content", other) => {
                let text = if style == JsonStyle::Python {
                    JsonStyle::Spaced.render(other)
                } else {
                    style.render(other)
                };
                j.insert("content".into(), Value::String(text));
                set_layout(&mut j, "content_json", Value::Bool(true));
            }
            (CONTENT_PARTS, _) if used_carrier => {}
            _ => {
                j.insert(k.clone(), v.clone());
            }
        }
    }
    if used_carrier {
        j.shift_remove(CONTENT_PARTS);
    }
    ParsedResult { json: j, explicit_id, name, name_slot }
}

/// Makes the canonical messages of one entry, with ids.
fn build_entry(p: Parsed, t: usize, ids: &Assigned) -> Result<(Vec<Message>, EntryKind), String> {
    match p {
        Parsed::Plain(j) => {
            let mut m = decode_message(Value::Object(j))?;
            take_attached(&mut m);
            Ok((vec![m], EntryKind::Plain))
        }
        Parsed::Calls { mut json, calls } => {
            let function_call =
                json.get(LAYOUT).and_then(|l| l.get("from")).and_then(Value::as_str)
                    == Some("function_call");
            let mut call_layouts = Vec::new();
            let mut items = Vec::new();
            for (k, c) in calls.into_iter().enumerate() {
                let id = ids.calls.get(t).and_then(|c| c.get(k)).cloned().unwrap_or_default();
                let mut cj = Map::new();
                cj.insert("id".into(), Value::String(id));
                match c.call_extra {
                    Some(extra) => {
                        for (k, v) in extra {
                            cj.insert(k, v);
                        }
                    }
                    None => {
                        cj.insert("type".into(), Value::String("function".into()));
                    }
                }
                cj.insert("function".into(), Value::Object(c.function));
                items.push(Value::Object(cj));
                call_layouts.push(if c.layout.is_empty() {
                    Value::Null
                } else {
                    Value::Object(c.layout)
                });
            }
            if call_layouts.iter().any(|l| !l.is_null()) {
                set_layout(&mut json, "calls", Value::Array(call_layouts));
            }
            // `tool_calls` right after the content.
            let mut j = Map::new();
            let mut items = Some(Value::Array(items));
            for (k, v) in json {
                let is_content = k == "content";
                j.insert(k, v);
                if is_content && let Some(i) = items.take() {
                    j.insert("tool_calls".into(), i);
                }
            }
            if let Some(i) = items {
                j.insert("tool_calls".into(), i);
            }
            let mut m = decode_message(Value::Object(j))?;
            take_attached(&mut m);
            let kind = if function_call { EntryKind::FunctionCall } else { EntryKind::Calls };
            Ok((vec![m], kind))
        }
        Parsed::Results(rs) => {
            let observation = rs.len() == 1
                && rs[0].json.get(LAYOUT).and_then(|l| l.get("from")).and_then(Value::as_str)
                    == Some("observation");
            let mut out = Vec::new();
            for (r, res) in rs.into_iter().enumerate() {
                let mut j = res.json;
                let answered = ids.answered_name.get(t).and_then(|a| a.get(r)).cloned().flatten();
                // A written name that is the answered call's, where it is
                // written by default, is not kept: the writer puts it back.
                if let Some((n, i)) = &res.name
                    && *i == res.name_slot
                    && answered.as_deref() == Some(n.as_str())
                    && !observation
                {
                    j.shift_remove("name");
                }
                let unstructured = j
                    .get(LAYOUT)
                    .is_some_and(|l| l.get("raw").is_some() || l.get("bare").is_some());
                if res.name.is_none() && answered.is_some() && !observation && !unstructured {
                    set_layout(&mut j, "noname", Value::Bool(true));
                }
                let inferred = ids.results.get(t).and_then(|x| x.get(r)).cloned().flatten();
                if res.explicit_id.as_deref().is_some_and(is_synthetic) {
                    // A synthetic id is written only where the source had it.
                    set_layout(&mut j, "id", Value::Bool(true));
                }
                if res.explicit_id.is_none()
                    && !j.contains_key("tool_call_id")
                    && inferred.as_deref().is_some_and(|id| !is_synthetic(id))
                {
                    // A real id that reading inferred: writing must not add it.
                    set_layout(&mut j, "noid", Value::Bool(true));
                }
                let mut m = decode_message(Value::Object(j))?;
                if res.explicit_id.is_none() && m.tool_call_id.is_none() {
                    m.tool_call_id = inferred;
                }
                take_attached(&mut m);
                out.push(m);
            }
            Ok((out, if observation { EntryKind::Observation } else { EntryKind::Results }))
        }
    }
}

/// Moves the `compactor_attached` carrier into `attached`.
fn take_attached(m: &mut Message) {
    if let Some(Value::Array(items)) = m.extra.get(ATTACHED) {
        m.attached = items.clone().into();
        m.extra_mut().shift_remove(ATTACHED);
    }
}

/// Writes one decoded entry's `value` again (for the exactness check).
fn render_entry(
    msgs: &[Message],
    kind: &EntryKind,
    turns: &[IdTurn],
    ids: &Assigned,
    t: usize,
) -> Option<String> {
    match kind {
        EntryKind::Plain => None,
        EntryKind::Calls | EntryKind::FunctionCall => {
            let m = msgs.first()?;
            let written: Vec<bool> = match turns.get(t)? {
                IdTurn::Calls(c) => c.iter().map(|(_, id)| id.is_some()).collect(),
                _ => return None,
            };
            let fc = matches!(kind, EntryKind::FunctionCall);
            Some(render_calls(m, &written, fc).0)
        }
        EntryKind::Results | EntryKind::Observation => {
            let names: Vec<Option<String>> = ids.answered_name.get(t)?.clone();
            let written: Vec<bool> =
                msgs.iter().map(|m| m.extra.contains_key("tool_call_id")).collect();
            if matches!(kind, EntryKind::Observation) {
                return Some(observation_value(msgs.first()?));
            }
            Some(render_results(msgs, &written, &names).0)
        }
    }
}

// ---------------------------------------------------------------- encoding

/// The OpenAI JSON of a message as an object.
fn message_json(m: &Message) -> Map<String, Value> {
    match encode_message(m) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Text of a content value for a `value`, and the carriers it needs.
struct TextOf {
    text: String,
    /// `content_parts`, for list content.
    parts: Option<Vec<Value>>,
    /// The content form: `string`, `null`, `absent` or `parts`.
    form: &'static str,
}

fn text_of(content: Option<&Value>) -> TextOf {
    match content {
        Some(Value::String(s)) => TextOf { text: s.clone(), parts: None, form: "string" },
        Some(Value::Array(items)) => {
            let (text, carrier) = parts_carrier(items);
            TextOf { text, parts: Some(carrier), form: "parts" }
        }
        Some(_) => TextOf { text: String::new(), parts: None, form: "null" },
        None => TextOf { text: String::new(), parts: None, form: "absent" },
    }
}

/// The `value` of an assistant message with tool calls, and its carriers.
/// `written[k]`: write call `k`'s id. `function_call`: the old style.
fn render_calls(
    m: &Message,
    written: &[bool],
    function_call: bool,
) -> (String, Map<String, Value>) {
    let j = message_json(m);
    let layout = layout_of(m);
    let calls_layout: Vec<Option<&Map<String, Value>>> = layout
        .and_then(|l| l.get("calls"))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Value::as_object).collect())
        .unwrap_or_default();
    let cjs: Vec<Map<String, Value>> = match j.get("tool_calls") {
        Some(Value::Array(items)) => {
            items.iter().map(|v| v.as_object().cloned().unwrap_or_default()).collect()
        }
        _ => Vec::new(),
    };
    let t = text_of(j.get("content"));
    let mut carriers = Map::new();
    let derived = if t.text.is_empty() { "null" } else { "string" };
    match &t.parts {
        Some(p) => {
            carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
        }
        None if t.form != derived => {
            carriers.insert(OPENAI_CONTENT.into(), Value::String(t.form.into()));
        }
        None => {}
    }
    let (dws, close_open) = if function_call { ("", false) } else { ("\n", true) };
    let blocks: Vec<String> = m
        .tool_calls
        .iter()
        .enumerate()
        .map(|(k, call)| {
            let cl = calls_layout.get(k).copied().flatten();
            let cj = cjs.get(k).cloned().unwrap_or_default();
            let inner = render_call(call, &cj, cl, written.get(k).copied().unwrap_or(false), dws);
            if close_open { format!("{CALL_OPEN}{inner}{CALL_CLOSE}") } else { inner }
        })
        .collect();
    if function_call {
        return (blocks.concat(), carriers);
    }
    (place_calls(&t.text, &blocks, layout), carriers)
}

/// Puts the call blocks into the text: at the recorded offsets when they still
/// fit, else after the text, one per line.
fn place_calls(text: &str, blocks: &[String], layout: Option<&Map<String, Value>>) -> String {
    let at: Option<Vec<usize>> = layout
        .and_then(|l| l.get("at"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_u64().map(|n| n as usize)).collect());
    let len = layout.and_then(|l| l.get("len")).and_then(Value::as_u64);
    if let Some(at) = at
        && at.len() == blocks.len()
        && len == Some(text.len() as u64)
        && at.windows(2).all(|w| w[0] <= w[1])
        && at.iter().all(|&o| text.is_char_boundary(o))
    {
        let mut out = String::new();
        let mut pos = 0;
        for (o, b) in at.iter().zip(blocks) {
            out.push_str(&text[pos..*o]);
            out.push_str(b);
            pos = *o;
        }
        out.push_str(&text[pos..]);
        return out;
    }
    let calls = blocks.join("\n");
    if text.is_empty() { calls } else { format!("{text}\n{calls}") }
}

/// The JSON text of one call inside its tags (with the whitespace around it).
fn render_call(
    call: &ToolCall,
    cj: &Map<String, Value>,
    layout: Option<&Map<String, Value>>,
    write_id: bool,
    default_ws: &str,
) -> String {
    let pre = layout_str(layout, "pre").unwrap_or(default_ws);
    let post = layout_str(layout, "post").unwrap_or(default_ws);
    let parsed = serde_json::from_str::<Value>(&call.arguments).ok();
    let (args, value_form, writer_style) = match call.args_form {
        ArgsForm::Value => {
            (parsed.unwrap_or_else(|| Value::String(call.arguments.clone())), true, None)
        }
        ArgsForm::String if layout_flag(layout, "args_string") => {
            (Value::String(call.arguments.clone()), false, None)
        }
        ArgsForm::String => {
            match parsed
                .and_then(|v| JsonStyle::detect(&v, &call.arguments, JSON_STYLES).map(|s| (v, s)))
            {
                Some((v, s)) => (v, false, Some(s)),
                None => (Value::String(call.arguments.clone()), false, None),
            }
        }
    };
    let mut obj = Map::new();
    let function = cj.get("function").and_then(Value::as_object).cloned().unwrap_or_default();
    for (k, v) in &function {
        match k.as_str() {
            "name" => {
                obj.insert(k.clone(), Value::String(call.name.clone()));
            }
            "arguments" => {
                obj.insert(k.clone(), args.clone());
            }
            _ => {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    if !obj.contains_key("name") {
        let mut with = Map::new();
        with.insert("name".into(), Value::String(call.name.clone()));
        with.extend(obj);
        obj = with;
    }
    if !obj.contains_key("arguments") {
        obj.insert("arguments".into(), args);
    }
    if write_id {
        let at = layout.and_then(|l| l.get("id")).and_then(Value::as_u64).map(|n| n as usize);
        obj = insert_at(obj, "id", Value::String(call.id.clone()), at);
    }
    let mut call_extra = cj.clone();
    call_extra.shift_remove("id");
    call_extra.shift_remove("function");
    let default_extra =
        call_extra.len() == 1 && call_extra.get("type").and_then(Value::as_str) == Some("function");
    if !default_extra {
        obj.insert(OPENAI_CALL.into(), Value::Object(call_extra));
    }
    if value_form {
        obj.insert(OPENAI_ARGUMENTS.into(), Value::String("value".into()));
    }
    if let Some(raw) = layout_str(layout, "raw")
        && let Some((robj, _)) = parse_object(raw)
        && strip_for_compare(&robj) == strip_for_compare(&obj)
    {
        return format!("{pre}{raw}{post}");
    }
    let obj = Value::Object(obj);
    let style = layout_str(layout, "fmt")
        .and_then(JsonStyle::from_name)
        .or(writer_style)
        .unwrap_or(JsonStyle::Spaced);
    format!("{pre}{}{post}", style.render(&obj))
}

/// A call object as compared with a recorded raw text: empty arguments (`""`
/// or `{}`, what a call written without `arguments` reads back as) left out.
fn strip_for_compare(o: &Map<String, Value>) -> Map<String, Value> {
    let mut o = o.clone();
    let empty = match o.get("arguments") {
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    };
    if empty {
        o.shift_remove("arguments");
    }
    o
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

/// The `value` of a tool turn holding `msgs`, and the carriers of its entry.
/// `written[r]`: write the result's `tool_call_id`; `names[r]`: the answered
/// call's name.
fn render_results(
    msgs: &[Message],
    written: &[bool],
    names: &[Option<String>],
) -> (String, Map<String, Value>) {
    let mut entry_extra = Map::new();
    if let [m] = msgs
        && layout_flag(layout_of(m), "bare")
        && let Some(Value::String(s)) = message_json(m).get("content")
    {
        let write_id = written.first().copied().unwrap_or(false);
        for (k, v) in message_json(m) {
            match k.as_str() {
                "role" | "content" | LAYOUT => {}
                "tool_call_id" if !write_id => {}
                _ => {
                    entry_extra.insert(k, v);
                }
            }
        }
        return (s.clone(), entry_extra);
    }
    let mut out = String::new();
    for (r, m) in msgs.iter().enumerate() {
        let layout = layout_of(m);
        let default_gap = if r == 0 { "" } else { "\n" };
        out.push_str(layout_str(layout, "before").unwrap_or(default_gap));
        out.push_str(RESP_OPEN);
        out.push_str(&render_result(
            m,
            written.get(r).copied().unwrap_or(false),
            names.get(r).cloned().flatten(),
            r == 0,
            &mut entry_extra,
        ));
        out.push_str(RESP_CLOSE);
        if r + 1 == msgs.len() {
            out.push_str(layout_str(layout, "after").unwrap_or(""));
        }
    }
    (out, entry_extra)
}

/// The inside of one `<tool_response>` tag. Keys a raw result cannot hold go
/// to the entry (`entry_extra`) for the first result of a turn.
fn render_result(
    m: &Message,
    write_id: bool,
    derived_name: Option<String>,
    first: bool,
    entry_extra: &mut Map<String, Value>,
) -> String {
    let layout = layout_of(m);
    let pre = layout_str(layout, "pre").unwrap_or("\n");
    let post = layout_str(layout, "post").unwrap_or("\n");
    let mut j = message_json(m);
    let fmt = layout_str(layout, "fmt").and_then(JsonStyle::from_name).unwrap_or(JsonStyle::Spaced);
    if first && let Some(Value::Array(keys)) = layout.and_then(|l| l.get("entry")) {
        for k in keys.iter().filter_map(Value::as_str) {
            if let Some(v) = j.shift_remove(k) {
                entry_extra.insert(k.to_string(), v);
            }
        }
    }
    let others = j
        .keys()
        .filter(|k| !matches!(k.as_str(), "role" | "content" | "tool_call_id" | LAYOUT))
        .count();
    if layout_flag(layout, "raw")
        && let Some(Value::String(s)) = j.get("content")
        && !write_id
        && m.attached.is_empty()
        && others == 0
    {
        return format!("{pre}{s}{post}");
    }
    let mut obj = Map::new();
    let mut explicit_name_moved = None;
    for (k, v) in &j {
        match k.as_str() {
            "role" | LAYOUT => {}
            "tool_call_id" => {
                if write_id {
                    obj.insert(k.clone(), v.clone());
                }
            }
            "content" => match v {
                Value::String(s) if layout_flag(layout, "content_json") => {
                    let style = if fmt == JsonStyle::Python { JsonStyle::Spaced } else { fmt };
                    match serde_json::from_str::<Value>(s) {
                        Ok(parsed) if style.render(&parsed) == *s => {
                            obj.insert(k.clone(), parsed);
                        }
                        _ => {
                            obj.insert(k.clone(), v.clone());
                        }
                    }
                }
                Value::Array(items) => {
                    let (text, carrier) = parts_carrier(items);
                    obj.insert(k.clone(), Value::String(text));
                    obj.insert(CONTENT_PARTS.into(), Value::Array(carrier));
                }
                _ => {
                    obj.insert(k.clone(), v.clone());
                }
            },
            _ => {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    if write_id
        && !obj.contains_key("tool_call_id")
        && let Some(id) = &m.tool_call_id
    {
        obj = insert_at(obj, "tool_call_id", Value::String(id.clone()), Some(0));
    }
    if write_id && !m.extra.contains_key("tool_call_id") {
        // A demanded id goes first, where Hermes writes it.
        if let Some(v) = obj.shift_remove("tool_call_id") {
            obj = insert_at(obj, "tool_call_id", v, Some(0));
        }
    }
    let slot_index = usize::from(obj.keys().next().map(String::as_str) == Some("tool_call_id"));
    match (obj.get("name").and_then(Value::as_str), &derived_name) {
        (Some(n), Some(d)) if n == d => {
            let index = obj.keys().position(|k| k == "name");
            if index == Some(slot_index) {
                // Explicit but where a derived name would be: move it last so
                // that reading keeps it.
                explicit_name_moved = obj.shift_remove("name");
            }
        }
        (None, Some(d)) if !layout_flag(layout, "noname") => {
            obj = insert_at(obj, "name", Value::String(d.clone()), Some(slot_index));
        }
        _ => {}
    }
    if let Some(n) = explicit_name_moved {
        obj.insert("name".into(), n);
    }
    put_attached(&mut obj, m);
    format!("{pre}{}{post}", fmt.render(&Value::Object(obj)))
}

/// The `value` of an observation entry.
fn observation_value(m: &Message) -> String {
    text_of(message_json(m).get("content")).text
}

/// How messages are grouped into entries when writing.
enum Plan {
    Plain(usize),
    Calls(usize, bool),
    Results(Vec<usize>),
    Observation(usize),
}

fn is_observation(m: &Message) -> bool {
    layout_str(layout_of(m), "from") == Some("observation")
}

/// Whether `m` was read from an entry without a `value` key.
fn novalue(m: &Message) -> bool {
    layout_flag(layout_of(m), "novalue")
}

/// Groups canonical messages into entries.
fn plan(msgs: &[Message]) -> Vec<Plan> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        // A tool entry without `value` was read as a plain entry (no result
        // to parse) and is written back as one (fuzz finding
        // `sharegpt_tool_entry_without_value`).
        if m.role == Role::Tool && !novalue(m) {
            if is_observation(m) {
                out.push(Plan::Observation(i));
                i += 1;
                continue;
            }
            let mut group = vec![i];
            i += 1;
            while i < msgs.len()
                && msgs[i].role == Role::Tool
                && !is_observation(&msgs[i])
                && !novalue(&msgs[i])
                && !layout_flag(layout_of(&msgs[i]), "new_turn")
                && layout_str(layout_of(&msgs[i]), "from").is_none()
            {
                group.push(i);
                i += 1;
            }
            out.push(Plan::Results(group));
            continue;
        }
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            let fc = layout_str(layout_of(m), "from") == Some("function_call")
                && m.tool_calls.len() == 1
                && text_of(message_json(m).get("content")).text.is_empty()
                && !m.content.parts.iter().any(|p| !matches!(p, Part::Text(_)));
            out.push(Plan::Calls(i, fc));
        } else {
            out.push(Plan::Plain(i));
        }
        i += 1;
    }
    out
}

/// Decides which ids must be written so that reading pairs and names every
/// call and result as the session does.
/// `answered`: [`answered_names`] of `msgs`.
fn plan_ids(
    msgs: &[Message],
    plans: &[Plan],
    answered: &HashMap<usize, &str>,
) -> (Vec<Vec<bool>>, Vec<Vec<bool>>) {
    let mut call_w: Vec<Vec<bool>> = plans
        .iter()
        .map(|p| match p {
            Plan::Calls(i, _) => {
                let cl: Vec<Option<&Map<String, Value>>> = layout_of(&msgs[*i])
                    .and_then(|l| l.get("calls"))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(Value::as_object).collect())
                    .unwrap_or_default();
                (0..msgs[*i].tool_calls.len())
                    .map(|k| cl.get(k).copied().flatten().is_some_and(|l| l.contains_key("id")))
                    .collect()
            }
            _ => Vec::new(),
        })
        .collect();
    let members = |p: &Plan| -> Vec<usize> {
        match p {
            Plan::Results(g) => g.clone(),
            Plan::Observation(i) => vec![*i],
            _ => Vec::new(),
        }
    };
    // A result writes its `tool_call_id` when the id is a real one (not
    // synthetic) that reading did not infer, or a synthetic one the source
    // wrote; anything else only when reading would otherwise pair differently.
    let mut res_w: Vec<Vec<bool>> = plans
        .iter()
        .map(|p| {
            members(p)
                .iter()
                .map(|&i| {
                    let m = &msgs[i];
                    let l = layout_of(m);
                    m.tool_call_id.as_deref().is_some_and(|id| {
                        layout_flag(l, "id") || (!is_synthetic(id) && !layout_flag(l, "noid"))
                    })
                })
                .collect()
        })
        .collect();
    let max_rounds =
        call_w.iter().map(Vec::len).sum::<usize>() + res_w.iter().map(Vec::len).sum::<usize>() + 1;
    for round in 0..max_rounds {
        // One fix per round (a fixed call often fixes the others); past 64
        // rounds, every mismatch at once.
        let one_at_a_time = round < 64;
        let turns: Vec<IdTurn> = plans
            .iter()
            .enumerate()
            .map(|(t, p)| match p {
                Plan::Calls(i, _) => IdTurn::Calls(
                    msgs[*i]
                        .tool_calls
                        .iter()
                        .enumerate()
                        .map(|(k, c)| (c.name.clone(), call_w[t][k].then(|| c.id.clone())))
                        .collect(),
                ),
                Plan::Results(_) | Plan::Observation(_) => IdTurn::Results(
                    members(p)
                        .iter()
                        .enumerate()
                        .map(|(r, &i)| {
                            let m = &msgs[i];
                            let explicit = m.extra.get("name").and_then(Value::as_str);
                            let raw = (layout_flag(layout_of(m), "raw") && !res_w[t][r])
                                || layout_flag(layout_of(m), "noname")
                                || layout_flag(layout_of(m), "bare");
                            let obs = matches!(p, Plan::Observation(_));
                            let name = match explicit {
                                Some(n) => Some(n.to_string()),
                                None if obs || raw => None,
                                None => answered.get(&i).map(|n| n.to_string()),
                            };
                            (res_w[t][r].then(|| m.tool_call_id.clone()).flatten(), name)
                        })
                        .collect(),
                ),
                Plan::Plain(_) => IdTurn::Other,
            })
            .collect();
        let got = assign(&turns);
        let mut rename: HashMap<String, String> = HashMap::new();
        let mut changed = false;
        // How reading renumbers synthetic ids (they follow positions).
        for (t, p) in plans.iter().enumerate() {
            if let Plan::Calls(i, _) = p {
                for (k, c) in msgs[*i].tool_calls.iter().enumerate() {
                    let y = got.calls[t].get(k).cloned().unwrap_or_default();
                    if is_synthetic(&c.id) && is_synthetic(&y) {
                        rename.entry(c.id.clone()).or_insert(y);
                    }
                }
            }
        }
        // Results first: an id on a result is Hermes' own format.
        for (t, p) in plans.iter().enumerate() {
            for (r, &i) in members(p).iter().enumerate() {
                let m = &msgs[i];
                let expected = m.tool_call_id.as_ref().map(|x| {
                    if is_synthetic(x) { rename.get(x).unwrap_or(x).clone() } else { x.clone() }
                });
                let y = got.results[t].get(r).cloned().flatten();
                let fixable = m.tool_call_id.is_some() && !res_w[t][r];
                if y == expected || !fixable || (changed && one_at_a_time) {
                    continue;
                }
                res_w[t][r] = true;
                changed = true;
            }
        }
        for (t, p) in plans.iter().enumerate() {
            if let Plan::Calls(i, _) = p {
                for (k, c) in msgs[*i].tool_calls.iter().enumerate() {
                    let y = got.calls[t].get(k).cloned().unwrap_or_default();
                    let ok = y == c.id || rename.get(&c.id) == Some(&y);
                    if ok || call_w[t][k] || (changed && one_at_a_time) {
                        continue;
                    }
                    call_w[t][k] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (call_w, res_w)
}

/// Writes one ShareGPT session record.
pub fn encode_session(session: &Session, compaction: Option<&Value>) -> Value {
    let msgs = session.messages.as_slice();
    let top = msgs.first().filter(|m| {
        m.role == Role::System
            && layout_of(m).and_then(|l| l.get("top")).is_some_and(Value::is_u64)
            && m.attached.is_empty()
            && matches!(message_json(m).get("content"), Some(Value::String(_)))
            && message_json(m).keys().all(|k| matches!(k.as_str(), "role" | "content" | LAYOUT))
    });
    let rest = if top.is_some() { &msgs[1..] } else { msgs };
    let system = top.and_then(|m| message_json(m).get("content").cloned());
    let conversations = vec![("conversations", Value::Array(encode_entries(rest)))];
    let mut out = write_top(session, conversations, |v, _| top.is_some() || v.is_string());
    if let Some(s) = system {
        let at = top
            .and_then(layout_of)
            .and_then(|l| l.get("top"))
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        out = insert_at(out, "system", s, at);
    }
    carry_session(&mut out, session, compaction);
    Value::Object(out)
}

/// The name of the call each result (by message index) answers, as reading
/// pairs them: a result takes the oldest call with its id that no earlier
/// result took, so a second result of one call answers none and keeps its own
/// `name` (fuzz finding `sharegpt_call_pairing`). Tool messages read from
/// entries without `value` are plain entries, no results.
fn answered_names(msgs: &[Message]) -> HashMap<usize, &str> {
    let mut pending: Vec<(&str, &str)> = Vec::new();
    let mut answered = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        pending.extend(m.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())));
        if m.role == Role::Tool
            && !novalue(m)
            && let Some(id) = m.tool_call_id.as_deref()
            && let Some(at) = pending.iter().position(|(p, _)| *p == id)
        {
            answered.insert(i, pending.remove(at).1);
        }
    }
    answered
}

/// Writes the messages as `conversations` entries.
fn encode_entries(msgs: &[Message]) -> Vec<Value> {
    let plans = plan(msgs);
    let answered = answered_names(msgs);
    let (call_w, res_w) = plan_ids(msgs, &plans, &answered);
    plans
        .iter()
        .enumerate()
        .map(|(t, p)| match p {
            Plan::Plain(i) => {
                let m = &msgs[*i];
                let text = text_of(message_json(m).get("content"));
                let mut carriers = Map::new();
                let without_value = novalue(m);
                match (&text.parts, text.form) {
                    (Some(p), _) => {
                        carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
                    }
                    (None, "absent") if without_value => {}
                    (None, "null" | "absent") => {
                        carriers.insert(OPENAI_CONTENT.into(), Value::String(text.form.into()));
                    }
                    _ => {}
                }
                let omit_value = text.form == "absent" && without_value;
                entry(m, (!omit_value).then_some(text.text), carriers, None)
            }
            Plan::Calls(i, fc) => {
                let m = &msgs[*i];
                let (value, carriers) = render_calls(m, &call_w[t], *fc);
                let label = if *fc { Some("function_call") } else { None };
                entry(m, Some(value), carriers, label)
            }
            Plan::Observation(i) => {
                let m = &msgs[*i];
                let text = text_of(message_json(m).get("content"));
                let mut carriers = Map::new();
                match (&text.parts, text.form) {
                    (Some(p), _) => {
                        carriers.insert(CONTENT_PARTS.into(), Value::Array(p.clone()));
                    }
                    (None, "null" | "absent") => {
                        carriers.insert(OPENAI_CONTENT.into(), Value::String(text.form.into()));
                    }
                    _ => {}
                }
                let mut e = entry(m, Some(text.text), carriers, None);
                if let Value::Object(map) = &mut e
                    && !res_w[t].first().copied().unwrap_or(false)
                {
                    map.shift_remove("tool_call_id");
                }
                e
            }
            Plan::Results(group) => {
                let members: Vec<Message> = group.iter().map(|&i| msgs[i].clone()).collect();
                let names: Vec<Option<String>> =
                    group.iter().map(|i| answered.get(i).map(|n| n.to_string())).collect();
                let (value, entry_extra) = render_results(&members, &res_w[t], &names);
                let first = &msgs[group[0]];
                let mut e = Map::new();
                let label = layout_str(layout_of(first), "from").unwrap_or("tool");
                e.insert("from".into(), Value::String(label.to_string()));
                e.insert("value".into(), Value::String(value));
                for (k, v) in entry_extra {
                    e.entry(k).or_insert(v);
                }
                Value::Object(e)
            }
        })
        .collect()
}

/// An entry for one message: its OpenAI keys with `role` -> `from` and
/// `content` -> `value`, other keys as they are, then the carriers.
fn entry(
    m: &Message,
    value: Option<String>,
    carriers: Map<String, Value>,
    label: Option<&str>,
) -> Value {
    let j = message_json(m);
    let label = label
        .map(str::to_string)
        .or_else(|| {
            layout_str(layout_of(m), "from")
                .filter(|l| role_of(l) == m.role || *l == "observation")
                .map(str::to_string)
        })
        .unwrap_or_else(|| default_label(&m.role).to_string());
    let mut e = Map::new();
    let mut value = value;
    for (k, v) in j {
        match k.as_str() {
            "role" => {
                e.insert("from".into(), Value::String(label.clone()));
                if m.role == Role::Developer && role_of(&label) != Role::Developer {
                    e.insert(OPENAI_ROLE.into(), Value::String("developer".into()));
                }
            }
            "content" => {
                if let Some(v) = value.take() {
                    e.insert("value".into(), Value::String(v));
                }
            }
            "tool_calls" if m.role == Role::Assistant && !m.tool_calls.is_empty() => {}
            LAYOUT => {}
            "from" | "value" => {
                e.insert(format!("openai_{k}"), v);
            }
            _ => {
                e.insert(k, v);
            }
        }
    }
    if let Some(v) = value {
        e = insert_at(e, "value", Value::String(v), Some(1));
    }
    for (k, v) in carriers {
        e.insert(k, v);
    }
    put_attached(&mut e, m);
    Value::Object(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::openai::OpenAi;
    use crate::formats::{Adapter, Record};
    use serde_json::json;

    fn decode(v: Value) -> Session {
        ShareGpt.decode(vec![Record { source: Source::default(), value: v }]).expect("decodes")
    }

    fn encode(s: &Session) -> Value {
        ShareGpt.encode(s, None).remove(0)
    }

    /// Found by the `decode` fuzz target: a `tool` entry without `value` (the
    /// key misspelt) is read as a plain entry, but was written as a result:
    /// its other keys came back wrapped in a `<tool_response>`.
    #[test]
    fn fuzz_decode_sharegpt_tool_entry_without_value() {
        let call = "<tool_call>\n{\"name\": \"Read\", \"arguments\": {}}\n</tool_call>";
        let resp = "<tool_response>\n{\"name\": \"Read\", \"content\": \"x\"}\n</tool_response>";
        for v in [
            json!({"conversations": [{"from": "human", "value": "go"},
                {"from": "gpt", "value": call}, {"from": "tool", "valug": resp}]}),
            json!({"conversations": [{"from": "human", "value": "go"}, {"from": "tool"},
                {"from": "observation"}, {"from": "tool", "value": resp}]}),
            json!({"conversations": [{"from": "gpt", "value": call},
                {"from": "tool", "value": resp}, {"from": "tool", "tool_call_id": "c9"}]}),
        ] {
            let s = decode(v.clone());
            assert!(s.messages.iter().any(|m| m.role == Role::Tool && novalue(m)), "{v}");
            assert_eq!(encode(&s), v);
            assert_eq!(decode(encode(&s)), s);
        }
    }

    /// Found by the `decode` fuzz target: a second result with the id of a call
    /// the first already answered answers nothing when read, so its `name`
    /// is its own, kept where it was; the writer derived it from the call
    /// (the latest with that id) and moved it after `content`.
    #[test]
    fn fuzz_decode_sharegpt_call_pairing() {
        let call = |name: &str| {
            format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {{}}}}\n</tool_call>")
        };
        let resp = |id: &str, name: &str| {
            format!(
                "<tool_response>\n{{\"tool_call_id\": \"{id}\", \"name\": \"{name}\", \"content\": \"ok\"}}\n</tool_response>"
            )
        };
        for v in [
            json!({"conversations": [{"from": "gpt", "value": call("Edit")},
                {"from": "tool", "value": resp("c8", "Edit")},
                {"from": "tool", "value": resp("c8", "Edit")}]}),
            // Two calls with one id: the results answer them in order.
            json!({"conversations": [
                {"from": "gpt", "value": call("Read").replace("\"name\"", "\"id\": \"c1\", \"name\"")},
                {"from": "gpt", "value": call("Bash").replace("\"name\"", "\"id\": \"c1\", \"name\"")},
                {"from": "tool", "value": resp("c1", "Read")},
                {"from": "tool", "value": resp("c1", "Bash")}]}),
        ] {
            let s = decode(v.clone());
            assert_eq!(encode(&s), v);
            assert_eq!(decode(encode(&s)), s);
        }
    }

    /// Found by the `decode` fuzz target: a result with no id (an unclosed
    /// tag) took the oldest call, whose id a later result names explicitly;
    /// that result then answered nothing, kept its name as written, and the
    /// writer (which derives the name) moved it: the round trip reordered keys.
    #[test]
    fn fuzz_decode_sharegpt_anonymous_result_takes_a_named_call() {
        let call = |cmd: &str| {
            format!(
                "<tool_call>\n{{\"name\": \"Bash\", \"arguments\": {{\"command\": \"{cmd}\"}}}}\n</tool_call>"
            )
        };
        let resp = |id: &str, name: &str| {
            format!(
                "<tool_response>\n{{\"tool_call_id\": \"{id}\", \"name\": \"{name}\", \"content\": \"ok\"}}\n</tool_response>"
            )
        };
        let v = json!({"conversations": [
            {"from": "human", "value": "go"},
            {"from": "gpt", "value": call("a")},
            {"from": "tool", "value": "<tool_response>\n{\"tool_call_id\": \"c1\", \"conte}}"},
            {"from": "tool", "value": resp("c4", "Edit")},
            {"from": "gpt", "value": call("b")},
            {"from": "tool", "value": resp("c5", "Bash")},
            {"from": "gpt", "value": "done"}
        ]});
        let s = same(v);
        let answered: Vec<_> =
            s.messages.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
        assert!(answered.iter().filter(|id| **id == "c5").count() <= 1, "{answered:?}");
    }

    fn openai(v: Value) -> Session {
        OpenAi.decode(vec![Record { source: Source::default(), value: v }]).expect("decodes")
    }

    fn same(v: Value) -> Session {
        let s = decode(v.clone());
        let out = encode(&s);
        assert_eq!(out, v);
        assert_eq!(serde_json::to_string(&out).unwrap(), serde_json::to_string(&v).unwrap());
        s
    }

    #[test]
    fn hermes_agent_trajectory_roundtrips() {
        let v = json!({"conversations": [
            {"from": "system", "value": "You are a function calling AI model. <tools>[]</tools>"},
            {"from": "human", "value": "List the files, then read a.py."},
            {"from": "gpt", "value": "<think>\nfirst ls\n</think>\nLet me look.\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>"},
            {"from": "tool", "value": "<tool_response>\n{\"tool_call_id\": \"call_1\", \"name\": \"terminal\", \"content\": \"a.py\\nb.py\"}\n</tool_response>\n<tool_response>\n{\"tool_call_id\": \"call_2\", \"name\": \"read_file\", \"content\": {\"lines\": 3, \"text\": \"print(1)\"}}\n</tool_response>"},
            {"from": "gpt", "value": "<think>\n</think>\nDone."}
        ], "timestamp": "2026-05-15T10:00:00", "model": "m", "completed": true});
        let s = same(v);
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "assistant"]);
        let a = &s.messages[2];
        assert_eq!(a.text_content(), "<think>\nfirst ls\n</think>\nLet me look.");
        assert_eq!(a.tool_calls[0].id, "call_1");
        assert_eq!(a.tool_calls[1].id, "call_2");
        assert_eq!(a.tool_calls[0].arguments, r#"{"command": "ls"}"#);
        assert_eq!(a.tool_calls[0].args_form, ArgsForm::String);
        assert!(!a.extra.contains_key(LAYOUT));
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(s.messages[3].text_content(), "a.py\nb.py");
        assert!(!s.messages[3].extra.contains_key("name"));
        assert_eq!(s.messages[4].text_content(), r#"{"lines": 3, "text": "print(1)"}"#);
        let out = OpenAi.encode(&s, None).remove(0);
        assert_eq!(
            out["messages"][2]["tool_calls"][1]["function"]["arguments"],
            json!(r#"{"path": "a.py"}"#)
        );
        assert_eq!(
            out["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"})
        );
    }

    #[test]
    fn hermes_v1_python_calls_and_unnamed_ids() {
        let v = json!({"id": "f37cd", "conversations": [
            {"from": "human", "value": "Price of TSLA and AAPL?"},
            {"from": "gpt", "value": "<tool_call>\n{'arguments': {'symbol': 'TSLA'}, 'name': 'get_price'}\n</tool_call>\n<tool_call>\n{'arguments': {'symbol': 'AAPL'}, 'name': 'get_price'}\n</tool_call>\n"},
            {"from": "tool", "value": "<tool_response>\n{\"name\": \"get_price\", \"content\": {\"symbol\": \"TSLA\", \"price\": 191.97}}\n</tool_response>\n<tool_response>\n{\"name\": \"get_price\", \"content\": {\"symbol\": \"AAPL\", \"price\": 180.5}}\n</tool_response>\n"},
            {"from": "gpt", "value": "TSLA is 191.97, AAPL 180.5."}
        ], "category": "Finance"});
        let s = same(v);
        let a = &s.messages[1];
        assert_eq!(a.tool_calls.len(), 2);
        assert_eq!(a.tool_calls[0].id, "sharegpt-1-0");
        assert_eq!(a.tool_calls[1].id, "sharegpt-1-1");
        assert_eq!(a.tool_calls[0].arguments, r#"{"symbol": "TSLA"}"#);
        assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("sharegpt-1-0"));
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("sharegpt-1-1"));
        assert_eq!(s.messages[3].text_content(), r#"{"symbol": "AAPL", "price": 180.5}"#);
    }

    #[test]
    fn old_style_function_call_and_observation() {
        let v = json!({"conversations": [
            {"from": "human", "value": "Weather in Beijing?"},
            {"from": "function_call", "value": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}"},
            {"from": "observation", "value": "{\"temp\": 18}"},
            {"from": "gpt", "value": "18 degrees."}
        ], "tools": "[{\"name\": \"get_weather\"}]", "system": "Be short."});
        let s = same(v);
        assert_eq!(s.messages[0].role, Role::System);
        assert_eq!(s.messages[2].tool_calls[0].name, "get_weather");
        assert_eq!(
            s.messages[3].tool_call_id.as_deref(),
            Some(s.messages[2].tool_calls[0].id.as_str())
        );
        assert_eq!(s.tools, Some(json!("[{\"name\": \"get_weather\"}]")));
    }

    #[test]
    fn text_around_tags_and_odd_whitespace() {
        let v = json!({"conversations": [
            {"from": "human", "value": "go"},
            {"from": "gpt", "value": "I'll read both.<tool_call>{\"name\":\"read\",\"arguments\":{\"p\":\"a\"}}</tool_call> then <tool_call>\n  {\"name\": \"read\", \"arguments\": {\"p\": \"b\"}, \"id\": \"x9\"}\n</tool_call>\nThen summarize.", "weight": 1},
            {"from": "tool", "value": "Results:\n<tool_response>\nplain text result\n</tool_response><tool_response>{\"content\": \"b\", \"tool_call_id\": \"x9\"}</tool_response>", "weight": 0},
            {"from": "gpt", "value": "<tool_call>not json</tool_call>"}
        ]});
        let s = same(v);
        let a = &s.messages[1];
        assert_eq!(a.tool_calls.len(), 2);
        assert_eq!(a.tool_calls[1].id, "x9");
        assert_eq!(a.text_content(), "I'll read both. then \nThen summarize.");
        assert_eq!(s.messages[2].text_content(), "plain text result");
        assert_eq!(s.messages[2].tool_call_id.as_deref(), Some(a.tool_calls[0].id.as_str()));
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("x9"));
        assert!(s.messages[4].tool_calls.is_empty());
        assert_eq!(s.messages[4].text_content(), "<tool_call>not json</tool_call>");
    }

    #[test]
    fn openai_roundtrip_is_identical() {
        let v = json!({
            "id": "s1",
            "messages": [
                {"role": "system", "content": "be brief", "x_prompt_version": 3},
                {"role": "developer", "content": "dev note"},
                {"role": "user", "content": [{"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "high"}},
                    {"type": "text", "text": "two\nlines"}], "name": "alice"},
                {"role": "assistant", "content": "calling", "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.rs\"}"}},
                                {"id": "c2", "type": "function", "function": {"name": "raw", "arguments": "not json"}},
                                {"id": "c3", "index": 2, "function": {"name": "obj", "arguments": {"a": 1}}}]},
                {"role": "tool", "tool_call_id": "c2", "content": [{"type": "image_url", "image_url": "https://x.test/i.png"}, {"type": "text", "text": "shot"}]},
                {"role": "tool", "tool_call_id": "c1", "content": "fn main() {}", "name": "read_file"},
                {"role": "tool", "tool_call_id": "c3", "content": null, "x_exit_code": 0},
                {"role": "user", "content": "next"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c4", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c4", "content": "ok"},
                {"role": "assistant", "tool_calls": [{"id": "c5", "type": "function", "function": {"name": "f", "arguments": "{\"k\":\"é\"}"}}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c6", "type": "function", "function": {"name": "f", "arguments": "{\"k\": \"\\u00e9\"}"}}]},
                {"role": "tool", "tool_call_id": "c6", "content": "ok6"},
                {"role": "tool", "tool_call_id": "c5", "content": "ok5"},
                {"role": "assistant", "content": null},
                {"role": "exit", "content": "bye", "weird": [1, 2]}
            ],
            "tools": [{"type": "function", "function": {"name": "read_file"}}],
            "meta": {"k": 1}
        });
        let x = encode(&openai(v.clone()));
        let back = OpenAi.encode(&decode(x.clone()), None).remove(0);
        assert_eq!(back, v, "sharegpt form: {x}");
        let c = &x["conversations"];
        assert_eq!(c[0], json!({"from": "system", "value": "be brief", "x_prompt_version": 3}));
        // ShareGPT has no developer turn: `system`, the role carried aside.
        assert_eq!(
            c[1],
            json!({"from": "system", "value": "dev note", "openai_role": "developer"})
        );
        assert_eq!(c[2]["value"], json!("hi\ntwo\nlines"));
        assert_eq!(
            c[3]["value"],
            json!(
                "calling\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"raw\", \"arguments\": \"not json\"}\n</tool_call>\n<tool_call>\n{\"name\": \"obj\", \"arguments\": {\"a\": 1}, \"openai_call\": {\"index\": 2}, \"openai_arguments\": \"value\"}\n</tool_call>"
            )
        );
        assert_eq!(c[4]["from"], json!("tool"));
        assert!(c[4]["value"].as_str().unwrap().starts_with("<tool_response>\n{\"tool_call_id\": \"c2\", \"name\": \"raw\", \"content\": \"shot\", \"content_parts\": "));
        assert!(ShareGpt.detect(std::slice::from_ref(&x)));
        // Written again from its own decoding, it is the same record.
        assert_eq!(encode(&decode(x.clone())), x);
    }

    #[test]
    fn ids_are_written_only_where_needed() {
        // Two calls to the same tool answered out of order: the first call needs its id.
        let v = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "b", "content": "B"},
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "z", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
        ]});
        let x = encode(&openai(v.clone()));
        let gpt = x["conversations"][1]["value"].as_str().unwrap();
        assert!(gpt.contains("\"id\": \"a\""), "{gpt}");
        assert!(!gpt.contains("\"id\": \"b\""), "{gpt}");
        let last = x["conversations"][3]["value"].as_str().unwrap();
        assert!(last.contains("\"id\": \"z\""), "{last}");
        assert_eq!(OpenAi.encode(&decode(x), None).remove(0), v);
    }

    #[test]
    fn compacted_sessions_pair_again() {
        let v = json!({"conversations": [
            {"from": "human", "value": "a"},
            {"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"},
            {"from": "tool", "value": "<tool_response>\n{\"name\": \"f\", \"content\": \"1\"}\n</tool_response>"},
            {"from": "gpt", "value": "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>"},
            {"from": "tool", "value": "<tool_response>\n{\"name\": \"g\", \"content\": \"2\"}\n</tool_response>"}
        ]});
        let mut s = decode(v);
        // Drop the first group, as a compaction would: ids get renumbered,
        // nothing new is written.
        s.messages.drain(1..3);
        s.messages.insert(1, Message::text(Role::User, "summary"));
        let out = encode(&s);
        let text = out.to_string();
        assert!(!text.contains("sharegpt-"), "{text}");
        assert!(!text.contains("tool_call_id"), "{text}");
        let again = decode(out);
        assert_eq!(
            again.messages[3].tool_call_id.as_deref(),
            Some(again.messages[2].tool_calls[0].id.as_str())
        );
    }

    /// Pieces a generated `value` is built from.
    const PIECES: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
        "\n",
        "\n\n",
        " ",
        "text",
        "é",
        "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
        "{\"name\":\"g\",\"arguments\":{\"b\":\"\\u00e9\"}}",
        "{'arguments': {'x': None}, 'name': 'h'}",
        "{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}",
        "{\"name\": \"f\", \"arguments\": {}, \"id\": \"i1\"}",
        "{\"tool_call_id\": \"i1\", \"name\": \"f\", \"content\": \"ok\"}",
        "{\"name\": \"f\", \"content\": {\"k\": [1, 2.5]}}",
        "{\"content\": null}",
        "{\"tool_call_id\": \"sharegpt-1-0\", \"content\": \"x\"}",
        "{\"name\": \"g\", \"content\": \"y\", \"extra\": true}",
        "{",
        "}",
        "\"",
        "1e-07",
        "{\"name\": 5}",
    ];
    const LABELS: &[&str] =
        &["human", "gpt", "tool", "function_call", "observation", "system", "chatgpt", "other"];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// Any conversation reads and writes back exactly, and its OpenAI form
        /// reads back into the same record through ShareGPT.
        #[test]
        fn any_value_roundtrips(entries in proptest::collection::vec(
            (0..LABELS.len(), proptest::collection::vec(0..PIECES.len(), 0..8)), 0..8)) {
            let conv: Vec<Value> = entries.iter().map(|(l, ps)| {
                let value: String = ps.iter().map(|&i| PIECES[i]).collect();
                json!({"from": LABELS[*l], "value": value})
            }).collect();
            let v = json!({"conversations": conv});
            let s = decode(v.clone());
            proptest::prop_assert_eq!(encode(&s), v);
            let o = OpenAi.encode(&s, None).remove(0);
            let again = encode(&openai(o.clone()));
            let s2 = decode(again);
            proptest::prop_assert_eq!(OpenAi.encode(&s2, None).remove(0), o);
        }
    }

    #[test]
    fn detection_and_bad_records() {
        let ok = json!({"conversations": [{"from": "human", "value": "hi"}]});
        assert!(ShareGpt.detect(std::slice::from_ref(&ok)));
        assert!(!ShareGpt.detect(&[json!({"messages": [{"role": "user", "content": "hi"}]})]));
        assert!(!ShareGpt.detect(&[json!({"conversations": [{"role": "user", "content": "hi"}]})]));
        for bad in [
            json!(1),
            json!({"conversations": {}}),
            json!({"conversations": [1]}),
            json!({"conversations": [{"value": "x"}]}),
            json!({"conversations": [{"from": "human", "value": 3}]}),
            json!({"conversations": [], "messages": []}),
        ] {
            let r = ShareGpt.decode(vec![Record { source: Source::default(), value: bad.clone() }]);
            assert!(r.is_err(), "accepted {bad}");
        }
        for odd in [
            json!({"conversations": [{"from": "gpt"}, {"from": "tool", "value": "<tool_response>x"}]}),
            json!({"conversations": [{"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\"}\n</tool_call>"}]}),
            json!({"conversations": [{"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1e400}}\n</tool_call>"}]}),
            json!({"conversations": [{"from": "tool", "value": "<tool_response>\n{\"content\": 1.0e-7}\n</tool_response>"}]}),
            json!({"conversations": [{"from": "tool", "value": "a"}, {"from": "tool", "value": "b"}]}),
            json!({"conversations": [{"from": "human", "value": "x", "content_parts": [{"type": "text", "text": 9}]}]}),
        ] {
            assert_eq!(encode(&decode(odd.clone())), odd);
        }
    }
}
