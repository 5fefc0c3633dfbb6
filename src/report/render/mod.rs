//! Renderers: report rows and corpus figures as CSV, Markdown and a
//! self-contained HTML page with SVG charts (`charts.rs`, no JavaScript).
//! Pure functions from data to text; the command writes the files.

mod charts;
mod html;
mod policies;
mod recorded;

pub use html::html;
pub use policies::{
    BILLED_CHART, POLICIES_INTRO, RETENTION_CHART, policies_markdown, policy_charts, policy_table,
};

use super::aggregate::{CorpusSummary, ModeSummary, REPORT_MODES, WindowSessions};
use crate::replay::Replay;
use serde_json::{Map, Value};
use std::fmt::Write;

/// Per-call request sizes of one session under one mode, for the charts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    pub source: String,
    pub mode: String,
    pub threshold: u64,
    /// The size the trigger compared before each call ([`crate::replay::Call::trigger_tokens`]).
    pub tokens: Vec<u64>,
    /// Of those calls, how many the log recorded the provider's prompt size for
    /// (the others are our own count).
    #[serde(default)]
    pub provider_calls: usize,
    /// The replay stopped compacting (two compactions in a row left the
    /// request over the trigger: the thrash guard) at this call, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
    /// The trigger compared Codex's measure, not the prompt
    /// ([`crate::policy::spec::Measure::LastTotal`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_total: bool,
}

