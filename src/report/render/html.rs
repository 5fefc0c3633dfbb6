//! `report.html`: the tables and the charts in one self-contained page (no
//! JavaScript, no external resources) that fits a phone screen: tables scroll
//! sideways inside their own box, with their first column (the labels) kept in
//! view and a shadow on the side where more columns wait (drawn by CSS
//! backgrounds that scroll with the content, so no script is needed); charts
//! take the width of the page. `scripts/screenshot_report.sh` checks in
//! Chromium that every table's last column can be scrolled to, with the cue
//! shown, at 1100 and 390 px.

use super::{Series, charts, esc, intro, n, recorded, tables};
use crate::report::aggregate::CorpusSummary;
use crate::report::policies::PolicySummary;
use std::fmt::Write;

const STYLE: &str = "*{box-sizing:border-box}\
body{font-family:sans-serif;max-width:1180px;margin:0 auto;padding:0.5em 1em 2em;color:#222;line-height:1.4}\
h1,h2,p,figcaption{overflow-wrap:anywhere}\
p{max-width:980px}\
.scroll{max-width:100%;overflow-x:auto;margin:0.5em 0 1em;\
background:linear-gradient(to left,#fff 40%,rgba(255,255,255,0)) right/3em 100% no-repeat local,\
linear-gradient(to left,rgba(0,0,0,.22),rgba(0,0,0,0)) right/1em 100% no-repeat scroll}\
table{border-collapse:separate;border-spacing:0}\
td,th{border:1px solid #ccc;border-width:0 1px 1px 0;padding:4px 8px;text-align:right;white-space:nowrap;\
line-height:20px;vertical-align:top}\
tr:first-child>*{border-top-width:1px}\
th{white-space:normal;vertical-align:bottom;min-width:4em}\
td:first-child,th:first-child{text-align:left;position:sticky;left:0;z-index:1;background:#fff;\
border-left-width:1px;white-space:normal;overflow-wrap:anywhere;min-width:7em;max-width:40vw;box-shadow:2px 0 2px -1px rgba(0,0,0,.18)}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,420px),1fr));gap:0 1.5em}\
figure{margin:1em 0 1.5em;max-width:640px}\
svg{display:block;width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:0.9em;color:#555;margin-top:0.3em}";

/// Which size a session's chart plots, for its caption.
fn measured(of: &[&Series], counter: &str) -> String {
    let calls = of.first().map_or(0, |s| s.tokens.len());
    let provider = of.first().map_or(0, |s| s.provider_calls);
    if provider == 0 {
        format!("our {counter} count (the log records no prompt sizes)")
    } else if provider == calls {
        "the provider's recorded prompt size, less what compaction removed".to_string()
    } else {
        format!(
            "the provider's recorded prompt size (less what compaction removed) on {} of {} calls, \
             our {counter} count on the others",
            n(provider as u64),
            n(calls as u64)
        )
    }
}

/// Groups of modes whose lines are the same, e.g. "legacy = lean = tiered".
fn coinciding(of: &[&Series]) -> Vec<String> {
    let mut groups: Vec<Vec<&str>> = Vec::new();
    for (i, s) in of.iter().enumerate() {
        if of[..i].iter().any(|t| t.tokens == s.tokens) {
            continue;
        }
        let same: Vec<&str> =
            of[i..].iter().filter(|t| t.tokens == s.tokens).map(|t| t.mode.as_str()).collect();
        if same.len() > 1 {
            groups.push(same);
        }
    }
    groups.into_iter().map(|g| g.join(" = ")).collect()
}

fn figure(out: &mut String, svg: Result<String, String>, caption: &str) {
    let svg = svg.unwrap_or_else(|e| format!("<p>chart not drawn: {}</p>", esc(&e)));
    let _ = writeln!(out, "<figure>{svg}<figcaption>{}</figcaption></figure>", esc(caption));
}

