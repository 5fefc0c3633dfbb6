//! JSON text laid out pretty without building a tree: what
//! `serde_json::to_writer_pretty(serde_json::from_slice::<Value>(bytes))`
//! writes, byte for byte, from `bytes` in one pass.
//!
//! ## What
//! [`Pretty::of`] reads a JSON text (a record as it was read, or as a worker
//! serialized it) and writes it through serde_json's own `PrettyFormatter`
//! and string escaper as it goes.
//!
//! ## Why
//! A document output (one session per pretty-printed file) is given its
//! records as compact lines: the writer thread parsed each into a `Value`
//! tree, kept a clone, printed it and dropped both, most of it allocations of
//! the tree; reading the text once and writing as it goes costs less
//! (`benches/RESULTS.md`, 2026-12-04 and 2026-12-05, issue 38 point 7).
//!
//! ## Example
//! `{"b":1,"a":[]}` becomes `{\n  "b": 1,\n  "a": []\n}`: the keys in the
//! order read (serde_json's `preserve_order`), numbers and strings as a
//! `Value` would print them (`1.0e2` as `100.0`, `"\u00e9"` as `"é"`).
//!
//! A document's records can also be laid out where they are encoded, with
//! no compact text in between: [`Pretty::of_tree`] serializes a [`Tree`]
//! (a `Value`, or a writer that writes some `Value`'s bytes) through the
//! same formatter.
//!
//! ## Invariants
//! - A [`Pretty`] holds exactly the bytes of the tree round trip: it is made
//!   only by [`Pretty::of_value`] (the tree's own layout), [`Pretty::of`],
//!   which reads through the same parser (numbers,
//!   escapes, depth limit, trailing bytes) and writes through the same
//!   formatter, and [`Pretty::of_tree`], which takes only a [`Tree`]. Where
//!   the text would differ, an object holding a key twice
//!   (a tree keeps the last value at the first key's place), or where the
//!   text is not JSON, [`Pretty::of`] takes the tree's way. Pinned against the
//!   round trip by a proptest and by the duplicate-key and error tests below;
//!   each [`Tree`] by a test of its own against [`Pretty::of`] of its
//!   compact text.

use crate::json_text::AnyValue;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// Objects with more keys than this check for a repeated key in a hash set
/// rather than by comparing with every earlier key.
const LINEAR_KEY_CHECK: usize = 16;

/// The pretty layout of one JSON text, identical to the `Value` round trip's.
#[derive(Debug, PartialEq, Eq)]
pub struct Pretty(Vec<u8>);

/// A `Serialize` whose compact JSON text is a `Value`'s: parsed into a tree
/// and written again, it gives the same bytes (no object holds a key twice,
/// nothing is written as raw text). The pretty formatter then sees the same
/// events from it as from that tree, so [`Pretty::of_tree`] writes the round
/// trip's layout with no text parsed. An implementation promises this, and a
/// test of it compares [`Pretty::of_tree`] with [`Pretty::of`] of its compact
/// text.
pub trait Tree: serde::Serialize {}

impl Tree for Value {}

impl Pretty {
    /// The pretty layout of `bytes`: streamed when it can be, else through a
    /// `Value` tree (a repeated key). An error when `bytes` is not JSON (the
    /// error the tree's parse gives).
    pub fn of(bytes: &[u8]) -> serde_json::Result<Pretty> {
        let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 4);
        let mut fmt = PrettyFormatter::new();
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let streamed = AnyValue(Relay { out: &mut out, fmt: &mut fmt })
            .deserialize(&mut de)
            .and_then(|()| de.end());
        if streamed.is_ok() {
            return Ok(Pretty(out));
        }
        // A repeated key, or not JSON: the tree's way, its bytes or its error.
        let value: Value = serde_json::from_slice(bytes)?;
        Ok(Pretty::of_value(&value))
    }

    /// The pretty layout of a tree.
    pub fn of_value(value: &Value) -> Pretty {
        // Writing to a `Vec` cannot fail, nor can serializing a `Value`.
        Pretty::of_tree(value).unwrap_or_else(|_| Pretty(Vec::new()))
    }

    /// The pretty layout of what `tree` serializes, written as it goes.
    /// An error only where serializing it fails (a `Serialize` impl's own
    /// error; writing to a `Vec` does not fail).
    pub fn of_tree<T: Tree + ?Sized>(tree: &T) -> serde_json::Result<Pretty> {
        let mut out = Vec::with_capacity(4096);
        tree.serialize(&mut serde_json::Serializer::pretty(&mut out))?;
        Ok(Pretty(out))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads one JSON value and writes it pretty: a seed and a visitor at once.
struct Relay<'a> {
    out: &'a mut Vec<u8>,
    fmt: &'a mut PrettyFormatter<'static>,
}

