use super::*;
use crate::formats::openai::OpenAi;
use crate::model::{CallMark, History, Message, Part, Role, Source};
use serde_json::json;

fn rec(i: usize, value: Value) -> Record {
    Record {
        source: Source { path: "t.jsonl".into(), line: Some(i as u64 + 1), index: None },
        value,
    }
}

fn decode(lines: &[Value]) -> Session {
    decode_as(lines, History::Full)
}

fn decode_as(lines: &[Value], history: History) -> Session {
    Codex
        .decode(lines.iter().cloned().enumerate().map(|(i, v)| rec(i, v)).collect(), history)
        .unwrap()
}

fn line(ts: &str, ty: &str, payload: Value) -> Value {
    json!({"timestamp": ts, "type": ty, "payload": payload})
}

fn item(ts: &str, payload: Value) -> Value {
    line(ts, "response_item", payload)
}

fn meta() -> Value {
    line(
        "t0",
        "session_meta",
        json!({"id": "s-1", "cwd": "/w", "base_instructions": {"text": "be good"}}),
    )
}

fn text(role: &str, t: &str) -> Value {
    let ty = if role == "assistant" { "output_text" } else { "input_text" };
    json!({"type": "message", "role": role, "content": [{"type": ty, "text": t}]})
}

fn call(id: &str) -> Value {
    json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": id})
}

fn output(id: &str, out: Value) -> Value {
    json!({"type": "function_call_output", "call_id": id, "output": out})
}

fn sample() -> Vec<Value> {
    vec![
        meta(),
        line("t1", "turn_context", json!({"cwd": "/w"})),
        item("t2", text("user", "list the files")),
        item(
            "t3",
            json!({"type": "reasoning", "summary": [], "content": null, "encrypted_content": "gAAA"}),
        ),
        line("t4", "event_msg", json!({"type": "agent_message", "message": "ok"})),
        item("t5", text("assistant", "Listing.")),
        item("t6", call("a")),
        line("t7", "event_msg", json!({"type": "exec_command_end", "call_id": "a"})),
        item("t8", call("b")),
        line(
            "t9",
            "event_msg",
            json!({"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 10}, "last_token_usage": {"input_tokens": 10, "output_tokens": 3}}}),
        ),
        item("t10", output("b", json!("b.txt"))),
        item("t11", output("a", json!("a.txt"))),
        item("t12", text("assistant", "Two files.")),
    ]
}

/// Found by the `decode` fuzz target: two calls of one message with the
/// same `call_id` (a corrupt rollout) were written back with the first
/// call's timestamp for both.
#[test]
fn fuzz_decode_codex_repeated_call_id() {
    let lines = vec![
        meta(),
        item("t1", text("user", "go")),
        item("t2", call("c2")),
        line("t3", "event_msg", json!({"type": "agent_message", "message": "ok"})),
        item("t4", call("c2")),
        item("t5", output("c2", json!("done"))),
        item("t6", text("assistant", "Done.")),
    ];
    let s = decode(&lines);
    assert_eq!(Codex.encode(&s, None), lines);
}

#[test]
fn roundtrip_keeps_every_line_and_key_order() {
    let lines = sample();
    let s = decode(&lines);
    let out = Codex.encode(&s, Some(&json!({"mode": "lean"})));
    assert_eq!(out, lines);
    let text = |v: &[Value]| v.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
    assert_eq!(text(&out), text(&lines));
}

#[test]
fn parallel_calls_are_one_group_with_interleaved_records() {
    let s = decode(&sample());
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "assistant", "tool", "tool", "assistant"]);
    assert_eq!(s.id, "s-1");
    assert_eq!(s.messages[0].text_content(), "be good");
    let group = &s.messages[3];
    let ids: Vec<&str> = group.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    // The reply's text opened the call; its calls continue it, and the
    // call's usage is on the message that opened it.
    assert_eq!(s.messages[2].meta.call, CallMark::Opens);
    assert_eq!(group.meta.call, CallMark::Continues);
    assert_eq!(group.meta.usage, None);
    assert_eq!(s.messages[2].meta.usage.and_then(|u| u.output_tokens), Some(3));
    assert!(matches!(s.messages[2].content.parts[0], Part::Reasoning(_)));
    assert_eq!(s.messages[2].text_content(), "Listing.");
    assert_eq!(s.messages[4].tool_call_id.as_deref(), Some("b"));
    assert_eq!(s.messages[5].meta.timestamp.as_deref(), Some("t11"));
}

