//! The Anthropic Messages request, written from a normalized session.
//!
//! ## Rules (the Messages API's request body)
//! - The leading system and developer messages become the top-level `system`
//!   string; one later in the session is written as user text
//!   ([`Repair::SystemMoved`]): the API has no system role inside `messages`.
//! - `user` and `assistant` alternate, the first is `user`: consecutive
//!   messages of one role are merged ([`Repair::TurnsMerged`]), a session that
//!   opens with the assistant gets a `(empty)` user turn first.
//! - An assistant step is its text blocks then one `tool_use` block per call
//!   (`input` the parsed arguments); the results of those calls are
//!   `tool_result` blocks at the start of the next user message, whatever
//!   user text follows them in the same message.
//! - Reasoning is written only as a `thinking` block with its signature; a
//!   normalized session has none, so its readable reasoning is left out
//!   ([`Repair::ReasoningUnsigned`]).
//! - Images are `image` blocks with a `base64` or `url` source.
//!
//! The session must come from [`super::normalize()`]: pairing is already right
//! there, so this writer only changes the envelope.

use super::normalize::EMPTY_TEXT;
use super::repairs::{Repair, Repairs};
use crate::model::{Message, Part, Role, Session};
use serde_json::{Map, Value, json};

/// The request body of a normalized session, and what writing it repaired.
pub fn encode(session: &Session, compaction: Option<&Value>) -> (Value, Repairs) {
    let mut repairs = Repairs::default();
    let msgs = &session.messages;
    let lead = msgs.iter().take_while(|m| m.role.is_system()).count();
    let system: Vec<String> = msgs[..lead].iter().map(|m| m.text_content().into_owned()).collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &msgs[lead..] {
        let (role, blocks) = match m.role {
            Role::Assistant => ("assistant", assistant_blocks(m, &mut repairs)),
            Role::Tool => ("user", vec![result_block(m)]),
            Role::System | Role::Developer => {
                repairs.add(Repair::SystemMoved, 1);
                ("user", text_blocks(m))
            }
            _ => ("user", user_blocks(m)),
        };
        match turns.last_mut() {
            Some((r, b)) if *r == role => {
                // Results of a step go before any text of the same user turn.
                let is_result = m.role == Role::Tool;
                if !b.iter().all(|v| v["type"] == "tool_result") {
                    repairs.add(Repair::TurnsMerged, 1);
                }
                if is_result {
                    let at = b.iter().take_while(|v| v["type"] == "tool_result").count();
                    b.splice(at..at, blocks);
                } else {
                    b.extend(blocks);
                }
            }
            _ => turns.push((role, blocks)),
        }
    }
    if turns.first().is_none_or(|(r, _)| *r == "assistant") {
        repairs.add(Repair::EmptyFilled, 1);
        turns.insert(0, ("user", vec![text(EMPTY_TEXT)]));
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if blocks.is_empty() {
                repairs.add(Repair::EmptyFilled, 1);
                blocks.push(text(EMPTY_TEXT));
            }
            json!({"role": role, "content": blocks})
        })
        .collect();
    let mut out = Map::new();
    out.insert("id".into(), Value::String(session.id.clone()));
    let system = system.join("\n\n");
    if !system.trim().is_empty() {
        out.insert("system".into(), Value::String(system));
    }
    out.insert("messages".into(), Value::Array(messages));
    if let Some(Value::Array(tools)) = &session.tools {
        let tools: Vec<Value> = tools.iter().filter_map(tool).collect();
        if !tools.is_empty() {
            out.insert("tools".into(), Value::Array(tools));
        }
    }
    if let Some(c) = compaction {
        out.insert("compaction".into(), c.clone());
    }
    (Value::Object(out), repairs)
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// The message's non-blank texts as text blocks (the API refuses empty ones).
fn text_blocks(m: &Message) -> Vec<Value> {
    m.content
        .parts
        .iter()
        .filter_map(Part::text_str)
        .filter(|t| !t.trim().is_empty())
        .map(text)
        .collect()
}

fn user_blocks(m: &Message) -> Vec<Value> {
    m.content
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Image { raw, .. } => image_block(raw),
            p => p.text_str().filter(|t| !t.trim().is_empty()).map(text),
        })
        .collect()
}

fn assistant_blocks(m: &Message, repairs: &mut Repairs) -> Vec<Value> {
    if m.reasoning.is_some() {
        repairs.add(Repair::ReasoningUnsigned, 1);
    }
    let mut blocks = text_blocks(m);
    for c in m.tool_calls.iter() {
        let input = match c.args_object() {
            Some(o) => Value::Object((*o).clone()),
            None => json!({}),
        };
        blocks.push(
            json!({"type": "tool_use", "id": tool_id(&c.id), "name": c.name, "input": input}),
        );
    }
    blocks
}

fn result_block(m: &Message) -> Value {
    let id = tool_id(m.tool_call_id.as_deref().unwrap_or(""));
    if !m.content.parts.iter().any(Part::is_image) {
        return json!({"type": "tool_result", "tool_use_id": id, "content": m.text_content()});
    }
    // A screenshot result: its text and image blocks, in order.
    json!({"type": "tool_result", "tool_use_id": id, "content": user_blocks(m)})
}

/// A tool id in `[A-Za-z0-9_-]+` (the same mapping for a call and its result).
fn tool_id(id: &str) -> String {
    let s: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    if s.is_empty() { "call".into() } else { s }
}

/// An `image_url` part as an `image` block.
fn image_block(raw: &Map<String, Value>) -> Option<Value> {
    let url = raw.get("image_url")?.get("url")?.as_str()?;
    Some(match url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
        Some((header, data)) => {
            let media = header.split(';').next().filter(|s| !s.is_empty()).unwrap_or("image/png");
            json!({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
        }
        None => json!({"type": "image", "source": {"type": "url", "url": url}}),
    })
}

/// A Chat Completions tool schema as an Anthropic one.
fn tool(t: &Value) -> Option<Value> {
    let f = t.get("function")?;
    let mut out = Map::new();
    out.insert("name".into(), f.get("name")?.clone());
    if let Some(d) = f.get("description") {
        out.insert("description".into(), d.clone());
    }
    let schema = f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"}));
    out.insert("input_schema".into(), schema);
    Some(Value::Object(out))
}
