//! Fields nothing reads, kept as their JSON text instead of a parsed tree.
//!
//! ## Why
//! In archives converted from Claude Code most JSON objects sit in fields the
//! tool never looks into: the records attached to messages
//! (`compactor_attached`), `toolUseResult`, `claudeCodeEvents`, session
//! metadata. Parsing them into `serde_json::Value` trees, dropping the trees
//! and serializing them again was most of a `--counter hermes` run. When a
//! session is read from and written to OpenAI JSON Lines, such a field is kept
//! as the text it was read as, and written back as that text.
//!
//! ## How
//! [`parse_line`] reads a line as `serde_json::from_slice` would, except that
//! an object or array under a key outside [`READ_SESSION_KEYS`] /
//! [`READ_MESSAGE_KEYS`] and the id and reasoning keys (and each record of `compactor_attached`) becomes a
//! [`Value::String`] holding [`KEPT`] followed by its JSON text: a marker no
//! reader takes for data, since every key a reader looks up is in those lists.
//! The writer ([`Kept`]) writes the text back in place of the marker.
//!
//! ## Invariants
//! - The bytes written are the bytes the parsed tree would give: a text is
//!   kept only if [`canonical`] proves that serde_json writes its parse as
//!   exactly that text (no insignificant whitespace, serde_json's own string
//!   escapes, integers that parse as integers, no repeated key). Any other
//!   text is parsed as usual.
//! - A line parses, or fails, as `serde_json::from_slice` does: [`parse_line`]
//!   returns `None` on anything it cannot keep (an error, nesting near the
//!   recursion limit, a line holding U+FDD0, the first of Unicode's private
//!   noncharacters this crate marks with) and the caller parses the line whole.

use super::RECORD_ID_KEYS;
use super::openai::REASONING_FIELDS;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// Prefix of a kept text. A Unicode noncharacter starts it, and lines holding
/// one are never kept, so input data cannot be mistaken for a marker.
pub(crate) const KEPT: &str = "\u{fdd0}compactor:kept:";

/// Session keys a reader looks up (the OpenAI decoder, the policy), besides
/// [`RECORD_ID_KEYS`]: never kept. A reader of another key must add it here.
pub(crate) const READ_SESSION_KEYS: &[&str] =
    &["messages", "tools", "compaction", super::openai::TRAILING];

/// Message keys a reader looks up (the OpenAI decoder, the policy), besides
/// [`REASONING_FIELDS`]: never kept. `compactor_attached` is read as an array
/// whose records are kept.
pub(crate) const READ_MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "timestamp",
    "created_at",
    "_metadata",
    "usage",
    "name",
    "is_error",
];

/// serde_json's recursion limit, less a margin for the levels above a kept
/// field: a deeper text is left to the whole-line parse, which fails on it
/// exactly as it always has.
const MAX_KEPT_DEPTH: usize = 100;

/// The kept JSON text of `v`, if `v` is a kept marker.
pub(crate) fn kept_text(v: &Value) -> Option<&str> {
    v.as_str().and_then(|s| s.strip_prefix(KEPT))
}

/// Parses one OpenAI session line keeping unread fields as text; `None` when
/// the line must be parsed whole instead (see the module invariants).
pub(crate) fn parse_line(line: &[u8]) -> Option<Value> {
    // U+FDD0 in UTF-8: a line holding it might forge a marker or hold a slot.
    if memchr::memmem::find(line, "\u{fdd0}".as_bytes()).is_some() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    let value = Node::Session.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Where in a line the value being read sits.
#[derive(Clone, Copy)]
enum Node {
    /// The line: an object whose unread fields are kept.
    Session,
    /// The `messages` array.
    Messages,
    /// One message: an object whose unread fields are kept.
    Message,
    /// `compactor_attached`: an array whose records are kept.
    Attached,
    /// A field that may be kept.
    Keep,
}

impl<'de> DeserializeSeed<'de> for Node {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self {
            Node::Keep => {
                let raw = <&RawValue>::deserialize(d)?;
                keep(raw.get()).map_err(serde::de::Error::custom)
            }
            _ => d.deserialize_any(self),
        }
    }
}

