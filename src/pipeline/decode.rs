//! Decoding: a job's records → sessions, each record on its own (a bad one
//! becomes a [`Rejection`] beside the good ones). [`decode_job`] is what
//! commands that only read sessions call; `parse` and `is_session_array`
//! are shared with the engine.

use super::Job;
use crate::formats::{Format, Record, Unit};
use crate::io::{Payload, RawRecord, ReadError};
use crate::model::{Session, Source};
use crate::report::RejectKind;
use serde_json::Value;

/// A record that could not be decoded: where, what kind of fault, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub source: Source,
    pub kind: RejectKind,
    pub reason: String,
}

/// An input or record that could not be read at all.
impl From<ReadError> for Rejection {
    fn from(e: ReadError) -> Rejection {
        Rejection { source: e.source, kind: RejectKind::Unreadable, reason: e.message }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.source, self.reason)
    }
}

/// A record that could not be parsed: where, why, and its bytes.
pub(super) type Unparsed = (Source, String, Vec<u8>);

/// Parses a record's payload, keeping the line bytes (moved, not copied: a
/// line can be megabytes). With `keep`, fields nothing reads stay JSON text
/// ([`crate::formats::openai`]); the caller must then write the session with the
/// OpenAI lines encoder.
pub(super) fn parse(r: RawRecord, keep: bool) -> Result<(Record, Option<Vec<u8>>), Unparsed> {
    let RawRecord { source, payload } = r;
    match payload {
        Payload::Value(value) => Ok((Record { source, value }, None)),
        Payload::Parsed { line, value } => Ok((Record { source, value }, Some(line))),
        Payload::Line(bytes) if keep => match crate::formats::openai::parse_line(&bytes) {
            Some(value) => Ok((Record { source, value }, Some(bytes))),
            None => parse(RawRecord { source, payload: Payload::Line(bytes) }, false),
        },
        Payload::Line(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => Ok((Record { source, value }, Some(bytes))),
            Err(e) => Err((source, crate::io::json_error(&e), bytes)),
        },
    }
}

/// Decodes the sessions of a job without compacting them. Returns the sessions
/// and, for each record that could not be read, its [`Rejection`].
pub fn decode_job(job: Job) -> (Vec<Session>, Vec<Rejection>) {
    decode_job_with(job, false)
}

/// [`decode_job`]; with `keep_unread`, the fields of OpenAI records that no
/// reader looks up stay JSON text (`formats::openai`), which saves
/// building and dropping their trees. Only for callers that never write the
/// sessions (`report`): the text sits in marker strings that only the OpenAI
/// lines encoder writes back as JSON.
pub fn decode_job_with(job: Job, keep_unread: bool) -> (Vec<Session>, Vec<Rejection>) {
    let keep = keep_unread && job.format == Format::OpenAi;
    let adapter = job.format.adapter();
    let mut errors = Vec::new();
    let mut records = Vec::new();
    for r in job.records {
        match parse(r, keep) {
            Ok((rec, _)) => records.push(rec),
            Err((source, reason, _)) => {
                errors.push(Rejection { source, kind: RejectKind::InvalidJson, reason })
            }
        }
    }
    let units: Vec<Vec<Record>> = match job.format.unit() {
        Unit::Record => records
            .into_iter()
            .flat_map(|r| {
                if !adapter.detect(std::slice::from_ref(&r.value)) && is_session_array(&r.value) {
                    let Record { source, value: Value::Array(items) } = r else {
                        return Vec::new();
                    };
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| {
                            vec![Record {
                                source: Source { index: Some(i as u64), ..source.clone() },
                                value: v,
                            }]
                        })
                        .collect()
                } else {
                    vec![vec![r]]
                }
            })
            .collect(),
        Unit::File if records.is_empty() => Vec::new(),
        Unit::File => vec![records],
    };
    let mut sessions = Vec::new();
    for unit in units {
        let first = unit.first().map(|r| r.source.clone()).unwrap_or_default();
        match adapter.decode(unit) {
            Ok(s) => sessions.push(s),
            Err(e) => errors.push(Rejection {
                source: e.source.unwrap_or(first),
                kind: RejectKind::Malformed,
                reason: e.message,
            }),
        }
    }
    (sessions, errors)
}

/// Returns true if and only if `value` is an array of session objects.
pub(super) fn is_session_array(value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        !items.is_empty()
            && items.iter().all(|v| v.as_object().is_some_and(|o| o.contains_key("messages")))
    })
}
