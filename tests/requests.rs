//! Issue 25: converted sessions are requests their APIs accept. Each repair
//! on a real slice, by the messages it writes and the count it reports; the
//! binary's `--to openai` / `--to anthropic` / `--keep-source-fields`; the
//! refusal to concatenate file dialects.

use crate::util::{TestDir, compactor, fixture, json_lines, line_records, run_code, run_ok};
use compactor::formats::Format;
use compactor::model::{History, Role, Session};
use compactor::request::{Api, Repair, check, normalize};
use serde_json::Value;

fn decode(rel: &str, format: Format) -> Session {
    format.adapter().decode(line_records(&fixture(rel)), History::Full).unwrap()
}

/// One line per message: role, then `[call ids]` or `(answered id)`, then
/// `+r` when it has reasoning.
fn skeleton(s: &Session) -> Vec<String> {
    s.messages
        .iter()
        .map(|m| {
            let mut line = m.role.as_str().to_string();
            if !m.tool_calls.is_empty() {
                let ids: Vec<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
                line += &format!("[{}]", ids.join(","));
            }
            if let Some(id) = &m.tool_call_id {
                line += &format!("({id})");
            }
            if m.reasoning.is_some() {
                line += "+r";
            }
            line
        })
        .collect()
}

/// The Chat Completions request of a normalized session.
fn openai(s: &Session) -> Value {
    Format::OpenAi.adapter().encode(s, None).remove(0)
}

#[test]
fn codex_context_logged_inside_a_step_waits_for_its_result() {
    let input = decode("codex/w1t9_developer_in_step.jsonl", Format::Codex);
    let (out, repairs) = normalize(&input, false, Api::ChatCompletions);
    assert_eq!(
        skeleton(&out),
        [
            "system",
            "assistant[call_xPTsSZ73QC3tSb0nOY36iN8t]",
            "tool(call_xPTsSZ73QC3tSb0nOY36iN8t)",
            // Logged between the call (line 417) and its output (line 421).
            "developer",
            "assistant[call_qTTUTk7yCRyPuQER0IY30loJ]",
            "tool(call_qTTUTk7yCRyPuQER0IY30loJ)",
            "assistant[call_oCxJc2imrZE9PGDP1JZQJJG4]",
            "tool(call_oCxJc2imrZE9PGDP1JZQJJG4)",
        ]
    );
    assert_eq!(repairs.count(Repair::Reordered), 1, "{repairs:?}");
    assert!(check(&out.messages).is_empty(), "{:?}", check(&out.messages));
    let v = openai(&out);
    let m = &v["messages"][3];
    assert_eq!(m["role"], "developer");
    assert!(m["content"].as_str().unwrap().starts_with("Approved command prefix saved:"), "{m}");
    // The Codex envelope is gone: only the API's fields.
    for m in v["messages"].as_array().unwrap() {
        for k in m.as_object().unwrap().keys() {
            assert!(
                ["role", "content", "tool_calls", "tool_call_id", "reasoning_content"]
                    .contains(&k.as_str()),
                "{k} in {m}"
            );
        }
    }
}

#[test]
fn parallel_codex_calls_are_one_step_with_text_and_typed_calls() {
    let input = decode("codex/w1t9_head.jsonl", Format::Codex);
    let (out, repairs) = normalize(&input, false, Api::ChatCompletions);
    assert!(check(&out.messages).is_empty(), "{:?}", check(&out.messages));
    let v = openai(&out);
    let msgs = v["messages"].as_array().unwrap();
    // Every call is a function call with a JSON-object argument string.
    let mut calls = 0;
    for m in msgs {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls += 1;
            assert_eq!(c["type"], "function", "{c}");
            let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap())
                .expect("arguments are JSON");
            assert!(args.is_object(), "{c}");
        }
        // Text is a string: no input_text / output_text / reasoning parts.
        if m["role"] != "assistant" || !m["content"].is_null() {
            assert!(m["content"].is_string(), "{m}");
        }
    }
    let input_calls: usize = input.messages.iter().map(|m| m.tool_calls.len()).sum();
    assert_eq!(calls, input_calls, "no call is lost");
    // The first step's commentary and its three parallel calls are one message.
    let step = msgs.iter().find(|m| m["tool_calls"].is_array()).unwrap();
    assert_eq!(step["tool_calls"].as_array().unwrap().len(), 3, "{step}");
    assert!(step["content"].as_str().is_some_and(|t| !t.is_empty()), "{step}");
    assert_eq!(repairs.count(Repair::StepsJoined), 2, "{repairs:?}");
    assert_eq!(repairs.count(Repair::OpaqueReasoningDropped), 3, "{repairs:?}");
    assert_eq!(repairs.count(Repair::PartsRetyped), 8, "{repairs:?}");
}

