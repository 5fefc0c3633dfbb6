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
//! an object or array under a key no one reads ([`read_session_key`],
//! [`read_message_key`]: the decoder's keys and those of
//! [`crate::model::reads`]), and each record of `compactor_attached` not of a
//! [`RecordType`] some reader looks into ([`names_read_record`]), becomes a
//! kept marker holding its JSON text ([`super::kept_marker`]): no reader takes
//! it for data, since readers outside the decoder look up passthrough fields
//! only through those keys. The line is a [`KeptRecord`], whose session only
//! the lines writer writes (the text back in place of the marker).
//!
//! The line's session and message objects are walked here; each value a
//! reader reads is parsed by serde_json on its own, and a kept value is read
//! by [`scan`], which follows its grammar, finds its end and judges it in one
//! pass (letting serde_json skip it first and judging it after read every kept
//! byte twice, a large share of a `--counter hermes` run: `benches/RESULTS.md`,
//! 2026-12-01, night again).
//!
//! ## Invariants
//! - The bytes written are the bytes the parsed tree would give: a text is
//!   kept only if [`scan`] proves that serde_json writes its parse as
//!   exactly that text (no insignificant whitespace, serde_json's own string
//!   escapes, integers that parse as integers, no repeated key). Any other
//!   text is parsed as usual.
//! - A line parses, or fails, as `serde_json::from_slice` does: [`parse_line`]
//!   returns `None` on anything it cannot keep (an error, nesting near the
//!   recursion limit, a line holding U+FDD0, the first of Unicode's private
//!   noncharacters this crate marks with) and the caller parses the line whole.

use super::{
    ATTACHED, DECODED_MESSAGE_KEYS, DECODED_SESSION_KEYS, KeptRecord, MessageKey, REASONING_FIELDS,
    RecordType, SessionKey, kept_marker,
};
use crate::formats::RECORD_ID_KEYS;
use serde_json::{Map, Value};

/// Whether a session key is read (so never kept): the decoder's, the record
/// id's, or one a reader outside the dialect looks up ([`SessionKey`]).
fn read_session_key(k: &str) -> bool {
    DECODED_SESSION_KEYS.contains(&k)
        || RECORD_ID_KEYS.contains(&k)
        || SessionKey::ALL.iter().any(|r| r.name() == k)
}

/// Whether a message key is read (so never kept): the decoder's (reasoning
/// fields too), or one a reader outside the dialect looks up ([`MessageKey`]).
/// `compactor_attached` is read as an array whose records are kept.
fn read_message_key(k: &str) -> bool {
    DECODED_MESSAGE_KEYS.contains(&k)
        || REASONING_FIELDS.contains(&k)
        || MessageKey::ALL.iter().any(|r| r.name() == k)
}

/// Whether a carried record's text may be of a [`RecordType`] some reader
/// looks into: it holds the type's name anywhere (its `type`, the key of a
/// dialect's wrapper, or by chance), so it is parsed, not kept.
fn names_read_record(text: &[u8]) -> bool {
    RecordType::ALL.iter().any(|t| memchr::memmem::find(text, t.name().as_bytes()).is_some())
}

/// serde_json's recursion limit, less a margin for the levels above a kept
/// field: a deeper text is left to the whole-line parse, which fails on it
/// exactly as it always has.
const MAX_KEPT_DEPTH: usize = 100;

impl KeptRecord {
    /// Parses one OpenAI session line keeping unread fields as text; `None`
    /// when the line must be parsed whole instead (see the module invariants).
    pub fn parse(line: &[u8]) -> Option<KeptRecord> {
        parse_line(line).map(KeptRecord)
    }
}

/// [`KeptRecord::parse`]'s tree.
fn parse_line(line: &[u8]) -> Option<Value> {
    // U+FDD0 in UTF-8: a line holding it might forge a marker or hold a slot.
    if memchr::memmem::find(line, "\u{fdd0}".as_bytes()).is_some() {
        return None;
    }
    let mut walk = Walk { b: line, i: 0 };
    walk.space();
    if walk.peek()? != b'{' {
        return None;
    }
    let value = walk.object(Level::Session)?;
    walk.space();
    (walk.i == line.len()).then_some(value)
}

/// Which object [`Walk::object`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Session,
    Message,
}

