//! Issue 37 points 5-7 end to end: our compaction recorded the way the agent
//! records its own (Claude Code's `compact_boundary`, Codex's `compacted`),
//! read back under both histories; continuation ids on converted outputs;
//! `compact --history full` over the agent's own compactions; subagent logs.

use crate::util::{TestDir, compactor, fixture, json_lines, line_records, run_ok};
use compactor::formats::claude_code::ClaudeCode;
use compactor::formats::codex::Codex;
use compactor::formats::{Adapter, Record};
use compactor::model::{History, RecordedSummary, Session};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Compacts `input` (forced, a 16K window) into `out` with `extra` options,
/// returning the report row.
fn compact(input: &Path, out: &Path, extra: &[&str]) -> Value {
    let report = out.with_extension("report.jsonl");
    run_ok(
        compactor()
            .args(["compact", "-q", "--force", "--window", "16000"])
            .args(extra)
            .arg("-o")
            .arg(out)
            .arg("--report")
            .arg(&report)
            .arg(input),
    );
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 1);
    rows[0].clone()
}

fn read(dialect: &dyn Adapter, path: &Path, history: History) -> Session {
    dialect.decode(line_records(path), history).unwrap()
}

fn values(path: &Path) -> Vec<Value> {
    line_records(path).into_iter().map(|r| r.value).collect()
}

/// A message as the tests compare them: role, text, calls (id, name,
/// arguments), the call answered.
type Shape = (String, String, Vec<(String, String, String)>, Option<String>);

/// A message's [`Shape`].
fn shape(m: &Value) -> Shape {
    let text = match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) if parts.iter().all(|p| p.get("text").is_some()) => {
            parts.iter().map(|p| p["text"].as_str().unwrap_or("")).collect::<Vec<_>>().join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let calls = m["tool_calls"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let f = &c["function"];
                    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
                    (s(&c["id"]), s(&f["name"]), s(&f["arguments"]))
                })
                .collect()
        })
        .unwrap_or_default();
    let answered = m["tool_call_id"].as_str().map(str::to_string);
    (m["role"].as_str().unwrap_or("").to_string(), text, calls, answered)
}

/// The messages of the one OpenAI record written to `path`, as [`shape`]s.
fn openai_messages(path: &Path) -> Vec<Shape> {
    let records = json_lines(&std::fs::read_to_string(path).unwrap());
    assert_eq!(records.len(), 1);
    records[0]["messages"].as_array().unwrap().iter().map(shape).collect()
}

/// `--history live` of our output, converted, against `--to openai` of the
/// same compaction (both lossless, so neither is normalized first): the
/// messages from `skip` on.
fn assert_live_is_the_compaction(input: &Path, ours: &Path, dir: &TestDir, skip: usize) {
    let direct = dir.join("direct.jsonl");
    compact(input, &direct, &["--to", "openai", "--keep-source-fields"]);
    let back = dir.join("back.jsonl");
    run_ok(
        compactor()
            .args(["compact", "-q", "--history", "live", "--mode", "none", "--to", "openai"])
            .args(["--keep-source-fields", "-o"])
            .arg(&back)
            .arg(ours),
    );
    let (want, got) = (openai_messages(&direct), openai_messages(&back));
    assert_eq!(want.len(), got.len(), "message count");
    assert_eq!(want[skip..], got[skip..], "message for message");
}

/// Decode + encode under both histories gives the file's records back.
fn assert_round_trips(dialect: &dyn Adapter, path: &Path) {
    let want = values(path);
    for history in [History::Full, History::Live] {
        let s = read(dialect, path, history);
        assert_eq!(dialect.encode(&s, None), want, "{history}");
    }
}

/// `--mode none` writes the file back byte for byte, under both histories.
fn assert_mode_none_is_identity(path: &Path, dir: &TestDir) {
    for history in ["full", "live"] {
        let out = dir.join(&format!("none-{history}.jsonl"));
        run_ok(
            compactor()
                .args(["compact", "-q", "--mode", "none", "--history", history, "-o"])
                .arg(&out)
                .arg(path),
        );
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(path).unwrap(), "{history}");
    }
}

