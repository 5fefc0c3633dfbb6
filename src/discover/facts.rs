//! What a session's own log says about it: the model that answered, the
//! project it ran in and the day it started. `stats --by` groups by them and
//! `--model auto` takes each session's window from its model.
//!
//! ## Where each comes from
//! - model: the first of, in message order, a Claude Code assistant event's
//!   `message.model` (not `<synthetic>`, which Claude Code writes for its own
//!   notices), a Codex `turn_context` line's `payload.model`, a message's own
//!   `model` key; else the session's top-level `model` (OpenAI-style records).
//! - project: Claude Code's `cwd` (on every event), a Codex `session_meta`
//!   line's `payload.cwd`, else the first `turn_context`'s; else the session's
//!   top-level `cwd`.
//! - day: the first message timestamp (`YYYY-MM-DD`, in UTC: an offset such as
//!   `+03:00` is taken off first). A timestamp that does not start with a
//!   date is no day.
//!
//! What the log does not say is `None`; callers name it "(unknown)".
//!
//! Every passthrough field is read through [`crate::model::reads`]'s keys,
//! never by its string: the OpenAI kept path leaves exactly those parsed, so
//! the facts of a kept line are those of its whole parse.

use crate::formats::codex::session_meta_payload;
use crate::model::{MessageKey, RecordType, Session, SessionKey};
use serde_json::Value;

/// The model Claude Code names on the notices it writes itself.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// What a session's log says about it: everything this module reads, in one
/// value, so that a test can compare what two readings of a log give.
#[cfg(test)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub model: Option<String>,
    pub project: Option<String>,
    /// `YYYY-MM-DD`, UTC.
    pub day: Option<String>,
}

/// The facts of `session`.
#[cfg(test)]
pub fn of(session: &Session) -> Facts {
    Facts { model: model(session), project: project(session), day: day(session) }
}

/// A non-empty string at `v[key]`.
fn text<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v?.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// A non-empty string `v`.
fn non_empty(v: Option<&Value>) -> Option<&str> {
    v?.as_str().filter(|s| !s.is_empty())
}

/// Every passthrough record of the session, in order.
fn records(session: &Session) -> impl Iterator<Item = &Value> {
    session.messages.iter().flat_map(|m| m.attached.iter()).chain(session.trailing.iter())
}

/// The session's model; see the module docs.
pub fn model(session: &Session) -> Option<String> {
    for m in &session.messages {
        let claude = text(m.read(MessageKey::Envelope), "model").filter(|s| *s != SYNTHETIC_MODEL);
        if let Some(name) = claude.or_else(|| non_empty(m.read(MessageKey::Model))) {
            return Some(name.to_string());
        }
        let turn = m.attached.iter().filter(|r| RecordType::TurnContext.is(r));
        if let Some(name) = turn.filter_map(|r| text(r.get("payload"), "model")).next() {
            return Some(name.to_string());
        }
    }
    let codex_tail = session.trailing.iter().filter(|r| RecordType::TurnContext.is(r));
    codex_tail
        .filter_map(|r| text(r.get("payload"), "model"))
        .next()
        .or_else(|| non_empty(session.read(SessionKey::Model)))
        .map(str::to_string)
}

/// The session's project folder; see the module docs.
pub fn project(session: &Session) -> Option<String> {
    let from_meta = records(session).find_map(|r| {
        session_meta_payload(r).and_then(|p| p.get("cwd")?.as_str().filter(|s| !s.is_empty()))
    });
    let from_events = || session.messages.iter().find_map(|m| non_empty(m.read(MessageKey::Cwd)));
    let from_turns = || {
        records(session)
            .filter(|r| RecordType::TurnContext.is(r))
            .find_map(|r| text(r.get("payload"), "cwd"))
    };
    from_meta
        .or_else(from_events)
        .or_else(from_turns)
        .or_else(|| non_empty(session.read(SessionKey::Cwd)))
        .map(str::to_string)
}

/// The UTC day of the session's first timestamp; see the module docs.
pub fn day(session: &Session) -> Option<String> {
    let first = session.messages.iter().find_map(|m| {
        m.meta.timestamp.as_deref().or_else(|| m.read(MessageKey::Timestamp)?.as_str())
    })?;
    utc_day(first)
}

