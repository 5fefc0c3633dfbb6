//! The OpenAI encoding written straight to JSON text.
//!
//! [`super::encode_session`] builds a `Value` tree: a deep copy of every
//! message's unknown keys, content and calls, serialized once and dropped. In
//! archives converted from Claude Code the unknown keys alone are nearly half
//! the bytes, so the copy cost more than the writing. This module serializes
//! the same object from borrowed parts. Its output is byte for byte
//! `serde_json::to_vec(&encode_session(..))`: the tests below pin that on every
//! shape the decoder reads and on every fixture session with its compactions,
//! so a change to one encoding that the other misses fails them.
//!
//! Key order follows `encode_session`'s map edits: a key set on a map that has
//! it keeps its place, a new key goes last in the order set, and a key unset
//! is removed only where it holds a slot marker.
//!
//! It also writes a [`KeptSession`] ([`kept_line`]), the one writer that may:
//! every type below takes `KEPT`, and only with `KEPT` is a kept marker
//! written as the JSON text it holds (kept markers sit only where `kept.rs`
//! puts them: the values of session and message maps, and attached records).

use super::{
    ATTACHED, ContentShape, KeptSession, PRIVATE_KEY, REASONING_FIELDS, TRAILING, arguments_value,
    call_fields, carry, content_shape, is_slot, kept_text,
};
use crate::io::pretty::{Pretty, Tree};
use crate::model::{Content, Envelope, Message, Part, Session, ToolCall};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The session's record as one line of JSON (no newline).
pub(in crate::formats::openai) fn session_line(
    session: &Session,
    compaction: Option<&Value>,
) -> Vec<u8> {
    write::<false>(session, compaction)
}

/// The session's record laid out pretty, as [`Pretty::of`] lays out its line
/// (a document output), written as it is encoded.
pub(in crate::formats::openai) fn session_pretty(
    session: &Session,
    compaction: Option<&Value>,
) -> Pretty {
    let json = SessionJson::<false> { session, compaction };
    // Cannot fail (see `write`); were it to, the tree's layout, the same bytes.
    Pretty::of_tree(&json)
        .unwrap_or_else(|_| Pretty::of_value(&super::encode_session(session, compaction)))
}

/// A kept session's record as one line of JSON, each kept field as its text.
pub(super) fn kept_line(kept: &KeptSession<'_>, compaction: Option<&Value>) -> Vec<u8> {
    write::<true>(&kept.0, compaction)
}

fn write<const KEPT: bool>(session: &Session, compaction: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    match serde_json::to_writer(&mut out, &SessionJson::<KEPT> { session, compaction }) {
        Ok(()) => out,
        // Cannot happen: serde_json fails only on a failed write (a `Vec`
        // takes every write), a map key that is not a string (every key here
        // is a `str`) or an error a `Serialize` impl raises (none here does).
        // Were it to, the line is the one `by_value` writes, the same bytes
        // (the tests below): never a cut or empty line.
        Err(_) => by_value::<KEPT>(session, compaction),
    }
}

/// [`write`]'s line, built as a `Value` tree and written by the path that
/// cannot fail ([`crate::json_text`]); with `KEPT`, each kept marker is the
/// value its text holds.
fn by_value<const KEPT: bool>(session: &Session, compaction: Option<&Value>) -> Vec<u8> {
    let mut v = super::encode_session(session, compaction);
    if KEPT {
        expand_kept(&mut v);
    }
    crate::json_text::line(&v)
}

/// Every kept marker in `v` replaced by the value of its text (a text that
/// is not JSON, which `kept.rs` never keeps, as the string [`Raw`] writes).
fn expand_kept(v: &mut Value) {
    if let Some(text) = kept_text(v) {
        let parsed = serde_json::from_str(text);
        *v = parsed.unwrap_or_else(|_| Value::String(text.to_string()));
        return;
    }
    match v {
        Value::Array(items) => items.iter_mut().for_each(expand_kept),
        Value::Object(map) => map.values_mut().for_each(expand_kept),
        _ => {}
    }
}

/// A value as written: with `KEPT`, a kept marker as the text it holds;
/// anything else as serialized.
struct Raw<'a, const KEPT: bool>(&'a Value);

impl<const KEPT: bool> Serialize for Raw<'_, KEPT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match kept_text(self.0).filter(|_| KEPT) {
            Some(text) => match serde_json::from_str::<&RawValue>(text) {
                Ok(raw) => raw.serialize(s),
                // Unreachable (only valid JSON is kept); write the text as a string.
                Err(_) => s.serialize_str(text),
            },
            None => self.0.serialize(s),
        }
    }
}

/// What a key of a patched map gets: `Some(value)` sets it, `None` removes a
/// slot marker (and leaves any other value as it was).
type Edit<'a, const KEPT: bool> = (&'a str, Option<Field<'a, KEPT>>);

