//! What a file that is no transcript is: binary data, text that is not JSON,
//! JSON without messages, or one of compactor's own report files.
//!
//! What: [`sniff`] names the kind of a file whose dialect could not be
//! detected and whose first record is not even a malformed session (a record
//! with `messages` or `conversations` is a session with a problem, reported
//! as such by the reader).
//!
//! Why: a directory walk meets files that are not transcripts (a project's
//! `package.json`, our own `summary.json` or a report's `sessions.jsonl`, a
//! binary named `.json`). The reader skips those with one counted note
//! instead of failing the run with "cannot tell the format ... pass --from",
//! which no `--from` helps; a file named on the command line that is not a
//! transcript is still an error, now saying what the file is (issue 41).
//!
//! Example: `{"name": "x", "version": "1.0.0"}` is
//! `JSON without messages (keys: name, version)`.
//!
//! Invariants: reads at most [`SNIFF_BYTES`] of the file (decompressed), only
//! when the records read for detection do not already show its bytes; a
//! standard-input stream is never read again.

use crate::io::{Input, Payload, RawRecord, ReadError};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::io::Read;

/// Bytes of a file looked at to tell binary data from text.
pub const SNIFF_BYTES: usize = 4096;
/// The first bytes of a Parquet file (`PAR1`).
const PARQUET_MAGIC: &[u8] = b"PAR1";
/// Keys of a JSON object named in the description.
const KEYS_NAMED: usize = 6;

/// What a file that is no transcript is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotTranscript {
    /// A NUL byte or invalid UTF-8 in its first bytes.
    Binary,
    /// Text whose first record does not parse as JSON.
    NotJson,
    /// One of our own report files (`summary.json`, report rows, `shard.json`).
    Report(&'static str),
    /// JSON whose records hold no messages: its first object's keys.
    JsonWithoutMessages(Vec<String>),
    /// A JSON array whose items are not all sessions: its first item's keys.
    ArrayNotOfSessions(Vec<String>),
}

impl fmt::Display for NotTranscript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotTranscript::Binary => write!(f, "binary data, not text"),
            NotTranscript::NotJson => write!(f, "text that is not JSON"),
            NotTranscript::Report(what) => write!(f, "{what}, not a transcript"),
            NotTranscript::JsonWithoutMessages(keys) if keys.is_empty() => {
                write!(f, "JSON without messages")
            }
            NotTranscript::JsonWithoutMessages(keys) => {
                write!(f, "JSON without messages (keys: {})", keys.join(", "))
            }
            NotTranscript::ArrayNotOfSessions(keys) => write!(
                f,
                "a JSON array whose items are not all sessions (the first one's keys: {})",
                keys.join(", ")
            ),
        }
    }
}

