//! Decoding: a job's records → sessions, each record on its own (a bad one
//! becomes a [`Rejection`] beside the good ones). [`decode_job`] is what
//! commands that only read sessions call; `parse` is shared
//! with the engine.

use super::Job;
use crate::formats::openai::{KeptRecord, KeptSession};
use crate::formats::{DecodeError, Format, Record, Unit};
use crate::io::record_limit::Raw;
use crate::io::{Payload, RawRecord, ReadError, is_session_array};
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

/// A record that could not be parsed: where, what kind of fault, why, and
/// its bytes.
#[derive(Debug)]
pub(super) struct Unparsed {
    pub source: Source,
    pub kind: RejectKind,
    pub reason: String,
    pub raw: Raw,
}

/// Parses a record's payload, keeping the line bytes (moved, not copied: a
/// line can be megabytes). A record over `--max-record-bytes` is not parsed:
/// it is rejected as `oversized`, its bytes in their spill.
pub(super) fn parse(r: RawRecord) -> Result<(Record, Option<Vec<u8>>), Unparsed> {
    let RawRecord { source, payload } = r;
    match payload {
        Payload::Value(value) | Payload::Document { value, .. } => {
            Ok((Record { source, value }, None))
        }
        Payload::Parsed { line, value } => Ok((Record { source, value }, Some(line))),
        Payload::Line(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => Ok((Record { source, value }, Some(bytes))),
            Err(e) => Err(Unparsed {
                source,
                kind: RejectKind::InvalidJson,
                reason: crate::io::json_error(&e),
                raw: bytes.into(),
            }),
        },
        Payload::Oversized(o) => Err(Unparsed {
            source,
            kind: RejectKind::Oversized,
            reason: o.reason(),
            raw: o.spill.into(),
        }),
    }
}

/// A record as [`parse_kept`] reads it.
pub(super) enum KeptOr {
    /// The record's line read keeping the fields nothing reads as JSON text,
    /// with its bytes.
    Kept(Source, KeptRecord, Vec<u8>),
    /// The record untouched: not a line, or a line that cannot be kept (it
    /// is then parsed whole).
    Whole(RawRecord),
}

/// Reads a record's line keeping the fields nothing reads as JSON text
/// ([`KeptRecord`]) where it can.
pub(super) fn parse_kept(r: RawRecord) -> KeptOr {
    match r {
        RawRecord { source, payload: Payload::Line(line) } => match KeptRecord::parse(&line) {
            Some(kept) => KeptOr::Kept(source, kept, line),
            None => KeptOr::Whole(RawRecord { source, payload: Payload::Line(line) }),
        },
        r => KeptOr::Whole(r),
    }
}

/// A session decoded for reading: from a whole parse, or keeping the fields
/// nothing reads as JSON text ([`KeptSession`], which only its own writer
/// writes). Either reads as a [`Session`].
#[derive(Debug)]
pub enum ReadSession {
    Whole(Session),
    Kept(KeptSession<'static>),
}

impl std::ops::Deref for ReadSession {
    type Target = Session;
    fn deref(&self) -> &Session {
        match self {
            ReadSession::Whole(s) => s,
            ReadSession::Kept(k) => k.session(),
        }
    }
}

/// Decodes the sessions of a job without compacting them. Returns the sessions
/// and, for each record that could not be read, its [`Rejection`].
pub fn decode_job(job: Job) -> (Vec<Session>, Vec<Rejection>) {
    decode_units(job, None::<fn(KeptRecord, Source) -> _>, |s| s)
}

/// [`decode_job`]; with `keep_unread`, the fields of OpenAI records that no
/// reader looks up stay JSON text ([`KeptRecord`]), which saves building and
/// dropping their trees. For callers that read the sessions (`report`).
pub fn decode_job_with(job: Job, keep_unread: bool) -> (Vec<ReadSession>, Vec<Rejection>) {
    let keep = keep_unread && job.format == Format::OpenAi;
    let kept = |r: KeptRecord, source| r.decode(source).map(ReadSession::Kept);
    decode_units(job, keep.then_some(kept), ReadSession::Whole)
}

/// A unit of a job: records the adapter decodes together, or a kept line
/// decoded as it was read.
enum Decodable<T> {
    Records(Vec<Record>),
    Decoded(Source, Result<T, DecodeError>),
}

/// [`decode_job`], with `kept` decoding the lines it keeps (none without it),
/// and `whole` taking the sessions of whole parses.
fn decode_units<T>(
    job: Job,
    kept: Option<impl Fn(KeptRecord, Source) -> Result<T, DecodeError>>,
    whole: impl Fn(Session) -> T,
) -> (Vec<T>, Vec<Rejection>) {
    let adapter = job.format.adapter();
    let mut errors = Vec::new();
    let mut invalid = |Unparsed { source, kind, reason, .. }: Unparsed| {
        errors.push(Rejection { source, kind, reason })
    };
    let mut units = Vec::new();
    match job.format.unit() {
        Unit::Record => {
            for r in job.records {
                let r = match &kept {
                    Some(kept) => match parse_kept(r) {
                        KeptOr::Kept(source, record, _) => {
                            units.push(Decodable::Decoded(source.clone(), kept(record, source)));
                            continue;
                        }
                        KeptOr::Whole(r) => r,
                    },
                    None => r,
                };
                match parse(r) {
                    Ok((r, _)) => {
                        units.extend(sessions_of(adapter, r).into_iter().map(Decodable::Records))
                    }
                    Err(e) => invalid(e),
                }
            }
        }
        Unit::File => {
            let mut records = Vec::new();
            for r in job.records {
                match parse(r) {
                    Ok((r, _)) => records.push(r),
                    Err(e) => invalid(e),
                }
            }
            if !records.is_empty() {
                units.push(Decodable::Records(records));
            }
        }
    }
    let mut sessions = Vec::new();
    for unit in units {
        let (first, decoded) = match unit {
            Decodable::Records(unit) => {
                let first = unit.first().map(|r| r.source.clone()).unwrap_or_default();
                let decoded = adapter.decode(unit, job.history).map(|mut s| {
                    super::subagent::link(&mut s);
                    s
                });
                (first, decoded.map(&whole))
            }
            Decodable::Decoded(first, decoded) => (first, decoded),
        };
        match decoded {
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

/// A record of a record dialect, as sessions.
pub(super) enum RecordSessions {
    /// The record is one session (or not an array of sessions).
    One(Record),
    /// A line holding an array of sessions: each item, its index in `source`.
    Items(Vec<Record>),
}

/// Splits a line holding an array of sessions into its items; any other
/// record (one the dialect itself detects, even if it is an array) is one.
pub(super) fn split_sessions(adapter: &dyn crate::formats::Adapter, r: Record) -> RecordSessions {
    if adapter.detect(std::slice::from_ref(&r.value))
        || !r.value.as_array().is_some_and(|items| is_session_array(items))
    {
        return RecordSessions::One(r);
    }
    let Record { source, value: Value::Array(items) } = r else {
        return RecordSessions::Items(Vec::new());
    };
    let at = |i: usize| Source { index: Some(i as u64), ..source.clone() };
    RecordSessions::Items(
        items.into_iter().enumerate().map(|(i, v)| Record { source: at(i), value: v }).collect(),
    )
}

/// The sessions of a record of a record dialect, each a unit to decode.
fn sessions_of(adapter: &dyn crate::formats::Adapter, r: Record) -> Vec<Vec<Record>> {
    match split_sessions(adapter, r) {
        RecordSessions::One(r) => vec![vec![r]],
        RecordSessions::Items(items) => items.into_iter().map(|r| vec![r]).collect(),
    }
}
