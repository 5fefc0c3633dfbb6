//! Integration tests of the `claude-code` format (src/formats/claude_code.rs):
//! the real corpus (decode, counts, round trip, detection, compaction), the
//! fixtures under `fixtures/claude_code/`, and the CLI end to end.

use crate::corpus::corpus;
use crate::util::{
    TestDir, compactor, files_under, fixture, json_lines, line_records, o200k_meter, run_ok,
};
use compactor::formats::claude_code::ClaudeCode;
use compactor::formats::openai::OpenAi;
use compactor::formats::{Adapter, DETECT_RECORDS, Format, Record};
use compactor::model::{CallMark, History, Role, Session, Source};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The corpus Claude Code logs, sorted.
fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    files_under(&dir.join("claude-code-jsonl"), ".jsonl")
}

/// The fixtures of this dialect, sorted.
fn fixture_files() -> Vec<PathBuf> {
    files_under(&fixture("claude_code"), ".jsonl")
}

/// The log at `path` read `--history full` (the default).
fn decode(path: &Path) -> Session {
    decode_as(path, History::Full)
}

fn decode_as(path: &Path, history: History) -> Session {
    ClaudeCode
        .decode(line_records(path), history)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

fn is_main(v: &Value) -> bool {
    v.get("isSidechain") != Some(&Value::Bool(true))
}

fn ty(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

fn blocks(v: &Value) -> Vec<&Value> {
    match v.pointer("/message/content") {
        Some(Value::Array(a)) => a.iter().collect(),
        _ => Vec::new(),
    }
}

/// What the test counts straight from the file, independently of the adapter.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    /// Main-chain user + assistant events: after the last compact boundary
    /// (`live`), or all but the agent's summaries (`full`).
    chat_events: usize,
    /// Distinct runs of assistant events sharing one `message.id`.
    assistant_messages: usize,
    /// `tool_result` blocks in those user events.
    tool_results: usize,
    /// User events with content other than tool results.
    user_messages: usize,
    /// `tool_use` blocks.
    tool_calls: usize,
    boundaries: usize,
}

fn count(values: &[Value], history: History) -> Counts {
    let mut c = Counts::default();
    let boundary = |v: &Value| {
        ty(v) == "system" && v.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
    };
    c.boundaries = values.iter().filter(|v| boundary(v) && is_main(v)).count();
    let live = match history {
        History::Live => {
            values.iter().rposition(|v| boundary(v) && is_main(v)).map_or(0, |i| i + 1)
        }
        History::Full => 0,
    };
    let agents_summary = |v: &Value| {
        history == History::Full && v.get("isCompactSummary") == Some(&Value::Bool(true))
    };
    let mut last_id: Option<&str> = None;
    for v in &values[live..] {
        if !is_main(v) || agents_summary(v) {
            continue;
        }
        match ty(v) {
            "assistant" => {
                c.chat_events += 1;
                let id = v.pointer("/message/id").and_then(Value::as_str);
                if id.is_none() || id != last_id {
                    c.assistant_messages += 1;
                }
                last_id = id;
                c.tool_calls += blocks(v).iter().filter(|b| ty(b) == "tool_use").count();
            }
            "user" => {
                c.chat_events += 1;
                let bs = blocks(v);
                let results = bs.iter().filter(|b| ty(b) == "tool_result").count();
                c.tool_results += results;
                if results < bs.len() || bs.is_empty() {
                    c.user_messages += 1;
                    last_id = None;
                }
            }
            _ => {}
        }
    }
    c
}

/// The same figures from a decoded session.
fn count_session(s: &Session) -> Counts {
    let role = |r: Role| s.messages.iter().filter(|m| m.role == r).count();
    let mut chat_events: HashSet<String> = HashSet::new();
    for m in &s.messages {
        chat_events.insert(m.extra["uuid"].as_str().unwrap().to_string());
        if let Some(Value::Array(events)) = m.extra.get("claudeCodeEvents") {
            for e in events.iter().skip(1) {
                chat_events.insert(e["event"]["uuid"].as_str().unwrap().to_string());
            }
        }
    }
    Counts {
        chat_events: chat_events.len(),
        assistant_messages: role(Role::Assistant),
        tool_results: role(Role::Tool),
        user_messages: role(Role::User),
        tool_calls: s.messages.iter().map(|m| m.tool_calls.len()).sum(),
        boundaries: s.recorded_compactions.len(),
    }
}

/// Asserts decode + encode gives the file back, value for value and line for
/// line; returns how many lines are also byte-identical.
fn assert_round_trip(path: &Path) -> (usize, usize) {
    let recs = line_records(path);
    let values: Vec<Value> = recs.iter().map(|r| r.value.clone()).collect();
    let live = ClaudeCode.encode(&decode_as(path, History::Live), None);
    assert_eq!(live, values, "{}: read live", path.display());
    let out = ClaudeCode.encode(&decode(path), None);
    assert_eq!(out.len(), values.len(), "{}: line count", path.display());
    for (i, (a, b)) in values.iter().zip(&out).enumerate() {
        assert_eq!(a, b, "{}:{}", path.display(), i + 1);
    }
    let text = std::fs::read_to_string(path).unwrap();
    let same =
        text.lines().zip(&out).filter(|(l, v)| *l == serde_json::to_string(v).unwrap()).count();
    (same, values.len())
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_sessions_decode_with_the_counts_of_the_file() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let files = corpus_files(&dir);
    assert_eq!(files.len(), 4);
    let mut totals = (0, 0, 0);
    for (path, history) in files.iter().flat_map(|p| [(p, History::Full), (p, History::Live)]) {
        let s = decode_as(path, history);
        let values: Vec<Value> = line_records(path).into_iter().map(|r| r.value).collect();
        let expected = count(&values, history);
        assert_eq!(count_session(&s), expected, "{} {history}", path.display());
        assert!(s.tools.is_none());
        assert!(s.messages.iter().all(|m| !m.role.is_system()), "no invented system prompt");
        assert!(s.messages.iter().all(|m| m.meta.timestamp.is_some()));
        // Every provider call has its usage; Claude Code's own messages are no call.
        let synthetic = |m: &&compactor::model::Message| {
            m.extra.get("message").and_then(|x| x.get("model")).and_then(Value::as_str)
                == Some("<synthetic>")
        };
        for m in s.messages.iter().filter(|m| m.role == Role::Assistant) {
            let mark = if synthetic(&m) { CallMark::NoCall } else { CallMark::Opens };
            assert_eq!(m.meta.call, mark, "{}", path.display());
            assert!(m.meta.usage.is_some(), "{}", path.display());
        }
        let passthrough: usize =
            s.messages.iter().map(|m| m.attached.len()).sum::<usize>() + s.trailing.len();
        let merged: usize = s
            .messages
            .iter()
            .filter_map(|m| m.extra.get("claudeCodeEvents")?.as_array())
            .map(|e| e.len() - 1)
            .sum();
        // Every line is a message, a merged part of one, one more tool result of
        // an event, or passthrough.
        let extra_results: usize = values
            .iter()
            .filter(|v| ty(v) == "user")
            .map(|v| blocks(v).iter().filter(|b| ty(b) == "tool_result").count().saturating_sub(1))
            .sum();
        assert_eq!(
            s.messages.len() + merged + passthrough,
            values.len() + extra_results,
            "{}",
            path.display()
        );
        println!(
            "{} ({history}): {} lines, {} chat events -> {} messages ({} user, {} assistant, {} tool), {} tool calls, {} recorded compactions, {} passthrough",
            path.display(),
            values.len(),
            expected.chat_events,
            s.messages.len(),
            expected.user_messages,
            expected.assistant_messages,
            expected.tool_results,
            expected.tool_calls,
            s.recorded_compactions.len(),
            passthrough
        );
        totals.0 += s.messages.len();
        totals.1 += expected.tool_calls;
        totals.2 += 1;
    }
    println!("{} sessions, {} messages, {} tool calls", totals.2, totals.0, totals.1);
}

#[test]
fn corpus_and_fixtures_round_trip_line_for_line() {
    let mut paths = fixture_files();
    if let Some(dir) = corpus() {
        paths.extend(corpus_files(&dir));
    }
    assert!(paths.len() >= 9, "{paths:?}");
    for path in &paths {
        let (same, total) = assert_round_trip(path);
        println!("{}: {total} lines equal, {same} byte-identical", path.display());
    }
}

/// Checks that `out` is a valid Claude Code event stream; `input` is the source
/// file's records (its own orphans and unanswered calls are tolerated).
fn assert_valid_stream(input: &[Value], out: &[Value], what: &str) {
    let mut uuids: HashSet<&str> = HashSet::new();
    let mut first_parent = true;
    for (i, v) in out.iter().enumerate() {
        if is_main(v)
            && let Some(p) = v.get("parentUuid")
        {
            let boundary = v.get("subtype").and_then(Value::as_str) == Some("compact_boundary");
            match p {
                Value::Null => {
                    assert!(first_parent || boundary, "{what}: line {} has a null parent", i + 1)
                }
                Value::String(p) => {
                    assert!(
                        uuids.contains(p.as_str()),
                        "{what}: line {} parent {p} not written before",
                        i + 1
                    )
                }
                other => panic!("{what}: line {} parent {other}", i + 1),
            }
            first_parent = false;
        }
        if let Some(u) = v.get("uuid").and_then(Value::as_str) {
            assert!(uuids.insert(u), "{what}: duplicate uuid {u}");
        }
    }
    let pairs = |values: &[Value]| {
        let mut calls: HashMap<String, usize> = HashMap::new();
        let mut orphans: HashSet<String> = HashSet::new();
        let mut answered: HashSet<String> = HashSet::new();
        for (i, v) in values.iter().enumerate().filter(|(_, v)| is_main(v)) {
            for b in blocks(v) {
                let id = || {
                    b.get(if ty(b) == "tool_use" { "id" } else { "tool_use_id" })
                        .and_then(Value::as_str)
                        .unwrap()
                        .to_string()
                };
                match ty(b) {
                    "tool_use" => {
                        calls.insert(id(), i);
                    }
                    "tool_result" if calls.contains_key(&id()) => {
                        answered.insert(id());
                    }
                    "tool_result" => {
                        orphans.insert(id());
                    }
                    _ => {}
                }
            }
        }
        let unanswered: HashSet<String> =
            calls.keys().filter(|c| !answered.contains(*c)).cloned().collect();
        (calls, orphans, unanswered)
    };
    let (_, orphans_in, unanswered_in) = pairs(input);
    let (calls, orphans, unanswered) = pairs(out);
    assert!(
        orphans.is_subset(&orphans_in),
        "{what}: new orphan results {:?}",
        orphans.difference(&orphans_in)
    );
    assert!(
        unanswered.is_subset(&unanswered_in),
        "{what}: new unanswered calls {:?}",
        unanswered.difference(&unanswered_in)
    );
    assert!(
        !calls.is_empty() || input.is_empty() || what.contains("edge"),
        "{what}: no calls at all"
    );
}

/// Role, text, call ids and answered id of each message: what a re-decode must give back.
fn shape(s: &Session) -> Vec<(String, String, Vec<String>, Option<String>)> {
    s.messages
        .iter()
        .map(|m| {
            (
                m.role.as_str().to_string(),
                m.text_content().into_owned(),
                m.tool_calls.iter().map(|c| format!("{}:{}", c.id, c.arguments)).collect(),
                m.tool_call_id.clone(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_sessions_compact_into_valid_event_streams() {
    let Some(dir) = corpus() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = o200k_meter();
    for path in corpus_files(&dir) {
        let what = path.display().to_string();
        let input: Vec<Value> = line_records(&path).into_iter().map(|r| r.value).collect();
        let session = decode(&path);
        // Lean is the brief's case; legacy and tiered exercise other shapes
        // (a larger verbatim tail; content-only changes without a summary).
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            let what = format!("{what} {mode}");
            let mut policy = Policy::new(mode, 200_000);
            policy.force = true;
            let out = compact(&session, &policy, &meter);
            let problems = verify(&session, &out, &meter);
            assert!(problems.is_empty(), "{what}: {problems:?}");
            let c = &out.compaction;
            assert!(c.compacted, "{what}");
            if mode == Mode::Lean {
                assert!(
                    c.tokens_after < c.tokens_before / 2,
                    "{what}: {} -> {}",
                    c.tokens_before,
                    c.tokens_after
                );
            }
            let object = serde_json::json!({"mode": mode.name()});
            let events = ClaudeCode.encode(&out.session, Some(&object));
            assert!(events.iter().all(|e| e.get("compaction").is_none()), "{what}: compaction");
            assert_valid_stream(&input, &events, &what);
            // It reads back as the same transcript.
            let again = ClaudeCode
                .decode(
                    events
                        .iter()
                        .enumerate()
                        .map(|(i, v)| Record {
                            source: Source {
                                path: what.clone(),
                                line: Some(i as u64 + 1),
                                index: None,
                            },
                            value: v.clone(),
                        })
                        .collect(),
                    History::Full,
                )
                .unwrap();
            assert_eq!(shape(&again), shape(&out.session), "{what}");
            assert_eq!(meter.request(&again), c.tokens_after, "{what}");
            // Every passthrough record survives (moved with the summary when folded).
            let passthrough = |s: &Session| {
                s.messages.iter().map(|m| m.attached.len()).sum::<usize>() + s.trailing.len()
            };
            assert_eq!(passthrough(&out.session), passthrough(&session), "{what}");
            println!(
                "{what}: {} -> {} messages, {} -> {} tokens, {} -> {} lines",
                c.messages_before,
                c.messages_after,
                c.tokens_before,
                c.tokens_after,
                input.len(),
                events.len()
            );
        }
    }
}

/// The first records of a file, as detection sees them.
fn head(path: &Path) -> Vec<Value> {
    line_records(path).into_iter().take(DETECT_RECORDS).map(|r| r.value).collect()
}

#[test]
fn detection_claims_claude_code_logs_and_nothing_else() {
    for path in fixture_files() {
        assert_eq!(Format::detect(&head(&path)), Some(Format::ClaudeCode), "{}", path.display());
    }
    for name in ["claude_code_task54.jsonl", "codex_w1t9.jsonl", "trajectory_richh.jsonl"] {
        let path = fixture(&format!("openai/{name}"));
        assert_eq!(Format::detect(&head(&path)), Some(Format::OpenAi), "{name}");
        assert!(!ClaudeCode.detect(&head(&path)), "{name}");
    }
    let Some(dir) = corpus() else { return };
    for path in corpus_files(&dir) {
        assert_eq!(Format::detect(&head(&path)), Some(Format::ClaudeCode), "{}", path.display());
    }
    // Codex rollouts (type + payload lines) are not ours.
    let mut codex = 0;
    for p in files_under(&dir.join("codex-rollout-jsonl"), "") {
        assert!(!ClaudeCode.detect(&head(&p)), "{}", p.display());
        codex += 1;
    }
    assert_eq!(codex, 3);
}

#[test]
fn no_other_dialect_fixture_is_claimed() {
    let mut seen = 0;
    for dir in ["anthropic", "codex", "edge", "openai", "sharegpt", "swe_agent", "toolbench"] {
        let Ok(entries) = std::fs::read_dir(fixture(dir)) else { continue };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else { continue };
            let first: Vec<Value> = if p.extension().is_some_and(|x| x == "jsonl") {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .take(DETECT_RECORDS)
                    .collect()
            } else {
                serde_json::from_str(&text).into_iter().collect()
            };
            if first.is_empty() {
                continue;
            }
            assert!(!ClaudeCode.detect(&first), "{}", p.display());
            seen += 1;
        }
    }
    assert!(seen >= 10, "{seen}");
}

#[test]
fn edge_compact_boundary_read_live_keeps_only_the_live_context() {
    let s = decode_as(&fixture("claude_code/edge_compact_boundary.jsonl"), History::Live);
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!(c.pre_tokens, Some(155_000));
    assert_eq!(c.trigger.as_deref(), Some("auto"));
    assert_eq!(c.at, None, "live: it happened before the first message read");
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "user", "assistant", "tool", "assistant"]);
    // The compact summary is the first live message; the six records before it
    // (snapshot, four chat events, the boundary) are passthrough, not counted.
    assert!(
        s.messages[0]
            .text_content()
            .starts_with("This session is being continued from a previous conversation")
    );
    assert_eq!(s.messages[0].extra["isCompactSummary"], true);
    assert_eq!(s.messages[0].attached.len(), 6);
    assert_eq!(s.messages[0].attached[5]["subtype"], "compact_boundary");
    assert!(
        s.messages.iter().all(|m| !m.text_content().contains("I will return an error instead"))
    );
    // Streamed thinking + text + tool_use are one message.
    assert_eq!(s.messages[2].content.parts.len(), 2);
    assert_eq!(s.messages[2].tool_calls[0].name, "Edit");
    assert_eq!(s.trailing.len(), 1);
    // Compacting again updates that summary instead of nesting it.
    let mut policy = Policy::new(Mode::Lean, 200_000);
    policy.force = true;
    let out = compact(&s, &policy, &o200k_meter());
    assert!(verify(&s, &out, &o200k_meter()).is_empty());
}

/// Issue 37: read `--history full` (the default), the same log is the
/// conversation as it happened: the four chat events before the boundary,
/// then those after it, with the agent's summary kept apart as a recorded
/// compaction after the first three messages; the log writes back line for
/// line either way.
#[test]
fn edge_compact_boundary_read_full_is_the_whole_conversation() {
    let path = fixture("claude_code/edge_compact_boundary.jsonl");
    let s = decode(&path);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    );
    assert_eq!(s.messages[0].text_content(), "Fix the failing parser test in src/parse.rs");
    assert!(
        s.messages.iter().all(|m| !m.text_content().starts_with("This session is being continued"))
    );
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!(c.at, Some(4), "after the four messages before the boundary (lines 2-5)");
    assert_eq!((c.pre_tokens, c.trigger.as_deref()), (Some(155_000), Some("auto")));
    assert_eq!(c.timestamp, line_records(&path)[5].value["timestamp"].as_str().map(str::to_string));
    let summary = c.summary.text().expect("the isCompactSummary text");
    assert!(summary.starts_with("This session is being continued from a previous conversation"));
    assert!(c.kept.is_empty(), "a plain auto-compaction keeps no messages verbatim");
    // Four provider calls (four message ids), each with its usage.
    let calls: Vec<_> = s.messages.iter().filter(|m| m.opens_call()).collect();
    assert_eq!(calls.len(), 4, "two before the boundary, two after (one streamed in three events)");
    assert!(calls.iter().all(|m| m.meta.usage.is_some()));
    // The boundary and the summary pass through in place: the file comes back.
    let out = ClaudeCode.encode(&s, None);
    let values: Vec<Value> = line_records(&path).into_iter().map(|r| r.value).collect();
    assert_eq!(out, values);
}

#[test]
fn edge_sidechain_events_are_kept_aside() {
    let path = fixture("claude_code/edge_sidechain.jsonl");
    let s = decode(&path);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    let side = &s.messages[2].attached;
    assert_eq!(side.len(), 4);
    assert!(side.iter().all(|v| v["isSidechain"] == true));
    assert_eq!(s.messages[1].tool_calls[0].name, "Task");
    assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("toolu_s1"));
    assert!(s.messages.iter().all(|m| !m.text_content().contains("src/main.rs:12: parse")));
    // Its two responses are provider calls billed to the session (ccusage
    // counts them; scripts/check_ccusage.py), never in the conversation.
    assert_eq!(s.side_calls.len(), 2);
    assert!(s.side_calls.iter().all(|u| u.input_tokens == Some(3)
        && u.cache_read_tokens == Some(9_000)
        && u.output_tokens == Some(40)));
    let dir = crate::util::TestDir::new();
    let report = dir.join("replay.jsonl");
    run_ok(compactor().args(["replay", "-q", "--report"]).arg(&report).arg(&path));
    let row: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let main_calls = s.messages.iter().filter(|m| m.opens_call() && m.meta.usage.is_some()).count();
    assert_eq!(row["recorded"]["side_calls"], 2);
    assert_eq!(row["recorded"]["calls"], main_calls + 2);
    assert_eq!(row["calls"], main_calls, "our modes replay the conversation's calls only");
}

