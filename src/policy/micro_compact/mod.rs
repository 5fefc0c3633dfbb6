//! Stage 2: micro-compaction of old tool results and tool-call arguments.
//!
//! ## What it does
//! Outside the protected tail, every tool result longer than 200 chars becomes
//! a one-line description chosen by tool family (see `tool_families`), and
//! every tool call whose arguments exceed 500 chars has its long string leaves
//! cut to 200 chars + `...[truncated]`, re-serialized so the JSON stays valid (H).
//!
//! ## Why
//! Old tool output is the bulk of an agent transcript (file reads, test logs)
//! and the cheapest thing to drop: the call that produced it is still there,
//! and the one-liner says what it was and how it ended.
//!
//! ## Example
//! `assistant[call read_file a.py] tool(<15,200 chars>)` →
//! `assistant[call read_file a.py] tool("[read_file] read a.py from line 1 (15,200 chars)")`
//!
//! ## Invariants
//! - Calls and results stay paired; ids are never touched.
//! - Arguments that are not valid JSON are left as they are.
//! - Idempotent: a one-liner, a duplicate marker or a placeholder is never described again.

use super::dedup::DUPLICATE_MARKER;
use super::strip_media::{IMAGE_PLACEHOLDER, SCREENSHOT_PLACEHOLDER};
use super::tool_families::{ToolFamilies, is_description};
use super::{Caches, Slot, more_chars_than};
use crate::hash::text_key;
use crate::memo::{Memo, budgets};
use crate::model::{Message, Part, ToolCall};
use serde_json::Value;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use walk::Walk;

mod walk;

/// Tool results longer than this many chars are described (H).
pub const MICRO_COMPACT_OVER_CHARS: usize = 200;
/// Tool-call arguments longer than this many chars are shrunk (H).
pub const SHRINK_ARGS_OVER_CHARS: usize = 500;
/// String leaves of shrunk arguments keep this many chars (H).
pub const SHRINK_LEAF_CHARS: usize = 200;
/// Appended to a shrunk string leaf (H).
pub const ARGS_TRUNCATION_MARKER: &str = "...[truncated]";

/// What stage 2 changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MicroCompacted {
    pub results_cleared: usize,
    pub args_shrunk: usize,
}

/// Maps each call id to the call, over the whole session.
pub fn index_calls<M: Borrow<Message>>(messages: &[M]) -> HashMap<&str, &ToolCall> {
    let mut index = HashMap::new();
    for m in messages.iter().map(Borrow::borrow) {
        for call in m.tool_calls.iter() {
            if !call.id.is_empty() {
                index.insert(call.id.as_str(), call);
            }
        }
    }
    index
}

/// Returns true if and only if a tool output is already as short as it gets.
fn is_compacted(text: &str) -> bool {
    text == DUPLICATE_MARKER
        || text.starts_with(SCREENSHOT_PLACEHOLDER)
        || text.starts_with(IMAGE_PLACEHOLDER)
        || is_description(text)
}

/// Describes long tool results and shrinks long arguments in `range`.
pub fn micro_compact<S: Slot>(
    messages: &mut [S],
    range: Range<usize>,
    families: &ToolFamilies,
    caches: &Caches,
) -> MicroCompacted {
    let mut out = MicroCompacted::default();
    let replacements: Vec<(usize, String)> = {
        let calls = index_calls(messages);
        messages[range.clone()]
            .iter()
            .map(Borrow::borrow)
            .enumerate()
            .filter(|(_, m)| m.is_tool_result())
            .filter_map(|(offset, m)| {
                let text = m.text_content();
                if !more_chars_than(&text, MICRO_COMPACT_OVER_CHARS) || is_compacted(&text) {
                    return None;
                }
                let call = m.tool_call_id.as_deref().and_then(|id| calls.get(id).copied());
                let name = m.result_name().unwrap_or("tool");
                Some((
                    range.start + offset,
                    families.describe(&caches.described, &caches.args, call, name, &text),
                ))
            })
            .collect()
    };
    for (i, line) in replacements {
        let parts = messages[i].write().content.parts_mut();
        let mut placed = false;
        parts.retain_mut(|p| match p {
            Part::Text(_) if !placed => {
                p.set_text(line.clone());
                placed = true;
                true
            }
            Part::Text(_) => false,
            _ => true,
        });
        out.results_cleared += 1;
    }
    for slot in &mut messages[range] {
        let m: &Message = (*slot).borrow();
        let short: Vec<(usize, String)> = m
            .tool_calls
            .iter()
            .enumerate()
            .filter_map(|(k, call)| Some((k, caches.shrunk.shrink(&call.arguments)?)))
            .collect();
        if short.is_empty() {
            continue;
        }
        let calls = slot.write().tool_calls_mut();
        for (k, arguments) in short {
            calls[k].arguments = arguments;
            out.args_shrunk += 1;
        }
    }
    out
}

