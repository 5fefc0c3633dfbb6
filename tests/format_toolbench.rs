//! Integration tests of the `toolbench` format (see src/formats/toolbench.rs):
//! every corpus answer decodes (the last `train_messages` list) with
//! independently counted messages, calls and results, round-trips as the same
//! JSON document, is detected as ToolBench, compacts with every promise kept,
//! and goes through the binary; answers with only a search tree have no messages.

use crate::corpus::{corpus, sessions};
use crate::util::*;
use compactor::formats::openai::OpenAi;
use compactor::formats::toolbench::ToolBench;
use compactor::formats::{Adapter, Format, Record};
use compactor::model::{History, Role, Session, Source};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use serde_json::Value;
use std::path::PathBuf;

fn decode_value(value: Value) -> Session {
    ToolBench.decode(vec![Record { source: Source::default(), value }], History::Full).unwrap()
}

fn corpus_files() -> Option<Vec<PathBuf>> {
    let files = files_under(&corpus()?.join("toolbench-dfsdt"), ".json");
    assert_eq!(files.len(), 15);
    Some(files)
}

fn fixture_files() -> Vec<PathBuf> {
    let f = files_under(&fixture("toolbench"), ".json");
    assert_eq!(f.len(), 3, "{f:?}");
    f
}

/// From the JSON: messages of the last list, assistant `function_call`s, and
/// `function` messages that follow an unanswered call.
fn independent_counts(doc: &Value) -> (usize, usize, usize) {
    let Some(last) = doc["answer_generation"]["train_messages"].as_array().and_then(|l| l.last())
    else {
        return (0, 0, 0);
    };
    let last = last.as_array().unwrap();
    let (mut calls, mut results, mut open) = (0, 0, false);
    for m in last {
        if m["role"] == "assistant" && m["function_call"]["name"].is_string() {
            calls += 1;
            open = true;
        } else if m["role"] == "function" && open {
            results += 1;
            open = false;
        }
    }
    (last.len(), calls, results)
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_answers_decode_with_independent_counts() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let (mut total, mut empty) = ((0, 0, 0), 0);
    for path in &files {
        let doc = read_document(path);
        let s = decode_value(doc.clone());
        let got = session_counts(&s);
        println!("{}: {} messages, {} tool calls, {} results", path.display(), got.0, got.1, got.2);
        assert_eq!(got, independent_counts(&doc), "{}", path.display());
        assert_eq!(
            s.tools.as_ref(),
            doc["answer_generation"].get("function"),
            "{}",
            path.display()
        );
        empty += usize::from(s.messages.is_empty());
        total = (total.0 + got.0, total.1 + got.1, total.2 + got.2);
    }
    println!("toolbench corpus: {} messages, {} tool calls, {} results", total.0, total.1, total.2);
    assert_eq!(empty, 2, "two answers hold only the search tree");
}

#[test]
fn corpus_and_fixtures_roundtrip_as_the_same_document() {
    let mut all = corpus_files().unwrap_or_default();
    all.extend(fixture_files());
    for path in &all {
        let doc = read_document(path);
        let s = decode_value(doc.clone());
        let out = ToolBench.encode(&s, Some(&serde_json::json!({"mode": "lean"})));
        assert_eq!(out.len(), 1);
        assert!(out[0] == doc, "{}", path.display());
        assert_eq!(out[0].to_string(), doc.to_string(), "{}: key order", path.display());
    }
}

#[test]
fn detection_picks_toolbench_through_the_reader() {
    if let Some(dir) = corpus() {
        let found = sessions(&dir.join("toolbench-dfsdt"));
        assert_eq!(found.len(), 15);
        assert!(found.iter().all(|(f, _)| f == "toolbench"));
        for path in files_under(&dir.join("agent-trajectory-json"), ".json") {
            assert!(!ToolBench.detect(&[read_document(&path)]), "{}", path.display());
        }
    }
    let found = sessions(&fixture("toolbench"));
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|(f, _)| f == "toolbench"));
    let lines = json_lines(&std::fs::read_to_string(fixture("openai/codex_w1t9.jsonl")).unwrap());
    assert!(!ToolBench.detect(&lines));
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_sessions_compact_and_keep_their_promises() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = o200k_meter();
    let mut compacted = 0;
    for path in &files {
        let doc = read_document(path);
        let s = decode_value(doc.clone());
        for mode in [Mode::Lean, Mode::Legacy] {
            for window in [32_000, 200_000] {
                let mut policy = Policy::new(mode, window);
                policy.force = true;
                let out = compact(&s, &policy, &meter);
                let problems = verify(&s, &out, &meter);
                assert!(problems.is_empty(), "{} {mode} {window}: {problems:?}", path.display());
                compacted += usize::from(out.compaction.compacted);
                let written = ToolBench.encode(&out.session, None).remove(0);
                assert_eq!(Format::detect(std::slice::from_ref(&written)), Some(Format::ToolBench));
                let again = decode_value(written.clone());
                assert_eq!(
                    session_counts(&again),
                    session_counts(&out.session),
                    "{} {mode}",
                    path.display()
                );
                assert_eq!(
                    meter.request(&again),
                    out.compaction.tokens_after,
                    "{}",
                    path.display()
                );
                assert_eq!(written["tree"], doc["tree"]);
                assert_eq!(written["compare_candidates"], doc["compare_candidates"]);
            }
        }
    }
    // At most 12 messages each: a forced compaction rarely has a middle to fold.
    println!("toolbench corpus: {compacted} of {} forced runs compacted", files.len() * 4);
}

