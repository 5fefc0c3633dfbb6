use super::*;
use crate::formats::Adapter;
use crate::formats::openai::OpenAi;
use crate::formats::testing::{assert_same_json, decode_one};
use crate::model::ArgsForm;
use serde_json::json;

fn decode(v: Value) -> Session {
    decode_one(&ShareGpt, v).expect("decodes")
}

fn encode(s: &Session) -> Value {
    ShareGpt.encode(s, None).remove(0)
}

/// Found by the `decode` fuzz target: a `tool` entry without `value` (the
/// key misspelt) is read as a plain entry, but was written as a result:
/// its other keys came back wrapped in a `<tool_response>`.
#[test]
fn fuzz_decode_sharegpt_tool_entry_without_value() {
    let call = "<tool_call>\n{\"name\": \"Read\", \"arguments\": {}}\n</tool_call>";
    let resp = "<tool_response>\n{\"name\": \"Read\", \"content\": \"x\"}\n</tool_response>";
    for v in [
        json!({"conversations": [{"from": "human", "value": "go"},
            {"from": "gpt", "value": call}, {"from": "tool", "valug": resp}]}),
        json!({"conversations": [{"from": "human", "value": "go"}, {"from": "tool"},
            {"from": "observation"}, {"from": "tool", "value": resp}]}),
        json!({"conversations": [{"from": "gpt", "value": call},
            {"from": "tool", "value": resp}, {"from": "tool", "tool_call_id": "c9"}]}),
    ] {
        let s = decode(v.clone());
        assert!(s.messages.iter().any(|m| m.role == Role::Tool && novalue(m)), "{v}");
        assert_eq!(encode(&s), v);
        assert_eq!(decode(encode(&s)), s);
    }
}

/// Found by the `decode` fuzz target: a second result with the id of a call
/// the first already answered answers nothing when read, so its `name`
/// is its own, kept where it was; the writer derived it from the call
/// (the latest with that id) and moved it after `content`.
#[test]
fn fuzz_decode_sharegpt_call_pairing() {
    let call = |name: &str| {
        format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {{}}}}\n</tool_call>")
    };
    let resp = |id: &str, name: &str| {
        format!(
            "<tool_response>\n{{\"tool_call_id\": \"{id}\", \"name\": \"{name}\", \"content\": \"ok\"}}\n</tool_response>"
        )
    };
    for v in [
        json!({"conversations": [{"from": "gpt", "value": call("Edit")},
            {"from": "tool", "value": resp("c8", "Edit")},
            {"from": "tool", "value": resp("c8", "Edit")}]}),
        // Two calls with one id: the results answer them in order.
        json!({"conversations": [
            {"from": "gpt", "value": call("Read").replace("\"name\"", "\"id\": \"c1\", \"name\"")},
            {"from": "gpt", "value": call("Bash").replace("\"name\"", "\"id\": \"c1\", \"name\"")},
            {"from": "tool", "value": resp("c1", "Read")},
            {"from": "tool", "value": resp("c1", "Bash")}]}),
    ] {
        let s = decode(v.clone());
        assert_eq!(encode(&s), v);
        assert_eq!(decode(encode(&s)), s);
    }
}

/// Found by the `decode` fuzz target: a result with no id (an unclosed
/// tag) took the oldest call, whose id a later result names explicitly;
/// that result then answered nothing, kept its name as written, and the
/// writer (which derives the name) moved it: the round trip reordered keys.
#[test]
fn fuzz_decode_sharegpt_anonymous_result_takes_a_named_call() {
    let call = |cmd: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"Bash\", \"arguments\": {{\"command\": \"{cmd}\"}}}}\n</tool_call>"
        )
    };
    let resp = |id: &str, name: &str| {
        format!(
            "<tool_response>\n{{\"tool_call_id\": \"{id}\", \"name\": \"{name}\", \"content\": \"ok\"}}\n</tool_response>"
        )
    };
    let v = json!({"conversations": [
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": call("a")},
        {"from": "tool", "value": "<tool_response>\n{\"tool_call_id\": \"c1\", \"conte}}"},
        {"from": "tool", "value": resp("c4", "Edit")},
        {"from": "gpt", "value": call("b")},
        {"from": "tool", "value": resp("c5", "Bash")},
        {"from": "gpt", "value": "done"}
    ]});
    let s = same(v);
    let answered: Vec<_> = s.messages.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    assert!(answered.iter().filter(|id| **id == "c5").count() <= 1, "{answered:?}");
}

fn openai(v: Value) -> Session {
    decode_one(&OpenAi, v).expect("decodes")
}

fn same(v: Value) -> Session {
    let s = decode(v.clone());
    let out = encode(&s);
    assert_same_json(&out, &v);
    s
}

