//! Dialects: raw JSON records <-> the canonical [`Session`](crate::model::Session).
//!
//! Each dialect is one file implementing [`Adapter`]: it recognises its own
//! records, decodes them without losing a field, and encodes a (possibly
//! compacted) session back into the same shape. Containers (lines, files,
//! compression) are `io`'s business; adapters never see bytes.

pub mod openai;

use crate::model::{Session, Source};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// Why a record could not be read as a session. The caller adds the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    pub fn new(msg: impl Into<String>) -> DecodeError {
        DecodeError(msg.into())
    }
}

/// A transcript dialect: detection, decoding and encoding of one record shape.
pub trait Adapter: Sync + Send {
    /// The name used on the command line (`--from`, `--to`).
    fn name(&self) -> &'static str;
    /// Returns true if and only if `record` looks like this dialect's session record.
    fn detect(&self, record: &Value) -> bool;
    /// Reads one record as a session.
    fn decode(&self, record: Value, source: Source) -> Result<Session, DecodeError>;
    /// Writes a session back. `compaction` is added as a top-level field where
    /// the record shape has room for one.
    fn encode(&self, session: &Session, compaction: Option<&Value>) -> Value;
}

/// The dialects `compactor` reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAi,
}

impl Format {
    pub const ALL: &'static [Format] = &[Format::OpenAi];

    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Format::OpenAi => &openai::OpenAi,
        }
    }

    pub fn name(self) -> &'static str {
        self.adapter().name()
    }

    /// The first dialect that recognises `record`.
    pub fn detect(record: &Value) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.adapter().detect(record))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Format::OpenAi),
            other => Err(format!("unknown format `{other}` (expected openai)")),
        }
    }
}

/// The id a record names itself by, if any: a top-level `id`, `session_id`,
/// `conversation_id` or `uuid` (string or number).
pub(crate) fn record_id(map: &serde_json::Map<String, Value>) -> Option<String> {
    ["id", "session_id", "conversation_id", "uuid"].iter().find_map(|k| match map.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}
