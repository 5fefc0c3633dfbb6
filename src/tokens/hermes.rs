//! The reference agent's token estimate, reproduced so that numbers compare.
//!
//! Dense scripts (CJK ideographs, Hangul, Kana, full-width forms) cost one token
//! per code point; everything else costs ceil(UTF-8 bytes / 4). For ASCII that
//! is ceil(chars / 4). The ranges are the reference's own.

/// Returns true if and only if code point `c` is in one of the reference's dense ranges.
fn is_dense(c: u32) -> bool {
    matches!(c,
        0x1100..=0x11ff
        | 0x2e80..=0x9fff
        | 0xa960..=0xa97f
        | 0xac00..=0xd7af
        | 0xf900..=0xfaff
        | 0xff00..=0xffef)
}

/// Counts what the estimate needs of UTF-8 texts: their bytes and their
/// dense code points. Every dense range lies in U+0800..U+FFFF, so a dense
/// character is always a three-byte sequence: only lead bytes `0xE0..=0xEF`
/// need decoding, every other byte is just counted (no `char` iteration).
#[derive(Default)]
struct Tally {
    bytes: u64,
    dense: u64,
}

impl Tally {
    fn feed(&mut self, text: &str) {
        self.bytes += text.len() as u64;
        if text.is_ascii() {
            return;
        }
        let b = text.as_bytes();
        for (i, &lead) in b.iter().enumerate() {
            // A whole `str`: a three-byte lead has its two continuation bytes.
            if lead & 0xf0 == 0xe0
                && let Some(&[c1, c2]) = b.get(i + 1..i + 3)
            {
                let cp =
                    u32::from(lead & 0x0f) << 12 | u32::from(c1 & 0x3f) << 6 | u32::from(c2 & 0x3f);
                self.dense += u64::from(is_dense(cp));
            }
        }
    }

    fn estimate(&self) -> u64 {
        // Dense code points cost one token each; every other byte a quarter.
        self.dense + (self.bytes - 3 * self.dense).div_ceil(4)
    }
}

/// Estimated tokens of `text`.
pub(crate) fn estimate(text: &str) -> u64 {
    let mut t = Tally::default();
    t.feed(text);
    t.estimate()
}

/// Estimated tokens of `value` serialized as compact JSON: the same as
/// `estimate(&value.to_string())`, without building the string (`report` and
/// `replay` measure every non-text part and the tool schemas at each
/// compaction). Nor is it written: the length of serde_json's text follows
/// from the tree (its punctuation, each string's escapes), and escapes are
/// ASCII, so a string's dense code points are those of its own text.
pub(crate) fn estimate_json(value: &serde_json::Value) -> u64 {
    let mut t = Tally::default();
    tally_json(value, &mut t);
    t.estimate()
}

fn tally_json(value: &serde_json::Value, t: &mut Tally) {
    use serde_json::Value;
    match value {
        Value::Null => t.bytes += 4,
        Value::Bool(b) => t.bytes += if *b { 4 } else { 5 },
        // Numbers are rare in parts and schemas: written, not derived.
        Value::Number(n) => t.feed(&n.to_string()),
        Value::String(s) => tally_str(s, t),
        Value::Array(items) => {
            // Brackets and the commas between items.
            t.bytes += 2 + items.len().saturating_sub(1) as u64;
            items.iter().for_each(|v| tally_json(v, t));
        }
        Value::Object(map) => {
            // Braces, a colon per entry, the commas between entries.
            t.bytes += 2 + map.len() as u64 + map.len().saturating_sub(1) as u64;
            for (k, v) in map {
                tally_str(k, t);
                tally_json(v, t);
            }
        }
    }
}

/// Bytes serde_json adds to a byte of a string when it writes it: `\"`, `\\`
/// and the short escapes of `\b \f \n \r \t` one, the other control
/// characters five (`\u00XX`), every other byte none.
const ESCAPE_EXTRA: [u8; 256] = {
    let mut extra = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        extra[b] = 5;
        b += 1;
    }
    extra[0x08] = 1;
    extra[0x09] = 1;
    extra[0x0a] = 1;
    extra[0x0c] = 1;
    extra[0x0d] = 1;
    extra[b'"' as usize] = 1;
    extra[b'\\' as usize] = 1;
    extra
};

/// A string as serde_json writes it: quotes, text, escapes.
fn tally_str(s: &str, t: &mut Tally) {
    let escapes: u64 = s.bytes().map(|b| u64::from(ESCAPE_EXTRA[usize::from(b)])).sum();
    t.bytes += 2 + escapes;
    t.feed(s);
}

