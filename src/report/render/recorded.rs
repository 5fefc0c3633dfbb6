//! The "Recorded compactions" section: the compactions the agents made
//! themselves (a log read `--history full`), each beside lean at the same
//! point, and their retention by category. Tables for `report.md` and
//! `report.html`; the chart is [`super::charts::retention_bars`].

use super::charts::BarGroup;
use super::{n, of};
use crate::report::recorded::{RecordedRow, RecordedTotals, Retention, SummaryKind};

/// The categories shown, in this order; others the rows hold follow.
const FIRST: [&str; 4] = ["paths", "touched_paths", "errors", "user_messages"];

/// A section's text: the sentence that introduces it, or says there is
/// nothing to show.
pub(super) fn intro(t: &RecordedTotals) -> String {
    if t.is_empty() {
        return "No session holds a compaction its agent made itself (Claude Code and Codex logs \
                record theirs; they are read with `--history full`, the default)."
            .to_string();
    }
    let unreadable = t.compactions - t.measurable;
    let encrypted = if unreadable == 0 {
        String::new()
    } else {
        format!(
            " {} of them {} an encrypted summary (Codex's remote compaction): not measurable, \
             so only {} kept messages are counted, never as 0% kept.",
            n(unreadable),
            if unreadable == 1 { "has" } else { "have" },
            if unreadable == 1 { "its" } else { "their" }
        )
    };
    format!(
        "{} {} the agents made themselves, in {} {}, each beside lean compacting the same \
         conversation at the same point. Kept: of the anchors of the conversation before the \
         compaction (paths, the paths the agent's own calls named, error lines, the user's own \
         messages, ...), how many appear verbatim in what was kept (the agent's summary and the \
         messages it kept; lean's output). Before and after: the provider's recorded prompt size, \
         and our count.{encrypted}",
        n(t.compactions),
        if t.compactions == 1 { "compaction" } else { "compactions" },
        n(t.sessions),
        if t.sessions == 1 { "session" } else { "sessions" },
    )
}

/// The categories of `t`, the usual ones first.
fn categories(t: &RecordedTotals) -> Vec<String> {
    let mut all: Vec<String> = FIRST.iter().map(|c| c.to_string()).collect();
    for r in [&t.agent, &t.lean, &t.agent_kept_messages] {
        for c in r.keys() {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
    }
    all
}

fn kept(r: &Retention, cat: &str) -> String {
    r.get(cat).map_or_else(|| "n/a".to_string(), |[k, o]| of(*k as u64, *o as u64, " of "))
}

fn maybe(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), n)
}

/// `kept/of` of one category, short enough for a phone's table cell.
fn short(r: &Retention, cat: &str) -> String {
    r.get(cat).map_or_else(|| "n/a".to_string(), |[k, o]| of(*k as u64, *o as u64, "/"))
}

/// The agent's figure for `cat` in one row: what its summary and kept
/// messages hold, or (summary encrypted, said in the summary column) what
/// its kept messages hold.
fn agent_cell(r: &RecordedRow, cat: &str) -> String {
    short(r.retained.as_ref().unwrap_or(&r.retained_in_kept), cat)
}

/// The section's tables as (title, header, rows): one row per compaction,
/// then retention by category.
pub(super) fn tables(t: &RecordedTotals) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    if t.is_empty() {
        return Vec::new();
    }
    let mut each = Vec::new();
    for e in &t.rows {
        let r = &e.row;
        each.push(vec![
            e.source.clone(),
            n(r.index as u64),
            r.timestamp.clone().unwrap_or_else(|| "-".into()),
            r.trigger.clone().unwrap_or_else(|| "-".into()),
            format!("{} / {}", maybe(r.tokens_before_provider), n(r.tokens_before)),
            format!("{} / {}", maybe(r.tokens_after_provider), n(r.tokens_after)),
            n(r.lean.tokens_after),
            match r.summary {
                SummaryKind::Text => format!("{} tok", maybe(r.summary_tokens)),
                SummaryKind::Encrypted => "encrypted: kept messages counted".to_string(),
                SummaryKind::Absent => "none".to_string(),
            },
            n(r.kept_messages as u64),
            agent_cell(r, "paths"),
            short(&r.lean.retained, "paths"),
            agent_cell(r, "errors"),
            short(&r.lean.retained, "errors"),
            agent_cell(r, "user_messages"),
            short(&r.lean.retained, "user_messages"),
        ]);
    }
    let header = [
        "session",
        "at message",
        "when",
        "trigger",
        "before: provider / ours",
        "after: provider / ours",
        "lean after (ours)",
        "agent's summary",
        "messages the agent kept",
        "paths kept: agent",
        "lean",
        "error lines kept: agent",
        "lean",
        "user messages kept: agent",
        "lean",
    ];
    // Columns of the readable compactions only when there are some.
    let readable = t.measurable > 0;
    let mut by_cat = Vec::new();
    for cat in categories(t) {
        let mut row = vec![cat.clone()];
        if readable {
            row.extend([kept(&t.agent, &cat), kept(&t.lean_at_measurable, &cat)]);
        }
        row.extend([kept(&t.agent_kept_messages, &cat), kept(&t.lean, &cat)]);
        by_cat.push(row);
    }
    let m = n(t.measurable);
    let all = n(t.compactions);
    let mut cat_header = vec!["category".to_string()];
    if readable {
        cat_header.extend([
            format!("agent: summary and kept messages ({m} readable)"),
            format!("lean at the same {m}"),
        ]);
    }
    cat_header
        .extend([format!("agent: kept messages alone (all {all})"), format!("lean at all {all}")]);
    vec![
        ("Recorded compactions".to_string(), header.iter().map(|h| h.to_string()).collect(), each),
        ("Recorded compactions: kept by category".to_string(), cat_header, by_cat),
    ]
}

