//! JSON styles: the ways JSON text is written (spacing, ASCII escaping, a
//! Python literal), so that JSON embedded in strings (tool call arguments,
//! Hermes tags) is written back byte for byte. A dialect that reads such text
//! records the style that writes it back (`JsonStyle::detect`) and writes it
//! again with that style ([`JsonStyle::render`]).

mod python;

use serde_json::{Map, Value};

/// A way of writing JSON text, so that JSON embedded in strings (tool call
/// arguments, Hermes tags) can be written back byte for byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonStyle {
    /// `{"a": 1, "b": "é"}`: Python's `json.dumps(..., ensure_ascii=False)`.
    Spaced,
    /// `{"a": 1, "b": "\u00e9"}`: Python's `json.dumps` default.
    SpacedAscii,
    /// `{"a":1,"b":"é"}`: serde_json, JavaScript.
    Compact,
    /// `{"a":1,"b":"\u00e9"}`.
    CompactAscii,
    /// `{'a': 1, 'b': 'é'}`: a Python literal (`str(dict)`).
    Python,
}

/// The styles that write JSON proper, in the order they are tried.
pub(crate) const JSON_STYLES: &[JsonStyle] =
    &[JsonStyle::Spaced, JsonStyle::SpacedAscii, JsonStyle::Compact, JsonStyle::CompactAscii];

impl JsonStyle {
    pub fn name(self) -> &'static str {
        match self {
            JsonStyle::Spaced => "spaced",
            JsonStyle::SpacedAscii => "spaced_ascii",
            JsonStyle::Compact => "compact",
            JsonStyle::CompactAscii => "compact_ascii",
            JsonStyle::Python => "python",
        }
    }

    pub fn from_name(s: &str) -> Option<JsonStyle> {
        [
            JsonStyle::Spaced,
            JsonStyle::SpacedAscii,
            JsonStyle::Compact,
            JsonStyle::CompactAscii,
            JsonStyle::Python,
        ]
        .into_iter()
        .find(|st| st.name() == s)
    }

    /// The first of `styles` that writes `v` as exactly `text`.
    pub(crate) fn detect(v: &Value, text: &str, styles: &[JsonStyle]) -> Option<JsonStyle> {
        styles.iter().copied().find(|st| st.render(v) == text)
    }

    /// `v` written in this style.
    pub fn render(self, v: &Value) -> String {
        let mut out = String::new();
        self.write(v, &mut out);
        out
    }

    fn spaced(self) -> bool {
        matches!(self, JsonStyle::Spaced | JsonStyle::SpacedAscii | JsonStyle::Python)
    }

    fn write(self, v: &Value, out: &mut String) {
        let py = self == JsonStyle::Python;
        match v {
            Value::Null => out.push_str(if py { "None" } else { "null" }),
            Value::Bool(b) => out.push_str(match (py, b) {
                (true, true) => "True",
                (true, false) => "False",
                (false, true) => "true",
                (false, false) => "false",
            }),
            Value::Number(n) => {
                if self.spaced() && n.is_f64() {
                    out.push_str(&python_float(&n.to_string()));
                } else {
                    out.push_str(&n.to_string());
                }
            }
            Value::String(s) => self.write_str(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if self.spaced() { ", " } else { "," });
                    }
                    self.write(item, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if self.spaced() { ", " } else { "," });
                    }
                    self.write_str(k, out);
                    out.push_str(if self.spaced() { ": " } else { ":" });
                    self.write(item, out);
                }
                out.push('}');
            }
        }
    }

    fn write_str(self, s: &str, out: &mut String) {
        use std::fmt::Write;
        if self == JsonStyle::Python {
            let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
            out.push(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                        let _ = write!(out, "\\x{:02x}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            return;
        }
        let ascii = matches!(self, JsonStyle::SpacedAscii | JsonStyle::CompactAscii);
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if ascii && (c as u32) >= 0x7f => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        let _ = write!(out, "\\u{u:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// A float as Python's `repr` writes it, from the shortest round-trip digits
/// serde_json prints (`1e-7` -> `1e-07`, `1e16` -> `1e+16`, `100.0` stays).
fn python_float(s: &str) -> String {
    let (sign, body) = match s.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", s),
    };
    let (mantissa, exp) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{int}{frac}");
    // Decimal exponent of the first digit.
    let mut e = exp + int.len() as i64 - 1;
    let lead = digits.len() - digits.trim_start_matches('0').len();
    digits.drain(..lead);
    e -= lead as i64;
    let digits = digits.trim_end_matches('0');
    if digits.is_empty() {
        return format!("{sign}0.0");
    }
    if (-4..16).contains(&e) {
        if e >= 0 {
            let point = e as usize + 1;
            let (i, f) = if digits.len() > point {
                (digits[..point].to_string(), digits[point..].to_string())
            } else {
                (format!("{digits}{}", "0".repeat(point - digits.len())), String::new())
            };
            let f = if f.is_empty() { "0".to_string() } else { f };
            format!("{sign}{i}.{f}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-e - 1) as usize))
        }
    } else {
        let (d0, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if e < 0 { '-' } else { '+' };
        format!("{sign}{d0}{rest}e{esign}{:02}", e.abs())
    }
}

/// Parses a JSON (or Python literal) object, and the style that writes it
/// back exactly (`None`: no style does).
pub(crate) fn parse_object(body: &str) -> Option<(Map<String, Value>, Option<JsonStyle>)> {
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(body) {
        let v = Value::Object(map);
        let style = JsonStyle::detect(&v, body, JSON_STYLES);
        let Value::Object(map) = v else { return None };
        return Some((map, style));
    }
    match python::parse(body) {
        Some(v @ Value::Object(_)) => {
            let style = JsonStyle::detect(&v, body, &[JsonStyle::Python]);
            let Value::Object(map) = v else { return None };
            Some((map, style))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn styles_write_like_python_and_serde() {
        let v = json!({"a": [1, 2.5, null, true], "é": "x\"y\n\u{1F600}"});
        assert_eq!(
            JsonStyle::Spaced.render(&v),
            "{\"a\": [1, 2.5, null, true], \"é\": \"x\\\"y\\n\u{1F600}\"}"
        );
        assert_eq!(
            JsonStyle::SpacedAscii.render(&v),
            "{\"a\": [1, 2.5, null, true], \"\\u00e9\": \"x\\\"y\\n\\ud83d\\ude00\"}"
        );
        assert_eq!(JsonStyle::Compact.render(&v), serde_json::to_string(&v).unwrap());
        assert_eq!(
            JsonStyle::Python.render(&json!({"k": "it's", "n": null})),
            "{'k': \"it's\", 'n': None}"
        );
        for (serde, python) in [
            ("1e-7", "1e-07"),
            ("1e16", "1e+16"),
            ("100.0", "100.0"),
            ("0.0001", "0.0001"),
            ("1.5e300", "1.5e+300"),
            ("-2.5", "-2.5"),
            ("1e15", "1000000000000000.0"),
            ("0.0", "0.0"),
            ("123.456", "123.456"),
        ] {
            assert_eq!(python_float(serde), python, "{serde}");
        }
    }
}
