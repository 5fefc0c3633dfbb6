//! Codex CLI rollout JSONL (`~/.codex/sessions/**/rollout-*.jsonl`): one session per file.
//!
//! Every line is `{"timestamp", "type", "payload"}`. This file is table-like (one
//! arm per item type) and keeps the exact line sequence, so it is long.
//!
//! ## Field map
//! - `session_meta` (the first one whose `payload.base_instructions.text` is a
//!   string) → the system message; its text is written back into that field.
//!   `dynamic_tools` stay in the line (Codex's built-in tool schemas are not in
//!   the log, so a partial `tools` list would mislead more than it helps).
//! - `response_item` / `message` (`role`, `content` parts `input_text` /
//!   `output_text` / `input_image`) → a message of that role.
//! - `function_call` (`name`, `arguments` JSON text), `custom_tool_call` (`name`,
//!   raw `input`, e.g. an `apply_patch` patch; arguments become `{"input": ...}`)
//!   and `local_shell_call` (`action`; name `local_shell`) → tool calls.
//!   Consecutive calls (only non-chat lines or reasoning between them) are ONE
//!   assistant message, so parallel calls form one tool group. An assistant
//!   text message before the calls stays its own message: merging would make
//!   the text line's position depend on the calls and gains nothing.
//! - `function_call_output` / `custom_tool_call_output` (`output`: a string, an
//!   array of content items, or anything else kept as one opaque part) → a
//!   `tool` message. An output whose call is not in the live context is what
//!   Codex's own history normalisation drops before a request: it is kept as
//!   a passthrough record, not a message.
//! - `reasoning` → a [`Part::Reasoning`] of the next assistant message (text or
//!   calls), kept verbatim. It has no `text`, so it costs no tokens: its
//!   `encrypted_content` is not text a model reads back, and stage 4 drops it
//!   outside the tail, as it drops any reasoning. Reasoning that no assistant
//!   output follows stays a passthrough record.
//! - `event_msg` (`token_count`, `exec_command_end`, `agent_message`, ...),
//!   `turn_context`, `web_search_call`, `ghost_snapshot`, unknown item types and
//!   any item whose shape is not understood → passthrough records, in place
//!   ([`Message::attached`], [`Session::trailing`]).
//! - `token_count`: the first count with a new running total after an
//!   assistant message gives that message's `meta.usage` (its
//!   `last_token_usage`: input, cached input, output tokens), since Codex logs
//!   it right after the response it measures. Counts that repeat the previous
//!   total (rate-limit updates), a second new total before the next assistant
//!   message (a request whose output is no message, e.g. a web search) and
//!   counts while reasoning waits for its message are skipped.
//! - `compacted` (`message`, `replacement_history`): a compaction Codex made,
//!   recorded in [`Session::recorded_compactions`] (`pre_tokens`: the last
//!   request's `total_tokens` before it; the log has no trigger; the summary
//!   is encrypted when the replacement holds a `compaction` item). Read
//!   [`History::Full`] (the default), the items before it stay conversation,
//!   the line itself passes through and its `replacement_history` is decoded
//!   as the record's `kept` messages. Read [`History::Live`], everything
//!   before the LAST one is history it replaced and passes through untouched
//!   (except the system prompt, which Codex sends with every request); the
//!   items of its `replacement_history` are the live context: they decode as
//!   messages like any other item and are written back into the same line;
//!   its non-chat items (the encrypted `compaction` summary) pass through in
//!   place and cost no tokens, since their text is unknown. A `compacted`
//!   line with a `message` and no `replacement_history` (older Codex) is a
//!   user message holding that summary.
//!
//! ## Our compaction
//! A compacted session written back as Codex is not re-encoded whole: the
//! pipeline writes the input's lines and appends [`super::Adapter::lineage`]'s
//! one `compacted` line (`lineage.rs`: `message` = our summary,
//! `replacement_history` = our compacted context but the system prompt), as
//! Codex records its own; read back, it is a recorded compaction like Codex's.
//!
//! ## Keeping every line
//! Typed fields are taken out of the payload and a slot marker is left at
//! their key, under the OpenAI names (`role`, `content`, `tool_call_id`; a call's
//! `call_id` at `id`, its name and arguments at `function`), so `--to openai`
//! fills the same slots. The envelope's `timestamp` goes into `extra`. What has
//! no OpenAI field (per-line timestamps of a message made of several lines,
//! non-chat lines between them, the `session_meta` and `compacted` line
//! templates) lives in private marker records in `attached`, which only this
//! encoder reads and which the OpenAI encoder never writes. New messages (the
//! summary, with an empty `extra`) become `response_item` message lines with the
//! timestamp of the line before them. An envelope with keys besides
//! `timestamp`, `type` and `payload`, or without a timestamp, passes through.
//!
//! [`Part::Reasoning`]: crate::model::Part::Reasoning
//! [`Message::attached`]: crate::model::Message::attached
//! [`History::Full`]: crate::model::History::Full
//! [`History::Live`]: crate::model::History::Live
//! [`Session::recorded_compactions`]: crate::model::Session::recorded_compactions

