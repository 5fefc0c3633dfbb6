//! Integration tests of the `sharegpt` format (see src/formats/sharegpt.rs).
//!
//! Same checks as `format_anthropic` (whose helpers these are), on the ShareGPT
//! fixtures, plus what is particular to ShareGPT: tags, synthetic ids, old-style
//! `function_call` / `observation` turns.

use crate::format_anthropic::{
    Counts, cli_converts, compaction, corpus_through, counts, decode, detection, encode,
    fixture_files, fixtures_match_sources, fixtures_roundtrip, openai_through,
};
use crate::util::{TestDir, compactor, fixture, line_records, run_ok};
use compactor::formats::{Format, Record};
use compactor::model::Role;
use compactor::policy::sanitize::validate;
use serde_json::{Value, json};

#[test]
fn fixtures_decode_and_encode_identically() {
    let n = fixtures_roundtrip(Format::ShareGpt, "sharegpt");
    assert_eq!(n, 11);
}

#[test]
fn openai_fixtures_survive_sharegpt_and_back() {
    let c = openai_through(Format::ShareGpt);
    println!("openai -> sharegpt -> openai: {c:?}");
    assert!(c.calls > 200 && c.images >= 3, "{c:?}");
}

#[test]
fn converted_fixtures_read_as_their_openai_sources() {
    let c = fixtures_match_sources(Format::ShareGpt, "sharegpt");
    println!("sharegpt fixtures vs OpenAI slices: {c:?}");
    assert!(c.calls > 100 && c.results == c.calls && c.images >= 5, "{c:?}");
}

#[test]
fn fixture_files_are_detected_as_sharegpt() {
    detection(Format::ShareGpt, "sharegpt");
}

#[test]
fn forced_lean_compaction_keeps_its_promises() {
    let (compacted, before, after) = compaction(Format::ShareGpt, "sharegpt");
    println!(
        "sharegpt fixtures, lean 16K forced: {compacted} compacted, {before} -> {after} tokens"
    );
    assert!(compacted >= 6, "{compacted}");
    assert!(after * 10 < before * 9, "{before} -> {after}");
}

#[test]
fn converted_fixtures_carry_no_layout_marker() {
    // Hermes-agent-shaped values are the writer's defaults: reading them needs
    // no marker, so converting them to OpenAI adds no field.
    for f in fixture_files("sharegpt") {
        if f.file_name().is_some_and(|n| n == "edge_cases.jsonl") {
            continue;
        }
        for r in line_records(&f) {
            let s = decode(Format::ShareGpt, &r);
            for (i, m) in s.messages.iter().enumerate() {
                assert!(
                    !m.extra.contains_key("sharegpt_layout"),
                    "{} message {i}: {:?}",
                    r.source,
                    m.extra
                );
            }
        }
    }
}

#[test]
fn edge_cases_decode_as_documented() {
    let recs = line_records(&fixture("sharegpt/edge_cases.jsonl"));
    // Hermes function-calling v1: Python-literal calls, no ids.
    let s = decode(Format::ShareGpt, &recs[0]);
    assert_eq!(counts(&s), Counts { messages: 6, calls: 2, results: 2, images: 0 });
    let a = &s.messages[2];
    assert_eq!(a.tool_calls[0].id, "sharegpt-2-0");
    assert_eq!(a.tool_calls[1].arguments, r#"{"symbol": "AAPL"}"#);
    assert_eq!(s.messages[4].tool_call_id.as_deref(), Some("sharegpt-2-1"));
    assert_eq!(
        s.messages[4].text_content(),
        r#"{"symbol": "AAPL", "price": 182.52, "currency": "USD"}"#
    );
    assert_eq!(a.extra["sharegpt_layout"]["calls"][0]["fmt"], "python");
    // LLaMA-Factory: function_call / observation, top-level system and tools.
    let s = decode(Format::ShareGpt, &recs[1]);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(s.messages[2].tool_calls[0].name, "get_weather");
    assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("sharegpt-1-0"));
    assert_eq!(s.messages[7].tool_call_id.as_deref(), Some("sharegpt-5-0"));
    assert!(s.tools.as_ref().is_some_and(Value::is_string));
    assert!(validate(&s.messages).is_empty());
    // Hermes agent trajectory: text around the tags, answers out of order.
    let s = decode(Format::ShareGpt, &recs[2]);
    let a = &s.messages[2];
    assert_eq!(a.tool_calls.len(), 3);
    let ids: Vec<&str> = a.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_a", "sharegpt-2-1", "call_c"]);
    assert!(
        a.text_content()
            .contains("Checking three things at once.\n\nand\n\n\nWaiting for results.")
    );
    assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("call_c"));
    assert_eq!(s.messages[4].extra["is_error"], true);
    assert_eq!(s.messages[5].tool_call_id.as_deref(), Some("sharegpt-2-1"));
    assert_eq!(s.messages[5].text_content(), "test:\n\tpytest -q");
    assert!(validate(&s.messages).is_empty());
    // Plain chat: the `chatgpt` label is an assistant, remembered.
    let s = decode(Format::ShareGpt, &recs[3]);
    assert_eq!(s.messages[3].role, Role::Assistant);
    assert_eq!(s.messages[3].extra["sharegpt_layout"], json!({"from": "chatgpt"}));
    assert_eq!(s.messages[1].extra["markdown"], Value::Null);
}

