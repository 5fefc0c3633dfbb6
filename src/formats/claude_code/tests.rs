use super::align::align;
use super::*;
use crate::model::{ContentForm, History, Role, Source};
use crate::policy::summary::SUMMARY_PREFIX;
use serde_json::json;
use std::collections::HashSet;

fn recs(values: &[Value]) -> Vec<Record> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            source: Source { path: "t.jsonl".into(), line: Some(i as u64 + 1), index: None },
            value: v.clone(),
        })
        .collect()
}

fn decode(values: &[Value]) -> Session {
    decode_as(values, History::Full)
}

fn decode_as(values: &[Value], history: History) -> Session {
    ClaudeCode.decode(recs(values), history).expect("decodes")
}

/// Decode + encode must give the same values and the same bytes, under both
/// readings of the history; returns the session read `live`.
fn assert_round_trip(values: &[Value]) -> Session {
    assert_eq!(ClaudeCode.encode(&decode(values), None), values, "read full");
    let s = decode_as(values, History::Live);
    let out = ClaudeCode.encode(&s, None);
    assert_eq!(out, values);
    for (a, b) in out.iter().zip(values) {
        assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
    }
    s
}

fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
    json!({"parentUuid": parent, "isSidechain": false, "type": "user",
           "message": {"role": "user", "content": content}, "uuid": uuid,
           "timestamp": format!("2026-05-01T10:00:{:02}.000Z", uuid.len()),
           "cwd": "/repo", "sessionId": "S1", "version": "2.1.89", "gitBranch": "main"})
}

fn asst(uuid: &str, parent: &str, id: &str, blocks: Value) -> Value {
    json!({"parentUuid": parent, "isSidechain": false,
           "message": {"model": "claude-opus-4-6", "id": id, "type": "message", "role": "assistant",
                       "content": blocks, "stop_reason": null, "stop_sequence": null,
                       "usage": {"input_tokens": 3, "cache_creation_input_tokens": 10,
                                 "cache_read_input_tokens": 900, "output_tokens": uuid.len()}},
           "requestId": "req_1", "type": "assistant", "uuid": uuid, "timestamp": "2026-05-01T10:01:00.000Z",
           "cwd": "/repo", "sessionId": "S1", "version": "2.1.89", "gitBranch": "main"})
}

fn result(uuid: &str, parent: &str, id: &str, content: Value) -> Value {
    let mut v = user(uuid, Some(parent), json!([tool_result(id, content)]));
    v["toolUseResult"] = json!({"stdout": "full output", "interrupted": false});
    v["sourceToolAssistantUUID"] = json!(parent);
    v
}

fn snapshot(n: u32) -> Value {
    json!({"type": "file-history-snapshot", "messageId": format!("m{n}"),
           "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": false})
}

/// A `tool_result` block in the key order Claude Code writes.
fn tool_result(id: &str, content: Value) -> Value {
    json!({"tool_use_id": id, "type": "tool_result", "content": content})
}

fn tool_use(id: &str, cmd: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd},
           "caller": {"type": "direct"}})
}

/// u1, then one streamed message (thinking, text, call a, [result a], snapshot,
/// call b, [result b]), then a closing text and a system event.
fn streamed() -> Vec<Value> {
    vec![
        snapshot(0),
        user("u1", None, json!("run the tests")),
        asst(
            "a1",
            "u1",
            "msg_1",
            json!([{"type": "thinking", "thinking": "", "signature": "sig"}]),
        ),
        asst("a2", "a1", "msg_1", json!([{"type": "text", "text": "Running both."}])),
        asst("a3", "a2", "msg_1", json!([tool_use("t_a", "cargo test")])),
        result("r1", "a3", "t_a", json!("test ok")),
        snapshot(1),
        asst("a4", "r1", "msg_1", json!([tool_use("t_b", "cargo clippy")])),
        result("r2", "a4", "t_b", json!([{"type": "text", "text": "no warnings"}])),
        asst("a5", "r2", "msg_2", json!([{"type": "text", "text": "All green."}])),
        json!({"parentUuid": "a5", "isSidechain": false, "type": "system",
               "subtype": "turn_duration", "durationMs": 5, "uuid": "d1"}),
    ]
}

