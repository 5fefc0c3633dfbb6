//! The built-in policies: today's four modes and the live agents' policies,
//! one table entry each. Every constant of an agent's policy is cited in
//! docs/policies.md (repository path or page, version, date), or named there
//! as our estimate; the comments below give the short source.

use super::headings::Headings;
use super::{
    Applies, CacheRule, Count, Last, Masking, Measure, PolicySpec, Protect, SummarySpec, Text,
    Thinking, ToolResults, Trigger, Truncation,
};
use crate::policy::Mode;
use crate::policy::boundaries::PROTECT_FIRST_N;
use std::borrow::Cow;

/// Claude Code's placeholder for a cleared tool result
/// (`TIME_BASED_MC_CLEARED_MESSAGE`, src/services/compact/microCompact.ts,
/// Claude Code 2.1.88 extracted source; the same text in 2.1.63's bundle).
pub const CLAUDE_CODE_CLEARED: &str = "[Old tool result content cleared]";

/// OpenHands' mask (`AgentCondensationObservation('<MASKED>')`,
/// openhands/memory/condenser/impl/observation_masking_condenser.py, 0.62.0).
pub const OPENHANDS_MASK: &str = "<MASKED>";

/// Our stand-in for the placeholder of Anthropic's `clear_tool_uses`: the API
/// does not publish its text (context-editing docs, late-2026 copy).
pub const CONTEXT_EDITING_CLEARED: &str = "[Old tool result content cleared]";

/// Our own summary, no budget of its own.
const OURS: SummarySpec = SummarySpec::Ours { headings: Headings::Ours, max_tokens: None };

/// The four modes' protection: the reference's first messages and a tail.
const fn ours(last: Last) -> Protect {
    Protect { first: PROTECT_FIRST_N, last, user_messages_tokens: None }
}

/// A summarizing mode (legacy, lean, tiered): the reference trigger, our
/// summary, the history edited; the modes differ only in the tail they keep
/// and how they shrink tool results.
const fn mode(name: &'static str, last: Last, tool_results: ToolResults) -> PolicySpec {
    PolicySpec {
        name: Cow::Borrowed(name),
        trigger: Trigger::Reference,
        measure: Measure::Prompt,
        protect: ours(last),
        tool_results,
        thinking: Thinking::Kept,
        summary: OURS,
        window: None,
        applies: Applies::History,
        cache: CacheRule::Anthropic,
    }
}

/// Claude Code's compactable tools (`COMPACTABLE_TOOLS`, microCompact.ts 2.1.88;
/// `eligible_tools` of the 2.1.63 preset).
const CLAUDE_CODE_TOOLS: &[Text] = &[
    Cow::Borrowed("Read"),
    Cow::Borrowed("Bash"),
    Cow::Borrowed("Grep"),
    Cow::Borrowed("Glob"),
    Cow::Borrowed("WebSearch"),
    Cow::Borrowed("WebFetch"),
    Cow::Borrowed("Edit"),
    Cow::Borrowed("Write"),
];

/// `none` (today's mode `none`).
pub const NONE: PolicySpec = PolicySpec {
    name: Cow::Borrowed("none"),
    trigger: Trigger::Never,
    measure: Measure::Prompt,
    protect: Protect {
        first: PROTECT_FIRST_N,
        last: Last::Messages(0),
        user_messages_tokens: None,
    },
    tool_results: ToolResults::Kept,
    thinking: Thinking::Kept,
    summary: SummarySpec::None,
    window: None,
    applies: Applies::History,
    cache: CacheRule::Anthropic,
};

/// `legacy` (today's mode `legacy`).
pub const LEGACY: PolicySpec = mode("legacy", Last::Legacy, ToolResults::Stages);

/// `lean` (today's mode `lean`).
pub const LEAN: PolicySpec = mode("lean", Last::Lean, ToolResults::Stages);

/// `tiered` (today's mode `tiered`).
pub const TIERED: PolicySpec = mode("tiered", Last::Lean, ToolResults::Tiers);

