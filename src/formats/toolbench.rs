//! ToolBench DFSDT answers (`*_ChatGPT_DFS_woFilter_w2.json`): one JSON document per file.
//!
//! ## Field map
//! - `answer_generation.train_messages` is a list of message lists, one per
//!   step of the depth-first search, each the whole conversation up to that
//!   step. The LAST list is the transcript (the search's final path, and the
//!   longest in every corpus file); the earlier lists, `tree`,
//!   `compare_candidates`, `forward_args`, `chain` and every other key pass
//!   through unchanged ([`Session::extra`]). A file with no `train_messages`
//!   (only the search `tree`) is a session with zero messages.
//! - `answer_generation.function` (the tool schemas) → [`Session::tools`],
//!   written back at the same position.
//! - Messages use the legacy OpenAI function-calling shape: an assistant
//!   `function_call: {name, arguments}` becomes one tool call, and the next
//!   `role: "function"` message (with `name`) is its result (a `tool` message).
//!   The shape has no ids, so ids are synthetic and deterministic:
//!   `toolbench-call-N`, N the assistant message's index in the transcript; a
//!   `function` message answers the newest unanswered call (none: no id).
//!   Both are written back in the legacy shape, without the ids.
//! - Messages already in the modern shape (`tool_calls`, `role: "tool"`) are
//!   read and written as OpenAI messages.
//!
//! The compaction object goes to the report only: the written file stays a
//! ToolBench answer.

use super::openai::{decode_message, encode_message};
use super::{DecodeError, RecordDialect, Unit};
use crate::model::{ArgsForm, Message, Role, Session, Source, ToolCall};
use serde_json::{Map, Value};

/// The ToolBench DFSDT answer dialect.
pub struct ToolBench;

/// Prefix of the synthetic call ids.
const CALL_ID_PREFIX: &str = "toolbench-call-";

// The key-slot marker, so `--to openai` fills these slots (the call's
// `function` keys, the message's `tool_calls`) in place.
use super::slots::SLOT;

/// Key of the private layout held at `messages` in [`Session::extra`].
const MARK: &str = "\u{fdd0}compactor:toolbench";

impl RecordDialect for ToolBench {
    const NAME: &'static str = "toolbench";
    const UNIT: Unit = Unit::File;

    fn looks_like(doc: &Value) -> bool {
        let Some(doc) = doc.as_object() else { return false };
        let Some(answer) = doc.get("answer_generation").and_then(Value::as_object) else {
            return false;
        };
        !doc.contains_key("messages")
            && (doc.contains_key("tree")
                || ["train_messages", "function", "finish_type"]
                    .iter()
                    .any(|k| answer.contains_key(*k)))
    }

    fn decode_record(value: Value, source: Source) -> Result<Session, DecodeError> {
        let Value::Object(mut doc) = value else {
            return Err(DecodeError::new("not a ToolBench answer: expected a JSON object"));
        };
        if doc.contains_key("messages") {
            return Err(DecodeError::new("not a ToolBench answer: it has a top-level `messages`"));
        }
        let Some(answer) = doc.get_mut("answer_generation").and_then(Value::as_object_mut) else {
            return Err(DecodeError::new("not a ToolBench answer: no `answer_generation` object"));
        };
        let function_at = answer.keys().position(|k| k == "function");
        let tools = answer.shift_remove("function");
        let transcript = match answer.get_mut("train_messages") {
            None => None,
            Some(Value::Array(lists)) if lists.iter().all(Value::is_array) => match lists.pop() {
                Some(Value::Array(last)) => Some(last),
                _ => None,
            },
            Some(_) => {
                return Err(DecodeError::new("`train_messages` is not a list of message lists"));
            }
        };
        let has_transcript = transcript.is_some();
        let messages = decode_transcript(transcript.unwrap_or_default())?;
        let mut layout = Map::new();
        layout.insert("function_at".into(), function_at.map_or(Value::Null, Value::from));
        layout.insert("transcript".into(), Value::Bool(has_transcript));
        let mut mark = Map::new();
        mark.insert(MARK.into(), Value::Object(layout));
        // Last, where `--to openai` writes the messages; removed again on encoding.
        doc.insert("messages".into(), Value::Object(mark));
        Ok(Session {
            id: source.to_string(),
            source,
            messages,
            tools,
            extra: doc.into(),
            ..Session::default()
        })
    }