/// `report.html`: the tables and the charts, self-contained.
///
/// `by_policy`: `report --policies`' rows in the order asked for (its own
/// section, table and two charts; empty without it).
pub fn html(
    s: &CorpusSummary,
    series: &[Series],
    savings: &[(String, Vec<f64>)],
    by_policy: &[(String, PolicySummary)],
) -> String {
    let mut out = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>compactor report</title>\n<style>{STYLE}</style></head><body>\n<h1>compactor report</h1>\n"
    );
    let _ = writeln!(out, "<p>{}</p>", esc(&intro(s)));
    for (title, header, rows) in tables(s) {
        html_table(&mut out, &title, &header, &rows);
    }
    out.push_str(
        "<h2>Request size per call</h2>\n<p>The longest sessions, replayed under each mode. Each \
         line is the request size the trigger compares before each call: the provider's recorded \
         prompt size where the log has it (less what our compactions removed), our own count \
         otherwise. The red dashed line is the trigger; a mode compacts where its line reaches \
         it.</p>\n",
    );
    out.push_str("<div class=\"charts\">\n");
    let mut sources: Vec<&str> = series.iter().map(|s| s.source.as_str()).collect();
    sources.dedup();
    for src in sources {
        let of: Vec<&Series> = series.iter().filter(|s| s.source == src).collect();
        let calls = of.first().map_or(0, |s| s.tokens.len());
        let mut caption =
            format!("{src}: {} calls. Plotted: {}.", n(calls as u64), measured(&of, &s.counter));
        let same = coinciding(&of);
        if !same.is_empty() {
            let _ = write!(caption, " Lines that coincide: {}.", same.join("; "));
        }
        let codex: Vec<&str> =
            of.iter().filter(|s| s.last_total).map(|s| s.mode.as_str()).collect();
        if !codex.is_empty() {
            let _ = write!(
                caption,
                " The {} line is Codex's own measure: the previous call's prompt (so measured) \
                 and output, plus Codex's estimate of its encrypted reasoning and of the tool \
                 outputs since (docs/policies.md).",
                codex.join(", ")
            );
        }
        if let Some(stopped) = charts::stopped_text(&of) {
            let _ = write!(
                caption,
                " Replay stopped compacting ({stopped}): two compactions in a row left the \
                 request over the trigger (the thrash guard), so from there that line grows \
                 with the session."
            );
        }
        figure(&mut out, charts::request_sizes(src, &of), &caption);
    }
    out.push_str("</div>\n<h2>Distribution of savings</h2>\n");
    let compacted: usize = savings.iter().map(|(_, v)| v.len()).sum();
    figure(
        &mut out,
        charts::savings_histogram(savings),
        &format!(
            "Compacted sessions by share of tokens saved, in 10-point bins ({} session-mode pairs).",
            n(compacted as u64)
        ),
    );
    if !by_policy.is_empty() {
        let (header, rows) = super::policy_table(by_policy);
        html_table(&mut out, "Policies", &header, &rows);
        let _ = writeln!(out, "<p>{}</p>", esc(super::POLICIES_INTRO));
        let (billed, kept) = super::policy_charts(by_policy);
        out.push_str("<div class=\"charts\">\n");
        figure(
            &mut out,
            Ok(billed),
            "Input tokens billed over every call of every session, by policy (replay).",
        );
        figure(
            &mut out,
            Ok(kept),
            "Share of the anchors still verbatim after one compaction of each session, by policy.",
        );
        out.push_str("</div>\n");
    }
    let t = &s.recorded_compactions;
    let recorded = recorded::tables(t);
    if recorded.is_empty() {
        let _ = writeln!(out, "<h2>Recorded compactions</h2>\n<p>{}</p>", esc(&recorded::intro(t)));
    }
    for (i, (title, header, rows)) in recorded.iter().enumerate() {
        html_table(&mut out, title, header, rows);
        if i == 0 {
            let _ = writeln!(out, "<p>{}</p>", esc(&recorded::intro(t)));
        }
    }
    let bars = recorded::bars(t);
    if !bars.is_empty() {
        figure(
            &mut out,
            charts::retention_bars(&bars),
            "Share of the anchors of the conversation before each compaction still verbatim \
             after it, by category: the agent's own compactions beside lean at the same points \
             (a category with nothing to keep has no bar).",
        );
    }
    out.push_str("</body></html>\n");
    out
}