#[test]
fn edge_orphan_result_is_a_tool_message_that_sanitizing_can_drop() {
    let s = decode(&fixture("claude_code/edge_orphan_result.jsonl"));
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]);
    assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("toolu_missing"));
    assert_eq!(s.messages[3].extra["claudeCodeBlock"]["is_error"], true);
    assert_eq!(s.messages[3].text_content(), "make: *** [test] Error 2\n1 failed, 9 passed");
    let problems = compactor::policy::sanitize::validate(&s.messages);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("toolu_missing"));
}

#[test]
fn edge_unknown_event_types_and_odd_blocks_pass_through() {
    let s = decode(&fixture("claude_code/edge_unknown_event.jsonl"));
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "tool", "user", "assistant"]);
    assert_eq!(s.messages[0].attached.len(), 2, "summary and custom-title records");
    assert_eq!(s.messages[1].attached[0]["type"], "future-event");
    assert_eq!(s.messages[1].text_content(), "A plain string reply from an older client.");
    assert!(s.messages[2].content.parts[0].is_image());
    assert_eq!(s.messages[3].tool_calls[0].id, "toolu_u1");
    assert_eq!(s.messages[3].extra["claudeCodeEvents"][0]["blocks"][0], "tool_use:toolu_u1");
    assert_eq!(s.messages[5].text_content(), "Also, please hurry.");
    let kinds: Vec<String> = s.messages[6]
        .content
        .parts
        .iter()
        .map(|p| format!("{p:?}").split('(').next().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["Other", "Other", "Text"]);
    assert_eq!(s.messages[6].attached.len(), 2, "progress and brand-new-type");
    assert_eq!(s.trailing.len(), 1);
    assert_eq!(s.trailing[0]["type"], "last-prompt");
}

