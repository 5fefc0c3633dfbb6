//! Codex's measure of its context before a request ([`Measure::LastTotal`]).
//!
//! ## What
//! Codex does not compare the request it is about to send with its trigger:
//! it compares `total_usage_tokens` (`ContextManager::get_total_token_usage`,
//! `codex-rs/core/src/context_manager/history.rs`, openai/codex tag
//! rust-v0.98.0, read from the CrazyForks/codex mirror), which is
//! - the previous response's `last_token_usage.total_tokens` (its prompt,
//!   cached part included, and its output),
//! - plus its estimate of the encrypted reasoning items before the last user
//!   message (`get_non_last_reasoning_items_tokens`; the server does not count
//!   them, `server_reasoning_included` false): per item
//!   `estimate_reasoning_length(len) = len * 3 / 4 - 650` bytes of its
//!   `encrypted_content`, at 4 bytes a token rounded up,
//! - plus the items Codex appended since the response
//!   (`get_trailing_codex_generated_items_tokens`: tool outputs at the end of
//!   the history), at 4 bytes a token of their JSON.
//!
//! It is checked before a user turn (`run_turn`, before the prompt is
//! recorded) and after each sampling request that needs a follow-up
//! (`codex-rs/core/src/codex.rs`, rust-v0.98.0): in both cases the history
//! ends with the last response and its tool outputs, so [`TotalUsage`]
//! measures the live history as it stood before a user message that follows
//! them.
//!
//! ## Why
//! On the corpus rollout with two of Codex's own compactions the reasoning
//! estimate alone is about 55,000 tokens at the first one: a trigger on the
//! prompt fires some 30 calls after Codex did (docs/policies.md, "Held
//! against Codex's own compactions").
//!
//! ## Where a log lacks the facts
//! The previous response's total is the replay's measure of its prompt (the
//! provider's, corrected by our edits; our count where the log has none) plus
//! its recorded output tokens (our count of the reply where none). Only
//! reasoning parts with an `encrypted_content` string are estimated (Codex
//! rollouts): other dialects add no reasoning estimate. Tool outputs are
//! estimated the same way in every dialect. Before the first response the
//! total is 0, as Codex's is.
//!
//! ## Example
//! Last response: prompt 1,000 + output 100; a reasoning item of 4,000 bytes
//! before the last user message: (3,000 − 650) / 4 = 588 (rounded up); a tool
//! output `"ok"` for call `c1` since: 60 bytes of JSON, 15 tokens. Measure:
//! 1,100 + 588 + 15 = 1,703.
//!
//! ## Invariants
//! - Pushed in the live history's order, one message at a time: O(1) per
//!   message, so replay stays linear; a compaction restarts it from the
//!   compacted messages ([`TotalUsage::restart`]).
//!
//! [`Measure::LastTotal`]: crate::policy::spec::Measure::LastTotal

use crate::model::{Message, Part, Role};

/// Bytes Codex takes off an encrypted reasoning item's estimated length
/// (`estimate_reasoning_length`, context_manager/history.rs, rust-v0.98.0).
pub const REASONING_OVERHEAD_BYTES: usize = 650;

/// Codex's bytes per token (`APPROX_BYTES_PER_TOKEN`, core/src/truncate.rs,
/// rust-v0.98.0), rounded up (`approx_tokens_from_byte_count`).
pub const BYTES_PER_TOKEN: u64 = 4;

/// The bytes of a tool output's JSON around its call id and its output text:
/// `{"type":"function_call_output","call_id":"","output":}` (serde's
/// serialization of `ResponseItem::FunctionCallOutput`, protocol/src/models.rs,
/// rust-v0.98.0; the output text is counted as a JSON string).
pub const OUTPUT_ITEM_FRAME_BYTES: u64 = 54;

/// The same for a developer message (Codex appends them too):
/// `{"type":"message","role":"developer","content":[{"type":"input_text","text":}]}`.
pub const DEVELOPER_ITEM_FRAME_BYTES: u64 = 79;

/// Tokens of `bytes` at [`BYTES_PER_TOKEN`], rounded up.
fn tokens_of(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// Codex's estimate of the encrypted reasoning items of `m` (a reasoning part
/// whose `encrypted_content` is a string; 0 for any other).
pub fn reasoning_tokens(m: &Message) -> u64 {
    m.content
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Reasoning(raw) => raw.get("encrypted_content")?.as_str(),
            _ => None,
        })
        .map(|c| {
            let bytes = (c.len() * 3 / 4).saturating_sub(REASONING_OVERHEAD_BYTES);
            tokens_of(bytes as u64)
        })
        .sum()
}

/// Codex's estimate of an item it appended (a tool output, a developer
/// message): 4 bytes a token of its JSON.
pub fn appended_tokens(m: &Message) -> u64 {
    let text = m.text_content();
    // The text as a JSON string: quotes and escapes counted.
    let body = serde_json::to_string(text.as_ref()).map_or(text.len(), |s| s.len()) as u64;
    match m.role {
        Role::Developer => tokens_of(DEVELOPER_ITEM_FRAME_BYTES + body),
        _ => {
            let id = m.tool_call_id.as_ref().map_or(0, String::len) as u64;
            tokens_of(OUTPUT_ITEM_FRAME_BYTES + id + body)
        }
    }
}

