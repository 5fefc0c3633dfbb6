//! Secrets: find credentials in text and mask them.
//!
//! Compacted transcripts become training data and shared reports; a key that
//! an agent printed once must not be copied into every summary after it. Two
//! uses: `--redact` masks every secret in everything written (applied to the
//! serialized output, so unknown fields are covered too), and summaries and
//! anchor indexes never quote a secret even without it.
//!
//! Kinds: provider API keys (`sk-`, `sk-ant-`, GitHub `gh[pousr]_` and
//! `github_pat_`, AWS `AKIA`/`ASIA`, Slack `xox[abprs]-`, Google `AIza`),
//! bearer tokens, JWTs, private-key blocks, and `password=` style
//! assignments (the value only). A match becomes `[REDACTED:kind]`, which
//! contains no quote or backslash, so redacting serialized JSON keeps it valid.

use regex::{Regex, RegexSet};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

/// (kind, pattern, capture group to mask: 0 = the whole match).
const PATTERNS: &[(&str, &str, usize)] = &[
    (
        "private_key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        0,
    ),
    ("anthropic_key", r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}", 0),
    ("openai_key", r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", 0),
    ("github_token", r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})", 0),
    ("aws_key", r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)", 0),
    ("slack_token", r"(?-u:\b)xox[abprs]-[A-Za-z0-9\-]{10,}", 0),
    ("google_key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}", 0),
    ("jwt", r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0),
    ("bearer_token", r"(?i)(?-u:\b)bearer\s+([A-Za-z0-9._~+/\-]{16,}=*)", 1),
    (
        "password",
        r#"(?i)(?-u:\b)(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)(?-u:\b)["']?\s*[:=]\s*["']?([^\s"',;`\\]{4,})"#,
        1,
    ),
];

struct Compiled {
    set: RegexSet,
    each: Vec<(&'static str, Regex, usize)>,
}

static COMPILED: LazyLock<Option<Compiled>> = LazyLock::new(|| {
    let set = RegexSet::new(PATTERNS.iter().map(|p| p.1)).ok()?;
    let each = PATTERNS
        .iter()
        .map(|(k, p, g)| Regex::new(p).ok().map(|r| (*k, r, *g)))
        .collect::<Option<Vec<_>>>()?;
    Some(Compiled { set, each })
});

/// Counts of what was masked, by kind.
pub type Masked = BTreeMap<&'static str, u64>;

/// Returns true if and only if `text` holds something that looks like a secret.
pub fn contains_secret(text: &str) -> bool {
    COMPILED.as_ref().is_some_and(|c| c.set.is_match(text))
}

/// Masks every secret in `text`, adding to `masked`. Borrows when there is none.
pub fn redact<'a>(text: &'a str, masked: &mut Masked) -> Cow<'a, str> {
    mask_each(text, masked, |_, _, found, mask| Some((found, mask.to_string())))
}

/// [`redact`] of a JSON text, which stays valid JSON: a mask lands only inside
/// a string. `redact` masks text as text, so an assignment whose value is not
/// a string (`"api_key":null`, `"password":1234`) would lose its literal to a
/// bare `[REDACTED:password]`, and a match begun in one string and ended in
/// another would eat the quotes between them. Here a match inside one string
/// is masked as `redact` masks it; a value outside every string is a JSON
/// literal: a number becomes the mask as a string, `null`, `true` and `false`
/// hold no secret and stay; a match that runs past its string's end is masked
/// up to that end. Counted in `masked` only where something was masked.
pub fn redact_json<'a>(text: &'a str, masked: &mut Masked) -> Cow<'a, str> {
    mask_each(text, masked, |text, strings, found, mask| match strings.containing(found.start) {
        Some(inside) => Some((found.start..found.end.min(inside.end), mask.to_string())),
        None => {
            let rest = &text[found.start..];
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
                .unwrap_or(rest.len());
            serde_json::from_str::<serde_json::Number>(&rest[..len])
                .is_ok()
                .then(|| (found.start..found.start + len, format!("\"{mask}\"")))
        }
    })
}

