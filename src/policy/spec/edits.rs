//! The edits a [`PolicySpec`](super::PolicySpec) makes before (or instead of)
//! a summary: tool results masked or truncated, thinking cleared.
//!
//! ## What it does
//! - [`mask`]: outside the newest `keep_newest` results of the tools it may
//!   clear, each result becomes the placeholder, oldest first, until the rest
//!   holds at most `stop_under_tokens`; nothing at all when that would free
//!   fewer than `clear_at_least` tokens.
//! - [`truncate`]: walking newest to oldest, once the results seen hold more
//!   than `budget_tokens`, each older result keeps only its last lines.
//! - [`clear_thinking`]: reasoning goes from every assistant message but the
//!   newest N that hold any.
//!
//! ## Why
//! These are the live agents' cheap edits (Claude Code's micro-compaction,
//! Anthropic's `clear_tool_uses` and `clear_thinking`, OpenHands' observation
//! masking, Gemini CLI's tool-output truncation): old tool output is the bulk
//! of a transcript, and the call that produced it stays.
//!
//! ## Example
//! keep 1: `tool(A) tool(B) tool(C)` → `tool([cleared]) tool([cleared]) tool(C)`.
//!
//! ## Invariants
//! - Calls, ids and message order never change: only a result's content or an
//!   assistant message's reasoning.
//! - Idempotent: a placeholder or a cut result is never edited again.
//! - A message is written ([`Slot::write`]) only where it changes.

use super::{Count, Masking, Truncation};
use crate::model::{Message, Part, Role};
use crate::policy::Slot;
use crate::policy::micro_compact::index_calls;
use std::borrow::Borrow;

/// The first line of a result [`truncate`] cut (Gemini CLI's wording before
/// 2026-02-06, without its temp-file path: we keep no file).
const TRUNCATED_HEAD: &str = "Output too large. Showing the last";

/// The name of the tool that wrote result `m`, if known.
fn tool_name<'m>(
    m: &'m Message,
    calls: &std::collections::HashMap<&str, &'m crate::model::ToolCall>,
) -> Option<&'m str> {
    m.result_name().or_else(|| {
        let id = m.tool_call_id.as_deref()?;
        calls.get(id).map(|c| c.name.as_str())
    })
}

/// Masks old tool results (see the module doc); returns how many it cleared.
/// `tokens[i]` is message `i`'s size.
pub(crate) fn mask<S: Slot>(
    slots: &mut [S],
    tokens: &[u64],
    m: &Masking,
    placeholder_tokens: u64,
) -> usize {
    // Without a list of tools no result needs its tool's name (replay masks
    // at every call: the names would be looked up at every call too).
    let by_name = !m.exclude_tools.is_empty() || !m.only_tools.is_empty();
    let clearable: Vec<usize> = if !by_name {
        (0..slots.len()).filter(|&i| slots[i].borrow().is_tool_result()).collect()
    } else {
        let msgs: Vec<&Message> = slots.iter().map(Borrow::borrow).collect();
        let calls = index_calls(&msgs);
        msgs.iter()
            .enumerate()
            .filter(|(_, msg)| msg.is_tool_result())
            .filter(|(_, msg)| {
                let name = tool_name(msg, &calls).unwrap_or("");
                let listed = |list: &[super::Text]| list.iter().any(|t| t == name);
                !listed(&m.exclude_tools) && (m.only_tools.is_empty() || listed(&m.only_tools))
            })
            .map(|(i, _)| i)
            .collect()
    };
    let older: Vec<usize> = match m.count {
        Count::Results => clearable[..clearable.len().saturating_sub(m.keep_newest)].to_vec(),
        Count::Messages => {
            let from = slots.len().saturating_sub(m.keep_newest);
            clearable.iter().copied().filter(|&i| i < from).collect()
        }
    };
    let is_cleared = |i: usize| slots[i].borrow().content.text_is(m.placeholder.as_ref());
    let mut rest: u64 = clearable.iter().filter(|&&i| !is_cleared(i)).map(|&i| tokens[i]).sum();
    let mut chosen = Vec::new();
    let mut freed = 0u64;
    for i in older {
        if m.stop_under_tokens.is_some_and(|limit| rest <= limit) {
            break;
        }
        if is_cleared(i) {
            continue;
        }
        rest -= tokens[i];
        freed += tokens[i].saturating_sub(placeholder_tokens);
        chosen.push(i);
    }
    if chosen.is_empty() || freed < m.clear_at_least {
        return 0;
    }
    for &i in &chosen {
        slots[i].write().content.replace_with_text(m.placeholder.as_ref());
    }
    chosen.len()
}

/// Cuts tool results older than the newest `budget_tokens` to their last
/// lines (see the module doc); returns the chars removed.
pub(crate) fn truncate<S: Slot>(slots: &mut [S], tokens: &[u64], t: &Truncation) -> u64 {
    let mut seen = 0u64;
    let mut cut = 0u64;
    for i in (0..slots.len()).rev() {
        let m: &Message = slots[i].borrow();
        if !m.is_tool_result() {
            continue;
        }
        seen += tokens[i];
        if seen <= t.budget_tokens {
            continue;
        }
        let text = m.text_content();
        let lines = text.lines().count();
        if lines <= t.last_lines || text.starts_with(TRUNCATED_HEAD) {
            continue;
        }
        let tail_from = text.lines().take(lines - t.last_lines).map(|l| l.len() + 1).sum::<usize>();
        let kept = &text[tail_from.min(text.len())..];
        let new = format!("{TRUNCATED_HEAD} {} of {lines} lines.\n{kept}", t.last_lines);
        let removed = text.chars().count().saturating_sub(kept.chars().count()) as u64;
        slots[i].write().content.replace_with_text(new);
        cut += removed;
    }
    cut
}

