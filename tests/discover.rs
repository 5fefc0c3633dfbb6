//! Issue 27, item 1: the agents' own log folders read without INPUT, `stats
//! --by`, and `--model auto` windows, through the binary with a fake HOME.

use crate::util::{TestDir, compactor, files_under, fixture, json_lines, run_code, run_ok};
use compactor::catalog::window::ModelTable;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const CLAUDE_A: &str = "claude_code/task43_start.jsonl";
const CLAUDE_B: &str = "claude_code/task128_start.jsonl";
const CODEX: &str = "codex/fleet_compacted.jsonl";

/// `compactor ARGS` with HOME at `home` and the agents' variables unset.
fn at_home(home: &Path, args: &[&str]) -> Command {
    let mut cmd = compactor();
    cmd.args(args)
        .env("HOME", home)
        .env_remove("USERPROFILE")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME");
    cmd
}

fn copy(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(fixture(from), to).unwrap();
}

/// A home with both layouts: two Claude Code projects (one session each), one
/// Codex rollout, and files neither agent would write there.
fn fake_home(dir: &TestDir) -> std::path::PathBuf {
    let home = dir.join("home");
    let projects = home.join(".claude/projects");
    copy(CLAUDE_A, &projects.join("-p-task43/0b1e0c2a-0000-4000-8000-000000000001.jsonl"));
    copy(CLAUDE_B, &projects.join("-p-task128/0b1e0c2a-0000-4000-8000-000000000002.jsonl"));
    let sessions = home.join(".codex/sessions/2026/03/27");
    copy(CODEX, &sessions.join("rollout-2026-03-27T16-55-26-019d3038.jsonl"));
    // Not session logs: a Codex file not named rollout-*, a Claude Code non-.jsonl file.
    copy(CODEX, &sessions.join("history.jsonl"));
    std::fs::write(projects.join("-p-task43/notes.txt"), "x").unwrap();
    home
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The `file` names of a `stats --json` document, in order.
fn stats_files(doc: &Value) -> Vec<String> {
    doc["files"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap().into()).collect()
}

#[test]
fn without_input_stats_reads_both_agents_folders_under_home() {
    let dir = TestDir::new();
    let home = fake_home(&dir);
    let out = run_ok(&mut at_home(&home, &["stats", "--json"]));
    let err = stderr(&out);
    let claude = home.join(".claude/projects");
    let codex = home.join(".codex/sessions");
    assert!(err.contains(&format!("{}: 2 Claude Code session files", claude.display())), "{err}");
    assert!(err.contains(&format!("{}: 1 Codex session file", codex.display())), "{err}");
    assert!(!err.contains(".config/claude"), "a folder that does not exist is not named: {err}");
    let files = stats_files(&stdout_json(&out));
    let expected: Vec<String> = [
        claude.join("-p-task128/0b1e0c2a-0000-4000-8000-000000000002.jsonl"),
        claude.join("-p-task43/0b1e0c2a-0000-4000-8000-000000000001.jsonl"),
        codex.join("2026/03/27/rollout-2026-03-27T16-55-26-019d3038.jsonl"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect();
    assert_eq!(files, expected, "Claude Code first, path order, only session logs");
}

#[test]
fn env_overrides_replace_the_home_folders() {
    let dir = TestDir::new();
    let home = fake_home(&dir);
    // Claude Code takes CLAUDE_CONFIG_DIR as a comma-separated list.
    let (a, b) = (dir.join("cfg-a"), dir.join("cfg-b"));
    copy(CLAUDE_A, &a.join("projects/-p/1.jsonl"));
    copy(CLAUDE_B, &b.join("projects/-q/2.jsonl"));
    let codex_home = dir.join("codex-home");
    copy(CODEX, &codex_home.join("sessions/2026/01/02/rollout-x.jsonl"));
    let mut cmd = at_home(&home, &["stats", "--json"]);
    cmd.env("CLAUDE_CONFIG_DIR", format!("{},{}", a.display(), b.display()))
        .env("CODEX_HOME", &codex_home);
    let out = run_ok(&mut cmd);
    let err = stderr(&out);
    for (folder, what) in [
        (a.join("projects"), "1 Claude Code session file"),
        (b.join("projects"), "1 Claude Code session file"),
        (codex_home.join("sessions"), "1 Codex session file"),
    ] {
        assert!(err.contains(&format!("{}: {what}", folder.display())), "{err}");
    }
    assert!(!err.contains(&home.display().to_string()), "HOME's folders are not read: {err}");
    assert_eq!(stats_files(&stdout_json(&out)).len(), 3);
}

#[test]
fn no_folder_is_exit_2_naming_where_it_looked() {
    let dir = TestDir::new();
    let home = dir.join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    for command in [&["stats"][..], &["replay"], &["report", "-o", "r"]] {
        let out = run_code(at_home(&home, command).current_dir(dir.path()), 2);
        let err = stderr(&out);
        assert!(
            err.contains("no INPUT given, and none of the agents' log folders exists"),
            "{command:?}: {err}"
        );
        assert!(err.contains(&home.join(".claude/projects").display().to_string()), "{err}");
        assert!(err.contains(&home.join(".codex/sessions").display().to_string()), "{err}");
        assert!(err.contains("CLAUDE_CONFIG_DIR / CODEX_HOME"), "{err}");
        assert!(out.stdout.is_empty());
    }
    assert!(!dir.join("r").exists(), "no report directory when nothing was read");
}

/// A `stats --by` text table as (key, cells) rows, header first.
fn table(out: &Output) -> Vec<(String, Vec<String>)> {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let header_cells = 7;
    text.lines()
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            // The key may hold spaces; the figures are the last seven words (the
            // header's last seven are its column names, some of two words).
            let (key, cells) =
                if l.starts_with("model") || l.starts_with("day") || l.starts_with("project") {
                    (words[0].to_string(), Vec::new())
                } else {
                    let k = words.len() - header_cells;
                    (words[..k].join(" "), words[k..].iter().map(|s| s.to_string()).collect())
                };
            (key, cells)
        })
        .collect()
}

/// `12,345` as a number.
fn num(cell: &str) -> u64 {
    cell.replace(',', "").parse().unwrap()
}

/// The figures `stats FILE --json` gives one file alone.
fn alone(file: &str) -> Value {
    let out = run_ok(compactor().args(["stats", "--json"]).arg(fixture(file)));
    stdout_json(&out)["total"].clone()
}

/// The first string at `key` in a JSONL fixture's records satisfying `pick`.
fn first_field(file: &str, pick: impl Fn(&Value) -> Option<String>) -> String {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    json_lines(&text).iter().find_map(pick).unwrap()
}

#[test]
fn stats_by_model_day_and_project_group_the_sessions() {
    let dir = TestDir::new();
    let home = fake_home(&dir);
    let openai = fixture("openai/claude_code_task54.jsonl");
    let (a, b, c) = (alone(CLAUDE_A), alone(CLAUDE_B), alone(CODEX));

    // By model: both Claude Code sessions under their model, the OpenAI lines
    // (which name none) under (unknown), last.
    let mut cmd = at_home(&home, &["stats", "--by", "model"]);
    let claude_dir = home.join(".claude/projects");
    let rollout =
        home.join(".codex/sessions/2026/03/27/rollout-2026-03-27T16-55-26-019d3038.jsonl");
    cmd.arg(&claude_dir).arg(rollout).arg(&openai);
    let rows = table(&run_ok(&mut cmd));
    let keys: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["model", "claude-opus-4-6", "gpt-5.3-codex", "(unknown)", "TOTAL"]);
    let opus = &rows[1].1;
    assert_eq!(num(&opus[0]), 2, "sessions");
    assert_eq!(num(&opus[1]), 0, "subagents");
    let tokens = |v: &Value| v["tokens"].as_u64().unwrap();
    let messages = |v: &Value| v["messages"].as_u64().unwrap();
    assert_eq!(num(&opus[2]), messages(&a) + messages(&b));
    assert_eq!(num(&opus[3]), tokens(&a) + tokens(&b));
    assert!(opus[3].contains(','), "thousands separators: {}", opus[3]);
    assert_eq!(num(&rows[2].1[3]), tokens(&c));
    assert_eq!(num(&rows[2].1[6]), c["usage"]["provider_tokens"].as_u64().unwrap());
    let unknown_sessions = num(&rows[3].1[0]);
    assert_eq!(
        unknown_sessions,
        alone("openai/claude_code_task54.jsonl")["sessions"].as_u64().unwrap()
    );
    assert_eq!(num(&rows[4].1[0]), 3 + unknown_sessions);

    // By day: each session's first timestamp, UTC, oldest first.
    let day = |file: &str| {
        first_field(file, |v| {
            let chat = ["user", "assistant", "session_meta"].contains(&v["type"].as_str()?);
            chat.then(|| v["timestamp"].as_str().map(|t| t[..10].to_string()))?
        })
    };
    let out = run_ok(&mut at_home(&home, &["stats", "--by", "day", "--json"]));
    let doc = stdout_json(&out);
    assert_eq!(doc["by"], "day");
    let groups: Vec<(String, u64)> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_string(), g["stats"]["sessions"].as_u64().unwrap()))
        .collect();
    let mut expected: Vec<(String, u64)> = Vec::new();
    for f in [CLAUDE_A, CLAUDE_B, CODEX] {
        match expected.iter_mut().find(|(d, _)| *d == day(f)) {
            Some(e) => e.1 += 1,
            None => expected.push((day(f), 1)),
        }
    }
    expected.sort();
    assert_eq!(groups, expected);
    assert_eq!(doc["total"]["sessions"], 3);

    // By project: Claude Code's cwd, Codex's session_meta cwd.
    let cwd = |file: &str| {
        first_field(file, |v| {
            v["cwd"].as_str().or(v["payload"]["cwd"].as_str()).map(str::to_string)
        })
    };
    let out = run_ok(&mut at_home(&home, &["stats", "--by", "project", "--json"]));
    let keys: Vec<String> = stdout_json(&out)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap().to_string())
        .collect();
    let mut expected: Vec<String> = [CLAUDE_A, CLAUDE_B, CODEX].iter().map(|f| cwd(f)).collect();
    expected.sort();
    expected.dedup();
    assert_eq!(keys, expected);
}