#[test]
fn streamed_parts_merge_into_one_message_and_split_back() {
    let s = assert_round_trip(&streamed());
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
    let a = &s.messages[1];
    assert_eq!(a.content.parts.len(), 2);
    assert!(matches!(a.content.parts[0], Part::Reasoning(_)));
    assert_eq!(a.text_content(), "Running both.");
    let ids: Vec<&str> = a.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["t_a", "t_b"]);
    assert_eq!(a.tool_calls[0].name, "Bash");
    assert_eq!(a.tool_calls[0].arguments, r#"{"command":"cargo test"}"#);
    assert_eq!(a.tool_calls[0].extra["type"], "function");
    assert_eq!(a.tool_calls[0].extra["caller"], json!({"type": "direct"}));
    assert_eq!(a.extra["uuid"], "a1");
    assert_eq!(a.extra[EVENTS_KEY].as_array().map(Vec::len), Some(4));
    assert_eq!(a.extra[EVENTS_KEY][3]["resultsBefore"], 1);
    assert_eq!(a.extra[EVENTS_KEY][3]["recordsBefore"], 1);
    assert_eq!(a.extra[EVENTS_KEY][3]["blocks"], json!(["tool_use:t_b"]));
    // Usage of the last part, timestamp of the first.
    assert_eq!(a.meta.usage.and_then(|u| u.output_tokens), Some(2));
    assert_eq!(a.meta.usage.and_then(|u| u.cache_read_tokens), Some(900));
    assert_eq!(a.meta.usage.and_then(|u| u.cache_write_tokens), Some(10));
    assert_eq!(a.meta.timestamp.as_deref(), Some("2026-05-01T10:01:00.000Z"));
    assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("t_a"));
    assert_eq!(s.messages[2].extra["toolUseResult"]["stdout"], "full output");
    assert_eq!(s.messages[3].content.form, ContentForm::Parts);
    // The snapshot before call b is kept for that event (recordsBefore above).
    assert_eq!(s.messages[1].attached.as_slice(), [snapshot(1)]);
    assert!(s.messages[3].attached.is_empty());
    assert_eq!(s.messages[0].attached.as_slice(), [snapshot(0)]);
    assert_eq!(s.trailing.len(), 1);
    assert_eq!(s.id, "S1");
    assert!(s.tools.is_none());
}

#[test]
fn calls_issued_before_their_results_keep_their_order() {
    let v = vec![
        user("u1", None, json!("go")),
        asst("a1", "u1", "msg_1", json!([tool_use("t_a", "ls")])),
        snapshot(1),
        asst("a2", "a1", "msg_1", json!([tool_use("t_b", "pwd")])),
        snapshot(2),
        result("r1", "a1", "t_a", json!("a")),
        result("r2", "a2", "t_b", json!("b")),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages.len(), 4);
    assert_eq!(s.messages[1].tool_calls.len(), 2);
    assert_eq!(s.messages[1].attached.as_slice(), [snapshot(1)]);
    assert_eq!(s.messages[2].attached.as_slice(), [snapshot(2)]);
}

/// u1 asks and a1 calls `t_a` (ls) and `t_b` (pwd) in one message: the
/// opening of the tests whose one user event answers both ([`answers`]).
fn two_calls() -> Vec<Value> {
    let calls = json!([tool_use("t_a", "ls"), tool_use("t_b", "pwd")]);
    vec![user("u1", None, json!("go")), asst("a1", "u1", "msg_1", calls)]
}

/// A user event (parent a1) answering [`two_calls`] in one: `t_a`'s result
/// "a", then `t_b`'s result block as given, then `text`.
fn answers(uuid: &str, t_b: Value, text: &str) -> Value {
    let blocks = json!([tool_result("t_a", json!("a")), t_b, {"type": "text", "text": text}]);
    user(uuid, Some("a1"), blocks)
}

