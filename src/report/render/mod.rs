//! Renderers: report rows and corpus figures as CSV, Markdown and a
//! self-contained HTML page with SVG charts (`charts.rs`, no JavaScript).
//! Pure functions from data to text; the command writes the files.

mod charts;
mod html;

pub use html::html;

use super::aggregate::{CorpusSummary, ModeSummary, REPORT_MODES};
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
    crate::policy::tool_families::thousands(v)
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

/// The tables a person reads first, as (title, header, rows).
fn tables(s: &CorpusSummary) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let (Some(legacy), Some(lean)) = (mode(s, "legacy"), mode(s, "lean")) else { return out };
    let row = |label: &str, a: String, b: String| vec![label.to_string(), a, b];
    out.push((
        "Legacy vs lean".to_string(),
        vec!["figure".into(), "legacy".into(), "lean".into()],
        vec![
            row(
                "tokens after (of before)",
                format!("{} of {}", n(legacy.tokens_after), n(legacy.tokens_before)),
                format!("{} of {}", n(lean.tokens_after), n(lean.tokens_before)),
            ),
            row("saved", format!("{:.1}%", legacy.saved_pct), format!("{:.1}%", lean.saved_pct)),
            row(
                "saved per session, median / p90",
                format!("{:.1}% / {:.1}%", legacy.saved_pct_p50, legacy.saved_pct_p90),
                format!("{:.1}% / {:.1}%", lean.saved_pct_p50, lean.saved_pct_p90),
            ),
            row(
                "head / summary / tail tokens",
                format!(
                    "{} / {} / {}",
                    n(legacy.head_tokens),
                    n(legacy.summary_tokens),
                    n(legacy.tail_tokens)
                ),
                format!(
                    "{} / {} / {}",
                    n(lean.head_tokens),
                    n(lean.summary_tokens),
                    n(lean.tail_tokens)
                ),
            ),
            row(
                "anchors retained",
                format!(
                    "{} ({} of {})",
                    share(legacy.anchor_retention_pct),
                    n(legacy.anchors_retained),
                    n(legacy.anchors_found)
                ),
                format!(
                    "{} ({} of {})",
                    share(lean.anchor_retention_pct),
                    n(lean.anchors_retained),
                    n(lean.anchors_found)
                ),
            ),
            row(
                "user messages kept whole",
                of(legacy.user_messages_kept_whole, legacy.user_messages_summarized, " of "),
                of(lean.user_messages_kept_whole, lean.user_messages_summarized, " of "),
            ),
            row(
                "replay: input tokens billed",
                format!(
                    "{} ({:.1}% saved)",
                    n(legacy.replay.billed_live),
                    legacy.replay.billed_saved_pct
                ),
                format!(
                    "{} ({:.1}% saved)",
                    n(lean.replay.billed_live),
                    lean.replay.billed_saved_pct
                ),
            ),
            row(
                "replay: peak request",
                n(legacy.replay.peak_live_max),
                n(lean.replay.peak_live_max),
            ),
            row(
                "replay: compactions (stopped as ineffective)",
                format!("{} ({})", n(legacy.replay.compactions), legacy.replay.thrash_stopped),
                format!("{} ({})", n(lean.replay.compactions), lean.replay.thrash_stopped),
            ),
            row(
                "API-validity failures",
                n(legacy.api_validity_failures),
                n(lean.api_validity_failures),
            ),
        ],
    ));
    let mut all = Vec::new();
    for name in REPORT_MODES {
        let Some(m) = mode(s, name) else { continue };
        all.push(vec![
            name.to_string(),
            format!("{}/{}", m.compacted, m.sessions),
            format!("{} → {}", n(m.tokens_before), n(m.tokens_after)),
            format!("{:.1}%", m.saved_pct),
            share(m.anchor_retention_pct),
            of(m.user_messages_kept_whole, m.user_messages_summarized, "/"),
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
            "tokens",
            "saved",
            "anchors kept",
            "users whole",
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
            "legacy saved",
            "lean saved",
            "legacy anchors",
            "lean anchors",
            "billed legacy → lean",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect(),
        per,
    ));
    out
}

fn intro(s: &CorpusSummary) -> String {
    let rejected = if s.rejected.total > 0 {
        let kinds: Vec<String> =
            s.rejected.by_kind.iter().map(|(k, c)| format!("{} {k}", n(*c))).collect();
        format!(" {} records rejected ({}).", n(s.rejected.total), kinds.join(", "))
    } else {
        String::new()
    };
    format!(
        "{} sessions; window {} tokens, trigger {} tokens, counter {}. Savings and anchors are over \
         compacted sessions; replay walks every session call by call.{rejected}",
        n(s.sessions),
        n(s.window),
        n(s.threshold),
        s.counter
    )
}

/// `report.md`.
pub fn markdown(s: &CorpusSummary) -> String {
    let mut out = String::from("# compactor report\n\n");
    out.push_str(&intro(s));
    out.push_str("\n\n");
    for (title, header, rows) in tables(s) {
        let _ = writeln!(out, "## {title}\n");
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
        for r in rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        out.push('\n');
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_flattens_and_quotes() {
        let rows = vec![
            json!({"a": 1, "b": {"c": "x,y"}, "d": [1, 2], "e": null}),
            json!({"a": 2, "b": {"c": "q\"z"}, "d": [], "e": "w"}),
        ];
        assert_eq!(csv(&rows), "a,b.c,d,e\n1,\"x,y\",\"[1,2]\",\n2,\"q\"\"z\",[],w\n");
    }
}