/// `replay --report` rows of `args`, keyed by file name.
fn replay_rows(dir: &TestDir, args: &[&str], inputs: &[&Path]) -> (Vec<Value>, String) {
    let report = dir.join("replay.jsonl");
    let out =
        run_ok(compactor().arg("replay").args(inputs).args(args).arg("--report").arg(&report));
    (json_lines(&std::fs::read_to_string(report).unwrap()), stderr(&out))
}

#[test]
fn model_auto_gives_each_session_its_models_window() {
    let dir = TestDir::new();
    let (claude, codex, openai) =
        (fixture(CLAUDE_A), fixture(CODEX), fixture("openai/codex_w1t9.jsonl"));
    let table = ModelTable::default();
    let (rows, err) = replay_rows(&dir, &[], &[&claude, &codex, &openai]);
    let by_format = |f: &str| rows.iter().find(|r| r["format"] == f).unwrap().clone();
    let (c, x, o) = (by_format("claude-code"), by_format("codex"), by_format("openai"));
    assert_eq!(c["model"], "claude-opus-4-6");
    assert_eq!(x["model"], "gpt-5.3-codex");
    assert_eq!(c["window"].as_u64(), table.lookup("claude-opus-4-6"));
    assert_eq!(x["window"].as_u64(), table.lookup("gpt-5.3-codex"));
    assert_ne!(c["window"], x["window"], "two models, two windows");
    assert_eq!(
        (c["window_from"].as_str(), x["window_from"].as_str()),
        (Some("model"), Some("model"))
    );
    assert_eq!(
        c["threshold"].as_u64(),
        Some(compactor::catalog::window::threshold_tokens(c["window"].as_u64().unwrap(), None))
    );
    // The OpenAI lines name no model: the default window, counted on stderr.
    assert_eq!(o["model"], Value::Null);
    assert_eq!(o["window_from"], "default");
    assert_eq!(o["window"].as_u64(), Some(compactor::catalog::window::DEFAULT_WINDOW_TOKENS));
    let defaulted = rows.iter().filter(|r| r["window_from"] == "default").count();
    assert!(
        err.contains(&format!("--model auto: {defaulted} session")) && err.contains("200,000"),
        "{err}"
    );

    // --window N overrides it all, and the rows are as before: no model fields.
    let (rows, err) = replay_rows(&dir, &["--window", "128000"], &[&claude, &codex]);
    for r in &rows {
        assert_eq!(r["window"], 128_000);
        assert!(r.get("model").is_none() && r.get("window_from").is_none(), "{r}");
    }
    assert!(!err.contains("--model auto"), "{err}");
    // So does --model NAME.
    let (rows, _) = replay_rows(&dir, &["--model", "gpt-4o"], &[&claude, &codex]);
    assert!(rows.iter().all(|r| r["window"] == 128_000 && r.get("window_from").is_none()));
}