#[test]
fn one_event_with_several_results_and_text_round_trips() {
    let t_b =
        json!({"type": "tool_result", "content": "b", "is_error": true, "tool_use_id": "t_b"});
    let mut both = answers("r1", t_b, "and hurry");
    both["toolUseResult"] = json!("Error: b");
    let mut v = two_calls();
    v.extend([both, asst("a2", "r1", "msg_2", json!([{"type": "text", "text": "ok"}]))]);
    let s = assert_round_trip(&v);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "assistant"]);
    assert_eq!(s.messages[3].extra[BLOCK_KEY]["is_error"], true);
    assert_eq!(s.messages[4].text_content(), "and hurry");
    assert!(s.messages[1].extra.get(EVENTS_KEY).is_none(), "one event, default order");
}

#[test]
fn an_event_without_uuid_is_regrouped_by_its_envelope() {
    let mut both = answers("", tool_result("t_b", json!("b")), "more");
    both.as_object_mut().unwrap().shift_remove("uuid");
    let mut later = both.clone();
    later["timestamp"] = json!("2026-05-01T11:00:00.000Z");
    let mut results_only = later.clone();
    results_only["message"]["content"].as_array_mut().unwrap().pop();
    let mut last = results_only.clone();
    last["timestamp"] = json!("2026-05-01T12:00:00.000Z");
    let mut v = two_calls();
    v.extend([both, later, results_only, last]);
    let s = assert_round_trip(&v);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    // Two results + text, twice; then two results-only events: 4 tool messages
    // in a row, split back into their two events by their envelopes.
    let expected = ["user", "assistant", "tool", "tool", "user", "tool", "tool", "user"];
    assert_eq!(roles[..8], expected);
    assert_eq!(roles[8..], ["tool"; 4]);
}

#[test]
fn a_call_before_its_text_in_one_event_keeps_the_order() {
    let v = vec![
        user("u1", None, json!("go")),
        asst(
            "a1",
            "u1",
            "msg_1",
            json!([tool_use("t_a", "ls"), {"type": "text", "text": "after"}]),
        ),
        result("r1", "a1", "t_a", json!("x")),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages[1].extra[EVENTS_KEY], json!([{"blocks": ["tool_use:t_a", "text"]}]));
}

#[test]
fn compact_boundary_history_is_passthrough_and_recorded() {
    let boundary = json!({"parentUuid": null, "logicalParentUuid": "a1", "isSidechain": false,
        "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
        "uuid": "b1", "compactMetadata": {"trigger": "manual", "preTokens": 123456}});
    let mut summary = user(
        "u2",
        Some("b1"),
        json!(
            "This session is being continued from a previous conversation that ran out of context. Summary: x"
        ),
    );
    summary["isCompactSummary"] = json!(true);
    let v = vec![
        user("u1", None, json!("old ask")),
        asst("a1", "u1", "msg_1", json!([{"type": "text", "text": "old answer"}])),
        boundary.clone(),
        summary,
        asst("a2", "u2", "msg_2", json!([{"type": "text", "text": "continuing"}])),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages.len(), 2, "only the live context");
    assert_eq!(s.messages[0].attached.len(), 3);
    assert_eq!(s.messages[0].attached[2], boundary);
    assert!(crate::policy::summary::is_summary(&s.messages[0]));
    assert_eq!(s.recorded_compactions.len(), 1);
    let c = &s.recorded_compactions[0];
    assert_eq!((c.at, c.pre_tokens, c.trigger.as_deref()), (None, Some(123456), Some("manual")));
    // Read full: the old turn and the new one, the summary recorded apart.
    let full = decode(&v);
    let texts: Vec<_> = full.messages.iter().map(Message::text_content).collect();
    assert_eq!(texts, ["old ask", "old answer", "continuing"]);
    let c = &full.recorded_compactions[0];
    assert_eq!(c.at, Some(2));
    assert!(c.summary.text().is_some_and(|t| t.ends_with("Summary: x")));
}

#[test]
fn sidechains_and_unknown_records_pass_through_in_place() {
    let mut side = asst("s1", "x", "msg_s", json!([{"type": "text", "text": "sub-agent"}]));
    side["isSidechain"] = json!(true);
    let v = vec![
        json!({"type": "summary", "summary": "old", "leafUuid": "u1"}),
        user("u1", None, json!("go")),
        side.clone(),
        json!({"type": "who-knows", "n": 1}),
        json!({"type": "system", "subtype": "api_error", "uuid": "e1", "parentUuid": "u1",
               "content": "overloaded"}),
        asst("a1", "e1", "msg_1", json!([{"type": "text", "text": "done"}])),
        json!({"no_type": true}),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.messages[1].attached.len(), 3);
    assert_eq!(s.messages[1].attached[0], side);
    assert_eq!(s.trailing, [json!({"no_type": true})]);
}

