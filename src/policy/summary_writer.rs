//! Stage 6's optional writer: the summary body written by a model.
//!
//! ## What it does
//! Declares what a summarizer is to the pure pipeline: a value that, given the
//! folded middle and the previous summary, returns the body of the summary (the
//! sections between our first line and our end marker) or a typed reason why
//! it could not ([`Fallback`]). The HTTP client, the command runner and the
//! cache that implement it live in `crate::summarizer`; this file holds no I/O.
//!
//! ## Why
//! `policy::compact` stays a function of its inputs: the frame, the
//! appendices and the budget check are ours whatever writes the body, and any
//! failure gives the deterministic body instead, with the reason recorded in
//! the session's [`SummarizerUse`] (never silent, SPEC 6).
//!
//! ## Example
//! A writer that answers `"## Active Task\nNone."` gives a lean summary
//! `[CONTEXT COMPACTION — REFERENCE ONLY] ...\n\n## Active Task\nNone.\n\n## Anchor Index ...`.
//!
//! ## Invariants
//! - A writer is called only for a session that is folded (lean, legacy, or
//!   tiered's last tier), once per compaction.
//! - A body over the summary budget, or empty once cleaned, is a fallback
//!   (`over_budget`, `empty`), decided here, not by the writer.

use crate::model::Message;
use crate::tokens::Meter;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What a writer is asked to summarize.
#[derive(Clone, Copy, Debug)]
pub struct BodyRequest<'a> {
    /// The messages being folded, as they came in (before stages 1-4).
    pub middle: &'a [Message],
    /// Token budget of the body (SPEC 6, (H)).
    pub budget_tokens: u64,
}

/// A body a writer returned, and what it cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    /// Every request of it was answered from the cache.
    pub cached: bool,
    pub spent: Spent,
}

/// Tokens the summarizer itself read and wrote (the response's `usage` when
/// it has one, else our count), and the requests made for them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    /// Requests answered by the model (not from the cache).
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Spent {
    pub fn add(&mut self, other: Spent) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// Why the deterministic body was used instead of the model's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fallback {
    /// The server could not be reached (refused, reset, unknown host).
    Connection,
    /// No answer within the timeout.
    Timeout,
    /// The server answered this HTTP status (after the retries).
    Http(u16),
    /// The answer is not a Chat Completions response.
    BadJson,
    /// The body is empty once cleaned.
    Empty,
    /// The body is over the summary budget.
    OverBudget,
    /// The middle does not fit the summarizer's window, even in chunks.
    TooLarge,
    /// `--summarizer-cmd` exited with this status (`None`: killed by a signal).
    ExitStatus(Option<i32>),
    /// `--summarizer-cmd` could not be started or fed.
    Spawn,
    /// `--summary-cache-only` and the request is not in the cache.
    CacheMiss,
}

impl Fallback {
    /// The name counted on the summary line and in reports.
    pub fn name(self) -> String {
        match self {
            Fallback::Connection => "connection".into(),
            Fallback::Timeout => "timeout".into(),
            Fallback::Http(status) => format!("http_{status}"),
            Fallback::BadJson => "bad_json".into(),
            Fallback::Empty => "empty".into(),
            Fallback::OverBudget => "over_budget".into(),
            Fallback::TooLarge => "too_large".into(),
            Fallback::ExitStatus(Some(code)) => format!("exit_status_{code}"),
            Fallback::ExitStatus(None) => "exit_signal".into(),
            Fallback::Spawn => "spawn".into(),
            Fallback::CacheMiss => "cache_miss".into(),
        }
    }
}

/// A writer's failure: the reason, and what was spent before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub reason: Fallback,
    pub spent: Spent,
}

impl From<Fallback> for Failure {
    fn from(reason: Fallback) -> Failure {
        Failure { reason, spent: Spent::default() }
    }
}

