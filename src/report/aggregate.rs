//! Corpus figures: one row per (session, mode), and their totals and
//! percentiles per mode and per format (`summary.json`).
//!
//! Everything serialized here is ordered (`BTreeMap`, fixed field order) and
//! rounded to fixed decimals, so a committed baseline diffs cleanly.

use super::fingerprint::Inputs;
use super::recorded::{RecordedRow, RecordedTotals};
use super::saved_pct;
use super::wire::{ReplayRow, SessionRow};
use crate::figures::pct;
use crate::policy::summary_writer::SummarizerCounts;
use crate::replay::Totals;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The modes a report runs, in report order.
pub const REPORT_MODES: [&str; 4] = ["none", "legacy", "lean", "tiered"];

/// One row of `sessions.jsonl`: a session under one mode.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReportRow {
    #[serde(flatten)]
    pub compaction: SessionRow,
    /// Broken promises found by `verify` (API validity, verbatim head/tail, ...).
    pub problems: usize,
    /// The session's real user messages (the same for every mode): the
    /// denominator of "user messages kept whole" in the report's tables.
    pub user_messages: usize,
    pub replay_calls: usize,
    pub replay_compactions: usize,
    pub replay_thrash_stopped: bool,
    pub replay_peak_original: u64,
    pub replay_peak_live: u64,
    pub replay_billed_original: u64,
    pub replay_billed_live: u64,
    pub replay_cache_read_original: u64,
    pub replay_cache_read_live: u64,
    /// `--summarizer*`: the summarizer over the replay's compactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_summarizer: Option<SummarizerCounts>,
    /// `--model auto`: the session's window (absent under `--window` / `--model NAME`,
    /// where `summary.json` holds the one window) ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// ... and how it was chosen (`model`, `window_from`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<crate::catalog::window::Chosen>,
    /// `--model auto`: the trigger threshold of the session's window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    /// The compactions the agent itself made in this session (a log read
    /// `--history full`), measured, with lean at the same points: on the
    /// session's `lean` row only, absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded_compactions: Vec<RecordedRow>,
}

/// The fields of a [`ReportRow`] besides its [`SessionRow`], for reading rows back.
#[derive(Deserialize)]
struct Figures {
    problems: usize,
    #[serde(default)]
    user_messages: usize,
    replay_calls: usize,
    replay_compactions: usize,
    replay_thrash_stopped: bool,
    replay_peak_original: u64,
    replay_peak_live: u64,
    replay_billed_original: u64,
    replay_billed_live: u64,
    replay_cache_read_original: u64,
    replay_cache_read_live: u64,
    #[serde(default)]
    replay_summarizer: Option<SummarizerCounts>,
    #[serde(default)]
    window: Option<u64>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    window_from: Option<String>,
    #[serde(default)]
    threshold: Option<u64>,
    #[serde(default)]
    recorded_compactions: Vec<RecordedRow>,
}

impl ReportRow {
    /// Reads a row of `sessions.jsonl` back (`report --merge`).
    pub fn from_json(v: &serde_json::Value) -> Result<ReportRow, serde_json::Error> {
        let compaction = SessionRow::deserialize(v.clone())?;
        let f = Figures::deserialize(v)?;
        Ok(ReportRow {
            compaction,
            problems: f.problems,
            user_messages: f.user_messages,
            replay_calls: f.replay_calls,
            replay_compactions: f.replay_compactions,
            replay_thrash_stopped: f.replay_thrash_stopped,
            replay_peak_original: f.replay_peak_original,
            replay_peak_live: f.replay_peak_live,
            replay_billed_original: f.replay_billed_original,
            replay_billed_live: f.replay_billed_live,
            replay_cache_read_original: f.replay_cache_read_original,
            replay_cache_read_live: f.replay_cache_read_live,
            replay_summarizer: f.replay_summarizer,
            window: f.window,
            chosen: f
                .window_from
                .map(|window_from| crate::catalog::window::Chosen { model: f.model, window_from }),
            threshold: f.threshold,
            recorded_compactions: f.recorded_compactions,
        })
    }

    /// A row of `compaction` and its replay `r`; `user_messages` is the
    /// session's count of real user messages.
    pub fn new(
        compaction: SessionRow,
        problems: usize,
        user_messages: usize,
        r: &ReplayRow,
    ) -> ReportRow {
        ReportRow {
            compaction,
            problems,
            user_messages,
            replay_calls: r.calls,
            replay_compactions: r.compactions,
            replay_thrash_stopped: r.thrash_stopped,
            replay_peak_original: r.peak_original,
            replay_peak_live: r.peak_live,
            replay_billed_original: r.billed_original,
            replay_billed_live: r.billed_live,
            replay_cache_read_original: r.cache_read_original,
            replay_cache_read_live: r.cache_read_live,
            replay_summarizer: r.summarizer.clone(),
            window: r.chosen.as_ref().map(|_| r.window),
            chosen: r.chosen.clone(),
            threshold: r.chosen.as_ref().map(|_| r.threshold),
            recorded_compactions: Vec::new(),
        }
    }

