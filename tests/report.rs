//! `replay`, `report` and `check` through the binary.

use crate::util::*;
use serde_json::Value;

/// The fixtures a report runs on (every valid one).
const INPUTS: &[&str] = &[
    "openai",
    "edge/images.jsonl",
    "edge/parallel_calls.jsonl",
    "edge/huge_output.jsonl",
    "edge/cjk.jsonl",
];

fn report(dir: &TestDir, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let mut cmd = compactor();
    cmd.args(["report", "-q", "--window", "32000", "-o"]).arg(&out).args(extra);
    for i in INPUTS {
        cmd.arg(fixture(i));
    }
    run_ok(&mut cmd);
    out
}

#[test]
fn report_writes_every_file_deterministically() {
    let dir = TestDir::new();
    let a = report(&dir, "a", &["--parquet"]);
    let b = report(&dir, "b", &["--parquet", "-j", "1"]);
    for f in [
        "sessions.jsonl",
        "sessions.csv",
        "summary.json",
        "report.md",
        "report.html",
        "sessions.parquet",
    ] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(!x.is_empty(), "{f} is empty");
        assert!(x == y, "{f} differs between runs");
    }
    let rows = json_lines(&std::fs::read_to_string(a.join("sessions.jsonl")).unwrap());
    let summary: Value =
        serde_json::from_slice(&std::fs::read(a.join("summary.json")).unwrap()).unwrap();
    let sessions = summary["sessions"].as_u64().unwrap() as usize;
    assert_eq!(sessions, 8);
    assert_eq!(rows.len(), sessions * 4);
    for mode in ["none", "legacy", "lean", "tiered"] {
        let m = &summary["modes"][mode];
        assert_eq!(m["sessions"].as_u64().unwrap() as usize, sessions, "{mode}");
        assert_eq!(m["api_validity_failures"], 0, "{mode}");
        let rows_after: u64 = rows
            .iter()
            .filter(|r| r["mode"] == mode)
            .map(|r| r["tokens_after"].as_u64().unwrap())
            .sum();
        assert_eq!(m["tokens_after"].as_u64().unwrap(), rows_after, "{mode}");
    }
    assert_eq!(summary["modes"]["none"]["saved_pct"], 0.0);
    assert!(
        summary["modes"]["lean"]["anchor_retention_pct"].as_f64()
            > summary["modes"]["legacy"]["anchor_retention_pct"].as_f64()
    );
    assert!(summary["by_format"]["openai"]["lean"]["sessions"].as_u64().unwrap() > 0);
    let csv = std::fs::read_to_string(a.join("sessions.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("anchors.paths.found"));
    assert_eq!(csv.lines().count(), rows.len() + 1);
    let md = std::fs::read_to_string(a.join("report.md")).unwrap();
    assert!(md.contains("## Legacy vs lean") && md.contains("| anchors retained |"), "{md}");
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("trigger 27,200") && !html.contains("<script"));
    assert_eq!(html.matches("<figure>").count(), 3 + 1, "3 longest sessions and the histogram");
    // A legend entry per mode in each session's chart (and in the histogram's,
    // which has no "none"), and a caption saying what is plotted.
    for (mode, n) in [("none", 3), ("legacy", 4), ("lean", 4), ("tiered", 4)] {
        assert_eq!(html.matches(&format!(">\n{mode}\n</text>")).count(), n, "{mode}");
    }
    assert_eq!(html.matches("calls. Plotted: ").count(), 3);
}

#[test]
fn check_passes_on_itself_and_fails_on_a_worse_policy() {
    let dir = TestDir::new();
    let base = report(&dir, "base", &[]);
    let same =
        run_ok(compactor().args(["check", "--baseline"]).arg(&base).arg("--current").arg(&base));
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(text.contains("ok: no figure regressed"), "{text}");
    assert!(!text.contains("REGRESSED"));
    // A tiny anchor budget loses anchors in lean mode: check must name it and exit 1.
    let worse = report(&dir, "worse", &["--anchor-budget", "50"]);
    let res = run_code(
        compactor().args(["check", "--baseline"]).arg(&base).arg("--current").arg(&worse),
        1,
    );
    let text = String::from_utf8_lossy(&res.stdout);
    let line =
        text.lines().find(|l| l.starts_with("lean") && l.contains("anchor_retention_pct")).unwrap();
    assert!(line.ends_with("REGRESSED"), "{text}");
    assert!(
        text.contains("sessions that moved most") || text.contains("figures regressed"),
        "{text}"
    );
    // Accepting it on purpose.
    let copy = dir.join("baseline");
    std::fs::create_dir_all(&copy).unwrap();
    run_ok(
        compactor()
            .args(["check", "--update-baseline", "--baseline"])
            .arg(&copy)
            .arg("--current")
            .arg(&worse),
    );
    run_ok(compactor().args(["check", "--baseline"]).arg(&copy).arg("--current").arg(&worse));
}

#[test]
fn check_reads_summary_files_and_reports_bad_ones() {
    let dir = TestDir::new();
    let bad = dir.write("bad.json", "{}");
    let good = report(&dir, "r", &[]);
    let res = run_code(
        compactor()
            .args(["check", "--baseline"])
            .arg(&bad)
            .arg("--current")
            .arg(good.join("summary.json")),
        2,
    );
    assert!(String::from_utf8_lossy(&res.stderr).contains("bad.json"));
}

#[test]
fn replay_reports_calls_costs_and_the_final_history() {
    let dir = TestDir::new();
    let (report, calls, fin) = (dir.join("r.jsonl"), dir.join("c.jsonl"), dir.join("final"));
    run_ok(
        compactor()
            .args([
                "replay",
                "--window",
                "32000",
                "--model",
                "claude-sonnet-4",
                "--prices",
                "--report",
            ])
            .arg(&report)
            .arg("--calls")
            .arg(&calls)
            .arg("--write-final")
            .arg(&fin)
            .arg(fixture("openai/claude_code_task54.jsonl")),
    );
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert!(r["compactions"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["billed_live"].as_u64() < r["billed_original"].as_u64());
    assert!(r["cost_live"].as_f64() < r["cost_original"].as_f64());
    let call_rows = json_lines(&std::fs::read_to_string(&calls).unwrap());
    assert_eq!(call_rows.len() as u64, r["calls"].as_u64().unwrap());
    assert!(
        call_rows
            .windows(2)
            .all(|w| w[1]["tokens_original"].as_u64() >= w[0]["tokens_original"].as_u64())
    );
    let last = call_rows.last().unwrap();
    assert_eq!(last["compactions"], r["compactions"]);
    let final_sessions =
        json_lines(&std::fs::read_to_string(fin.join("claude_code_task54.jsonl")).unwrap());
    assert_eq!(final_sessions.len(), 1);
    let n = final_sessions[0]["messages"].as_array().unwrap().len();
    assert!(n < 69, "the final history is compacted: {n} messages");
    // Without --model there are no prices to use.
    let res = run_code(compactor().args(["replay", "--prices"]).arg(fixture("edge/cjk.jsonl")), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("--prices needs --model"));
}