#[test]
fn fixtures_compact_into_valid_event_streams() {
    let meter = o200k_meter();
    let mut policy = Policy::new(Mode::Lean, 32_000);
    policy.force = true;
    let mut compacted = Vec::new();
    for path in fixture_files() {
        let what = path.display().to_string();
        let input: Vec<Value> = line_records(&path).into_iter().map(|r| r.value).collect();
        let session = decode(&path);
        let out = compact(&session, &policy, &meter);
        assert!(verify(&session, &out, &meter).is_empty(), "{what}");
        if !out.compaction.compacted {
            continue;
        }
        compacted.push(path.file_name().unwrap().to_string_lossy().to_string());
        let events = ClaudeCode.encode(&out.session, Some(&serde_json::json!({})));
        assert_valid_stream(&input, &events, &format!("{what} edge"));
        let again = ClaudeCode
            .decode(
                events
                    .iter()
                    .map(|v| Record { source: Source::default(), value: v.clone() })
                    .collect(),
                History::Full,
            )
            .unwrap();
        assert_eq!(shape(&again), shape(&out.session), "{what}");
    }
    // The other slices are under the 10K-token lean tail: before issue 26 they
    // were too short to fold; now the nothing-to-fold step (SPEC 5) folds the
    // first group after the head of three of them.
    assert_eq!(
        compacted,
        [
            "task128_mid.jsonl",
            "task128_start.jsonl",
            "task43_boundary.jsonl",
            "task43_orphans.jsonl",
            "task43_start.jsonl",
            "task64_api_errors.jsonl"
        ]
    );
}