#[test]
fn a_compacted_claude_code_log_appends_our_compaction_as_claude_code_does() {
    let dir = TestDir::new();
    let input = fixture("claude_code/task128_start.jsonl");
    let out = dir.join("out.jsonl");
    let row = compact(&input, &out, &[]);
    assert_eq!(row["compacted"], true);
    assert!(std::fs::read(&out).unwrap().starts_with(&std::fs::read(&input).unwrap()));
    let events = values(&out);
    let original = values(&input);
    let appended = &events[original.len()..];

    // The boundary, against Claude Code's own (the fixture's) field for field.
    let theirs = values(&fixture("claude_code/edge_compact_boundary.jsonl"));
    let their_boundary = theirs.iter().find(|e| e["subtype"] == "compact_boundary").unwrap();
    let boundary = &appended[0];
    for key in their_boundary.as_object().unwrap().keys() {
        assert!(boundary.get(key).is_some(), "boundary lacks `{key}`: {boundary}");
    }
    assert_eq!(boundary["type"], "system");
    assert_eq!(boundary["content"], "Conversation compacted");
    assert_eq!(boundary["level"], "info");
    assert_eq!(boundary["isMeta"], false);
    assert!(boundary["parentUuid"].is_null());
    let last_uuid = original.iter().rev().find_map(|e| e["uuid"].as_str()).unwrap();
    assert_eq!(boundary["logicalParentUuid"], last_uuid);
    let session = original.iter().find_map(|e| e.get("sessionId")).unwrap();
    assert_eq!(&boundary["sessionId"], session);
    let meta = &boundary["compactMetadata"];
    // Forced under the trigger: a manual compaction, as a user's /compact is.
    assert_eq!(meta["trigger"], "manual");
    assert_eq!(meta["preTokens"], row["tokens_before"]);

    // The summary, against the agent's own summary event.
    let their_summary = theirs.iter().find(|e| e["isCompactSummary"] == true).unwrap();
    let summaries: Vec<&Value> =
        appended.iter().filter(|e| e["isCompactSummary"] == true).collect();
    assert_eq!(summaries.len(), 1);
    let summary = summaries[0];
    for key in their_summary.as_object().unwrap().keys() {
        assert!(summary.get(key).is_some(), "summary lacks `{key}`");
    }
    assert_eq!(summary["isVisibleInTranscriptOnly"], true);

    // The kept tail is a preserved segment Claude Code's loader can relink:
    // from its tail back to its head by parentUuid, the head hanging from
    // the anchor, the anchor our summary.
    let segment = &meta["preservedSegment"];
    assert_eq!(segment["anchorUuid"], summary["uuid"]);
    let by_uuid: std::collections::HashMap<&str, &Value> =
        appended.iter().map(|e| (e["uuid"].as_str().unwrap(), e)).collect();
    let mut at = segment["tailUuid"].as_str().unwrap();
    let head = segment["headUuid"].as_str().unwrap();
    let mut steps = 0;
    while at != head {
        at = by_uuid[at]["parentUuid"].as_str().unwrap();
        steps += 1;
        assert!(steps < appended.len(), "the walk from tail to head breaks");
    }
    assert_eq!(by_uuid[head]["parentUuid"], segment["anchorUuid"]);

    // One chain from the boundary: every parent an earlier appended event;
    // no uuid of the file twice; message ids kept (a call is counted once).
    let mut seen: HashSet<&str> = HashSet::new();
    for e in appended {
        if let Some(p) = e["parentUuid"].as_str() {
            assert!(seen.contains(p), "parent {p} not written before");
        }
        seen.insert(e["uuid"].as_str().unwrap());
    }
    let all: Vec<&str> = events.iter().filter_map(|e| e["uuid"].as_str()).collect();
    assert_eq!(all.len(), all.iter().collect::<HashSet<_>>().len(), "uuids are unique");
    let input_ids: HashSet<&str> =
        original.iter().filter_map(|e| e.pointer("/message/id")?.as_str()).collect();
    for e in
        appended.iter().filter(|e| e["type"] == "assistant" && e.get("isCompactSummary").is_none())
    {
        assert!(input_ids.contains(e.pointer("/message/id").unwrap().as_str().unwrap()));
    }
}