#[test]
fn openai_conversion_fills_every_slot() {
    let s = decode(&sample());
    let v = OpenAi.encode(&s, None).remove(0);
    let text = v.to_string();
    assert!(!text.contains('\u{fdd0}'), "{text}");
    let m = &v["messages"];
    assert_eq!(m[3]["tool_calls"][0]["id"], "a");
    assert_eq!(m[3]["tool_calls"][1]["function"]["name"], "shell");
    assert_eq!(m[4]["tool_call_id"], "b");
    assert_eq!(m[4]["content"], "b.txt");
    assert_eq!(m[1]["content"][0]["text"], "list the files");
    assert_eq!(m[0]["content"], "be good");
    // Non-chat lines travel with their message; the session_meta line keeps its data.
    let carried = &m[0]["compactor_attached"][0]["compactor_codex"]["session_meta"]["payload"];
    assert_eq!(carried["id"], "s-1");
    assert_eq!(m[1]["compactor_attached"][0]["type"], "turn_context");
}

#[test]
fn new_messages_take_the_previous_lines_timestamp() {
    let mut s = decode(&sample());
    // What assemble does: a fresh summary message and a note on the prompt.
    s.messages.insert(2, Message::text(Role::User, "[CONTEXT COMPACTION — REFERENCE ONLY] x"));
    s.messages[0].content.append_text("NOTE");
    s.messages[3].content.prepend_text("merged");
    let out = Codex.encode(&s, None);
    assert_eq!(out[0]["payload"]["base_instructions"]["text"], "be good\n\nNOTE");
    assert_eq!(out[2]["payload"]["content"][0]["text"], "list the files");
    assert_eq!(
        out[3],
        item(
            "t2",
            json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "[CONTEXT COMPACTION — REFERENCE ONLY] x"}]})
        )
    );
    // A part added to a decoded message is written the way Codex writes parts.
    let merged = out.iter().find(|l| l["timestamp"] == "t5").unwrap();
    assert_eq!(merged["payload"]["content"][0], json!({"type": "output_text", "text": "merged"}));
    assert_eq!(merged["payload"]["content"][1]["text"], "Listing.");
}

