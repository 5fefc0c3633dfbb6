//! Sessions left as they are, measured without being decoded.
//!
//! ## Why
//! Most sessions of an archive are under the trigger: compaction hands them
//! back as read, and all a run needs of them is their id, their message count
//! and their request size in tokens. Parsing such a line into `Value` trees,
//! decoding them into messages, counting and dropping it all was most of the
//! time a `--counter hermes` run spent on them. [`skim_line`] reads an OpenAI
//! session line once, counting the texts the meter counts where they lie in
//! the line, and checks everything else without building it.
//!
//! ## Invariants
//! - What it returns is what decoding the line ([`super::decode_session`])
//!   and measuring the session ([`crate::tokens::Meter::request`]) would give: the
//!   same id (`None` for the source's), message count and tokens. Every count
//!   goes through the meter's own methods, and every part, tool call or tool
//!   schema it cannot count from borrowed text is built as the `Value` the
//!   decoder would build and counted as the decoder's would be.
//! - A line it accepts is a line `serde_json::from_slice` accepts: it is valid
//!   UTF-8, and every value in it, read or not, goes through serde_json's
//!   `deserialize_any` on one deserializer (escapes, numbers in range,
//!   serde_json's own recursion limit at the same depth), then `end()`.
//! - It returns `None`, and the caller decodes the line as before, whenever it
//!   is not sure: a line that is not JSON or not a session object, anything
//!   the decoder would reject (it reports the error), a repeated key whose
//!   value it reads (a parse keeps the last one), and as soon as the count
//!   reaches `limit`, since such a session goes to compaction anyway.

use super::{ATTACHED, PartKind, REASONING_FIELDS, decode_part, part_kind};
use crate::formats::{RECORD_ID_KEYS, record_id};
use crate::model::part::REASONING_TEXT_KEYS;
use crate::tokens::Meter;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// What a session needs to be passed through untouched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skimmed {
    /// The record's own id; `None` when the decoder would name it by its source.
    pub id: Option<String>,
    pub messages: usize,
    /// The request size: tool schemas, every message, request framing.
    pub tokens: u64,
}

/// Measures one OpenAI session line (an object with a `messages` array)
/// without decoding it; `None` when the line must be decoded instead (see the
/// module invariants), including when its size reaches `limit` tokens.
pub fn skim_line(line: &[u8], meter: &Meter, limit: u64) -> Option<Skimmed> {
    let text = std::str::from_utf8(line).ok()?;
    let mut count = Count { meter, limit, tokens: meter.request_overhead() };
    let mut de = serde_json::Deserializer::from_str(text);
    let (messages, top) = de.deserialize_map(SessionVisitor(&mut count)).ok()?;
    de.end().ok()?;
    let tools = top.get("tools").filter(|v| !v.is_null());
    count.add::<serde_json::Error>(meter.tools(tools)).ok()?;
    Some(Skimmed { id: record_id(&top), messages, tokens: count.tokens })
}

/// The running request size, which stops the read once it reaches `limit`.
struct Count<'m> {
    meter: &'m Meter,
    limit: u64,
    tokens: u64,
}

impl Count<'_> {
    fn add<E: de::Error>(&mut self, tokens: u64) -> Result<(), E> {
        self.tokens = self.tokens.saturating_add(tokens);
        if self.tokens >= self.limit { Err(E::custom("at the limit")) } else { Ok(()) }
    }
}

/// `DeserializeSeed` for a visitor of this file: the value is read by the
/// deserializer's `$how` (most often `deserialize_any`) with the visitor itself.
macro_rules! seed {
    ($t:ty, $how:ident) => {
        impl<'de> DeserializeSeed<'de> for $t {
            type Value = <Self as Visitor<'de>>::Value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.$how(self)
            }
        }
    };
}

/// A visitor's `expecting`: what its errors say it wanted.
macro_rules! expecting {
    ($what:literal) => {
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str($what)
        }
    };
}

