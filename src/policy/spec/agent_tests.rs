//! One test per live agent's built-in spec: its constants pinned (each names
//! its source; docs/policies.md cites them in full) and a session it treats
//! differently from lean, so that no two policies are the same code under two
//! names.

use super::builtin::{self, find};
use super::headings::Headings;
use super::{
    Applies, CacheRule, Count, Last, PolicySpec, SummarySpec, Thinking, ToolResults, Trigger,
};
use crate::model::{Message, Reasoning, Role, Session, ToolCall};
use crate::policy::{Mode, Outcome, Policy, compact, summary};
use crate::tokens::{CounterKind, Meter};
use std::sync::Arc;

fn meter() -> Meter {
    Meter::new(CounterKind::Hermes, 0)
}

/// About `tokens` tokens of distinct text (the estimate charges ~¼ a byte).
fn text(tag: &str, tokens: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < tokens * 4 {
        s.push_str(&format!("{tag} line {i} of output\n"));
        i += 1;
    }
    s
}

/// The built-in spec `name`, its trigger pinned to `trigger` and its
/// threshold to each `(window, threshold)` of `thresholds`.
fn built_in(name: &str, trigger: Trigger, thresholds: &[(u64, u64)]) -> &'static PolicySpec {
    let spec = find(name).unwrap();
    assert_eq!(spec.trigger, trigger, "{name}");
    for &(window, threshold) in thresholds {
        assert_eq!(spec.threshold(window, None), threshold, "{name} at {window}");
    }
    spec
}

fn call(id: &str, name: &str) -> Message {
    let mut m = Message::text(Role::Assistant, "");
    m.content.parts_mut().clear();
    m.tool_calls_mut().push(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
        ..Default::default()
    });
    m
}

fn result(id: &str, body: String) -> Message {
    let mut m = Message::text(Role::Tool, body);
    m.tool_call_id = Some(id.into());
    m
}

/// A system prompt, an ask, then `n` rounds of a `tool` call and a result of
/// about `each` tokens (assistant turns with reasoning), then a last ask.
fn work(n: usize, tool: &str, each: usize) -> Session {
    let mut msgs = vec![
        Message::text(Role::System, "You are an agent."),
        Message::text(Role::User, "Please fix the failing build in src/a.rs"),
    ];
    for k in 0..n {
        let mut c = call(&format!("c{k}"), tool);
        c.reasoning = Some(Reasoning { field: "reasoning".into(), text: format!("thinking {k}") });
        msgs.push(c);
        msgs.push(result(&format!("c{k}"), text(&format!("r{k}"), each)));
    }
    msgs.push(Message::text(Role::User, "Now run the tests again"));
    Session { messages: msgs, ..Session::default() }
}

fn policy(name: &str, window: u64) -> Policy {
    Policy::from_spec(Arc::new(find(name).unwrap().clone()), window)
}

fn texts(o: &Outcome) -> Vec<String> {
    o.session.messages.iter().map(|m| m.text_content().into_owned()).collect()
}

fn summary_text(o: &Outcome) -> String {
    let s = o.session.messages.iter().find(|m| summary::is_summary(m)).expect("a summary");
    s.text_content().into_owned()
}

/// Claude Code 2.1.88 (extracted source) `autoCompact.ts`: threshold =
/// window − min(max output, 20,000) − 13,000; 2.1.63's micro-compaction (the
/// breadboard preset's reading): newest 3 of Read/Bash/... kept, cleared to a
/// 40,000-token residual if 20,000 go, from 20,000 below the threshold;
/// `prompt.ts`' nine sections, `COMPACT_MAX_OUTPUT_TOKENS` = 20,000.
#[test]
fn claude_code_clears_old_reads_below_its_trigger_and_summarizes_in_nine_sections_at_it() {
    let spec = built_in("claude-code", Trigger::Reserve(33_000), &[(200_000, 167_000)]);
    let ToolResults::Masked(m) = &spec.tool_results else { panic!("masking") };
    assert_eq!((m.keep_newest, m.count), (3, Count::Results));
    assert_eq!(m.placeholder, builtin::CLAUDE_CODE_CLEARED);
    assert_eq!(
        (m.clear_at_least, m.stop_under_tokens, m.before_trigger),
        (20_000, Some(40_000), 20_000)
    );
    assert_eq!(m.only_tools.len(), 8);
    assert_eq!(
        spec.summary,
        SummarySpec::Ours { headings: Headings::ClaudeCode, max_tokens: Some(20_000) }
    );
    assert_eq!(spec.protect.last, Last::Messages(0));

    let meter = meter();
    // 12 Read results of ~13K: ~156K, over lean's trigger, under 167K but
    // over 147K: Claude Code clears the oldest 9 (residual 3 × 13K ≤ 40K).
    let s = work(12, "Read", 13_000);
    let cc = compact(&s, &policy("claude-code", 200_000), &meter);
    assert!(cc.compaction.compacted);
    assert_eq!(cc.compaction.effects.tool_results_cleared, 9);
    assert_eq!(cc.compaction.policy, Some("claude-code"));
    let out = texts(&cc);
    assert_eq!(out.iter().filter(|t| *t == builtin::CLAUDE_CODE_CLEARED).count(), 9);
    assert!(!cc.session.messages.iter().any(summary::is_summary));
    let lean = compact(&s, &Policy::new(Mode::Lean, 200_000), &meter);
    assert!(lean.session.messages.iter().any(summary::is_summary), "lean summarizes here");

    // Results of a tool it may not clear, over 167K: the nine-section summary.
    let s = work(13, "mcp__db__query", 13_000);
    let cc = compact(&s, &policy("claude-code", 200_000), &meter);
    assert_eq!(cc.compaction.effects.tool_results_cleared, 0);
    let text = summary_text(&cc);
    for (title, _) in Headings::ClaudeCode.map() {
        assert!(text.contains(&format!("## {title}\n")), "{title}");
    }
    assert!(meter.text(&text) <= 20_000);
    // Nothing kept after the summary but what follows it (no verbatim tail).
    assert_eq!(cc.compaction.sections.verbatim_tail_messages, 0);
}