#[test]
fn hermes_agent_trajectory_roundtrips() {
    let v = json!({"conversations": [
        {"from": "system", "value": "You are a function calling AI model. <tools>[]</tools>"},
        {"from": "human", "value": "List the files, then read a.py."},
        {"from": "gpt", "value": "<think>\nfirst ls\n</think>\nLet me look.\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>"},
        {"from": "tool", "value": "<tool_response>\n{\"tool_call_id\": \"call_1\", \"name\": \"terminal\", \"content\": \"a.py\\nb.py\"}\n</tool_response>\n<tool_response>\n{\"tool_call_id\": \"call_2\", \"name\": \"read_file\", \"content\": {\"lines\": 3, \"text\": \"print(1)\"}}\n</tool_response>"},
        {"from": "gpt", "value": "<think>\n</think>\nDone."}
    ], "timestamp": "2026-05-15T10:00:00", "model": "m", "completed": true});
    let s = same(v);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "assistant"]);
    let a = &s.messages[2];
    assert_eq!(a.text_content(), "<think>\nfirst ls\n</think>\nLet me look.");
    assert_eq!(a.tool_calls[0].id, "call_1");
    assert_eq!(a.tool_calls[1].id, "call_2");
    assert_eq!(a.tool_calls[0].arguments, r#"{"command": "ls"}"#);
    assert_eq!(a.tool_calls[0].args_form, ArgsForm::String);
    assert!(!a.extra.contains_key(LAYOUT));
    assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(s.messages[3].text_content(), "a.py\nb.py");
    assert!(!s.messages[3].extra.contains_key("name"));
    assert_eq!(s.messages[4].text_content(), r#"{"lines": 3, "text": "print(1)"}"#);
    let out = OpenAi.encode(&s, None).remove(0);
    assert_eq!(
        out["messages"][2]["tool_calls"][1]["function"]["arguments"],
        json!(r#"{"path": "a.py"}"#)
    );
    assert_eq!(
        out["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"})
    );
}

#[test]
fn hermes_v1_python_calls_and_unnamed_ids() {
    let v = json!({"id": "f37cd", "conversations": [
        {"from": "human", "value": "Price of TSLA and AAPL?"},
        {"from": "gpt", "value": "<tool_call>\n{'arguments': {'symbol': 'TSLA'}, 'name': 'get_price'}\n</tool_call>\n<tool_call>\n{'arguments': {'symbol': 'AAPL'}, 'name': 'get_price'}\n</tool_call>\n"},
        {"from": "tool", "value": "<tool_response>\n{\"name\": \"get_price\", \"content\": {\"symbol\": \"TSLA\", \"price\": 191.97}}\n</tool_response>\n<tool_response>\n{\"name\": \"get_price\", \"content\": {\"symbol\": \"AAPL\", \"price\": 180.5}}\n</tool_response>\n"},
        {"from": "gpt", "value": "TSLA is 191.97, AAPL 180.5."}
    ], "category": "Finance"});
    let s = same(v);
    let a = &s.messages[1];
    assert_eq!(a.tool_calls.len(), 2);
    assert_eq!(a.tool_calls[0].id, "sharegpt-1-0");
    assert_eq!(a.tool_calls[1].id, "sharegpt-1-1");
    assert_eq!(a.tool_calls[0].arguments, r#"{"symbol": "TSLA"}"#);
    assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("sharegpt-1-0"));
    assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("sharegpt-1-1"));
    assert_eq!(s.messages[3].text_content(), r#"{"symbol": "AAPL", "price": 180.5}"#);
}

#[test]
fn old_style_function_call_and_observation() {
    let v = json!({"conversations": [
        {"from": "human", "value": "Weather in Beijing?"},
        {"from": "function_call", "value": "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}"},
        {"from": "observation", "value": "{\"temp\": 18}"},
        {"from": "gpt", "value": "18 degrees."}
    ], "tools": "[{\"name\": \"get_weather\"}]", "system": "Be short."});
    let s = same(v);
    assert_eq!(s.messages[0].role, Role::System);
    assert_eq!(s.messages[2].tool_calls[0].name, "get_weather");
    assert_eq!(
        s.messages[3].tool_call_id.as_deref(),
        Some(s.messages[2].tool_calls[0].id.as_str())
    );
    assert_eq!(s.tools, Some(json!("[{\"name\": \"get_weather\"}]")));
}

#[test]
fn text_around_tags_and_odd_whitespace() {
    let v = json!({"conversations": [
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": "I'll read both.<tool_call>{\"name\":\"read\",\"arguments\":{\"p\":\"a\"}}</tool_call> then <tool_call>\n  {\"name\": \"read\", \"arguments\": {\"p\": \"b\"}, \"id\": \"x9\"}\n</tool_call>\nThen summarize.", "weight": 1},
        {"from": "tool", "value": "Results:\n<tool_response>\nplain text result\n</tool_response><tool_response>{\"content\": \"b\", \"tool_call_id\": \"x9\"}</tool_response>", "weight": 0},
        {"from": "gpt", "value": "<tool_call>not json</tool_call>"}
    ]});
    let s = same(v);
    let a = &s.messages[1];
    assert_eq!(a.tool_calls.len(), 2);
    assert_eq!(a.tool_calls[1].id, "x9");
    assert_eq!(a.text_content(), "I'll read both. then \nThen summarize.");
    assert_eq!(s.messages[2].text_content(), "plain text result");
    assert_eq!(s.messages[2].tool_call_id.as_deref(), Some(a.tool_calls[0].id.as_str()));
    assert_eq!(s.messages[3].tool_call_id.as_deref(), Some("x9"));
    assert!(s.messages[4].tool_calls.is_empty());
    assert_eq!(s.messages[4].text_content(), "<tool_call>not json</tool_call>");
}

#[test]
fn openai_roundtrip_is_identical() {
    let v = json!({
        "id": "s1",
        "messages": [
            {"role": "system", "content": "be brief", "x_prompt_version": 3},
            {"role": "developer", "content": "dev note"},
            {"role": "user", "content": [{"type": "text", "text": "hi"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "high"}},
                {"type": "text", "text": "two\nlines"}], "name": "alice"},
            {"role": "assistant", "content": "calling", "reasoning_content": "think",
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.rs\"}"}},
                            {"id": "c2", "type": "function", "function": {"name": "raw", "arguments": "not json"}},
                            {"id": "c3", "index": 2, "function": {"name": "obj", "arguments": {"a": 1}}}]},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "image_url", "image_url": "https://x.test/i.png"}, {"type": "text", "text": "shot"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "fn main() {}", "name": "read_file"},
            {"role": "tool", "tool_call_id": "c3", "content": null, "x_exit_code": 0},
            {"role": "user", "content": "next"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c4", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c4", "content": "ok"},
            {"role": "assistant", "tool_calls": [{"id": "c5", "type": "function", "function": {"name": "f", "arguments": "{\"k\":\"é\"}"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c6", "type": "function", "function": {"name": "f", "arguments": "{\"k\": \"\\u00e9\"}"}}]},
            {"role": "tool", "tool_call_id": "c6", "content": "ok6"},
            {"role": "tool", "tool_call_id": "c5", "content": "ok5"},
            {"role": "assistant", "content": null},
            {"role": "exit", "content": "bye", "weird": [1, 2]}
        ],
        "tools": [{"type": "function", "function": {"name": "read_file"}}],
        "meta": {"k": 1}
    });
    let x = encode(&openai(v.clone()));
    let back = OpenAi.encode(&decode(x.clone()), None).remove(0);
    assert_eq!(back, v, "sharegpt form: {x}");
    let c = &x["conversations"];
    assert_eq!(c[0], json!({"from": "system", "value": "be brief", "x_prompt_version": 3}));
    // ShareGPT has no developer turn: `system`, the role carried aside.
    assert_eq!(c[1], json!({"from": "system", "value": "dev note", "openai_role": "developer"}));
    assert_eq!(c[2]["value"], json!("hi\ntwo\nlines"));
    assert_eq!(
        c[3]["value"],
        json!(
            "calling\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"raw\", \"arguments\": \"not json\"}\n</tool_call>\n<tool_call>\n{\"name\": \"obj\", \"arguments\": {\"a\": 1}, \"openai_call\": {\"index\": 2}, \"openai_arguments\": \"value\"}\n</tool_call>"
        )
    );
    assert_eq!(c[4]["from"], json!("tool"));
    assert!(c[4]["value"].as_str().unwrap().starts_with("<tool_response>\n{\"tool_call_id\": \"c2\", \"name\": \"raw\", \"content\": \"shot\", \"content_parts\": "));
    assert!(ShareGpt.detect(std::slice::from_ref(&x)));
    // Written again from its own decoding, it is the same record.
    assert_eq!(encode(&decode(x.clone())), x);
}

