//! The binary end to end: inputs, outputs, modes, reports, errors, exit codes.

use crate::util::*;
use serde_json::Value;
use std::path::PathBuf;

/// Every valid fixture file (one session or more per file).
const VALID: &[&str] = &[
    "openai/claude_code_task54.jsonl",
    "openai/codex_w1t9.jsonl",
    "openai/swe_agent_marshmallow.jsonl",
    "openai/trajectory_richh.jsonl",
    "edge/images.jsonl",
    "edge/parallel_calls.jsonl",
    "edge/huge_output.jsonl",
    "edge/cjk.jsonl",
    "edge/unknown_roles.jsonl",
];

#[test]
fn mode_none_writes_back_the_same_json_values() {
    let dir = TestDir::new();
    for rel in VALID {
        let out = dir.join("out.jsonl");
        run_ok(
            compactor().args(["compact", "--mode", "none", "-q", "-o"]).arg(&out).arg(fixture(rel)),
        );
        let input = json_lines(&std::fs::read_to_string(fixture(rel)).unwrap());
        let output = json_lines(&std::fs::read_to_string(&out).unwrap());
        assert_eq!(input, output, "{rel}");
    }
}

#[test]
fn forced_compaction_of_every_fixture_is_valid_and_smaller() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    let report = dir.join("report.jsonl");
    let mut cmd = compactor();
    cmd.args(["compact", "--force", "--window", "32000", "-q", "-o"])
        .arg(&out)
        .arg("--report")
        .arg(&report);
    for rel in VALID {
        cmd.arg(fixture(rel));
    }
    run_ok(&mut cmd);
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(
        rows.len(),
        VALID
            .iter()
            .map(|r| json_lines(&std::fs::read_to_string(fixture(r)).unwrap()).len())
            .sum::<usize>()
    );
    for row in &rows {
        assert!(row["tokens_after"].as_u64() <= row["tokens_before"].as_u64(), "{row}");
    }
    // The big real slices must actually shrink.
    for name in ["claude_code_task54.jsonl", "codex_w1t9.jsonl", "huge_output.jsonl"] {
        let row = rows.iter().find(|r| r["source"].as_str().unwrap().contains(name)).unwrap();
        assert_eq!(row["compacted"], true, "{name}: {row}");
        assert!(row["saved_pct"].as_f64().unwrap() > 30.0, "{name}: {row}");
    }
    // Each compacted session carries its compaction object.
    let written = json_lines(&std::fs::read_to_string(out.join("codex_w1t9.jsonl")).unwrap());
    let c = &written[0]["compaction"];
    assert_eq!(c["mode"], "lean");
    assert_eq!(c["compacted"], true);
    assert!(c["source"].as_str().unwrap().ends_with("codex_w1t9.jsonl:1"));
    assert!(c["summarized_range"][1].as_u64() > c["summarized_range"][0].as_u64());
}

#[test]
fn directories_map_to_directories_with_relative_names() {
    let dir = TestDir::new();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(
        compactor()
            .args(["compact", "--mode", "none", "-q", "-o"])
            .arg(&out)
            .arg(fixture("openai")),
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"codex_w1t9.jsonl".to_string()), "{names:?}");
    // The resume manifest is the one dot-file a directory output keeps.
    names.retain(|n| n != ".compactor-manifest.jsonl");
    assert!(names.iter().all(|n| !n.starts_with('.')), "no temporary files left: {names:?}");
}

#[test]
fn stdin_to_stdout_equals_file_to_file() {
    let dir = TestDir::new();
    let input = std::fs::read(fixture("openai/swe_agent_marshmallow.jsonl")).unwrap();
    let mut cmd = compactor();
    cmd.args(["compact", "-", "--force", "--window", "16000", "-q"]);
    let piped = run_with_stdin(cmd, &input);
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let out = dir.join("o.jsonl");
    run_ok(
        compactor()
            .args(["compact", "--force", "--window", "16000", "-q", "-o"])
            .arg(&out)
            .arg(fixture("openai/swe_agent_marshmallow.jsonl")),
    );
    let file_out = std::fs::read_to_string(&out).unwrap();
    // Same bytes except the source name inside the compaction object.
    let norm = |s: &str| -> Vec<Value> {
        json_lines(s)
            .into_iter()
            .map(|mut v| {
                if let Some(c) = v.get_mut("compaction") {
                    c["source"] = Value::Null;
                }
                v
            })
            .collect()
    };
    assert_eq!(norm(&String::from_utf8_lossy(&piped.stdout)), norm(&file_out));
}

#[test]
fn thread_count_does_not_change_a_byte() {
    let dir = TestDir::new();
    let mut outputs = Vec::new();
    for j in ["1", "4"] {
        let out = dir.join(&format!("o{j}.jsonl"));
        let report = dir.join(&format!("r{j}.jsonl"));
        let mut cmd = compactor();
        cmd.args(["compact", "--force", "--window", "32000", "-q", "-j", j, "-o"])
            .arg(&out)
            .arg("--report")
            .arg(&report);
        for rel in VALID {
            cmd.arg(fixture(rel));
        }
        run_ok(&mut cmd);
        outputs.push((std::fs::read(&out).unwrap(), std::fs::read(&report).unwrap()));
    }
    assert!(outputs[0].0 == outputs[1].0, "outputs differ between -j1 and -j4");
    assert!(outputs[0].1 == outputs[1].1, "reports differ between -j1 and -j4");
}