#[test]
fn dropped_calls_and_folded_records_stay_consistent() {
    let mut s = decode(&sample());
    // Sanitize-like: call `b` and its result go; its records move on.
    s.messages[3].tool_calls_mut().retain(|c| c.id == "a");
    let mut dropped = s.messages.remove(4);
    let mut carried = dropped.take_attached();
    carried.append(&mut s.messages[4].take_attached());
    s.messages[4].attached = carried.into();
    let out = Codex.encode(&s, None);
    let kinds: Vec<String> = out
        .iter()
        .map(|l| {
            format!(
                "{}/{}",
                l["type"].as_str().unwrap(),
                l["payload"]["type"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session_meta/",
            "turn_context/",
            "response_item/message",
            "response_item/reasoning",
            "event_msg/agent_message",
            "response_item/message",
            "response_item/function_call",
            "event_msg/exec_command_end",
            "event_msg/token_count",
            "response_item/function_call_output",
            "response_item/message"
        ]
    );
    assert!(!out.iter().any(|l| l.to_string().contains('\u{fdd0}')));
    // Folding the group into a (new) summary keeps its non-chat records.
    let mut s = decode(&sample());
    let folded: Vec<Value> = s.messages.drain(2..6).flat_map(|mut m| m.take_attached()).collect();
    let mut summary = Message::text(Role::User, "summary");
    summary.attached = folded.into();
    s.messages.insert(2, summary);
    let out = Codex.encode(&s, None);
    assert!(out.iter().any(|l| l["payload"]["type"] == "exec_command_end"));
    assert!(out.iter().any(|l| l["payload"]["type"] == "agent_message"));
    assert!(!out.iter().any(|l| l["payload"]["type"] == "function_call"));
    let summary_line =
        out.iter().find(|l| l["payload"]["content"][0]["text"] == "summary").unwrap();
    assert_eq!(summary_line["timestamp"], "t9");
}

#[test]
fn replacement_history_is_live_and_written_back_in_its_line() {
    let lines = vec![
        meta(),
        item("t1", text("user", "old ask")),
        item("t2", call("old")),
        line(
            "t3",
            "compacted",
            json!({"message": "", "replacement_history": [
                text("user", "old ask"),
                {"type": "compaction", "encrypted_content": "gAAAsummary"},
                text("user", "<environment_context>x</environment_context>")
            ]}),
        ),
        item("t4", output("old", json!("late"))),
        item("t5", text("user", "new ask")),
    ];
    let s = decode_as(&lines, History::Live);
    let texts: Vec<_> = s.messages.iter().map(Message::text_content).collect();
    assert_eq!(
        texts,
        ["be good", "old ask", "<environment_context>x</environment_context>", "new ask"]
    );
    assert_eq!(s.messages[1].meta.timestamp.as_deref(), Some("t3"));
    assert_eq!(s.recorded_compactions.len(), 1);
    assert_eq!(Codex.encode(&decode(&lines), None), lines, "read full");
    assert_eq!(Codex.encode(&s, None), lines);
    // A summary inserted inside the replacement history goes into it.
    let mut s2 = s.clone();
    s2.messages.insert(2, Message::text(Role::Assistant, "S"));
    let out = Codex.encode(&s2, None);
    assert_eq!(out.len(), lines.len());
    let h = out[3]["payload"]["replacement_history"].as_array().unwrap();
    assert_eq!(h.len(), 4);
    assert_eq!(
        h[1],
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "S"}]})
    );
    assert_eq!(h[2]["type"], "compaction");
    // Folding the history's last message moves the compaction item and the close with it.
    let mut s3 = s;
    let mut folded = s3.messages.remove(2);
    let mut carried = folded.take_attached();
    carried.append(&mut s3.messages[2].take_attached());
    s3.messages[2].attached = carried.into();
    let out = Codex.encode(&s3, None);
    let h = out[3]["payload"]["replacement_history"].as_array().unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[1]["type"], "compaction");
    assert_eq!(out[4]["payload"]["output"], "late");
}