#[test]
fn cli_compacts_a_claude_code_log_into_a_claude_code_log() {
    let dir = TestDir::new();
    let input = fixture("claude_code/task128_mid.jsonl");
    let report = dir.join("r.jsonl");
    run_ok(
        compactor()
            .arg("compact")
            .arg(&input)
            .arg("-o")
            .arg(format!("{}/", dir.join("out").display()))
            .args(["--force", "--window", "32000", "--report"])
            .arg(&report)
            .arg("-q"),
    );
    let rows = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["format"], "claude-code");
    assert_eq!(rows[0]["compacted"], true);
    assert_eq!(rows[0]["reason"], "compacted");
    assert_eq!(rows[0]["id"], "91b54192-46a4-408d-88d6-7fbda8b65b9d");
    let written = dir.join("out/task128_mid.jsonl");
    let bytes = std::fs::read(&written).unwrap();
    // Every input line as it was, then our compaction as Claude Code records its own.
    let original = std::fs::read(&input).unwrap();
    assert!(bytes.starts_with(&original), "the input comes first, byte for byte");
    let events = json_lines(&std::fs::read_to_string(&written).unwrap());
    let appended = &events[line_records(&input).len()..];
    assert_eq!(appended[0]["subtype"], "compact_boundary");
    assert!(events.iter().all(|e| e.get("compaction").is_none()));
    assert!(events.iter().any(|e| {
        e.pointer("/message/content")
            .and_then(Value::as_array)
            .and_then(|b| b.first())
            .and_then(|b| b.get("text"))
            .or_else(|| e.pointer("/message/content"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("[CONTEXT COMPACTION"))
    }));
    let input_values: Vec<Value> = line_records(&input).into_iter().map(|r| r.value).collect();
    assert_valid_stream(&input_values, appended, "cli output");
    assert_eq!(
        Format::detect(&events[..events.len().min(DETECT_RECORDS)]),
        Some(Format::ClaudeCode)
    );
    // What a resumed agent reads is our compaction.
    let again = decode_as(&written, History::Live);
    assert_eq!(again.messages.len() as u64, rows[0]["messages_after"].as_u64().unwrap());
    assert_eq!(o200k_meter().request(&again), rows[0]["tokens_after"].as_u64().unwrap());
    // Twice the same bytes.
    run_ok(
        compactor()
            .arg("compact")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("again.jsonl"))
            .args(["--force", "--window", "32000", "-q"]),
    );
    assert_eq!(std::fs::read(&written).unwrap(), std::fs::read(dir.join("again.jsonl")).unwrap());
}

