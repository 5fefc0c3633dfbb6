//! Training rows: a clean session record made ready for a chat template and a
//! loss mask (`--to parquet`, issue 40).
//!
//! ## What it does
//! [`shape`] takes the record the OpenAI writer made of a compacted clean
//! request and the session it was made from, and
//! 1. gives every assistant message a loss flag, `"train"`: `false` when we
//!    made or changed it ([`MessageMeta::made`]: a summary, a stub, a result
//!    or call a stage rewrote, a message whose reasoning or calls we dropped),
//!    `true` when it is the input's as read. Other roles get no flag (null in
//!    the Parquet column);
//! 2. folds every `developer` message, and every `system` message after the
//!    first message, into one leading `system` message, in order, their texts
//!    joined by [`FOLD_SEPARATOR`] (one is made when the session has none);
//! 3. declares the tools: the log's schemas when it has them (`tools`), and a
//!    schema inferred from the session's calls ([`tools::infer`]) for every
//!    called tool the log does not declare; `"tools_inferred"` says whether any
//!    schema was inferred (absent when the session has neither schemas nor calls).
//!
//! ## Why
//! Real chat templates (Qwen2.5, Llama 3.1, Mistral) render only `system`
//! first, then `user` / `assistant` / `tool`: a `developer` message is
//! dropped without a word and a later `system` message is refused. A model
//! trained on calls to tools its prompt never declared learns to call
//! undeclared tools. And text we wrote (summaries, stubs, one-liners) must
//! not be learnt as the assistant's own.
//!
//! ## Example
//! `system(S) developer(D) user(U) assistant(call f{"x":1}) tool(r)` →
//! `system(S\n\nD) user(U) assistant(call f, train: true) tool(r)`, tools
//! `[f(x: integer, required x)]`, `tools_inferred: true`.
//!
//! ## Invariants
//! - Deterministic: the same record gives the same row (no maps in hash order).
//! - Every call of the row names a tool of its `tools`, and its arguments
//!   validate against that tool's `parameters` when the schema was inferred.
//! - Nothing but the leading system message changes text; no message is
//!   dropped except the folded ones, whose text is in the system message.

pub mod tools;

use crate::model::part::content_text;
use crate::model::{MessageMeta, Role, Session};
use serde_json::{Map, Value};

/// Joins the texts folded into the leading system message.
pub const FOLD_SEPARATOR: &str = "\n\n";
/// Each assistant message's loss flag.
pub const TRAIN_KEY: &str = "train";
/// The record's key saying whether `tools` holds an inferred schema.
pub const TOOLS_INFERRED_KEY: &str = "tools_inferred";

/// Makes `record` (the OpenAI writer's record of `session`, one message per
/// message of the session) a training row: loss flags, one leading system
/// message, declared tools (see the module doc). A record that is not of that
/// shape (a bare array, messages not matching the session) gets the flags it
/// can and is otherwise left alone.
pub fn shape(record: &mut Value, session: &Session) {
    let Some(obj) = record.as_object_mut() else { return };
    let Some(Value::Array(messages)) = obj.get_mut("messages") else { return };
    if messages.len() == session.messages.len() {
        for (v, m) in messages.iter_mut().zip(&session.messages) {
            if let (Some(flag), Some(o)) = (train_flag(&m.role, &m.meta), v.as_object_mut()) {
                o.insert(TRAIN_KEY.into(), Value::Bool(flag));
            }
        }
    }
    fold_system(messages);
    let declared: Vec<Value> = match obj.get("tools") {
        Some(Value::Array(t)) => t.clone(),
        _ => Vec::new(),
    };
    let (all, inferred) = tools::declare(declared, obj.get("messages"));
    if !all.is_empty() {
        obj.insert("tools".into(), Value::Array(all));
        obj.insert(TOOLS_INFERRED_KEY.into(), Value::Bool(inferred > 0));
    }
}

/// The loss flag of a message of `role`: `Some(false)` for an assistant
/// message we made or changed, `Some(true)` for one as read, `None` for other
/// roles (a trainer learns only assistant turns).
fn train_flag(role: &Role, meta: &MessageMeta) -> Option<bool> {
    (*role == Role::Assistant).then_some(!meta.made)
}

