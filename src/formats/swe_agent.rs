//! SWE-agent trajectories (`*.traj`): one JSON document per file, one session.
//!
//! ## Field map
//! - `history` → the messages, in order (each entry read like an OpenAI
//!   message). Both of SWE-agent's formats:
//!   - text-action (older configs): the assistant's `content` holds its thought
//!     and the action; the environment's output comes back as a `user` message
//!     (`message_type: observation` in newer files). These stay plain user and
//!     assistant messages: that is exactly what the model was sent, and
//!     turning them into calls would invent ids and double-count the action.
//!   - function calling: assistant `tool_calls` (OpenAI shape) and `tool`
//!     messages answering them through `tool_call_ids: [id]`, read as the
//!     message's `tool_call_id` and written back as the same one-element list.
//! - `thought`, `action`, `agent`, `message_type` and any other key of an
//!   entry stay on the message (`extra`): they repeat what `content` and
//!   `tool_calls` already say, so they are not counted.
//! - `is_demo` entries (a demonstration inlined into the context) stay
//!   messages: the model read them on every call, so they count and compact
//!   like any other message.
//! - `trajectory`, `info`, `environment`, `replay_config` and every other
//!   top-level key pass through unchanged ([`Session::extra`]). The session has
//!   no id of its own, so it is named by its source.
//! - mini-swe-agent's `*.traj.json` (`{"info", "messages": [OpenAI messages],
//!   "trajectory_format": "mini-swe-agent-1…"}`) is read as this dialect when
//!   its `trajectory_format` (or `info.mini_version`) says so, and otherwise
//!   exactly like an OpenAI session record; a plain OpenAI session is never
//!   claimed.
//!
//! ## Keeping key order
//! `history` is taken out and its key holds a private marker under the name
//! `messages`, so `--to openai` writes the messages where `history` was and
//! this encoder renames the key back. The compaction object goes to the
//! report only: the written file stays a trajectory SWE-agent's tools open.

use super::openai::{decode_message, decode_session, encode_message, encode_session};
use super::{DecodeError, RecordDialect, Unit};
use crate::model::{Message, Role, Session, Source};
use serde_json::{Map, Value};

/// The SWE-agent trajectory dialect.
pub struct SweAgent;

/// Held at `messages` in place of `history`, so the key is renamed back on encoding.
const HISTORY: &str = "\u{fdd0}compactor:swe-agent:history";

/// Held at `tool_call_id` in place of a one-element `tool_call_ids` list.
const TOOL_CALL_IDS: &str = "\u{fdd0}compactor:swe-agent:tool_call_ids";

/// Top-level keys a SWE-agent trajectory has besides `history`.
const TRAJ_KEYS: &[&str] = &["trajectory", "info", "environment", "replay_config"];

/// Keys only SWE-agent writes on history entries.
const ENTRY_KEYS: &[&str] =
    &["agent", "message_type", "is_demo", "tool_call_ids", "thought", "action"];

impl RecordDialect for SweAgent {
    const NAME: &'static str = "swe-agent";
    const UNIT: Unit = Unit::File;

    fn looks_like(doc: &Value) -> bool {
        is_trajectory(doc) || is_mini(doc)
    }

