//! JSON text of a [`Value`], written in memory: a path that cannot fail, so it
//! returns the text.
//!
//! ## What it does
//! [`line()`] and [`text()`] write a value as compact JSON, the bytes
//! `serde_json::to_vec` writes. [`AnyValue`] is the other way without a tree:
//! a visitor that walks a JSON text as it is read.
//!
//! ## Why
//! `serde_json::to_vec` returns a `Result`, and an `unwrap_or_default()` on it
//! would turn a failed encode into an empty output line or field. For a
//! `Value` there is no failure to handle: serde_json refuses only a map key
//! that is not a string, an error a `Serialize` impl raises itself, or a
//! failed write, and a `Value`'s keys are `String`s, its numbers finite (a
//! non-finite number is rejected when a record is read: `file:line: invalid
//! JSON`), it raises nothing, and memory takes every write. serde_json's own
//! `Display` for `Value` is that infallible path; these functions name it.
//!
//! ## Example
//! `line(&json!({"a": [1, "é"]}))` is `br#"{"a":[1,"é"]}"#`.
//!
//! ## Invariants
//! - The output is byte for byte `serde_json::to_vec(value)` (key order kept).

use serde::de::DeserializeSeed;
use serde_json::Value;

/// `value` as one line of compact JSON (no newline).
pub fn line(value: &Value) -> Vec<u8> {
    text(value).into_bytes()
}

/// `value` as compact JSON text.
pub fn text(value: &Value) -> String {
    value.to_string()
}

/// A [`Visitor`](serde::de::Visitor) as a [`DeserializeSeed`]: reads whichever
/// JSON value comes next and visits it (`deserialize_any`). For the visitors
/// that walk a JSON text without building a [`Value`] tree (`io::pretty`'s
/// relay, the summary's walk of a call's argument strings), so each is one
/// visitor, not a visitor and a seed spelled alike.
pub struct AnyValue<V>(pub V);

impl<'de, V: serde::de::Visitor<'de>> DeserializeSeed<'de> for AnyValue<V> {
    type Value = V::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_any(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_what_serde_json_writes() {
        let cases = [
            json!(null),
            json!({"b": 1, "a": [1.5, -0.0, 1e300, "é\u{1F600}\n\"\\", {"": null}], "c": true}),
            json!([u64::MAX, i64::MIN, 0.1]),
        ];
        for v in cases {
            assert_eq!(line(&v), serde_json::to_vec(&v).unwrap());
            assert_eq!(text(&v), serde_json::to_string(&v).unwrap());
        }
        assert_eq!(line(&json!({"a": [1, "é"]})), r#"{"a":[1,"é"]}"#.as_bytes());
    }
}
