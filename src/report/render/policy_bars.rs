//! `report --policies`' two charts (SVG): billed input and anchor
//! retention, a horizontal bar per policy (the figures: [`PolicySummary`]).

use super::esc;
use crate::figures::thousands;
use crate::report::policies::PolicySummary;

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
}