#[cfg(test)]
mod tests {
    use super::{estimate, estimate_json};

    /// The reference's rule, char by char: what the byte-level tally must equal.
    fn by_chars(text: &str) -> u64 {
        let dense = |c: char| {
            matches!(c,
                '\u{1100}'..='\u{11ff}'
                | '\u{2e80}'..='\u{9fff}'
                | '\u{a960}'..='\u{a97f}'
                | '\u{ac00}'..='\u{d7af}'
                | '\u{f900}'..='\u{faff}'
                | '\u{ff00}'..='\u{ffef}')
        };
        let n = text.chars().filter(|c| dense(*c)).count() as u64;
        let rest: usize = text.chars().filter(|c| !dense(*c)).map(char::len_utf8).sum();
        n + (rest as u64).div_ceil(4)
    }

    #[test]
    fn the_byte_tally_equals_the_char_rule_at_every_range_edge() {
        // Both sides of every range bound, other three-byte characters (U+0800,
        // U+2014, U+FFFF), two- and four-byte ones.
        let edges = [
            0x10ff, 0x1100, 0x11ff, 0x1200, 0x2e7f, 0x2e80, 0x9fff, 0xa000, 0xa95f, 0xa960, 0xa97f,
            0xa980, 0xabff, 0xac00, 0xd7af, 0xd7b0, 0xf8ff, 0xf900, 0xfaff, 0xfb00, 0xfeff, 0xff00,
            0xffef, 0xfff0, 0xffff, 0x0800, 0x2014, 0x00e9, 0x1f642,
        ];
        for cp in edges {
            let c = char::from_u32(cp).unwrap_or('?');
            for text in [c.to_string(), format!("ab{c}cd{c}{c}"), format!("{c}x")] {
                assert_eq!(estimate(&text), by_chars(&text), "U+{cp:04X} in {text:?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn the_byte_tally_equals_the_char_rule(text in "\\PC{0,40}") {
            proptest::prop_assert_eq!(estimate(&text), by_chars(&text));
        }

        #[test]
        fn json_is_estimated_as_its_serialization(
            keys in proptest::collection::vec("(\\PC|[\\x00-\\x1f\\x7f\"\\\\]){0,8}", 0..4),
            text in "(\\PC|[\\x00-\\x1f\\x7f\"\\\\]){0,30}",
            n in proptest::num::i64::ANY,
            f in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        ) {
            let mut map = serde_json::Map::new();
            for k in keys {
                let v = serde_json::json!([text.clone(), n, f, null, true, false, [], {}, [[1]], {"q": "a\"b\\c\n"}]);
                map.insert(k, v);
            }
            let v = serde_json::Value::Object(map);
            proptest::prop_assert_eq!(estimate_json(&v), estimate(&v.to_string()));
        }
    }

    /// Every ASCII byte, alone and between letters (serde_json escapes some
    /// with two bytes, some with six, the rest not at all), and a key.
    #[test]
    fn each_ascii_byte_is_estimated_as_serde_json_writes_it() {
        for b in 0..128u8 {
            let c = char::from(b);
            for s in [c.to_string(), format!("ab{c}c"), format!("{c}{c}{c}")] {
                let v = serde_json::json!({ s.clone(): [s.clone()] });
                assert_eq!(estimate_json(&v), estimate(&v.to_string()), "byte {b:#04x}");
            }
        }
    }

    /// Each text is estimated at its count.
    fn assert_estimates(cases: &[(&str, u64)]) {
        for &(text, tokens) in cases {
            assert_eq!(estimate(text), tokens, "{text:?}");
        }
    }

    #[test]
    fn ascii_is_chars_over_four_rounded_up() {
        assert_estimates(&[("", 0), ("a", 1), ("abcd", 1), ("abcde", 2)]);
    }

    #[test]
    fn cjk_counts_one_per_code_point() {
        assert_estimates(&[
            ("你好世界", 4),
            ("안녕", 2),
            ("カタカナ", 4),
            // 4 dense + "ab" (2 bytes -> 1 token)
            ("ab你好世界", 5),
        ]);
    }

    #[test]
    fn other_scripts_count_utf8_bytes() {
        assert_estimates(&[
            // "é" is 2 bytes, 4 of them are 8 bytes -> 2 tokens.
            ("éééé", 2),
            // An emoji is 4 bytes -> 1 token.
            ("🙂", 1),
        ]);
    }
}