/// Codex rust-v0.98.0: `auto_compact_token_limit` = context_window × 9 / 10
/// (openai_models.rs), compared with `get_total_token_usage`
/// (context_manager/history.rs); `COMPACT_USER_MESSAGE_MAX_TOKENS` = 20,000
/// (compact.rs): the new history is the newest user messages within it and
/// one summary.
#[test]
fn codex_compacts_at_ninety_percent_to_user_messages_and_one_summary() {
    let spec = built_in("codex", Trigger::Fraction(0.9), &[(272_000, 244_800)]);
    assert_eq!(spec.measure, super::Measure::LastTotal);
    for other in crate::policy::spec::builtin::BUILT_IN.iter().filter(|s| s.name != "codex") {
        assert_eq!(other.measure, super::Measure::Prompt, "{}", other.name);
    }
    assert_eq!(spec.protect.user_messages_tokens, Some(20_000));
    assert_eq!(spec.cache, CacheRule::OpenaiPrefix);
    assert_eq!(spec.summary, SummarySpec::Ours { headings: Headings::Codex, max_tokens: None });

    let meter = meter();
    let mut s = work(10, "shell", 9_000);
    // A long older ask: it does not fit what the newer ones leave of 20K.
    s.messages.insert(3, Message::text(Role::User, text("old ask", 25_000)));
    let p = policy("codex", 100_000);
    assert_eq!(p.threshold, 90_000);
    let codex = compact(&s, &p, &meter);
    assert!(codex.compaction.compacted);
    let o = &codex.session.messages;
    let at = o.iter().position(summary::is_summary).unwrap();
    assert!(o[1..at].iter().all(|m| m.role == Role::User), "only user messages before the summary");
    assert_eq!(at, o.len() - 1, "the summary ends the history");
    let kept: Vec<String> = o[1..at].iter().map(|m| m.text_content().into_owned()).collect();
    // Newest first: the last ask fits, the old one is cut to the rest of the
    // 20K and the walk stops there: the first ask is only in the summary.
    assert_eq!(kept.len(), 2);
    assert!(
        kept[0].starts_with("old ask line 0") && kept[0].ends_with(super::run::USER_MESSAGE_CUT)
    );
    assert!(meter.text(&kept[0]) <= 20_000);
    assert_eq!(kept[1], "Now run the tests again");
    assert!(summary_text(&codex).contains("## What remains to be done (clear next steps)\n"));
    let lean = compact(&s, &Policy::new(Mode::Lean, 100_000), &meter);
    let lo = &lean.session.messages;
    let lat = lo.iter().position(summary::is_summary).unwrap();
    assert!(lo[lat + 1..].iter().any(|m| m.role != Role::User), "lean keeps a working tail");
}

/// OpenHands 0.62.0 server default (session.py): `LLMSummarizingCondenser`
/// with max_size 120 and keep_first 4; the view is cut to 120 // 2 events.
#[test]
fn openhands_condenses_past_120_events_to_4_a_summary_and_55() {
    let spec = built_in("openhands", Trigger::Events(120), &[]);
    assert_eq!(spec.protect.first, 4);
    assert_eq!(spec.protect.last, Last::Messages(55));
    let meter = meter();
    let small = work(59, "bash", 20); // 121 messages, a few thousand tokens
    assert_eq!(small.messages.len(), 121);
    let oh = compact(&small, &policy("openhands", 200_000), &meter);
    assert!(oh.compaction.compacted);
    let o = &oh.session.messages;
    let at = o.iter().position(summary::is_summary).unwrap();
    // The system prompt and 4 events, one summary, 55 events (a result stays with its call).
    assert!((5..=6).contains(&at), "{at}");
    assert!((55..=56).contains(&(o.len() - at - 1)), "{}", o.len() - at - 1);
    assert!(summary_text(&oh).contains("## USER_CONTEXT\n"));
    let lean = compact(&small, &Policy::new(Mode::Lean, 200_000), &meter);
    assert!(!lean.compaction.compacted, "far under lean's trigger");
    // 120 messages: not yet.
    let under = work(58, "bash", 20);
    assert!(!compact(&under, &policy("openhands", 200_000), &meter).compaction.compacted);
}