mod decode;
mod encode;
mod lineage;
#[cfg(test)]
mod tests;

use super::{Adapter, DecodeError, Record, Unit};
use crate::model::{Continuation, History, Session};
use serde_json::{Map, Value};

use decode::decode_records;
use encode::encode_session;

/// The Codex rollout dialect.
pub struct Codex;

/// Line types of a rollout; a file whose first lines are mostly these is Codex.
const LINE_TYPES: &[&str] =
    &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

// The key-slot marker, so the OpenAI encoder fills (or removes) these slots
// when a Codex session is converted with `--to openai`.
use super::slots::{is_slot, slot};

/// Key of a private marker record (a Unicode noncharacter: no real line has it).
const MARK: &str = "\u{fdd0}compactor:codex";

/// The tool name given to `local_shell_call` items, which carry none.
const LOCAL_SHELL: &str = "local_shell";

/// Wraps private data as a marker record.
fn marker(key: &str, data: Value) -> Value {
    let mut inner = Map::new();
    inner.insert(key.to_string(), data);
    let mut outer = Map::new();
    outer.insert(MARK.to_string(), Value::Object(inner));
    Value::Object(outer)
}

/// The private data of a marker record, if `v` is one.
fn marker_of(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()?.get(MARK)?.as_object()
}

/// The `payload` of a `session_meta` line, whether the line passed through as
/// a record or became the system message's marker (`crate::discover::facts` reads the
/// session's `cwd` from it).
pub fn session_meta_payload(v: &Value) -> Option<&Map<String, Value>> {
    let meta = crate::model::RecordType::SessionMeta;
    let line = match marker_of(v).and_then(|k| k.get(meta.name())) {
        Some(line) => line,
        None => v,
    };
    if !meta.is(line) {
        return None;
    }
    line.get("payload")?.as_object()
}

/// The value left at `content` of a tool result whose `output` was neither a
/// string nor an array: the single opaque part is written back as it was.
fn raw_output_slot() -> Value {
    marker("raw_output", Value::Bool(true))
}

impl Adapter for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn unit(&self) -> Unit {
        Unit::File
    }

    fn detect(&self, first: &[Value]) -> bool {
        let lines = first.iter().filter(|v| line_type(v).is_some()).count();
        lines * 2 > first.len()
            && first.iter().any(|v| {
                matches!(line_type(v), Some("session_meta" | "response_item" | "compacted"))
            })
    }

    fn decode(&self, records: Vec<Record>, history: History) -> Result<Session, DecodeError> {
        decode_records(records, history)
    }

    fn encode(&self, session: &Session, _compaction: Option<&Value>) -> Vec<Value> {
        // The compaction object goes to the report only: the file stays a rollout Codex reads.
        encode_session(session)
    }

    fn lineage(&self, original: &Session, c: &Continuation<'_>) -> Option<Vec<Value>> {
        Some(lineage::lineage_lines(original, c))
    }
}

/// The line type when `v` has the shape of a rollout line.
fn line_type(v: &Value) -> Option<&str> {
    let map = v.as_object()?;
    let ty = map.get("type")?.as_str()?;
    (LINE_TYPES.contains(&ty) && map.get("payload").is_some_and(Value::is_object)).then_some(ty)
}
