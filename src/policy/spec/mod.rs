//! A compaction policy as data: [`PolicySpec`].
//!
//! ## What it is
//! One value holds everything a policy decides: when it acts ([`Trigger`],
//! compared with the [`Measure`] of a request), what it never touches ([`Protect`]), what becomes of old tool results
//! ([`ToolResults`]) and of thinking ([`Thinking`]), what summary replaces the
//! folded middle ([`SummarySpec`]), the window the agent itself assumes, whether
//! the edit rewrites the client's history or only the request a server sees
//! ([`Applies`]), and the provider's prompt-caching rule ([`CacheRule`]).
//!
//! ## Why
//! To replay the live agents' policies (Claude Code, Codex, OpenHands,
//! Anthropic's context editing, Gemini CLI) next to ours on the same archive,
//! a policy must be a table entry, not a code path: [`builtin::BUILT_IN`]
//! holds today's four modes and the agents' policies, and `--policy FILE`
//! loads a user's own ([`file`](mod@file)).
//!
//! ## Example
//! `codex`: trigger at 90% of the window, compared with Codex's own measure
//! ([`Measure::LastTotal`]); nothing protected but the newest user
//! messages up to 20,000 tokens; one summary (our deterministic stand-in under
//! Codex's four headings).
//!
//! ## Invariants
//! - Today's modes are specs whose tool results are [`ToolResults::Stages`] or
//!   [`ToolResults::Tiers`] (or whose trigger is [`Trigger::Never`]): they run
//!   the same code as before ([`PolicySpec::reference_mode`]), so their outputs
//!   are byte-identical.
//! - Every other spec runs the engine of `spec/run.rs`, which reads only the
//!   spec's fields.
//! - A spec is checked once when it is built ([`PolicySpec::check`]).

#[cfg(test)]
mod agent_tests;
pub mod builtin;
pub(crate) mod edits;
pub mod file;
pub mod headings;
pub(crate) mod masked;
pub(crate) mod run;

use super::Mode;
use crate::catalog::window;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Text owned by a loaded spec, borrowed by a built-in one.
pub type Text = Cow<'static, str>;
/// A list of names, owned by a loaded spec, borrowed by a built-in one.
pub type Names = Cow<'static, [Text]>;

/// Everything that decides how a policy compacts (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// The policy's name: a report row, `--policies NAME`.
    pub name: Text,
    /// When it acts.
    pub trigger: Trigger,
    /// What a token trigger compares with its threshold (replay).
    #[serde(default)]
    pub measure: Measure,
    /// What is never folded or edited.
    #[serde(default)]
    pub protect: Protect,
    /// What becomes of old tool results.
    #[serde(default)]
    pub tool_results: ToolResults,
    /// What becomes of thinking blocks.
    #[serde(default)]
    pub thinking: Thinking,
    /// What replaces the folded middle.
    #[serde(default)]
    pub summary: SummarySpec,
    /// The window, in tokens, the agent itself assumes for every model, where
    /// it differs from ours (Gemini CLI: 1,048,576): triggers and shares are
    /// computed from it.
    #[serde(default)]
    pub window: Option<u64>,
    /// Whether an edit rewrites the client's history or only the request.
    #[serde(default)]
    pub applies: Applies,
    /// How the provider caches prompts (replay's cache model).
    #[serde(default)]
    pub cache: CacheRule,
}

/// When a policy acts, measured on the request before a call.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Trigger {
    /// Our own rule ([`window::threshold_tokens`]).
    Reference,
    /// At this fraction of the window.
    Fraction(f64),
    /// At this many tokens.
    Tokens(u64),
    /// At the window minus this many tokens.
    Reserve(u64),
    /// When the history holds more than this many messages (OpenHands counts events).
    Events(usize),
    /// Before every request (observation masking).
    EveryRequest,
    /// Never: the session is left as it is (`none`).
    Never,
}

/// What a token trigger compares with its threshold before a call, in
/// replay (`compact` measures the whole request: it has no calls).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The request about to be sent: the provider's recorded prompt size,
    /// corrected by what our compactions removed; our count where the log
    /// has none (today's modes, every agent but Codex).
    #[default]
    Prompt,
    /// Codex's `get_total_token_usage`: the previous response's total
    /// (prompt and output) + its estimate of the encrypted reasoning items
    /// before the last user message + the tool outputs appended since
    /// (`crate::replay::usage`).
    LastTotal,
}

