//! Parsed call arguments, remembered by their text.
//!
//! The summary, the tool-result descriptions and the tool families each read
//! a call's arguments as a JSON object, and `report` and `replay` compact the
//! same calls again for every mode and at every trigger, while an edit's or a
//! write's arguments hold whole files: each distinct text is parsed once. The
//! value is plain JSON, so the memo lives here rather than in `model`, which
//! holds no state. It is a value ([`CallArgs`]) in `policy::Caches`, which its
//! caller owns; there is no process-wide one.

use super::{Memo, budgets};
use crate::hash::text_key;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A call's arguments as a JSON object, or `None` when they are not one.
pub(crate) type ParsedArgs = Option<Arc<Map<String, Value>>>;

/// Shorter arguments are parsed every time (cheaper than a lookup).
const MIN_CACHED_ARGS_BYTES: usize = 64;
/// Longer ones too: one would fill a shard by itself.
const MAX_CACHED_ARGS_BYTES: usize = budgets::CALL_ARGS.per_shard / 8;
/// What an entry costs beyond its text, in bytes of the budget.
const ENTRY_OVERHEAD_BYTES: usize = 64;

/// Parsed arguments by text hash and length (all the parse depends on); its
/// budget is in bytes of argument text ([`budgets::CALL_ARGS`]).
pub(crate) struct CallArgs(Memo<(u128, usize), ParsedArgs>);

impl CallArgs {
    /// An empty memo sized for `reach`.
    pub(crate) fn new(reach: budgets::Reach) -> CallArgs {
        CallArgs(Memo::with_budget(budgets::CALL_ARGS.within(reach)))
    }
}

impl CallArgs {
    /// `text` parsed as a JSON object, if it is one.
    pub(crate) fn parsed(&self, text: &str) -> ParsedArgs {
        if !(MIN_CACHED_ARGS_BYTES..=MAX_CACHED_ARGS_BYTES).contains(&text.len()) {
            return parse(text);
        }
        let key = text_key(text);
        self.0.get_or_insert_with(key.0, key, || parse(text), |_| text.len() + ENTRY_OVERHEAD_BYTES)
    }
}

/// `text` parsed as a JSON object, if it is one (not remembered).
pub(crate) fn parse(text: &str) -> ParsedArgs {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Some(Arc::new(map)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size class (parsed each time, cached, too big to cache) and shape
    /// gives the parse of the text, the first time and from the cache.
    #[test]
    fn arguments_parse_the_same_cached_or_not() {
        let long = "x".repeat(MAX_CACHED_ARGS_BYTES);
        let texts = [
            r#"{"path":"a.rs"}"#.to_string(),
            format!(r#"{{"path":"src/main.rs","content":"{}"}}"#, "fn main() {}\\n".repeat(20)),
            format!(r#"{{"content":"{long}"}}"#),
            format!(r#"["not", "an", "object", "{}"]"#, "y".repeat(100)),
            format!(r#"{{"broken": "{}"#, "z".repeat(100)),
            String::new(),
        ];
        let args = CallArgs::new(crate::memo::budgets::Reach::Run);
        for text in texts {
            let expected = match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => Some(map),
                _ => None,
            };
            for _ in 0..2 {
                assert_eq!(args.parsed(&text).as_deref(), expected.as_ref());
            }
        }
    }

    /// Texts that differ only after the first bytes (a file written twice with
    /// one change) are told apart.
    #[test]
    fn arguments_that_differ_late_are_not_confused() {
        let args = CallArgs::new(crate::memo::budgets::Reach::Run);
        let base = "a".repeat(500);
        for tail in ["1", "2", "3"] {
            let text = format!(r#"{{"content":"{base}{tail}"}}"#);
            let map = args.parsed(&text).unwrap();
            assert!(map["content"].as_str().unwrap().ends_with(tail));
        }
    }

    /// Filling a shard past its bytes clears it; every answer stays right.
    #[test]
    fn a_full_cache_keeps_answering_right() {
        let args = CallArgs::new(crate::memo::budgets::Reach::Run);
        let filler = "f".repeat(MAX_CACHED_ARGS_BYTES - 40);
        for i in 0..(budgets::CALL_ARGS.total() / MAX_CACHED_ARGS_BYTES) * 3 {
            let text = format!(r#"{{"i":{i},"pad":"{filler}"}}"#);
            let map = args.parsed(&text).unwrap();
            assert_eq!(map["i"], i);
        }
        assert!(args.0.used() <= budgets::CALL_ARGS.total(), "{}", args.0.used());
    }
}
