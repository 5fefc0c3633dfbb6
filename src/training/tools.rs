//! Tool schemas inferred from a session's calls, for logs that carry none
//! (Claude Code, Codex).
//!
//! ## What it does
//! [`infer`] gives one Chat Completions function per tool name called, in the
//! order of first call: `{"type": "function", "function": {"name", "parameters":
//! {"type": "object", "properties": {KEY: {"type": T}}, "required": [...]}}}`.
//! The properties are every argument key seen in a call of that tool (sorted),
//! each with the JSON types its values had (one type, or a sorted list;
//! `integer` folds into `number` when both were seen); `required` holds the
//! keys present in every call (sorted).
//!
//! ## Why
//! A model trained on calls must see the tools declared in its prompt, as at
//! inference time; the calls themselves say which tools exist and what they take.
//!
//! ## Invariants
//! - Every call's arguments (a JSON object) validate against its inferred
//!   schema: each key is a property whose types include the value's, and
//!   every required key is in every call (`jsonschema` checks it in
//!   `scripts/check_parquet.py`).
//! - Deterministic: order of first call, keys and types sorted.

use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// What the calls of one tool said.
#[derive(Default)]
struct Seen {
    calls: usize,
    /// Per argument key: the JSON types of its values, and in how many calls it was.
    keys: BTreeMap<String, (BTreeSet<&'static str>, usize)>,
}

/// The log's schemas (`declared`), then an inferred schema for every tool
/// called in `messages` that they do not declare; and how many were inferred.
pub fn declare(mut declared: Vec<Value>, messages: Option<&Value>) -> (Vec<Value>, usize) {
    let names: BTreeSet<String> = declared.iter().filter_map(name_of).map(str::to_string).collect();
    let inferred: Vec<Value> = infer(messages)
        .into_iter()
        .filter(|t| name_of(t).is_some_and(|n| !names.contains(n)))
        .collect();
    let n = inferred.len();
    declared.extend(inferred);
    (declared, n)
}

/// The name of a Chat Completions tool schema (`function.name`, or a bare `name`).
fn name_of(tool: &Value) -> Option<&str> {
    tool.get("function").and_then(|f| f.get("name")).or_else(|| tool.get("name"))?.as_str()
}

/// One inferred schema per tool called in `messages` (see the module doc).
pub fn infer(messages: Option<&Value>) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    let calls = messages
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten();
    for call in calls {
        let Some(function) = call.get("function") else { continue };
        let Some(name) = function.get("name").and_then(Value::as_str) else { continue };
        let args = match function.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
            Some(v) => Some(v.clone()),
            None => None,
        };
        let entry = seen.entry(name.to_string()).or_insert_with(|| {
            order.push(name.to_string());
            Seen::default()
        });
        entry.calls += 1;
        if let Some(Value::Object(args)) = args {
            for (k, v) in args {
                let (types, count) = entry.keys.entry(k).or_default();
                types.insert(json_type(&v));
                *count += 1;
            }
        }
    }
    order.iter().filter_map(|name| seen.get(name).map(|s| schema(name, s))).collect()
}

fn schema(name: &str, seen: &Seen) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (key, (types, count)) in &seen.keys {
        let mut types = types.clone();
        if types.contains("number") {
            types.remove("integer");
        }
        let t = match types.len() {
            1 => json!(types.first()),
            _ => json!(types),
        };
        properties.insert(key.clone(), json!({ "type": t }));
        if *count == seen.calls {
            required.push(Value::String(key.clone()));
        }
    }
    json!({"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties, "required": required}}})
}

/// The JSON Schema type of a value.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> Value {
        json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": name, "arguments": args}}]})
    }

    #[test]
    fn one_function_per_tool_with_types_and_the_keys_of_every_call_required() {
        let msgs = json!([
            call("Bash", r#"{"command": "ls", "timeout": 5}"#),
            call("Read", r#"{"path": "a"}"#),
            call("Bash", r#"{"command": "pwd", "timeout": 2.5, "bg": true}"#),
            call("Bash", r#"{"command": "x", "env": null}"#),
        ]);
        let tools = infer(Some(&msgs));
        assert_eq!(
            tools,
            [
                json!({"type": "function", "function": {"name": "Bash", "parameters": {
                    "type": "object", "properties": {
                        "bg": {"type": "boolean"}, "command": {"type": "string"},
                        "env": {"type": "null"}, "timeout": {"type": "number"}},
                    "required": ["command"]}}}),
                json!({"type": "function", "function": {"name": "Read", "parameters": {
                    "type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"]}}}),
            ]
        );
    }

    #[test]
    fn mixed_types_are_listed_and_declared_tools_are_kept() {
        let msgs = json!([call("f", r#"{"x": 1}"#), call("f", r#"{"x": "a"}"#), call("g", "{}")]);
        let tools = infer(Some(&msgs));
        assert_eq!(
            tools[0]["function"]["parameters"]["properties"]["x"],
            json!({"type": ["integer", "string"]})
        );
        let declared =
            vec![json!({"type": "function", "function": {"name": "g", "description": "G"}})];
        let (all, inferred) = declare(declared.clone(), Some(&msgs));
        assert_eq!(inferred, 1);
        assert_eq!(all[0], declared[0]);
        assert_eq!(name_of(&all[1]), Some("f"));
    }
}