#[test]
fn our_claude_code_compaction_reads_back_under_both_histories() {
    let dir = TestDir::new();
    for name in ["task128_start.jsonl", "task43_orphans.jsonl", "task64_api_errors.jsonl"] {
        let input = fixture(&format!("claude_code/{name}"));
        let out = dir.join(name);
        let row = compact(&input, &out, &[]);
        // Full: the input's conversation, our compaction a recorded one.
        let before = read(&ClaudeCode, &input, History::Full);
        let full = read(&ClaudeCode, &out, History::Full);
        assert_eq!(full.messages, before.messages, "{name}: full is the original history");
        assert_eq!(full.recorded_compactions.len(), before.recorded_compactions.len() + 1);
        let ours = full.recorded_compactions.last().unwrap();
        assert_eq!(ours.at, Some(before.messages.len()));
        assert_eq!(ours.trigger.as_deref(), Some("manual"));
        assert_eq!(ours.pre_tokens, row["tokens_before"].as_u64());
        let RecordedSummary::Text(text) = &ours.summary else { panic!("{name}: no summary") };
        assert!(text.starts_with("[CONTEXT COMPACTION"), "{name}");
        let kept = row["messages_after"].as_u64().unwrap() as usize - 1;
        assert_eq!(ours.kept.len(), kept, "{name}: head and tail are what it kept");
        // Live: what the compaction holds, message for message.
        let live = read(&ClaudeCode, &out, History::Live);
        assert_eq!(live.messages.len() as u64, row["messages_after"].as_u64().unwrap());
        assert_live_is_the_compaction(&input, &out, &dir, 0);
        assert_round_trips(&ClaudeCode, &out);
        assert_mode_none_is_identity(&out, &dir);
    }
}

#[test]
fn a_compacted_codex_rollout_appends_a_compacted_line_that_reads_back() {
    let dir = TestDir::new();
    // A slice of the corpus rollout switch247__fleet-release, with its own compactions.
    let input = fixture("codex/fleet_compacted.jsonl");
    let out = dir.join("out.jsonl");
    let row = compact(&input, &out, &[]);
    assert_eq!(row["compacted"], true);
    assert!(std::fs::read(&out).unwrap().starts_with(&std::fs::read(&input).unwrap()));
    let lines = values(&out);
    let original = values(&input);
    assert_eq!(lines.len(), original.len() + 1);
    let ours = lines.last().unwrap();
    // Codex's own compacted lines in the same file are the layout to match.
    let theirs = original.iter().find(|l| l["type"] == "compacted").unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(ours), keys(theirs));
    assert_eq!(keys(&ours["payload"]), ["message", "replacement_history"]);
    let summary = ours["payload"]["message"].as_str().unwrap();
    let history = ours["payload"]["replacement_history"].as_array().unwrap();
    assert!(history.iter().any(|i| i["content"][0]["text"] == summary));

    let before = read(&Codex, &input, History::Full);
    let full = read(&Codex, &out, History::Full);
    assert_eq!(full.messages, before.messages, "full is the original history");
    assert_eq!(full.recorded_compactions.len(), before.recorded_compactions.len() + 1);
    assert_eq!(
        full.recorded_compactions.last().unwrap().summary,
        RecordedSummary::Text(summary.to_string())
    );
    let live = read(&Codex, &out, History::Live);
    assert_eq!(live.messages.len() as u64, row["messages_after"].as_u64().unwrap());
    // The system prompt is the rollout's own (session_meta is not rewritten),
    // everything after it is the compaction's.
    assert_eq!(live.messages[0], before.messages[0]);
    assert_live_is_the_compaction(&input, &out, &dir, 1);
    assert_round_trips(&Codex, &out);
    assert_mode_none_is_identity(&out, &dir);
}