/// Accepts null, booleans and numbers as `$value`. Strings are each
/// visitor's own case: serde_json hands a string with escapes to `visit_str`,
/// one without to `visit_borrowed_str`, which defaults to `visit_str`.
macro_rules! non_strings_are {
    ($value:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// Accepts null, booleans, numbers and strings as `$value`.
macro_rules! scalars_are {
    ($value:expr) => {
        non_strings_are!($value);
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// `visit_seq` and / or `visit_map` that read past an array / object (which
/// must still be valid JSON) and return `$value`: for visitors that read
/// nothing inside such a value.
macro_rules! containers_are {
    ($value:expr; seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Skip.visit_seq(seq).map(|()| $value)
        }
    };
    ($value:expr; map) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Skip.visit_map(map).map(|()| $value)
        }
    };
    ($value:expr; seq, map) => {
        containers_are!($value; seq);
        containers_are!($value; map);
    };
}

/// Hands null, booleans, numbers and arrays (with `objects`, objects too) to
/// `$wrap(&self, value)` as the `Value` a parse would build: for visitors
/// that read strings in place and other values as trees.
macro_rules! non_strings_as_values {
    ($wrap:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(&self, Value::Null))
        }
        fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
            Ok($wrap(&self, Value::Bool(b)))
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
            Ok($wrap(&self, Value::from(n)))
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
            Ok($wrap(&self, Value::from(n)))
        }
        fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
            Ok($wrap(&self, Value::from(n)))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            let value = Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
            Ok($wrap(&self, value))
        }
    };
    ($wrap:expr, objects) => {
        non_strings_as_values!($wrap);
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let value = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
            Ok($wrap(&self, value))
        }
    };
}

/// Reads any value and keeps nothing of it.
struct Skip;

seed!(Skip, deserialize_any);

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    expecting!("any JSON value");
    scalars_are!(());
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// An object key, borrowed when it holds no escape.
struct Key;

seed!(Key, deserialize_str);

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    expecting!("a key");
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}

/// Marks `key` (bit `bit`) as read once; a second one is an error.
fn once<E: de::Error>(seen: &mut u32, bit: u32) -> Result<(), E> {
    if *seen & (1 << bit) != 0 {
        return Err(E::custom("a repeated key"));
    }
    *seen |= 1 << bit;
    Ok(())
}

/// The session object: its message count, and the top-level values the
/// decoder reads (tool schemas, ids) as the `Value`s it would read.
struct SessionVisitor<'c, 'm>(&'c mut Count<'m>);

impl<'de> Visitor<'de> for SessionVisitor<'_, '_> {
    type Value = (usize, Map<String, Value>);
    expecting!("an OpenAI session object");
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut messages = None;
        let mut top = Map::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "messages" {
                if messages.is_some() {
                    return Err(A::Error::custom("a repeated key"));
                }
                messages = Some(map.next_value_seed(Messages(&mut *self.0))?);
            } else if key == "tools" || RECORD_ID_KEYS.contains(&&*key) {
                // A repeated one replaces the first, as in a parse.
                let value: Value = map.next_value()?;
                top.insert(key.into_owned(), value);
            } else {
                map.next_value_seed(Skip)?;
            }
        }
        let messages = messages.ok_or_else(|| A::Error::custom("no messages"))?;
        Ok((messages, top))
    }
}

/// The `messages` array: counts each message into the running size.
struct Messages<'c, 'm>(&'c mut Count<'m>);

seed!(Messages<'_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for Messages<'_, '_> {
    type Value = usize;
    expecting!("an array of messages");
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        let meter = self.0.meter;
        while let Some(tokens) = seq.next_element_seed(MessageSeed(meter))? {
            self.0.add(tokens)?;
            n += 1;
        }
        Ok(n)
    }
}

/// One message: its tokens as [`Meter::message`] counts its decoding.
struct MessageSeed<'m>(&'m Meter);