#[test]
fn cli_converts_a_claude_code_log_to_openai_without_losing_a_message() {
    let dir = TestDir::new();
    for name in ["task128_mid.jsonl", "edge_unknown_event.jsonl", "edge_orphan_result.jsonl"] {
        let input = fixture(&format!("claude_code/{name}"));
        let out = dir.join(name);
        run_ok(
            compactor()
                .arg("compact")
                .arg(&input)
                .args(["--to", "openai", "--keep-source-fields", "--mode", "none", "-q", "-o"])
                .arg(&out),
        );
        let lines = json_lines(&std::fs::read_to_string(&out).unwrap());
        assert_eq!(lines.len(), 1, "{name}: one OpenAI session");
        let converted = OpenAi
            .decode(
                vec![Record { source: Source::default(), value: lines[0].clone() }],
                History::Full,
            )
            .unwrap();
        let source = decode(&input);
        assert_eq!(shape(&converted), shape(&source), "{name}");
        for (a, b) in converted.messages.iter().zip(&source.messages) {
            // Every Claude Code field is a field of its own in the OpenAI message.
            for (k, v) in b.extra.iter() {
                assert_eq!(a.extra.get(k), Some(v), "{name}: `{k}`");
            }
            assert_eq!(a.meta.timestamp, b.meta.timestamp, "{name}");
            for (ca, cb) in a.tool_calls.iter().zip(b.tool_calls.iter()) {
                assert_eq!((&ca.id, &ca.name, &ca.arguments), (&cb.id, &cb.name, &cb.arguments));
            }
        }
        // Arguments are JSON text, as the OpenAI API expects.
        for m in &lines[0]["messages"].as_array().unwrap()[..] {
            for c in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                assert!(c["function"]["arguments"].is_string(), "{name}: {c}");
                assert_eq!(c["type"], "function");
            }
        }
    }
    // The fields that only Claude Code has, spot-checked by name.
    let lines = json_lines(&std::fs::read_to_string(dir.join("edge_orphan_result.jsonl")).unwrap());
    let msgs = lines[0]["messages"].as_array().unwrap();
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[3]["claudeCodeBlock"]["is_error"], true);
    assert_eq!(msgs[3]["toolUseResult"], "Error: make: *** [test] Error 2");
    assert_eq!(msgs[1]["message"]["usage"]["cache_read_input_tokens"], 9000);
    assert_eq!(msgs[1]["uuid"], "00000000-0000-4000-8000-000000000002");
    assert!(msgs[1]["content"].is_null());
}

#[test]
fn fixture_counts_are_the_files_counts() {
    let mut by_file = BTreeMap::new();
    for path in fixture_files() {
        let values: Vec<Value> = line_records(&path).into_iter().map(|r| r.value).collect();
        let live = decode_as(&path, History::Live);
        assert_eq!(count_session(&live), count(&values, History::Live), "{}", path.display());
        let s = decode(&path);
        assert_eq!(count_session(&s), count(&values, History::Full), "{}", path.display());
        by_file.insert(path.file_name().unwrap().to_string_lossy().to_string(), s.messages.len());
    }
    assert_eq!(by_file.len(), 11);
    assert_eq!(by_file["edge_compact_boundary.jsonl"], 8, "full: before and after the boundary");
    assert_eq!(by_file["task43_boundary.jsonl"], 27, "full: the conversation of task43_start");
    assert_eq!(by_file["edge_sidechain.jsonl"], 4);
}
