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
    assert!(
        md.contains("## Legacy vs lean") && md.contains("| anchors retained, compacted sessions |"),
        "{md}"
    );
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

/// Issue 41, point 4: the header says per session which windows ran (Codex
/// at 400K, Claude Code at 200K under `--model auto`), each label says what
/// its figure is over, and "users whole" has one denominator for every mode.
/// Before: "window 200,000 tokens, trigger 150,000 tokens" for both, "Savings
/// and anchors are over compacted sessions" over a figure of all sessions,
/// and `0 of 9` beside `3 of 5`.
#[test]
fn the_report_header_and_labels_say_what_each_figure_is_over() {
    let dir = TestDir::new();
    let out = dir.join("r");
    run_ok(
        compactor()
            .args(["report", "-q", "-o"])
            .arg(&out)
            .arg(fixture("claude_code/task43_start.jsonl"))
            .arg(fixture("codex/fleet_compacted.jsonl")),
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let header = md.lines().nth(2).unwrap();
    assert!(
        header.starts_with(
            "2 sessions; window per session (200K: 1, 400K: 1), trigger per session (150K: 1, 300K: 1)"
        ),
        "{header}"
    );
    assert!(header.contains("\"Saved\" is of all sessions' tokens"), "{header}");
    assert!(!header.contains("Savings and anchors are over compacted sessions"), "{header}");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["windows"],
        serde_json::json!([
            {"window": 200_000, "threshold": 150_000, "sessions": 1},
            {"window": 400_000, "threshold": 300_000, "sessions": 1}
        ])
    );
    // One window: said once, as before.
    let one = report(&dir, "one", &[]);
    let md1 = std::fs::read_to_string(one.join("report.md")).unwrap();
    assert!(md1.contains("; window 32,000 tokens, trigger 27,200 tokens, counter o200k."), "{md1}");
    // Users whole: the same denominator on both sides, and across modes.
    let row = |md: &str, label: &str| -> Vec<String> {
        let line = md.lines().find(|l| l.starts_with(&format!("| {label} |"))).unwrap();
        line.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect()
    };
    let users = row(&md1, "user messages kept whole, of all");
    let of = |cell: &str| cell.split(" of ").nth(1).unwrap().to_string();
    assert_eq!(of(&users[1]), of(&users[2]), "{users:?}");
    let total = summary_of(&one)["modes"]["none"]["user_messages"].as_u64().unwrap();
    assert!(total > 0 && of(&users[1]) == total.to_string(), "{users:?} of {total}");
    let mut denominators = std::collections::BTreeSet::new();
    for mode in ["none", "legacy", "lean", "tiered"] {
        let cells = row(&md1, mode);
        denominators.insert(cells[5].split('/').nth(1).unwrap().to_string());
    }
    assert_eq!(denominators.len(), 1, "{md1}");
    for label in [
        "saved, of all sessions' tokens",
        "saved per compacted session, median / p90",
        "anchors retained, compacted sessions",
        "user messages summarized (quoted whole)",
    ] {
        row(&md1, label);
    }
}