#[test]
fn openai_ids_need_no_carrier_in_hermes_values() {
    // Results carry tool_call_id (Hermes' own format), so calls get their ids
    // back from them; parallel calls answered out of order pair by name.
    let r = line_records(&fixture("edge/parallel_calls.jsonl")).remove(0);
    let x = encode(Format::ShareGpt, &decode(Format::OpenAi, &r));
    let text = x.to_string();
    assert!(!text.contains("\\\"id\\\""), "no explicit call id needed: {text}");
    assert!(!text.contains("sharegpt_layout"), "{text}");
    let back = decode(Format::ShareGpt, &Record { source: r.source.clone(), value: x });
    assert_eq!(encode(Format::OpenAi, &back), r.value);
}

#[test]
fn cli_converts_to_openai_and_anthropic() {
    for to in [Format::OpenAi, Format::Anthropic] {
        let sessions = cli_converts(
            "sharegpt/claude_code_task54.jsonl",
            to,
            &["--force", "--window", "16000"],
        );
        assert_eq!(sessions.len(), 1);
        assert!(sessions[0].extra.contains_key("compaction"));
        assert!(validate(&sessions[0].messages).is_empty());
    }
    let all = cli_converts("sharegpt/edge_cases.jsonl", Format::OpenAi, &["--mode", "none"]);
    assert_eq!(all.len(), 4);
    for (got, r) in all.iter().zip(line_records(&fixture("sharegpt/edge_cases.jsonl"))) {
        let want = decode(Format::ShareGpt, &r);
        assert_eq!(counts(got), counts(&want), "{}", r.source);
    }
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_openai_sessions_survive_sharegpt_and_back() {
    let Some((sessions, total, before, after)) = corpus_through(Format::ShareGpt) else {
        panic!("{}", crate::corpus::ABSENT)
    };
    println!(
        "corpus agent-trajectory-json via sharegpt: {sessions} sessions, {total:?}, identical; lean: {before} -> {after} tokens"
    );
    assert_eq!(sessions, 5);
    assert!(after < before / 2, "{before} -> {after}");
}

/// ShareGPT has no developer turn: a clean conversion writes OpenAI's
/// developer message as `system`; the lossless form keeps the role aside and
/// gives it back.
#[test]
fn a_developer_message_is_a_system_turn() {
    let dir = TestDir::new();
    let input = dir.write(
        "dev.jsonl",
        r#"{"id":"d","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#,
    );
    let clean = run_ok(compactor().args(["compact", "-q", "--to", "sharegpt"]).arg(&input));
    let v: Value = serde_json::from_slice(&clean.stdout).unwrap();
    let turns = v["conversations"].as_array().unwrap();
    let from: Vec<&str> = turns.iter().map(|t| t["from"].as_str().unwrap()).collect();
    assert_eq!(from, ["system", "human", "gpt"], "{v}");
    assert!(turns[0].get("openai_role").is_none(), "a clean request carries no source field: {v}");

    let kept = dir.join("kept.jsonl");
    run_ok(
        compactor()
            .args(["compact", "-q", "--to", "sharegpt", "--keep-source-fields", "-o"])
            .arg(&kept)
            .arg(&input),
    );
    let text = std::fs::read_to_string(&kept).unwrap();
    assert!(
        text.contains(r#""from":"system""#) && text.contains(r#""openai_role":"developer""#),
        "{text}"
    );
    let back = run_ok(
        compactor().args(["compact", "-q", "--to", "openai", "--keep-source-fields"]).arg(&kept),
    );
    let v: Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(v["messages"][0]["role"], "developer", "{v}");
}