#[test]
fn orphans_and_forward_parents_are_kept() {
    let v = vec![
        user("u1", None, json!("go")),
        result("r0", "gone", "t_missing", json!("orphan")),
        asst("a1", "u9", "msg_1", json!([{"type": "text", "text": "forward parent"}])),
        user("u9", Some("r0"), json!("later")),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages[1].role, Role::Tool);
    assert_eq!(s.messages[1].tool_call_id.as_deref(), Some("t_missing"));
}

#[test]
fn malformed_events_are_errors_naming_the_line() {
    for (bad, line) in [
        (vec![user("u1", None, json!("a")), json!([1, 2])], 2),
        (vec![json!({"type": "user", "uuid": "u1", "message": "text"})], 1),
        (vec![snapshot(0), json!({"type": "assistant", "uuid": "a1"})], 2),
        (vec![json!({"type": "user", "uuid": "u1", "message": {"role": "user", "content": 5}})], 1),
        (vec![json!({"type": "user", "claudeCodeBlock": {}, "message": {"content": "x"}})], 1),
    ] {
        let err = ClaudeCode.decode(recs(&bad), History::Full).expect_err("rejected");
        assert_eq!(err.source.and_then(|s| s.line), Some(line), "{}", err.message);
    }
    assert!(ClaudeCode.decode(Vec::new(), History::Full).is_err());
}

#[test]
fn odd_blocks_stay_parts() {
    let v = vec![
        user(
            "u1",
            None,
            json!([{"type": "tool_result", "content": "no id"}, "bare string",
                   {"type": "tool_result", "tool_use_id": "x", "content": 5}]),
        ),
        asst(
            "a1",
            "u1",
            "msg_1",
            json!([{"type": "tool_use", "id": "t1", "name": "Bash"}, {"type": "text", "text": "x"}]),
        ),
        asst("a2", "a1", "msg_2", json!("plain string reply")),
        asst("a3", "a2", "msg_3", json!(null)),
    ];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages.len(), 4);
    assert_eq!(s.messages[0].role, Role::User);
    assert_eq!(s.messages[0].content.parts.len(), 3);
    assert!(s.messages[1].tool_calls.is_empty(), "a tool_use without input is a plain part");
    assert_eq!(s.messages[2].content.form, ContentForm::String);
    assert_eq!(s.messages[3].content.form, ContentForm::Null);
}

#[test]
fn detection_claims_claude_code_and_nothing_else() {
    assert!(ClaudeCode.detect(&streamed()));
    assert!(
        ClaudeCode
            .detect(&[snapshot(0), json!({"type": "queue-operation", "operation": "enqueue"})])
    );
    let openai = json!({"messages": [{"role": "user", "content": "hi"}], "type": "x", "uuid": "u"});
    assert!(!ClaudeCode.detect(&[openai]));
    let codex = json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}});
    assert!(!ClaudeCode.detect(&[codex.clone(), codex]));
    assert!(!ClaudeCode.detect(&[json!({"type": "message", "role": "user"})]));
    assert!(!ClaudeCode.detect(&[json!([1, 2])]));
}

#[test]
fn stripped_thinking_drops_its_event_and_relinks_its_children() {
    let mut s = decode(&streamed());
    s.messages[1].content.parts_mut().remove(0);
    let out = ClaudeCode.encode(&s, None);
    let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
    assert_eq!(uuids, ["u1", "a2", "a3", "r1", "a4", "r2", "a5", "d1"]);
    assert_eq!(out[2]["parentUuid"], "u1", "a2 pointed at the dropped a1");
    assert_eq!(out[2]["message"]["content"], json!([{"type": "text", "text": "Running both."}]));
}