fn html_table(out: &mut String, title: &str, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(
        out,
        "<h2>{}</h2><div class=\"scroll\"><table><tr>{}</tr>",
        esc(title),
        header.iter().map(|h| format!("<th>{}</th>", esc(h))).collect::<String>()
    );
    for r in rows {
        let _ = writeln!(
            out,
            "<tr>{}</tr>",
            r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>()
        );
    }
    out.push_str("</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(source: &str, mode: &str, tokens: &[u64], provider_calls: usize) -> Series {
        Series {
            source: source.into(),
            mode: mode.into(),
            threshold: 100,
            tokens: tokens.to_vec(),
            provider_calls,
            stopped_at: None,
            last_total: false,
        }
    }

    fn summary() -> CorpusSummary {
        CorpusSummary { counter: "o200k".into(), ..CorpusSummary::default() }
    }

    #[test]
    fn captions_say_what_is_plotted_and_which_lines_coincide() {
        let all = [
            series("a.jsonl:1", "none", &[10, 50, 120], 0),
            series("a.jsonl:1", "legacy", &[10, 50, 40], 0),
            series("a.jsonl:1", "lean", &[10, 50, 40], 0),
            series("b.jsonl:1", "none", &[10, 20, 30], 3),
            series("b.jsonl:1", "lean", &[10, 20, 30], 3),
            series("c.jsonl:1", "none", &[10, 20, 30, 40], 1),
            series("c.jsonl:1", "lean", &[10, 20, 30, 35], 1),
        ];
        let page = html(&summary(), &all, &[], &[]);
        assert_eq!(page.matches("<figure>").count(), 3 + 1, "three sessions and the histogram");
        assert!(page.contains(
            "a.jsonl:1: 3 calls. Plotted: our o200k count (the log records no prompt sizes). \
             Lines that coincide: legacy = lean."
        ));
        assert!(page.contains(
            "b.jsonl:1: 3 calls. Plotted: the provider's recorded prompt size, less what \
             compaction removed. Lines that coincide: none = lean.</figcaption>"
        ));
        // No line coincides: no note.
        assert!(page.contains(
            "c.jsonl:1: 4 calls. Plotted: the provider's recorded prompt size (less what \
             compaction removed) on 1 of 4 calls, our o200k count on the others.</figcaption>"
        ));
    }

    /// Issue 41, point 6: a replay that stopped compacting says so in its caption.
    #[test]
    fn a_stopped_replay_says_so_in_its_caption() {
        let mut lean = series("a.jsonl:1", "lean", &[10, 150, 160, 170], 0);
        lean.stopped_at = Some(3);
        let page = html(
            &summary(),
            &[series("a.jsonl:1", "none", &[10, 150, 160, 170], 0), lean],
            &[],
            &[],
        );
        assert!(page.contains(
            "Lines that coincide: none = lean. Replay stopped compacting (lean at call 3): two \
             compactions in a row left the request over the trigger (the thrash guard)"
        ));
        assert!(page.contains("stopped, ineffective twice: lean at call 3"));
    }

    /// A line of Codex's measure (`Measure::LastTotal`) is named as such; no
    /// note without one.
    #[test]
    fn a_line_of_codexs_measure_says_so_in_its_caption() {
        let mut codex = series("a.jsonl:1", "codex", &[10, 150, 40], 3);
        codex.last_total = true;
        let page =
            html(&summary(), &[series("a.jsonl:1", "none", &[10, 20, 30], 3), codex], &[], &[]);
        assert!(page.contains("The codex line is Codex's own measure: the previous call's prompt"));
        let page = html(&summary(), &[series("a.jsonl:1", "none", &[10, 20, 30], 3)], &[], &[]);
        assert!(!page.contains("Codex's own measure"));
    }

    #[test]
    fn the_page_is_built_for_a_narrow_screen() {
        let page = html(&summary(), &[series("a", "lean", &[1, 2], 0)], &[], &[]);
        assert!(page.contains(r#"<meta name="viewport" content="width=device-width"#));
        // Tables scroll inside their own box, with a shadow where more columns
        // wait and their labels kept in view (issue 41); charts take the
        // container's width. scripts/screenshot_report.sh checks it in Chromium.
        assert!(page.contains(".scroll{max-width:100%;overflow-x:auto"));
        assert!(page.contains("no-repeat local,") && page.contains("no-repeat scroll}"));
        assert!(
            page.contains("td:first-child,th:first-child{text-align:left;position:sticky;left:0")
        );
        assert!(page.contains("svg{display:block;width:100%;height:auto"));
        assert!(!page.contains("<svg width=\"4") && page.contains("<svg width=\"100%\""));
        assert!(!page.contains("<script"));
    }
}