#[test]
fn claude_code_orphan_results_are_dropped_and_counted() {
    let input = decode("claude_code/task43_orphans.jsonl", Format::ClaudeCode);
    let orphans_in = {
        let called: std::collections::HashSet<&str> = input
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.id.as_str()))
            .collect();
        input
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .filter(|m| !called.contains(m.tool_call_id.as_deref().unwrap_or("")))
            .count()
    };
    assert_eq!(orphans_in, 4, "the slice's four results without a tool_use");
    let (out, repairs) = normalize(&input, false, Api::ChatCompletions);
    assert_eq!(repairs.count(Repair::OrphanResultsDropped), 4, "{repairs:?}");
    assert!(check(&out.messages).is_empty(), "{:?}", check(&out.messages));
    let results = out.messages.iter().filter(|m| m.role == Role::Tool).count();
    let inputs = input.messages.iter().filter(|m| m.role == Role::Tool).count();
    assert_eq!(results, inputs - 4);
}

#[test]
fn claude_code_streamed_parts_and_thinking_become_one_clean_step() {
    let input = decode("claude_code/task128_start.jsonl", Format::ClaudeCode);
    let (out, repairs) = normalize(&input, false, Api::ChatCompletions);
    assert!(check(&out.messages).is_empty(), "{:?}", check(&out.messages));
    let v = openai(&out);
    let text = serde_json::to_string(&v).unwrap();
    for junk in [
        "\"parentUuid\"",
        "\"toolUseResult\"",
        "\"thinking\"",
        "\"signature\"",
        "compactor_attached",
    ] {
        assert!(!text.contains(junk), "{junk} written");
    }
    // Thinking with empty text and a signature is opaque: dropped, counted.
    assert!(repairs.count(Repair::OpaqueReasoningDropped) > 0, "{repairs:?}");
    // No assistant message follows an assistant message with calls before its results.
    let msgs = v["messages"].as_array().unwrap();
    for w in msgs.windows(2) {
        if w[0]["tool_calls"].is_array() {
            assert_eq!(w[1]["role"], "tool", "{} then {}", w[0], w[1]);
        }
    }
}

#[test]
fn trajectory_calls_as_parts_and_split_parallel_calls_are_joined() {
    // The agent-trajectory shape: each call also written as a `tool_call`
    // part, results as `tool_output` parts, parallel calls one per message.
    let line = r#"{"messages": [
        {"role": "user", "content": [{"type": "text", "text": "list both"}]},
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "a", "name": "Bash", "arguments": "{\"command\": \"ls a\"}"}],
         "tool_calls": [{"id": "a", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"ls a\"}"}}], "_metadata": {"timestamp": "t1"}},
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "b", "name": "Bash", "arguments": "{\"command\": \"ls b\"}"}],
         "tool_calls": [{"id": "b", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"ls b\"}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "tool_output", "text": "B"}]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "tool_output", "text": "A"}]},
        {"role": "tool", "tool_call_id": "zz", "content": "orphan"}
    ]}"#;
    let dir = TestDir::new();
    let p = dir.write("t.jsonl", line.replace('\n', ""));
    let out = run_ok(compactor().arg("compact").arg(&p).args(["--to", "openai", "--mode", "none"]));
    let got = &json_lines(&String::from_utf8_lossy(&out.stdout))[0];
    let want: Value = serde_json::from_str(
        r#"{"id": "PATH:1", "messages": [
        {"role": "user", "content": "list both"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"ls a\"}"}},
            {"id": "b", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"ls b\"}"}}]},
        {"role": "tool", "content": "A", "tool_call_id": "a"},
        {"role": "tool", "content": "B", "tool_call_id": "b"}]}"#
            .replace("PATH", &p.display().to_string())
            .as_str(),
    )
    .unwrap();
    assert_eq!(got, &want);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for kind in
        ["1 steps_joined", "1 reordered", "1 orphan_results_dropped", "2 call_parts_dropped"]
    {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
}