#[test]
fn a_prepended_summary_lands_in_the_event_of_the_next_part() {
    let mut s = decode(&streamed());
    s.messages[1].content.prepend_text("SUMMARY");
    let out = ClaudeCode.encode(&s, None);
    let a1 = out.iter().find(|v| v["uuid"] == "a1").unwrap();
    assert_eq!(a1["message"]["content"][0]["text"], "SUMMARY");
    assert_eq!(a1["message"]["content"][1]["type"], "thinking");
    let a2 = out.iter().find(|v| v["uuid"] == "a2").unwrap();
    assert_eq!(a2["message"]["content"], json!([{"type": "text", "text": "Running both."}]));
}

#[test]
fn dropped_calls_leave_only_the_others() {
    let mut s = decode(&streamed());
    s.messages[1].tool_calls_mut().remove(1);
    s.messages.remove(3);
    let out = ClaudeCode.encode(&s, Some(&json!({})));
    let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
    assert_eq!(uuids, ["u1", "a1", "a2", "a3", "r1", "a5", "d1"]);
    let a5 = out.iter().find(|v| v["uuid"] == "a5").unwrap();
    assert_eq!(a5["parentUuid"], "r1", "re-linked past the dropped result");
}

#[test]
fn changed_results_keep_their_envelope() {
    let mut s = decode(&streamed());
    let line = "[terminal] ran `cargo test` -> exit 0, 1 lines output";
    s.messages[2].content.replace_with_text(line);
    let out = ClaudeCode.encode(&s, None);
    let r1 = out.iter().find(|v| v["uuid"] == "r1").unwrap();
    assert_eq!(r1["message"]["content"][0]["content"], line);
    assert_eq!(r1["message"]["content"][0]["tool_use_id"], "t_a");
    assert_eq!(r1["toolUseResult"]["stdout"], "full output");
}

#[test]
fn a_new_summary_message_gets_a_derived_uuid_and_a_continuous_chain() {
    let mut s = decode(&streamed());
    // Fold messages 1..4 (the tool group) into a summary, as the core does.
    let folded: Vec<Value> = s.messages.drain(1..4).flat_map(|mut m| m.take_attached()).collect();
    let mut summary = Message::text(Role::User, format!("{SUMMARY_PREFIX} Earlier turns ..."));
    summary.attached = folded.into();
    s.messages.insert(1, summary);
    let out = ClaudeCode.encode(&s, None);
    assert_eq!(out, ClaudeCode.encode(&s, None), "deterministic");
    let new = out
        .iter()
        .find(|v| v["message"]["content"].as_str().is_some_and(|t| t.starts_with(SUMMARY_PREFIX)))
        .unwrap();
    let uuid = new["uuid"].as_str().unwrap();
    assert_eq!(uuid.len(), 36);
    assert_eq!(&uuid[14..15], "8", "version 8");
    assert!(matches!(&uuid[19..20], "8" | "9" | "a" | "b"), "RFC 9562 variant");
    assert_eq!(new["parentUuid"], "u1");
    assert_eq!(new["type"], "user");
    assert_eq!(new["isSidechain"], false);
    assert_eq!(new["sessionId"], "S1");
    assert_eq!(new["cwd"], "/repo");
    assert_eq!(new["gitBranch"], "main");
    assert_eq!(new["version"], "2.1.89");
    assert_eq!(new["timestamp"], s.messages[0].extra["timestamp"], "the neighbour's time");
    // The next kept message pointed at a folded event: re-linked to the summary.
    let a5 = out.iter().find(|v| v["uuid"] == "a5").unwrap();
    assert_eq!(a5["parentUuid"], uuid);
    // Another parent gives another uuid.
    s.messages[0].extra_mut().insert("uuid".into(), json!("u1-other"));
    let other = ClaudeCode.encode(&s, None);
    assert!(other.iter().all(|v| v["uuid"] != uuid));
}

