//! Integration tests of the `codex` format (see src/formats/codex.rs): every
//! corpus rollout decodes with independently counted messages, calls and
//! results, round-trips value for value, is detected as Codex, compacts with
//! every promise kept, and goes through the binary (same format and `--to openai`).

use crate::corpus::corpus;
use crate::util::*;
use compactor::formats::codex::Codex;
use compactor::formats::{Adapter, Format, Record};
use compactor::model::{CallMark, History, RecordedSummary, Role, Session, Source};
use compactor::policy::{Mode, Policy, compact, verify::verify};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The rollout at `path` read `--history full` (the default).
fn decode(path: &Path) -> Session {
    decode_as(path, History::Full)
}

fn decode_as(path: &Path, history: History) -> Session {
    Codex.decode(line_records(path), history).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn corpus_files() -> Option<Vec<PathBuf>> {
    let files = files_under(&corpus()?.join("codex-rollout-jsonl"), ".jsonl");
    assert_eq!(files.len(), 3);
    Some(files)
}

fn fixture_files() -> Vec<PathBuf> {
    let files = files_under(&fixture("codex"), ".jsonl");
    assert!(files.len() >= 3, "{files:?}");
    files
}

/// Messages, tool calls and tool results counted straight from the lines,
/// following the rules of the adapter's header (not its code): the system
/// prompt, message items, one message per run of consecutive calls, one per
/// output whose call is live. Read `live`, before the last `compacted` only
/// the prompt counts, and its replacement history counts as live items; read
/// `full`, every item counts and a `compacted` line only ends a call group.
fn independent_counts(lines: &[Value], history: History) -> (usize, usize, usize) {
    let last_compacted = match history {
        History::Live => lines.iter().rposition(|l| l["type"] == "compacted"),
        History::Full => None,
    };
    let mut items: Vec<&Value> = Vec::new();
    let mut messages = 0;
    for (i, l) in lines.iter().enumerate() {
        if l["type"] == "session_meta" && l["payload"]["base_instructions"]["text"].is_string() {
            if messages == 0 {
                messages += 1;
            }
            continue;
        }
        match last_compacted {
            Some(k) if i < k => {}
            Some(k) if i == k => {
                if let Some(h) = l["payload"]["replacement_history"].as_array() {
                    // A boundary: calls never group across it.
                    items.push(&Value::Null);
                    items.extend(h.iter());
                    items.push(&Value::Null);
                } else if l["payload"]["message"].as_str().is_some_and(|s| !s.is_empty()) {
                    messages += 1;
                    items.push(&Value::Null);
                }
            }
            _ if l["type"] == "response_item" => items.push(&l["payload"]),
            _ if l["type"] == "compacted" => items.push(&Value::Null),
            _ => {}
        }
    }
    let (mut calls, mut results) = (0, 0);
    let mut live: HashSet<&str> = HashSet::new();
    let mut in_group = false;
    for p in items {
        match p["type"].as_str().unwrap_or("") {
            "message" => {
                messages += 1;
                in_group = false;
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                calls += 1;
                live.insert(p["call_id"].as_str().unwrap());
                if !in_group {
                    messages += 1;
                }
                in_group = true;
            }
            "function_call_output" | "custom_tool_call_output"
                if live.contains(p["call_id"].as_str().unwrap()) =>
            {
                results += 1;
                messages += 1;
                in_group = false;
            }
            "" => in_group = false,
            _ => {}
        }
    }
    (messages, calls, results)
}

/// Like `util::session_counts`, but every `tool` message counts as a result.
fn counts(s: &Session) -> (usize, usize, usize) {
    let calls = s.messages.iter().map(|m| m.tool_calls.len()).sum();
    let results = s.messages.iter().filter(|m| m.role == Role::Tool).count();
    (s.messages.len(), calls, results)
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_rollouts_decode_with_independent_counts() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let mut total = (0, 0, 0);
    for (path, history) in files.iter().flat_map(|p| [(p, History::Full), (p, History::Live)]) {
        let s = decode_as(path, history);
        let lines: Vec<Value> = line_records(path).into_iter().map(|r| r.value).collect();
        let got = counts(&s);
        println!(
            "{} ({history}): {} messages, {} tool calls, {} results, {} recorded compactions",
            path.display(),
            got.0,
            got.1,
            got.2,
            s.recorded_compactions.len()
        );
        assert_eq!(got, independent_counts(&lines, history), "{} {history}", path.display());
        assert_eq!(s.messages[0].role, Role::System);
        assert!(s.messages[0].text_content().starts_with("You are Codex"));
        total = (total.0 + got.0, total.1 + got.1, total.2 + got.2);
    }
    println!("codex corpus: {} messages, {} tool calls, {} results", total.0, total.1, total.2);
}

#[test]
fn corpus_and_fixtures_roundtrip_line_for_line() {
    let mut files = corpus_files().unwrap_or_default();
    files.extend(fixture_files());
    for (path, history) in files.iter().flat_map(|p| [(p, History::Full), (p, History::Live)]) {
        let rs = line_records(path);
        let original: Vec<Value> = rs.iter().map(|r| r.value.clone()).collect();
        let s = Codex.decode(rs, history).unwrap();
        let out = Codex.encode(&s, None);
        assert_eq!(out.len(), original.len(), "{}", path.display());
        for (i, (a, b)) in out.iter().zip(&original).enumerate() {
            assert!(a == b, "{} line {}: {a:.300} != {b:.300}", path.display(), i + 1);
            // Key order is kept too.
            assert_eq!(a.to_string(), b.to_string(), "{} line {}", path.display(), i + 1);
        }
    }
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_sessions_compact_and_keep_their_promises() {
    let Some(files) = corpus_files() else { panic!("{}", crate::corpus::ABSENT) };
    let meter = o200k_meter();
    for path in &files {
        let s = decode(path);
        for mode in [Mode::Lean, Mode::Legacy] {
            for window in [32_000, 200_000] {
                let mut policy = Policy::new(mode, window);
                policy.force = true;
                let out = compact(&s, &policy, &meter);
                let problems = verify(&s, &out, &meter);
                assert!(problems.is_empty(), "{} {mode} {window}: {problems:?}", path.display());
                let c = &out.compaction;
                assert!(c.compacted, "{} {mode} {window}", path.display());
                assert!(c.tokens_after < c.tokens_before, "{} {mode} {window}", path.display());
                // The written rollout reads back as Codex, message for message.
                let lines = Codex.encode(&out.session, None);
                assert_eq!(Format::detect(&lines[..lines.len().min(16)]), Some(Format::Codex));
                let again = Codex
                    .decode(
                        lines
                            .into_iter()
                            .map(|value| Record { source: Source::default(), value })
                            .collect(),
                        History::Full,
                    )
                    .unwrap();
                // Known miss (README, "Long turns"): a summary merged into an
                // assistant message with calls is written as a Codex message
                // item plus its call items, which read back as two messages.
                let split = c.summary_merged
                    && out
                        .session
                        .messages
                        .get(c.sections.head_messages)
                        .is_some_and(|m| m.has_tool_calls());
                let n = out.session.messages.len() + usize::from(split);
                assert_eq!(again.messages.len(), n, "{}", path.display());
                if split {
                    let grown = meter.request(&again).saturating_sub(c.tokens_after);
                    assert!(grown <= 8, "{} {mode}: {grown} more tokens read back", path.display());
                } else {
                    assert_eq!(counts(&again), counts(&out.session), "{} {mode}", path.display());
                    assert_eq!(meter.request(&again), c.tokens_after, "{} {mode}", path.display());
                }
                println!(
                    "{} {mode} {window}: {} -> {} tokens, {} -> {} messages",
                    path.display(),
                    c.tokens_before,
                    c.tokens_after,
                    c.messages_before,
                    c.messages_after
                );
            }
        }
    }
}

#[test]
fn detection_picks_codex_and_only_codex() {
    let mut files = corpus_files().unwrap_or_default();
    files.extend(fixture_files());
    for path in &files {
        let first: Vec<Value> = line_records(path).into_iter().take(16).map(|r| r.value).collect();
        assert_eq!(Format::detect(&first), Some(Format::Codex), "{}", path.display());
    }
    // Never OpenAI sessions (a converted Codex session included) or Claude Code lines.
    for rel in ["openai/codex_w1t9.jsonl", "openai/claude_code_task54.jsonl", "edge/cjk.jsonl"] {
        let first: Vec<Value> = line_records(&fixture(rel)).into_iter().map(|r| r.value).collect();
        assert!(!Codex.detect(&first), "{rel}");
    }
    if let Some(dir) = corpus() {
        for path in files_under(&dir.join("claude-code-jsonl"), ".jsonl") {
            let first: Vec<Value> =
                line_records(&path).into_iter().take(16).map(|r| r.value).collect();
            assert!(!Codex.detect(&first), "{}", path.display());
        }
    }
}

/// The fixture's lines, parsed.
fn fixture_lines(name: &str) -> Vec<Value> {
    line_records(&fixture("codex").join(name)).into_iter().map(|r| r.value).collect()
}

#[test]
fn cli_compacts_a_rollout_into_a_rollout() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    let report = dir.join("report.jsonl");
    let input = fixture("codex/depot_tail.jsonl");
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
    assert_eq!(rows[0]["format"], "codex");
    assert_eq!(rows[0]["compacted"], true);
    assert!(rows[0]["tokens_after"].as_u64() < rows[0]["tokens_before"].as_u64(), "{}", rows[0]);
    let text = std::fs::read_to_string(out.join("depot_tail.jsonl")).unwrap();
    assert!(!text.contains('\u{fdd0}'), "a private marker leaked");
    // Every input line as it was, then one `compacted` line, as Codex records its own.
    let original_text = std::fs::read_to_string(&input).unwrap();
    assert!(text.starts_with(&original_text), "the input comes first, byte for byte");
    let lines = json_lines(&text);
    let original = fixture_lines("depot_tail.jsonl");
    assert_eq!(lines.len(), original.len() + 1);
    assert!(lines.iter().all(|l| l.get("compaction").is_none()), "report only");
    assert_eq!(Format::detect(&lines[..16]), Some(Format::Codex));
    let compacted = lines.last().unwrap();
    assert_eq!(compacted["type"], "compacted");
    assert_eq!(compacted["timestamp"], original.last().unwrap()["timestamp"]);
    let summary = compacted["payload"]["message"].as_str().unwrap();
    assert!(summary.starts_with("[CONTEXT COMPACTION"), "{summary}");
    let history = compacted["payload"]["replacement_history"].as_array().unwrap();
    // The summary is a message of the replacement history, in Codex's part types.
    let at = history
        .iter()
        .position(|i| i["type"] == "message" && i["content"][0]["text"] == summary)
        .expect("the summary in the replacement history");
    let part = &history[at]["content"][0]["type"];
    assert!(part == "input_text" || part == "output_text", "{part}");
    // The system prompt stays in session_meta, untouched; the history holds none.
    assert_eq!(lines[0], original[0]);
    assert!(history.iter().all(|i| i["role"] != "system"));
    // A resumed agent reads our compaction.
    let s = Codex
        .decode(
            lines.iter().map(|v| Record { source: Source::default(), value: v.clone() }).collect(),
            History::Live,
        )
        .unwrap();
    assert_eq!(s.messages.len() as u64, rows[0]["messages_after"].as_u64().unwrap());
}

#[test]
fn cli_converts_to_openai_keeping_every_message_call_and_result() {
    let dir = TestDir::new();
    let out = dir.join("out/");
    for name in ["w1t9_head.jsonl", "fleet_compacted.jsonl", "edge_items.jsonl"] {
        let input = fixture("codex").join(name);
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
                .arg(&input),
        );
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(!text.contains('\u{fdd0}'), "{name}: a private marker leaked");
        let rows = json_lines(&text);
        assert_eq!(rows.len(), 1, "{name}");
        let codex = decode(&input);
        let msgs = rows[0]["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), codex.messages.len(), "{name}");
        for (m, c) in msgs.iter().zip(&codex.messages) {
            assert_eq!(m["role"], c.role.as_str(), "{name}");
            let ids: Vec<&str> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["id"].as_str().unwrap())
                .collect();
            let want: Vec<&str> = c.tool_calls.iter().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, want, "{name}");
            for (t, ct) in m["tool_calls"].as_array().into_iter().flatten().zip(c.tool_calls.iter())
            {
                assert_eq!(t["function"]["name"], ct.name.as_str());
                assert_eq!(t["function"]["arguments"], ct.arguments.as_str());
            }
            assert_eq!(m["tool_call_id"].as_str(), c.tool_call_id.as_deref(), "{name}");
            if c.role == Role::Tool {
                assert_eq!(
                    m["content"].as_str().map(str::to_string),
                    Some(c.text_content().into_owned()).filter(|_| m["content"].is_string())
                );
            }
        }
        // And it reads back as an OpenAI session with the same shape.
        let back = compactor::formats::openai::OpenAi
            .decode(
                vec![Record { source: Source::default(), value: rows[0].clone() }],
                History::Full,
            )
            .unwrap();
        assert_eq!(counts(&back), counts(&codex), "{name}");
        assert_eq!(back.messages[0].text_content(), codex.messages[0].text_content());
    }
}