seed!(MessageSeed<'_>, deserialize_map);

// Bits of the message keys read, for [`once`].
const ROLE: u32 = 0;
const CONTENT: u32 = 1;
const TOOL_CALLS: u32 = 2;
const TOOL_CALL_ID: u32 = 3;
const ATTACHED_BIT: u32 = 4;
const REASONING: u32 = 5;

impl<'de> Visitor<'de> for MessageSeed<'_> {
    type Value = u64;
    expecting!("a message object");
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let meter = self.0;
        let mut seen = 0u32;
        let (mut content, mut calls, mut call_id) = (0, 0, 0);
        // The tokens of each reasoning field that is a string, in list order.
        let mut reasoning = [None; REASONING_FIELDS.len()];
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                "role" => {
                    once(&mut seen, ROLE)?;
                    map.next_value_seed(Role)?;
                }
                "content" => {
                    once(&mut seen, CONTENT)?;
                    content = map.next_value_seed(ContentSeed(meter))?;
                }
                "tool_calls" => {
                    once(&mut seen, TOOL_CALLS)?;
                    calls = map.next_value_seed(Calls(meter))?;
                }
                "tool_call_id" => {
                    once(&mut seen, TOOL_CALL_ID)?;
                    call_id = map.next_value_seed(TextTokens(meter))?.unwrap_or(0);
                }
                ATTACHED => {
                    once(&mut seen, ATTACHED_BIT)?;
                    map.next_value_seed(Attached)?;
                }
                k => match REASONING_FIELDS.iter().position(|f| *f == k) {
                    Some(i) => {
                        once(&mut seen, REASONING + i as u32)?;
                        reasoning[i] = map.next_value_seed(TextTokens(meter))?;
                    }
                    None => map.next_value_seed(Skip)?,
                },
            }
        }
        if seen & (1 << ROLE) == 0 {
            return Err(A::Error::custom("missing `role`"));
        }
        let reasoning = reasoning.iter().find_map(|r| *r).unwrap_or(0);
        Ok(meter.message_overhead() + content + reasoning + calls + call_id)
    }
}

/// `role`: a string, or the message is rejected.
struct Role;

seed!(Role, deserialize_any);

impl<'de> Visitor<'de> for Role {
    type Value = ();
    expecting!("a string");
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

/// `compactor_attached`: an array, or the message is rejected.
struct Attached;

seed!(Attached, deserialize_any);

impl<'de> Visitor<'de> for Attached {
    type Value = ();
    expecting!("an array");
    containers_are!((); seq);
}

/// The tokens of a string; `None` for any other value.
struct TextTokens<'m>(&'m Meter);

seed!(TextTokens<'_>, deserialize_any);

impl<'de> Visitor<'de> for TextTokens<'_> {
    type Value = Option<u64>;
    expecting!("any JSON value");
    non_strings_are!(None);
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(self.0.text(s)))
    }
    containers_are!(None; seq, map);
}

/// `content`: absent (not here), null, a string or an array of parts; any
/// other value gets the message rejected.
struct ContentSeed<'m>(&'m Meter);

seed!(ContentSeed<'_>, deserialize_any);

impl<'de> Visitor<'de> for ContentSeed<'_> {
    type Value = u64;
    expecting!("a string, an array or null");
    fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
        Ok(0)
    }
    /// A string is one text part.
    fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
        Ok(self.0.text(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let mut total = 0u64;
        while let Some(tokens) = seq.next_element_seed(PartSeed(self.0))? {
            total += tokens;
        }
        Ok(total)
    }
}

/// One content part: its tokens as [`Meter::part`] counts its decoding
/// ([`super::decode_part`]).
struct PartSeed<'m>(&'m Meter);

seed!(PartSeed<'_>, deserialize_any);

impl PartSeed<'_> {
    /// A part that is not an object is counted as the decoder's `Other` part.
    fn other(&self, value: Value) -> u64 {
        self.0.part(&decode_part(value))
    }
}