/// A value written by the encoder.
enum Field<'a, const KEPT: bool> {
    Str(&'a str),
    Value(&'a Value),
    Owned(Value),
    /// Records carried into this dialect ([`carry`]).
    Carried(&'a [Value]),
    Messages(&'a [Message]),
    Content(&'a Content),
    Calls(&'a [ToolCall]),
    Function(&'a ToolCall),
}

/// `base` with `edits` applied in order, as `encode_session` applies them.
struct Patched<'a, const KEPT: bool> {
    base: &'a Map<String, Value>,
    edits: Vec<Edit<'a, KEPT>>,
}

impl<const KEPT: bool> Serialize for Patched<'_, KEPT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (key, value) in self.base {
            // The last edit of a key decides; `encode_session` edits each key once.
            match self.edits.iter().rev().find(|(k, _)| k == key) {
                Some((_, Some(field))) => map.serialize_entry(key, field)?,
                Some((_, None)) if is_slot(value) => {}
                _ => map.serialize_entry(key, &Raw::<KEPT>(value))?,
            }
        }
        for (i, (key, field)) in self.edits.iter().enumerate() {
            let Some(field) = field else { continue };
            let set_again = self.edits[i + 1..].iter().any(|(k, _)| k == key);
            if !self.base.contains_key(*key) && !set_again {
                map.serialize_entry(key, field)?;
            }
        }
        map.end()
    }
}

struct SessionJson<'a, const KEPT: bool> {
    session: &'a Session,
    compaction: Option<&'a Value>,
}

/// Without kept texts, the record serializes to `encode_session`'s bytes
/// (the tests below): a `Value`'s, with no raw text ([`Raw`] writes one only
/// with `KEPT`) and each key once.
impl Tree for SessionJson<'_, false> {}

impl<const KEPT: bool> Serialize for SessionJson<'_, KEPT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let session = self.session;
        if session.layout == Envelope::BareArray {
            return Field::<KEPT>::Messages(&session.messages).serialize(s);
        }
        let mut edits = vec![
            ("messages", Some(Field::Messages(&session.messages))),
            ("tools", session.tools.as_ref().map(Field::Value)),
        ];
        if !session.trailing.is_empty() {
            edits.push((TRAILING, Some(Field::Carried(&session.trailing))));
        }
        if let Some(c) = self.compaction {
            edits.push(("compaction", Some(Field::Value(c))));
        }
        Patched::<KEPT> { base: &session.extra, edits }.serialize(s)
    }
}

/// Every item of `items`, as `each` wraps it for writing.
fn sequence<'a, S: Serializer, T, W: Serialize>(
    s: S,
    items: &'a [T],
    each: impl Fn(&'a T) -> W,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(items.len()))?;
    for item in items {
        seq.serialize_element(&each(item))?;
    }
    seq.end()
}

impl<const KEPT: bool> Serialize for Field<'_, KEPT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Str(text) => s.serialize_str(text),
            Field::Value(v) => v.serialize(s),
            Field::Owned(v) => v.serialize(s),
            Field::Carried(records) => sequence(s, records, Carry::<KEPT>),
            Field::Messages(messages) => sequence(s, messages, message::<KEPT>),
            Field::Content(c) => content(c, s),
            Field::Calls(calls) => sequence(s, calls, tool_call::<KEPT>),
            Field::Function(call) => function::<KEPT>(call).serialize(s),
        }
    }
}

/// A record as [`carry`] writes it, serialized from the borrowed tree instead
/// of a copy (attached records are most of the objects in archives converted
/// from Claude Code). An object holding a private key is copied by `carry`
/// itself: a renamed key may meet a plain one of the same name, and the map
/// `carry` builds keeps only one of them.
struct Carry<'a, const KEPT: bool>(&'a Value);

impl<const KEPT: bool> Serialize for Carry<'_, KEPT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            v if KEPT && kept_text(v).is_some() => Raw::<KEPT>(v).serialize(s),
            Value::Object(map) if map.keys().any(|k| k.starts_with(PRIVATE_KEY)) => {
                carry(self.0).serialize(s)
            }
            Value::Object(map) => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    out.serialize_entry(k, &Carry::<KEPT>(v))?;
                }
                out.end()
            }
            Value::Array(items) => sequence(s, items, Carry::<KEPT>),
            v if is_slot(v) => s.serialize_unit(),
            v => v.serialize(s),
        }
    }
}