#[test]
fn cli_writes_an_answer_in_the_same_format() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    let report = dir.join("report.jsonl");
    let mut cmd = compactor();
    cmd.args(["compact", "-q", "--force", "--window", "16000", "-o"])
        .arg(&out)
        .arg("--report")
        .arg(&report);
    for path in fixture_files() {
        cmd.arg(path);
    }
    run_ok(&mut cmd);
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 3);
    for path in fixture_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let row = rows.iter().find(|r| r["source"].as_str().unwrap().ends_with(&name)).unwrap();
        assert_eq!(row["format"], "toolbench");
        let text = std::fs::read_to_string(out.join(&name)).unwrap();
        assert!(!text.contains('\u{fdd0}'));
        let written: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(Format::detect(std::slice::from_ref(&written)), Some(Format::ToolBench));
        let s = decode_value(written.clone());
        assert_eq!(s.messages.len() as u64, row["messages_after"].as_u64().unwrap(), "{name}");
        if row["compacted"] == false {
            assert_eq!(written, read_document(&path), "{name}: unchanged");
        }
    }
    let empty = rows.iter().find(|r| r["source"].as_str().unwrap().contains("G1_69")).unwrap();
    assert_eq!(empty["messages_before"], 0);
}

#[test]
fn cli_converts_to_openai_keeping_every_message_call_and_result() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    let path = fixture("toolbench/G1_57_ChatGPT_DFS_woFilter_w2.json");
    run_ok(
        compactor()
            .args([
                "compact",
                "-q",
                "--mode",
                "none",
                "--to",
                "openai",
                "--keep-source-fields",
                "-o",
            ])
            .arg(&out)
            .arg(&path),
    );
    let text = std::fs::read_to_string(out.join("G1_57_ChatGPT_DFS_woFilter_w2.json")).unwrap();
    assert!(!text.contains('\u{fdd0}'));
    let rows = json_lines(&text);
    assert_eq!(rows.len(), 1);
    let tb = decode_value(read_document(&path));
    assert_eq!(session_counts(&tb), (11, 4, 3));
    let back = OpenAi
        .decode(vec![Record { source: Source::default(), value: rows[0].clone() }], History::Full)
        .unwrap();
    assert_eq!(session_counts(&back), session_counts(&tb));
    assert_eq!(back.tools, tb.tools);
    let m = &rows[0]["messages"];
    assert_eq!(m[2]["tool_calls"][0]["id"], "toolbench-call-2");
    assert_eq!(m[3]["role"], "tool");
    assert_eq!(m[3]["tool_call_id"], "toolbench-call-2");
    assert_eq!(m[3]["name"], m[2]["tool_calls"][0]["function"]["name"]);
    // The earlier search lists pass through; the transcript is `messages`.
    assert_eq!(rows[0]["answer_generation"]["train_messages"].as_array().unwrap().len(), 4);
}

#[test]
fn answer_without_train_messages_is_an_empty_session() {
    let path = fixture("toolbench/G1_69_ChatGPT_DFS_woFilter_w2.json");
    let doc = read_document(&path);
    assert!(doc["answer_generation"].get("train_messages").is_none());
    let s = decode_value(doc.clone());
    assert!(s.messages.is_empty());
    assert!(s.tools.as_ref().is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty())));
    assert_eq!(ToolBench.encode(&s, None).remove(0), doc);
    let meter = o200k_meter();
    let mut policy = Policy::new(Mode::Lean, 16_000);
    policy.force = true;
    let out = compact(&s, &policy, &meter);
    assert!(!out.compaction.compacted);
    assert!(verify(&s, &out, &meter).is_empty());
}

#[test]
fn legacy_calls_get_synthetic_ids_and_the_finish_call_stays_in_flight() {
    let s = decode_value(read_document(&fixture("toolbench/G1_57_ChatGPT_DFS_woFilter_w2.json")));
    let last = s.messages.last().unwrap();
    assert_eq!(last.tool_calls[0].name, "Finish");
    assert_eq!(last.tool_calls[0].id, format!("toolbench-call-{}", s.messages.len() - 1));
    assert!(compactor::policy::sanitize::validate(&s.messages).is_empty(), "pairs are valid");
    // A text reply with a call: both kept on one message.
    let both = s.messages.iter().find(|m| m.has_tool_calls() && m.has_visible_text()).unwrap();
    assert!(both.text_content().starts_with("Based on the current state"));
    let retry = s.messages.iter().find(|m| m.extra.contains_key("valid")).unwrap();
    assert_eq!(retry.role, Role::User);
}