#[test]
fn call_shapes_roundtrip_and_convert() {
    let lines = vec![
        meta(),
        item(
            "t1",
            json!({"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}", "call_id": "c1"}),
        ),
        item(
            "t2",
            json!({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch\n"}),
        ),
        item(
            "t3",
            json!({"type": "local_shell_call", "call_id": "c3", "status": "completed", "action": {"type": "exec", "command": ["ls"]}}),
        ),
        item("t4", output("c1", json!([{"type": "input_text", "text": "x"}]))),
        item("t5", json!({"type": "custom_tool_call_output", "call_id": "c2", "output": "ok"})),
        item("t6", output("c3", json!({"content": "done", "success": true}))),
    ];
    let s = decode(&lines);
    assert_eq!(Codex.encode(&s, None), lines);
    let calls = &s.messages[1].tool_calls;
    assert_eq!(calls[1].args_object().unwrap()["input"], "*** Begin Patch\n");
    assert_eq!(calls[2].name, LOCAL_SHELL);
    let v = OpenAi.encode(&s, None).remove(0);
    assert!(!v.to_string().contains('\u{fdd0}'));
    assert_eq!(v["messages"][1]["tool_calls"][0]["item_id"], "fc_1");
    assert_eq!(v["messages"][2]["content"][0]["text"], "x");
    // Shrunk arguments are written back in the item's own field.
    let mut s = s;
    s.messages[1].tool_calls_mut()[1].arguments = r#"{"input":"short"}"#.into();
    s.messages[2].content.replace_with_text("[terminal] one-liner");
    let out = Codex.encode(&s, None);
    assert_eq!(out[2]["payload"]["input"], "short");
    assert_eq!(
        out[4]["payload"]["output"],
        json!([{"type": "input_text", "text": "[terminal] one-liner"}])
    );
}

#[test]
fn detection_is_specific() {
    assert!(Codex.detect(&sample()));
    assert!(Codex.detect(&sample()[1..]), "no session_meta (a resumed tail)");
    assert!(!Codex.detect(&[json!({"messages": [{"role": "user", "content": "x"}]})]));
    assert!(!Codex.detect(&[json!({"type": "user", "message": {"role": "user", "content": "x"},
        "uuid": "u", "timestamp": "t"})]));
    assert!(
        !Codex.detect(&[line("t", "event_msg", json!({"type": "token_count"}))]),
        "events only"
    );
    assert!(!Codex.detect(&[]));
}

#[test]
fn bad_lines_are_errors_that_name_the_line() {
    for bad in [json!(5), json!("x"), json!({"payload": {}})] {
        let mut lines = sample();
        lines.insert(3, bad);
        let err = Codex
            .decode(lines.into_iter().enumerate().map(|(i, v)| rec(i, v)).collect(), History::Full)
            .unwrap_err();
        assert_eq!(err.source.and_then(|s| s.line), Some(4));
    }
}

#[test]
fn unknown_and_malformed_items_pass_through() {
    let lines = vec![
        meta(),
        item("t1", json!({"type": "message", "role": "user", "content": "not an array"})),
        item(
            "t2",
            json!({"type": "function_call", "name": "f", "arguments": {"a": 1}, "call_id": "x"}),
        ),
        item("t3", json!({"type": "brand_new", "x": 1})),
        json!({"timestamp": "t4", "type": "response_item", "payload": text("user", "hi"), "extra": 1}),
        item("t5", text("user", "real")),
    ];
    let s = decode(&lines);
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.messages[1].attached.len(), 5);
    assert_eq!(Codex.encode(&s, None), lines);
}

#[test]
fn any_value_in_any_field_roundtrips_or_errors() {
    // Every key of every line, and of every replacement-history item, set
    // to each JSON kind: never a panic, and whatever decodes encodes back.
    let mut base = sample();
    base.push(line(
        "t13",
        "compacted",
        json!({"message": "m", "replacement_history": [
        text("user", "u"), {"type": "compaction", "encrypted_content": "e"}, call("z")]}),
    ));
    base.push(item("t14", output("z", json!("late"))));
    let kinds =
        [json!(null), json!(1), json!("s"), json!([]), json!({}), json!([{"type": "input_text"}])];
    let mut tried = 0;
    for i in 0..base.len() {
        let mut paths: Vec<Vec<String>> = Vec::new();
        if let Some(line) = base[i].as_object() {
            for (k, v) in line {
                paths.push(vec![k.clone()]);
                for k2 in
                    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_else(Vec::new)
                {
                    paths.push(vec![k.clone(), k2]);
                }
            }
        }
        for path in paths {
            for kind in &kinds {
                let mut lines = base.clone();
                let mut at = &mut lines[i];
                for k in &path {
                    at = &mut at[k.as_str()];
                }
                *at = kind.clone();
                tried += 1;
                let records: Vec<Record> =
                    lines.iter().cloned().enumerate().map(|(i, v)| rec(i, v)).collect();
                for history in [History::Full, History::Live] {
                    if let Ok(s) = Codex.decode(records.clone(), history) {
                        assert_eq!(Codex.encode(&s, None), lines, "{i} {path:?} {kind} {history}");
                    }
                }
            }
        }
    }
    assert!(tried > 300, "{tried}");
}