/// A cursor in a line. Every method returns `None` on anything it does not
/// take for certain, and the caller parses the line whole.
struct Walk<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Walk<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.i += 1;
        }
    }

    /// Steps over `c` (after white space), or fails.
    fn eat(&mut self, c: u8) -> Option<()> {
        self.space();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// After a container's opening byte: whether `close` ends it at once.
    fn empty(&mut self, close: u8) -> Option<bool> {
        self.space();
        let empty = self.peek()? == close;
        self.i += usize::from(empty);
        Some(empty)
    }

    /// After an item: `,` (false: more follow) or `close` (true: the end).
    fn item_end(&mut self, close: u8) -> Option<bool> {
        self.space();
        let c = self.peek()?;
        self.i += 1;
        match c {
            b',' => Some(false),
            c if c == close => Some(true),
            _ => None,
        }
    }

    /// A session or message object, at its `{`.
    fn object(&mut self, level: Level) -> Option<Value> {
        self.eat(b'{')?;
        let mut map = Map::new();
        let mut done = self.empty(b'}')?;
        while !done {
            let key = self.key()?;
            self.eat(b':')?;
            self.space();
            let value = match (level, key) {
                (Level::Session, "messages") => self.array(Item::Message)?,
                (Level::Session, k) if read_session_key(k) => self.read()?,
                (Level::Message, ATTACHED) => self.array(Item::Record)?,
                (Level::Message, k) if read_message_key(k) => self.read()?,
                _ => self.keep(Keep::Field)?,
            };
            map.insert(key.to_owned(), value);
            done = self.item_end(b'}')?;
        }
        Some(Value::Object(map))
    }

    /// An object key without escapes (one with escapes is left to the whole
    /// parse: it would need unescaping), read by [`string_end`] as a kept
    /// text's strings are.
    fn key(&mut self) -> Option<&'a str> {
        self.space();
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        let end = string_end(self.b, start, &mut true)?;
        let raw = &self.b[start..end];
        if memchr::memchr(b'\\', raw).is_some() {
            return None;
        }
        self.i = end + 1;
        std::str::from_utf8(raw).ok()
    }

    /// The `messages` array (items: messages) or `compactor_attached` (items:
    /// kept records); any other value there is read as it is.
    fn array(&mut self, item: Item) -> Option<Value> {
        if self.peek()? != b'[' {
            return self.read();
        }
        self.i += 1;
        let mut items = Vec::new();
        let mut done = self.empty(b']')?;
        while !done {
            self.space();
            items.push(match item {
                Item::Message if self.peek()? == b'{' => self.object(Level::Message)?,
                Item::Message => self.read()?,
                Item::Record => self.keep(Keep::Record)?,
            });
            done = self.item_end(b']')?;
        }
        Some(Value::Array(items))
    }

    /// One value read by serde_json, as a whole parse reads it.
    fn read(&mut self) -> Option<Value> {
        let mut values = serde_json::Deserializer::from_slice(&self.b[self.i..]).into_iter();
        let value: Value = values.next()?.ok()?;
        self.i += values.byte_offset();
        // Read alone, it had serde_json's whole recursion budget; the line's
        // parse would have had a few levels less.
        (!nested_deeper(&value, MAX_KEPT_DEPTH)).then_some(value)
    }

    /// A value that may be kept: an object or array that serde_json would write
    /// back as read becomes a marker (unless it is a carried record of a type
    /// some reader looks into); any other is read.
    fn keep(&mut self, what: Keep) -> Option<Value> {
        if !matches!(self.peek()?, b'{' | b'[') {
            return self.read();
        }
        let (end, canon) = scan(&self.b[self.i..])?;
        let bytes = &self.b[self.i..self.i + end];
        let text = std::str::from_utf8(bytes).ok()?;
        self.i += end;
        match canon {
            Canon::Yes if what == Keep::Record && names_read_record(bytes) => {
                serde_json::from_str(text).ok()
            }
            Canon::Yes => Some(kept_marker(text)),
            // Parsed alone it has a fresh recursion budget, but `scan` said
            // `TooDeep` of any text the line's parse could reject for depth.
            Canon::No => serde_json::from_str(text).ok(),
            Canon::TooDeep => None,
        }
    }
}

/// What an array's items are.
#[derive(Clone, Copy)]
enum Item {
    Message,
    /// A carried record (`compactor_attached`).
    Record,
}

/// What [`Walk::keep`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// A field nothing reads.
    Field,
    /// A carried record: read when it may be of a [`RecordType`].
    Record,
}