/// Shrinks the long string leaves of JSON arguments over 500 chars, keeping
/// the JSON valid. Returns `None` when nothing changed or the text is not JSON.
fn shrink_arguments(arguments: &str) -> Option<String> {
    if !more_chars_than(arguments, SHRINK_ARGS_OVER_CHARS) {
        return None;
    }
    shrunk(arguments)
}

/// Longer arguments are shrunk every time: one would fill a shard by itself.
const MAX_CACHED_SHRINK_BYTES: usize = budgets::SHRUNK.per_shard / 8;

/// Shrunk arguments by text hash and length (all a shrink depends on), a
/// value of [`Caches`]. `report` compacts every session under three
/// summarizing modes and `replay` again at every trigger, and each shrinks
/// the same long arguments of the same calls (a parse and a write of the
/// whole JSON text): each text is shrunk once. Its budget is in bytes
/// ([`budgets::SHRUNK`]).
pub(crate) struct ShrunkArgs(Memo<(u128, usize), Shrunk>);

impl ShrunkArgs {
    /// An empty memo sized for `reach`.
    pub(crate) fn new(reach: budgets::Reach) -> ShrunkArgs {
        ShrunkArgs(Memo::with_budget(budgets::SHRUNK.within(reach)))
    }
}

impl ShrunkArgs {
    /// [`shrink_arguments`], remembered.
    pub(crate) fn shrink(&self, arguments: &str) -> Option<String> {
        if arguments.len() > MAX_CACHED_SHRINK_BYTES {
            return shrink_arguments(arguments);
        }
        if !more_chars_than(arguments, SHRINK_ARGS_OVER_CHARS) {
            return None;
        }
        let key = text_key(arguments);
        let cost = |s: &Shrunk| 64 + s.as_ref().map_or(0, |s| s.len());
        self.0
            .get_or_insert_with(key.0, key, || shrunk(arguments).map(Arc::from), cost)
            .map(|s| s.to_string())
    }
}

/// Shrunk arguments, or `None` when nothing changed or they are not JSON.
type Shrunk = Option<Arc<str>>;

/// [`shrink_arguments`] of a text over the limit, computed: by a walk of the
/// text ([`walk`]) where it is sure, by the tree otherwise.
fn shrunk(arguments: &str) -> Option<String> {
    match walk::walked(arguments) {
        Walk::Unchanged => None,
        Walk::Shrunk(text) => Some(text),
        Walk::Unsure => tree_shrunk(arguments),
    }
}

/// [`shrunk`] by the tree: parse, cut the long leaves, write it back.
fn tree_shrunk(arguments: &str) -> Option<String> {
    let mut value: Value = serde_json::from_str(arguments).ok()?;
    if !shrink_leaves(&mut value) {
        return None;
    }
    Some(crate::json_text::text(&value))
}