/// Every built-in policy, in the order `--policies all` reports them.
pub const BUILT_IN: &[PolicySpec] = &[
    NONE,
    LEGACY,
    LEAN,
    TIERED,
    // Auto-compaction at window − min(max output, 20,000) − 13,000 (autoCompact.ts,
    // 2.1.88 extracted source); micro-compaction as 2.1.63's bundle read by a third
    // party (breadboard preset claude_code@2.1.63): newest 3 kept, cleared to a
    // 40,000-token residual, only if 20,000 go, from 20,000 below the trigger.
    // The summary: nine sections, at most 20,000 tokens (COMPACT_MAX_OUTPUT_TOKENS).
    PolicySpec {
        name: Cow::Borrowed("claude-code"),
        trigger: Trigger::Reserve(13_000 + 20_000),
        measure: Measure::Prompt,
        protect: Protect { first: 0, last: Last::Messages(0), user_messages_tokens: None },
        tool_results: ToolResults::Masked(Masking {
            keep_newest: 3,
            count: Count::Results,
            placeholder: Cow::Borrowed(CLAUDE_CODE_CLEARED),
            clear_at_least: 20_000,
            stop_under_tokens: Some(40_000),
            exclude_tools: Cow::Borrowed(&[]),
            only_tools: Cow::Borrowed(CLAUDE_CODE_TOOLS),
            before_trigger: 20_000,
        }),
        thinking: Thinking::Kept,
        summary: SummarySpec::Ours { headings: Headings::ClaudeCode, max_tokens: Some(20_000) },
        window: None,
        applies: Applies::History,
        cache: CacheRule::Anthropic,
    },
    // `context_window * 9 / 10` (openai_models.rs, rust-v0.98.0); the newest user
    // messages up to COMPACT_USER_MESSAGE_MAX_TOKENS = 20,000 (compact.rs) and one
    // summary; OpenAI's automatic prefix cache.
    PolicySpec {
        name: Cow::Borrowed("codex"),
        trigger: Trigger::Fraction(0.9),
        // Compared with `get_total_token_usage` (context_manager/history.rs, rust-v0.98.0).
        measure: Measure::LastTotal,
        protect: Protect { first: 0, last: Last::Messages(0), user_messages_tokens: Some(20_000) },
        tool_results: ToolResults::Kept,
        thinking: Thinking::Kept,
        summary: SummarySpec::Ours { headings: Headings::Codex, max_tokens: None },
        window: None,
        applies: Applies::History,
        cache: CacheRule::OpenaiPrefix,
    },
    // The V0 server's default condenser (session.py, 0.62.0): more than 120
    // events, the first 4 kept, the view cut to max_size // 2 = 60 events:
    // 4 + 1 summary + 55 newest. We count messages as events.
    PolicySpec {
        name: Cow::Borrowed("openhands"),
        trigger: Trigger::Events(120),
        measure: Measure::Prompt,
        protect: Protect {
            first: 4,
            last: Last::Messages(120 / 2 - 4 - 1),
            user_messages_tokens: None,
        },
        tool_results: ToolResults::Kept,
        thinking: Thinking::Kept,
        summary: SummarySpec::Ours { headings: Headings::Openhands, max_tokens: None },
        window: None,
        applies: Applies::History,
        cache: CacheRule::Anthropic,
    },
    // ObservationMaskingCondenser (0.62.0): every step, observations outside the
    // newest `attention_window` = 5 events (the class default) become `<MASKED>`.
    PolicySpec {
        name: Cow::Borrowed("openhands-masking"),
        trigger: Trigger::EveryRequest,
        measure: Measure::Prompt,
        protect: Protect { first: 0, last: Last::Messages(0), user_messages_tokens: None },
        tool_results: ToolResults::Masked(Masking::newest(5, Count::Messages, OPENHANDS_MASK)),
        thinking: Thinking::Kept,
        summary: SummarySpec::None,
        window: None,
        applies: Applies::History,
        cache: CacheRule::Anthropic,
    },
    // `clear_tool_uses_20250919` defaults (trigger 100,000 input tokens, keep 3
    // tool uses, clear_at_least none, exclude_tools none) and
    // `clear_thinking_20251015` keeping the newest turn (the default on earlier
    // Opus/Sonnet and Haiku); applied by the server to each request.
    PolicySpec {
        name: Cow::Borrowed("anthropic-context-editing"),
        trigger: Trigger::Tokens(100_000),
        measure: Measure::Prompt,
        protect: Protect { first: 0, last: Last::Messages(0), user_messages_tokens: None },
        tool_results: ToolResults::Masked(Masking::newest(
            3,
            Count::Results,
            CONTEXT_EDITING_CLEARED,
        )),
        thinking: Thinking::Cleared(1),
        summary: SummarySpec::None,
        window: None,
        applies: Applies::Request,
        cache: CacheRule::Anthropic,
    },
    // DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5 of the window,
    // COMPRESSION_PRESERVE_THRESHOLD = 0.3 kept, tool output outside the newest
    // COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET = 50,000 tokens cut to its last
    // 30 lines (chatCompressionService.ts, v0.56.0; the 30 lines until 2026-02-06).
    PolicySpec {
        name: Cow::Borrowed("gemini-cli"),
        trigger: Trigger::Fraction(0.5),
        measure: Measure::Prompt,
        protect: Protect { first: 0, last: Last::Share(0.3), user_messages_tokens: None },
        tool_results: ToolResults::Truncated(Truncation { budget_tokens: 50_000, last_lines: 30 }),
        thinking: Thinking::Kept,
        summary: SummarySpec::Ours { headings: Headings::GeminiCli, max_tokens: None },
        window: None,
        applies: Applies::History,
        cache: CacheRule::GeminiPrefix,
    },
];

/// Today's four modes, the default of `report --policies`.
pub const MODES: [&str; 4] = ["none", "legacy", "lean", "tiered"];

/// The spec of today's mode `mode`.
pub fn of_mode(mode: Mode) -> &'static PolicySpec {
    match mode {
        Mode::None => &NONE,
        // A `const` block: the value built by `mode()` is promoted to 'static.
        Mode::Legacy => const { &LEGACY },
        Mode::Lean => const { &LEAN },
        Mode::Tiered => const { &TIERED },
    }
}

/// The built-in policy named `name`.
pub fn find(name: &str) -> Option<&'static PolicySpec> {
    BUILT_IN.iter().find(|s| s.name == name)
}

/// Every built-in name, comma-separated (for error messages and help).
pub fn names() -> String {
    BUILT_IN.iter().map(|s| s.name.as_ref()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_passes_its_checks_and_has_a_unique_name() {
        for s in BUILT_IN {
            assert_eq!(s.check(), Ok(()), "{}", s.name);
            assert_eq!(BUILT_IN.iter().filter(|o| o.name == s.name).count(), 1, "{}", s.name);
        }
    }

    #[test]
    fn the_four_modes_are_specs_that_run_their_mode() {
        for m in Mode::ALL {
            let spec = find(m.name()).unwrap();
            assert_eq!(spec.reference_mode(), Some(m), "{m}");
        }
        for s in BUILT_IN.iter().filter(|s| !MODES.contains(&s.name.as_ref())) {
            assert_eq!(s.reference_mode(), None, "{}", s.name);
        }
    }
}