/// Writes summary bodies (`crate::summarizer` implements it).
pub trait SummaryWriter: fmt::Debug + Send + Sync {
    /// The body for `request`, or why there is none.
    fn write(&self, request: &BodyRequest<'_>, meter: &Meter) -> Result<Body, Failure>;
}

/// What the summarizer did for one compaction: the report's
/// `summarizer: {used, cached, fallback, reason}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummarizerUse {
    /// The model's body is in the summary.
    pub used: bool,
    /// It came from the cache.
    pub cached: bool,
    /// Why the deterministic body was used (`None` when `used`).
    pub fallback: Option<Fallback>,
    pub spent: Spent,
}

/// Summarizer totals over sessions or compactions: what the summary line,
/// `summary.json` and replay rows count.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummarizerCounts {
    /// Summaries whose body the model wrote ...
    pub used: u64,
    /// ... of them answered from the cache.
    pub cached: u64,
    /// Summaries that fell back to the deterministic body ...
    pub fallback: u64,
    /// ... by reason ([`Fallback::name`]).
    pub reasons: BTreeMap<String, u64>,
    /// Requests the model answered (cache hits excluded).
    pub calls: u64,
    /// The summarizer's own tokens (cached answers included: what they cost to make).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl SummarizerCounts {
    /// Counts one compaction's use.
    pub fn add(&mut self, u: &SummarizerUse) {
        self.used += u64::from(u.used);
        self.cached += u64::from(u.used && u.cached);
        if let Some(reason) = u.fallback {
            self.fallback += 1;
            *self.reasons.entry(reason.name()).or_default() += 1;
        }
        self.calls += u.spent.calls;
        self.prompt_tokens += u.spent.prompt_tokens;
        self.completion_tokens += u.spent.completion_tokens;
    }

    /// Adds other totals.
    pub fn merge(&mut self, other: &SummarizerCounts) {
        crate::figures::tally::tally_fields!(self, other;
            used, cached, fallback, reasons, calls, prompt_tokens, completion_tokens);
    }

    /// Returns true if and only if a summary was asked of the summarizer.
    pub fn is_empty(&self) -> bool {
        self.used == 0 && self.fallback == 0
    }
}

/// The model's body, cleaned: outer blank lines and code fences removed, a
/// leading `<think>` block dropped, and any line of our frame (first line,
/// end marker) taken out, so the summary keeps exactly one of each.
pub fn clean_body(text: &str) -> String {
    let mut t = text.trim();
    if let Some(rest) = t.strip_prefix("<think>") {
        t = rest.split_once("</think>").map_or("", |(_, after)| after).trim();
    }
    if let Some(inner) = t.strip_prefix("```") {
        let inner = inner.split_once('\n').map_or("", |(_, body)| body);
        t = inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    let kept: Vec<&str> = t
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with(super::summary::SUMMARY_PREFIX)
                && !l.starts_with(super::summary::SUMMARY_END_MARKER)
        })
        .collect();
    kept.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::summary::{SUMMARY_END_MARKER, SUMMARY_PREFIX};

    #[test]
    fn clean_body_drops_fences_thinking_and_our_frame() {
        let raw = format!(
            "<think>plan</think>\n```markdown\n{SUMMARY_PREFIX} x\n## Active Task\nfix it\n{SUMMARY_END_MARKER}\n```\n"
        );
        assert_eq!(clean_body(&raw), "## Active Task\nfix it");
        assert_eq!(clean_body("  \n\n "), "");
        assert_eq!(clean_body("<think>never closed"), "");
    }

    #[test]
    fn fallback_names_are_the_reported_ones() {
        assert_eq!(Fallback::Http(429).name(), "http_429");
        assert_eq!(Fallback::ExitStatus(Some(3)).name(), "exit_status_3");
        assert_eq!(Fallback::ExitStatus(None).name(), "exit_signal");
        assert_eq!(Fallback::CacheMiss.name(), "cache_miss");
    }
}