/// [`super::encode_message`], plus the attached records `encode_session` adds.
fn message<const KEPT: bool>(m: &Message) -> Patched<'_, KEPT> {
    let mut edits = vec![
        ("role", Some(Field::Str(m.role.as_str()))),
        ("content", present(&m.content).then_some(Field::Content(&m.content))),
        ("tool_calls", (!m.tool_calls.is_empty()).then_some(Field::Calls(&m.tool_calls))),
        ("tool_call_id", m.tool_call_id.as_deref().map(Field::Str)),
    ];
    for field in REASONING_FIELDS {
        let text = m.reasoning.as_ref().filter(|r| r.field == *field).map(|r| r.text.as_str());
        edits.push((field, text.map(Field::Str)));
    }
    if !m.attached.is_empty() {
        edits.push((ATTACHED, Some(Field::Carried(&m.attached))));
    }
    Patched { base: &m.extra, edits }
}

/// Whether [`super::encode_content`] gives the key a value.
fn present(c: &Content) -> bool {
    content_shape(c) != ContentShape::Absent
}

/// [`super::encode_content`] of a [`present`] content.
fn content<S: Serializer>(c: &Content, s: S) -> Result<S::Ok, S::Error> {
    match content_shape(c) {
        ContentShape::Absent | ContentShape::Null => s.serialize_unit(),
        ContentShape::Text => s.serialize_str(&c.joined_text()),
        ContentShape::Parts => {
            let mut seq = s.serialize_seq(Some(c.parts.len()))?;
            for p in c.parts.iter() {
                match p {
                    Part::Text(raw) | Part::Reasoning(raw) | Part::Image { raw, .. } => {
                        seq.serialize_element(raw)?
                    }
                    Part::Other(v) => seq.serialize_element(v)?,
                }
            }
            seq.end()
        }
    }
}

/// `encode.rs`'s `encode_tool_call`.
fn tool_call<const KEPT: bool>(call: &ToolCall) -> Patched<'_, KEPT> {
    let id = call_fields(call).id.then_some(Field::Str(&call.id));
    Patched {
        base: &call.extra,
        edits: vec![("id", id), ("function", Some(Field::Function(call)))],
    }
}

/// The `function` object of `encode.rs`'s `encode_tool_call`.
fn function<const KEPT: bool>(call: &ToolCall) -> Patched<'_, KEPT> {
    let set = call_fields(call);
    let mut edits = vec![("name", set.name.then_some(Field::Str(&call.name)))];
    if set.arguments {
        let arguments = match arguments_value(call) {
            Some(v) => Field::Owned(v),
            None => Field::Str(&call.arguments),
        };
        edits.push(("arguments", Some(arguments)));
    }
    Patched { base: &call.function_extra, edits }
}

#[cfg(test)]
mod tests {
    use super::super::{decode_session, encode_session, slot};
    use super::*;
    use crate::model::{ContentForm, Reasoning, Source};
    use crate::policy::{Mode, Policy, compact};
    use crate::tokens::{CounterKind, Meter};
    use serde_json::json;

    /// The one promise: the bytes of the `Value` encoding, which `by_value`
    /// (the line were serializing to fail) writes too.
    fn assert_same_bytes(session: &Session, compaction: Option<&Value>) {
        let expected = serde_json::to_vec(&encode_session(session, compaction)).unwrap();
        assert_eq!(by_value::<false>(session, compaction), expected);
        let got = session_line(session, compaction);
        assert!(
            got == expected,
            "\n got {}\nwant {}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected)
        );
        // Laid out pretty as it is encoded: what the writer laid out from
        // the line before.
        let pretty = session_pretty(session, compaction);
        let from_line = Pretty::of(&expected).unwrap();
        assert!(
            pretty == from_line,
            "\n got {}\nwant {}",
            String::from_utf8_lossy(pretty.as_bytes()),
            String::from_utf8_lossy(from_line.as_bytes())
        );
    }

    fn decoded(v: Value) -> Session {
        decode_session(v, Source::default()).expect("decodes")
    }

    /// A kept session writes its kept fields as read; any other writes a
    /// marker-like string as the string it is (a whole parse of a line
    /// holding one), as the `Value` encoding does.
    #[test]
    fn only_a_kept_session_writes_kept_texts() {
        let line = r#"{"id":"s","meta":{"b":[1,"x"],"a":null},"messages":[{"role":"user","content":"hi","toolUseResult":[{"k":2}],"compactor_attached":[{"t":"a"},3]}]}"#;
        let kept = super::super::KeptRecord::parse(line.as_bytes()).expect("keeps");
        let kept = kept.decode(Source::default()).expect("decodes");
        assert_eq!(String::from_utf8(kept.line(None)).unwrap(), line);
        let whole = decoded(serde_json::from_str(line).unwrap());
        let object = json!({"mode": "lean"});
        assert_eq!(kept.line(Some(&object)), session_line(&whole, Some(&object)));
        for c in [None, Some(&object)] {
            assert_eq!(by_value::<true>(kept.session(), c), kept.line(c));
        }
        let forged = decoded(
            json!({"messages": [{"role": "user", "x": "\u{fdd0}compactor:kept:{}",
            "compactor_attached": ["\u{fdd0}compactor:kept:[1]"]}], "y": "\u{fdd0}compactor:kept:2"}),
        );
        assert_same_bytes(&forged, None);
    }