impl Relay<'_> {
    fn again(&mut self) -> Relay<'_> {
        Relay { out: self.out, fmt: self.fmt }
    }
}

/// `v` quoted and escaped as serde_json writes any string: the pretty
/// formatter lays out only arrays and objects, and a string is written the
/// same by every formatter (the escaper is serde_json's, private but for this).
fn string<E: serde::de::Error>(out: &mut Vec<u8>, v: &str) -> Result<(), E> {
    serde::Serialize::serialize(v, &mut serde_json::Serializer::new(out)).map_err(E::custom)
}

/// An I/O error of a `Vec` (none happens) as a parse error.
fn io<E: serde::de::Error>(e: std::io::Error) -> E {
    E::custom(e)
}

impl<'de> Visitor<'de> for Relay<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.fmt.write_null(self.out).map_err(io)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.fmt.write_bool(self.out, v).map_err(io)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.fmt.write_u64(self.out, v).map_err(io)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.fmt.write_i64(self.out, v).map_err(io)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // A parsed number is finite; a tree would print a non-finite one as null.
        if v.is_finite() {
            self.fmt.write_f64(self.out, v).map_err(io)
        } else {
            self.fmt.write_null(self.out).map_err(io)
        }
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        string(self.out, v)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.fmt.begin_array(self.out).map_err(io)?;
        let mut first = true;
        loop {
            // The comma goes before the element; an element is known only
            // once `next_element_seed` has read its first byte, so the
            // separator is written by the seed ([`Element`]).
            let element = Element { relay: self.again(), first };
            match seq.next_element_seed(element)? {
                Some(()) => first = false,
                None => break,
            }
        }
        self.fmt.end_array(self.out).map_err(io)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.fmt.begin_object(self.out).map_err(io)?;
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let mut hashed: HashSet<Cow<'de, str>> = HashSet::new();
        let mut first = true;
        while let Some(key) = map.next_key_seed(Key)? {
            let repeated = if keys.len() < LINEAR_KEY_CHECK {
                let seen = keys.contains(&key);
                keys.push(key.clone());
                seen
            } else {
                if hashed.is_empty() {
                    hashed.extend(keys.iter().cloned());
                }
                !hashed.insert(key.clone())
            };
            if repeated {
                return Err(A::Error::custom("a key repeated: laid out through a tree"));
            }
            self.fmt.begin_object_key(self.out, first).map_err(io)?;
            string(self.out, &key)?;
            self.fmt.end_object_key(self.out).map_err(io)?;
            self.fmt.begin_object_value(self.out).map_err(io)?;
            map.next_value_seed(AnyValue(self.again()))?;
            self.fmt.end_object_value(self.out).map_err(io)?;
            first = false;
        }
        self.fmt.end_object(self.out).map_err(io)
    }
}

/// An array element: its separator, then the element.
struct Element<'a> {
    relay: Relay<'a>,
    first: bool,
}

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let Element { relay: Relay { out, fmt }, first } = self;
        fmt.begin_array_value(out, first).map_err(io)?;
        AnyValue(Relay { out: &mut *out, fmt: &mut *fmt }).deserialize(d)?;
        fmt.end_array_value(out).map_err(io)
    }
}

