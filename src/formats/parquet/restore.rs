//! Rows of our own tables back to session messages: the inverse of
//! [`rows`](super::rows), which the Parquet and Arrow IPC readers of `io` call
//! through the [`Restore`] handed to them ([`RESTORE`]), so that `io` knows our
//! schema's fields (to recognise our tables) but not how a message maps to them.
//!
//! ## What it does
//! A row's `messages` cell, already turned into JSON by Arrow's generic
//! conversion (a null field is an absent key), becomes the messages written:
//! `parts` (or v1's `content_parts` text) is the `content` again, each call's and
//! each message's `extra` JSON is merged over the typed fields, and in the one
//! fixed schema a null `content` is `content: null` unless the message's `extra`
//! says it had none ([`NO_CONTENT`]).
//!
//! ## Invariants
//! - For every record `r` that [`rows`](super::rows) writes, reading the row
//!   back gives `r` as a JSON value but for the exceptions the module doc of
//!   [`crate::io::parquet`] lists (`formats::parquet::tests` round-trips them).
//! - A cell that cannot be ours (an `extra` that is not JSON, calls that are
//!   not a list) is an error naming the message and the field, never a panic.

use crate::io::parquet::{NO_CONTENT, Restore};
use serde_json::{Map, Value};

/// What the readers of `io` are handed to read our tables' messages.
pub const RESTORE: Restore = Restore(restore_messages);

/// Undoes the writer's message encoding (see the module docs). `fixed`: the
/// one schema, where a null `content` is `content: null` unless the message's
/// `extra` says it had none.
fn restore_messages(v: Value, fixed: bool) -> Result<Value, String> {
    let Value::Array(items) = v else { return Ok(v) };
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let m = restore_message(m).map_err(|e| format!("message {i}: {e}"))?;
            Ok(if fixed { with_content(m) } else { m })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Value::Array)
}

/// A message of the one schema with its `content` key: `null` when the
/// typed field was null, unless it had no `content` at all ([`NO_CONTENT`]).
fn with_content(m: Value) -> Value {
    let Value::Object(mut map) = m else { return m };
    if map.remove(NO_CONTENT).is_some() || map.contains_key("content") {
        return Value::Object(map);
    }
    let mut out = Map::new();
    let mut placed = false;
    for (k, v) in map {
        let after_role = k == "role";
        out.insert(k, v);
        if after_role {
            out.insert("content".into(), Value::Null);
            placed = true;
        }
    }
    if !placed {
        out.insert("content".into(), Value::Null);
    }
    Value::Object(out)
}

fn restore_message(m: Value) -> Result<Value, String> {
    let Value::Object(fields) = m else { return Ok(m) };
    let mut out = Map::new();
    let mut extra = None;
    for (k, v) in fields {
        match k.as_str() {
            // v1: the content array as JSON text.
            "content_parts" => {
                let text = v.as_str().ok_or("`content_parts` is not text")?;
                let parts = serde_json::from_str(text)
                    .map_err(|e| format!("`content_parts` is not JSON: {e}"))?;
                out.insert("content".into(), parts);
            }
            // v2: a multimodal content array, typed; the joined text was only a copy.
            "parts" => {
                out.insert("content".into(), v);
            }
            "content" if out.contains_key("content") => {}
            "tool_calls" => {
                let Value::Array(calls) = v else {
                    return Err("`tool_calls` is not a list".into());
                };
                let calls = calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| with_extra(c).map_err(|e| format!("tool call {i}: {e}")))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert(k, Value::Array(calls));
            }
            "extra" => extra = Some(v),
            _ => {
                out.insert(k, v);
            }
        }
    }
    if let Some(extra) = extra {
        out.insert("extra".into(), extra);
    }
    with_extra(Value::Object(out))
}

/// A struct read back as an object, with its `extra` JSON text (if any)
/// merged over the typed fields; an `extra` that is not an object is the
/// whole value (it was not an object).
fn with_extra(v: Value) -> Result<Value, String> {
    let Value::Object(mut out) = v else { return Ok(v) };
    let Some(text) = out.remove("extra") else { return Ok(Value::Object(out)) };
    let text = text.as_str().ok_or("`extra` is not text")?;
    match serde_json::from_str::<Value>(text).map_err(|e| format!("`extra` is not JSON: {e}"))? {
        Value::Object(more) => {
            out.extend(more);
            Ok(Value::Object(out))
        }
        // A value that was not an object at all.
        other if out.is_empty() => Ok(other),
        _ => Err("`extra` is not a JSON object".into()),
    }
}