/// What a policy never folds or edits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Protect {
    /// Messages after the system prompt kept at the start.
    pub first: usize,
    /// What is kept verbatim at the end.
    pub last: Last,
    /// The newest real user messages of the folded part kept, newest first, up
    /// to this many tokens, the first that does not fit cut to the rest
    /// (Codex); they stand before the summary.
    pub user_messages_tokens: Option<u64>,
}

impl Default for Protect {
    fn default() -> Protect {
        Protect { first: 0, last: Last::Messages(0), user_messages_tokens: None }
    }
}

/// The protected end of the history.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Last {
    /// Lean's tail ([`window::lean_tail_budget`]).
    Lean,
    /// Legacy's tail ([`window::legacy_tail_budget`]).
    Legacy,
    /// The last N messages (calls kept with their results).
    Messages(usize),
    /// The newest share of the history's tokens (0 to 1).
    Share(f64),
}

/// What becomes of tool results outside the protected part.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolResults {
    /// Left as they are.
    #[default]
    Kept,
    /// Our stages 1, 2 and 4 before a summary (lean, legacy; images and
    /// reasoning included).
    Stages,
    /// Our stages 1-4 one at a time up to the target, then a summary (tiered).
    Tiers,
    /// Replaced by a placeholder outside the newest ones.
    Masked(Masking),
    /// Cut to their last lines outside a budget of the newest ones.
    Truncated(Truncation),
}

/// [`ToolResults::Masked`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Masking {
    /// The newest results (of the tools it may clear) left whole, or the
    /// results among the newest messages ([`Count`]).
    pub keep_newest: usize,
    /// What `keep_newest` counts.
    #[serde(default)]
    pub count: Count,
    /// What a cleared result holds.
    pub placeholder: Text,
    /// Clear only if at least this many tokens go (else nothing is cleared).
    #[serde(default)]
    pub clear_at_least: u64,
    /// Clear oldest first, and stop once the results it may clear hold at most
    /// this many tokens (Claude Code's residual); `None` clears them all.
    #[serde(default)]
    pub stop_under_tokens: Option<u64>,
    /// Results of these tools are never cleared.
    #[serde(default)]
    pub exclude_tools: Names,
    /// When not empty, only results of these tools are cleared.
    #[serde(default)]
    pub only_tools: Names,
    /// The masking acts this many tokens below the trigger; the summary at it
    /// (Claude Code's micro-compaction runs from the warning threshold).
    #[serde(default)]
    pub before_trigger: u64,
}

impl Masking {
    /// Clears every result but the newest `keep_newest` (by `count`) to
    /// `placeholder`, at the trigger: no minimum, no residual, no tool
    /// excluded or singled out.
    pub const fn newest(keep_newest: usize, count: Count, placeholder: &'static str) -> Masking {
        Masking {
            keep_newest,
            count,
            placeholder: Cow::Borrowed(placeholder),
            clear_at_least: 0,
            stop_under_tokens: None,
            exclude_tools: Cow::Borrowed(&[]),
            only_tools: Cow::Borrowed(&[]),
            before_trigger: 0,
        }
    }
}

/// What [`Masking::keep_newest`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    /// Tool results (Claude Code, Anthropic: tool uses).
    #[default]
    Results,
    /// Messages of any kind (OpenHands' attention window counts events).
    Messages,
}

/// [`ToolResults::Truncated`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truncation {
    /// The newest results up to this many tokens stay whole.
    pub budget_tokens: u64,
    /// An older result keeps its last this many lines.
    pub last_lines: usize,
}

/// What becomes of thinking (reasoning) blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Thinking {
    /// Left as they are (or as [`ToolResults::Stages`] leaves them).
    #[default]
    Kept,
    /// Removed outside the newest N assistant turns that hold any.
    Cleared(usize),
}

/// What replaces the folded middle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SummarySpec {
    /// Nothing is folded.
    #[default]
    None,
    /// Our deterministic summary under these headings, within at most this
    /// many tokens (the agent's own summary budget) when given.
    Ours { headings: headings::Headings, max_tokens: Option<u64> },
    /// The `--summarizer` model writes the body (ours when none is given or it
    /// fails), under our headings.
    Model,
}

/// Whether an edit rewrites the client's history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Applies {
    /// The client keeps the edited history (every agent's own compaction).
    #[default]
    History,
    /// A server edits each request; the client's history stays whole
    /// (Anthropic's context editing).
    Request,
}