/// Masks the secrets of `text` pattern by pattern: `place` is given the text as
/// masked so far, its strings, each match (the part a pattern masks) and its
/// mask, and says what to write where, if anything. Borrows when no pattern
/// matches.
fn mask_each<'a>(
    text: &'a str,
    masked: &mut Masked,
    mut place: impl FnMut(&str, &JsonStrings, Range<usize>, &str) -> Option<(Range<usize>, String)>,
) -> Cow<'a, str> {
    let Some(c) = COMPILED.as_ref() else { return Cow::Borrowed(text) };
    let hits = c.set.matches(text);
    if !hits.matched_any() {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for i in hits.iter() {
        let (kind, re, group) = &c.each[i];
        let mask = format!("[REDACTED:{kind}]");
        let strings = JsonStrings::of(&out);
        let edits: Vec<(Range<usize>, String)> = re
            .captures_iter(&out)
            .filter_map(|caps| caps.get(*group).or_else(|| caps.get(0)))
            .filter_map(|found| place(&out, &strings, found.range(), &mask))
            .collect();
        if edits.is_empty() {
            continue;
        }
        *masked.entry(kind).or_insert(0) += edits.len() as u64;
        let mut next = String::with_capacity(out.len());
        let mut from = 0;
        for (span, with) in edits {
            next.push_str(&out[from..span.start]);
            next.push_str(&with);
            from = span.end;
        }
        next.push_str(&out[from..]);
        out = next;
    }
    Cow::Owned(out)
}

/// The contents of the strings of a JSON text (between their quotes, escapes
/// included), in order. Outside a valid JSON text it still splits at every
/// quote no backslash escapes.
struct JsonStrings(Vec<Range<usize>>);

impl JsonStrings {
    fn of(text: &str) -> JsonStrings {
        let b = text.as_bytes();
        let mut spans = Vec::new();
        let mut i = 0;
        while let Some(k) = memchr::memchr(b'"', &b[i..]) {
            let start = i + k + 1;
            let mut j = start;
            loop {
                match memchr::memchr2(b'"', b'\\', &b[j..]) {
                    Some(k) if b[j + k] == b'\\' => j = (j + k + 2).min(b.len()),
                    Some(k) => {
                        spans.push(start..j + k);
                        i = j + k + 1;
                        break;
                    }
                    None => {
                        spans.push(start..b.len());
                        return JsonStrings(spans);
                    }
                }
            }
        }
        JsonStrings(spans)
    }

    /// The string whose content holds byte `at`, if any.
    fn containing(&self, at: usize) -> Option<Range<usize>> {
        let k = self.0.partition_point(|r| r.end <= at);
        self.0.get(k).filter(|r| r.start <= at).cloned()
    }
}

/// Bytes of a stream read and masked at a time by [`redact_stream`].
const STREAM_WINDOW_BYTES: usize = 4 << 20;

/// How far back from a window's end [`redact_stream`] looks for a secret that
/// crosses it. A secret up to this long is masked wherever it falls; the
/// patterns' secrets (keys, tokens, private-key blocks) are far shorter.
const STREAM_OVERLAP_BYTES: usize = 64 << 10;

/// [`redact`] over a stream too long to hold in memory (a rejected record over
/// `--max-record-bytes`), written to `to`: the text is masked a window at a
/// time, and each window ends before any secret that would cross its end, so
/// that the secret is masked whole with the next one. Invalid UTF-8 becomes
/// U+FFFD, as in [`redact`]'s callers.
pub fn redact_stream(
    from: &mut dyn std::io::Read,
    to: &mut dyn std::io::Write,
    masked: &mut Masked,
) -> std::io::Result<()> {
    use std::io::Read;
    let mut text = String::new();
    let mut bytes = Vec::with_capacity(STREAM_WINDOW_BYTES);
    loop {
        let room = STREAM_WINDOW_BYTES.saturating_sub(bytes.len()) as u64;
        let read = from.take(room).read_to_end(&mut bytes)?;
        let end = read == 0;
        // A character cut by the window waits for the rest of its bytes.
        let whole = if end { bytes.len() } else { complete_utf8_prefix(&bytes) };
        text.push_str(&String::from_utf8_lossy(&bytes[..whole]));
        bytes.drain(..whole);
        let cut = if end { text.len() } else { uncrossed_cut(&text) };
        to.write_all(redact(&text[..cut], masked).as_bytes())?;
        text.drain(..cut);
        if end {
            return Ok(());
        }
    }
}

