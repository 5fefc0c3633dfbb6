//! Key slots: how a dialect writes a record back with its keys in the order
//! they were read.
//!
//! Decoding takes typed fields (the messages, the tool schemas, a call's `id`,
//! ...) out of a JSON object into the canonical session and leaves [`slot`] at
//! their key in the `extra` map it keeps; encoding walks that map in order and
//! fills each slot where it stands, so a record read and written back has its
//! keys in the same order, and new keys (`compaction`) go last. An unfilled
//! slot is never written. Every dialect that keeps key order uses the one
//! marker, so a slot left by one is filled by another (`--to openai`).

use serde_json::{Map, Value};

/// Marks the key slot of a field that was taken out into a typed field. It is a
/// Unicode noncharacter, so no real input holds this exact string; encoding
/// either fills the slot or removes it.
pub(crate) const SLOT: &str = "\u{fdd0}compactor:slot";

/// A slot marker, to leave at a key whose value was taken out.
pub(crate) fn slot() -> Value {
    Value::String(SLOT.to_string())
}

/// Whether `v` is a slot marker (a key whose value the writer fills).
pub(crate) fn is_slot(v: &Value) -> bool {
    v.as_str() == Some(SLOT)
}

/// `map` with `key` inserted right after the key `after` (last when there is
/// no such key): where a dialect writes a field its source shape keeps apart
/// (OpenAI's `tool_calls` after the content, Anthropic's `content` after the role).
/// A `key` the map already holds after `after` keeps its own value.
pub(crate) fn insert_after(
    map: Map<String, Value>,
    after: &str,
    key: &str,
    value: Value,
) -> Map<String, Value> {
    let mut out = Map::new();
    let mut value = Some(value);
    for (k, v) in map {
        let here = k == after;
        out.insert(k, v);
        if here && let Some(x) = value.take() {
            out.insert(key.into(), x);
        }
    }
    if let Some(x) = value {
        out.insert(key.into(), x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(map: &Map<String, Value>) -> Vec<&str> {
        map.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_key_goes_right_after_its_neighbour_or_last() {
        let Value::Object(map) = json!({"role": "user", "name": "x"}) else { unreachable!() };
        assert_eq!(
            keys(&insert_after(map.clone(), "role", "content", json!("hi"))),
            ["role", "content", "name"]
        );
        assert_eq!(
            keys(&insert_after(map.clone(), "missing", "content", json!("hi"))),
            ["role", "name", "content"]
        );
        // A key the map already holds after `after` keeps its own value there.
        let again = insert_after(map, "role", "name", json!("y"));
        assert_eq!(keys(&again), ["role", "name"]);
        assert_eq!(again["name"], json!("x"));
    }

    #[test]
    fn a_slot_is_recognised_and_no_ordinary_string_is() {
        assert!(is_slot(&slot()));
        assert!(!is_slot(&Value::String("compactor:slot".into())));
        assert!(!is_slot(&Value::Null));
    }
}