/// Folds `developer` messages, and `system` messages after the first message,
/// into the leading system message (made at the front when the first message
/// is not one), in order. Returns how many were folded.
fn fold_system(messages: &mut Vec<Value>) -> usize {
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_string);
    let foldable = |i: usize, m: &Value| match role(m).as_deref() {
        Some("developer") => true,
        Some("system") => i > 0,
        _ => false,
    };
    if !messages.iter().enumerate().any(|(i, m)| foldable(i, m)) {
        return 0;
    }
    let mut texts: Vec<String> = Vec::new();
    let mut kept: Vec<Value> = Vec::with_capacity(messages.len());
    let mut folded = 0;
    for (i, m) in std::mem::take(messages).into_iter().enumerate() {
        if i == 0 && role(&m).as_deref() == Some("system") {
            texts.push(text_of(&m));
            continue;
        }
        if foldable(i, &m) {
            texts.push(text_of(&m));
            folded += 1;
        } else {
            kept.push(m);
        }
    }
    let texts: Vec<String> = texts.into_iter().filter(|t| !t.is_empty()).collect();
    let mut system = Map::new();
    system.insert("role".into(), Value::from("system"));
    system.insert("content".into(), Value::String(texts.join(FOLD_SEPARATOR)));
    kept.insert(0, Value::Object(system));
    *messages = kept;
    folded
}

/// A message's text: its string content, or its parts' texts joined by newlines.
fn text_of(m: &Value) -> String {
    content_text(m.get("content"), "\n").unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use serde_json::json;

    fn session(messages: Vec<Message>) -> Session {
        Session { messages, ..Session::default() }
    }

    #[test]
    fn assistant_messages_we_made_are_not_trained_on_and_others_have_no_flag() {
        let mut made = Message::made(Role::Assistant, "summary");
        made.meta.made = true;
        let s = session(vec![
            Message::text(Role::User, "u"),
            made,
            Message::text(Role::Assistant, "a"),
            Message::text(Role::Tool, "r"),
        ]);
        let mut rec = json!({"messages": [
            {"role": "user", "content": "u"}, {"role": "assistant", "content": "summary"},
            {"role": "assistant", "content": "a"}, {"role": "tool", "content": "r"}]});
        shape(&mut rec, &s);
        let flags: Vec<Option<bool>> = rec["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.get(TRAIN_KEY).and_then(Value::as_bool))
            .collect();
        assert_eq!(flags, [None, Some(false), Some(true), None]);
    }

    #[test]
    fn developer_and_later_system_messages_fold_into_the_first_in_order() {
        let mut msgs = vec![
            json!({"role": "system", "content": "S"}),
            json!({"role": "developer", "content": [{"type": "text", "text": "D1"}]}),
            json!({"role": "user", "content": "U"}),
            json!({"role": "developer", "content": "D2"}),
            json!({"role": "system", "content": "S2"}),
            json!({"role": "assistant", "content": "A"}),
        ];
        assert_eq!(fold_system(&mut msgs), 3);
        assert_eq!(
            msgs,
            [
                json!({"role": "system", "content": "S\n\nD1\n\nD2\n\nS2"}),
                json!({"role": "user", "content": "U"}),
                json!({"role": "assistant", "content": "A"}),
            ]
        );
        // Without a leading system message, one is made; nothing to fold, nothing changes.
        let mut msgs = vec![json!({"role": "developer", "content": "D"}), json!({"role": "user"})];
        assert_eq!(fold_system(&mut msgs), 1);
        assert_eq!(msgs[0], json!({"role": "system", "content": "D"}));
        let mut plain = vec![json!({"role": "system", "content": "S"}), json!({"role": "user"})];
        assert_eq!(fold_system(&mut plain), 0);
        assert_eq!(plain[0], json!({"role": "system", "content": "S"}));
    }

    #[test]
    fn a_session_without_schemas_gets_inferred_tools_marked_so() {
        let s = session(vec![Message::text(Role::User, "u"), Message::text(Role::Assistant, "")]);
        let mut rec = json!({"messages": [{"role": "user", "content": "u"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}]}]});
        shape(&mut rec, &s);
        assert_eq!(rec["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(rec[TOOLS_INFERRED_KEY], json!(true));
        assert_eq!(rec["tools"][0]["function"]["name"], json!("f"));
        // No calls and no schemas: no tools, no flag.
        let mut rec = json!({"messages": [{"role": "user", "content": "u"}]});
        shape(&mut rec, &session(vec![Message::text(Role::User, "u")]));
        assert!(rec.get("tools").is_none() && rec.get(TOOLS_INFERRED_KEY).is_none());
    }
}
