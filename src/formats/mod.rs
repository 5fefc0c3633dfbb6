//! Dialects: raw JSON records <-> the canonical [`Session`].
//!
//! Each dialect is one module implementing [`Adapter`]: it recognises its own
//! records, decodes them without losing a field, and encodes a (possibly
//! compacted) session back into the same shape. Containers (lines, documents,
//! Parquet rows, compression) are `io`'s business; adapters see JSON values.
//! A dialect whose session is one JSON value implements [`RecordDialect`]
//! instead and says only what differs; a large one is a folder (`decode`,
//! `encode`, its own helpers, `tests`) whose children use their parent.
//!
//! Dialects never import one another, except the OpenAI reader they all build
//! on (`openai::decode_message` and friends): what several share is a leaf
//! module here, `slots` (the key-slot marker that keeps key order),
//! `carried` (the fields a record dialect carries for what it cannot express,
//! and the top level every record dialect reads and writes the same way) and
//! [`json_style`] (writing embedded JSON back byte for byte).
//!
//! Two kinds of dialect ([`Unit`]): one session per record (OpenAI, Anthropic,
//! ShareGPT: a JSONL line or a `.json` element each), and one session per file
//! (Claude Code, Codex: every line of the file is an event of one session;
//! SWE-agent, ToolBench: one JSON document per file). The format is decided
//! per file from its first records ([`Format::detect`]), and every record of
//! the file must then fit it: a wrong guess is an error, never an empty session.

pub mod anthropic;
mod carried;
pub mod claude_code;
pub mod codex;
pub mod json_style;
pub mod openai;
pub mod parquet;
pub mod sharegpt;
pub(crate) mod slots;
pub mod swe_agent;
#[cfg(test)]
mod testing;
pub mod toolbench;

use crate::io::pretty::Pretty;
use crate::model::{Content, Continuation, History, Message, MessageMeta, Role, Session, Source};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Why records could not be read as a session. `source` names the offending
/// record when it is not the unit's first (the caller adds it otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub source: Option<Source>,
    pub message: String,
}

impl DecodeError {
    pub fn new(msg: impl Into<String>) -> DecodeError {
        DecodeError { source: None, message: msg.into() }
    }

    /// The error, blamed on one record.
    pub fn at(source: &Source, msg: impl Into<String>) -> DecodeError {
        DecodeError { source: Some(source.clone()), message: msg.into() }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// One JSON record and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub source: Source,
    pub value: Value,
}

/// How records map to sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Each record is a session.
    Record,
    /// All records of a file are one session.
    File,
}

/// A transcript dialect: detection, decoding and encoding.
pub trait Adapter: Sync + Send {
    /// The name used on the command line (`--from`, `--to`) and in reports.
    fn name(&self) -> &'static str;
    /// Whether a session is one record or a whole file.
    fn unit(&self) -> Unit;
    /// Returns true if and only if these first records of a file (at most
    /// [`DETECT_RECORDS`]) look like this dialect.
    fn detect(&self, first: &[Value]) -> bool;
    /// Reads one unit (one record, or every record of a file in order) as a
    /// session. `history` matters only to the dialects whose logs record the
    /// agent's own compactions (Claude Code, Codex); the others ignore it.
    fn decode(&self, records: Vec<Record>, history: History) -> Result<Session, DecodeError>;
    /// Writes a session back as records (one for a record dialect, the file's
    /// lines for a file dialect). `compaction` is added where the shape has room.
    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Vec<Value>;
    /// [`Adapter::encode`]'s records as JSON text, one line each (no newline):
    /// what a JSON Lines output writes. A dialect may write them without
    /// building the `Value`s, byte for byte the same.
    fn encode_lines(&self, session: &Session, compaction: Option<&Value>) -> Vec<Vec<u8>> {
        let values = self.encode(session, compaction);
        values.iter().map(crate::json_text::line).collect()
    }
    /// [`Adapter::encode`]'s records laid out pretty, each as [`Pretty::of`]
    /// lays out its line: what a document output writes. A dialect may write
    /// them without building the `Value`s ([`crate::io::pretty::Tree`]).
    fn encode_pretty(&self, session: &Session, compaction: Option<&Value>) -> Vec<Pretty> {
        let values = self.encode(session, compaction);
        values.iter().map(Pretty::of_value).collect()
    }
    /// What a clean request of this dialect needs beyond
    /// `request::normalize` (the engine applies it to a converted session
    /// before compaction); most need nothing.
    fn clean_request(&self, session: Session) -> Session {
        session
    }
    /// The records that record compaction `c` of `original` in this
    /// dialect's own form, to append to the log `original` was read from,
    /// which is written back unchanged before them (Claude Code: a
    /// `compact_boundary` and the compacted context after it; Codex: a
    /// `compacted` line). `None`: the dialect has no such form, and the
    /// compacted session is written whole by [`Adapter::encode`].
    fn lineage(&self, _original: &Session, _c: &Continuation<'_>) -> Option<Vec<Value>> {
        None
    }
}