impl<'de> Visitor<'de> for PartSeed<'_> {
    type Value = u64;
    expecting!("a content part");
    non_strings_as_values!(Self::other);
    fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
        Ok(self.other(Value::String(s.to_string())))
    }
    /// An object: a string `text` is counted where it lies; every other field
    /// is read as the `Value` the decoder would hold, so that a part counted
    /// whole (`Other`) is the decoder's object, key order and all.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let meter = self.0;
        let mut rest = Map::new();
        let mut text = None;
        let mut text_seen = false;
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "text" {
                if text_seen {
                    return Err(A::Error::custom("a repeated key"));
                }
                text_seen = true;
                match map.next_value_seed(TextOrValue(meter))? {
                    Ok(tokens) => text = Some(tokens),
                    Err(value) => {
                        rest.insert(key.into_owned(), value);
                    }
                }
            } else {
                let value: Value = map.next_value()?;
                rest.insert(key.into_owned(), value);
            }
        }
        let ty = rest.get("type").and_then(Value::as_str).unwrap_or("");
        Ok(match part_kind(ty, text.is_some()) {
            PartKind::Image => meter.image_tokens(),
            PartKind::Text => text.unwrap_or(0),
            // The first reasoning key present, if it holds a string.
            PartKind::Reasoning => REASONING_TEXT_KEYS
                .iter()
                .find_map(|k| match *k {
                    "text" if text.is_some() => Some(text),
                    k => rest.get(k).map(|v| v.as_str().map(|s| meter.text(s))),
                })
                .flatten()
                .unwrap_or(0),
            PartKind::Other => meter.part(&decode_part(Value::Object(rest))),
        })
    }
}

/// A string's tokens (`Ok`), or any other value as a `Value` (`Err`).
struct TextOrValue<'m>(&'m Meter);

seed!(TextOrValue<'_>, deserialize_any);

impl<'de> Visitor<'de> for TextOrValue<'_> {
    type Value = Result<u64, Value>;
    expecting!("any JSON value");
    non_strings_as_values!(|_: &Self, v| Err(v), objects);
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Ok(self.0.text(s)))
    }
}

/// `tool_calls`: the tokens of its calls when every item is a call the
/// decoder reads; otherwise it stays in the message's other fields, uncounted.
struct Calls<'m>(&'m Meter);

seed!(Calls<'_>, deserialize_any);

impl<'de> Visitor<'de> for Calls<'_> {
    type Value = u64;
    expecting!("any JSON value");
    scalars_are!(0);
    containers_are!(0; map);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let (mut total, mut all) = (0u64, true);
        while let Some(call) = seq.next_element_seed(CallSeed(self.0))? {
            match call {
                Some(tokens) => total += tokens,
                None => all = false,
            }
        }
        Ok(if all { total } else { 0 })
    }
}

/// One item of `tool_calls`: `Some(tokens)` if it is a call the decoder reads
/// (an object whose `function` is an object with a string, null or absent
/// `name`), as [`Meter::call`] counts it.
struct CallSeed<'m>(&'m Meter);

seed!(CallSeed<'_>, deserialize_any);

// Bits of the call keys read, for [`once`].
const ID: u32 = 0;
const FUNCTION: u32 = 1;

impl<'de> Visitor<'de> for CallSeed<'_> {
    type Value = Option<u64>;
    expecting!("any JSON value");
    scalars_are!(None);
    containers_are!(None; seq);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = 0u32;
        let mut id: Option<Cow<'de, str>> = None;
        let mut function = None;
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                "id" => {
                    once(&mut seen, ID)?;
                    id = map.next_value_seed(Str)?;
                }
                "function" => {
                    once(&mut seen, FUNCTION)?;
                    function = map.next_value_seed(FunctionSeed)?;
                }
                _ => map.next_value_seed(Skip)?,
            }
        }
        let Some((name, arguments)) = function else { return Ok(None) };
        let id = id.as_deref().unwrap_or("");
        Ok(Some(self.0.call(id, name.as_deref().unwrap_or(""), &arguments)))
    }
}

/// A string (borrowed when it holds no escape); `None` for any other value.
struct Str;

seed!(Str, deserialize_any);

impl<'de> Visitor<'de> for Str {
    type Value = Option<Cow<'de, str>>;
    expecting!("any JSON value");
    non_strings_are!(None);
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(s.to_string())))
    }
    containers_are!(None; seq, map);
}

/// A call's `function`: `Some((name, arguments))` when it is an object whose
/// `name` is a string, null or absent; the arguments as the decoder holds
/// them (absent or null: empty; a string: itself; anything else: its JSON).
struct FunctionSeed;

seed!(FunctionSeed, deserialize_any);

// Bits of the function keys read, for [`once`].
const NAME: u32 = 0;
const ARGUMENTS: u32 = 1;

