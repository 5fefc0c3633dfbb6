//! Our compaction written as Codex writes its own, appended to the rollout it
//! compacts.
//!
//! What: one `compacted` line after the input's last line: `message` = our
//! summary's text, `replacement_history` = our compacted context as response
//! items (head, summary, kept tail), minus the system prompt, which Codex
//! keeps in `session_meta` and sends with every request.
//!
//! Why: Codex resumes a rollout by replaying its items and, at a `compacted`
//! line with a replacement history, replacing the history with it
//! (`Session::reconstruct_history_from_rollout`, codex-rs/core/src/codex.rs,
//! openai/codex rust-v0.98.0, and `CompactedItem`,
//! codex-rs/protocol/src/protocol.rs; research.md A.2, read 2026-12-04).
//! Written the same way, every input line stays, Codex resumes from our
//! compaction, and our reader finds it as a recorded compaction.
//!
//! Example: a rollout `meta u1 a1 c1 r1 a2` compacted to `system u1 S a2`
//! gets `{"type": "compacted", "payload": {"message": S, "replacement_history":
//! [u1, S, a2]}}`, dated as its last line.
//!
//! Invariants: the line is a pure function of the compaction; its items are
//! what the Codex writer makes of the messages, so reading the output
//! `--history live` gives the compacted messages back.

use super::encode::encode_session;
use crate::model::{Continuation, Message, Session};
use serde_json::{Map, Value};

/// The `compacted` line that records compaction `c` of `original` after the
/// rollout it was read from.
pub fn lineage_lines(original: &Session, c: &Continuation<'_>) -> Vec<Value> {
    let messages = &c.compacted.messages;
    // The system prompt lives in `session_meta`, not in the history.
    let from = usize::from(messages.first().is_some_and(|m| m.role.is_system()));
    let copies: Vec<Message> = messages[from.min(messages.len())..]
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.attached = Default::default();
            m
        })
        .collect();
    let mut mini = c.compacted.with_messages(copies);
    mini.trailing.clear();
    let items: Vec<Value> = encode_session(&mini)
        .into_iter()
        .filter(|line| line.get("type").and_then(Value::as_str) == Some("response_item"))
        .filter_map(|mut line| line.get_mut("payload").map(Value::take))
        .collect();
    let summary = c.summary().map(|m| m.text_content().into_owned()).unwrap_or_default();
    let mut payload = Map::new();
    payload.insert("message".into(), Value::String(summary));
    payload.insert("replacement_history".into(), Value::Array(items));
    let mut line = Map::new();
    if let Some(ts) = last_timestamp(original) {
        line.insert("timestamp".into(), Value::String(ts.to_string()));
    }
    line.insert("type".into(), Value::from("compacted"));
    line.insert("payload".into(), Value::Object(payload));
    vec![Value::Object(line)]
}

/// The timestamp of the rollout's last dated line.
fn last_timestamp(session: &Session) -> Option<&str> {
    let ts = timestamp_of;
    session.trailing.iter().rev().find_map(ts).or_else(|| {
        session.messages.iter().rev().find_map(|m| {
            let own = m.extra.get("timestamp").and_then(Value::as_str);
            own.or_else(|| m.attached.iter().rev().find_map(ts))
        })
    })
}

fn timestamp_of(v: &Value) -> Option<&str> {
    v.get("timestamp").and_then(Value::as_str)
}