#[test]
fn codex_free_form_input_and_bad_names_are_repaired() {
    let line = r#"{"messages": [
        {"role": "user", "content": "patch it"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "p", "type": "custom", "function": {"name": "apply patch", "arguments": "*** Begin Patch"}}]},
        {"role": "tool", "tool_call_id": "p", "content": "ok"},
        {"role": "assistant", "content": ""}
    ]}"#;
    let dir = TestDir::new();
    let p = dir.write("c.jsonl", line.replace('\n', ""));
    let out = run_ok(compactor().arg("compact").arg(&p).args(["--to", "openai", "--mode", "none"]));
    let got = &json_lines(&String::from_utf8_lossy(&out.stdout))[0];
    let call = &got["messages"][1]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "apply_patch");
    assert_eq!(call["function"]["arguments"], r#"{"input":"*** Begin Patch"}"#);
    assert_eq!(call["type"], "function");
    assert_eq!(got["messages"][3], serde_json::json!({"role": "assistant", "content": "(empty)"}));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for kind in ["1 arguments_wrapped", "1 names_sanitized", "1 empty_filled"] {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
}

#[test]
fn keep_source_fields_keeps_the_lossless_round_trip() {
    let src = fixture("openai/trajectory_richh.jsonl");
    let dir = TestDir::new();
    let mid = dir.join("mid.jsonl");
    let keep = ["--mode", "none", "--keep-source-fields", "--to"];
    run_ok(compactor().arg("compact").arg(&src).args(keep).args(["anthropic", "-o"]).arg(&mid));
    let back = dir.join("back.jsonl");
    run_ok(compactor().arg("compact").arg(&mid).args(keep).args(["openai", "-o"]).arg(&back));
    let a = std::fs::read_to_string(&src).unwrap();
    let b = std::fs::read_to_string(&back).unwrap();
    assert_eq!(json_lines(&a), json_lines(&b));
    // A file dialect keeps its envelopes with the flag, and drops them without.
    let cc = fixture("claude_code/task43_parallel.jsonl");
    let kept = run_ok(compactor().arg("compact").arg(&cc).args(keep).arg("openai"));
    assert!(String::from_utf8_lossy(&kept.stdout).contains("parentUuid"));
    let clean =
        run_ok(compactor().arg("compact").arg(&cc).args(["--mode", "none", "--to", "openai"]));
    let text = String::from_utf8_lossy(&clean.stdout);
    assert!(text.contains("\"tool_calls\"") && !text.contains("parentUuid"), "{text}");
}

#[test]
fn anthropic_output_alternates_and_pairs_results() {
    let src = fixture("codex/w1t9_head.jsonl");
    let out =
        run_ok(compactor().arg("compact").arg(&src).args(["--to", "anthropic", "--mode", "none"]));
    let v = &json_lines(&String::from_utf8_lossy(&out.stdout))[0];
    assert!(v["system"].as_str().is_some_and(|s| s.starts_with("You are Codex")), "system");
    let msgs = v["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user");
    for w in msgs.windows(2) {
        assert_ne!(w[0]["role"], w[1]["role"], "roles alternate");
        let uses: Vec<&Value> = w[0]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| &b["id"])
            .collect();
        let answered: Vec<&Value> = w[1]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .take(uses.len())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| &b["tool_use_id"])
            .collect();
        assert_eq!(uses, answered, "results open the next user turn");
    }
}