    /// The replay's peaks, billed and cache-read tokens.
    fn replay_totals(&self) -> Totals {
        Totals {
            peak_original: self.replay_peak_original,
            peak_live: self.replay_peak_live,
            billed_original: self.replay_billed_original,
            billed_live: self.replay_billed_live,
            cache_read_original: self.replay_cache_read_original,
            cache_read_live: self.replay_cache_read_live,
        }
    }
}

/// Found / retained anchors.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Found {
    pub found: u64,
    pub retained: u64,
}

/// Replay totals of a mode.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReplayTotals {
    pub calls: u64,
    pub compactions: u64,
    pub thrash_stopped: u64,
    pub peak_original_max: u64,
    pub peak_live_max: u64,
    pub billed_original: u64,
    pub billed_live: u64,
    pub billed_saved_pct: f64,
    pub cache_read_original: u64,
    pub cache_read_live: u64,
    /// `--summarizer*`: the summarizer over every replay's compactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<SummarizerCounts>,
}

impl ReplayTotals {
    /// Writes the peaks, billed and cache-read tokens of a mode's sessions, and the share saved.
    fn set_totals(&mut self, t: &Totals) {
        self.peak_original_max = t.peak_original;
        self.peak_live_max = t.peak_live;
        self.billed_original = t.billed_original;
        self.billed_live = t.billed_live;
        self.billed_saved_pct = saved_pct(t.billed_original, t.billed_live);
        self.cache_read_original = t.cache_read_original;
        self.cache_read_live = t.cache_read_live;
    }
}

/// Totals and percentiles of one mode over a set of sessions.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModeSummary {
    pub sessions: u64,
    pub compacted: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Of all tokens: `100 × (before − after) / before`.
    pub saved_pct: f64,
    /// Median and 90th percentile of per-session savings, over compacted sessions.
    pub saved_pct_p50: f64,
    pub saved_pct_p90: f64,
    pub head_tokens: u64,
    pub summary_tokens: u64,
    pub tail_tokens: u64,
    pub anchors: BTreeMap<String, Found>,
    pub anchors_found: u64,
    pub anchors_retained: u64,
    /// Share of the input's distinct anchors still verbatim in the output
    /// (compacted sessions); `null` (n/a) when no compacted session had one.
    pub anchor_retention_pct: Option<f64>,
    pub user_messages_summarized: u64,
    pub user_messages_kept_whole: u64,
    /// Share of summarized user messages quoted whole; `null` (n/a) when none
    /// was summarized (`check`'s figure: a mode against itself).
    pub user_messages_kept_whole_pct: Option<f64>,
    /// Real user messages of the sessions, the same for every mode: the
    /// report's tables set the ones still whole in the output (in the head,
    /// the tail, or quoted whole in a summary) against this count. 0 in
    /// reports made before it was added.
    #[serde(default)]
    pub user_messages: u64,
    pub tool_results_cleared: u64,
    pub images_stripped: u64,
    pub chars_truncated: u64,
    /// Sessions whose output broke a promise (should be 0).
    pub api_validity_failures: u64,
    pub tiers: BTreeMap<String, u64>,
    /// `--summarizer*`: `summarizer: {used, cached, fallback, reasons}` over the sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<SummarizerCounts>,
    pub replay: ReplayTotals,
}

/// `summary.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CorpusSummary {
    pub counter: String,
    pub window: u64,
    pub threshold: u64,
    /// The options that decide the figures, by name (`check` names those
    /// that differ); empty in reports made before it was added.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    pub sessions: u64,
    pub modes: BTreeMap<String, ModeSummary>,
    pub by_format: BTreeMap<String, BTreeMap<String, ModeSummary>>,
    /// Records that could not be read (absent from reports made before it was added).
    #[serde(default)]
    pub rejected: RejectCounts,
    /// The input files measured (`check` refuses to compare different ones);
    /// absent from reports made before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Inputs>,
    /// `--model auto`: the windows the sessions got, smallest first, each with
    /// its trigger and how many sessions got it (`window` above is the one
    /// window, or the default when there are several). Absent under
    /// `--window` / `--model NAME`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowSessions>,
    /// `report --policies`: each policy's figures, by name (absent without it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policies: BTreeMap<String, super::policies::PolicySummary>,
    /// The compactions the agents made themselves, measured against lean at
    /// the same points (`report/recorded.rs`); absent when there are none.
    #[serde(default, skip_serializing_if = "RecordedTotals::is_empty")]
    pub recorded_compactions: RecordedTotals,
}

/// Sessions that got one window under `--model auto`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WindowSessions {
    pub window: u64,
    pub threshold: u64,
    pub sessions: u64,
}

impl ModeSummary {
    /// User messages still whole in the output: those not summarized, and
    /// the summarized ones quoted whole. Of [`ModeSummary::user_messages`].
    pub fn user_messages_whole(&self) -> u64 {
        self.user_messages.saturating_sub(self.user_messages_summarized)
            + self.user_messages_kept_whole
    }
}