/// What the file of `input` is, given the records read for detection
/// (`head`) and the read error that stopped them, if any. `None` when it
/// may be a transcript with a problem (a read error on text that parses).
pub fn sniff(
    input: &Input,
    head: &VecDeque<RawRecord>,
    failure: Option<&ReadError>,
) -> Option<NotTranscript> {
    let first_bytes = match head.front().map(|r| &r.payload) {
        Some(Payload::Line(bytes) | Payload::Parsed { line: bytes, .. }) => Some(bytes.clone()),
        // A record too long to hold: the file's first bytes are read instead.
        Some(Payload::Value(_) | Payload::Document { .. } | Payload::Oversized(_)) => None,
        None => failure.map(|e| e.raw.clone()).filter(|raw| !raw.is_empty()),
    };
    let bytes = match first_bytes {
        Some(b) => b,
        None => start_of(input).unwrap_or_default(),
    };
    // A Parquet file is binary by design: its reader's error says what is wrong.
    if bytes.starts_with(PARQUET_MAGIC) {
        return None;
    }
    if is_binary(&bytes) {
        return Some(NotTranscript::Binary);
    }
    if failure.is_some() && head.is_empty() {
        // Text that could not be read as records: JSON cut short or broken is
        // a transcript with a problem; text that does not open like JSON is not one.
        let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
        return match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{' | b'[') | None => None,
            Some(_) => Some(NotTranscript::NotJson),
        };
    }
    let value = match head.front().map(|r| &r.payload) {
        Some(
            Payload::Value(v)
            | Payload::Document { value: v, .. }
            | Payload::Parsed { value: v, .. },
        ) if !v.is_null() => v.clone(),
        Some(Payload::Line(bytes) | Payload::Parsed { line: bytes, .. }) => {
            match serde_json::from_slice::<Value>(bytes) {
                Ok(v) => v,
                Err(_) => return Some(NotTranscript::NotJson),
            }
        }
        _ => return None,
    };
    let object = match &value {
        Value::Object(o) => o,
        Value::Array(items) => match items.first() {
            Some(Value::Object(o)) if o.contains_key("messages") => {
                return Some(NotTranscript::ArrayNotOfSessions(named_keys(o)));
            }
            Some(Value::Object(o)) => o,
            _ => return Some(NotTranscript::JsonWithoutMessages(Vec::new())),
        },
        _ => return Some(NotTranscript::JsonWithoutMessages(Vec::new())),
    };
    let has = |keys: &[&str]| keys.iter().all(|k| object.contains_key(*k));
    if has(&["counter", "window", "threshold", "modes", "by_format"]) {
        return Some(NotTranscript::Report("a compactor report's summary.json"));
    }
    if has(&["shard", "sessions_total", "charted"]) {
        return Some(NotTranscript::Report("a compactor report's shard.json"));
    }
    if has(&["source", "mode", "reason", "tokens_before", "tokens_after"]) {
        return Some(NotTranscript::Report(
            "compactor report rows (a report's sessions.jsonl, or compact --report lines)",
        ));
    }
    if has(&["source", "mode", "trigger", "calls", "billed_original"]) {
        return Some(NotTranscript::Report("compactor replay --report lines"));
    }
    if has(&["source", "mode", "call", "tokens_original"]) {
        return Some(NotTranscript::Report("compactor replay --calls lines"));
    }
    Some(NotTranscript::JsonWithoutMessages(named_keys(object)))
}

/// The first [`KEYS_NAMED`] keys of `object`, then `...` if there are more.
fn named_keys(object: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = object.keys().take(KEYS_NAMED).cloned().collect();
    if object.len() > KEYS_NAMED {
        keys.push("...".into());
    }
    keys
}

/// The first [`SNIFF_BYTES`] of `input`'s file (decompressed), if it can be
/// opened again (never standard input).
fn start_of(input: &Input) -> Option<Vec<u8>> {
    input.path.as_ref()?;
    let mut buf = Vec::with_capacity(SNIFF_BYTES);
    crate::io::open(input).ok()?.take(SNIFF_BYTES as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Binary: a NUL byte, or bytes that are not UTF-8 (a multi-byte character
/// cut at the end of the sample is still text).
fn is_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if sample.contains(&0) {
        return true;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Source;

    fn input(path: Option<std::path::PathBuf>) -> Input {
        Input { path, display: "f".into(), relative: "f".into(), walked: true }
    }

    fn line(text: &[u8]) -> VecDeque<RawRecord> {
        let source = Source { path: "f".into(), line: Some(1), index: None };
        VecDeque::from([RawRecord { source, payload: Payload::Line(text.to_vec()) }])
    }

    fn value(v: Value) -> VecDeque<RawRecord> {
        let source = Source { path: "f".into(), line: None, index: Some(0) };
        VecDeque::from([RawRecord { source, payload: Payload::Value(v) }])
    }

    #[test]
    fn each_kind_is_named() {
        let i = input(None);
        let s = |h: &VecDeque<RawRecord>| sniff(&i, h, None).map(|k| k.to_string());
        assert_eq!(s(&line(b"\x7fELF\x02\x01\x01\0\0")).as_deref(), Some("binary data, not text"));
        assert_eq!(s(&line(b"\xff\xfe{")).as_deref(), Some("binary data, not text"));
        assert_eq!(s(&line(b"hello: world")).as_deref(), Some("text that is not JSON"));
        let pkg = serde_json::json!({"name": "x", "version": "1.0.0", "dependencies": {}});
        assert_eq!(
            s(&value(pkg)).as_deref(),
            Some("JSON without messages (keys: name, version, dependencies)")
        );
        let summary = serde_json::json!({"counter": "o200k", "window": 1, "threshold": 1,
            "sessions": 1, "modes": {}, "by_format": {}});
        assert_eq!(
            s(&value(summary)).as_deref(),
            Some("a compactor report's summary.json, not a transcript")
        );
        let row = br#"{"source":"a:1","id":"x","format":"openai","mode":"lean","tier":"none","reason":"under_trigger","tokens_before":1,"tokens_after":1}"#;
        assert!(s(&line(row)).unwrap().starts_with("compactor report rows"));
        assert_eq!(s(&value(serde_json::json!([1, 2]))).as_deref(), Some("JSON without messages"));
        let mixed = serde_json::json!([{"id": "a", "messages": []}, {"id": "b"}]);
        assert_eq!(
            s(&value(mixed)).as_deref(),
            Some(
                "a JSON array whose items are not all sessions (the first one's keys: id, messages)"
            )
        );
    }

    #[test]
    fn a_cut_multibyte_character_is_still_text_and_a_read_error_on_text_is_no_kind() {
        assert!(!is_binary("é".repeat(SNIFF_BYTES).as_bytes()));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("broken.json");
        std::fs::write(&p, "{\"messages\": [").unwrap();
        let err = ReadError {
            source: Source { path: "f".into(), line: None, index: None },
            message: "EOF".into(),
            raw: Vec::new(),
        };
        assert_eq!(sniff(&input(Some(p.clone())), &VecDeque::new(), Some(&err)), None);
        std::fs::write(&p, "# Notes\nnot JSON").unwrap();
        assert_eq!(
            sniff(&input(Some(p.clone())), &VecDeque::new(), Some(&err)),
            Some(NotTranscript::NotJson)
        );
        std::fs::write(&p, b"\x7fELF\0\0\0").unwrap();
        assert_eq!(
            sniff(&input(Some(p.clone())), &VecDeque::new(), Some(&err)),
            Some(NotTranscript::Binary),
            "a binary is read from disk when the records do not show its bytes"
        );
        // A Parquet file that cannot be read keeps its reader's error.
        std::fs::write(&p, b"PAR1\0\0\0garbage").unwrap();
        assert_eq!(sniff(&input(Some(p)), &VecDeque::new(), Some(&err)), None);
    }
}