    fn decode_record(value: Value, source: Source) -> Result<Session, DecodeError> {
        if is_mini(&value) {
            return decode_session(value, source);
        }
        let Value::Object(doc) = value else {
            return Err(DecodeError::new("not a SWE-agent trajectory: expected a JSON object"));
        };
        if doc.contains_key("messages") {
            return Err(DecodeError::new(
                "not a SWE-agent trajectory: it has both `history` and `messages`",
            ));
        }
        let mut extra = Map::new();
        let mut history = None;
        for (k, v) in doc {
            if k == "history" {
                history = Some(v);
                extra.insert("messages".into(), Value::String(HISTORY.into()));
            } else {
                extra.insert(k, v);
            }
        }
        let items = match history {
            Some(Value::Array(items)) => items,
            Some(_) => return Err(DecodeError::new("`history` is not an array")),
            None => return Err(DecodeError::new("not a SWE-agent trajectory: no `history`")),
        };
        let messages = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                decode_entry(v).map_err(|e| DecodeError::new(format!("history[{i}]: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let extra = extra.into();
        Ok(Session { id: source.to_string(), source, messages, extra, ..Session::default() })
    }

    fn encode_record(session: &Session, _compaction: Option<&Value>) -> Value {
        if session.extra.get("messages").and_then(Value::as_str) != Some(HISTORY) {
            // mini-swe-agent: an OpenAI record, written without the compaction object.
            return encode_session(session, None);
        }
        let history: Vec<Value> = session.messages.iter().map(encode_entry).collect();
        let mut history = Some(Value::Array(history));
        let mut doc = Map::new();
        for (k, v) in session.extra.iter() {
            if k == "messages" {
                if let Some(h) = history.take() {
                    doc.insert("history".into(), h);
                }
            } else {
                doc.insert(k.clone(), v.clone());
            }
        }
        Value::Object(doc)
    }
}

/// Returns true if and only if `v` is a SWE-agent `.traj` document.
fn is_trajectory(v: &Value) -> bool {
    let Some(doc) = v.as_object() else { return false };
    let Some(history) = doc.get("history").and_then(Value::as_array) else { return false };
    let entries_fit = history
        .iter()
        .all(|e| e.as_object().is_some_and(|m| m.get("role").is_some_and(Value::is_string)));
    let swe_entries = history
        .iter()
        .filter_map(Value::as_object)
        .any(|m| ENTRY_KEYS.iter().any(|k| m.contains_key(*k)));
    entries_fit
        && !doc.contains_key("messages")
        && (swe_entries || TRAJ_KEYS.iter().any(|k| doc.contains_key(*k)))
}

/// Returns true if and only if `v` is a mini-swe-agent `.traj.json` document.
fn is_mini(v: &Value) -> bool {
    let Some(doc) = v.as_object() else { return false };
    let format = doc
        .get("trajectory_format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("mini-swe-agent"));
    let version = doc.get("info").and_then(|i| i.get("mini_version")).is_some();
    doc.get("messages").is_some_and(Value::is_array) && (format || version)
}

/// Reads one history entry; a `tool` entry's one-element `tool_call_ids`
/// becomes its `tool_call_id`, at the same key position.
fn decode_entry(v: Value) -> Result<Message, String> {
    let mut m = decode_message(v)?;
    let single_id = match m.extra.get("tool_call_ids").and_then(Value::as_array).map(Vec::as_slice)
    {
        Some([Value::String(id)]) => Some(id.clone()),
        _ => None,
    };
    if m.role == Role::Tool
        && m.tool_call_id.is_none()
        && !m.extra.contains_key("tool_call_id")
        && let Some(id) = single_id
    {
        m.tool_call_id = Some(id);
        m.replace_key("tool_call_ids", "tool_call_id", Value::String(TOOL_CALL_IDS.into()));
    }
    Ok(m)
}

/// Writes one history entry, `tool_call_ids` back where it was.
fn encode_entry(m: &Message) -> Value {
    let ids = m.extra.get("tool_call_id").and_then(Value::as_str) == Some(TOOL_CALL_IDS);
    let v = encode_message(m);
    if !ids {
        return v;
    }
    let Value::Object(map) = v else { return v };
    let out: Map<String, Value> = map
        .into_iter()
        .map(|(k, v)| {
            if k == "tool_call_id" {
                ("tool_call_ids".to_string(), Value::Array(vec![v]))
            } else {
                (k, v)
            }
        })
        .collect();
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Adapter;
    use crate::formats::openai::OpenAi;
    use crate::formats::testing::{assert_same_json, decode_one};
    use serde_json::json;

    fn function_calling() -> Value {
        json!({
            "environment": "swe_main",
            "trajectory": [{"action": "ls", "observation": "a.py", "messages": [{"role": "system", "content": "x"}]}],
            "history": [
                {"role": "system", "content": "SETTING", "agent": "main", "message_type": "system_prompt"},
                {"role": "user", "content": "fix it", "agent": "main", "message_type": "observation"},
                {"role": "assistant", "content": "look", "thought": "look", "action": "ls", "agent": "main",
                 "tool_calls": [{"function": {"arguments": "{\"command\":\"ls\"}", "name": "bash"}, "id": "call_1", "type": "function"}],
                 "message_type": "action"},
                {"role": "tool", "content": "a.py", "agent": "main", "message_type": "observation", "tool_call_ids": ["call_1"]}
            ],
            "info": {"exit_status": "submitted"},
            "replay_config": "{}"
        })
    }

    fn text_action() -> Value {
        json!({
            "environment": "swe_main",
            "trajectory": [],
            "history": [
                {"role": "system", "content": "SETTING", "agent": "primary"},
                {"agent": "primary", "content": "Here is a demonstration", "is_demo": true, "role": "user"},
                {"role": "user", "content": "fix it", "agent": "primary"},
                {"role": "assistant", "content": "Let's look.\n```\nls\n```", "thought": "Let's look.", "action": "ls\n", "agent": "primary"},
                {"role": "user", "content": "a.py\n(Open file: n/a)", "agent": "primary"}
            ],
            "info": {}
        })
    }

    #[test]
    fn function_calling_roundtrips_with_key_order() {
        let v = function_calling();
        assert!(SweAgent.detect(std::slice::from_ref(&v)));
        let s = decode_one(&SweAgent, v.clone()).unwrap();
        assert_eq!(s.messages.len(), 4);
        assert_eq!(s.messages[2].tool_calls[0].id, "call_1");
        assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("call_1"));
        let out = SweAgent.encode(&s, Some(&json!({"mode": "lean"}))).remove(0);
        assert_same_json(&out, &v);
    }

    #[test]
    fn text_action_stays_plain_messages() {
        let v = text_action();
        let s = decode_one(&SweAgent, v.clone()).unwrap();
        let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "user", "assistant", "user"]);
        assert!(s.messages.iter().all(|m| m.tool_calls.is_empty()));
        assert_eq!(s.messages[1].extra["is_demo"], true);
        assert_eq!(s.messages[3].extra["action"], "ls\n");
        assert_eq!(SweAgent.encode(&s, None).remove(0), v);
    }

    #[test]
    fn openai_conversion_puts_messages_where_history_was() {
        let s = decode_one(&SweAgent, function_calling()).unwrap();
        let v = OpenAi.encode(&s, None).remove(0);
        assert!(!v.to_string().contains('\u{fdd0}'));
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["environment", "trajectory", "messages", "info", "replay_config"]);
        assert_eq!(v["messages"][3]["tool_call_id"], "call_1");
        assert!(v["messages"][3].get("tool_call_ids").is_none());
    }

