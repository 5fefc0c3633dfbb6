//! Context windows, trigger thresholds and the budgets derived from them (SPEC 5).
//!
//! The constants are the reference agent's (marked (H) in the SPEC) so that our
//! numbers can be set beside its own; each is overridable through `Policy`.
//!
//! The model table maps a name fragment to a window size in tokens. Lookup is
//! by the longest fragment contained in the lower-cased model name, so
//! `gpt-4o-mini` finds `gpt-4o-mini` before `gpt-4o` before `gpt-4`. The sizes
//! are the input context windows published in each provider's model
//! documentation (OpenAI, Anthropic, Google, Meta, Alibaba Qwen, DeepSeek,
//! Mistral) as of 2025; a JSON file of `{"fragment": tokens}` extends or
//! overrides them.

use super::fragments::FragmentTable;
use serde::{Deserialize, Serialize};

/// Window assumed when neither `--window` nor `--model` says otherwise.
pub const DEFAULT_WINDOW_TOKENS: u64 = 200_000;
/// Trigger at this share of the window (H).
pub const THRESHOLD_PERCENT: f64 = 0.50;
/// Windows under this size trigger at no less than [`SMALL_WINDOW_THRESHOLD_PERCENT`] (H).
pub const SMALL_WINDOW_LIMIT_TOKENS: u64 = 512_000;
pub const SMALL_WINDOW_THRESHOLD_PERCENT: f64 = 0.75;
/// The trigger never sits below this many tokens (H).
pub const MINIMUM_THRESHOLD_TOKENS: u64 = 64_000;
/// When the minimum reaches the window, trigger at this share of it instead (H).
pub const MIN_WINDOW_TRIGGER_PERCENT: f64 = 0.85;
/// Legacy tail budget: this share of the threshold (H).
pub const LEGACY_TAIL_RATIO: f64 = 0.20;
/// Lean tail budget: this share of the window, clamped (H).
pub const LEAN_TAIL_RATIO: f64 = 0.025;
pub const LEAN_TAIL_FLOOR_TOKENS: u64 = 10_000;
pub const LEAN_TAIL_CAP_TOKENS: u64 = 25_000;
/// Neither tail budget exceeds this share of the window (H).
pub const TAIL_MAX_WINDOW_RATIO: f64 = 0.20;
/// The walk may overshoot the budget up to this factor to finish a message (H).
pub const TAIL_SOFT_CEILING_FACTOR: f64 = 1.5;
/// Summary budget: this share of the summarized tokens (H) ...
pub const SUMMARY_RATIO: f64 = 0.20;
/// ... no less than this (H) ...
pub const SUMMARY_MIN_TOKENS: u64 = 2_000;
/// ... and no more than this share of the window, nor this ceiling (H).
pub const SUMMARY_WINDOW_RATIO: f64 = 0.05;
pub const SUMMARY_CEILING_TOKENS: u64 = 10_000;
/// The fallback ("gateway") trigger: this share of the window (H) ...
pub const GATEWAY_PERCENT: f64 = 0.85;
/// ... or this many messages (H), for sessions of at least [`GATEWAY_MIN_MESSAGES`].
pub const GATEWAY_MESSAGE_LIMIT: usize = 5_000;
pub const GATEWAY_MIN_MESSAGES: usize = 4;