/// Running sums of Codex's measure over the live history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TotalUsage {
    /// The previous response's total (prompt and output); `None` before the first.
    last_total: Option<u64>,
    /// Reasoning estimate of the messages before the last user message.
    before_user: u64,
    /// Reasoning estimate of the messages after it.
    since_user: u64,
    /// Tool outputs since the last assistant message.
    trailing: u64,
    /// `(before_user, trailing)` as they stood when a user message followed
    /// the last assistant message: Codex checks before it records the prompt.
    at_turn: Option<(u64, u64)>,
}

impl TotalUsage {
    /// Adds the next message of the live history.
    pub fn push(&mut self, m: &Message) {
        match m.role {
            Role::User => {
                self.at_turn.get_or_insert((self.before_user, self.trailing));
                self.before_user += self.since_user;
                self.since_user = 0;
            }
            Role::Tool | Role::Developer => self.trailing += appended_tokens(m),
            Role::Assistant => {
                self.since_user += reasoning_tokens(m);
                self.trailing = 0;
                self.at_turn = None;
            }
            Role::System | Role::Other(_) => {}
        }
    }

    /// Records a response: its prompt (as replay measures it) and output.
    pub fn responded(&mut self, prompt: u64, output: u64) {
        self.last_total = Some(prompt + output);
    }

    /// Starts again from `msgs`, the history a compaction left (the last
    /// response's total stays until the next one replaces it).
    pub fn restart(&mut self, msgs: &[Message]) {
        *self = TotalUsage { last_total: self.last_total, ..TotalUsage::default() };
        for m in msgs {
            self.push(m);
        }
    }

    /// Codex's `total_usage_tokens` now (see the module doc).
    pub fn tokens(&self) -> u64 {
        let (reasoning, trailing) = self.at_turn.unwrap_or((self.before_user, self.trailing));
        self.last_total.unwrap_or(0) + reasoning + trailing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};
    use std::sync::Arc;

    fn reasoning(encrypted_bytes: usize) -> Message {
        let mut raw = Map::new();
        raw.insert("type".into(), json!("reasoning"));
        raw.insert("encrypted_content".into(), Value::from("g".repeat(encrypted_bytes)));
        let mut m = Message::text(Role::Assistant, "thinking done");
        Arc::make_mut(&mut m.content.parts).insert(0, Part::Reasoning(raw));
        m
    }

    fn output(id: &str, text: &str) -> Message {
        let mut m = Message::text(Role::Tool, text);
        m.tool_call_id = Some(id.into());
        m
    }

    #[test]
    fn the_frame_is_the_json_of_an_empty_function_call_output() {
        let frame = r#"{"type":"function_call_output","call_id":"","output":}"#;
        assert_eq!(frame.len() as u64, OUTPUT_ITEM_FRAME_BYTES);
        // `"ok"` for `c1`: 54 + 2 + 4 = 60 bytes, 15 tokens.
        assert_eq!(appended_tokens(&output("c1", "ok")), 15);
    }

    #[test]
    fn reasoning_is_estimated_as_codex_does_and_other_dialects_add_none() {
        // 4,000 bytes: 3,000 − 650 = 2,350 bytes, 588 tokens rounded up.
        assert_eq!(reasoning_tokens(&reasoning(4_000)), 588);
        // Under 650 bytes of estimate: nothing.
        assert_eq!(reasoning_tokens(&reasoning(800)), 0);
        // Reasoning with text, no encrypted content (Claude Code thinking): nothing.
        let mut thinking = Map::new();
        thinking.insert("thinking".into(), json!("a".repeat(4_000)));
        let mut m = Message::text(Role::Assistant, "x");
        Arc::make_mut(&mut m.content.parts).push(Part::Reasoning(thinking));
        assert_eq!(reasoning_tokens(&m), 0);
    }

    #[test]
    fn the_measure_by_hand_on_a_small_session() {
        let mut u = TotalUsage::default();
        let user = Message::text(Role::User, "fix it");
        // Turn 1: the user, a response with reasoning and a call, its output.
        u.push(&user);
        assert_eq!(u.tokens(), 0, "before the first response Codex's total is 0");
        u.responded(1_000, 100);
        u.push(&reasoning(4_000));
        u.push(&output("c1", "ok"));
        // Mid-turn: the reasoning is after the last user message (the server
        // counts it), the output is appended since: 1,100 + 15.
        assert_eq!(u.tokens(), 1_115);
        u.responded(1_200, 50);
        u.push(&Message::text(Role::Assistant, "done"));
        assert_eq!(u.tokens(), 1_250, "a response ends the trailing outputs");
        // A new user turn: Codex checks before it records the prompt, so the
        // reasoning is not yet before the last user message.
        u.push(&user);
        assert_eq!(u.tokens(), 1_250);
        // After the next response the reasoning is: 1,500 + 588 + 15.
        u.responded(1_400, 100);
        u.push(&Message::text(Role::Assistant, "calling"));
        u.push(&output("c1", "ok"));
        assert_eq!(u.tokens(), 1_500 + 588 + 15);
        // A compaction that kept only the user message: no reasoning left.
        u.restart(std::slice::from_ref(&user));
        assert_eq!(u.tokens(), 1_500);
    }
}