    fn encode_record(session: &Session, _compaction: Option<&Value>) -> Value {
        let mut doc = (*session.extra).clone();
        let layout = doc.shift_remove("messages");
        let layout = layout.as_ref().and_then(|v| v.get(MARK));
        let function_at = layout.and_then(|l| l.get("function_at")).and_then(Value::as_u64);
        let transcript = layout
            .and_then(|l| l.get("transcript"))
            .and_then(Value::as_bool)
            .unwrap_or(!session.messages.is_empty());
        let answer = match doc.get_mut("answer_generation") {
            Some(Value::Object(a)) => a,
            _ => {
                doc.insert("answer_generation".into(), Value::Object(Map::new()));
                match doc.get_mut("answer_generation") {
                    Some(Value::Object(a)) => a,
                    _ => return Value::Object(doc),
                }
            }
        };
        if let Some(tools) = &session.tools {
            let at = function_at.map_or(answer.len(), |i| (i as usize).min(answer.len()));
            answer.shift_insert(at, "function".into(), tools.clone());
        }
        if transcript || !session.messages.is_empty() {
            let list = Value::Array(session.messages.iter().map(encode_legacy).collect());
            match answer.get_mut("train_messages") {
                Some(Value::Array(lists)) => lists.push(list),
                _ => {
                    answer.insert("train_messages".into(), Value::Array(vec![list]));
                }
            }
        }
        Value::Object(doc)
    }
}

/// Reads the transcript, giving legacy calls and results synthetic ids.
fn decode_transcript(items: Vec<Value>) -> Result<Vec<Message>, DecodeError> {
    let mut messages = Vec::with_capacity(items.len());
    let mut open: Option<String> = None;
    for (i, v) in items.into_iter().enumerate() {
        let mut m = decode_message(v)
            .map_err(|e| DecodeError::new(format!("train_messages[-1][{i}]: {e}")))?;
        if m.role == Role::Assistant
            && let Some(call) = legacy_call(&m.extra, i)
        {
            open = Some(call.id.clone());
            m.tool_calls_mut().push(call);
            m.replace_key("function_call", "tool_calls", Value::String(SLOT.into()));
        } else if m.role == Role::Other("function".into()) {
            m.role = Role::Tool;
            m.tool_call_id = open.take();
        }
        messages.push(m);
    }
    Ok(messages)
}

/// The tool call of an assistant message's `function_call`, if it has a usable one.
fn legacy_call(extra: &Map<String, Value>, index: usize) -> Option<ToolCall> {
    if extra.contains_key("tool_calls") {
        return None;
    }
    let fc = extra.get("function_call")?.as_object()?;
    let name = fc.get("name")?.as_str()?.to_string();
    let (arguments, args_form) = match fc.get("arguments") {
        Some(Value::String(s)) => (s.clone(), ArgsForm::String),
        None => (String::new(), ArgsForm::String),
        Some(v) => (v.to_string(), ArgsForm::Value),
    };
    let mut function_extra = Map::new();
    for (k, v) in fc {
        let v =
            if k == "name" || k == "arguments" { Value::String(SLOT.into()) } else { v.clone() };
        function_extra.insert(k.clone(), v);
    }
    let mut call_extra = Map::new();
    call_extra.insert("type".into(), Value::String("function".into()));
    Some(ToolCall {
        id: format!("{CALL_ID_PREFIX}{index}"),
        name,
        arguments,
        args_form,
        extra: call_extra,
        function_extra,
    })
}