    #[test]
    fn every_shape_the_decoder_reads_is_written_as_the_value_encoding_writes_it() {
        let cases = [
            json!({"id": "s", "messages": [
                {"role": "system", "content": "be brief"},
                {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": {}},
                             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                             {"type": "thinking", "thinking": "t"}, 7, "loose"], "role": "user"},
                {"role": "assistant", "content": null, "reasoning_content": "think", "x": 1,
                 "tool_calls": [{"type": "function", "id": "c1", "function": {"arguments": "{}", "name": "Read"}},
                                {"id": "c2", "function": {"name": "Bash", "arguments": {"cmd": "ls", "n": 1.5}}},
                                {"function": {"name": "Edit", "argumEnts": "{}"}},
                                {"id": 3, "function": {"name": null}},
                                {"id": "c4", "function": {"name": null, "arguments": null}},
                                {"id": "c5", "function": {"arguments": null, "name": "Grep"}}]},
                {"tool_call_id": "c1", "role": "tool", "content": "fn main() {}", "name": "Read"},
                {"role": "assistant", "reasoning": "r", "content": [], "tool_calls": "odd"},
                {"role": "exit"},
                {"role": "user", "content": "", "compactor_attached": [{"k": 1}, {"\u{fdd0}compactor:x": "\u{fdd0}compactor:slot"}]},
                {"role": "user", "content": "renamed keys meet plain ones", "compactor_attached": [
                    {"\u{fdd0}compactor:y": 1, "compactor_y": 2, "z": [{"compactor_w": 0, "\u{fdd0}compactor:w": 3}]},
                    {"deep": [[{"\u{fdd0}compactor:v": "\u{fdd0}compactor:slot"}], "\u{fdd0}compactor:slot", -0.0, 1e300]},
                    "\u{fdd0}compactor:slot", null, 7]}],
              "tools": [{"type": "function", "function": {"name": "Read"}}], "meta": {"k": [1, null, true]},
              "compactor_trailing": [{"type": "summary"}]}),
            json!({"messages": [{"role": "user", "content": "hi"}], "tools": null}),
            json!([{"role": "user", "content": "bare"}, {"role": "assistant", "content": [{"type": "text", "text": "x"}]}]),
            json!({"messages": []}),
        ];
        let object = json!({"mode": "lean", "tokens_before": 10});
        for v in cases {
            let s = decoded(v);
            assert_same_bytes(&s, None);
            assert_same_bytes(&s, Some(&object));
        }
    }

    #[test]
    fn edits_made_after_decoding_are_written_as_the_value_encoding_writes_them() {
        let mut s = decoded(json!({"messages": [
            {"role": "assistant", "content": "a", "reasoning_content": "r", "tool_call_id": "t"},
            {"role": "tool", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}]}));
        // Typed fields cleared, moved or added, and a message built from nothing.
        s.messages[0].reasoning =
            Some(Reasoning { field: "reasoning".into(), text: "moved".into() });
        s.messages[0].tool_call_id = None;
        s.messages[0].content = Content::from_text(String::new());
        s.messages[1].content.form = ContentForm::String;
        s.messages[1].extra_mut().insert("tools_marker".into(), slot());
        let mut built = Message::text(crate::model::Role::Assistant, "");
        built.content = Content { parts: Default::default(), form: ContentForm::Absent };
        built.tool_calls =
            vec![ToolCall { id: String::new(), name: "Bash".into(), ..ToolCall::default() }].into();
        s.messages.push(built);
        s.tools = Some(json!([]));
        s.trailing.push(json!({"k": "v"}));
        assert_same_bytes(&s, None);
    }

    #[test]
    fn every_fixture_and_its_compactions_are_written_as_the_value_encoding_writes_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let inputs = crate::io::expand_inputs(&[root.to_string_lossy().into_owned()]).unwrap();
        let mut reader = crate::pipeline::JobReader::new(&inputs, None);
        let meter = Meter::new(CounterKind::Hermes, crate::tokens::DEFAULT_IMAGE_TOKENS);
        let mut sessions = 0;
        while let Some(item) = reader.next_item() {
            let crate::pipeline::Item::Job(job) = item else { continue };
            for s in crate::pipeline::decode_job(job).0 {
                assert_same_bytes(&s, None);
                for mode in [Mode::Lean, Mode::Tiered] {
                    let mut policy = Policy::new(mode, 16_000);
                    policy.force = true;
                    let out = compact(&s, &policy, &meter);
                    assert_same_bytes(&out.session, Some(&json!({"mode": mode.name()})));
                }
                sessions += 1;
            }
        }
        assert!(sessions > 30, "{sessions} sessions read from the fixtures");
    }
}