#[test]
fn file_dialects_are_not_concatenated_into_one_output() {
    let dir = TestDir::new();
    let out = dir.join("one.jsonl");
    let res = run_code(
        compactor()
            .arg("compact")
            .arg(fixture("claude_code/task43_parallel.jsonl"))
            .arg(fixture("claude_code/task128_start.jsonl"))
            .arg("-o")
            .arg(&out),
        2,
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        stderr.contains("holds one session per file") && stderr.contains("-o DIR/"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
    // One input is one session: no concatenation.
    run_ok(
        compactor()
            .arg("compact")
            .arg(fixture("claude_code/task43_parallel.jsonl"))
            .arg("-o")
            .arg(&out),
    );
    assert!(out.exists());
}

/// The module's invariants on real slices of every dialect: the output passes
/// `check`, and normalizing it again changes nothing and counts nothing.
#[test]
fn normalizing_is_valid_and_idempotent_on_every_dialect() {
    let cases = [
        ("openai/trajectory_richh.jsonl", Format::OpenAi),
        ("openai/claude_code_task54.jsonl", Format::OpenAi),
        ("edge/images.jsonl", Format::OpenAi),
        ("edge/unknown_roles.jsonl", Format::OpenAi),
        ("anthropic/edge_cases.jsonl", Format::Anthropic),
        ("sharegpt/parallel_calls.jsonl", Format::ShareGpt),
        ("claude_code/task128_mid.jsonl", Format::ClaudeCode),
        ("claude_code/edge_orphan_result.jsonl", Format::ClaudeCode),
        ("codex/depot_tail.jsonl", Format::Codex),
        ("codex/edge_items.jsonl", Format::Codex),
    ];
    for (rel, format) in cases {
        let records = line_records(&fixture(rel));
        let sessions: Vec<Session> = if format.unit() == compactor::formats::Unit::File {
            vec![format.adapter().decode(records, History::Full).unwrap()]
        } else {
            records
                .into_iter()
                .map(|r| format.adapter().decode(vec![r], History::Full).unwrap())
                .collect()
        };
        for s in sessions {
            for api in [Api::ChatCompletions, Api::Messages] {
                let (once, _) = normalize(&s, false, api);
                assert!(check(&once.messages).is_empty(), "{rel}: {:?}", check(&once.messages));
                let (twice, more) = normalize(&once, false, api);
                assert!(more.is_empty(), "{rel}: {more:?}");
                assert_eq!(twice, once, "{rel}");
            }
        }
    }
    // A session with no message at all is still a request: one `(empty)` turn.
    let (out, r) = normalize(&Session::default(), false, Api::ChatCompletions);
    assert_eq!(out.messages.len(), 1);
    assert_eq!(out.messages[0].text_content(), "(empty)");
    assert_eq!(r.count(Repair::EmptyFilled), 1);
}

/// Issue 36 point 1: the exact input of the issue. The step "Checking both
/// shards." makes calls c1 and c2; c1's result comes, c2's never does, and the
/// assistant replies. The reply is the next step: it stays its own message
/// (the old binary joined it into the step: `steps_joined 1, reordered 1`).
const UNANSWERED_PARALLEL_CALL: &str = r#"{"messages": [
    {"role": "system", "content": "You are a helpful ops agent."},
    {"role": "user", "content": "Check both shards."},
    {"role": "assistant", "content": "Checking both shards.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "check_shard", "arguments": "{\"shard\": 1}"}},
        {"id": "c2", "type": "function", "function": {"name": "check_shard", "arguments": "{\"shard\": 2}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "shard 1 ok"},
    {"role": "assistant", "content": "Shard 1 is fine; the shard 2 check was interrupted."},
    {"role": "user", "content": "Retry shard 2 later."},
    {"role": "assistant", "content": "Will do."}]}"#;

/// Runs `compact --mode none --to TO` on one line; its record, report row and stderr.
fn convert_line(line: &str, to: &str) -> (Value, Value, String) {
    let dir = TestDir::new();
    let p = dir.write("s.jsonl", line.replace('\n', ""));
    let report = dir.join("report.jsonl");
    let out = run_ok(
        compactor()
            .arg("compact")
            .arg(&p)
            .args(["--mode", "none", "--to", to, "--report"])
            .arg(&report),
    );
    let record = json_lines(&String::from_utf8_lossy(&out.stdout)).remove(0);
    let row = json_lines(&std::fs::read_to_string(&report).unwrap())
        .into_iter()
        .find(|r| r["tokens_before"].is_u64())
        .expect("a session row");
    (record, row, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_reply_after_a_partly_answered_step_stays_its_own_message() {
    let (got, row, stderr) = convert_line(UNANSWERED_PARALLEL_CALL, "openai");
    let want = serde_json::json!([
        {"role": "system", "content": "You are a helpful ops agent."},
        {"role": "user", "content": "Check both shards."},
        {"role": "assistant", "content": "Checking both shards.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "check_shard", "arguments": "{\"shard\": 1}"}}]},
        {"role": "tool", "content": "shard 1 ok", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Shard 1 is fine; the shard 2 check was interrupted."},
        {"role": "user", "content": "Retry shard 2 later."},
        {"role": "assistant", "content": "Will do."}
    ]);
    assert_eq!(got["messages"], want);
    assert_eq!(row["repairs"], serde_json::json!({"unanswered_calls_dropped": 1}), "{row}");
    assert!(
        stderr.contains("1 repair to make valid requests (1 unanswered_calls_dropped)"),
        "{stderr}"
    );

    // The Messages request: the same steps; the reply is its own assistant
    // turn, and the next user text is not merged into the results' turn.
    let (got, row, _) = convert_line(UNANSWERED_PARALLEL_CALL, "anthropic");
    let text = |t: &str| serde_json::json!({"type": "text", "text": t});
    let want = serde_json::json!([
        {"role": "user", "content": [text("Check both shards.")]},
        {"role": "assistant", "content": [text("Checking both shards."),
            {"type": "tool_use", "id": "c1", "name": "check_shard", "input": {"shard": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "shard 1 ok"}]},
        {"role": "assistant", "content": [text("Shard 1 is fine; the shard 2 check was interrupted.")]},
        {"role": "user", "content": [text("Retry shard 2 later.")]},
        {"role": "assistant", "content": [text("Will do.")]}
    ]);
    assert_eq!(got["messages"], want);
    assert_eq!(got["system"], "You are a helpful ops agent.");
    assert_eq!(row["repairs"], serde_json::json!({"unanswered_calls_dropped": 1}), "{row}");
}

/// One line per message of a written Chat Completions record: role, call
/// ids, content.
fn shape(record: &Value) -> Vec<String> {
    record["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let calls: Vec<&str> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["id"].as_str())
                .collect();
            format!("{} {:?} {}", m["role"].as_str().unwrap(), calls, m["content"])
        })
        .collect()
}

/// The shape of two corpus trajectories (`agent-trajectory-json`, TripForge
/// bugfix-3 and TASK-20260318-393C91 develop-1): a result logged before its
/// own call, so that call is never answered after it. The old rule kept that
/// step open for the rest of the session and joined every later step into it
/// (one message of 89 calls, texts moved to its head).
#[test]
fn a_call_never_answered_does_not_swallow_the_steps_after_it() {
    let call = |id: &str| {
        format!(
            r#"{{"id": "{id}", "type": "function", "function": {{"name": "Edit", "arguments": "{{}}"}}}}"#
        )
    };
    let line = format!(
        r#"{{"messages": [
        {{"role": "user", "content": "Fix the import."}},
        {{"role": "assistant", "content": "I need to import jwtSign."}},
        {{"role": "tool", "tool_call_id": "e0", "content": "edited (logged before its call)"}},
        {{"role": "assistant", "content": null, "tool_calls": [{e0}]}},
        {{"role": "assistant", "content": null, "tool_calls": [{t1}]}},
        {{"role": "tool", "tool_call_id": "t1", "content": "task 1 updated"}},
        {{"role": "assistant", "content": "Now task 2.", "tool_calls": [{t2}]}},
        {{"role": "tool", "tool_call_id": "t2", "content": "task 2 updated"}},
        {{"role": "assistant", "content": "Done."}}]}}"#,
        e0 = call("e0"),
        t1 = call("t1"),
        t2 = call("t2"),
    );
    let (got, row, _) = convert_line(&line, "openai");
    assert_eq!(
        shape(&got),
        [
            r#"user [] "Fix the import.""#,
            r#"assistant ["t1"] "I need to import jwtSign.""#,
            r#"tool [] "task 1 updated""#,
            r#"assistant ["t2"] "Now task 2.""#,
            r#"tool [] "task 2 updated""#,
            r#"assistant [] "Done.""#,
        ]
    );
    assert_eq!(
        row["repairs"],
        serde_json::json!({"orphan_results_dropped": 1, "steps_joined": 2,
            "unanswered_calls_dropped": 1}),
        "{row}"
    );
}