/// Without `--report` the retention figures are not measured (nothing would
/// show them): the sessions written must not change, and a report asked for
/// must still carry them.
#[test]
fn the_output_is_the_same_with_and_without_a_report() {
    let dir = TestDir::new();
    let mut outputs = Vec::new();
    for with_report in [false, true] {
        let out = dir.join(&format!("o{with_report}.jsonl"));
        let mut cmd = compactor();
        cmd.args(["compact", "--force", "--window", "32000", "-q", "-o"]).arg(&out);
        if with_report {
            cmd.arg("--report").arg(dir.join("r.jsonl"));
        }
        for rel in VALID {
            cmd.arg(fixture(rel));
        }
        run_ok(&mut cmd);
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs[0] == outputs[1], "the report changed the sessions written");
    let rows = json_lines(&std::fs::read_to_string(dir.join("r.jsonl")).unwrap());
    let found: u64 = rows.iter().map(|r| r["anchors_found"].as_u64().unwrap()).sum();
    let retained: u64 = rows.iter().map(|r| r["anchors_retained"].as_u64().unwrap()).sum();
    assert!(found > 100 && retained > 0 && retained < found, "{found} {retained}");
}

#[test]
fn gzip_input_reads_like_plain() {
    use std::io::Write;
    let dir = TestDir::new();
    let plain = std::fs::read(fixture("edge/parallel_calls.jsonl")).unwrap();
    let gz_path = dir.join("p.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz_path).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&plain).unwrap();
    enc.finish().unwrap();
    let a = run_ok(
        compactor()
            .args(["compact", "--force", "--window", "16000", "-q"])
            .arg(fixture("edge/parallel_calls.jsonl")),
    );
    let b =
        run_ok(compactor().args(["compact", "--force", "--window", "16000", "-q"]).arg(&gz_path));
    let strip = |o: &[u8]| -> Vec<Value> {
        json_lines(&String::from_utf8_lossy(o))
            .into_iter()
            .map(|mut v| {
                v["compaction"]["source"] = Value::Null;
                v
            })
            .collect()
    };
    assert_eq!(strip(&a.stdout), strip(&b.stdout));
}

#[test]
fn bad_lines_are_reported_skipped_and_kept_aside() {
    let dir = TestDir::new();
    let out = dir.join("o.jsonl");
    let rejects = dir.join("rejects.jsonl");
    let input = fixture("edge/bad_lines.jsonl");
    let res = run_code(
        compactor().args(["compact", "-o"]).arg(&out).arg("--rejects").arg(&rejects).arg(&input),
        3,
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    let name = input.display().to_string();
    assert!(stderr.contains(&format!("{name}:2: invalid JSON")), "{stderr}");
    assert!(stderr.contains(&format!("{name}:4: not an OpenAI session")), "{stderr}");
    assert!(stderr.contains(&format!("{name}:5: message")), "{stderr}");
    assert!(stderr.contains("3 records rejected"), "{stderr}");
    let good = json_lines(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(good.len(), 2);
    let lines: Vec<String> =
        std::fs::read_to_string(&input).unwrap().lines().map(str::to_string).collect();
    let rejected: Vec<String> =
        std::fs::read_to_string(&rejects).unwrap().lines().map(str::to_string).collect();
    assert_eq!(
        rejected,
        [lines[1].clone(), lines[3].clone(), lines[4].clone()],
        "rejects are the raw lines"
    );
    // Beside them, one line per rejection says where it came from.
    let sources = json_lines(&std::fs::read_to_string(dir.join("rejects.sources.jsonl")).unwrap());
    let got: Vec<(u64, String, &str)> = sources
        .iter()
        .map(|v| {
            (
                v["line"].as_u64().unwrap(),
                v["source"].as_str().unwrap().to_string(),
                v["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, format!("{name}:2"), "invalid_json"),
            (2, format!("{name}:4"), "malformed"),
            (3, format!("{name}:5"), "malformed"),
        ]
    );
}

#[test]
fn an_unreadable_input_is_a_sourced_reject_not_a_blank_line() {
    let dir = TestDir::new();
    let broken = dir.write("broken.jsonl.gz", b"\x1f\x8b\x08\x00garbage");
    let rejects = dir.join("rejects.jsonl");
    let res = run_code(
        compactor()
            .args(["compact", "-o"])
            .arg(dir.join("out.jsonl"))
            .arg("--rejects")
            .arg(&rejects)
            .arg(&broken)
            .arg(fixture("edge/cjk.jsonl")),
        3,
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(stderr.contains("broken.jsonl.gz"), "{stderr}");
    assert_eq!(std::fs::read(&rejects).unwrap(), b"", "no record, no line: {stderr}");
    let sources = json_lines(&std::fs::read_to_string(dir.join("rejects.sources.jsonl")).unwrap());
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert!(sources[0]["line"].is_null());
    assert_eq!(sources[0]["kind"], "unreadable");
    assert!(sources[0]["source"].as_str().unwrap().ends_with("broken.jsonl.gz"), "{sources:?}");
    assert!(!sources[0]["reason"].as_str().unwrap().is_empty());
}

#[test]
fn our_own_report_in_an_output_directory_is_not_read_back_as_a_session() {
    let dir = TestDir::new();
    let out = dir.join("out");
    // The way a user first runs it: the report beside the sessions.
    run_ok(
        compactor()
            .args(["compact", "-q", "--report"])
            .arg(out.join("report.jsonl"))
            .arg("-o")
            .arg(format!("{}/", out.display()))
            .arg(fixture("openai")),
    );
    assert!(out.join("report.jsonl").is_file());
    let res = run_ok(compactor().arg("stats").arg(&out));
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(stderr.contains("note: skipped") && stderr.contains("report.jsonl"), "{stderr}");
    assert!(!stderr.contains("cannot tell the format"), "{stderr}");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(!stdout.contains("report.jsonl"), "{stdout}");
    // Named on its own, a file is read as asked.
    let named = run_code(compactor().arg("stats").arg(out.join("report.jsonl")), 3);
    assert!(String::from_utf8_lossy(&named.stderr).contains("report.jsonl"));
}

/// Issue 41, point 8: in a directory walk, a file that is no transcript is
/// skipped with one counted note (a project's package.json, a binary, text,
/// our own report folder), compacted outputs are read as the sessions they
/// are, and the run succeeds; named on its own, such a file is an error that
/// says what it is. Before, each was "cannot tell the format ... pass --from"
/// or "invalid JSON: expected value (column 1)", and the run exited 3.
#[test]
fn a_walk_skips_files_that_are_not_transcripts_with_one_note() {
    let dir = TestDir::new();
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(fixture("openai/codex_w1t9.jsonl"), project.join("session.jsonl")).unwrap();
    dir.write("project/package.json", r#"{"name": "x", "version": "1.0.0", "scripts": {}}"#);
    dir.write("project/tool.json", b"\x7fELF\x02\x01\x01\x00\x00\x00\x00");
    dir.write("project/notes.jsonl", "# notes, not JSON\n");
    // Our own report folder and compacted outputs, inside the walked folder.
    run_ok(
        compactor()
            .args(["report", "-q", "--window", "32000", "-o"])
            .arg(project.join("rep"))
            .arg(fixture("edge/cjk.jsonl")),
    );
    run_ok(
        compactor()
            .args(["compact", "-q", "--force", "--window", "32000", "-o"])
            .arg(format!("{}/", project.join("out").display()))
            .arg(fixture("edge/cjk.jsonl")),
    );
    let res = run_ok(compactor().arg("stats").arg("--json").arg(&project));
    let err = String::from_utf8_lossy(&res.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("not transcripts")).collect();
    assert_eq!(notes.len(), 1, "one note: {err}");
    let note = notes[0];
    assert!(
        note.starts_with("compactor: note: skipped 5 files that are not transcripts: "),
        "{note}"
    );
    for (file, what) in [
        ("notes.jsonl", "text that is not JSON"),
        ("package.json", "JSON without messages (keys: name, version, scripts)"),
        ("rep/sessions.jsonl", "compactor report rows"),
        ("rep/summary.json", "a compactor report's summary.json"),
        ("tool.json", "binary data, not text"),
    ] {
        let named = format!("{} ({what}", project.join(file).display());
        assert!(note.contains(&named), "{named} in {note}");
    }
    assert!(!err.contains("cannot tell the format") && !err.contains("invalid JSON"), "{err}");
    let doc: Value = serde_json::from_slice(&res.stdout).unwrap();
    let read: Vec<&str> =
        doc["files"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap()).collect();
    let out_file = project.join("out/cjk.jsonl").display().to_string();
    let session = project.join("session.jsonl").display().to_string();
    assert_eq!(read, [out_file.as_str(), session.as_str()], "outputs and sessions are read");
    // compact and report walk the same way.
    let res = run_ok(
        compactor()
            .args(["compact", "--window", "32000", "-o"])
            .arg(format!("{}/", dir.join("again").display()))
            .arg(&project),
    );
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(err.contains("skipped 5 files that are not transcripts"), "{err}");
    assert!(err.contains("2 sessions from 2 inputs"), "skipped files are no inputs: {err}");
    run_ok(compactor().args(["report", "-q", "-o"]).arg(dir.join("r2")).arg(&project));
    // Named on the command line: an error that says what the file is.
    for (file, what) in [
        ("package.json", "not a transcript: JSON without messages (keys: name, version, scripts)"),
        ("tool.json", "not a transcript: binary data, not text"),
        ("rep/summary.json", "not a transcript: a compactor report's summary.json"),
    ] {
        let res = run_code(compactor().arg("stats").arg(project.join(file)), 3);
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(what) && err.contains("--from FORMAT"), "{file}: {err}");
    }
}

/// An array of sessions written on one line is read like the same array
/// pretty-printed, in a directory walk too (it was taken for JSON Lines whose
/// one record holds no messages, and skipped with a note); a JSON Lines line
/// holding such an array gives one session per item, each `file:LINE[i]`.
#[test]
fn a_one_line_array_of_sessions_is_read_one_session_per_item() {
    let dir = TestDir::new();
    let session =
        |id: &str| format!(r#"{{"id":"{id}","messages":[{{"role":"user","content":"hi {id}"}}]}}"#);
    dir.write("in/one.json", format!("[{},{}]", session("a"), session("b")));
    dir.write("in/lines.jsonl", format!("[{},{}]\n{}\n", session("c"), session("d"), session("e")));
    let report = dir.join("r.jsonl");
    let res = run_ok(
        compactor()
            .args(["compact", "-q", "--mode", "none", "-o"])
            .arg(format!("{}/", dir.join("out").display()))
            .arg("--report")
            .arg(&report)
            .arg(dir.join("in")),
    );
    assert!(!String::from_utf8_lossy(&res.stderr).contains("not transcripts"), "{res:?}");
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    let sources: Vec<String> = rows
        .iter()
        .map(|r| {
            let s = r["source"].as_str().unwrap();
            s.rsplit(['/', '\\']).next().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        sources,
        ["lines.jsonl:1[0]", "lines.jsonl:1[1]", "lines.jsonl:2", "one.json[0]", "one.json[1]"]
    );
    // The one-line array is written back as the array document it is.
    let out = read_document(&dir.join("out/one.json"));
    let ids: Vec<&str> =
        out.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn strict_stops_and_writes_nothing() {
    let dir = TestDir::new();
    let out = dir.join("o.jsonl");
    let res = run_code(
        compactor()
            .args(["compact", "--strict", "-o"])
            .arg(&out)
            .arg(fixture("edge/bad_lines.jsonl")),
        2,
    );
    assert!(String::from_utf8_lossy(&res.stderr).contains("--strict"));
    assert!(!out.exists());
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = TestDir::new();
    let f = dir.write("s.jsonl", std::fs::read(fixture("edge/cjk.jsonl")).unwrap());
    let before = std::fs::read(&f).unwrap();
    let res = run_code(compactor().args(["compact", "-o"]).arg(&f).arg(&f), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("would overwrite an input"));
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // Same through a directory output whose target is the input itself.
    let res = run_code(compactor().args(["compact", "-o"]).arg(dir.path()).arg(&f), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("would overwrite an input"));
}

#[test]
fn missing_input_and_bad_flags_are_usage_errors() {
    let res = run_code(compactor().args(["compact", "/no/such/file.jsonl"]), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("/no/such/file.jsonl"));
    run_code(compactor().args(["compact", "--mode", "bogus", "x"]), 2);
    let res = run_code(compactor().args(["compact", "--model", "no-such-model", "-"]), 2);
    assert!(String::from_utf8_lossy(&res.stderr).contains("unknown model"));
}

#[test]
fn model_windows_set_the_trigger() {
    // gpt-4 has an 8,192-token window: threshold 6,963 (85%). The CJK session
    // (~2K tokens) stays under it; under gpt-4o's 128K window so does Task-54's slice.
    let dir = TestDir::new();
    let o = dir.join("o.jsonl");
    let row = |model: &str, rel: &str| -> Value {
        let res = run_ok(
            compactor()
                .args(["compact", "--model", model, "-q", "--report", "-", "-o"])
                .arg(&o)
                .arg(fixture(rel)),
        );
        json_lines(&String::from_utf8_lossy(&res.stdout)).remove(0)
    };
    assert_eq!(row("gpt-4-0613", "edge/cjk.jsonl")["reason"], "under_trigger");
    assert_eq!(row("gpt-4-0613", "openai/claude_code_task54.jsonl")["compacted"], true);
    assert_eq!(row("gpt-4o", "openai/claude_code_task54.jsonl")["reason"], "under_trigger");
    let out = run_ok(compactor().arg("models"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("gpt-4o")
            && text.contains("claude-sonnet-4")
            && text.contains("gemini-2.5-pro"),
        "{text}"
    );
}

#[test]
fn summary_paragraph_on_stderr() {
    let res = run_ok(
        compactor()
            .args(["compact", "--force", "--window", "16000", "-o", "-"])
            .arg(fixture("edge/parallel_calls.jsonl")),
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    // Issue 26: compacted sessions still over the trigger are counted in the line.
    assert!(
        stderr.contains("1 session from 1 input, 1 compacted (0 still over the trigger):"),
        "{stderr}"
    );
    assert!(stderr.contains("% saved"), "{stderr}");
}

#[test]
fn anchors_prints_json_lines_per_session() {
    let res = run_ok(compactor().arg("anchors").arg(fixture("edge/cjk.jsonl")));
    let lines = json_lines(&String::from_utf8_lossy(&res.stdout));
    assert_eq!(lines.len(), 1);
    let a = &lines[0]["anchors"];
    for cat in ["prs", "commits", "branches", "paths", "errors", "handles", "urls"] {
        assert!(a[cat].is_array(), "{cat}");
    }
    assert!(
        a["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["value"].as_str().unwrap().contains("FileNotFoundError")),
        "{a}"
    );
    assert!(!a["paths"].as_array().unwrap().is_empty());
}

#[test]
fn help_has_examples() {
    let res = run_ok(compactor().args(["compact", "--help"]));
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(
        text.contains("Examples:") && text.contains("--mode") && text.contains("--report"),
        "{text}"
    );
}

#[test]
fn report_to_stdout_with_dash() {
    let dir = TestDir::new();
    let res = run_ok(
        compactor()
            .args(["compact", "--force", "--window", "16000", "-q", "--report", "-", "-o"])
            .arg(dir.join("o.jsonl"))
            .arg(fixture("edge/images.jsonl")),
    );
    let rows = json_lines(&String::from_utf8_lossy(&res.stdout));
    assert_eq!(rows.len(), 1);
    assert!(rows[0]["images_stripped"].as_u64().unwrap() >= 1, "{}", rows[0]);
}

#[test]
fn stats_describes_an_archive() {
    let res = run_ok(
        compactor()
            .args(["stats", "--json"])
            .arg(fixture("openai"))
            .arg(fixture("edge/parallel_calls.jsonl")),
    );
    let doc: Value = serde_json::from_slice(&res.stdout).unwrap();
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 5);
    let codex =
        files.iter().find(|f| f["file"].as_str().unwrap().ends_with("codex_w1t9.jsonl")).unwrap();
    assert_eq!(codex["format"], "openai");
    assert_eq!(codex["stats"]["messages"], 45);
    assert_eq!(codex["stats"]["tool_calls_by_name"]["shell_command"], 31);
    let total = &doc["total"];
    let sum: u64 = files.iter().map(|f| f["stats"]["tokens"].as_u64().unwrap()).sum();
    assert_eq!(total["tokens"].as_u64().unwrap(), sum);
    assert_eq!(total["sessions"], 5);
    // The same figures as text.
    let text = run_ok(compactor().arg("stats").arg(fixture("openai/codex_w1t9.jsonl")));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("codex_w1t9.jsonl — openai, 1 session"), "{text}");
    assert!(text.contains("shell_command 31"), "{text}");
}

#[test]
fn redact_masks_secrets_in_everything_written() {
    let dir = TestDir::new();
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let line = serde_json::json!({
        "messages": [{"role": "user", "content": format!("my key is {key}")}, {"role": "assistant", "content": "ok"}],
        "meta": {"env": format!("OPENAI_API_KEY={key}")}
    })
    .to_string();
    let input = dir.write("s.jsonl", format!("{line}\n{{\"broken\": \"{key}\"\n"));
    let (out, rejects, report) =
        (dir.join("o.jsonl"), dir.join("rej.jsonl"), dir.join("rep.jsonl"));
    run_code(
        compactor()
            .args(["compact", "--redact", "-q", "-o"])
            .arg(&out)
            .arg("--rejects")
            .arg(&rejects)
            .arg("--report")
            .arg(&report)
            .arg(&input),
        3,
    );
    for f in [&out, &rejects, &report] {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains(key), "{}: {text}", f.display());
    }
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.matches("[REDACTED:openai_key]").count(), 2, "{written}");
    let row = &json_lines(&std::fs::read_to_string(&report).unwrap())[0];
    assert_eq!(row["secrets_redacted"]["openai_key"], 2);
    // Without --redact an uncompacted session is written as it was read.
    let plain = dir.join("p.jsonl");
    run_code(compactor().args(["compact", "-q", "-o"]).arg(&plain).arg(&input), 3);
    assert!(std::fs::read_to_string(&plain).unwrap().contains(key));
}

/// `--redact` keeps every output JSON: SWE-agent's trajectory holds
/// `"api_key": null`, which masking as text turned into a bare
/// `[REDACTED:password]`; the document writer then failed with an error that
/// named no file. Fails on the binary before `redact::redact_json`.
#[test]
fn redacted_documents_stay_json() {
    let dir = TestDir::new();
    let out = dir.join("out");
    run_ok(
        compactor()
            .args(["compact", "--redact", "-q", "--mode", "lean", "--force", "-o"])
            .arg(format!("{}/", out.display()))
            .arg(fixture("swe_agent/marshmallow_function_calling.traj")),
    );
    let text = std::fs::read_to_string(out.join("marshmallow_function_calling.traj")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(text.contains("\"api_key\": null"), "the literal stays");
    assert!(doc.get("trajectory").is_some_and(|t| t.is_array()), "a trajectory document");
}

/// Ctrl-C in the middle of a run: exit 130, say so, and leave only complete
/// files under final names (no temporary file, no truncated output).
#[cfg(unix)]
#[test]
fn an_interrupted_run_keeps_only_complete_outputs() {
    let dir = TestDir::new();
    // Enough work for many output batches; the signal is sent on observed
    // progress (a first output under its final name), never after a fixed
    // sleep, which a fast machine outran (the whole run ended before it).
    const INPUTS: usize = 240;
    let input = synth_inputs(&dir, INPUTS, 80_000);
    let out = dir.join("out");
    let mut child = compactor()
        .args(["compact", "-j1", "-q", "--window", "32000"])
        .arg(&input)
        .arg("-o")
        .arg(format!("{}/", out.display()))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let outputs = |out: &std::path::Path| -> usize {
        std::fs::read_dir(out).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with('s') && name.ends_with(".jsonl")
                })
                .count()
        })
    };
    let started = std::time::Instant::now();
    while outputs(&out) == 0 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before any output was seen");
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "no output in 120 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(130), "stderr: {stderr}");
    assert!(stderr.contains("interrupted after"), "{stderr}");
    let written: Vec<std::path::PathBuf> = std::fs::read_dir(&out)
        .map(|d| d.map(|e| e.unwrap().path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p: &std::path::PathBuf| !p.ends_with(".compactor-manifest.jsonl"))
        .collect();
    assert!(written.len() < INPUTS, "the run was stopped early");
    for p in &written {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with('s') && name.ends_with(".jsonl"), "stray file {name}");
        let body = std::fs::read_to_string(p).unwrap();
        assert_eq!(body.lines().count(), 2, "{name} is incomplete");
        for l in body.lines() {
            serde_json::from_str::<serde_json::Value>(l).unwrap();
        }
    }
    assert!(stderr.contains(&format!("{} of {INPUTS} output files", written.len())), "{stderr}");
}

/// SIGKILL at several points of a real run: whatever moment the process dies,
/// every file under a final name is complete (temporary files may be left,
/// under dot-names, and a rerun replaces them).
#[cfg(unix)]
#[test]
fn a_killed_run_leaves_only_complete_files_under_final_names() {
    let dir = TestDir::new();
    let input = synth_inputs(&dir, 32, 60_000);
    let mut seen_partial_run = false;
    for (round, delay_ms) in [30u64, 150, 300, 450, 700].into_iter().enumerate() {
        let out = dir.join(&format!("out{round}"));
        let single = dir.join(&format!("single{round}.jsonl"));
        for target in [format!("{}/", out.display()), single.display().to_string()] {
            let mut child = compactor()
                .args(["compact", "-j2", "-q", "--window", "32000"])
                .arg(&input)
                .arg("-o")
                .arg(&target)
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let _ = child.kill(); // SIGKILL
            let status = child.wait().unwrap();
            seen_partial_run |= !status.success();
        }
        let finals: Vec<_> = std::fs::read_dir(&out)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        for p in
            finals.iter().filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        {
            let body = std::fs::read_to_string(p).unwrap();
            assert_eq!(
                body.lines().count(),
                2,
                "{} is incomplete after a kill at {delay_ms} ms",
                p.display()
            );
            for l in body.lines() {
                serde_json::from_str::<Value>(l).unwrap();
            }
        }
        if let Ok(body) = std::fs::read_to_string(&single) {
            assert_eq!(body.lines().count(), 64, "the single output is all or nothing");
        }
    }
    assert!(seen_partial_run, "at least one run was killed before it finished");
}

/// Every option a listed command's `--help` shows is in the README (by its
/// long name, or its short one where the README uses that), so the docs
/// cannot silently fall behind the binary.
#[test]
fn every_option_in_help_is_in_the_readme() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let top = run_ok(compactor().arg("--help"));
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 7, "{top}");
    let mut missing = Vec::new();
    for command in &commands {
        assert!(readme.contains(&format!("compactor {command}")), "command {command} undocumented");
        let help = run_ok(compactor().args([command.as_str(), "--help"]));
        for line in String::from_utf8_lossy(&help.stdout).lines() {
            // clap's option lines: `  -o, --output <DIR>` or `      --force`.
            if !(line.starts_with("  -") || line.starts_with("      --")) {
                continue;
            }
            let names: Vec<&str> = line
                .split([',', ' ', '['])
                .filter(|w| !w.is_empty())
                .take_while(|w| w.starts_with('-'))
                .collect();
            if names.iter().any(|n| matches!(*n, "--help" | "--version")) {
                continue;
            }
            let documented = names.iter().any(|n| {
                readme.contains(&format!("`{n}"))
                    || readme.contains(&format!(" {n} "))
                    || readme.contains(&format!("{n},"))
            });
            if !documented {
                missing.push(format!("{command} {}", names.join(", ")));
            }
        }
    }
    assert!(missing.is_empty(), "options in --help but not in the README: {missing:#?}");
}

/// `-v` names each file's detected format, on every reading command.
#[test]
fn verbose_names_each_files_format_on_every_reading_command() {
    let input = fixture("claude_code/task43_parallel.jsonl");
    for cmd in [&["stats", "-v"][..], &["anchors", "-v"], &["replay", "-v", "--window", "32000"]] {
        let res = run_ok(compactor().args(cmd).arg(&input));
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(
            stderr.contains(&format!("compactor: {}: claude-code", input.display())),
            "{cmd:?}: {stderr}"
        );
    }
    let quiet = run_ok(compactor().arg("stats").arg(&input));
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains(": claude-code"));
}

/// `compact --model auto`: each session gets the window of the model its log
/// names (a Claude Code session 200K, a Codex one 400K), and the report row
/// says so; without it rows carry no such fields.
#[test]
fn compact_model_auto_gives_each_session_its_models_window() {
    let dir = TestDir::new();
    let inputs = [fixture("claude_code/task43_parallel.jsonl"), fixture("codex/w1t9_head.jsonl")];
    let rows = |extra: &[&str], name: &str| {
        let report = dir.join(name);
        run_ok(
            compactor()
                .args(["compact", "-q", "--report"])
                .arg(&report)
                .arg("-o")
                .arg(format!("{}/", dir.join(&format!("{name}-out")).display()))
                .args(extra)
                .args(&inputs),
        );
        json_lines(&std::fs::read_to_string(&report).unwrap())
    };
    let auto = rows(&["--model", "auto"], "auto.jsonl");
    let got: Vec<(u64, &str, &str)> = auto
        .iter()
        .map(|r| {
            (
                r["window"].as_u64().unwrap(),
                r["model"].as_str().unwrap(),
                r["window_from"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(200_000, "claude-opus-4-6", "model"), (400_000, "gpt-5.4", "model")]);
    // Converted to a clean request (which drops the envelopes naming the
    // model), each session still gets its own model's window.
    let clean = rows(&["--model", "auto", "--to", "openai"], "clean.jsonl");
    let windows: Vec<u64> = clean.iter().map(|r| r["window"].as_u64().unwrap()).collect();
    assert_eq!(windows, [200_000, 400_000]);
    let fixed = rows(&["--window", "64000"], "fixed.jsonl");
    assert!(fixed.iter().all(|r| r.get("window_from").is_none() && r.get("model").is_none()));
}

/// The sources file beside `--rejects` is an output like any other: it may
/// not overwrite an input.
#[test]
fn the_rejects_sources_file_never_overwrites_an_input() {
    let dir = TestDir::new();
    let input = dir.write("r.sources.jsonl", std::fs::read(fixture("edge/cjk.jsonl")).unwrap());
    let before = std::fs::read(&input).unwrap();
    let res = run_code(
        compactor()
            .args(["compact", "-o"])
            .arg(dir.join("out.jsonl"))
            .arg("--rejects")
            .arg(dir.join("r.jsonl"))
            .arg(&input),
        2,
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        stderr.contains("r.sources.jsonl: the rejects' sources file would overwrite an input"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert!(!dir.join("out.jsonl").exists());
}

/// `replay --prices` without `--model NAME` prices each session as the model
/// its log names: the same cost as pricing that session alone by name. A
/// session whose log names no model gets no cost and is counted on stderr.
#[test]
fn replay_prices_each_session_at_its_own_models_prices() {
    let dir = TestDir::new();
    let opus = fixture("claude_code/task43_parallel.jsonl");
    let codex = fixture("codex/w1t9_head.jsonl");
    let nameless = fixture("edge/cjk.jsonl");
    let costs = |extra: &[&str], inputs: &[&PathBuf], name: &str| {
        let report = dir.join(name);
        let out = run_ok(
            compactor()
                .args(["replay", "--prices", "--report"])
                .arg(&report)
                .args(extra)
                .args(inputs),
        );
        let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
        let costs: Vec<Option<(f64, f64)>> = rows
            .iter()
            .map(|r| Some((r["cost_original"].as_f64()?, r["cost_live"].as_f64()?)))
            .collect();
        (costs, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (auto, stderr) = costs(&[], &[&opus, &codex, &nameless], "auto.jsonl");
    let (by_opus, _) = costs(&["--model", "claude-opus-4-6"], &[&opus], "opus.jsonl");
    let (by_gpt, _) = costs(&["--model", "gpt-5.4"], &[&codex], "gpt.jsonl");
    assert_eq!(auto.len(), 3);
    assert_eq!(auto[0], by_opus[0]);
    assert_eq!(auto[1], by_gpt[0]);
    assert!(auto[0].is_some_and(|c| c.0 > 0.0) && auto[1].is_some_and(|c| c.0 > 0.0));
    assert_eq!(auto[2], None);
    assert!(
        stderr.contains("1 session without a price, cost left out ((the log names no model) 1)"),
        "{stderr}"
    );
    // Priced as one named model, the same Claude session costs otherwise.
    let (as_gpt, _) = costs(&["--model", "gpt-5.4"], &[&opus], "opus-as-gpt.jsonl");
    assert_ne!(as_gpt[0], by_opus[0]);
}

/// An output directory the user may not write to is named in the error, for
/// every command that writes one. The test drops root (when it runs as root)
/// with `setpriv`, since root writes anywhere.
#[test]
fn an_unwritable_output_directory_is_named_in_the_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TestDir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = dir.write("s.jsonl", std::fs::read(fixture("edge/cjk.jsonl")).unwrap());
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).unwrap();
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let root = std::process::Command::new("id").arg("-u").output().unwrap();
    let as_root = String::from_utf8_lossy(&root.stdout).trim() == "0";
    let command = || {
        let mut cmd = if as_root {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            c.arg(env!("CARGO_BIN_EXE_compactor"));
            c
        } else {
            compactor()
        };
        cmd.current_dir(dir.path());
        cmd
    };
    let cases: [(&[&str], String); 4] = [
        (&["compact", "-o", "locked/out.jsonl"], "locked".into()),
        (&["compact", "-o", "locked/"], "locked".into()),
        (&["compact", "-o", "locked/sub/out.jsonl"], "locked/sub: cannot create directory".into()),
        (&["report", "-o", "locked/report"], "locked/report: cannot create directory".into()),
    ];
    for (args, expected) in cases {
        let out = run_code(command().args(args).arg("s.jsonl"), 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        assert!(stderr.contains("Permission denied"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
}

/// A `compact` run reading standard input into `-o target`, started with
/// `stdin` written and its input left open (so it holds its output's lock until
/// it is given the rest), once its lock file at `lock` names it.
#[cfg(unix)]
fn run_holding(target: &str, lock: &std::path::Path, stdin: &[u8]) -> std::process::Child {
    use std::io::Write;
    let mut child = compactor()
        .args(["compact", "--window", "32000", "-", "-o", target])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.as_mut().unwrap().write_all(stdin).unwrap();
    let started = std::time::Instant::now();
    let pid = format!("\"pid\":{}", child.id());
    while !std::fs::read_to_string(lock).is_ok_and(|t| t.contains(&pid)) {
        assert!(child.try_wait().unwrap().is_none(), "the holding run ended early");
        assert!(started.elapsed().as_secs() < 60, "no lock file at {}", lock.display());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child
}

/// Issue 36 point 6: while a run writes an output, a second `compact` into
/// it (directory or file), and a `report -o` into the same directory, exit 2
/// naming the first run's pid and command, and write nothing; the first run's
/// output is then byte for byte a lone run's, with no lock file left. On the
/// binary before the lock, the second runs exited 0 and mixed their files in.
#[cfg(unix)]
#[test]
fn a_second_run_into_an_output_being_written_is_refused_naming_the_first() {
    use std::io::Write;
    let dir = TestDir::new();
    let sessions =
        run_ok(compactor().args(["synth", "--sessions", "6", "--tokens", "40000"])).stdout;
    let half = sessions.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(2).unwrap().0 + 1;
    let other = synth_inputs(&dir, 2, 20_000);
    let lone = dir.join("lone");
    let mut alone = compactor();
    alone.args(["compact", "--window", "32000", "-", "-o", &format!("{}/", lone.display())]);
    assert_eq!(run_with_stdin(alone, &sessions).status.code(), Some(0));

    let out = dir.join("out");
    let target = format!("{}/", out.display());
    let file = dir.join("one.jsonl");
    for (target, lock) in [
        (target, out.join(".compactor-lock")),
        (file.display().to_string(), dir.join(".one.jsonl.compactor-lock")),
    ] {
        let mut first = run_holding(&target, &lock, &sessions[..half]);
        let holder = format!(
            "{target} is being written by another compactor run (pid {}: compactor compact --window 32000 - -o {target})",
            first.id()
        );
        let second = run_code(
            compactor().args(["compact", "--mode", "legacy"]).arg(&other).args(["-o", &target]),
            2,
        );
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(stderr.contains(&holder), "{stderr}");
        if target.ends_with('/') {
            let report =
                run_code(compactor().args(["report", "-q"]).arg(&other).args(["-o", &target]), 2);
            let stderr = String::from_utf8_lossy(&report.stderr);
            assert!(stderr.contains("is being written by another compactor run (pid"), "{stderr}");
        }
        let mut stdin = first.stdin.take().unwrap();
        stdin.write_all(&sessions[half..]).unwrap();
        drop(stdin);
        let done = first.wait_with_output().unwrap();
        assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
        assert!(!lock.exists(), "the finished run removed its lock file");
    }
    let written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        written,
        [".compactor-manifest.jsonl", "stdin.jsonl"],
        "nothing of the refused runs"
    );
    let want = std::fs::read(lone.join("stdin.jsonl")).unwrap();
    assert!(
        std::fs::read(out.join("stdin.jsonl")).unwrap() == want,
        "the first run's output is a lone run's"
    );
    assert!(std::fs::read(&file).unwrap() == want);
}

/// Issue 36 point 6: the lock dies with its process. A run SIGKILLed while
/// it holds the lock leaves its lock file behind, and the next run into the
/// same output takes it over and finishes.
#[cfg(unix)]
#[test]
fn a_run_after_a_killed_run_takes_over_its_lock() {
    let dir = TestDir::new();
    let out = dir.join("out");
    let target = format!("{}/", out.display());
    let lock = out.join(".compactor-lock");
    let mut killed = run_holding(&target, &lock, b"");
    killed.kill().unwrap(); // SIGKILL
    killed.wait().unwrap();
    assert!(lock.exists(), "a killed run cannot remove its lock file");
    let input = synth_inputs(&dir, 2, 20_000);
    let after = run_ok(
        compactor().args(["compact", "--window", "32000"]).arg(&input).args(["-o", &target]),
    );
    assert!(String::from_utf8_lossy(&after.stderr).contains("sessions from 2 inputs"));
    assert!(out.join("s00.jsonl").exists() && out.join("s01.jsonl").exists());
    assert!(!lock.exists());
}

/// An OpenAI line read by the kept path (JSON Lines out) names its model in a
/// message's Claude Code `message` envelope or an attached Codex
/// `turn_context`: `--model auto` takes the window from it, as from a whole
/// parse. Before the kept path kept `model::reads`' keys parsed, both
/// sessions got the default window (200000, `window_from: default`).
#[test]
fn model_auto_reads_the_model_of_a_kept_openai_line() {
    let dir = TestDir::new();
    let input = dir.join("env.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"id":"s1","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","message":{"id":"m1","model":"gpt-4o"}}]}"#,
            "\n",
            r#"{"id":"s2","messages":[{"role":"user","content":"hi","compactor_attached":[{"type":"turn_context","payload":{"model":"gpt-4o","cwd":"/w"}}]},{"role":"assistant","content":"ok"}]}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = run_ok(
        compactor()
            .args(["compact", "-q", "--from", "openai", "--model", "auto", "--report", "-", "-o"])
            .arg(dir.join("out.jsonl"))
            .arg(&input),
    );
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["model"], "gpt-4o", "{row}");
        assert_eq!(row["window"], 128000, "{row}");
        assert_eq!(row["window_from"], "model", "{row}");
    }
}