impl<'de> Visitor<'de> for FunctionSeed {
    type Value = Option<(Option<Cow<'de, str>>, Cow<'de, str>)>;
    expecting!("any JSON value");
    scalars_are!(None);
    containers_are!(None; seq);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = 0u32;
        let mut name: Result<Option<Cow<'de, str>>, ()> = Ok(None);
        let mut arguments = Cow::Borrowed("");
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                "name" => {
                    once(&mut seen, NAME)?;
                    name = match map.next_value::<Value>()? {
                        Value::String(s) => Ok(Some(Cow::Owned(s))),
                        Value::Null => Ok(None),
                        _ => Err(()),
                    };
                }
                "arguments" => {
                    once(&mut seen, ARGUMENTS)?;
                    arguments = match map.next_value_seed(StrOrValue)? {
                        Ok(s) => s,
                        Err(Value::Null) => Cow::Borrowed(""),
                        Err(v) => Cow::Owned(v.to_string()),
                    };
                }
                _ => map.next_value_seed(Skip)?,
            }
        }
        Ok(name.ok().map(|name| (name, arguments)))
    }
}

/// A string (borrowed when it holds no escape) as `Ok`, any other value as
/// the `Value` a parse would give (`Err`).
struct StrOrValue;

seed!(StrOrValue, deserialize_any);

impl<'de> Visitor<'de> for StrOrValue {
    type Value = Result<Cow<'de, str>, Value>;
    expecting!("any JSON value");
    non_strings_as_values!(|_: &Self, v| Err(v), objects);
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Owned(s.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Source;
    use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS};
    use proptest::prelude::*;