/// The length of `bytes` without a last UTF-8 sequence that is still incomplete.
fn complete_utf8_prefix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let i = bytes.len() - back;
        let lead = bytes[i];
        if lead & 0xC0 != 0x80 {
            let needs = match lead {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if back < needs { i } else { bytes.len() };
        }
    }
    bytes.len()
}

/// Where to end a window of `text` in [`redact_stream`]: [`STREAM_OVERLAP_BYTES`]
/// before its end, moved back before any secret that crosses that point.
fn uncrossed_cut(text: &str) -> usize {
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut cut = floor(text.len().saturating_sub(STREAM_OVERLAP_BYTES));
    let Some(c) = COMPILED.as_ref() else { return cut };
    let from = floor(cut.saturating_sub(STREAM_OVERLAP_BYTES));
    loop {
        let before = cut;
        for (_, re, _) in &c.each {
            for m in re.find_iter(&text[from..]) {
                let (s, e) = (from + m.start(), from + m.end());
                if s < cut && cut < e {
                    cut = s;
                }
            }
        }
        if cut == before {
            return cut;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_text_is_masked_like_a_held_one_even_across_windows() {
        // The first window ends STREAM_OVERLAP_BYTES before STREAM_WINDOW_BYTES
        // (ASCII input): put each secret across that point, at several offsets,
        // and a multi-byte character across the window's last byte.
        let first_cut = STREAM_WINDOW_BYTES - STREAM_OVERLAP_BYTES;
        let secrets = [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
            "-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE KEY-----",
            "password=hunter2x",
        ];
        for secret in secrets {
            for before in [1, 5, secret.len() / 2, secret.len() - 1] {
                let mut text = " ".repeat(first_cut - before);
                text.push_str(secret);
                text.push(' ');
                while text.len() < STREAM_WINDOW_BYTES - 1 {
                    text.push_str("filler ");
                }
                text.truncate(STREAM_WINDOW_BYTES - 1);
                text.push_str("é😀 and more text ");
                text.push_str(&"tail ".repeat(STREAM_WINDOW_BYTES / 5));
                let mut held = Masked::new();
                let want = redact(&text, &mut held).into_owned();
                assert_eq!(held.values().sum::<u64>(), 1, "{secret}");
                let mut streamed = Masked::new();
                let mut out = Vec::new();
                redact_stream(&mut text.as_bytes(), &mut out, &mut streamed).unwrap();
                assert!(String::from_utf8(out).unwrap() == want, "{secret} at -{before}");
                assert_eq!(streamed, held, "{secret} at -{before}");
            }
        }
    }

    /// What `mask` makes of `t`, and what it counted.
    fn masked_by(
        mask: for<'a> fn(&'a str, &mut Masked) -> Cow<'a, str>,
        t: &str,
    ) -> (String, Masked) {
        let mut m = Masked::new();
        let out = mask(t, &mut m).into_owned();
        (out, m)
    }

    fn red(t: &str) -> (String, Masked) {
        masked_by(redact, t)
    }

    #[test]
    fn provider_keys() {
        let cases = [
            ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "anthropic_key"),
            ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "openai_key"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "github_token"),
            ("aws AKIAIOSFODNN7EXAMPLE here", "aws_key"),
            ("slack xoxb-1234567890-abcdefghij", "slack_token"),
            ("google AIzaSyA-abcdefghijklmnopqrstuvwxyz012345", "google_key"),
        ];
        for (text, kind) in cases {
            let (out, m) = red(text);
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{text} -> {out}");
            assert_eq!(m.get(kind), Some(&1), "{text}: {m:?}");
        }
    }

    #[test]
    fn bearer_jwt_private_key_and_passwords() {
        let (out, m) = red("Authorization: Bearer abcdefghijklmnop1234567890");
        assert_eq!(out, "Authorization: Bearer [REDACTED:bearer_token]");
        assert_eq!(m["bearer_token"], 1);
        let (out, _) = red(
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        );
        assert_eq!(out, "jwt [REDACTED:jwt]");
        let (out, _) = red(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter",
        );
        assert_eq!(out, "[REDACTED:private_key]\nafter");
        let (out, m) =
            red("db password=hunter2x and api_key: 'abcd1234' and \"secret\": \"s3cr3t!\"");
        assert_eq!(
            out,
            "db password=[REDACTED:password] and api_key: '[REDACTED:password]' and \"secret\": \"[REDACTED:password]\""
        );
        assert_eq!(m["password"], 3);
    }

    #[test]
    fn plain_text_is_borrowed_and_untouched() {
        let mut m = Masked::new();
        let t = "cargo test -p auth; the password field is validated in src/auth.rs (sk is short)";
        assert!(matches!(redact(t, &mut m), Cow::Borrowed(_)));
        assert!(m.is_empty());
        assert!(!contains_secret(t));
    }

    fn red_json(t: &str) -> (String, Masked) {
        masked_by(redact_json, t)
    }

    /// Found on SWE-agent's `"api_key": null`: `redact` made it a bare
    /// `[REDACTED:password]`, and the document writer failed on the line.
    #[test]
    fn a_value_that_is_not_a_string_stays_a_json_literal() {
        let (out, m) = red_json(r#"{"api_key":null,"api_version":null}"#);
        assert_eq!(out, r#"{"api_key":null,"api_version":null}"#);
        assert!(m.is_empty());
        let (out, m) = red_json(r#"{"password":123456,"secret":true}"#);
        assert_eq!(out, r#"{"password":"[REDACTED:password]","secret":true}"#);
        assert_eq!(m["password"], 1);
        // As text, the same line is masked out of JSON (why the outputs use redact_json).
        let (out, _) = red(r#"{"api_key":null}"#);
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_err());
    }

    #[test]
    fn a_match_past_its_string_is_masked_to_the_string_end() {
        let text =
            r#"["-----BEGIN RSA PRIVATE KEY-----\nMIIEow","x -----END RSA PRIVATE KEY-----"]"#;
        let (out, m) = red_json(text);
        assert_eq!(out, r#"["[REDACTED:private_key]","x -----END RSA PRIVATE KEY-----"]"#);
        assert_eq!(m["private_key"], 1);
    }

    #[test]
    fn inside_strings_json_masking_is_text_masking() {
        let v = serde_json::json!({"cmd": "export TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
            "password": "hunter2x", "note": "db password=hunter2x; Bearer abcdefghijklmnop1234567890"});
        let text = v.to_string();
        assert_eq!(red_json(&text), red(&text));
    }

    proptest::proptest! {
        /// Whatever secrets a JSON text holds, and wherever: masked, it is JSON.
        #[test]
        fn masked_json_is_json(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "password", "api_key", "secret", ": ", "=", "\"", "'", "null", "1234", "true",
                "hunter2x", "sk-proj-abcdefghijklmnopqrstuvwxyz01", "Bearer abcdefghijklmnop1234",
                "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "\n", " ", ",",
            ]), 0..12),
            shape in 0..3usize,
        ) {
            let s: String = pieces.concat();
            let v = match shape {
                0 => serde_json::json!({"password": s, "api_key": null, "secret": 1234}),
                1 => serde_json::json!([s, {"k": &s}, s.len()]),
                _ => serde_json::json!({ s.clone(): s }),
            };
            for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
                let (out, _) = red_json(&text);
                proptest::prop_assert!(
                    serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{} -> {}", text, out
                );
            }
        }
    }

    #[test]
    fn redacted_json_stays_valid() {
        let v = serde_json::json!({"cmd": "export TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "password": "hunter2x"});
        let text = v.to_string();
        let mut m = Masked::new();
        let out = redact(&text, &mut m);
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back["password"], "[REDACTED:password]");
        assert!(back["cmd"].as_str().unwrap().ends_with("[REDACTED:github_token]"));
    }
}
