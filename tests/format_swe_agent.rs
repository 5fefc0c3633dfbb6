//! Integration tests of the `swe-agent` format (see src/formats/swe_agent.rs):
//! every corpus trajectory decodes with independently counted messages, calls
//! and results, round-trips as the same JSON document, is detected as
//! SWE-agent, compacts with every promise kept, and goes through the binary.

use crate::corpus::{corpus, sessions};
use crate::util::*;
use compactor::formats::openai::OpenAi;
use compactor::formats::swe_agent::SweAgent;
use compactor::formats::{Adapter, Format, Record};
use compactor::model::{History, Role, Session, Source};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use serde_json::Value;
use std::path::PathBuf;

fn decode_value(value: Value) -> Session {
    SweAgent.decode(vec![Record { source: Source::default(), value }], History::Full).unwrap()
}

fn corpus_files() -> Option<Vec<PathBuf>> {
    let files = files_under(&corpus()?.join("swe-agent-traj"), ".traj");
    assert_eq!(files.len(), 22);
    Some(files)
}

fn fixture_files() -> Vec<PathBuf> {
    let mut f = files_under(&fixture("swe_agent"), ".traj");
    f.extend(files_under(&fixture("swe_agent"), ".traj.json"));
    assert_eq!(f.len(), 5, "{f:?}");
    f
}

/// History entries, tool calls (`tool_calls` items) and `tool` entries with one id, from the JSON.
fn independent_counts(doc: &Value) -> (usize, usize, usize) {
    let history = doc.get("history").or_else(|| doc.get("messages")).unwrap().as_array().unwrap();
    let calls = history.iter().filter_map(|h| h["tool_calls"].as_array()).map(Vec::len).sum();
    let results = history
        .iter()
        .filter(|h| {
            h["role"] == "tool"
                && (h["tool_call_ids"].as_array().is_some_and(|ids| ids.len() == 1)
                    || h["tool_call_id"].is_string())
        })
        .count();
    (history.len(), calls, results)
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_trajectories_decode_with_independent_counts() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let (mut total, mut function_calling) = ((0, 0, 0), 0);
    for path in &files {
        let doc = read_document(path);
        let s = decode_value(doc.clone());
        let got = session_counts(&s);
        println!("{}: {} messages, {} tool calls, {} results", path.display(), got.0, got.1, got.2);
        assert_eq!(got, independent_counts(&doc), "{}", path.display());
        assert_eq!(s.messages[0].role, Role::System, "{}", path.display());
        function_calling += usize::from(got.1 > 0);
        total = (total.0 + got.0, total.1 + got.1, total.2 + got.2);
    }
    println!("swe-agent corpus: {} messages, {} tool calls, {} results", total.0, total.1, total.2);
    assert_eq!(function_calling, 5, "five function-calling trajectories, the rest text-action");
}

#[test]
fn corpus_and_fixtures_roundtrip_as_the_same_document() {
    let mut all = corpus_files().unwrap_or_default();
    all.extend(fixture_files());
    for path in &all {
        let doc = read_document(path);
        let s = decode_value(doc.clone());
        let out = SweAgent.encode(&s, Some(&serde_json::json!({"mode": "lean"})));
        assert_eq!(out.len(), 1);
        assert!(out[0] == doc, "{}", path.display());
        assert_eq!(out[0].to_string(), doc.to_string(), "{}: key order", path.display());
    }
}

#[test]
fn detection_picks_swe_agent_through_the_reader() {
    if let Some(dir) = corpus() {
        let found = sessions(&dir.join("swe-agent-traj"));
        assert_eq!(found.len(), 22);
        assert!(
            found.iter().all(|(f, _)| f == "swe-agent"),
            "{:?}",
            found.iter().map(|x| &x.0).collect::<Vec<_>>()
        );
        for path in files_under(&dir.join("toolbench-dfsdt"), ".json") {
            assert!(!SweAgent.detect(&[read_document(&path)]), "{}", path.display());
        }
    }
    let found = sessions(&fixture("swe_agent"));
    assert_eq!(found.len(), 5);
    assert!(found.iter().all(|(f, _)| f == "swe-agent"));
    for rel in ["openai/swe_agent_marshmallow.jsonl", "edge/unknown_roles.jsonl"] {
        let lines = json_lines(&std::fs::read_to_string(fixture(rel)).unwrap());
        assert!(!SweAgent.detect(&lines[..1]), "{rel}");
        assert_eq!(Format::detect(&lines), Some(Format::OpenAi), "{rel}");
    }
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_sessions_compact_and_keep_their_promises() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = o200k_meter();
    let mut compacted = 0;
    for path in &files {
        let s = decode_value(read_document(path));
        for mode in [Mode::Lean, Mode::Legacy] {
            for window in [32_000, 200_000] {
                let mut policy = Policy::new(mode, window);
                policy.force = true;
                let out = compact(&s, &policy, &meter);
                let problems = verify(&s, &out, &meter);
                assert!(problems.is_empty(), "{} {mode} {window}: {problems:?}", path.display());
                let c = &out.compaction;
                compacted += usize::from(c.compacted);
                let written = SweAgent.encode(&out.session, None).remove(0);
                assert_eq!(Format::detect(std::slice::from_ref(&written)), Some(Format::SweAgent));
                let again = decode_value(written.clone());
                assert_eq!(
                    session_counts(&again),
                    session_counts(&out.session),
                    "{} {mode}",
                    path.display()
                );
                assert_eq!(meter.request(&again), c.tokens_after, "{} {mode}", path.display());
                // What is not the transcript is untouched.
                let doc = read_document(path);
                for key in ["trajectory", "info", "environment", "replay_config"] {
                    assert_eq!(written.get(key), doc.get(key), "{} {key}", path.display());
                }
            }
        }
    }
    println!("swe-agent corpus: {compacted} of {} forced runs compacted", files.len() * 4);
    assert!(compacted >= files.len(), "{compacted}");
}