#[test]
fn compacted_item_replaces_earlier_history_read_live() {
    let s = decode_as(&fixture("codex/edge_compacted.jsonl"), History::Live);
    assert_eq!(s.recorded_compactions.len(), 1);
    assert_eq!(s.recorded_compactions[0].pre_tokens, Some(950));
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "developer", "user", "user", "assistant", "tool", "assistant"]
    );
    // The replacement history is the live context; what it replaced is not.
    assert_eq!(s.messages[1].text_content(), "Build the CLI in src/main.rs.");
    assert_eq!(s.messages[1].meta.timestamp.as_deref(), Some("2026-01-01T00:00:09.000Z"));
    assert!(s.messages.iter().all(|m| m.text_content() != "Starting with the argument parser."));
    // call_c2 was made before the compaction: its output is a passthrough record.
    assert!(s.messages.iter().all(|m| m.tool_call_id.as_deref() != Some("call_c2")));
    assert_eq!(counts(&s), (8, 1, 1));

    // Forced compaction keeps the `compacted` line, its encrypted item and the new turns.
    let meter = o200k_meter();
    let mut policy = Policy::new(Mode::Lean, 16_000);
    policy.force = true;
    let out = compact(&s, &policy, &meter);
    assert!(verify(&s, &out, &meter).is_empty());
    let lines = Codex.encode(&out.session, None);
    let compacted: Vec<&Value> = lines.iter().filter(|l| l["type"] == "compacted").collect();
    assert_eq!(compacted.len(), 1);
    let history = compacted[0]["payload"]["replacement_history"].as_array().unwrap();
    assert!(history.iter().any(|h| h["type"] == "compaction"));
    assert_eq!(history[0]["content"][0]["text"], "Build the CLI in src/main.rs.");

    // The real one: a Codex Desktop session compacted mid-run.
    let s = decode_as(&fixture("codex/fleet_compacted.jsonl"), History::Live);
    assert_eq!(s.recorded_compactions.len(), 1);
    let live_users = s.messages.iter().filter(|m| m.role == Role::User).count();
    let line = fixture_lines("fleet_compacted.jsonl")
        .into_iter()
        .find(|l| l["type"] == "compacted")
        .unwrap();
    let history = line["payload"]["replacement_history"].as_array().unwrap();
    let history_users = history.iter().filter(|h| h["role"] == "user").count();
    assert_eq!(live_users, history_users, "only the replacement history's user messages are live");
}