/// `YYYY-MM-DD` of an RFC 3339 timestamp, in UTC (`None` if it is not one).
fn utc_day(ts: &str) -> Option<String> {
    let b = ts.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = ts.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) { s.parse().ok() } else { None }
    };
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if !(1..=31).contains(&d) {
        return None;
    }
    // An offset after the time: `±HH:MM` at the end.
    let offset_minutes = match ts.len().checked_sub(6).and_then(|i| ts.get(i..)) {
        Some(tail) if ts.len() > 16 && (tail.starts_with('+') || tail.starts_with('-')) => {
            let (h, m) =
                (tail.get(1..3)?.parse::<i64>().ok()?, tail.get(4..6)?.parse::<i64>().ok()?);
            let sign = if tail.starts_with('-') { -1 } else { 1 };
            sign * (h * 60 + m)
        }
        _ => 0,
    };
    let mut days = days_from_civil(y, mo, d);
    if offset_minutes != 0 {
        let (h, m) = (digits(11..13)?, digits(14..16)?);
        days += (h * 60 + m - offset_minutes).div_euclid(24 * 60);
    }
    let (y, mo, d) = civil_from_days(days);
    Some(format!("{y:04}-{mo:02}-{d:02}"))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::openai::{self, KeptRecord};
    use crate::formats::{Format, Record};
    use crate::model::Source;
    use proptest::prelude::*;
    use serde_json::{Map, json};

    fn decode(format: Format, lines: Vec<Value>) -> Session {
        let records = lines
            .into_iter()
            .enumerate()
            .map(|(i, value)| Record {
                source: Source { path: "t.jsonl".into(), line: Some(i as u64 + 1), index: None },
                value,
            })
            .collect();
        match format.adapter().decode(records, crate::model::History::Full) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    /// Facts with all three known.
    fn known(model: &str, project: &str, day: &str) -> Facts {
        Facts {
            model: Some(model.to_string()),
            project: Some(project.to_string()),
            day: Some(day.to_string()),
        }
    }

    #[test]
    fn claude_code_model_cwd_and_day() {
        let s = decode(
            Format::ClaudeCode,
            vec![
                json!({"type": "user", "uuid": "u1", "parentUuid": null, "cwd": "/p/app",
                       "timestamp": "2026-04-01T23:30:00.000Z", "sessionId": "s",
                       "message": {"role": "user", "content": "hi"}}),
                json!({"type": "assistant", "uuid": "a0", "parentUuid": "u1", "cwd": "/p/app",
                       "timestamp": "2026-04-02T00:01:00.000Z", "sessionId": "s",
                       "message": {"model": "<synthetic>", "id": "m0", "role": "assistant",
                                   "content": [{"type": "text", "text": "notice"}]}}),
                json!({"type": "assistant", "uuid": "a1", "parentUuid": "a0", "cwd": "/p/app",
                       "timestamp": "2026-04-02T00:02:00.000Z", "sessionId": "s",
                       "message": {"model": "claude-opus-4-6", "id": "m1", "role": "assistant",
                                   "content": [{"type": "text", "text": "hello"}]}}),
            ],
        );
        assert_eq!(of(&s), known("claude-opus-4-6", "/p/app", "2026-04-01"));
    }

    #[test]
    fn codex_model_from_turn_context_and_cwd_from_session_meta() {
        let line = |ts: &str, ty: &str, payload: Value| json!({"timestamp": ts, "type": ty, "payload": payload});
        let s = decode(
            Format::Codex,
            vec![
                line(
                    "2026-03-27T16:57:05.929Z",
                    "session_meta",
                    json!({"id": "x", "cwd": "C:\\w\\fleet", "base_instructions": {"text": "be good"}}),
                ),
                line(
                    "2026-03-27T16:57:05.963Z",
                    "turn_context",
                    json!({"cwd": "C:\\other", "model": "gpt-5.3-codex"}),
                ),
                line(
                    "2026-03-27T16:57:06.000Z",
                    "response_item",
                    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
                ),
            ],
        );
        assert_eq!(of(&s), known("gpt-5.3-codex", "C:\\w\\fleet", "2026-03-27"));
    }

    #[test]
    fn a_log_without_the_fields_says_nothing() {
        let s =
            decode(Format::OpenAi, vec![json!({"messages": [{"role": "user", "content": "x"}]})]);
        assert_eq!(of(&s), Facts::default());
        let s = decode(
            Format::OpenAi,
            vec![json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]})],
        );
        assert_eq!(of(&s).model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn utc_day_takes_the_offset_off() {
        assert_eq!(utc_day("2026-03-31T01:30:00+03:00").as_deref(), Some("2026-03-30"));
        assert_eq!(utc_day("2026-12-31T22:30:00-02:00").as_deref(), Some("2027-01-01"));
        assert_eq!(utc_day("2024-03-01T00:10:00.123+00:30").as_deref(), Some("2024-02-29"));
        assert_eq!(utc_day("2026-03-31T01:30:00Z").as_deref(), Some("2026-03-31"));
        assert_eq!(utc_day("2026-03-31").as_deref(), Some("2026-03-31"));
        assert_eq!(utc_day("t0"), None);
        assert_eq!(utc_day("2026-13-01T00:00:00Z"), None);
    }

    /// A JSON value nested up to three levels, with keys readers look for
    /// (`model`, `type`, `payload`, `cwd`) among others.
    fn nested() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z_ ]{0,6}".prop_map(Value::from),
            Just(Value::from("turn_context")),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            let key = prop::sample::select(vec!["model", "type", "payload", "cwd", "k", "x y"]);
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((key, inner), 0..4).prop_map(|kvs| {
                    Value::Object(kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        })
    }

    /// A model name, the one Claude Code writes on its own notices, or none.
    fn a_model() -> impl Strategy<Value = Value> {
        prop::sample::select(vec!["claude-opus-4-6", "gpt-4o", "gpt-5.3-codex", "<synthetic>", ""])
            .prop_map(Value::from)
    }

    /// A carried record: a Codex turn context or session header, or anything
    /// else. (The Codex reader's wrapper holds U+FDD0: such a line is never kept.)
    fn a_record() -> impl Strategy<Value = Value> {
        let payload = (a_model(), "[a-z/]{0,5}", nested())
            .prop_map(|(model, cwd, other)| json!({"model": model, "cwd": cwd, "other": other}));
        prop_oneof![
            (prop::sample::select(vec!["turn_context", "session_meta", "event_msg"]), payload)
                .prop_map(|(ty, payload)| json!({"type": ty, "payload": payload})),
            nested(),
        ]
    }

    /// One OpenAI message: chat fields, the passthrough fields facts reads
    /// (Claude Code's `message` envelope, `model`, `cwd`, `timestamp`), fields
    /// nothing reads, and attached records.
    fn a_message() -> impl Strategy<Value = Value> {
        (
            prop::sample::select(vec!["user", "assistant", "tool"]),
            "[a-z ]{0,8}",
            prop::option::of((a_model(), nested())),
            prop::option::of(prop_oneof![a_model(), nested()]),
            prop::option::of(prop_oneof!["[a-z/]{0,5}".prop_map(Value::from), nested()]),
            prop::option::of(prop::sample::select(vec!["2026-04-01T23:30:00+03:00", "t0"])),
            prop::collection::vec(("[a-zA-Z]{1,8}", nested()), 0..3),
            prop::option::of(prop::collection::vec(a_record(), 0..3)),
        )
            .prop_map(|(role, text, envelope, model, cwd, ts, unknown, attached)| {
                let mut m = Map::new();
                m.insert("role".into(), role.into());
                m.insert("content".into(), text.into());
                for (k, v) in unknown {
                    m.insert(k, v);
                }
                if let Some((model, other)) = envelope {
                    m.insert("message".into(), json!({"id": "m", "model": model, "other": other}));
                }
                let fields = [("model", model), ("cwd", cwd), ("timestamp", ts.map(Value::from))];
                for (k, v) in fields {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                }
                if let Some(records) = attached {
                    m.insert("compactor_attached".into(), records.into());
                }
                Value::Object(m)
            })
    }

    /// One OpenAI session record, with session fields facts reads and
    /// fields nothing reads.
    fn a_record_line() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(a_message(), 0..5),
            prop::option::of(a_model()),
            prop::option::of("[a-z/]{0,5}"),
            nested(),
            prop::option::of(prop::collection::vec(a_record(), 0..2)),
        )
            .prop_map(|(messages, model, cwd, meta, trailing)| {
                let mut r = Map::new();
                r.insert("id".into(), "s1".into());
                r.insert("meta".into(), json!({"run": meta}));
                r.insert("trajectory".into(), json!({"steps": [1, "two"]}));
                r.insert("messages".into(), messages.into());
                if let Some(model) = model {
                    r.insert("model".into(), model);
                }
                if let Some(cwd) = cwd {
                    r.insert("cwd".into(), cwd.into());
                }
                if let Some(records) = trailing {
                    r.insert("compactor_trailing".into(), records.into());
                }
                Value::Object(r).to_string()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// What is read from a line kept by the OpenAI fast path (its facts,
        /// so its window under `--model auto`, and its session once the kept
        /// texts are parsed back) is what is read from a whole parse.
        #[test]
        fn a_kept_record_reads_as_the_whole_one(line in a_record_line()) {
            let source = Source { path: "t.jsonl".into(), line: Some(1), index: None };
            let whole: Value = serde_json::from_str(&line).unwrap();
            let whole = openai::decode_session(whole, source.clone());
            let kept = KeptRecord::parse(line.as_bytes()).expect("a serde_json line is kept");
            let kept = kept.decode(source);
            let (whole, kept) = match (whole, kept) {
                (Ok(w), Ok(k)) => (w, k),
                (w, k) => {
                    prop_assert_eq!(w.err().map(|e| e.message), k.err().map(|e| e.message));
                    return Ok(());
                }
            };
            prop_assert_eq!(of(kept.session()), of(&whole));
            let table = crate::catalog::window::ModelTable::default();
            prop_assert_eq!(
                table.choose(model(kept.session()).as_deref()),
                table.choose(model(&whole).as_deref())
            );
            let (expanded, n) = kept.expanded();
            prop_assert!(n >= 1, "the session's `trajectory` is kept");
            prop_assert_eq!(expanded, whole);
        }
    }
}