/// A dialect whose session is one JSON value both ways: one record of a JSON
/// Lines file (Anthropic, ShareGPT, OpenAI), or the one document of a file
/// (SWE-agent, ToolBench). Each says only what differs; its [`Adapter`]
/// follows: detection counts the records that look like the dialect, decoding
/// takes the unit's single record, encoding writes one value.
pub trait RecordDialect: Sync + Send {
    /// [`Adapter::name`].
    const NAME: &'static str;
    /// [`Adapter::unit`]: a session per record, unless the dialect's record is
    /// a whole file ([`Unit::File`]).
    const UNIT: Unit = Unit::Record;
    /// Whether one record looks like this dialect.
    fn looks_like(record: &Value) -> bool;
    /// [`Adapter::detect`]: more than half of the first records look like
    /// this dialect; for a whole-file record, the file is one such record.
    fn fits(first: &[Value]) -> bool {
        match Self::UNIT {
            Unit::Record => first.iter().filter(|r| Self::looks_like(r)).count() * 2 > first.len(),
            Unit::File => matches!(first, [doc] if Self::looks_like(doc)),
        }
    }
    /// Reads one record as a session.
    fn decode_record(record: Value, source: Source) -> Result<Session, DecodeError>;
    /// Writes a session as one record.
    fn encode_record(session: &Session, compaction: Option<&Value>) -> Value;
    /// [`RecordDialect::encode_record`]'s record as JSON text (no newline).
    fn encode_line(session: &Session, compaction: Option<&Value>) -> Vec<u8> {
        crate::json_text::line(&Self::encode_record(session, compaction))
    }
    /// [`RecordDialect::encode_record`]'s record laid out pretty.
    fn encode_pretty(session: &Session, compaction: Option<&Value>) -> Pretty {
        Pretty::of_value(&Self::encode_record(session, compaction))
    }
    /// [`Adapter::clean_request`].
    fn clean_request(session: Session) -> Session {
        session
    }
}

impl<D: RecordDialect> Adapter for D {
    fn name(&self) -> &'static str {
        D::NAME
    }

    fn unit(&self) -> Unit {
        D::UNIT
    }

    fn detect(&self, first: &[Value]) -> bool {
        D::fits(first)
    }

    fn decode(&self, records: Vec<Record>, _: History) -> Result<Session, DecodeError> {
        let Record { source, value } = single(records)?;
        D::decode_record(value, source)
    }

    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Vec<Value> {
        vec![D::encode_record(session, compaction)]
    }

    fn encode_lines(&self, session: &Session, compaction: Option<&Value>) -> Vec<Vec<u8>> {
        vec![D::encode_line(session, compaction)]
    }

    fn encode_pretty(&self, session: &Session, compaction: Option<&Value>) -> Vec<Pretty> {
        vec![D::encode_pretty(session, compaction)]
    }

    fn clean_request(&self, session: Session) -> Session {
        D::clean_request(session)
    }
}

/// How many records of a file detection looks at.
pub const DETECT_RECORDS: usize = 16;

/// The dialects `compactor` reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    OpenAi,
    Anthropic,
    ClaudeCode,
    Codex,
    ShareGpt,
    SweAgent,
    ToolBench,
}

impl Format {
    /// Every dialect, in detection order: the most specific shapes first, the
    /// plain OpenAI chat shape (which many others also fit) last.
    pub const ALL: &'static [Format] = &[
        Format::ClaudeCode,
        Format::Codex,
        Format::SweAgent,
        Format::ToolBench,
        Format::ShareGpt,
        Format::Anthropic,
        Format::OpenAi,
    ];

    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Format::OpenAi => &openai::OpenAi,
            Format::Anthropic => &anthropic::Anthropic,
            Format::ClaudeCode => &claude_code::ClaudeCode,
            Format::Codex => &codex::Codex,
            Format::ShareGpt => &sharegpt::ShareGpt,
            Format::SweAgent => &swe_agent::SweAgent,
            Format::ToolBench => &toolbench::ToolBench,
        }
    }

    pub fn name(self) -> &'static str {
        self.adapter().name()
    }

    pub fn unit(self) -> Unit {
        self.adapter().unit()
    }

    /// The first dialect (in [`Format::ALL`] order) that recognises these first records.
    pub fn detect(first: &[Value]) -> Option<Format> {
        if first.is_empty() {
            return None;
        }
        Format::ALL.iter().copied().find(|f| f.adapter().detect(first))
    }
}

crate::model::names::named!(Format);

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::from_name(s).ok_or_else(|| unknown_format(s, Format::ALL.iter().map(|f| f.name())))
    }
}

/// The refusal of a format name that is none of `expected`: the one wording
/// of [`Format`]'s `FromStr` and of the command line's format options, which
/// add values of their own to the dialects.
pub fn unknown_format<'a>(name: &str, expected: impl IntoIterator<Item = &'a str>) -> String {
    let expected: Vec<&str> = expected.into_iter().collect();
    format!("unknown format `{name}` (expected one of {})", expected.join(", "))
}

/// The id a record names itself by, if any: a top-level `id`, `session_id`,
/// `conversation_id` or `uuid` (string or number).
/// Record keys a session id is read from, in order of preference.
pub(crate) const RECORD_ID_KEYS: &[&str] = &["id", "session_id", "conversation_id", "uuid"];

pub(crate) fn record_id(map: &serde_json::Map<String, Value>) -> Option<String> {
    RECORD_ID_KEYS.iter().find_map(|k| match map.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

/// What a JSON value is, for error messages ("expected an object, found an array").
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A message a file dialect read from one event: its role, content, times
/// and envelope; no calls, no reasoning, nothing attached yet.
pub(crate) fn event_message(
    role: Role,
    content: Content,
    meta: MessageMeta,
    extra: Map<String, Value>,
) -> Message {
    Message {
        role,
        content,
        tool_calls: Default::default(),
        tool_call_id: None,
        reasoning: None,
        meta,
        extra: extra.into(),
        attached: Default::default(),
    }
}

/// Takes the single record of a record-unit decode.
pub(crate) fn single(records: Vec<Record>) -> Result<Record, DecodeError> {
    let n = records.len();
    let mut it = records.into_iter();
    match (it.next(), n) {
        (Some(r), 1) => Ok(r),
        _ => Err(DecodeError::new(format!("expected one record, got {n}"))),
    }
}
