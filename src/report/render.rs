//! Renderers: report rows and corpus figures as CSV, Markdown and a
//! self-contained HTML page with SVG charts drawn here (no JavaScript).
//! Pure functions from data to text; the command writes the files.

use super::aggregate::{CorpusSummary, ModeSummary, REPORT_MODES};
use serde_json::{Map, Value};
use std::fmt::Write;

/// Per-call request sizes of one session under one mode, for the charts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    pub source: String,
    pub mode: String,
    pub threshold: u64,
    pub tokens: Vec<u64>,
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

const COLORS: [(&str, &str); 4] =
    [("none", "#888888"), ("legacy", "#d95f02"), ("lean", "#1b9e77"), ("tiered", "#7570b3")];

fn color(mode: &str) -> &'static str {
    COLORS.iter().find(|(m, _)| *m == mode).map_or("#000000", |(_, c)| c)
}

/// A line chart of request size per call, one line per mode, with the trigger.
fn line_chart(title: &str, series: &[&Series]) -> String {
    let (w, h, pad) = (640.0_f64, 260.0_f64, 48.0_f64);
    let max_x = series.iter().map(|s| s.tokens.len()).max().unwrap_or(1).max(2) as f64 - 1.0;
    let threshold = series.first().map_or(0, |s| s.threshold);
    let max_y = series
        .iter()
        .flat_map(|s| s.tokens.iter().copied())
        .chain([threshold])
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.05;
    let x = |i: usize| pad + (i as f64 / max_x) * (w - 2.0 * pad);
    let y = |v: u64| h - pad - (v as f64 / max_y) * (h - 2.0 * pad);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(
        svg,
        r#"<text x="{pad}" y="18" font-size="13" font-family="sans-serif">{}</text>"#,
        esc(title)
    );
    let _ = write!(
        svg,
        r##"<line x1="{pad}" y1="{0}" x2="{1}" y2="{0}" stroke="#333"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{0}" stroke="#333"/>"##,
        h - pad,
        w - pad
    );
    let ty = y(threshold);
    let _ = write!(
        svg,
        r##"<line x1="{pad}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#c00" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" font-size="10" fill="#c00" font-family="sans-serif" text-anchor="end">trigger {}</text>"##,
        w - pad,
        w - pad,
        ty - 4.0,
        n(threshold)
    );
    let _ = write!(
        svg,
        r#"<text x="4" y="{:.1}" font-size="10" font-family="sans-serif">{}</text><text x="4" y="{:.1}" font-size="10" font-family="sans-serif">0</text>"#,
        pad,
        n(max_y as u64),
        h - pad
    );
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="10" font-family="sans-serif" text-anchor="end">call {}</text>"#,
        w - pad,
        h - pad + 14.0,
        max_x as u64 + 1
    );
    for (k, s) in series.iter().enumerate() {
        let pts: Vec<String> =
            s.tokens.iter().enumerate().map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v))).collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.5" stroke-opacity="0.85" points="{}"/>"#,
            color(&s.mode),
            pts.join(" ")
        );
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="{}" font-family="sans-serif">{}</text>"#,
            pad + 8.0 + 70.0 * k as f64,
            pad - 8.0,
            color(&s.mode),
            esc(&s.mode)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A histogram of per-session savings (10-point bins) for each mode.
fn histogram(savings: &[(String, Vec<f64>)]) -> String {
    let (w, h, pad) = (640.0_f64, 240.0_f64, 40.0_f64);
    let bins = 10usize;
    let counts: Vec<(String, Vec<u64>)> = savings
        .iter()
        .map(|(m, v)| {
            let mut c = vec![0u64; bins];
            for s in v {
                c[((s.max(0.0) / 10.0) as usize).min(bins - 1)] += 1;
            }
            (m.clone(), c)
        })
        .collect();
    let max = counts.iter().flat_map(|(_, c)| c.iter().copied()).max().unwrap_or(1).max(1) as f64;
    let group = (w - 2.0 * pad) / bins as f64;
    let bar = group / (counts.len().max(1) as f64 + 1.0);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="savings distribution">"#
    );
    let _ = write!(
        svg,
        r#"<text x="{pad}" y="18" font-size="13" font-family="sans-serif">Sessions by tokens saved (%)</text>"#
    );
    let _ = write!(
        svg,
        r##"<line x1="{pad}" y1="{0}" x2="{1}" y2="{0}" stroke="#333"/>"##,
        h - pad,
        w - pad
    );
    for b in 0..bins {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="10" font-family="sans-serif" text-anchor="middle">{}</text>"#,
            pad + group * (b as f64 + 0.5),
            h - pad + 14.0,
            b * 10
        );
    }
    for (k, (m, c)) in counts.iter().enumerate() {
        for (b, v) in c.iter().enumerate() {
            let bh = (*v as f64 / max) * (h - 2.0 * pad - 10.0);
            let bx = pad + group * b as f64 + bar * (k as f64 + 0.5);
            let _ = write!(
                svg,
                r#"<rect x="{bx:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}" fill="{}"><title>{} {}-{}%: {v}</title></rect>"#,
                h - pad - bh,
                bar * 0.9,
                color(m),
                esc(m),
                b * 10,
                b * 10 + 10
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="34" font-size="11" fill="{}" font-family="sans-serif">{}</text>"#,
            pad + 8.0 + 70.0 * k as f64,
            color(m),
            esc(m)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// `report.html`: the tables and the charts, self-contained.
pub fn html(s: &CorpusSummary, series: &[Series], savings: &[(String, Vec<f64>)]) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>compactor report</title>\n<style>body{font-family:sans-serif;max-width:980px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0;border:1px solid #eee}</style></head><body>\n<h1>compactor report</h1>\n",
    );
    let _ = writeln!(out, "<p>{}</p>", esc(&intro(s)));
    for (title, header, rows) in tables(s) {
        let _ = writeln!(
            out,
            "<h2>{}</h2><table><tr>{}</tr>",
            esc(&title),
            header.iter().map(|h| format!("<th>{}</th>", esc(h))).collect::<String>()
        );
        for r in rows {
            let _ = writeln!(
                out,
                "<tr>{}</tr>",
                r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>()
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("<h2>Request size per call</h2>\n<p>The longest sessions, replayed under each mode, against the trigger.</p>\n");
    let mut sources: Vec<&str> = series.iter().map(|s| s.source.as_str()).collect();
    sources.dedup();
    for src in sources {
        let of: Vec<&Series> = series.iter().filter(|s| s.source == src).collect();
        out.push_str(&line_chart(src, &of));
        out.push('\n');
    }
    out.push_str("<h2>Distribution of savings</h2>\n");
    out.push_str(&histogram(savings));
    out.push_str("\n</body></html>\n");
    out
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

    #[test]
    fn charts_are_self_contained_svg() {
        let s = Series {
            source: "a<b>".into(),
            mode: "lean".into(),
            threshold: 100,
            tokens: vec![10, 50, 120, 40],
        };
        let svg = line_chart(&s.source, &[&s]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("a&lt;b&gt;"));
        assert!(svg.contains("trigger 100"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        let hist =
            histogram(&[("lean".into(), vec![5.0, 95.0, 100.0]), ("legacy".into(), vec![55.0])]);
        assert_eq!(hist.matches("<rect").count(), 20);
        assert!(hist.contains("<title>lean 90-100%: 2</title>"));
    }
}