/// A kept text's marker, or its parse when it is not canonical or is a scalar.
fn keep(text: &str) -> Result<Value, String> {
    match text.as_bytes().first() {
        Some(b'{' | b'[') => match canonical(text) {
            Canon::Yes => Ok(Value::String(format!("{KEPT}{text}"))),
            // Parsed alone it has a fresh recursion budget: what the whole
            // line's parse would reject must still fail.
            Canon::No if deeper_than(text, MAX_KEPT_DEPTH) => Err("nested too deep to keep".into()),
            Canon::No => serde_json::from_str(text).map_err(|e| e.to_string()),
            Canon::TooDeep => Err("nested too deep to keep".into()),
        },
        _ => serde_json::from_str(text).map_err(|e| e.to_string()),
    }
}

/// Whether `text`, valid JSON, nests arrays and objects deeper than `limit`.
fn deeper_than(text: &str, limit: usize) -> bool {
    let b = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                // Skip the string: to the first quote not escaped.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

impl<'de> Visitor<'de> for Node {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an OpenAI session")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            // `None`: the value is read whole, as a plain `Value`.
            let seed = match (self, key.as_str()) {
                (Node::Session, "messages") => Some(Node::Messages),
                (Node::Session, k)
                    if READ_SESSION_KEYS.contains(&k) || RECORD_ID_KEYS.contains(&k) =>
                {
                    None
                }
                (Node::Message, super::openai::ATTACHED) => Some(Node::Attached),
                (Node::Message, k)
                    if READ_MESSAGE_KEYS.contains(&k) || REASONING_FIELDS.contains(&k) =>
                {
                    None
                }
                (Node::Session | Node::Message, _) => Some(Node::Keep),
                // Any other object (where a session or message was expected) is read whole.
                _ => None,
            };
            let value = match seed {
                Some(seed) => access.next_value_seed(seed)?,
                None => access.next_value::<Value>()?,
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let item = match self {
            Node::Messages => Some(Node::Message),
            Node::Attached => Some(Node::Keep),
            _ => None,
        };
        let mut items = Vec::with_capacity(access.size_hint().unwrap_or(0).min(4096));
        loop {
            let next = match item {
                Some(seed) => access.next_element_seed(seed)?,
                None => access.next_element::<Value>()?,
            };
            match next {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    // Scalars where a session, message or array was expected stay what they
    // are: the decoder reports them as it does for a whole parse.
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("bad number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// What [`canonical`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Canon {
    /// serde_json writes the text's parse as exactly this text.
    Yes,
    /// It may not (whitespace, another escape, a float, a repeated key...).
    No,
    /// Nested deeper than [`MAX_KEPT_DEPTH`].
    TooDeep,
}

/// Whether `text`, valid JSON, is exactly what `serde_json::to_string` writes
/// for its parse. Conservative: `No` may be said of a text that would
/// round-trip (a float, say); `Yes` never of one that would not.
pub(crate) fn canonical(text: &str) -> Canon {
    let b = text.as_bytes();
    // Keys of each open object (as written: with only serde_json's escapes
    // allowed, equal texts are equal keys); `None` for an open array.
    let mut open: Vec<Option<Vec<&[u8]>>> = Vec::new();
    let mut i = 0;
    // Whether the next string is an object key.
    let mut expect_key = false;
    while i < b.len() {
        match b[i] {
            b'{' => {
                open.push(Some(Vec::new()));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                open.push(None);
                i += 1;
            }
            b'}' | b']' => {
                open.pop();
                i += 1;
            }
            b',' => {
                expect_key = matches!(open.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
            }
            b'"' => {
                let start = i + 1;
                let Some(end) = string_end(b, start) else { return Canon::No };
                if expect_key {
                    let key = &b[start..end];
                    let Some(Some(keys)) = open.last_mut() else { return Canon::No };
                    if keys.contains(&key) {
                        return Canon::No;
                    }
                    keys.push(key);
                }
                i = end + 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if !canonical_integer(&b[start..i]) {
                    return Canon::No;
                }
            }
            b't' | b'f' | b'n' => {
                // true, false, null: letters only, checked valid by the parser.
                while i < b.len() && b[i].is_ascii_lowercase() {
                    i += 1;
                }
            }
            // Whitespace outside strings, or anything else.
            _ => return Canon::No,
        }
        if open.len() > MAX_KEPT_DEPTH {
            return Canon::TooDeep;
        }
    }
    Canon::Yes
}

/// The index of the closing quote of a string starting at `start`, if every
/// escape in it is one serde_json writes.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        if b[at] == b'"' {
            return Some(at);
        }
        match b.get(at + 1)? {
            b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => i = at + 2,
            b'u' => {
                // serde_json writes \u00XX (lowercase hex) only for control
                // characters without a short escape.
                let hex = b.get(at + 2..at + 6)?;
                let [b'0', b'0', hi, lo] = *hex else { return None };
                let digit = |c: u8| match c {
                    b'0'..=b'9' => Some(c - b'0'),
                    b'a'..=b'f' => Some(c - b'a' + 10),
                    _ => None,
                };
                let c = digit(hi)? * 16 + digit(lo)?;
                if c >= 0x20 || matches!(c, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                i = at + 6;
            }
            _ => return None,
        }
    }
}

/// An integer serde_json reads as an integer and writes back the same: no
/// fraction or exponent, not `-0`, and short enough for `u64` / `i64`.
fn canonical_integer(n: &[u8]) -> bool {
    let (negative, digits) = match n.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, n),
    };
    !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() == 1 || digits[0] != b'0')
        && !(negative && digits == b"0")
        && digits.len() <= if negative { 18 } else { 19 }
}

/// A value as written: a kept text as that text, anything else as serialized.
pub(crate) struct Kept<'a>(pub &'a Value);