    fn meters() -> [Meter; 2] {
        [
            Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS),
            Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS),
        ]
    }

    /// (id, messages, tokens) as decoding gives them; `None` if it fails.
    fn decoded(line: &str, meter: &Meter) -> Option<(String, usize, u64)> {
        let value: Value = serde_json::from_slice(line.as_bytes()).ok()?;
        let s = super::super::decode_session(value, Source::default()).ok()?;
        Some((s.id.clone(), s.messages.len(), meter.request(&s)))
    }

    /// (id, messages, tokens) as the skim gives them.
    fn skimmed(line: &str, meter: &Meter, limit: u64) -> Option<(String, usize, u64)> {
        let s = skim_line(line.as_bytes(), meter, limit)?;
        Some((s.id.unwrap_or_else(|| Source::default().to_string()), s.messages, s.tokens))
    }

    /// The skim answers for `line`, with what decoding gives, under both counters.
    fn agrees(line: &str) {
        for meter in meters() {
            let d = decoded(line, &meter);
            assert!(d.is_some(), "decodes: {line}");
            assert_eq!(skimmed(line, &meter, u64::MAX), d, "{:?}: {line}", meter.kind());
        }
    }

    #[test]
    fn every_shape_the_decoder_reads_is_counted_as_it_counts_it() {
        let lines = [
            r#"{"messages":[]}"#,
            r#"{"id":"s1","messages":[{"role":"user","content":"hello there"}]}"#,
            r#"{"id":12,"messages":[{"role":"user"}]}"#,
            r#"{"id":1.5e0,"messages":[{"role":"user","content":null}]}"#,
            r#"{"id":"","uuid":"u-1","session_id":{"x":1},"messages":[]}"#,
            r#"{"id":"a","id":"b","messages":[]}"#,
            r#"{"mess\u0061ges":[{"r\u006fle":"user","content":"key escapes"}]}"#,
            // Parts of every kind, and parts that are no object.
            r#"{"messages":[{"role":"user","content":[
                {"type":"text","text":"plain text"},
                {"text":"text first","type":"output_text","extra":[1,2.5]},
                {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"},"text":"alt"},
                {"type":"input_image","url":"https://x/y.png"},
                {"type":"image"},
                {"type":"thinking","thinking":"deep thought","text":"ignored"},
                {"type":"reasoning","text":"reasoned"},
                {"type":"redacted_thinking","data":"opaque"},
                {"type":"thinking","thinking":{"not":"text"},"text":"not read"},
                {"type":"reasoning"},
                {"type":"tool_call","id":"c1","name":"grep","arguments":{"q":"x","n":[1,2]}},
                {"type":"text","text":5},
                {"type":7,"text":"untyped"},
                "a bare string", 42, -1.25, null, true, [1,"two",{"3":4}]]}]}"#,
            // Tool calls in each spelling the decoder reads, and lists it leaves whole.
            r#"{"messages":[
                {"role":"assistant","content":null,"tool_calls":[
                    {"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.rs\"}"}},
                    {"function":{"name":null,"arguments":{"k":[true,null]}}},
                    {"id":5,"function":{"arguments":null}},
                    {"id":"c4","function":{"name":"w"}}]},
                {"role":"assistant","tool_calls":[{"function":{"name":"ok","arguments":"{}"}},{"function":{"name":3}}]},
                {"role":"assistant","tool_calls":[{"function":"not an object"}]},
                {"role":"assistant","tool_calls":[7]},
                {"role":"assistant","tool_calls":{"function":{"name":"x"}}},
                {"role":"assistant","tool_calls":null},
                {"role":"tool","tool_call_id":"call_1","content":"fn main() {}\n"},
                {"role":"tool","tool_call_id":9,"content":"numbered"}]}"#,
            // Reasoning fields: the first string one in the list counts.
            r#"{"messages":[
                {"role":"assistant","reasoning_content":"first","reasoning":"second","content":"a"},
                {"role":"assistant","reasoning":"only this","content":"b"},
                {"role":"assistant","reasoning_content":{"x":1},"reasoning":"this one","content":"c"},
                {"role":"assistant","reasoning_content":null}]}"#,
            // Escapes, dense scripts, surrogate pairs, everything unread.
            r#"{"tools":[{"type":"function","function":{"name":"grep","parameters":{"type":"object"}}}],
                "meta":{"a":1.50,"b":[1, 2],"c":"\u00e9\/"},"compactor_trailing":[{"t":1}],
                "messages":[{"role":"user","content":"line\none\t\"q\" \u00e9 \ud83d\ude00 漢字かなハングル 한국어",
                "toolUseResult":{"stdout":"ok","n":-0},"compactor_attached":[{"t":"a"},3,"s"],
                "usage":{"prompt_tokens":10},"timestamp":"2026-01-01T00:00:00Z","name":"n","x":1e300}]}"#,
            r#"{"tools":null,"messages":[{"role":"system","content":"s"}]}"#,
            r#"{"tools":"a schema as text","messages":[{"role":"system","content":"s"}]}"#,
            r#"{"tools":[{"a":1}],"tools":[{"b":[2,3]}],"messages":[]}"#,
            " \t{\"messages\":[{\"role\":\"user\",\"content\":\"spaced\"}]} \r",
        ];
        for line in lines {
            agrees(line);
        }
    }

    #[test]
    fn what_the_decoder_rejects_or_a_parse_reads_otherwise_is_left_to_it() {
        let deep = format!(r#"{{"x":{}1{},"messages":[]}}"#, "[".repeat(130), "]".repeat(130));
        let lines = [
            // Not JSON, or not all of it.
            r#"{"messages":[}"#.to_string(),
            r#"{"messages":[]} x"#.to_string(),
            r#"{"messages":[],"x":1e400}"#.to_string(),
            r#"{"messages":[],"x":"\ud800"}"#.to_string(),
            r#"{"messages":[],"x":"\q"}"#.to_string(),
            deep,
            // Not a session the decoder reads.
            r#"[{"role":"user","content":"a bare array"}]"#.to_string(),
            r#"{"messages":{}}"#.to_string(),
            r#"{"other":[]}"#.to_string(),
            r#"{"messages":["text"]}"#.to_string(),
            r#"{"messages":[{"content":"no role"}]}"#.to_string(),
            r#"{"messages":[{"role":3}]}"#.to_string(),
            r#"{"messages":[{"role":"user","content":5}]}"#.to_string(),
            r#"{"messages":[{"role":"user","content":{"text":"x"}}]}"#.to_string(),
            r#"{"messages":[{"role":"user","compactor_attached":{}}]}"#.to_string(),
            // A repeated key a reader looks up: a parse keeps the last one.
            r#"{"messages":[],"messages":[{"role":"user"}]}"#.to_string(),
            r#"{"messages":[{"role":"user","content":"a","content":"bb"}]}"#.to_string(),
            r#"{"messages":[{"role":"user","role":"tool"}]}"#.to_string(),
            r#"{"messages":[{"role":"user","content":[{"text":"a","text":"b"}]}]}"#.to_string(),
            r#"{"messages":[{"role":"a","tool_calls":[{"function":{"name":"a","name":"b"}}]}]}"#
                .to_string(),
            r#"{"messages":[{"role":"a","tool_calls":[{"id":"a","id":"b","function":{}}]}]}"#
                .to_string(),
        ];
        let meter = Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS);
        for line in &lines {
            assert_eq!(skim_line(line.as_bytes(), &meter, u64::MAX), None, "{line}");
        }
        assert_eq!(skim_line(b"{\"messages\":[],\"x\":\"\xff\"}", &meter, u64::MAX), None);
    }

    #[test]
    fn the_skim_stops_at_the_limit() {
        let line = r#"{"tools":[{"name":"t"}],"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]}"#;
        for meter in meters() {
            let (_, _, tokens) = decoded(line, &meter).unwrap();
            assert_eq!(skimmed(line, &meter, tokens + 1).map(|s| s.2), Some(tokens));
            assert_eq!(skimmed(line, &meter, tokens), None);
            // The messages alone reach a lower limit before the tools are counted.
            assert_eq!(skimmed(line, &meter, 1), None);
        }
    }

    /// A JSON string of text pieces in several spellings.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("plain words "),
            Just("漢字"),
            Just("é"),
            Just("\\n"),
            Just("\\u00e9"),
            Just("\\ud83d\\ude00"),
            Just("\\\""),
            Just("\\/"),
        ];
        prop::collection::vec(piece, 0..5).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    /// Any JSON value, including numbers a parse rejects (`1e400`).
    fn value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            3 => Just("null".to_string()),
            3 => Just("false".to_string()),
            3 => Just("-7".to_string()),
            3 => Just("2.5".to_string()),
            3 => Just("18446744073709551616".to_string()),
            1 => Just("1e400".to_string()),
            40 => text(),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(inner, 0..3).prop_map(|v| {
                    let kv: Vec<String> =
                        v.iter().enumerate().map(|(i, v)| format!("\"k{i}\": {v}")).collect();
                    format!("{{{}}}", kv.join(","))
                }),
            ]
        })
    }

    /// An object of some of `fields` (each with its value), in any order,
    /// sometimes with one key repeated.
    fn object(
        fields: Vec<(&'static str, BoxedStrategy<String>)>,
    ) -> impl Strategy<Value = (String, bool)> {
        let n = fields.len();
        let picks: Vec<_> = fields
            .into_iter()
            .map(|(k, v)| prop::option::weighted(0.6, v.prop_map(move |v| format!("\"{k}\":{v}"))))
            .collect();
        (
            picks,
            Just(()).prop_perturb(move |_, mut rng| {
                let mut order: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    order.swap(i, rng.random_range(0..=i));
                }
                (order, rng.random_ratio(1, 40))
            }),
        )
            .prop_map(|(picks, (order, repeat))| {
                let mut items: Vec<String> =
                    order.iter().filter_map(|&i| picks[i].clone()).collect();
                let repeated = repeat && !items.is_empty();
                if repeated {
                    items.push(items[0].clone());
                }
                (format!("{{{}}}", items.join(",")), repeated)
            })
    }

    fn part() -> BoxedStrategy<(String, bool)> {
        let ty = prop_oneof![
            Just("\"text\""),
            Just("\"image_url\""),
            Just("\"thinking\""),
            Just("\"redacted_thinking\""),
            Just("\"reasoning\""),
            Just("\"tool_call\""),
            Just("3"),
        ]
        .prop_map(str::to_string);
        let object = object(vec![
            ("type", ty.boxed()),
            ("text", prop_oneof![3 => text(), 1 => value()].boxed()),
            ("thinking", prop_oneof![text(), value()].boxed()),
            ("data", text().boxed()),
            ("extra", value().boxed()),
        ]);
        prop_oneof![4 => object, 1 => value().prop_map(|v| (v, false))].boxed()
    }

    fn list(item: BoxedStrategy<(String, bool)>) -> BoxedStrategy<(String, bool)> {
        prop::collection::vec(item, 0..4)
            .prop_map(|xs| {
                let repeated = xs.iter().any(|x| x.1);
                let items: Vec<String> = xs.into_iter().map(|x| x.0).collect();
                (format!("[{}]", items.join(",")), repeated)
            })
            .boxed()
    }

    fn call() -> BoxedStrategy<(String, bool)> {
        let function = object(vec![
            ("name", prop_oneof![3 => text(), 1 => Just("null".to_string()), 1 => value()].boxed()),
            ("arguments", prop_oneof![text(), value()].boxed()),
        ]);
        let function = prop_oneof![4 => function, 1 => value().prop_map(|v| (v, false))];
        (function, object(vec![("id", prop_oneof![text(), value()].boxed())]))
            .prop_map(|((f, r1), (rest, r2))| {
                let body = rest[1..].strip_suffix('}').unwrap_or_default();
                let sep = if body.is_empty() { "" } else { "," };
                (format!("{{\"function\":{f}{sep}{body}}}"), r1 || r2)
            })
            .boxed()
    }

    fn message() -> BoxedStrategy<(String, bool)> {
        let content = prop_oneof![
            4 => text().prop_map(|t| (t, false)),
            2 => Just(("null".to_string(), false)),
            8 => list(part()),
            1 => value().prop_map(|v| (v, false)),
        ];
        let fields: Vec<(&'static str, BoxedStrategy<String>)> = vec![
            ("tool_call_id", prop_oneof![text(), value()].boxed()),
            ("reasoning_content", prop_oneof![text(), value()].boxed()),
            ("reasoning", prop_oneof![text(), value()].boxed()),
            ("compactor_attached", prop_oneof![3 => list_of_values(), 1 => value()].boxed()),
            ("usage", value().boxed()),
        ];
        // Without a role (or with one not a string) a message is rejected:
        // rarely, so that most sessions decode.
        let role = prop_oneof![
            30 => Just("\"role\":\"user\",".to_string()),
            1 => Just(String::new()),
            1 => value().prop_map(|v| format!("\"role\":{v},")),
        ];
        (object(fields), content, prop::option::of(list(call())), role)
            .prop_map(|((obj, r1), (content, r2), calls, role)| {
                let body = obj[1..].strip_suffix('}').unwrap_or_default();
                let mut items = vec![format!("{role}\"content\":{content}")];
                let mut repeated = r1 || r2;
                if let Some((calls, r3)) = calls {
                    items.push(format!("\"tool_calls\":{calls}"));
                    repeated |= r3;
                }
                if !body.is_empty() {
                    items.push(body.to_string());
                }
                (format!("{{{}}}", items.join(",")), repeated)
            })
            .boxed()
    }

    fn list_of_values() -> BoxedStrategy<String> {
        prop::collection::vec(value(), 0..3).prop_map(|v| format!("[{}]", v.join(","))).boxed()
    }

    fn session() -> impl Strategy<Value = (String, bool)> {
        let top = object(vec![
            ("id", prop_oneof![text(), value()].boxed()),
            ("uuid", text().boxed()),
            ("tools", value().boxed()),
            ("meta", value().boxed()),
        ]);
        (top, list(message())).prop_map(|((top, r1), (messages, r2))| {
            let body = top[1..].strip_suffix('}').unwrap_or_default();
            let sep = if body.is_empty() { "" } else { "," };
            (format!("{{{body}{sep}\"messages\":{messages}}}"), r1 || r2)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// The skim answers with what decoding gives, and answers whenever
        /// decoding succeeds, unless a key is repeated.
        #[test]
        fn a_skim_is_the_decode(case in session()) {
            let (line, repeated) = case;
            for meter in meters() {
                let d = decoded(&line, &meter);
                let s = skimmed(&line, &meter, u64::MAX);
                if repeated {
                    prop_assert!(s.is_none() || s == d, "{line}");
                } else {
                    prop_assert_eq!(&s, &d, "{}", line);
                }
            }
        }
    }
}