/// Whether `v` nests arrays and objects deeper than `limit`.
fn nested_deeper(v: &Value, limit: usize) -> bool {
    match v {
        Value::Array(items) => limit == 0 || items.iter().any(|x| nested_deeper(x, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|x| nested_deeper(x, limit - 1)),
        _ => false,
    }
}

/// What [`scan`] found of a text.
#[derive(Debug, PartialEq, Eq)]
enum Canon {
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
#[cfg(test)]
fn canonical(text: &str) -> Canon {
    match scan(text.as_bytes()) {
        Some((_, Canon::TooDeep)) => Canon::TooDeep,
        Some((end, canon)) if end == text.len() => canon,
        _ => Canon::No,
    }
}

/// What may come next in [`scan`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// A value (after `:` or an array's `,`).
    Value,
    /// A value or `]` (after `[`).
    ValueOrEnd,
    /// A key (after an object's `,`).
    Key,
    /// A key or `}` (after `{`).
    KeyOrEnd,
    Colon,
    /// `,` or the end of the open array or object.
    CommaOrEnd,
}

/// Reads the array or object at the start of `b`: the index just past it, and
/// whether serde_json writes its parse as exactly these bytes ([`Canon::Yes`]:
/// no white space, serde_json's own string escapes, integers that parse as
/// integers, no repeated key) or may not ([`Canon::No`]: the caller parses the
/// text, and serde_json judges it). `None` when it is not JSON: a grammar
/// error, a string with a control character or an unknown escape, or no end.
/// Stops at [`MAX_KEPT_DEPTH`] with [`Canon::TooDeep`]. Bytes are not checked
/// for UTF-8: the caller checks the text it keeps.
///
/// So `Yes` is said only of valid JSON (once the text is UTF-8); and the end found is the value's end
/// whenever the text is valid, since the grammar is followed token by token.
fn scan(b: &[u8]) -> Option<(usize, Canon)> {
    if !matches!(b.first(), Some(b'{' | b'[')) {
        return None;
    }
    // The keys of the open objects, one after another; per open array or
    // object, where its keys start (`None` for an array).
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut canon = true;
    let mut next = Next::Value;
    let mut i = 0;
    loop {
        let c = *b.get(i)?;
        if matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
            canon = false;
            i += 1;
            continue;
        }
        let mut closed = false;
        match (next, c) {
            (Next::Value | Next::ValueOrEnd, b'{') => {
                open.push(Some(keys.len()));
                next = Next::KeyOrEnd;
                i += 1;
            }
            (Next::Value | Next::ValueOrEnd, b'[') => {
                open.push(None);
                next = Next::ValueOrEnd;
                i += 1;
            }
            (Next::Value | Next::ValueOrEnd, b'"') => {
                i = string_end(b, i + 1, &mut canon)? + 1;
                next = Next::CommaOrEnd;
            }
            (Next::Value | Next::ValueOrEnd, b'-' | b'0'..=b'9') => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                canon &= canonical_integer(&b[start..i]);
                next = Next::CommaOrEnd;
            }
            (Next::Value | Next::ValueOrEnd, b't' | b'f' | b'n') => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !b[i..].starts_with(word) {
                    return None;
                }
                i += word.len();
                next = Next::CommaOrEnd;
            }
            (Next::Key | Next::KeyOrEnd, b'"') => {
                let start = i + 1;
                i = string_end(b, start, &mut canon)? + 1;
                let key = &b[start..i - 1];
                let Some(Some(first)) = open.last() else { return None };
                // Keys compare as written: with only serde_json's escapes
                // allowed in a canonical text, equal texts are equal keys.
                if keys[*first..].contains(&key) {
                    canon = false;
                }
                keys.push(key);
                next = Next::Colon;
            }
            (Next::Colon, b':') => {
                next = Next::Value;
                i += 1;
            }
            (Next::CommaOrEnd, b',') => {
                next = if matches!(open.last(), Some(Some(_))) { Next::Key } else { Next::Value };
                i += 1;
            }
            (Next::CommaOrEnd | Next::KeyOrEnd, b'}') => {
                let Some(Some(first)) = open.pop() else { return None };
                keys.truncate(first);
                closed = true;
            }
            (Next::CommaOrEnd | Next::ValueOrEnd, b']') => {
                let Some(None) = open.pop() else { return None };
                closed = true;
            }
            _ => return None,
        }
        if closed {
            i += 1;
            next = Next::CommaOrEnd;
            if open.is_empty() {
                return Some((i, if canon { Canon::Yes } else { Canon::No }));
            }
        }
        if open.len() > MAX_KEPT_DEPTH {
            return Some((i, Canon::TooDeep));
        }
    }
}