#[test]
fn cli_compacts_a_trajectory_into_a_trajectory() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    let report = dir.join("report.jsonl");
    let input = fixture("swe_agent/marshmallow_function_calling.traj");
    run_ok(
        compactor()
            .args(["compact", "-q", "--force", "--window", "16000", "-o"])
            .arg(&out)
            .arg("--report")
            .arg(&report)
            .arg(&input),
    );
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["format"], "swe-agent");
    assert_eq!(rows[0]["compacted"], true, "{}", rows[0]);
    assert!(rows[0]["tokens_after"].as_u64() < rows[0]["tokens_before"].as_u64());
    let text = std::fs::read_to_string(out.join("marshmallow_function_calling.traj")).unwrap();
    assert!(!text.contains('\u{fdd0}'), "a private marker leaked");
    let written: Value = serde_json::from_str(&text).unwrap();
    assert!(written.get("compaction").is_none(), "report only");
    assert_eq!(Format::detect(std::slice::from_ref(&written)), Some(Format::SweAgent));
    let s = decode_value(written.clone());
    assert_eq!(s.messages.len() as u64, rows[0]["messages_after"].as_u64().unwrap());
    let original = read_document(&input);
    assert_eq!(written["trajectory"], original["trajectory"]);
    assert_eq!(written["info"], original["info"]);
    let history = written["history"].as_array().unwrap();
    assert!(
        history
            .iter()
            .any(|h| h["content"].as_str().is_some_and(|t| t.starts_with("[CONTEXT COMPACTION")))
    );
    assert_eq!(history.last(), original["history"].as_array().unwrap().last());
}

#[test]
fn cli_converts_to_openai_keeping_every_message_call_and_result() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    for path in fixture_files() {
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
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(out.join(&name)).unwrap();
        assert!(!text.contains('\u{fdd0}'), "{name}");
        let rows = json_lines(&text);
        assert_eq!(rows.len(), 1, "{name}");
        let swe = decode_value(read_document(&path));
        let back = OpenAi
            .decode(
                vec![Record { source: Source::default(), value: rows[0].clone() }],
                History::Full,
            )
            .unwrap();
        assert_eq!(session_counts(&back), session_counts(&swe), "{name}");
        for (a, b) in back.messages.iter().zip(&swe.messages) {
            assert_eq!(a.role, b.role, "{name}");
            assert_eq!(a.text_content(), b.text_content(), "{name}");
            assert_eq!(a.tool_call_id, b.tool_call_id, "{name}");
            let ids = |m: &compactor::model::Message| {
                m.tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
            };
            assert_eq!(ids(a), ids(b), "{name}");
        }
    }
}

#[test]
fn text_action_and_function_calling_formats() {
    // Old text-action format: actions in the assistant's text, outputs as user turns.
    let s = decode_value(read_document(&fixture("swe_agent/pydicom_text_action.traj")));
    assert_eq!(session_counts(&s), (26, 0, 0));
    assert_eq!(s.messages[1].extra["is_demo"], true);
    assert!(s.messages[1].text_content().starts_with("Here is a demonstration"));
    let assistant = s.messages.iter().find(|m| m.role == Role::Assistant).unwrap();
    let action = assistant.extra["action"].as_str().unwrap();
    assert!(assistant.text_content().contains(action.trim()), "the action is in the text");
    let users = s.messages.iter().filter(|m| m.role == Role::User).count();
    assert_eq!(users, 13, "a demonstration, the task and 11 observations, all user turns");

    // Function-calling format: tool_calls answered by tool_call_ids, written back as lists.
    let s = decode_value(read_document(&fixture("swe_agent/marshmallow_function_calling.traj")));
    assert_eq!(session_counts(&s), (24, 11, 11));
    let tool = s.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    let call = &s.messages.iter().find(|m| !m.tool_calls.is_empty()).unwrap().tool_calls[0];
    assert_eq!(tool.tool_call_id.as_deref(), Some(call.id.as_str()));
    let written = SweAgent.encode(&s, None).remove(0);
    let entry =
        written["history"].as_array().unwrap().iter().find(|h| h["role"] == "tool").unwrap();
    assert_eq!(entry["tool_call_ids"], serde_json::json!([call.id]));
    assert!(entry.get("tool_call_id").is_none());
}

#[test]
fn mini_swe_agent_reads_as_swe_agent() {
    let path = fixture("swe_agent/mini_swe_agent.traj.json");
    let doc = read_document(&path);
    assert_eq!(Format::detect(std::slice::from_ref(&doc)), Some(Format::SweAgent));
    assert!(OpenAi.detect(std::slice::from_ref(&doc)), "it is an OpenAI record too; order decides");
    let s = decode_value(doc.clone());
    assert_eq!(session_counts(&s), (7, 0, 0));
    assert_eq!(s.messages[2].extra["extra"]["response"]["id"], "r1");
    assert_eq!(SweAgent.encode(&s, Some(&serde_json::json!({}))).remove(0), doc);
    let plain = OpenAi
        .decode(vec![Record { source: Source::default(), value: doc }], History::Full)
        .unwrap();
    assert_eq!(plain.messages, s.messages);
}