/// The other side of the rule: when the step's other result does come, after
/// the assistant message (a log that records items as they finish), that
/// message is still part of the step and joins it.
#[test]
fn a_message_before_a_late_result_of_its_step_joins_the_step() {
    let line = UNANSWERED_PARALLEL_CALL.replace(
        r#"{"role": "user", "content": "Retry shard 2 later."},"#,
        r#"{"role": "tool", "tool_call_id": "c2", "content": "shard 2 ok"},"#,
    );
    let (got, row, _) = convert_line(&line, "openai");
    assert_eq!(
        shape(&got),
        [
            r#"system [] "You are a helpful ops agent.""#,
            r#"user [] "Check both shards.""#,
            r#"assistant ["c1", "c2"] "Checking both shards.\nShard 1 is fine; the shard 2 check was interrupted.""#,
            r#"tool [] "shard 1 ok""#,
            r#"tool [] "shard 2 ok""#,
            r#"assistant [] "Will do.""#,
        ]
    );
    assert_eq!(row["repairs"], serde_json::json!({"reordered": 1, "steps_joined": 1}), "{row}");
}

/// A 1x1 PNG, as a data URL.
const PNG_URL: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Issue 36 point 2: a browser session whose first tool result is a
/// screenshot, then six log reads of about 900 tokens each: 8,251 tokens with
/// the image (1,500), 6,761 without it (the old `--to openai` count).
fn screenshot_session() -> String {
    let mut msgs = vec![
        serde_json::json!({"role": "system", "content": "You are a browser agent."}),
        serde_json::json!({"role": "user", "content": "Open the dashboard and tell me why the build is red."}),
        serde_json::json!({"role": "assistant", "content": "Taking a screenshot.", "tool_calls": [
            {"id": "s1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}]}),
        serde_json::json!({"role": "tool", "tool_call_id": "s1", "content": [
            {"type": "text", "text": "Screenshot captured."},
            {"type": "image_url", "image_url": {"url": PNG_URL}}]}),
    ];
    for k in 0..6 {
        let log: Vec<String> = (0..60)
            .map(|i| {
                format!("step {k} line {i}: request served in {} ms from worker {}", i % 97, i % 13)
            })
            .collect();
        msgs.push(
            serde_json::json!({"role": "assistant", "content": format!("Reading log part {k}."),
            "tool_calls": [{"id": format!("r{k}"), "type": "function",
                "function": {"name": "read_log", "arguments": format!("{{\"part\": {k}}}")}}]}),
        );
        msgs.push(serde_json::json!({"role": "tool", "tool_call_id": format!("r{k}"), "content": log.join("\n")}));
    }
    msgs.push(serde_json::json!({"role": "assistant", "content": "The build is red because the lint step failed."}));
    serde_json::json!({"messages": msgs}).to_string()
}

#[test]
fn a_tool_result_screenshot_is_counted_and_stripped_before_it_is_made_text() {
    let line = screenshot_session();
    // Counted as an image: the same size as the session written as it is.
    let (same, same_row, _) = convert_line(&line, "same");
    assert!(same["messages"][3]["content"].is_array(), "the input keeps its image");
    let (got, row, _) = convert_line(&line, "openai");
    assert_eq!(row["tokens_before"], same_row["tokens_before"], "{row}");
    assert_eq!(row["tokens_before"], 8251, "{row}");
    // Uncompacted, the screenshot survives: a `tool` message takes only text,
    // so it is written as the image's text, counted.
    let tool = &got["messages"][3];
    assert_eq!(tool["content"], "Screenshot captured.\n[image: image/png, 96 bytes]", "{tool}");
    assert_eq!(row["repairs"], serde_json::json!({"images_to_text": 1}), "{row}");

    // At an 8,000-token window the trigger is 6,800: the image puts the
    // session over it (the old count, 6,761, did not), and stage 4 strips it.
    let dir = TestDir::new();
    let p = dir.write("s.jsonl", &line);
    let report = dir.join("report.jsonl");
    let out = run_ok(
        compactor()
            .arg("compact")
            .arg(&p)
            .args(["--window", "8000", "--to", "openai", "--report"])
            .arg(&report),
    );
    let got = json_lines(&String::from_utf8_lossy(&out.stdout)).remove(0);
    let row = json_lines(&std::fs::read_to_string(&report).unwrap())
        .into_iter()
        .find(|r| r["tokens_before"].is_u64())
        .unwrap();
    assert_eq!(row["compacted"], true, "{row}");
    assert_eq!(row["images_stripped"], 1, "{row}");
    assert_eq!(row["tokens_before"], 8251, "{row}");
    assert!(row.get("repairs").is_none(), "nothing left to make text: {row}");
    let tool = got["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "s1")
        .expect("the screenshot's result");
    assert_eq!(tool["content"], "Screenshot captured.\n[screenshot removed to save context]");
}

/// Issue 36 point 9: the one value serde_json refuses to write, a number
/// that is not finite, cannot reach an encoder: a record holding one is
/// rejected when it is read, named by file and line, kept byte for byte in
/// `--rejects`, and the good records around it are still written, for every
/// writer (the same dialect, and each conversion).
#[test]
fn a_number_no_encoder_could_write_is_rejected_when_read() {
    let good = r#"{"id":"good","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#;
    let bad = [
        (
            r#"{"id":"big","messages":[{"role":"user","content":"x"}],"score":1e999}"#,
            "number out of range",
        ),
        (r#"{"id":"nan","messages":[{"role":"user","content":"x","w":NaN}]}"#, "expected value"),
        (
            r#"{"id":"inf","messages":[{"role":"user","content":"x"}],"s":-Infinity}"#,
            "invalid number",
        ),
    ];
    let mut input = String::from(good) + "\n";
    for (line, _) in &bad {
        input += line;
        input += "\n";
    }
    input += good;
    input += "\n";
    let dir = TestDir::new();
    let p = dir.write("nonfinite.jsonl", &input);
    for to in ["same", "openai", "anthropic", "sharegpt"] {
        let rejects = dir.join(&format!("rejects-{to}.jsonl"));
        let out = run_code(
            compactor()
                .arg("compact")
                .arg(&p)
                .args(["--force", "--to", to, "--rejects"])
                .arg(&rejects),
            3,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        for (k, (_, why)) in bad.iter().enumerate() {
            let at = format!("nonfinite.jsonl:{}: invalid JSON: {why}", k + 2);
            assert!(stderr.contains(&at), "{to}: {at}: {stderr}");
        }
        let written = json_lines(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(written.len(), 2, "{to}: both good sessions written");
        let kept: Vec<String> = bad.iter().map(|(l, _)| format!("{l}\n")).collect();
        assert_eq!(std::fs::read_to_string(&rejects).unwrap(), kept.concat(), "{to}");
    }
}