/// The provider's prompt-caching rule (research notes A.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheRule {
    /// Anthropic's explicit breakpoints (system and the last three messages).
    #[default]
    Anthropic,
    /// OpenAI's automatic prefix cache: the longest shared prefix.
    OpenaiPrefix,
    /// Gemini's implicit cache: the longest shared prefix.
    GeminiPrefix,
}

impl PolicySpec {
    /// The mode whose code runs this spec, for today's four; `None` when
    /// the engine of `spec/run.rs` runs it.
    pub fn reference_mode(&self) -> Option<Mode> {
        match (&self.trigger, &self.tool_results, &self.protect.last) {
            (Trigger::Never, _, _) => Some(Mode::None),
            (_, ToolResults::Tiers, _) => Some(Mode::Tiered),
            (_, ToolResults::Stages, Last::Legacy) => Some(Mode::Legacy),
            (_, ToolResults::Stages, _) => Some(Mode::Lean),
            _ => None,
        }
    }

    /// The window this spec's triggers and shares are computed from: the
    /// agent's own where it has one, else ours.
    pub fn window(&self, ours: u64) -> u64 {
        self.window.unwrap_or(ours)
    }

    /// The trigger's threshold in tokens at our window `window` (`cap`:
    /// `--threshold-cap`, applied as in [`window::threshold_tokens`]). 0 for a
    /// trigger on events or on every request; our own for [`Trigger::Never`],
    /// which never acts on it.
    pub fn threshold(&self, window: u64, cap: Option<u64>) -> u64 {
        let w = self.window(window);
        let raw = match self.trigger {
            // `never` reports our threshold, for comparison; nothing acts on it.
            Trigger::Reference | Trigger::Never => return window::threshold_tokens(w, cap),
            Trigger::Fraction(f) => (w as f64 * f) as u64,
            Trigger::Tokens(t) => t,
            Trigger::Reserve(r) => w.saturating_sub(r),
            Trigger::Events(_) | Trigger::EveryRequest => return 0,
        };
        match cap.filter(|&c| c > 0) {
            Some(c) => raw.min(c),
            None => raw,
        }
    }

    /// Where the edits (masking) start acting, in tokens, below `threshold`.
    pub fn edits_from(&self, threshold: u64) -> u64 {
        match &self.tool_results {
            ToolResults::Masked(m) => threshold.saturating_sub(m.before_trigger),
            _ => threshold,
        }
    }

    /// Returns true if and only if the spec folds a middle into a summary.
    pub fn summarizes(&self) -> bool {
        self.summary != SummarySpec::None
    }

    /// Checks the values a type cannot: fractions in (0, 1], a summary where
    /// the trigger is on events, our stages only with our tails.
    pub fn check(&self) -> Result<(), String> {
        let fraction = |key: &str, f: f64| {
            if f > 0.0 && f <= 1.0 {
                Ok(())
            } else {
                Err(format!("{key}: {f} is not a fraction in (0, 1]"))
            }
        };
        if self.name.trim().is_empty() {
            return Err("name: empty".into());
        }
        if let Trigger::Fraction(f) = self.trigger {
            fraction("trigger.fraction", f)?;
        }
        if let Last::Share(f) = self.protect.last {
            fraction("protect.last.share", f)?;
        }
        let ours = matches!(self.tool_results, ToolResults::Stages | ToolResults::Tiers);
        let our_tail = matches!(self.protect.last, Last::Lean | Last::Legacy);
        if our_tail && !ours {
            return Err(
                "protect.last: `lean` and `legacy` tails go with tool_results `stages` or `tiers`"
                    .into(),
            );
        }
        if ours && self.reference_mode() != Some(Mode::None) {
            if !our_tail {
                return Err(
                    "tool_results: `stages` and `tiers` go with protect.last `lean` or `legacy`"
                        .into(),
                );
            }
            if !matches!(
                self.summary,
                SummarySpec::Ours { headings: headings::Headings::Ours, max_tokens: None }
            ) {
                return Err("summary: `stages` and `tiers` fold into our own summary (`ours` headings, no max_tokens)".into());
            }
            if self.thinking != Thinking::Kept {
                return Err(
                    "thinking: `stages` and `tiers` handle thinking themselves (stage 4)".into()
                );
            }
        }
        if let ToolResults::Truncated(t) = &self.tool_results
            && t.last_lines == 0
        {
            return Err("tool_results.truncated.last_lines: must be at least 1".into());
        }
        if matches!(self.trigger, Trigger::Events(_)) && !self.summarizes() {
            return Err("trigger.events: needs a summary (an event count folds the middle)".into());
        }
        Ok(())
    }
}