#[test]
fn ids_are_written_only_where_needed() {
    // Two calls to the same tool answered out of order: the first call needs its id.
    let v = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "z", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    ]});
    let x = encode(&openai(v.clone()));
    let gpt = x["conversations"][1]["value"].as_str().unwrap();
    assert!(gpt.contains("\"id\": \"a\""), "{gpt}");
    assert!(!gpt.contains("\"id\": \"b\""), "{gpt}");
    let last = x["conversations"][3]["value"].as_str().unwrap();
    assert!(last.contains("\"id\": \"z\""), "{last}");
    assert_eq!(OpenAi.encode(&decode(x), None).remove(0), v);
}

#[test]
fn compacted_sessions_pair_again() {
    let v = json!({"conversations": [
        {"from": "human", "value": "a"},
        {"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"},
        {"from": "tool", "value": "<tool_response>\n{\"name\": \"f\", \"content\": \"1\"}\n</tool_response>"},
        {"from": "gpt", "value": "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>"},
        {"from": "tool", "value": "<tool_response>\n{\"name\": \"g\", \"content\": \"2\"}\n</tool_response>"}
    ]});
    let mut s = decode(v);
    // Drop the first group, as a compaction would: ids get renumbered,
    // nothing new is written.
    s.messages.drain(1..3);
    s.messages.insert(1, Message::text(Role::User, "summary"));
    let out = encode(&s);
    let text = out.to_string();
    assert!(!text.contains("sharegpt-"), "{text}");
    assert!(!text.contains("tool_call_id"), "{text}");
    let again = decode(out);
    assert_eq!(
        again.messages[3].tool_call_id.as_deref(),
        Some(again.messages[2].tool_calls[0].id.as_str())
    );
}