/// The index of the closing quote of the string whose text starts at
/// `start`; clears `canon` on an escape serde_json does not write. `None` on a
/// control character, an unknown escape or no closing quote. (UTF-8 is the
/// caller's to check, once for the whole text.)
fn string_end(b: &[u8], start: usize, canon: &mut bool) -> Option<usize> {
    let mut i = start;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        // (A fold, not `any`: without an early exit the compiler vectorizes it.)
        if b[i..at].iter().fold(false, |control, &c| control | (c < 0x20)) {
            return None;
        }
        if b[at] == b'"' {
            return Some(at);
        }
        match b.get(at + 1)? {
            b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => i = at + 2,
            b'/' => {
                *canon = false;
                i = at + 2;
            }
            b'u' => {
                let hex = b.get(at + 2..at + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                // serde_json writes \u00XX (lowercase hex) only for control
                // characters without a short escape.
                let digit = |c: u8| match c {
                    b'0'..=b'9' => Some(c - b'0'),
                    b'a'..=b'f' => Some(c - b'a' + 10),
                    _ => None,
                };
                let written = match *hex {
                    [b'0', b'0', hi, lo] => {
                        digit(hi).zip(digit(lo)).map(|(h, l)| h * 16 + l).is_some_and(|c| {
                            c < 0x20 && !matches!(c, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)
                        })
                    }
                    _ => false,
                };
                *canon &= written;
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

#[cfg(test)]
mod tests {
    use super::super::kept_text;
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Replaces every kept marker in `v` by the parse of its text (tests
    /// compare what a kept parse means with a whole one).
    fn expand(v: &mut Value) {
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

    /// `text` with the byte at `at` (modulo its length) replaced by `with`,
    /// or removed when `with` is `None`: mostly no longer JSON.
    fn mutated(text: &str, at: usize, with: Option<u8>) -> Vec<u8> {
        let mut b = text.as_bytes().to_vec();
        if b.is_empty() {
            return b;
        }
        let at = at % b.len();
        match with {
            Some(c) => b[at] = c,
            None => drop(b.remove(at)),
        }
        b
    }

    /// Bytes a mutation puts in: JSON's punctuation, quotes, escapes, a
    /// control character, a UTF-8 lead and continuation byte.
    fn a_byte() -> impl Strategy<Value = Option<u8>> {
        prop::option::of(prop::sample::select(
            b"{}[],:\"\\ 0-1eEtfnu\x01\x1f\xc3\xa9\x80a/".to_vec(),
        ))
    }

    /// A session line around `kept` (a message field and an attached record
    /// nothing reads, a session field) and `read` (a message field read).
    fn line(kept: &str, read: &str, w: &str) -> String {
        format!(
            r#"{w}{{"id":"s1",{w}"meta":{kept},"messages":[{{"role":"user","content":{read},"toolUseResult":{kept},"compactor_attached":[{kept},3]}},{w}"not a message",[{kept}]],"tools":{read}}}{w}"#
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the spelling, a text said canonical is what serde_json writes.
        #[test]
        fn a_text_said_canonical_round_trips(text in json_text()) {
            check(&text);
        }

    }

    proptest! {
        // Cheap cases; a mutation lands in a string of a canonical text rarely.
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// A text said canonical is JSON: the scan checks the grammar, the
        /// strings and the escapes that serde_json's parse checks.
        #[test]
        fn a_broken_text_is_never_said_canonical(text in json_text(), at in any::<usize>(), with in a_byte()) {
            let b = mutated(&text, at, with);
            if let (Some((end, Canon::Yes)), Ok(s)) = (scan(&b), std::str::from_utf8(&b)) {
                let v: Value = serde_json::from_str(&s[..end]).expect("said canonical, so JSON");
                prop_assert_eq!(serde_json::to_string(&v).unwrap(), &s[..end]);
            }
        }


        /// A line reads as a whole parse reads it, or is left to one: the same
        /// tree once kept texts are read back, and `None` for every line a
        /// whole parse rejects.
        #[test]
        fn a_line_means_what_the_whole_parse_says(
            kept in json_text(),
            read in json_text(),
            spaced in any::<bool>(),
            at in any::<usize>(),
            with in a_byte(),
            broken in any::<bool>(),
        ) {
            let text = line(&kept, &read, if spaced { " " } else { "" });
            let b = if broken { mutated(&text, at, with) } else { text.into_bytes() };
            let whole = serde_json::from_slice::<Value>(&b);
            match parse_line(&b) {
                Some(mut v) => {
                    expand(&mut v);
                    prop_assert_eq!(Ok(v), whole.map_err(|e| e.to_string()));
                }
                None => prop_assert!(broken || whole.is_err(), "a valid line was left to the whole parse"),
            }
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

    /// What serde_json rejects, the scan does not call canonical (or read at all).
    #[test]
    fn broken_texts_are_not_read() {
        for text in [
            "[1,]",
            "[,1]",
            "{\"a\":1,}",
            "{\"a\"1}",
            "{\"a\":}",
            "{1:2}",
            "[tru]",
            "[nul]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[\"a\u{1}\"]",
            "[\"a\nb\"]",
            "[\"open]",
            "[1}",
            "{\"a\":1]",
            "[1 2]",
            "[[]",
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
            assert!(!matches!(scan(text.as_bytes()), Some((_, Canon::Yes))), "{text}");
        }
        // Ends where the value ends, whatever follows.
        assert_eq!(scan(b"[1,{\"a\":[]}] ,x"), Some((12, Canon::Yes)));
        assert_eq!(scan(b"{\"a\": 1}}"), Some((8, Canon::No)));
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
}