/// Returns true if and only if `m` is an assistant message that holds
/// reasoning: what [`clear_thinking`] clears.
pub(crate) fn holds_reasoning(m: &Message) -> bool {
    m.role == Role::Assistant
        && (m.reasoning.is_some()
            || m.content.parts.iter().any(|p| matches!(p, Part::Reasoning(_))))
}

/// Removes reasoning from all assistant messages but the newest `keep` that
/// hold any; returns how many blocks went.
pub(crate) fn clear_thinking<S: Slot>(slots: &mut [S], keep: usize) -> usize {
    let with: Vec<usize> =
        (0..slots.len()).filter(|&i| holds_reasoning(slots[i].borrow())).collect();
    let mut dropped = 0;
    for &i in &with[..with.len().saturating_sub(keep)] {
        let m = slots[i].write();
        let before = m.content.parts.len();
        m.content.parts_mut().retain(|p| !matches!(p, Part::Reasoning(_)));
        dropped += before - m.content.parts.len();
        if m.reasoning.take().is_some() {
            dropped += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::spec::Text;
    use crate::policy::test_msgs::{call, result};
    use std::borrow::Cow;

    fn masking(keep: usize) -> Masking {
        Masking::newest(keep, Count::Results, "[cleared]")
    }

    /// Three tool calls (ids `a`, `b`, `c`) to `tools`, each followed by its result.
    fn three_calls(tools: [&str; 3], outputs: [&str; 3]) -> Vec<Message> {
        let ids = ["a", "b", "c"];
        (0..3).flat_map(|k| [call(ids[k], tools[k], "{}"), result(ids[k], outputs[k])]).collect()
    }

    fn texts(msgs: &[Message]) -> Vec<String> {
        msgs.iter().map(|m| m.text_content().into_owned()).collect()
    }

    #[test]
    fn mask_keeps_the_newest_and_clears_the_rest_oldest_first() {
        let mut msgs = three_calls(["Read", "Bash", "Read"], ["one", "two", "three"]);
        let tokens = vec![10; 6];
        assert_eq!(mask(&mut msgs, &tokens, &masking(1), 1), 2);
        assert_eq!(texts(&msgs)[1], "[cleared]");
        assert_eq!(texts(&msgs)[3], "[cleared]");
        assert_eq!(texts(&msgs)[5], "three");
        assert!(msgs[1].meta.made && !msgs[5].meta.made);
        // Idempotent: nothing more to clear.
        assert_eq!(mask(&mut msgs, &tokens, &masking(1), 1), 0);
    }

    #[test]
    fn mask_respects_clear_at_least_excluded_tools_and_the_residual() {
        let mut msgs = three_calls(["Read", "Edit", "Read"], ["one", "two", "3"]);
        let tokens = vec![10; 6];
        let mut m = masking(0);
        m.clear_at_least = 100; // 2 × 9 tokens would go: not worth it
        assert_eq!(mask(&mut msgs.clone(), &tokens, &m, 1), 0);
        m.clear_at_least = 0;
        m.exclude_tools = Cow::Borrowed(&[Text::Borrowed("Edit")]);
        m.stop_under_tokens = Some(10); // Read results hold 20: one goes
        assert_eq!(mask(&mut msgs, &tokens, &m, 1), 1);
        assert_eq!(texts(&msgs)[1], "[cleared]");
        assert_eq!(texts(&msgs)[3], "two");
        assert_eq!(texts(&msgs)[5], "3");
    }

    #[test]
    fn truncate_cuts_results_older_than_the_budget_to_their_last_lines() {
        let long = (1..=10).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let mut msgs = vec![result("a", &long), result("b", &long), result("c", &long)];
        let tokens = vec![50, 50, 50];
        let t = Truncation { budget_tokens: 60, last_lines: 2 };
        // The newest 50 fit, the next reaches 100 > 60: it and the oldest are cut.
        assert!(truncate(&mut msgs, &tokens, &t) > 0);
        let out = texts(&msgs);
        assert_eq!(out[0], "Output too large. Showing the last 2 of 10 lines.\nline 9\nline 10");
        assert_eq!(out[1], out[0]);
        assert_eq!(out[2], long);
    }

    #[test]
    fn clear_thinking_keeps_the_newest_turns() {
        use crate::model::Reasoning;
        let thought = |t: &str| {
            let mut m = Message::text(Role::Assistant, t);
            m.reasoning = Some(Reasoning { field: "reasoning".into(), text: "hmm".into() });
            m
        };
        let mut msgs =
            vec![thought("a"), Message::text(Role::User, "u"), thought("b"), thought("c")];
        assert_eq!(clear_thinking(&mut msgs, 1), 2);
        assert!(msgs[0].reasoning.is_none() && msgs[2].reasoning.is_none());
        assert!(msgs[3].reasoning.is_some());
    }
}