/// Bars of the chart: (label, per category `[kept, of]`), the agent's beside
/// lean's over the same compactions.
pub(super) fn bars(t: &RecordedTotals) -> Vec<BarGroup> {
    let cats = categories(t);
    let pick = |r: &Retention| -> Vec<(String, [usize; 2])> {
        cats.iter().map(|c| (c.clone(), r.get(c).copied().unwrap_or([0, 0]))).collect()
    };
    let mut out = Vec::new();
    if t.measurable > 0 {
        out.push(("agent: summary + kept".to_string(), pick(&t.agent)));
        out.push(("lean, same points".to_string(), pick(&t.lean_at_measurable)));
    }
    if t.measurable < t.compactions {
        out.push(("agent: kept messages".to_string(), pick(&t.agent_kept_messages)));
        out.push(("lean, every point".to_string(), pick(&t.lean)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::recorded::LeanAtPoint;

    fn retention(pairs: &[(&str, [usize; 2])]) -> Retention {
        pairs.iter().map(|(c, v)| (c.to_string(), *v)).collect()
    }

    fn row(summary: SummaryKind, agent: Option<Retention>, in_kept: Retention) -> RecordedRow {
        RecordedRow {
            index: 650,
            timestamp: Some("2026-03-28T07:12:35Z".into()),
            trigger: None,
            tokens_before_provider: Some(182_469),
            tokens_before: 191_734,
            tokens_after_provider: Some(18_946),
            tokens_after: 11_075,
            summary,
            summary_tokens: None,
            kept_messages: 12,
            retained: agent,
            retained_in_kept: in_kept,
            lean: LeanAtPoint {
                tokens_after: 39_208,
                summary_tokens: 11_205,
                retained: retention(&[("paths", [177, 178]), ("errors", [14, 14])]),
            },
        }
    }

    #[test]
    fn no_recorded_compaction_is_one_sentence_and_no_table() {
        let t = RecordedTotals::default();
        assert!(intro(&t).starts_with("No session holds a compaction its agent made itself"));
        assert!(tables(&t).is_empty());
        assert!(bars(&t).is_empty());
    }

    /// An encrypted summary is said so, its kept messages counted, never 0%.
    #[test]
    fn an_encrypted_summary_is_not_measurable_and_says_what_its_kept_messages_hold() {
        let mut t = RecordedTotals::default();
        let kept = retention(&[("paths", [14, 178]), ("errors", [0, 14])]);
        t.add_session("a.jsonl:1", &[row(SummaryKind::Encrypted, None, kept)]);
        assert!(intro(&t).contains(
            "1 of them has an encrypted summary (Codex's remote compaction): not measurable"
        ));
        let tables = tables(&t);
        let first = &tables[0].2[0];
        assert_eq!(first[4], "182,469 / 191,734");
        assert_eq!(first[7], "encrypted: kept messages counted");
        assert_eq!(first[9..11], ["14/178", "177/178"]);
        let by_cat = &tables[1].2;
        let paths = by_cat.iter().find(|r| r[0] == "paths").unwrap();
        // No readable summary: no columns for them.
        assert_eq!(paths[1..], ["14 of 178", "177 of 178"]);
        assert_eq!(tables[1].1.len(), 3);
        // Only the pairs that have figures are charted.
        let b = bars(&t);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].0, "agent: kept messages");
    }

    #[test]
    fn a_readable_summary_is_measured_beside_lean() {
        let mut t = RecordedTotals::default();
        let agent = retention(&[("paths", [1, 178]), ("errors", [2, 14])]);
        t.add_session("b.jsonl", &[row(SummaryKind::Text, Some(agent), Retention::new())]);
        let tables = tables(&t);
        assert_eq!(tables[0].2[0][9..11], ["1/178", "177/178"]);
        let errors = tables[1].2.iter().find(|r| r[0] == "errors").unwrap();
        assert_eq!(errors[1..3], ["2 of 14", "14 of 14"]);
        assert_eq!(bars(&t).len(), 2);
        assert_eq!(bars(&t)[0].0, "agent: summary + kept");
    }
}