#[test]
fn converted_outputs_carry_a_continuation_id_and_their_parent() {
    let dir = TestDir::new();
    let input = fixture("claude_code/task128_start.jsonl");
    let id = |to: &str, mode: &str| {
        let out = dir.join(&format!("{to}-{mode}.jsonl"));
        let row = compact(&input, &out, &["--to", to, "--mode", mode]);
        let record = json_lines(&std::fs::read_to_string(&out).unwrap()).remove(0);
        let parent = "91b54192-46a4-408d-88d6-7fbda8b65b9d";
        assert_eq!(record["parent_id"], parent, "{to}");
        assert_eq!(record["compaction"]["parent_id"], parent, "{to}");
        assert_eq!(record["compaction"]["id"], record["id"], "{to}");
        assert_eq!(row["id"], parent, "the report row is the input session's");
        assert_eq!(row["continuation_id"], record["id"], "{to}");
        let id = record["id"].as_str().unwrap().to_string();
        assert!(id.starts_with(&format!("{parent}~")) && id.len() == parent.len() + 17, "{id}");
        id
    };
    let lean = id("openai", "lean");
    assert_eq!(lean, id("sharegpt", "lean"), "the policy decides, not the target");
    assert_eq!(lean, id("openai", "lean"), "deterministic");
    assert_ne!(lean, id("openai", "legacy"), "another policy, another continuation");
    // Parquet: the continuation is the `id` column's (compaction column: its parent).
    let parquet = dir.join("out.parquet");
    compact(&input, &parquet, &["--to", "parquet"]);
    let back = dir.join("back.jsonl");
    run_ok(compactor().args(["compact", "-q", "--mode", "none", "-o"]).arg(&back).arg(&parquet));
    let record = json_lines(&std::fs::read_to_string(&back).unwrap()).remove(0);
    assert_eq!(record["id"], lean);
    assert_eq!(record["compaction"]["parent_id"], "91b54192-46a4-408d-88d6-7fbda8b65b9d");
}

/// The agent's summary of the boundary fixture (the text of its
/// `isCompactSummary` event).
fn agent_summary(path: &Path) -> String {
    let summary = values(path).into_iter().find(|e| e["isCompactSummary"] == true).unwrap();
    summary["message"]["content"].as_str().unwrap().to_string()
}

/// The summaries a Codex rollout's `compacted` lines hold readable.
fn codex_summaries(path: &Path) -> Vec<String> {
    values(path)
        .into_iter()
        .filter(|l| l["type"] == "compacted")
        .filter_map(|l| l["payload"]["message"].as_str().map(str::to_string))
        .filter(|m| !m.is_empty())
        .collect()
}

