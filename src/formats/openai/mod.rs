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
//!
//! ## Files
//! - `mod.rs`: the dialect ([`super::RecordDialect`]) and what the children share: the slot marker,
//!   carried records (`carry`), content-part classification, which fields
//!   of a content and a call the two writers write.
//! - `decode.rs`: a record `Value` -> [`Session`].
//! - `encode.rs`: a [`Session`] -> a record `Value`.
//! - `fast/`: the fast paths, which keep a line's text unparsed: a line
//!   measured without being decoded (`skim`), a line read with the fields
//!   nothing reads kept as JSON text ([`KeptRecord`] -> [`KeptSession`]), and
//!   a record written straight to JSON text (`lines`). Seen from here only
//!   through its re-exports; what the kept path must leave parsed is
//!   [`crate::model::reads`]'s keys.
//!
//! The children use only what this file declares or re-exports (`super::`),
//! never each other; code outside `formats::openai` sees only the re-exports.

mod decode;
mod encode;
mod fast;

use decode::{DECODED_MESSAGE_KEYS, DECODED_SESSION_KEYS};
pub use decode::{decode_message, decode_session, looks_like_session};
pub(crate) use encode::{encode_content, encode_part};
pub use encode::{encode_message, encode_session};
pub use fast::{FastPath, KeptRecord, KeptSession, Reads, Skimmed, skim_line};

use super::{DecodeError, RecordDialect};
use crate::io::pretty::Pretty;
use crate::model::{ArgsForm, Content, ContentForm, ImageInfo, Part, Session, Source, ToolCall};
use serde_json::{Map, Value};

/// The OpenAI chat dialect.
pub struct OpenAi;

/// Message fields the reasoning text may be read from, in order of preference.
pub(crate) const REASONING_FIELDS: &[&str] = &["reasoning_content", "reasoning"];

pub(crate) use super::carried::{ATTACHED, PRIVATE_KEY, TRAILING, carry};
pub(crate) use super::slots::{is_slot, slot};

impl RecordDialect for OpenAi {
    const NAME: &'static str = "openai";

    fn looks_like(record: &Value) -> bool {
        looks_like_session(record)
    }

    fn decode_record(record: Value, source: Source) -> Result<Session, DecodeError> {
        decode::decode_session(record, source)
    }

    fn encode_record(session: &Session, compaction: Option<&Value>) -> Value {
        encode::encode_session(session, compaction)
    }

    fn encode_line(session: &Session, compaction: Option<&Value>) -> Vec<u8> {
        fast::session_line(session, compaction)
    }

    fn encode_pretty(session: &Session, compaction: Option<&Value>) -> Pretty {
        fast::session_pretty(session, compaction)
    }
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

/// How a content is written, by `encode.rs` and `fast/lines.rs` alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ContentShape {
    /// No `content` key.
    Absent,
    Null,
    /// One string: the parts' text joined.
    Text,
    /// An array of the parts.
    Parts,
}

fn content_shape(c: &Content) -> ContentShape {
    let all_text = c.parts.iter().all(|p| matches!(p, Part::Text(_)));
    match c.form {
        ContentForm::Absent if c.parts.is_empty() => ContentShape::Absent,
        ContentForm::Null if c.parts.is_empty() => ContentShape::Null,
        ContentForm::String | ContentForm::Absent | ContentForm::Null if all_text => {
            ContentShape::Text
        }
        _ => ContentShape::Parts,
    }
}

/// Which typed fields of a call are set when it is written, by `encode.rs`
/// and `lines.rs` alike (a field not set keeps what its map holds).
struct CallFields {
    /// It has an id, or was read with an `id` key.
    id: bool,
    /// Unless its key is left as read ([`left_as_read`]).
    name: bool,
    /// Unless its key is left as read ([`left_as_read`]).
    arguments: bool,
}

fn call_fields(call: &ToolCall) -> CallFields {
    let function = &call.function_extra;
    CallFields {
        id: !call.id.is_empty() || call.extra.contains_key("id"),
        name: !left_as_read(function, "name", "arguments", &call.name),
        arguments: !left_as_read(function, "arguments", "name", &call.arguments),
    }
}

/// A call's arguments as the JSON value they were read as
/// ([`ArgsForm::Value`]) while they still parse; `None`: written as a string.
fn arguments_value(call: &ToolCall) -> Option<Value> {
    match call.args_form {
        ArgsForm::String => None,
        ArgsForm::Value => serde_json::from_str(&call.arguments).ok(),
    }
}

/// Whether a call's `key` in its `function` object is written as read while
/// the typed field is still empty (a stage that fills it replaces it): it was
/// read `null`, or it was missing from a `function` read with `other` (a
/// malformed record; fuzz findings `openai_function_without_arguments` and
/// `openai_function_without_name`). A call made here has neither, so it
/// always gets both keys.
fn left_as_read(function: &Map<String, Value>, key: &str, other: &str, typed: &str) -> bool {
    typed.is_empty()
        && match function.get(key) {
            Some(value) => value.is_null(),
            None => function.contains_key(other),
        }
}

#[cfg(test)]
mod tests {
    use super::encode::encode_tool_call;
    use super::*;
    use crate::formats::Adapter;
    use crate::formats::testing::{assert_same_json, decode_one};
    use crate::model::ToolCall;
    use serde_json::json;
    use std::sync::Arc;

    fn decode(v: Value) -> Result<Session, DecodeError> {
        decode_one(&OpenAi, v)
    }

    fn encode(s: &Session, c: Option<&Value>) -> Value {
        OpenAi.encode(s, c).remove(0)
    }

    fn roundtrip(v: Value) -> Value {
        encode(&decode(v).expect("decodes"), None)
    }

    /// A call whose `function` lacks `key` (misspelt in `function`) comes
    /// back as read, while a call made here (`made`) still gets `key`.
    fn call_without_key_round_trips(function: Value, made: ToolCall, key: &str) {
        let v = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]});
        assert_eq!(roundtrip(v.clone()), v);
        assert_eq!(encode_tool_call(&made)["function"][key], "");
    }

    /// Found by the `decode` fuzz target: a `function` without `arguments`
    /// came back with `"arguments": ""`.
    #[test]
    fn fuzz_decode_openai_function_without_arguments() {
        let made = ToolCall { id: "c2".into(), name: "Bash".into(), ..ToolCall::default() };
        call_without_key_round_trips(json!({"name": "Read", "argumEnts": "{}"}), made, "arguments");
    }

    /// Found by the `decode` fuzz target: a `function` without `name` came
    /// back with `"name": ""`.
    #[test]
    fn fuzz_decode_openai_function_without_name() {
        let made = ToolCall { id: "c2".into(), arguments: "{}".into(), ..ToolCall::default() };
        call_without_key_round_trips(json!({"arguments": "{}", "name!": "bash"}), made, "name");
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
        assert_same_json(&out, &v);
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