#[test]
fn a_new_summary_after_an_old_boundary_hangs_from_the_boundary() {
    let boundary = json!({"parentUuid": null, "isSidechain": false, "type": "system",
        "subtype": "compact_boundary", "uuid": "b1", "compactMetadata": {"preTokens": 9}});
    let v = vec![
        user("u1", None, json!("old ask")),
        asst("a1", "u1", "msg_1", json!([{"type": "text", "text": "old answer"}])),
        boundary,
        user("u2", Some("b1"), json!("This session is being continued from ...")),
        asst("a2", "u2", "msg_2", json!([{"type": "text", "text": "continuing"}])),
    ];
    let mut s = decode_as(&v, History::Live);
    // The core folds the old summary into a new one, which carries its records.
    let old = s.messages.remove(0);
    let mut summary = Message::text(Role::User, format!("{SUMMARY_PREFIX} updated"));
    summary.attached = old.attached;
    s.messages.insert(0, summary);
    let out = ClaudeCode.encode(&s, Some(&json!({})));
    let uuids: Vec<&str> = out.iter().filter_map(|v| v["uuid"].as_str()).collect();
    assert_eq!(uuids.len(), 5);
    assert_eq!(&uuids[..3], ["u1", "a1", "b1"]);
    assert_eq!(out[2]["parentUuid"], Value::Null, "the boundary stays a root");
    assert_eq!(out[3]["parentUuid"], "b1");
    assert_eq!(out[4]["parentUuid"], out[3]["uuid"], "a2 lost its parent u2");
}

#[test]
fn a_new_assistant_message_is_a_valid_event() {
    let mut s = decode(&[user("u1", None, json!("go"))]);
    s.messages.push(Message::text(Role::Assistant, "reply"));
    let out = ClaudeCode.encode(&s, Some(&json!({})));
    assert_eq!(out.len(), 2);
    assert_eq!(out[1]["type"], "assistant");
    assert_eq!(out[1]["parentUuid"], "u1");
    assert_eq!(out[1]["message"]["role"], "assistant");
    assert_eq!(out[1]["message"]["id"], out[1]["uuid"]);
    assert_eq!(out[1]["message"]["content"], json!([{"type": "text", "text": "reply"}]));
}

/// Found by the `decode` fuzz target: a file carrying our summary (compacted
/// earlier) with a parent naming no event was re-linked when written back
/// unchanged; decode + encode must give it back record for record.
#[test]
fn fuzz_decode_claude_code_dangling_parent() {
    let v = vec![
        user("u1", None, json!(format!("{SUMMARY_PREFIX} earlier turns"))),
        asst("a1", "lost", "msg_1", json!([{"type": "text", "text": "b"}])),
    ];
    let s = decode(&v);
    assert_eq!(ClaudeCode.encode(&s, None), v, "the source's own gap stays");
    let out = ClaudeCode.encode(&s, Some(&json!({"mode": "lean"})));
    assert_eq!(out[1]["parentUuid"], "u1", "compacted: re-linked");
}

#[test]
fn relinking_only_when_compacted() {
    let v = vec![
        user("u1", None, json!("a")),
        asst("a1", "lost", "msg_1", json!([{"type": "text", "text": "b"}])),
    ];
    let s = decode(&v);
    assert_eq!(ClaudeCode.encode(&s, None), v, "the source's own gap stays");
    let out = ClaudeCode.encode(&s, Some(&json!({"mode": "lean"})));
    assert_eq!(out[1]["parentUuid"], "u1");
    assert!(out.iter().all(|v| v.get("compaction").is_none()));
}

/// Found by the `decode` fuzz target: two events of one message id
/// carrying the same call were merged, and encoding put both copies of the
/// call into the first event.
#[test]
fn fuzz_decode_claude_code_repeated_message_id() {
    let ev = |uuid: &str| {
        json!({"parentUuid": null, "type": "assistant", "uuid": uuid, "message": {
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]}})
    };
    let v = vec![ev("a"), ev("b")];
    let s = decode(&v);
    assert_eq!(ClaudeCode.encode(&s, None), v);
}

/// Found by the `decode` fuzz target: a tool-result event written twice (same
/// uuid, same call id) was written back as one event holding both results.
#[test]
fn fuzz_decode_claude_code_repeated_result_event() {
    let call = json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]);
    let r = result("r1", "a1", "toolu_1", json!("out"));
    let v = vec![user("u1", None, json!("go")), asst("a1", "u1", "msg_1", call), r.clone(), r];
    assert_round_trip(&v);
}