impl Series {
    /// The series of one replay: per call, the size its trigger compared.
    pub fn from_replay(source: &str, mode: &str, r: &Replay) -> Series {
        Series {
            source: source.to_string(),
            mode: mode.to_string(),
            threshold: r.threshold,
            tokens: r.calls.iter().map(|c| c.trigger_tokens()).collect(),
            provider_calls: r.calls.iter().filter(|c| c.provider_tokens.is_some()).count(),
            stopped_at: r
                .compactions
                .last()
                .filter(|_| r.thrash_stopped)
                .map(|c| c.before_call + 1),
            last_total: r.calls.iter().any(|c| c.measure.is_some()),
        }
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        Value::Null => out.push((prefix.to_string(), String::new())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Array(_) => out.push((prefix.to_string(), v.to_string())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Rows (JSON objects) as CSV: columns from the first row, nested keys dotted.
pub fn csv(rows: &[Value]) -> String {
    let mut out = String::new();
    let Some(first) = rows.first() else { return out };
    let mut cols = Vec::new();
    flatten("", first, &mut cols);
    let header: Vec<String> = cols.iter().map(|(k, _)| csv_field(k)).collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for row in rows {
        let mut cells = Vec::new();
        flatten("", row, &mut cells);
        let map: Map<String, Value> =
            cells.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        let line: Vec<String> = cols
            .iter()
            .map(|(k, _)| csv_field(map.get(k).and_then(Value::as_str).unwrap_or("")))
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

fn n(v: u64) -> String {
    crate::figures::thousands(v)
}

/// A share to one decimal, or `n/a` when it has no denominator.
fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |p| format!("{p:.1}%"))
}

/// `kept of whole`, or `n/a` when there is nothing to count.
fn of(kept: u64, whole: u64, sep: &str) -> String {
    if whole == 0 { "n/a".to_string() } else { format!("{}{sep}{}", n(kept), n(whole)) }
}

fn mode<'a>(s: &'a CorpusSummary, name: &str) -> Option<&'a ModeSummary> {
    s.modes.get(name)
}

/// `whole of all`: the same denominator for every mode (the sessions' user
/// messages), or `n/a` when there are none.
fn users_whole(m: &ModeSummary, sep: &str) -> String {
    of(m.user_messages_whole(), m.user_messages, sep)
}

/// The tables a person reads first, as (title, header, rows). Each label
/// says what its figure is over: all sessions, or the compacted ones.
fn tables(s: &CorpusSummary) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let (Some(legacy), Some(lean)) = (mode(s, "legacy"), mode(s, "lean")) else { return out };
    let row = |label: &str, a: String, b: String| vec![label.to_string(), a, b];
    let both = |f: &dyn Fn(&ModeSummary) -> String| (f(legacy), f(lean));
    let pair = |label: &str, (a, b): (String, String)| row(label, a, b);
    out.push((
        "Legacy vs lean".to_string(),
        vec!["figure".into(), "legacy".into(), "lean".into()],
        vec![
            pair(
                "tokens after (of before), all sessions",
                both(&|m| format!("{} of {}", n(m.tokens_after), n(m.tokens_before))),
            ),
            pair("saved, of all sessions' tokens", both(&|m| format!("{:.1}%", m.saved_pct))),
            pair(
                "saved per compacted session, median / p90",
                both(&|m| format!("{:.1}% / {:.1}%", m.saved_pct_p50, m.saved_pct_p90)),
            ),
            pair(
                "compacted sessions",
                both(&|m| format!("{} of {}", n(m.compacted), n(m.sessions))),
            ),
            pair(
                "head / summary / tail tokens",
                both(&|m| {
                    format!("{} / {} / {}", n(m.head_tokens), n(m.summary_tokens), n(m.tail_tokens))
                }),
            ),
            pair(
                "anchors retained, compacted sessions",
                both(&|m| {
                    format!(
                        "{} ({} of {})",
                        share(m.anchor_retention_pct),
                        n(m.anchors_retained),
                        n(m.anchors_found)
                    )
                }),
            ),
            pair("user messages kept whole, of all", both(&|m| users_whole(m, " of "))),
            pair(
                "user messages summarized (quoted whole)",
                both(&|m| {
                    format!("{} ({})", n(m.user_messages_summarized), n(m.user_messages_kept_whole))
                }),
            ),
            pair(
                "replay: input tokens billed",
                both(&|m| {
                    format!("{} ({:.1}% saved)", n(m.replay.billed_live), m.replay.billed_saved_pct)
                }),
            ),
            pair("replay: peak request", both(&|m| n(m.replay.peak_live_max))),
            pair(
                "replay: compactions (sessions stopped as ineffective)",
                both(&|m| format!("{} ({})", n(m.replay.compactions), n(m.replay.thrash_stopped))),
            ),
            pair("API-validity failures", both(&|m| n(m.api_validity_failures))),
        ],
    ));
    let mut all = Vec::new();
    for name in REPORT_MODES {
        let Some(m) = mode(s, name) else { continue };
        all.push(vec![
            name.to_string(),
            format!("{}/{}", n(m.compacted), n(m.sessions)),
            format!("{} → {}", n(m.tokens_before), n(m.tokens_after)),
            format!("{:.1}%", m.saved_pct),
            share(m.anchor_retention_pct),
            users_whole(m, "/"),
            n(m.tool_results_cleared),
            n(m.images_stripped),
            format!("{} → {}", n(m.replay.billed_original), n(m.replay.billed_live)),
            format!("{} → {}", n(m.replay.cache_read_original), n(m.replay.cache_read_live)),
            n(m.api_validity_failures),
        ]);
    }
    out.push((
        "All modes".to_string(),
        [
            "mode",
            "compacted",
            "tokens, all sessions",
            "saved, all sessions",
            "anchors kept, compacted",
            "users whole, of all",
            "results cleared",
            "images stripped",
            "replay billed",
            "replay cache reads",
            "failures",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect(),
        all,
    ));
    let mut per = Vec::new();
    for (f, modes) in &s.by_format {
        let (Some(l), Some(x)) = (modes.get("legacy"), modes.get("lean")) else { continue };
        per.push(vec![
            f.clone(),
            n(x.sessions),
            format!("{:.1}%", l.saved_pct),
            format!("{:.1}%", x.saved_pct),
            share(l.anchor_retention_pct),
            share(x.anchor_retention_pct),
            format!("{} → {}", n(l.replay.billed_live), n(x.replay.billed_live)),
        ]);
    }
    out.push((
        "Per format".to_string(),
        [
            "format",
            "sessions",
            "legacy saved, all",
            "lean saved, all",
            "legacy anchors, compacted",
            "lean anchors, compacted",
            "billed legacy → lean",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect(),
        per,
    ));
    out
}

/// The windows of the run: one, or per session under `--model auto`
/// (`window per session (200K: 46, 400K: 3)`).
fn windows(s: &CorpusSummary) -> String {
    match s.windows.as_slice() {
        [] | [_] => format!("window {} tokens, trigger {} tokens", n(s.window), n(s.threshold)),
        many => {
            let per = |f: fn(&WindowSessions) -> u64| -> String {
                many.iter()
                    .map(|w| format!("{}: {}", charts::tokens_label(f(w)), n(w.sessions)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "window per session ({}), trigger per session ({})",
                per(|w| w.window),
                per(|w| w.threshold)
            )
        }
    }
}

fn intro(s: &CorpusSummary) -> String {
    let rejected = if s.rejected.total > 0 {
        let kinds: Vec<String> =
            s.rejected.by_kind.iter().map(|(k, c)| format!("{} {k}", n(*c))).collect();
        let records = if s.rejected.total == 1 { "record" } else { "records" };
        format!(" {} {records} rejected ({}).", n(s.rejected.total), kinds.join(", "))
    } else {
        String::new()
    };
    format!(
        "{} {}; {}, counter {}. \"Saved\" is of all sessions' tokens (a session left under \
         the trigger counts, unchanged); the per-session median and p90 and the anchors are \
         over compacted sessions; user messages kept whole are of all the sessions' user \
         messages, the same count for every mode. Replay walks every session call by call.{rejected}",
        n(s.sessions),
        if s.sessions == 1 { "session" } else { "sessions" },
        windows(s),
        s.counter
    )
}

/// `report.md`.
pub fn markdown(s: &CorpusSummary) -> String {
    let mut out = String::from("# compactor report\n\n");
    out.push_str(&intro(s));
    out.push_str("\n\n");
    for (title, header, rows) in tables(s) {
        md_table(&mut out, &title, &header, &rows);
    }
    let t = &s.recorded_compactions;
    let recorded = recorded::tables(t);
    if recorded.is_empty() {
        let _ = writeln!(out, "## Recorded compactions\n\n{}\n", recorded::intro(t));
    }
    for (i, (title, header, rows)) in recorded.iter().enumerate() {
        md_table(&mut out, title, header, rows);
        if i == 0 {
            let _ = writeln!(out, "{}\n", recorded::intro(t));
        }
    }
    out
}

fn md_table(out: &mut String, title: &str, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "## {title}\n");
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_users(user_messages: u64, summarized: u64, whole: u64) -> ModeSummary {
        ModeSummary {
            user_messages,
            user_messages_summarized: summarized,
            user_messages_kept_whole: whole,
            ..ModeSummary::default()
        }
    }

    /// Issue 41, point 4: several windows are said per session; one is said once.
    #[test]
    fn the_header_says_each_window_per_session() {
        let mut s = CorpusSummary {
            sessions: 5,
            window: 200_000,
            threshold: 150_000,
            counter: "o200k".into(),
            ..CorpusSummary::default()
        };
        assert!(intro(&s).starts_with(
            "5 sessions; window 200,000 tokens, trigger 150,000 tokens, counter o200k. \"Saved\" \
             is of all sessions' tokens"
        ));
        s.windows = vec![
            WindowSessions { window: 200_000, threshold: 150_000, sessions: 3 },
            WindowSessions { window: 400_000, threshold: 300_000, sessions: 2 },
        ];
        assert!(intro(&s).starts_with(
            "5 sessions; window per session (200K: 3, 400K: 2), trigger per session (150K: 3, \
             300K: 2), counter o200k."
        ));
    }

    /// Issue 41, point 4: "users whole" sets every mode against the same count.
    #[test]
    fn users_whole_has_one_denominator_for_every_mode() {
        let mut s = CorpusSummary::default();
        s.modes.insert("none".into(), with_users(13, 0, 0));
        s.modes.insert("legacy".into(), with_users(13, 8, 0));
        s.modes.insert("lean".into(), with_users(13, 13, 10));
        s.modes.insert("tiered".into(), with_users(13, 0, 0));
        let md = markdown(&s);
        assert!(md.contains("| user messages kept whole, of all | 5 of 13 | 10 of 13 |"), "{md}");
        assert!(
            md.contains("| user messages summarized (quoted whole) | 8 (0) | 13 (10) |"),
            "{md}"
        );
        let cells: Vec<&str> = md
            .lines()
            .filter(|l| {
                ["| none |", "| legacy |", "| lean |", "| tiered |"]
                    .iter()
                    .any(|m| l.starts_with(m))
            })
            .map(|l| l.split(" | ").nth(5).unwrap())
            .collect();
        assert_eq!(cells, ["13/13", "5/13", "10/13", "13/13"]);
        // Reports made before the count: n/a, not 0 of 0.
        assert_eq!(users_whole(&with_users(0, 3, 1), "/"), "n/a");
    }

    #[test]
    fn csv_flattens_and_quotes() {
        let rows = vec![
            json!({"a": 1, "b": {"c": "x,y"}, "d": [1, 2], "e": null}),
            json!({"a": 2, "b": {"c": "q\"z"}, "d": [], "e": "w"}),
        ];
        assert_eq!(csv(&rows), "a,b.c,d,e\n1,\"x,y\",\"[1,2]\",\n2,\"q\"\"z\",[],w\n");
    }
}