/// Built-in windows: (name fragment, input window in tokens).
const MODELS: &[(&str, u64)] = &[
    // OpenAI
    ("gpt-3.5-turbo", 16_385),
    ("gpt-4", 8_192),
    ("gpt-4-32k", 32_768),
    ("gpt-4-turbo", 128_000),
    ("gpt-4o", 128_000),
    ("gpt-4o-mini", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano", 1_047_576),
    ("gpt-4.5", 128_000),
    ("gpt-5", 400_000),
    ("gpt-5-mini", 400_000),
    ("gpt-5-nano", 400_000),
    ("gpt-5-codex", 400_000),
    ("gpt-5.1", 400_000),
    ("gpt-5.1-codex", 400_000),
    ("gpt-5.1-codex-mini", 400_000),
    ("gpt-5.2", 400_000),
    ("gpt-5.2-codex", 400_000),
    ("gpt-5.3-codex", 400_000),
    ("codex-mini", 200_000),
    ("o1", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o3", 200_000),
    ("o3-mini", 200_000),
    ("o4-mini", 200_000),
    // Anthropic
    ("claude", 200_000),
    ("claude-3-haiku", 200_000),
    ("claude-3-opus", 200_000),
    ("claude-3-5-sonnet", 200_000),
    ("claude-3-5-haiku", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-opus-4-5", 200_000),
    ("claude-opus-4-6", 200_000),
    ("claude-sonnet-4-5", 200_000),
    ("claude-haiku-4-5", 200_000),
    ("claude-haiku-4", 200_000),
    // Google
    ("gemini", 1_048_576),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2.0-flash", 1_048_576),
    ("gemini-2.5-pro", 1_048_576),
    ("gemini-2.5-flash", 1_048_576),
    // Meta
    ("llama", 131_072),
    ("llama-3", 8_192),
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama-4-scout", 10_485_760),
    ("llama-4-maverick", 1_048_576),
    // Qwen
    ("qwen", 131_072),
    ("qwen2.5", 131_072),
    ("qwen3", 131_072),
    ("qwen3-coder", 262_144),
    ("qwq", 131_072),
    // DeepSeek
    ("deepseek", 128_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("deepseek-r1", 128_000),
    ("deepseek-v3", 128_000),
    // Mistral
    ("mistral-large", 128_000),
    ("codestral", 256_000),
];

/// How `--model auto` (the default without `--window`) chose one session's
/// window: the report fields `model` and `window_from` (beside `window`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Chosen {
    /// The model the session's log names (`crate::discover::facts`); `null` when it names none.
    pub model: Option<String>,
    /// [`FROM_MODEL`]: the model table's window for `model`; [`FROM_DEFAULT`]:
    /// the log names no model the table knows, so [`DEFAULT_WINDOW_TOKENS`].
    pub window_from: String,
}

/// `window_from` of a window found in the model table.
pub const FROM_MODEL: &str = "model";
/// `window_from` of the default window.
pub const FROM_DEFAULT: &str = "default";

impl ModelTable {
    /// The window of a session whose log names `model` (`None`: it names none),
    /// and how it was chosen.
    pub fn choose(&self, model: Option<&str>) -> (u64, Chosen) {
        let found = model.and_then(|m| self.lookup(m));
        let chosen =
            |from: &str| Chosen { model: model.map(str::to_string), window_from: from.to_string() };
        match found {
            Some(w) => (w, chosen(FROM_MODEL)),
            None => (DEFAULT_WINDOW_TOKENS, chosen(FROM_DEFAULT)),
        }
    }
}

/// The model table, built in and extended by the user.
#[derive(Clone, Debug)]
pub struct ModelTable {
    entries: FragmentTable<u64>,
}

impl Default for ModelTable {
    fn default() -> Self {
        ModelTable { entries: FragmentTable::new(MODELS.iter().copied()) }
    }
}

impl ModelTable {
    /// Adds or replaces entries (fragments are matched lower-cased).
    pub fn extend(&mut self, entries: impl IntoIterator<Item = (String, u64)>) {
        self.entries.extend(entries);
    }

    /// The window of `model`: the entry with the longest fragment it contains.
    pub fn lookup(&self, model: &str) -> Option<u64> {
        self.entries.lookup(model).copied()
    }

    /// Every entry, sorted by fragment.
    pub fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        self.entries.entries().map(|(k, &v)| (k, v))
    }
}

/// The trigger threshold for a window (H):
/// pct = 0.50, raised to 0.75 under 512K; threshold = max(window × pct, 64,000);
/// when that reaches the window, min(window × 0.85, window − 1). An optional
/// absolute cap lowers it further.
pub fn threshold_tokens(window: u64, cap: Option<u64>) -> u64 {
    let mut pct = THRESHOLD_PERCENT;
    if window < SMALL_WINDOW_LIMIT_TOKENS {
        pct = pct.max(SMALL_WINDOW_THRESHOLD_PERCENT);
    }
    let mut threshold = ((window as f64 * pct) as u64).max(MINIMUM_THRESHOLD_TOKENS);
    if threshold >= window {
        threshold = ((window as f64 * MIN_WINDOW_TRIGGER_PERCENT) as u64)
            .min(window.saturating_sub(1))
            .max(1);
    }
    if let Some(cap) = cap.filter(|&c| c > 0) {
        threshold = threshold.min(cap.min(window));
    }
    threshold
}

/// The legacy tail budget: threshold × 0.20, capped at window × 0.20 (H).
pub fn legacy_tail_budget(threshold: u64, window: u64) -> u64 {
    let budget = (threshold as f64 * LEGACY_TAIL_RATIO) as u64;
    budget.min(tail_cap(window)).max(1)
}

/// The lean tail budget: clamp(window × 0.025, 10,000, 25,000), capped at window × 0.20 (H).
pub fn lean_tail_budget(window: u64) -> u64 {
    let budget = ((window as f64 * LEAN_TAIL_RATIO) as u64)
        .clamp(LEAN_TAIL_FLOOR_TOKENS, LEAN_TAIL_CAP_TOKENS);
    budget.min(tail_cap(window)).max(1)
}

fn tail_cap(window: u64) -> u64 {
    (window as f64 * TAIL_MAX_WINDOW_RATIO) as u64
}

/// The soft ceiling of the tail walk: 1.5 × budget (H).
pub fn tail_soft_ceiling(budget: u64) -> u64 {
    (budget as f64 * TAIL_SOFT_CEILING_FACTOR) as u64
}

/// The summary budget in tokens (H): max(2,000, min(0.20 × middle, min(0.05 × window, 10,000))).
pub fn summary_budget(middle_tokens: u64, window: u64) -> u64 {
    let ceiling = ((window as f64 * SUMMARY_WINDOW_RATIO) as u64).min(SUMMARY_CEILING_TOKENS);
    let scaled = (middle_tokens as f64 * SUMMARY_RATIO) as u64;
    scaled.min(ceiling).max(SUMMARY_MIN_TOKENS)
}

/// Returns true if and only if the fallback ("gateway") trigger fires (H):
/// the request reaches 85% of the window, or the session holds 5,000 messages;
/// sessions under 4 messages never trigger.
pub fn gateway_triggered(request_tokens: u64, messages: usize, window: u64) -> bool {
    messages >= GATEWAY_MIN_MESSAGES
        && (request_tokens as f64 >= window as f64 * GATEWAY_PERCENT
            || messages >= GATEWAY_MESSAGE_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `threshold_tokens` at windows (and caps) that reach each of its rules.
    #[test]
    fn threshold_by_rule() {
        let cases = [
            // 0.75 × 64K = 48K, floored to 64K = the window, so 85% of it.
            (64_000, None, 54_400, "at 64K falls back to 85 percent"),
            (128_000, None, 96_000, "at 128K uses the 75 percent floor"),
            (200_000, None, 150_000, "at 200K uses the 75 percent floor"),
            (1_000_000, None, 500_000, "at 1M is half"),
            // 0.75 × 80K = 60K < 64K minimum, and 64K is still under the window.
            (80_000, None, 64_000, "minimum is 64K"),
            (200_000, Some(100_000), 100_000, "cap lowers"),
            (200_000, Some(900_000), 150_000, "cap never raises"),
            (1_000, None, 850, "tiny window stays below window"),
            (1, None, 1, "tiny window stays below window"),
        ];
        for (window, cap, threshold, rule) in cases {
            assert_eq!(threshold_tokens(window, cap), threshold, "threshold {rule}");
        }
    }

    #[test]
    fn legacy_tail_budgets() {
        assert_eq!(legacy_tail_budget(threshold_tokens(200_000, None), 200_000), 30_000);
        assert_eq!(legacy_tail_budget(threshold_tokens(1_000_000, None), 1_000_000), 100_000);
        // Capped at 20% of the window.
        assert_eq!(legacy_tail_budget(1_000_000, 100_000), 20_000);
    }

    #[test]
    fn lean_tail_budgets() {
        assert_eq!(lean_tail_budget(200_000), 10_000); // 5,000 raised to the floor
        assert_eq!(lean_tail_budget(1_000_000), 25_000);
        assert_eq!(lean_tail_budget(10_000_000), 25_000); // capped
        assert_eq!(lean_tail_budget(600_000), 15_000);
        assert_eq!(lean_tail_budget(32_000), 6_400); // the 20% cap beats the floor
    }

    #[test]
    fn soft_ceiling_is_one_and_a_half_budgets() {
        assert_eq!(tail_soft_ceiling(10_000), 15_000);
    }

    #[test]
    fn summary_budget_bounds() {
        assert_eq!(summary_budget(1_000, 200_000), 2_000);
        assert_eq!(summary_budget(40_000, 200_000), 8_000);
        assert_eq!(summary_budget(400_000, 200_000), 10_000);
        assert_eq!(summary_budget(400_000, 1_000_000), 10_000);
        assert_eq!(summary_budget(400_000, 100_000), 5_000);
    }

    #[test]
    fn gateway_trigger() {
        assert!(gateway_triggered(170_000, 10, 200_000));
        assert!(!gateway_triggered(169_999, 10, 200_000));
        assert!(gateway_triggered(10, 5_000, 200_000));
        assert!(!gateway_triggered(190_000, 3, 200_000));
    }

    #[test]
    fn model_lookup_takes_the_longest_fragment() {
        let t = ModelTable::default();
        assert_eq!(t.lookup("gpt-4o-mini-2024-07-18"), Some(128_000));
        assert_eq!(t.lookup("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(t.lookup("GPT-4"), Some(8_192));
        assert_eq!(t.lookup("claude-opus-4-6"), Some(200_000));
        assert_eq!(t.lookup("anthropic/claude-3-5-sonnet-20241022"), Some(200_000));
        assert_eq!(t.lookup("gemini-1.5-pro-002"), Some(2_097_152));
        assert_eq!(t.lookup("meta-llama/Llama-3.3-70B-Instruct"), Some(131_072));
        assert_eq!(t.lookup("Qwen/Qwen3-Coder-480B"), Some(262_144));
        assert_eq!(t.lookup("deepseek-reasoner"), Some(128_000));
        assert_eq!(t.lookup("o3-mini"), Some(200_000));
        assert_eq!(t.lookup("unknown-model"), None);
    }

    #[test]
    fn choose_falls_back_to_the_default_window() {
        let t = ModelTable::default();
        let (w, c) = t.choose(Some("gpt-5.3-codex"));
        assert_eq!((w, c.window_from.as_str()), (400_000, FROM_MODEL));
        let (w, c) = t.choose(Some("my-own-model"));
        assert_eq!(
            (w, c.window_from.as_str(), c.model.as_deref()),
            (200_000, FROM_DEFAULT, Some("my-own-model"))
        );
        assert_eq!(t.choose(None).0, DEFAULT_WINDOW_TOKENS);
    }

    #[test]
    fn model_table_is_user_extendable() {
        let mut t = ModelTable::default();
        t.extend([("my-model".to_string(), 32_000), ("GPT-4O".to_string(), 64_000)]);
        assert_eq!(t.lookup("acme/my-model-v2"), Some(32_000));
        assert_eq!(t.lookup("gpt-4o"), Some(64_000));
    }
}