fn shrink_leaves(value: &mut Value) -> bool {
    match value {
        Value::String(s) => {
            let marked_len = SHRINK_LEAF_CHARS + ARGS_TRUNCATION_MARKER.chars().count();
            let n = s.chars().count();
            if n <= SHRINK_LEAF_CHARS || (n == marked_len && s.ends_with(ARGS_TRUNCATION_MARKER)) {
                return false;
            }
            let mut short: String = s.chars().take(SHRINK_LEAF_CHARS).collect();
            short.push_str(ARGS_TRUNCATION_MARKER);
            *s = short;
            true
        }
        Value::Array(items) => {
            items.iter_mut().fold(false, |changed, v| shrink_leaves(v) | changed)
        }
        Value::Object(map) => map.values_mut().fold(false, |changed, v| shrink_leaves(v) | changed),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ContentForm;
    use crate::policy::test_msgs::{call, result};
    use serde_json::{Map, json};

    #[test]
    fn long_results_become_one_liners() {
        let out = "line\n".repeat(100);
        let mut msgs = vec![
            call("a", "Bash", r#"{"command":"cargo test"}"#),
            result("a", &out),
            call("b", "Read", r#"{"file_path":"x.rs"}"#),
            result("b", "short"),
        ];
        let r = micro_compact(&mut msgs, 0..4, &ToolFamilies::default(), &Caches::default());
        assert_eq!(r.results_cleared, 1);
        assert_eq!(
            msgs[1].text_content(),
            "[terminal] ran `cargo test` -> exit ?, 101 lines output"
        );
        assert_eq!(msgs[3].text_content(), "short");
    }

    #[test]
    fn idempotent() {
        let mut msgs =
            vec![call("a", "Read", r#"{"file_path":"x.rs"}"#), result("a", &"y".repeat(5_000))];
        micro_compact(&mut msgs, 0..2, &ToolFamilies::default(), &Caches::default());
        let once = msgs.clone();
        let r = micro_compact(&mut msgs, 0..2, &ToolFamilies::default(), &Caches::default());
        assert_eq!(r, MicroCompacted::default());
        assert_eq!(msgs, once);
    }

    #[test]
    fn images_in_results_are_left_for_stage_four() {
        let mut m = result("a", "");
        m.content.form = ContentForm::Parts;
        m.content.parts = vec![
            Part::text("t".repeat(300)),
            Part::Image { raw: Map::new(), info: Default::default() },
            Part::text("more"),
        ]
        .into();
        let mut msgs = vec![call("a", "browser_snapshot", "{}"), m];
        micro_compact(&mut msgs, 0..2, &ToolFamilies::default(), &Caches::default());
        assert_eq!(msgs[1].content.parts.len(), 2);
        assert!(msgs[1].content.parts[1].is_image());
    }

    #[test]
    fn shrinks_long_arguments_keeping_json_valid() {
        let args = json!({"path": "a.rs", "content": "c".repeat(1_000), "n": 3, "list": ["d".repeat(300)]}).to_string();
        let short = shrink_arguments(&args).unwrap();
        let v: Value = serde_json::from_str(&short).unwrap();
        assert_eq!(v["path"], "a.rs");
        assert_eq!(v["n"], 3);
        assert_eq!(
            v["content"].as_str().unwrap(),
            format!("{}{ARGS_TRUNCATION_MARKER}", "c".repeat(200))
        );
        assert_eq!(v["list"][0].as_str().unwrap().chars().count(), 214);
        assert_eq!(shrink_arguments(&short), None, "never shrinks twice");
    }

    #[test]
    fn leaves_short_and_invalid_arguments() {
        assert_eq!(shrink_arguments(r#"{"a":"b"}"#), None);
        let invalid = format!("{{not json {}", "x".repeat(600));
        assert_eq!(shrink_arguments(&invalid), None);
        // Long but no long leaf: nothing to do.
        let many =
            Value::Object((0..100).map(|i| (format!("k{i}"), json!(i))).collect::<Map<_, _>>())
                .to_string();
        assert!(many.len() > 500);
        assert_eq!(shrink_arguments(&many), None);
    }

    /// Every size class (under the limit, remembered, too long to remember)
    /// shrinks as computed afresh, the first time and from the memo; texts
    /// that differ only at the end are told apart.
    #[test]
    fn arguments_shrink_the_same_remembered_or_not() {
        let leaf = |n: usize, end: &str| json!({"p": "x", "t": "y".repeat(n), "z": end});
        let texts = [
            leaf(100, "").to_string(),
            leaf(600, "a").to_string(),
            leaf(600, "b").to_string(),
            json!({"k": (0..100).collect::<Vec<_>>()}).to_string(),
            format!("{{not json {}", "x".repeat(600)),
            leaf(MAX_CACHED_SHRINK_BYTES, "").to_string(),
        ];
        let memo = ShrunkArgs::new(crate::memo::budgets::Reach::Run);
        for text in &texts {
            let fresh =
                if more_chars_than(text, SHRINK_ARGS_OVER_CHARS) { shrunk(text) } else { None };
            for _ in 0..2 {
                assert_eq!(memo.shrink(text), fresh, "{}", &text[..40.min(text.len())]);
                assert_eq!(shrink_arguments(text), fresh);
            }
        }
        assert_ne!(memo.shrink(&texts[1]), memo.shrink(&texts[2]));
    }

    #[test]
    fn multibyte_leaves_are_cut_on_chars() {
        let args = json!({"t": "é".repeat(600)}).to_string();
        let v: Value = serde_json::from_str(&shrink_arguments(&args).unwrap()).unwrap();
        assert!(v["t"].as_str().unwrap().starts_with(&"é".repeat(200)));
    }

    /// The walk takes the compact JSON the formats write: the fast path is
    /// the one taken, and it cuts as the tree does.
    #[test]
    fn compact_arguments_are_walked_not_parsed() {
        let args =
            json!({"path": "a.rs", "content": "c\n\"é".repeat(300), "n": [1, -2, true, null]})
                .to_string();
        let walked = walk::walked(&args);
        assert_eq!(walked, Walk::Shrunk(tree_shrunk(&args).unwrap()));
        assert_eq!(walk::walked(r#"{"a": "b", "c": [1, 2]}"#), Walk::Unchanged);
        // What the tree may write differently is left to it.
        for unsure in [r#"{"a":1.0}"#, r#"{"a":-0}"#, r#"{"a":1,"a":2}"#, r#"{"a":1e3}"#, "{"] {
            assert_eq!(walk::walked(unsure), Walk::Unsure, "{unsure}");
        }
    }

    /// A JSON text of argument-like values: long and short strings with every
    /// kind of escape and multi-byte chars, keys that repeat (one written
    /// escaped), integers and numbers the tree rewrites, and whitespace.
    fn argument_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("a"),
            Just("é"),
            Just("😀"),
            Just("\\n"),
            Just("\\/"),
            Just("\\u00e9"),
            Just("\\u00E9"),
            Just("\\ud83d\\ude00"),
            Just("\\u001f"),
            Just("\\u0008"),
            Just("\\b"),
            Just("\\\""),
            Just("\\\\"),
            Just("\u{7f}"),
            Just("...[truncated]"),
        ];
        let string = (
            prop::collection::vec(piece.clone(), 0..6),
            prop::sample::select(vec![0usize, 3, 186, 195, 199, 200, 201, 214, 260]),
            prop::collection::vec(piece, 0..6),
        )
            .prop_map(|(a, n, b)| format!("\"{}{}{}\"", a.concat(), "y".repeat(n), b.concat()));
        let marked = Just(format!("\"{}{ARGS_TRUNCATION_MARKER}\"", "z".repeat(200)));
        let number = prop::sample::select(vec![
            "0",
            "-0",
            "7",
            "-12",
            "1.5",
            "2e3",
            "123456789012345678",
            "12345678901234567890",
            "-9223372036854775808",
        ]);
        let leaf = prop_oneof![
            4 => string,
            1 => marked,
            1 => number.prop_map(String::from),
            1 => prop::sample::select(vec!["true", "false", "null"]).prop_map(String::from),
        ];
        leaf.prop_recursive(4, 24, 5, |inner| {
            let key = prop_oneof![Just("k"), Just("l"), Just("\\u006b"), Just("content")];
            let ws = prop_oneof![Just(""), Just(""), Just(" "), Just("\n  ")];
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..5), ws.clone())
                    .prop_map(|(xs, w)| format!("[{w}{}{w}]", xs.join(&format!(",{w}")))),
                (prop::collection::vec((key, inner), 0..5), ws).prop_map(|(kvs, w)| {
                    let body: Vec<String> =
                        kvs.into_iter().map(|(k, v)| format!("\"{k}\"{w}:{w}{v}")).collect();
                    format!("{{{w}{}}}", body.join(","))
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The walk, where it is sure, writes what the tree writes; with its
        /// fallback it is the tree's shrink on any text, cut short or not.
        #[test]
        fn the_walk_shrinks_as_the_tree_does(text in argument_text(), cut in 0usize..4000) {
            let tree = tree_shrunk(&text);
            match walk::walked(&text) {
                Walk::Unchanged => proptest::prop_assert_eq!(&tree, &None),
                Walk::Shrunk(walked) => proptest::prop_assert_eq!(tree.as_ref(), Some(&walked)),
                Walk::Unsure => {}
            }
            proptest::prop_assert_eq!(shrunk(&text), tree);
            let mut end = cut.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            proptest::prop_assert_eq!(shrunk(&text[..end]), tree_shrunk(&text[..end]));
        }
    }
}