    #[test]
    fn mini_swe_agent_is_claimed_only_when_it_says_so() {
        let mini = json!({"info": {"exit_status": "Submitted", "mini_version": "1.0"},
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u", "extra": {"k": 1}}],
            "trajectory_format": "mini-swe-agent-1"});
        assert!(SweAgent.detect(std::slice::from_ref(&mini)));
        let s = decode_one(&SweAgent, mini.clone()).unwrap();
        assert_eq!(s.messages.len(), 2);
        assert_eq!(SweAgent.encode(&s, Some(&json!({}))).remove(0), mini);
        let plain = json!({"messages": [{"role": "user", "content": "u"}], "info": {"x": 1}});
        assert!(!SweAgent.detect(&[plain]));
        assert!(
            !SweAgent.detect(&[json!({"history": [{"role": "user", "content": "u"}]})]),
            "bare history"
        );
        assert!(
            !SweAgent.detect(&[function_calling(), function_calling()]),
            "one document per file"
        );
    }

    #[test]
    fn bad_documents_are_errors() {
        for bad in [
            json!([1]),
            json!({"history": 5, "info": {}}),
            json!({"history": [{"content": "no role"}], "info": {}}),
            json!({"history": [], "messages": [], "info": {}}),
            json!({"trajectory": []}),
        ] {
            assert!(decode_one(&SweAgent, bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_that_are_not_one_string_stay_as_they_are() {
        let mut v = function_calling();
        v["history"][3]["tool_call_ids"] = json!(["call_1", "call_2"]);
        let s = decode_one(&SweAgent, v.clone()).unwrap();
        assert_eq!(s.messages[3].tool_call_id, None);
        assert_eq!(SweAgent.encode(&s, None).remove(0), v);
    }
}