/// OpenHands 0.62.0 `ObservationMaskingCondenser(attention_window=5)`:
/// observations outside the newest 5 events become `<MASKED>`, at every step.
#[test]
fn openhands_masking_masks_observations_outside_the_newest_five_events() {
    let spec = built_in("openhands-masking", Trigger::EveryRequest, &[]);
    let ToolResults::Masked(m) = &spec.tool_results else { panic!("masking") };
    assert_eq!((m.keep_newest, m.count), (5, Count::Messages));
    assert_eq!(m.placeholder, builtin::OPENHANDS_MASK);
    let meter = meter();
    let s = work(6, "bash", 50); // 15 messages: results at 3, 5, ..., 13
    let oh = compact(&s, &policy("openhands-masking", 200_000), &meter);
    let out = texts(&oh);
    let masked: Vec<usize> =
        (0..out.len()).filter(|&i| out[i] == builtin::OPENHANDS_MASK).collect();
    assert_eq!(masked, [3, 5, 7, 9], "results before the newest 5 messages (10..15)");
    assert!(!compact(&s, &Policy::new(Mode::Lean, 200_000), &meter).compaction.compacted);
}

/// Anthropic context editing (platform docs, context-editing page):
/// `clear_tool_uses_20250919` triggers at 100,000 input tokens and keeps 3
/// tool uses; `clear_thinking_20251015` keeping 1 turn; applied by the server.
#[test]
fn context_editing_clears_all_but_three_tool_uses_over_100k_and_old_thinking() {
    let thresholds = [(200_000, 100_000), (1_000_000, 100_000)];
    let spec = built_in("anthropic-context-editing", Trigger::Tokens(100_000), &thresholds);
    let ToolResults::Masked(m) = &spec.tool_results else { panic!("masking") };
    assert_eq!((m.keep_newest, m.clear_at_least, m.exclude_tools.len()), (3, 0, 0));
    assert_eq!(spec.thinking, Thinking::Cleared(1));
    assert_eq!(spec.applies, Applies::Request);
    assert_eq!(spec.summary, SummarySpec::None);
    let meter = meter();
    let s = work(8, "bash", 14_000); // ~112K
    let ce = compact(&s, &policy("anthropic-context-editing", 200_000), &meter);
    assert_eq!(ce.compaction.effects.tool_results_cleared, 5);
    assert_eq!(ce.compaction.effects.reasoning_dropped, 7);
    let o = &ce.session.messages;
    assert_eq!(o.len(), s.messages.len(), "nothing folded");
    assert!(o[o.len() - 3].reasoning.is_some(), "the newest turn keeps its thinking");
    assert!(!compact(&s, &Policy::new(Mode::Lean, 200_000), &meter).compaction.compacted);
}

/// Gemini CLI v0.56.0 `chatCompressionService.ts`: compression at 0.5 of the
/// window, the newest 0.3 kept, tool output outside the newest 50,000 tokens
/// cut (to its last 30 lines until 2026-02-06).
#[test]
fn gemini_cli_compresses_at_half_the_window_keeping_the_newest_thirty_percent() {
    let spec = built_in("gemini-cli", Trigger::Fraction(0.5), &[(1_048_576, 524_288)]);
    assert_eq!(spec.protect.last, Last::Share(0.3));
    let ToolResults::Truncated(t) = &spec.tool_results else { panic!("truncation") };
    assert_eq!((t.budget_tokens, t.last_lines), (50_000, 30));
    assert_eq!(spec.cache, CacheRule::GeminiPrefix);
    let meter = meter();
    let s = work(12, "run_shell_command", 10_000); // ~120K
    let g = compact(&s, &policy("gemini-cli", 200_000), &meter);
    assert!(g.compaction.compacted);
    let text = summary_text(&g);
    for (title, _) in Headings::GeminiCli.map() {
        assert!(text.contains(&format!("## {title}\n")), "{title}");
    }
    let tail = g.compaction.sections.tail_tokens as f64;
    let before = g.compaction.tokens_before as f64;
    assert!(tail > 0.2 * before && tail < 0.4 * before, "{tail} of {before}");
    assert!(!compact(&s, &Policy::new(Mode::Lean, 200_000), &meter).compaction.compacted);
    // A bigger window: the tail holds more than 50K of tool output, the older cut.
    let s = work(24, "run_shell_command", 10_000); // ~240K
    let g = compact(&s, &policy("gemini-cli", 400_000), &meter);
    assert!(g.compaction.effects.chars_truncated > 0);
    assert!(texts(&g).iter().any(|t| t.starts_with("Output too large. Showing the last 30 of")));
}