impl Serialize for Kept<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match kept_text(self.0) {
            Some(text) => match serde_json::from_str::<&RawValue>(text) {
                Ok(raw) => raw.serialize(s),
                // Unreachable (only valid JSON is kept); write the text as a string.
                Err(_) => s.serialize_str(text),
            },
            None => self.0.serialize(s),
        }
    }
}

/// Replaces every kept marker in `v` by the parse of its text (tests compare
/// what a kept parse means with a whole one).
#[cfg(test)]
pub(crate) fn expand(v: &mut Value) {
    if let Some(text) = kept_text(v) {
        *v = serde_json::from_str(text).expect("kept texts are JSON");
        return;
    }
    match v {
        Value::Array(items) => items.iter_mut().for_each(expand),
        Value::Object(map) => map.values_mut().for_each(expand),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The promise [`canonical`] makes, checked on one text.
    fn check(text: &str) {
        let Ok(v) = serde_json::from_str::<Value>(text) else { return };
        if canonical(text) == Canon::Yes {
            assert_eq!(serde_json::to_string(&v).unwrap(), text, "said canonical");
        }
    }

    #[test]
    fn canonical_texts_and_others() {
        let yes = [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"x\"y\\z\n\t\r\b\f\u0001\u001f"}}"#,
            "[-5,0,9223372036854775807,-922337203685477580,\"é\u{7f}\",{}]",
            "[]",
            r#"{"a":{"a":1},"b":{"a":2}}"#,
        ];
        for t in yes {
            assert_eq!(canonical(t), Canon::Yes, "{t}");
            check(t);
        }
        let no = [
            r#"{"a": 1}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"[-0]"#,
            r#"[184467440737095516150]"#,
            r#"["\u007f"]"#,
            r#"{"a":1,"a":2}"#,
            r#"["\/"]"#,
            r#"["\u0041"]"#,
            r#"["\u000a"]"#,
            r#"["\u001F"]"#,
            r#"["\ud83d\ude00"]"#,
            "[1,\n2]",
        ];
        for t in no {
            assert_eq!(canonical(t), Canon::No, "{t}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_KEPT_DEPTH + 1), "]".repeat(MAX_KEPT_DEPTH + 1));
        assert_eq!(canonical(&deep), Canon::TooDeep);
    }

    /// Text made of JSON's pieces in every spelling serde_json reads, including
    /// the ones it does not write.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            Just("-0".to_string()),
            Just("1.0".to_string()),
            Just("2e3".to_string()),
            Just("99999999999999999999".to_string()),
            prop::collection::vec(
                prop_oneof![
                    Just("a".to_string()),
                    Just("é".to_string()),
                    Just("\\n".to_string()),
                    Just("\\/".to_string()),
                    Just("\\u0041".to_string()),
                    Just("\\u001f".to_string()),
                    Just("\\u001F".to_string()),
                    Just("\\u0008".to_string()),
                    Just("\\\"".to_string()),
                    Just("\u{7f}".to_string()),
                ],
                0..4
            )
            .prop_map(|parts| format!("\"{}\"", parts.concat())),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            let key = prop_oneof![Just("k"), Just("l"), Just("\\u0041")];
            let ws = prop_oneof![Just(""), Just(""), Just(" ")];
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..4), ws.clone())
                    .prop_map(|(xs, w)| format!("[{w}{}]", xs.join(","))),
                (prop::collection::vec((key, inner), 0..4), ws).prop_map(|(kvs, w)| {
                    let body: Vec<String> =
                        kvs.into_iter().map(|(k, v)| format!("\"{k}\":{w}{v}")).collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the spelling, a text said canonical is what serde_json writes.
        #[test]
        fn a_text_said_canonical_round_trips(text in json_text()) {
            check(&text);
        }
    }

    /// A line parses to the tree a whole parse gives, once the kept texts are
    /// read back; unread objects are kept and read ones are not.
    #[test]
    fn a_kept_parse_means_the_whole_parse() {
        let line = json!({"id": {"x": 1}, "meta": {"a": [1, 2]}, "tools": [{"type": "function"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}], "usage": {"input_tokens": 3},
                 "toolUseResult": {"stdout": "ok"}, "compactor_attached": [{"type": "snapshot"}, 7, "s"],
                 "reasoning": {"not": "text"}, "flag": true},
                "not a message"],
            "compactor_trailing": [{"t": 1}]})
        .to_string();
        let mut kept = parse_line(line.as_bytes()).expect("keeps");
        let m = &kept["messages"][0];
        assert!(kept_text(&kept["meta"]).is_some());
        assert!(kept_text(&m["toolUseResult"]).is_some());
        assert!(kept_text(&m["compactor_attached"][0]).is_some());
        for read in [
            &kept["id"],
            &kept["tools"],
            &kept["compactor_trailing"],
            &m["usage"],
            &m["content"],
            &m["reasoning"],
            &m["compactor_attached"][1],
        ] {
            assert!(kept_text(read).is_none(), "{read}");
        }
        expand(&mut kept);
        assert_eq!(kept, serde_json::from_str::<Value>(&line).unwrap());
    }

    #[test]
    fn lines_it_cannot_keep_are_left_to_the_whole_parse() {
        let deep = format!(r#"{{"messages":[],"x":{}1{}}}"#, "[".repeat(126), "]".repeat(126));
        for line in [
            "{\"messages\": [], \"x\": \"\u{fdd0}compactor:kept:{}\"}".to_string(),
            r#"{"messages":[],"x":{"a":1}"#.to_string(),
            r#"{"messages":[]} {}"#.to_string(),
            deep.clone(),
            // Deep and not canonical: parsed alone, it would escape the line's limit.
            deep.replace("1", " 1"),
        ] {
            assert!(parse_line(line.as_bytes()).is_none(), "{line}");
        }
        // Not canonical: parsed, not kept, and the same tree.
        let line = r#"{"messages":[],"x":{"a": 1.50}}"#;
        let v = parse_line(line.as_bytes()).unwrap();
        assert_eq!(v, serde_json::from_str::<Value>(line).unwrap());
    }

    #[test]
    fn a_kept_text_is_written_as_read() {
        let v = Value::String(format!(r#"{KEPT}{{"b":[1,"x"],"a":null}}"#));
        assert_eq!(serde_json::to_string(&Kept(&v)).unwrap(), r#"{"b":[1,"x"],"a":null}"#);
        assert_eq!(serde_json::to_string(&Kept(&json!("plain"))).unwrap(), r#""plain""#);
    }
}