/// Issue 37: read `--history full`, the rollout is the conversation as it
/// happened (the items before the `compacted` line included); the
/// compaction is recorded after the seven messages before it, its summary
/// encrypted (Codex's remote compaction), what it kept (its replacement
/// history's messages) read apart; and the file writes back line for line.
#[test]
fn compacted_item_read_full_is_a_recorded_compaction() {
    let path = fixture("codex/edge_compacted.jsonl");
    let s = decode(&path);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "developer",
            "user",
            "assistant",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(s.messages[3].text_content(), "Starting with the argument parser.");
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!(c.at, Some(7));
    assert_eq!(c.pre_tokens, Some(950));
    assert_eq!(c.summary, RecordedSummary::Encrypted);
    let kept: Vec<&str> = c.kept.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(kept, ["user", "developer", "user"]);
    // One call per response: the reply's text opens it, its call continues it.
    let marks: Vec<CallMark> =
        s.messages.iter().filter(|m| m.role == Role::Assistant).map(|m| m.meta.call).collect();
    use CallMark::{Continues, Opens};
    assert_eq!(marks, [Opens, Continues, Opens, Opens, Opens]);
    assert!(s.messages[3].meta.usage.is_some(), "the token_count after the call");
    assert!(s.messages[4].meta.usage.is_none(), "the call's usage is on its first message");
    let out = Codex.encode(&s, None);
    let original: Vec<Value> = line_records(&path).into_iter().map(|r| r.value).collect();
    assert_eq!(out, original);
}