/// Rejected records: how many, by kind (`invalid_json`, `malformed`, `unreadable`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RejectCounts {
    pub total: u64,
    pub by_kind: BTreeMap<String, u64>,
}

impl RejectCounts {
    /// Counts one rejected record of `kind`.
    pub fn count(&mut self, kind: &str) {
        self.total += 1;
        *self.by_kind.entry(kind.to_string()).or_default() += 1;
    }
}

/// The `p`-th percentile (nearest rank) of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Aggregates rows of one mode.
fn summarize_mode<'a>(rows: impl Iterator<Item = &'a ReportRow>) -> ModeSummary {
    let mut m = ModeSummary::default();
    let mut savings = Vec::new();
    let mut replay = Totals::default();
    for r in rows {
        let c = &r.compaction;
        m.sessions += 1;
        m.tokens_before += c.tokens_before;
        m.tokens_after += c.tokens_after;
        if c.compacted {
            m.compacted += 1;
            savings.push(c.saved_pct);
            for (cat, a) in &c.anchors {
                let e = m.anchors.entry(cat.to_string()).or_default();
                e.found += a.found as u64;
                e.retained += a.retained as u64;
            }
            m.anchors_found += c.anchors_found as u64;
            m.anchors_retained += c.anchors_retained as u64;
        }
        m.head_tokens += c.sections.head_tokens;
        m.summary_tokens += c.sections.summary_tokens;
        m.tail_tokens += c.sections.tail_tokens;
        m.user_messages_summarized += c.user_messages_summarized as u64;
        m.user_messages_kept_whole += c.user_messages_kept_whole as u64;
        m.user_messages += r.user_messages as u64;
        m.tool_results_cleared += c.effects.tool_results_cleared as u64;
        m.images_stripped += c.effects.images_stripped as u64;
        m.chars_truncated += c.effects.chars_truncated;
        m.api_validity_failures += u64::from(r.problems > 0);
        if c.compacted {
            *m.tiers.entry(c.tier.to_string()).or_insert(0) += 1;
        }
        let rp = &mut m.replay;
        rp.calls += r.replay_calls as u64;
        rp.compactions += r.replay_compactions as u64;
        rp.thrash_stopped += u64::from(r.replay_thrash_stopped);
        replay.absorb(&r.replay_totals());
        if let Some(s) = &r.replay_summarizer {
            rp.summarizer.get_or_insert_default().merge(s);
        }
        if let Some(s) = &c.summarizer {
            m.summarizer.get_or_insert_default().merge(&s.to_use());
        }
    }
    savings.sort_by(f64::total_cmp);
    m.saved_pct = saved_pct(m.tokens_before, m.tokens_after);
    m.saved_pct_p50 = percentile(&savings, 50.0);
    m.saved_pct_p90 = percentile(&savings, 90.0);
    m.anchor_retention_pct = pct(m.anchors_retained, m.anchors_found);
    m.user_messages_kept_whole_pct = pct(m.user_messages_kept_whole, m.user_messages_summarized);
    m.replay.set_totals(&replay);
    m
}

/// Builds `summary.json` from every row.
pub fn summarize(rows: &[ReportRow], counter: &str, window: u64, threshold: u64) -> CorpusSummary {
    let mut s = CorpusSummary {
        counter: counter.to_string(),
        window,
        threshold,
        ..CorpusSummary::default()
    };
    s.sessions = rows.iter().filter(|r| r.compaction.mode == "none").count() as u64;
    let mut windows: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.compaction.mode == "none") {
        if let (Some(w), Some(t)) = (r.window, r.threshold) {
            *windows.entry((w, t)).or_default() += 1;
        }
    }
    s.windows = windows
        .into_iter()
        .map(|((window, threshold), sessions)| WindowSessions { window, threshold, sessions })
        .collect();
    for r in rows.iter().filter(|r| r.compaction.mode == "lean") {
        s.recorded_compactions.add_session(&r.compaction.source, &r.recorded_compactions);
    }
    for mode in REPORT_MODES {
        s.modes.insert(
            mode.to_string(),
            summarize_mode(rows.iter().filter(|r| r.compaction.mode == mode)),
        );
    }
    let mut formats: Vec<&str> = rows.iter().map(|r| r.compaction.format).collect();
    formats.sort_unstable();
    formats.dedup();
    for f in formats {
        let per: BTreeMap<String, ModeSummary> = REPORT_MODES
            .iter()
            .map(|mode| {
                let it =
                    rows.iter().filter(|r| r.compaction.mode == *mode && r.compaction.format == f);
                (mode.to_string(), summarize_mode(it))
            })
            .collect();
        s.by_format.insert(f.to_string(), per);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(percentile(&v, 50.0), 20.0);
        assert_eq!(percentile(&v, 90.0), 40.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn pct_of_nothing_is_not_applicable() {
        assert_eq!(pct(0, 0), None);
        assert_eq!(pct(1, 3), Some(33.33));
        assert_eq!(pct(0, 3), Some(0.0));
    }
}
