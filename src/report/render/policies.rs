//! `report --policies`' section: its table (report.md and report.html show
//! the same cells) and two charts (SVG): billed input and anchor retention,
//! a horizontal bar per policy (the figures: [`PolicySummary`]).

use super::{esc, share};
use crate::figures::{pct, thousands};
use crate::report::policies::PolicySummary;

/// File names of the two charts, beside report.md.
pub const BILLED_CHART: &str = "policies-billed.svg";
pub const RETENTION_CHART: &str = "policies-retention.svg";

/// The table of the policies section: a header and one row per policy
/// (report.md and report.html show the same cells). The cost column is
/// there when the report was priced (`--prices`).
pub fn policy_table(policies: &[(String, PolicySummary)]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut cats: Vec<&str> =
        policies.iter().flat_map(|(_, p)| p.retention.keys().map(String::as_str)).collect();
    cats.sort_unstable();
    cats.dedup();
    let priced = policies.iter().any(|(_, p)| p.cost_usd.is_some() || p.unpriced > 0);
    let mut header: Vec<String> = [
        "policy",
        "calls",
        "compactions",
        "peak context",
        "billed input",
        "cache reads",
        "cache writes",
    ]
    .map(String::from)
    .to_vec();
    if priced {
        header.push("cost ($)".into());
    }
    header.extend(["requests over trigger", "anchors retained"].map(String::from));
    header.extend(cats.iter().map(|c| c.to_string()));
    let rows = policies
        .iter()
        .map(|(name, p)| {
            let mut row = vec![
                name.clone(),
                thousands(p.calls),
                thousands(p.compactions),
                thousands(p.peak),
                thousands(p.billed),
                thousands(p.cache_read),
                thousands(p.cache_write),
            ];
            if priced {
                row.push(p.cost_usd.map_or_else(|| "n/a".to_string(), dollars));
            }
            row.push(thousands(p.over_trigger));
            row.push(share(p.retention_pct()));
            for c in &cats {
                row.push(share(p.retention.get(*c).and_then(|(f, k)| pct(*k, *f))));
            }
            row
        })
        .collect();
    (header, rows)
}

/// Dollars with cents and thousands separators: `1,234.56`.
fn dollars(v: f64) -> String {
    let cents = (v * 100.0).round().max(0.0) as u64;
    format!("{}.{:02}", thousands(cents / 100), cents % 100)
}

/// What the section says before its table (report.md and report.html).
pub const POLICIES_INTRO: &str = "Each policy replayed call by call on every session (`report --policies`; \
     docs/policies.md). The agents' summaries are our deterministic stand-in under their \
     headings. Cost: every call of the priced sessions at its log's model (`--prices`).";

/// The report.md section: the table, and the charts by file name.
pub fn policies_markdown(policies: &[(String, PolicySummary)]) -> String {
    let (header, rows) = policy_table(policies);
    let mut out = format!("\n## Policies\n\n{POLICIES_INTRO}\n\n| {} |\n|---|", header.join(" | "));
    out.push_str(&"---:|".repeat(header.len() - 1));
    out.push('\n');
    for r in rows {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out.push_str(&format!("\n![billed input by policy]({BILLED_CHART})\n\n![anchor retention by policy]({RETENTION_CHART})\n"));
    out
}

/// A horizontal bar chart (SVG) of `values`, one bar per label.
fn bars(title: &str, unit: &str, values: &[(String, f64)]) -> String {
    const ROW: f64 = 26.0;
    const LEFT: f64 = 210.0;
    const WIDTH: f64 = 760.0;
    let top = 40.0;
    let height = top + ROW * values.len() as f64 + 20.0;
    let most = values.iter().map(|(_, v)| *v).fold(0.0_f64, f64::max).max(1e-9);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <text x=\"10\" y=\"22\" font-size=\"15\">{}</text>\n",
        esc(title)
    );
    let span = WIDTH - LEFT - 120.0;
    for (k, (label, v)) in values.iter().enumerate() {
        let y = top + ROW * k as f64;
        let w = (v / most * span).max(0.0);
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n<rect x=\"{LEFT}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"#4c78a8\"/>\n<text x=\"{:.1}\" y=\"{}\">{}</text>\n",
            LEFT - 8.0,
            y + 16.0,
            esc(label),
            y + 4.0,
            ROW - 8.0,
            LEFT + w + 6.0,
            y + 16.0,
            esc(&format_value(*v, unit)),
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

fn format_value(v: f64, unit: &str) -> String {
    if unit == "%" { format!("{v:.1}%") } else { format!("{} {unit}", thousands(v.round() as u64)) }
}

/// The two charts: billed input, and anchor retention, by policy.
pub fn policy_charts(policies: &[(String, PolicySummary)]) -> (String, String) {
    let billed: Vec<(String, f64)> =
        policies.iter().map(|(n, p)| (n.clone(), p.billed as f64)).collect();
    let kept: Vec<(String, f64)> =
        policies.iter().map(|(n, p)| (n.clone(), p.retention_pct().unwrap_or(0.0))).collect();
    (
        bars("Billed input tokens by policy (replay, every call)", "tokens", &billed),
        bars("Anchors retained by policy (one compaction of each session)", "%", &kept),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charts_have_a_bar_per_policy_and_its_figure() {
        let retention = [("path".to_string(), (4, 2))].into_iter().collect();
        let (billed, kept) = policy_charts(&[
            ("lean".into(), PolicySummary { billed: 1_000, retention, ..Default::default() }),
            ("co<dex".into(), PolicySummary { billed: 500, ..Default::default() }),
        ]);
        assert_eq!(billed.matches("<rect").count(), 2);
        assert!(billed.contains(">1,000 tokens<") && kept.contains(">50.0%<"));
        assert!(billed.contains(">co&lt;dex<"), "{billed}");
    }

    #[test]
    fn the_section_has_a_row_per_policy() {
        let mut a = PolicySummary { calls: 3, billed: 1_000, ..Default::default() };
        a.retention.insert("path".into(), (4, 2));
        let b = PolicySummary { calls: 3, billed: 500, ..Default::default() };
        let rows = vec![("lean".to_string(), a), ("codex".to_string(), b)];
        let md = policies_markdown(&rows);
        assert!(md.contains("| lean | 3 | 0 | 0 | 1,000 | 0 | 0 | 0 | 50.0% | 50.0% |"), "{md}");
        assert!(md.contains("| codex | 3 | 0 | 0 | 500 | 0 | 0 | 0 | n/a | n/a |"), "{md}");
    }
}