/// An object key, borrowed from the text where it holds no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a tree round trip writes.
    fn tree(bytes: &[u8]) -> Vec<u8> {
        let v: Value = serde_json::from_slice(bytes).unwrap();
        serde_json::to_vec_pretty(&v).unwrap()
    }

    fn same(text: &str) {
        let got = Pretty::of(text.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(got.as_bytes()),
            String::from_utf8_lossy(&tree(text.as_bytes())),
            "{text}"
        );
    }

    #[test]
    fn lays_out_what_the_tree_round_trip_writes() {
        for text in [
            r#"{"b":1,"a":[]}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[{}]"#,
            r#"[[],{},[1,[2,{"x":null}]]]"#,
            r#"{"a":{"b":{"c":[true,false,null]}},"d":"e"}"#,
            r#"  {"k" : [ 1 , 2 ] }  "#,
            r#"{"n":[0,-0,1.0e2,-1.5E-3,18446744073709551615,18446744073709551616,-9223372036854775808,0.1,3.141592653589793]}"#,
            r#"{"s":"\u00e9\n\t\"\\\/\u0001\ud83d\ude00 é <>"}"#,
            r#"{"k\u00e9y":"v","k\"q":1}"#,
            r#""only a string""#,
            r#"42"#,
            r#"null"#,
        ] {
            same(text);
        }
    }

    /// A tree keeps a repeated key once (the last value, at the first place):
    /// so does the layout.
    #[test]
    fn a_repeated_key_is_laid_out_as_the_tree_keeps_it() {
        same(r#"{"a":1,"b":2,"a":3}"#);
        same(r#"[{"x":{"y":1,"y":2}}]"#);
        same(r#"{"\u0061":1,"a":2}"#);
        // Past the linear check, in the hash set.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 30)).collect();
        same(&format!("{{{}}}", many.join(",")));
        let distinct: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        same(&format!("{{{}}}", distinct.join(",")));
    }

    #[test]
    fn not_json_is_the_parse_error() {
        for text in [r#"{"a":1"#, r#"{"a":1} x"#, r#"[1,]"#, ""] {
            let ours = Pretty::of(text.as_bytes()).unwrap_err().to_string();
            let theirs = serde_json::from_slice::<Value>(text.as_bytes()).unwrap_err().to_string();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    /// Marks a string that carries an object's text (see [`text_of`]).
    const OBJECT: char = '\u{1}';

    /// JSON values whose objects are carried as their text (marked strings),
    /// so that a repeated key stays repeated.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            "[a-z\\u{e9}\\u{1f600}\"\\\\/\n\t\u{7} ]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::vec(("[a-c\\u{e9}\"]{0,3}", inner), 0..6).prop_map(|kv| {
                    let body: Vec<String> = kv
                        .iter()
                        .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), text_of(v)))
                        .collect();
                    Value::String(format!("{OBJECT}{{{}}}", body.join(",")))
                }),
            ]
        })
    }

    /// The JSON text of a value of [`json`], its objects as carried.
    fn text_of(v: &Value) -> String {
        match v {
            Value::String(s) if s.starts_with(OBJECT) => s[OBJECT.len_utf8()..].to_string(),
            Value::Array(items) => {
                format!("[{}]", items.iter().map(text_of).collect::<Vec<_>>().join(","))
            }
            other => other.to_string(),
        }
    }

    proptest! {
        #[test]
        fn any_json_text_is_laid_out_as_the_tree_round_trip(v in json()) {
            let text = text_of(&v);
            let got = Pretty::of(text.as_bytes()).unwrap();
            prop_assert_eq!(got.as_bytes(), &tree(text.as_bytes())[..]);
        }

        /// A tree laid out as serialized is its compact text laid out as read.
        #[test]
        fn a_tree_is_laid_out_as_its_compact_text(v in json()) {
            let value: Value = serde_json::from_str(&text_of(&v)).unwrap();
            let got = Pretty::of_tree(&value).unwrap();
            let read = Pretty::of(&crate::json_text::line(&value)).unwrap();
            prop_assert_eq!(got.as_bytes(), read.as_bytes());
        }
    }
}