/// Found by the `decode` fuzz target: a tool-result event and a user event
/// with the same uuid (a corrupt log) were written back as one event, as if
/// the user message were the rest of a mixed event.
#[test]
fn fuzz_decode_claude_code_repeated_uuid_user_event() {
    let r = result("u3", "a1", "toolu_b1", json!("FAILED"));
    let v = vec![r, user("u3", Some("a1"), json!("Also handle whitespace."))];
    let s = assert_round_trip(&v);
    assert_eq!(s.messages[1].extra[NEW_EVENT_KEY], true, "marked as an event of its own");
    // A mixed event (results, then text, in one event) is still one message pair
    // written back as one event, with no mark.
    let mixed = vec![user(
        "u4",
        None,
        json!([tool_result("toolu_c1", json!("ok")),
               {"type": "text", "text": "and more"}]),
    )];
    let s = assert_round_trip(&mixed);
    assert!(s.messages.iter().all(|m| !m.extra.contains_key(NEW_EVENT_KEY)));
    // Two result events with one uuid and two call ids stay two events.
    let two = vec![
        result("u5", "a1", "toolu_d1", json!("one")),
        result("u5", "a1", "toolu_d2", json!("two")),
    ];
    let s = assert_round_trip(&two);
    assert_eq!(s.messages[1].extra[NEW_EVENT_KEY], true);
    // One event with two results of one call id stays one event.
    let twice = json!([tool_result("toolu_e1", json!("a")), tool_result("toolu_e1", json!("b"))]);
    assert_round_trip(&[user("u6", None, twice)]);
}

#[test]
fn any_order_or_gap_round_trips() {
    // Every record removed, and every pair swapped: orphans, forward parents,
    // parts before their first part, results before their calls.
    let base = streamed();
    let mut cases = Vec::new();
    for i in 0..base.len() {
        let mut v = base.clone();
        v.remove(i);
        cases.push(v);
        for j in i + 1..base.len() {
            let mut v = base.clone();
            v.swap(i, j);
            cases.push(v);
        }
    }
    for v in &cases {
        let s = decode(v);
        assert_eq!(&ClaudeCode.encode(&s, None), v);
        // Compacted-mode encoding never panics and leaves no dangling parent.
        let out = ClaudeCode.encode(&s, Some(&json!({})));
        let mut seen = HashSet::new();
        for e in &out {
            if let Some(Value::String(p)) = e.get("parentUuid") {
                assert!(seen.contains(p.as_str()), "{p} in {out:?}");
            }
            if let Some(u) = e.get("uuid").and_then(Value::as_str) {
                seen.insert(u);
            }
        }
    }
}

#[test]
fn align_prefers_matches_and_treats_leading_extras_as_additions() {
    assert_eq!(align(&["a", "b"], &["a", "b"]), [Some(0), Some(1)]);
    assert_eq!(align(&["thinking", "text"], &["text"]), [Some(1)]);
    assert_eq!(
        align(&["thinking", "text"], &["text", "thinking", "text"]),
        [None, Some(0), Some(1)]
    );
    assert_eq!(align(&["text", "text"], &["text", "text", "text"]), [None, Some(0), Some(1)]);
    assert_eq!(align(&[], &["x"]), [None]);
}

/// Found by the `decode` fuzz target (session 8): an assistant event written
/// twice (same uuid, same message id), the copy's block mangled into one the
/// reader does not know (`"type": "tool_use:"`), was merged into the first
/// copy as a later streamed block, and written back as one event holding both.
#[test]
fn fuzz_decode_claude_code_repeated_assistant_event() {
    let call = |ty: &str| json!([{"type": ty, "id": "toolu_b1", "name": "Bash", "input": {}}]);
    let v = vec![
        user("u1", None, json!("go")),
        asst("a1", "u1", "msg_1", call("tool_use")),
        result("r1", "a1", "toolu_b1", json!("FAILED")),
        asst("a1", "u1", "msg_1", call("tool_use")),
        asst("a1", "u1", "msg_1", call("tool_use:")),
    ];
    assert_round_trip(&v);
    // A kind that starts with the escape itself is escaped too.
    let mut w = v;
    w.push(asst("a1", "u1", "msg_1", call("=tool_use:toolu_b1")));
    assert_round_trip(&w);
}