/// Writes a message back in the legacy shape (modern messages as they were).
fn encode_legacy(m: &Message) -> Value {
    let v = encode_message(m);
    let Value::Object(map) = v else { return v };
    let legacy_calls =
        !m.tool_calls.is_empty() && m.tool_calls.iter().all(|c| c.id.starts_with(CALL_ID_PREFIX));
    let legacy_result = m.role == Role::Tool && !m.extra.contains_key("tool_call_id");
    let mut out = Map::new();
    for (k, v) in map {
        match k.as_str() {
            "tool_calls" if legacy_calls => {
                // One call per message in this shape: the first is the function call.
                if let Some(f) = v.get(0).and_then(|c| c.get("function")) {
                    out.insert("function_call".into(), f.clone());
                }
            }
            "tool_call_id" if legacy_result => {}
            "role" if legacy_result => {
                out.insert(k, Value::String("function".into()));
            }
            _ => {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Adapter;
    use crate::formats::openai::OpenAi;
    use crate::formats::testing::{assert_same_json, decode_one};
    use serde_json::json;

    fn answer() -> Value {
        json!({
            "win": true,
            "tree": {"size": 3, "tree": {"children": []}},
            "answer_generation": {
                "valid_data": true,
                "function": [{"name": "search_for_x", "parameters": {"type": "object"}}],
                "train_messages": [
                    [{"role": "system", "content": "You are AutoGPT"}, {"role": "user", "content": "find x"}],
                    [
                        {"role": "system", "content": "You are AutoGPT"},
                        {"role": "user", "content": "find x"},
                        {"role": "assistant", "content": null, "function_call": {"name": "search_for_x", "arguments": "{\"q\": \"x\"}"}},
                        {"role": "function", "name": "search_for_x", "content": "{\"error\": \"\", \"response\": \"x=1\"}"},
                        {"role": "user", "content": "retry", "valid": false},
                        {"role": "assistant", "content": "Trying again", "function_call": {"name": "Finish", "arguments": "{}"}}
                    ]
                ],
                "query": "find x"
            }
        })
    }

    #[test]
    fn last_list_is_the_transcript_and_roundtrips() {
        let v = answer();
        assert!(ToolBench.detect(std::slice::from_ref(&v)));
        let s = decode_one(&ToolBench, v.clone()).unwrap();
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "user", "assistant"]);
        assert_eq!(s.messages[2].tool_calls[0].id, "toolbench-call-2");
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("toolbench-call-2"));
        assert_eq!(s.messages[3].result_name(), Some("search_for_x"));
        assert_eq!(s.messages[5].tool_calls[0].name, "Finish");
        assert_eq!(s.tools.as_ref().unwrap()[0]["name"], "search_for_x");
        let out = ToolBench.encode(&s, Some(&json!({"mode": "lean"}))).remove(0);
        assert_same_json(&out, &v);
    }

    #[test]
    fn openai_conversion_has_ids_and_no_slots() {
        let s = decode_one(&ToolBench, answer()).unwrap();
        let v = OpenAi.encode(&s, None).remove(0);
        assert!(!v.to_string().contains('\u{fdd0}'));
        let m = &v["messages"];
        assert_eq!(
            m[2]["tool_calls"][0],
            json!({"type": "function", "id": "toolbench-call-2",
                   "function": {"name": "search_for_x", "arguments": "{\"q\": \"x\"}"}})
        );
        assert_eq!(m[3]["role"], "tool");
        assert_eq!(m[3]["tool_call_id"], "toolbench-call-2");
        assert_eq!(v["tools"][0]["name"], "search_for_x");
        assert_eq!(v["answer_generation"]["train_messages"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_tree_only_answer_has_no_messages() {
        let v = json!({"win": false, "tree": {"size": 1}, "forward_args": {},
            "answer_generation": {"valid_data": false, "function": [], "chain": [], "finish_type": "give_up"}});
        assert!(ToolBench.detect(std::slice::from_ref(&v)));
        let s = decode_one(&ToolBench, v.clone()).unwrap();
        assert!(s.messages.is_empty());
        assert_eq!(ToolBench.encode(&s, None).remove(0), v);
    }

    #[test]
    fn dropped_calls_and_orphans_write_back_cleanly() {
        let mut s = decode_one(&ToolBench, answer()).unwrap();
        s.messages[5].tool_calls_mut().clear();
        let out = ToolBench.encode(&s, None).remove(0);
        let last = &out["answer_generation"]["train_messages"][1][5];
        assert_eq!(last, &json!({"role": "assistant", "content": "Trying again"}));
        // A function message with no open call has no id and is still a function message.
        let mut v = answer();
        v["answer_generation"]["train_messages"][1][2] =
            json!({"role": "assistant", "content": "hm"});
        let s = decode_one(&ToolBench, v.clone()).unwrap();
        assert_eq!(s.messages[3].tool_call_id, None);
        assert_eq!(ToolBench.encode(&s, None).remove(0), v);
    }

    #[test]
    fn detection_and_errors() {
        assert!(!ToolBench.detect(&[json!({"messages": [], "answer_generation": {"query": "q"}})]));
        assert!(!ToolBench.detect(&[json!({"answer_generation": {}})]));
        assert!(!ToolBench.detect(&[answer(), answer()]));
        for bad in [
            json!(3),
            json!({"tree": {}}),
            json!({"answer_generation": {"train_messages": [{"role": "user"}]}}),
            json!({"answer_generation": {"train_messages": [[{"content": "no role"}]]}}),
        ] {
            assert!(decode_one(&ToolBench, bad.clone()).is_err(), "{bad}");
        }
    }
}