#[test]
fn compact_history_full_folds_the_original_messages_not_the_agents_summary() {
    let dir = TestDir::new();
    // A Codex rollout with a compacted line in Codex's form and a readable
    // summary: depot_tail compacted once (legacy, so that lean's summary
    // below differs from it).
    let rollout = dir.join("depot_compacted.jsonl");
    compact(&fixture("codex/depot_tail.jsonl"), &rollout, &["--mode", "legacy"]);
    let claude = fixture("claude_code/task43_boundary.jsonl");
    let cases = [
        (claude.clone(), vec![agent_summary(&claude)]),
        (rollout.clone(), codex_summaries(&rollout)),
    ];
    for (input, summaries) in &cases {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(summaries.len(), 1, "{name}: the agent's summary is in the log");
        let mut rows = Vec::new();
        for history in ["full", "live"] {
            let out = dir.join(&format!("{history}-{name}"));
            let row = compact(input, &out, &["--history", history, "--to", "openai"]);
            assert_eq!(row["compacted"], true, "{name} {history}");
            let record = json_lines(&std::fs::read_to_string(&out).unwrap()).remove(0);
            let texts: Vec<String> =
                record["messages"].as_array().unwrap().iter().map(|m| shape(m).1).collect();
            if history == "full" {
                assert!(
                    texts.iter().all(|t| !t.contains(summaries[0].as_str())),
                    "{name}: the agent's summary is not a message of the full output"
                );
            }
            rows.push(row);
        }
        let before = |r: &Value| r["messages_before"].as_u64().unwrap();
        assert!(
            before(&rows[0]) > before(&rows[1]),
            "{name}: full reads more input messages ({}) than live ({})",
            before(&rows[0]),
            before(&rows[1])
        );
    }
    // The corpus slice's own compactions are encrypted (remote): nothing
    // readable to leave out, and full still reads the items before them.
    let fleet = fixture("codex/fleet_compacted.jsonl");
    assert!(codex_summaries(&fleet).is_empty());
    let full = read(&Codex, &fleet, History::Full);
    assert_eq!(full.recorded_compactions.len(), 1);
    assert!(full.recorded_compactions.iter().all(|c| c.summary == RecordedSummary::Encrypted));
}

#[test]
fn a_subagent_log_is_a_session_of_its_own_linked_to_its_parent_call() {
    let dir = TestDir::new();
    let project = fixture("claude_code_projects");
    let out = dir.join("out/");
    let report = dir.join("report.jsonl");
    run_ok(
        compactor()
            .args(["compact", "-q", "--mode", "none", "-o"])
            .arg(&out)
            .arg("--report")
            .arg(&report)
            .arg(&project),
    );
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 2, "the sidecar agent-*.meta.json is no session");
    let parent = "5e55a7e0-0000-4000-8000-0000000000a9";
    let sub = rows.iter().find(|r| r["id"] == "agent-a3b42f3ddb24715ba").unwrap();
    assert_eq!(sub["parent_session_id"], parent);
    assert_eq!(sub["parent_call_id"], "toolu_01VYYy2mwzePfPEMwhJ9gcDb");
    assert_eq!(sub["messages_before"], 6, "its sidechain is its conversation");
    let main = rows.iter().find(|r| r["id"] == parent).unwrap();
    assert!(main.get("parent_session_id").is_none(), "the parent is no subagent");

    // Counted apart by project.
    let stats = run_ok(compactor().args(["stats", "--by", "project", "--json"]).arg(&project));
    let doc: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(doc["total"]["sessions"], 2);
    assert_eq!(doc["total"]["subagent_sessions"], 1);

    // Converted, it names the session and the call that started it.
    let converted = dir.join("sub.jsonl");
    let file =
        project.join(format!("-home-dev-repo/{parent}/subagents/agent-a3b42f3ddb24715ba.jsonl"));
    run_ok(compactor().args(["compact", "-q", "--to", "openai", "-o"]).arg(&converted).arg(&file));
    let record = json_lines(&std::fs::read_to_string(&converted).unwrap()).remove(0);
    assert_eq!(record["id"], "agent-a3b42f3ddb24715ba");
    assert_eq!(record["parent_session_id"], parent);
    assert_eq!(record["parent_call_id"], "toolu_01VYYy2mwzePfPEMwhJ9gcDb");

    // Read without the parent's log beside it, the call is unknown, the rest stands.
    let alone = dir.join("alone.jsonl");
    std::fs::copy(&file, &alone).unwrap();
    let s = ClaudeCode
        .decode(
            line_records(&alone)
                .into_iter()
                .map(|r| Record { source: r.source, value: r.value })
                .collect(),
            History::Full,
        )
        .unwrap();
    assert_eq!(s.id, "agent-a3b42f3ddb24715ba");
    assert_eq!(s.messages.len(), 6);
    assert_eq!(s.parent.as_ref().map(|p| p.session_id.as_str()), Some(parent));
    assert_round_trips(&ClaudeCode, &file);
}