#[test]
fn legacy_compacted_message_is_a_user_summary_read_live() {
    let s = decode_as(&fixture("codex/edge_compacted_legacy.jsonl"), History::Live);
    assert_eq!(s.recorded_compactions.len(), 1);
    assert_eq!(s.messages[1].role, Role::User);
    assert_eq!(
        s.messages[1].text_content(),
        "Summary so far: the crate was renamed to demo-cli in Cargo.toml."
    );
    assert!(s.messages.iter().all(|m| m.text_content() != "Renamed in Cargo.toml."));
    assert_eq!(counts(&s), (6, 1, 1));
}

#[test]
fn odd_items_pass_through_and_usage_is_read() {
    let s = decode(&fixture("codex/edge_items.jsonl"));
    assert_eq!(counts(&s), (12, 4, 4));
    // The output of a call the log never recorded is not a result.
    assert!(s.messages.iter().all(|m| m.tool_call_id.as_deref() != Some("call_e9")));
    let kept: Vec<&Value> = s.messages.iter().flat_map(|m| m.attached.iter()).collect();
    for ty in ["ghost_snapshot", "web_search_call", "future_item_type", "function_call_output"] {
        assert!(kept.iter().any(|v| v["payload"]["type"] == ty), "{ty} kept in place");
    }
    // Reasoning between parallel calls stays in the one group of three calls.
    let group = &s.messages[5];
    let names: Vec<&str> = group.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["shell_command", "apply_patch", "local_shell"]);
    assert!(group.tool_calls[1].arguments.starts_with(r#"{"input":"*** Begin Patch"#));
    // Codex counts cached tokens inside input_tokens (1,200 with 600 cached):
    // the model holds them apart, as Anthropic does.
    // The usage is on the message that opened the call (the group, or the
    // reply's text before it in the same response).
    let opener = s.messages[..=5].iter().rev().find(|m| m.opens_call()).unwrap();
    assert!(group.meta.call == CallMark::Opens || group.meta.usage.is_none());
    let usage = opener.meta.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.prompt_tokens()),
        (Some(600), Some(600), Some(50), Some(1200))
    );
    // The repeated count (same total) gave nothing to the next message.
    assert_eq!(s.messages[9].meta.usage.unwrap().prompt_tokens(), Some(1400));
    // Encrypted reasoning costs nothing.
    let meter = o200k_meter();
    let mut bare = group.clone();
    bare.content.parts_mut().clear();
    assert_eq!(meter.message(group), meter.message(&bare));
    // Reasoning that no message follows stays at the end, as a record.
    assert_eq!(s.trailing.last().unwrap()["payload"]["type"], "reasoning");
}