/// Pieces a generated `value` is built from.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "\n",
    "\n\n",
    " ",
    "text",
    "é",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
    "{\"name\":\"g\",\"arguments\":{\"b\":\"\\u00e9\"}}",
    "{'arguments': {'x': None}, 'name': 'h'}",
    "{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}",
    "{\"name\": \"f\", \"arguments\": {}, \"id\": \"i1\"}",
    "{\"tool_call_id\": \"i1\", \"name\": \"f\", \"content\": \"ok\"}",
    "{\"name\": \"f\", \"content\": {\"k\": [1, 2.5]}}",
    "{\"content\": null}",
    "{\"tool_call_id\": \"sharegpt-1-0\", \"content\": \"x\"}",
    "{\"name\": \"g\", \"content\": \"y\", \"extra\": true}",
    "{",
    "}",
    "\"",
    "1e-07",
    "{\"name\": 5}",
];
const LABELS: &[&str] =
    &["human", "gpt", "tool", "function_call", "observation", "system", "chatgpt", "other"];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    /// Any conversation reads and writes back exactly, and its OpenAI form
    /// reads back into the same record through ShareGPT.
    #[test]
    fn any_value_roundtrips(entries in proptest::collection::vec(
        (0..LABELS.len(), proptest::collection::vec(0..PIECES.len(), 0..8)), 0..8)) {
        let conv: Vec<Value> = entries.iter().map(|(l, ps)| {
            let value: String = ps.iter().map(|&i| PIECES[i]).collect();
            json!({"from": LABELS[*l], "value": value})
        }).collect();
        let v = json!({"conversations": conv});
        let s = decode(v.clone());
        proptest::prop_assert_eq!(encode(&s), v);
        let o = OpenAi.encode(&s, None).remove(0);
        let again = encode(&openai(o.clone()));
        let s2 = decode(again);
        proptest::prop_assert_eq!(OpenAi.encode(&s2, None).remove(0), o);
    }
}

#[test]
fn detection_and_bad_records() {
    let ok = json!({"conversations": [{"from": "human", "value": "hi"}]});
    assert!(ShareGpt.detect(std::slice::from_ref(&ok)));
    assert!(!ShareGpt.detect(&[json!({"messages": [{"role": "user", "content": "hi"}]})]));
    assert!(!ShareGpt.detect(&[json!({"conversations": [{"role": "user", "content": "hi"}]})]));
    for bad in [
        json!(1),
        json!({"conversations": {}}),
        json!({"conversations": [1]}),
        json!({"conversations": [{"value": "x"}]}),
        json!({"conversations": [{"from": "human", "value": 3}]}),
        json!({"conversations": [], "messages": []}),
    ] {
        let r = decode_one(&ShareGpt, bad.clone());
        assert!(r.is_err(), "accepted {bad}");
    }
    for odd in [
        json!({"conversations": [{"from": "gpt"}, {"from": "tool", "value": "<tool_response>x"}]}),
        json!({"conversations": [{"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\"}\n</tool_call>"}]}),
        json!({"conversations": [{"from": "gpt", "value": "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1e400}}\n</tool_call>"}]}),
        json!({"conversations": [{"from": "tool", "value": "<tool_response>\n{\"content\": 1.0e-7}\n</tool_response>"}]}),
        json!({"conversations": [{"from": "tool", "value": "a"}, {"from": "tool", "value": "b"}]}),
        json!({"conversations": [{"from": "human", "value": "x", "content_parts": [{"type": "text", "text": 9}]}]}),
    ] {
        assert_eq!(encode(&decode(odd.clone())), odd);
    }
}
