//! Session records as rows of the one fixed Parquet schema
//! ([`crate::io::parquet::schema`]): each record split into the typed fields
//! of its row, and what they cannot hold exactly as JSON text (see the
//! module doc of [`crate::io::parquet`] for the encoding, and
//! [`super::batch`] for the rows as Arrow columns).

use crate::io::parquet::{BARE_ARRAY, NO_CONTENT, TOOLS_INFERRED_COLUMN, TRAIN_FIELD};
use serde_json::{Map, Value};

/// What joins the texts of a content array's parts in the `content` field.
const PART_SEPARATOR: &str = "\n";

/// The two optional strings of a [`Pair`].
pub(super) type PairStrings = (Option<String>, Option<String>);
/// A `{name, arguments}` or `{url, detail}` pair of optional strings.
pub(super) type Pair = Option<PairStrings>;

/// One content part of a multimodal message.
#[derive(Debug, Default, PartialEq)]
pub(super) struct PartRow {
    pub(super) kind: Option<String>,
    pub(super) text: Option<String>,
    pub(super) image_url: Pair,
}

/// One tool call: the typed fields, and the JSON object of what they cannot hold.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CallRow {
    pub(super) id: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) function: Pair,
    pub(super) extra: Option<String>,
}

/// One message, split into the struct's fields.
#[derive(Debug, Default, PartialEq)]
pub(super) struct MsgRow {
    pub(super) role: Option<String>,
    pub(super) content: Option<String>,
    pub(super) parts: Option<Vec<PartRow>>,
    pub(super) name: Option<String>,
    pub(super) tool_call_id: Option<String>,
    pub(super) tool_calls: Option<Vec<CallRow>>,
    pub(super) reasoning_content: Option<String>,
    /// The loss flag of a training row (`train`).
    pub(super) train: Option<bool>,
    pub(super) extra: Option<String>,
}

/// One session, ready for the columns.
#[derive(Debug)]
pub(super) struct Row {
    pub(super) id: String,
    pub(super) source: String,
    /// `None`: the record had no `messages` array (the key, if any, is in `metadata`).
    pub(super) messages: Option<Vec<Option<MsgRow>>>,
    pub(super) tools: Option<String>,
    pub(super) tools_inferred: Option<bool>,
    pub(super) compaction: Option<String>,
    pub(super) metadata: Option<String>,
}

/// Splits a session record into a row, with its approximate text size.
pub(super) fn to_row(v: &Value, id: &str, source: &str) -> Result<(Row, usize), String> {
    let mut bytes = id.len() + source.len();
    let mut row = Row {
        id: id.to_string(),
        source: source.to_string(),
        messages: None,
        tools: None,
        tools_inferred: None,
        compaction: None,
        metadata: None,
    };
    match v {
        Value::Array(items) => {
            row.messages = Some(items.iter().map(|m| message_row(m, &mut bytes)).collect());
            row.metadata = Some(to_json_text(&Value::String(BARE_ARRAY.into())));
        }
        Value::Object(map) => {
            let mut metadata = Map::new();
            for (k, val) in map {
                match (k.as_str(), val) {
                    ("messages", Value::Array(items)) => {
                        row.messages =
                            Some(items.iter().map(|m| message_row(m, &mut bytes)).collect());
                        continue;
                    }
                    // The `id` column gives it back.
                    ("id", Value::String(s)) if s == id => continue,
                    ("tools", v) if !v.is_null() => row.tools = Some(to_json_text(v)),
                    (TOOLS_INFERRED_COLUMN, Value::Bool(b)) => row.tools_inferred = Some(*b),
                    ("compaction", v) if !v.is_null() => row.compaction = Some(to_json_text(v)),
                    _ => {
                        metadata.insert(k.clone(), val.clone());
                    }
                }
                bytes += json_size(val) + k.len();
            }
            if !metadata.is_empty() {
                row.metadata = Some(to_json_text(&Value::Object(metadata)));
            }
        }
        other => {
            return Err(format!(
                "a Parquet row holds an OpenAI session (an object or an array of messages), not {}",
                match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    _ => "a string",
                }
            ));
        }
    }
    Ok((row, bytes))
}

/// Approximate size of `v` as JSON text (for row-group sizing only).
fn json_size(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => a.iter().map(json_size).sum::<usize>() + a.len() + 2,
        Value::Object(m) => m.iter().map(|(k, v)| k.len() + 4 + json_size(v)).sum::<usize>() + 2,
        _ => 8,
    }
}

fn to_json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail (its keys are strings).
    serde_json::to_string(v).unwrap_or_default()
}

/// A JSON object's text, `None` when it is empty.
fn object_text(map: Map<String, Value>) -> Option<String> {
    (!map.is_empty()).then(|| to_json_text(&Value::Object(map)))
}