#[test]
fn report_rows_say_which_window_each_session_got() {
    let dir = TestDir::new();
    let (claude, codex) = (fixture(CLAUDE_A), fixture(CODEX));
    let out_dir = dir.join("report");
    run_ok(compactor().arg("report").arg(&claude).arg(&codex).arg("-o").arg(&out_dir).arg("-q"));
    let rows = json_lines(&std::fs::read_to_string(out_dir.join("sessions.jsonl")).unwrap());
    let table = ModelTable::default();
    for r in &rows {
        let model = r["model"].as_str().unwrap();
        assert_eq!(r["window"].as_u64(), table.lookup(model), "{model}");
        assert_eq!(r["window_from"], "model");
    }
    let windows: std::collections::BTreeSet<u64> =
        rows.iter().map(|r| r["window"].as_u64().unwrap()).collect();
    assert_eq!(windows.len(), 2, "{windows:?}");
    let csv = std::fs::read_to_string(out_dir.join("sessions.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.split(',').any(|c| c == "window_from"), "{header}");

    // With --window, no per-row window: summary.json holds the one.
    let fixed = dir.join("fixed");
    run_ok(
        compactor()
            .arg("report")
            .arg(&claude)
            .arg(&codex)
            .args(["--window", "64000", "-q", "-o"])
            .arg(&fixed),
    );
    let rows = json_lines(&std::fs::read_to_string(fixed.join("sessions.jsonl")).unwrap());
    assert!(rows.iter().all(|r| r.get("window").is_none() && r.get("model").is_none()));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(fixed.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["window"], 64_000);
}

/// Issue 41, point 9: `compact` without INPUT reads the agents' folders as
/// the other readers do, writing one compacted log per log under `-o DIR/`
/// (`claude-code/...`, `codex/...`); without a directory output it stops and
/// says why. Point 10: `-q` keeps the folder list off stderr (`report`,
/// `replay`, `compact`). Before, `compact` required an INPUT and `report -q`
/// still listed the folders.
#[test]
fn compact_without_input_reads_the_agents_folders_and_quiet_lists_none() {
    let dir = TestDir::new();
    let home = fake_home(&dir);
    let out = dir.join("compacted");
    let res = run_ok(&mut at_home(
        &home,
        &["compact", "--window", "32000", "-o", &format!("{}/", out.display())],
    ));
    let err = stderr(&res);
    assert!(err.contains("reading the agents' own log folders"), "{err}");
    assert!(err.contains("3 sessions from 3 inputs"), "{err}");
    let written: Vec<String> = files_under(&out, ".jsonl")
        .iter()
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|p| p.strip_prefix(&out).unwrap().display().to_string())
        .collect();
    assert_eq!(
        written,
        [
            "claude-code/-p-task128/0b1e0c2a-0000-4000-8000-000000000002.jsonl",
            "claude-code/-p-task43/0b1e0c2a-0000-4000-8000-000000000001.jsonl",
            "codex/2026/03/27/rollout-2026-03-27T16-55-26-019d3038.jsonl",
        ]
    );
    let refused = run_code(&mut at_home(&home, &["compact"]), 2);
    assert!(stderr(&refused).contains("hint: give -o DIR/"), "{}", stderr(&refused));
    // -q: nothing about the folders.
    for args in [
        vec!["report", "-q", "-o", dir.join("r").to_str().unwrap()],
        vec!["replay", "-q"],
        vec!["compact", "-q", "-o", &format!("{}/", dir.join("c2").display())],
    ] {
        let res = run_ok(&mut at_home(&home, &args));
        assert_eq!(stderr(&res), "", "{args:?}");
    }
}