fn summary_of(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// Issue 41, point 10: replay's lines have thousands separators and say
/// `1 compaction`; a total over the sessions ends the run, and adds up.
#[test]
fn replay_prints_separated_counts_and_a_total() {
    let out = run_ok(compactor().args(["replay", "--window", "64000"]).arg(fixture("openai")));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let task54 = lines.iter().find(|l| l.contains("claude_code_task54")).unwrap();
    assert!(task54.contains(": 28 calls, 1 compaction, peak 57,508 -> "), "{task54}");
    for l in &lines {
        let figures = l.split_once(".jsonl:1").unwrap().1;
        assert!(
            !figures
                .split(|c: char| !c.is_ascii_digit() && c != ',')
                .any(|w| w.len() > 3 && !w.contains(',')),
            "a count without separators: {l}"
        );
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let total = err.lines().find(|l| l.starts_with("compactor: replayed 4 sessions, ")).unwrap();
    let billed = |l: &str| -> (u64, u64) {
        let part = l.split("billed ").nth(1).unwrap();
        let mut it = part.split(" -> ");
        let a = it.next().unwrap().replace(',', "").parse().unwrap();
        let b = it.next().unwrap().split(' ').next().unwrap().replace(',', "").parse().unwrap();
        (a, b)
    };
    let sum = lines.iter().map(|l| billed(l)).fold((0, 0), |s, b| (s.0 + b.0, s.1 + b.1));
    assert_eq!(billed(total), sum, "{total}");
    let quiet =
        run_ok(compactor().args(["replay", "-q", "--window", "64000"]).arg(fixture("openai")));
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
}

/// Issue 41, point 10: `stats` previews of messages that only call a tool
/// show the call, where they were empty.
#[test]
fn stats_previews_show_the_call_of_a_call_only_message() {
    let out = run_ok(
        compactor().args(["stats", "--json"]).arg(fixture("claude_code/task43_orphans.jsonl")),
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let largest = doc["total"]["largest"].as_array().unwrap();
    let calls: Vec<&Value> =
        largest.iter().filter(|l| !l["tool"].is_null() && l["role"] == "assistant").collect();
    assert!(!calls.is_empty(), "{largest:?}");
    for l in calls {
        let p = l["preview"].as_str().unwrap();
        assert!(!p.is_empty(), "{l}");
        if p.starts_with("call ") {
            assert!(p.starts_with(&format!("call {} ", l["tool"].as_str().unwrap())), "{l}");
        }
    }
    assert!(largest.iter().any(|l| l["preview"].as_str().unwrap().starts_with("call ")));
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
    // Lean's and tiered's anchors regressed.
    let said = String::from_utf8_lossy(&res.stdout);
    assert!(said.contains("\n2 figures regressed beyond their tolerance"), "{said}");
    // One figure alone is said in the singular (issue 41, point 10).
    let mut one: Value =
        serde_json::from_slice(&std::fs::read(base.join("summary.json")).unwrap()).unwrap();
    let saved = one["modes"]["lean"]["saved_pct"].as_f64().unwrap();
    one["modes"]["lean"]["saved_pct"] = (saved - 5.0).into();
    let one = dir.write("one-worse.json", serde_json::to_vec(&one).unwrap());
    let one = run_code(
        compactor().args(["check", "--baseline"]).arg(&base).arg("--current").arg(&one),
        1,
    );
    let said = String::from_utf8_lossy(&one.stdout);
    assert!(said.contains("\n1 figure regressed beyond its tolerance"), "{said}");
    let warned = String::from_utf8_lossy(&res.stderr);
    assert!(
        warned.contains(
            "warning: option anchor_budget differs: auto in the baseline, 50 now; comparing anyway"
        ),
        "{warned}"
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

/// Issue 41, point 2: the same bytes under two roots (another machine, a CI
/// runner) are the same inputs: `check` pairs them by content and says so.
/// Before, every file was "only in the baseline" / "only in the current
/// report" and check exited 2.
#[test]
fn check_matches_the_same_inputs_under_two_roots_by_content() {
    let dir = TestDir::new();
    let mut reports = Vec::new();
    for root in ["one", "two/deeper"] {
        let mut cmd = compactor();
        let out = dir.join(&format!("{root}-report"));
        cmd.args(["report", "-q", "--window", "32000", "-o"]).arg(&out);
        for i in INPUTS {
            let from = fixture(i);
            let to = dir.join(root).join(i);
            if from.is_dir() {
                std::fs::create_dir_all(&to).unwrap();
                for f in files_under(&from, ".jsonl") {
                    std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
                }
            } else {
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&from, &to).unwrap();
            }
            cmd.arg(to);
        }
        run_ok(&mut cmd);
        reports.push(out);
    }
    let out = run_ok(
        compactor()
            .args(["check", "--baseline"])
            .arg(&reports[0])
            .arg("--current")
            .arg(&reports[1]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let files = files_under(&dir.join("one"), "").len();
    assert!(
        err.contains(&format!(
            "inputs: {files} files matched by content ({files} under another path"
        )),
        "{err}"
    );
    assert!(!err.contains("only in the"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: no figure regressed"));
}

/// Issue 41, point 3: `--update-baseline` replaces the baseline directory as
/// one unit: exactly the current report's files, byte for byte, nothing of
/// the old one left beside them and no temporary beside it. Before, only
/// `summary.json` and `sessions.jsonl` were rewritten.
#[test]
fn update_baseline_replaces_the_whole_directory() {
    let dir = TestDir::new();
    let current = report(&dir, "current", &["--anchor-budget", "50"]);
    let baseline = dir.join("ci/baseline");
    std::fs::create_dir_all(&baseline).unwrap();
    for f in ["summary.json", "report.md", "report.html", "notes.txt"] {
        std::fs::write(baseline.join(f), "stale").unwrap();
    }
    run_ok(
        compactor()
            .args(["check", "--update-baseline", "--baseline"])
            .arg(&baseline)
            .arg("--current")
            .arg(&current),
    );
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&baseline), names(&current));
    for f in names(&current) {
        assert!(
            std::fs::read(baseline.join(&f)).unwrap() == std::fs::read(current.join(&f)).unwrap(),
            "{f} differs"
        );
    }
    assert_eq!(names(&dir.join("ci")), ["baseline"], "no temporary directory left");
    run_ok(compactor().args(["check", "--baseline"]).arg(&baseline).arg("--current").arg(&current));
}

#[test]
fn check_refuses_reports_of_different_inputs_unless_allowed() {
    let dir = TestDir::new();
    let base = report(&dir, "base", &[]);
    // The same inputs with one file changed: one session more.
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    let mut other = compactor();
    other.args(["report", "-q", "--window", "32000", "-o"]).arg(dir.join("other"));
    for i in INPUTS {
        let from = fixture(i);
        if i.ends_with("cjk.jsonl") {
            let text = std::fs::read_to_string(&from).unwrap();
            let first = text.lines().next().unwrap();
            let to = inputs.join("cjk.jsonl");
            std::fs::write(&to, format!("{first}\n{first}\n")).unwrap();
            other.arg(to);
        } else {
            other.arg(from);
        }
    }
    run_ok(&mut other);
    let summary: Value =
        serde_json::from_slice(&std::fs::read(base.join("summary.json")).unwrap()).unwrap();
    let files = summary["inputs"]["files"].as_array().unwrap();
    assert!(files.len() > INPUTS.len(), "a directory counts its files: {files:?}");
    assert!(files.iter().all(|f| f["xxh3"].as_str().is_some_and(|h| h.len() == 16)), "{files:?}");
    let cmd = |extra: &[&str]| {
        let mut c = compactor();
        c.args(["check", "--baseline"]).arg(&base).arg("--current").arg(dir.join("other"));
        c.args(extra);
        c
    };
    let refused = run_code(&mut cmd(&[]), 2);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("measured different inputs"), "{err}");
    assert!(err.contains("cjk.jsonl: only in the baseline"), "{err}");
    assert!(err.contains("in/cjk.jsonl: only in the current report"), "{err}");
    assert!(err.contains("--allow-different-inputs"), "{err}");
    assert!(refused.stdout.is_empty(), "nothing compared");
    let allowed = run_code(&mut cmd(&["--allow-different-inputs"]), 0);
    let err = String::from_utf8_lossy(&allowed.stderr);
    assert!(err.contains("warning:") && err.contains("measured different inputs"), "{err}");
    assert!(String::from_utf8_lossy(&allowed.stdout).contains("saved_pct"));
}

#[test]
fn a_share_of_nothing_is_not_applicable_everywhere() {
    let dir = TestDir::new();
    // One short session, forced: tiered summarizes no user message.
    let out = dir.join("r");
    run_ok(
        compactor()
            .args(["report", "-q", "--force", "--window", "32000", "-o"])
            .arg(&out)
            .arg(fixture("edge/cjk.jsonl")),
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let tiered = &summary["modes"]["tiered"];
    assert_eq!(tiered["user_messages_summarized"], 0, "{tiered}");
    assert!(tiered["user_messages_kept_whole_pct"].is_null(), "0/0 is n/a, not 100: {tiered}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let row = md.lines().find(|l| l.starts_with("| tiered")).unwrap();
    assert!(row.contains("| n/a |") && !row.contains("0/0"), "{row}");
    let checked =
        run_ok(compactor().args(["check", "--baseline"]).arg(&out).arg("--current").arg(&out));
    let text = String::from_utf8_lossy(&checked.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("tiered") && l.contains("user_messages_kept_whole_pct"))
        .unwrap();
    assert!(line.contains("n/a") && !line.contains("100.00"), "{line}");
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
    // Without --model a session is priced as its log's model; this log names
    // none, so its cost is left out, and said so.
    let res = run_ok(compactor().args(["replay", "--prices"]).arg(fixture("edge/cjk.jsonl")));
    assert!(!String::from_utf8_lossy(&res.stdout).contains('$'));
    assert!(String::from_utf8_lossy(&res.stderr).contains("1 session without a price"));
}

/// `replay --report -` and `--calls -` write their JSON lines to standard
/// output, as `compact --report -` does, and never a file named `-`; both at
/// once are refused, since their lines would interleave.
#[test]
fn replay_writes_a_report_to_standard_output_for_a_dash() {
    let dir = TestDir::new();
    let input = fixture("claude_code/edge_sidechain.jsonl");
    let replay = |extra: &[&str]| {
        let mut cmd = compactor();
        cmd.current_dir(dir.path()).arg("replay").args(extra).arg(&input);
        cmd
    };
    let res = run_ok(&mut replay(&["--report", "-"]));
    let rows = json_lines(&String::from_utf8_lossy(&res.stdout));
    assert_eq!(rows.len(), 1, "one session, one JSON line");
    assert_eq!(rows[0]["format"], "claude-code");
    assert_eq!(rows[0]["calls"], 2);
    let res = run_ok(&mut replay(&["--calls", "-"]));
    let out = String::from_utf8_lossy(&res.stdout);
    // The text line per session, then a JSON line per call.
    let calls: Vec<&str> = out.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(calls.len(), 2, "{out}");
    assert!(out.lines().any(|l| !l.starts_with('{')), "{out}");
    let res = run_code(&mut replay(&["--report", "-", "--calls", "-"]), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("both write to stdout"));
    assert!(!dir.join("-").exists(), "no file named -");
}

/// `replay --write-final --to X` writes the final history as a clean request
/// of X: checked here on the shapes each API insists on, from raw Claude Code
/// and Codex logs.
#[test]
fn replay_writes_the_final_history_as_a_clean_request() {
    let dir = TestDir::new();
    for input in ["claude_code/task43_parallel.jsonl", "openai/codex_w1t9.jsonl"] {
        for to in ["openai", "anthropic"] {
            let fin = dir.join(&format!("{to}-{}", input.replace('/', "-")));
            run_ok(
                compactor()
                    .args(["replay", "--window", "16000", "--to", to, "--write-final"])
                    .arg(&fin)
                    .arg(fixture(input)),
            );
            let files = files_under(&fin, "");
            assert_eq!(files.len(), 1, "{files:?}");
            let v: Value = serde_json::from_str(
                std::fs::read_to_string(&files[0]).unwrap().lines().next().unwrap(),
            )
            .unwrap();
            let msgs = v["messages"].as_array().unwrap();
            assert!(!msgs.is_empty(), "{input} {to}");
            let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
            assert!(
                keys.iter()
                    .all(|k| ["id", "messages", "tools", "compaction", "system"]
                        .contains(&k.as_str())),
                "{input} {to}: only request fields: {keys:?}"
            );
            if to == "openai" {
                let mut open: Vec<String> = Vec::new();
                for m in msgs {
                    match m["role"].as_str().unwrap() {
                        "tool" => {
                            let id = m["tool_call_id"].as_str().unwrap();
                            assert!(
                                open.first().is_some_and(|x| x == id),
                                "{input}: result {id} out of call order"
                            );
                            open.remove(0);
                            assert!(m["content"].is_string());
                        }
                        role => {
                            assert!(
                                open.is_empty(),
                                "{input}: a {role} message before the results of {open:?}"
                            );
                            assert!(["system", "developer", "user", "assistant"].contains(&role));
                            for c in m["tool_calls"].as_array().into_iter().flatten() {
                                assert_eq!(c["type"], "function");
                                assert!(c["function"]["arguments"].is_string());
                                open.push(c["id"].as_str().unwrap().to_string());
                            }
                        }
                    }
                }
            } else {
                assert_eq!(msgs[0]["role"], "user", "{input}");
                for (i, w) in msgs.windows(2).enumerate() {
                    assert_ne!(
                        w[0]["role"],
                        w[1]["role"],
                        "{input}: message {i} and {} alternate",
                        i + 1
                    );
                }
                for (i, m) in msgs.iter().enumerate() {
                    let uses: Vec<&str> = m["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|b| b["type"] == "tool_use")
                        .map(|b| b["id"].as_str().unwrap())
                        .collect();
                    if uses.is_empty() {
                        continue;
                    }
                    let next = msgs
                        .get(i + 1)
                        .unwrap_or_else(|| panic!("{input}: tool_use unanswered at the end"));
                    let answered: Vec<&str> = next["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|b| b["type"] == "tool_result")
                        .map(|b| b["tool_use_id"].as_str().unwrap())
                        .collect();
                    assert_eq!(answered, uses, "{input}: each tool_use answered right after it");
                }
            }
        }
    }
}

/// Issue 37, points 2 and 4: each compaction the agent made itself is a row
/// of the session's `lean` row, of `summary.json` and of the report's
/// "Recorded compactions" section, with the log's own figures (the Claude
/// Code boundary: `preTokens` 155,000, the next call's prompt 9,123, trigger
/// `auto`, its summary readable) beside lean at the same point; the Codex
/// compaction's summary is encrypted: not measurable, its kept messages are.
/// A report without one says so in one sentence and draws no table.
#[test]
fn recorded_compactions_are_measured_in_the_report() {
    let dir = TestDir::new();
    let out = dir.join("r");
    run_ok(
        compactor()
            .args(["report", "-q", "--window", "32000", "-o"])
            .arg(&out)
            .arg(fixture("claude_code/edge_compact_boundary.jsonl"))
            .arg(fixture("codex/fleet_compacted.jsonl")),
    );
    let rows = json_lines(&std::fs::read_to_string(out.join("sessions.jsonl")).unwrap());
    let with: Vec<&Value> =
        rows.iter().filter(|r| r.get("recorded_compactions").is_some()).collect();
    assert_eq!(with.len(), 2, "one lean row per session holds them");
    assert!(with.iter().all(|r| r["mode"] == "lean"));
    let claude = &with[0]["recorded_compactions"][0];
    assert_eq!(claude["index"], 4);
    assert_eq!(claude["trigger"], "auto");
    assert_eq!(claude["tokens_before_provider"], 155_000);
    assert_eq!(claude["tokens_after_provider"], 9_123);
    assert_eq!(claude["summary"], "text");
    assert_eq!(claude["retained"]["paths"], serde_json::json!([1, 1]));
    let codex = &with[1]["recorded_compactions"][0];
    assert_eq!(codex["summary"], "encrypted");
    assert!(codex["retained"].is_null(), "not measurable is null, never 0%");
    assert_eq!(codex["kept_messages"], 12);
    assert!(codex["retained_in_kept"]["paths"][1].as_u64().unwrap() > 0);
    let summary = summary_of(&out);
    let t = &summary["recorded_compactions"];
    assert_eq!((t["sessions"].as_u64(), t["compactions"].as_u64()), (Some(2), Some(2)));
    assert_eq!(t["measurable"], 1);
    assert_eq!(t["rows"].as_array().unwrap().len(), 2);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Recorded compactions\n"), "{md}");
    assert!(md.contains("2 compactions the agents made themselves, in 2 sessions"), "{md}");
    assert!(md.contains("| 155,000 / "), "{md}");
    assert!(md.contains("| encrypted: kept messages counted | 12 |"), "{md}");
    assert!(md.contains("## Recorded compactions: kept by category"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("anchors kept by category, the agents&#39; compactions and lean")
            || html.contains("anchors kept by category, the agents' compactions and lean")
    );
    // Read live, the agent's compactions are not placed in the conversation: nothing to measure.
    let live = dir.join("live");
    run_ok(
        compactor()
            .args(["report", "-q", "--history", "live", "--window", "32000", "-o"])
            .arg(&live)
            .arg(fixture("claude_code/edge_compact_boundary.jsonl")),
    );
    assert!(summary_of(&live).get("recorded_compactions").is_none());
    let md = std::fs::read_to_string(live.join("report.md")).unwrap();
    assert!(md.contains(
        "## Recorded compactions\n\nNo session holds a compaction its agent made itself"
    ));
    assert!(!md.contains("kept by category"));
}

/// Issue 37, point 2: `stats` lists each recorded compaction with its
/// figures, and compares the provider's usage with the agent's own context
/// (restarted at its compaction), not the whole history.
#[test]
fn stats_lists_recorded_compactions_and_compares_usage_with_the_agents_context() {
    let run = |history: &str| -> Value {
        let out = run_ok(
            compactor()
                .args(["stats", "--json", "--history", history])
                .arg(fixture("codex/fleet_compacted.jsonl")),
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["total"].clone()
    };
    let full = run("full");
    let live = run("live");
    assert_eq!(full["recorded_compactions"], 1);
    let row = &full["recorded"]["rows"][0];
    assert_eq!(row["index"], 9);
    assert_eq!(row["tokens_before_provider"], 182_469);
    assert_eq!(row["tokens_after_provider"], 18_946);
    // Full: the 9 messages before it and what followed (13 calls); live: its
    // 12 kept messages (the replacement history) and what followed (8 calls).
    assert_eq!((full["tool_calls"].as_u64(), live["tool_calls"].as_u64()), (Some(13), Some(8)));
    // The calls after the compaction are compared with what the agent kept
    // and what followed: the same figure as read live, where that is all there is.
    let after = |t: &Value| {
        (t["usage"]["calls"].as_u64().unwrap(), t["usage"]["our_tokens"].as_u64().unwrap())
    };
    let (calls_full, ours_full) = after(&full);
    let (calls_live, ours_live) = after(&live);
    assert!(calls_full > calls_live, "{calls_full} {calls_live}");
    assert!(ours_full > ours_live);
    assert!(live.get("recorded").is_none());
}

/// Issue 36 point 5: one session, one replay. `replay` and the report's
/// replay section walk the same calls of the session as logged and print the
/// same figures (before: a Codex rollout replayed 190 calls in `replay` and
/// 133 in `report`, the report replaying the clean request).
#[test]
fn replay_and_report_give_one_session_the_same_replay() {
    let dir = TestDir::new();
    for name in
        ["codex/fleet_compacted.jsonl", "codex/w1t9_head.jsonl", "claude_code/task43_start.jsonl"]
    {
        let replayed = dir.join(&format!("{}.replay.jsonl", name.replace('/', "_")));
        run_ok(
            compactor()
                .args(["replay", "-q", "--mode", "lean", "--window", "32000", "--report"])
                .arg(&replayed)
                .arg(fixture(name)),
        );
        let r = &json_lines(&std::fs::read_to_string(&replayed).unwrap())[0];
        let out = dir.join(&format!("{}.report", name.replace('/', "_")));
        run_ok(
            compactor()
                .args(["report", "-q", "--window", "32000", "-o"])
                .arg(&out)
                .arg(fixture(name)),
        );
        let rows = json_lines(&std::fs::read_to_string(out.join("sessions.jsonl")).unwrap());
        let lean = rows.iter().find(|x| x["mode"] == "lean").unwrap();
        for (ours, theirs) in [
            ("calls", "replay_calls"),
            ("compactions", "replay_compactions"),
            ("peak_original", "replay_peak_original"),
            ("peak_live", "replay_peak_live"),
            ("billed_original", "replay_billed_original"),
            ("billed_live", "replay_billed_live"),
            ("cache_read_live", "replay_cache_read_live"),
        ] {
            assert_eq!(r[ours], lean[theirs], "{name}: replay {ours} vs report {theirs}");
        }
        assert!(r["calls"].as_u64().unwrap() > 0, "{name}");
    }
}

/// Issue 39 point 4: `report --policies all --prices` writes one row per
/// built-in policy with its cost (the same dollars `replay --policy --prices`
/// gives that policy), a section in report.md and report.html with the two
/// charts, and `check` gates on the policies' figures.
#[test]
fn report_policies_prices_every_policy_charts_them_and_check_gates_on_them() {
    let dir = TestDir::new();
    let out = dir.join("policies");
    run_ok(
        compactor()
            .args(["report", "-q", "--policies", "all", "--prices", "-o"])
            .arg(&out)
            .arg(fixture("claude_code")),
    );
    let summary = summary_of(&out);
    let policies = summary["policies"].as_object().unwrap();
    let names = [
        "none",
        "legacy",
        "lean",
        "tiered",
        "claude-code",
        "codex",
        "openhands",
        "openhands-masking",
        "anthropic-context-editing",
        "gemini-cli",
    ];
    assert_eq!(policies.len(), names.len(), "{policies:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(md.contains("| cost ($) |"), "{md}");
    for name in names {
        let p = &policies[name];
        assert!(p["cost_usd"].as_f64().unwrap() > 0.0, "{name}: {p}");
        assert!(md.contains(&format!("\n| {name} | ")), "{name}");
        assert!(html.contains(&format!("<tr><td>{name}</td>")), "{name}");
    }
    assert!(html.contains("<h2>Policies</h2>"));
    for chart in ["policies-billed.svg", "policies-retention.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        assert_eq!(svg.matches("<rect").count(), names.len(), "{chart}");
    }
    // The cost of a policy is its replay's: `replay --policy codex --prices`.
    let rows = dir.join("replay.jsonl");
    run_ok(
        compactor()
            .args(["replay", "-q", "--policy", "codex", "--prices", "--report"])
            .arg(&rows)
            .arg(fixture("claude_code")),
    );
    let replayed: f64 = std::fs::read_to_string(&rows)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["cost_live"].as_f64().unwrap())
        .sum();
    let reported = policies["codex"]["cost_usd"].as_f64().unwrap();
    assert!((replayed - reported).abs() < 1e-4, "replay {replayed} vs report {reported}");
    // check: the same report passes; a baseline in which codex billed 5% less fails,
    // naming the policy and the figure; a 10% tolerance lets it pass.
    let same =
        run_ok(compactor().args(["check", "--baseline"]).arg(&out).arg("--current").arg(&out));
    assert!(String::from_utf8_lossy(&same.stdout).contains("codex"));
    let mut better = summary.clone();
    let billed = better["policies"]["codex"]["billed"].as_u64().unwrap();
    better["policies"]["codex"]["billed"] = (billed * 95 / 100).into();
    let better = dir.write("better.json", serde_json::to_vec(&better).unwrap());
    let res = run_code(
        compactor().args(["check", "--baseline"]).arg(&better).arg("--current").arg(&out),
        1,
    );
    let said = String::from_utf8_lossy(&res.stdout);
    let line =
        said.lines().find(|l| l.starts_with("codex ") && l.contains("billed_input")).unwrap();
    assert!(line.ends_with("REGRESSED"), "{said}");
    assert!(said.contains("\n1 figure regressed beyond its tolerance"), "{said}");
    run_ok(
        compactor()
            .args(["check", "--policy-tolerance", "10", "--baseline"])
            .arg(&better)
            .arg("--current")
            .arg(&out),
    );
}