/// Splits a message into the struct's fields; `None` for a null message.
fn message_row(m: &Value, bytes: &mut usize) -> Option<MsgRow> {
    let map = match m {
        Value::Null => return None,
        Value::Object(map) => map,
        other => {
            *bytes += json_size(other);
            return Some(MsgRow { extra: Some(to_json_text(other)), ..MsgRow::default() });
        }
    };
    let mut row = MsgRow::default();
    let mut extra = untyped(map, |k, v| {
        *bytes += k.len() + json_size(v);
        match (k, v) {
            ("role", Value::String(s)) => set(&mut row.role, s),
            ("content", Value::String(s)) => set(&mut row.content, s),
            // A null field reads back as `content: null` (see `NO_CONTENT`).
            ("content", Value::Null) => true,
            ("content", Value::Array(parts)) => {
                // The text is always in `content`; the array itself is typed
                // only when it is multimodal and of the typed shape.
                let texts: Vec<&str> =
                    parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
                if !texts.is_empty() {
                    row.content = Some(texts.join(PART_SEPARATOR));
                }
                let image = parts.iter().any(|p| p.get("type") == Some(&Value::from("image_url")));
                row.parts = if image {
                    parts.iter().map(part_row).collect::<Option<Vec<_>>>()
                } else {
                    None
                };
                row.parts.is_some()
            }
            ("name", Value::String(s)) => set(&mut row.name, s),
            ("tool_call_id", Value::String(s)) => set(&mut row.tool_call_id, s),
            ("reasoning_content", Value::String(s)) => set(&mut row.reasoning_content, s),
            (TRAIN_FIELD, Value::Bool(b)) => {
                row.train = Some(*b);
                true
            }
            ("tool_calls", Value::Array(calls)) => {
                row.tool_calls = Some(calls.iter().map(call_row).collect());
                true
            }
            _ => false,
        }
    });
    if !map.contains_key("content") {
        extra.insert(NO_CONTENT.into(), Value::Bool(true));
    }
    row.extra = object_text(extra);
    Some(row)
}

/// The entries of `map` that `typed` does not take (it returns false for
/// them), for the row's `extra` object.
fn untyped(
    map: &Map<String, Value>,
    mut typed: impl FnMut(&str, &Value) -> bool,
) -> Map<String, Value> {
    let mut extra = Map::new();
    for (k, v) in map {
        if !typed(k, v) {
            extra.insert(k.clone(), v.clone());
        }
    }
    extra
}

fn set(slot: &mut Option<String>, s: &str) -> bool {
    *slot = Some(s.to_string());
    true
}

/// A part of the typed shape (`{type, text?, image_url?: {url?, detail?}}`,
/// strings only), or `None` when it has anything else.
fn part_row(v: &Value) -> Option<PartRow> {
    let mut part = PartRow::default();
    for (k, v) in v.as_object()? {
        match (k.as_str(), v) {
            ("type", Value::String(s)) => part.kind = Some(s.clone()),
            ("text", Value::String(s)) => part.text = Some(s.clone()),
            ("image_url", Value::Object(u)) => {
                let (mut url, mut detail) = (None, None);
                for (uk, uv) in u {
                    match (uk.as_str(), uv) {
                        ("url", Value::String(s)) => url = Some(s.clone()),
                        ("detail", Value::String(s)) => detail = Some(s.clone()),
                        _ => return None,
                    }
                }
                part.image_url = Some((url, detail));
            }
            _ => return None,
        }
    }
    Some(part)
}

/// A tool call in the typed struct. Whatever the typed fields cannot give
/// back exactly goes into the call's own `extra` (a JSON object merged over
/// them on reading), and the name and arguments are typed all the same
/// (arguments that are not a string as their JSON text), so every call reads
/// as a call.
fn call_row(v: &Value) -> CallRow {
    let Some(map) = v.as_object() else {
        return CallRow { extra: Some(to_json_text(v)), ..CallRow::default() };
    };
    let mut call = CallRow::default();
    let extra = untyped(map, |k, v| match (k, v) {
        ("id", Value::String(s)) => set(&mut call.id, s),
        ("type", Value::String(s)) => set(&mut call.kind, s),
        ("function", Value::Object(f)) => {
            let (mut name, mut arguments, mut exact) = (None, None, true);
            for (fk, fv) in f {
                match (fk.as_str(), fv) {
                    ("name", Value::String(s)) => name = Some(s.clone()),
                    // The column is JSON (`arrow.json`): text that is not JSON
                    // (free-form input kept by --keep-source-fields) rides in `extra`.
                    ("arguments", Value::String(s)) if is_json(s) => arguments = Some(s.clone()),
                    ("arguments", other) if !other.is_null() && !other.is_string() => {
                        arguments = Some(to_json_text(other));
                        exact = false;
                    }
                    _ => exact = false,
                }
            }
            call.function = Some((name, arguments));
            exact
        }
        _ => false,
    });
    call.extra = object_text(extra);
    call
}

/// Returns true if and only if `s` is one JSON text (what an `arrow.json` cell holds).
fn is_json(s: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
}
