//! The driver: decode → compact → encode for a batch of records, in parallel,
//! results in input order.
//!
//! Records are parsed on the worker threads (parsing is parallel too), each
//! record is handled on its own, and a bad record becomes a [`Processed::Rejected`]
//! value beside the good ones: one bad line never takes a batch down.
//! `par_iter().map().collect()` keeps input order, so output bytes do not depend
//! on the thread count.

use crate::formats::{DecodeError, Format};
use crate::io::{Payload, RawRecord, parse_payload};
use crate::model::Source;
use crate::policy::{self, Compaction, Policy};
use crate::report::wire::{CompactionObject, SessionRow};
use crate::tokens::Meter;
use rayon::prelude::*;
use serde_json::Value;

/// What to do with each record.
pub struct Engine<'a> {
    pub policy: &'a Policy,
    pub meter: &'a Meter,
    /// Forced input dialect; `None` detects it per record.
    pub from: Option<Format>,
    /// Output dialect; `None` writes the input's own.
    pub to: Option<Format>,
}

/// The result for one session record.
#[derive(Debug)]
pub enum Processed {
    Session(Box<Done>),
    Rejected { source: Source, reason: String, raw: Vec<u8> },
}

/// A session that went through the pipeline.
#[derive(Debug)]
pub struct Done {
    pub source: Source,
    pub id: String,
    pub format: Format,
    pub compaction: Compaction,
    /// What to write: the encoded session, or the input line itself when
    /// nothing changed and the dialect is the same.
    pub output: Output,
    pub row: SessionRow,
}

/// Bytes or value to write for a session.
#[derive(Debug)]
pub enum Output {
    Raw(Vec<u8>),
    Value(Value),
}

impl Engine<'_> {
    /// Processes one record; an array of sessions on one line yields several.
    pub fn process(&self, record: RawRecord) -> Vec<Processed> {
        let RawRecord { source, payload } = record;
        let raw_line = match &payload {
            Payload::Line(bytes) => Some(bytes.clone()),
            Payload::Value(_) => None,
        };
        let reject = |source: Source, reason: String, raw: &Option<Vec<u8>>| Processed::Rejected {
            source,
            reason,
            raw: raw.clone().unwrap_or_default(),
        };
        let value = match parse_payload(payload) {
            Ok(v) => v,
            Err(reason) => return vec![reject(source, reason, &raw_line)],
        };
        if let Value::Array(items) = &value
            && !items.is_empty()
            && items.iter().all(|v| v.as_object().is_some_and(|o| o.contains_key("messages")))
        {
            let Value::Array(items) = value else { return Vec::new() };
            return items
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    let src = Source { index: Some(i as u64), ..source.clone() };
                    let raw = serde_json::to_vec(&v).ok();
                    self.process_value(v, src, None).unwrap_or_else(|e| reject(e.0, e.1, &raw))
                })
                .collect();
        }
        let raw_for_reject = raw_line.clone().or_else(|| serde_json::to_vec(&value).ok());
        vec![
            self.process_value(value, source, raw_line)
                .unwrap_or_else(|e| reject(e.0, e.1, &raw_for_reject)),
        ]
    }

    fn process_value(
        &self,
        value: Value,
        source: Source,
        raw_line: Option<Vec<u8>>,
    ) -> Result<Processed, (Source, String)> {
        let format = match self.from {
            Some(f) => f,
            None => Format::detect(&value).ok_or_else(|| {
                (source.clone(), "not a session in any known format (expected an object with a `messages` array, or an array of messages)".to_string())
            })?,
        };
        let session = format
            .adapter()
            .decode(value, source.clone())
            .map_err(|DecodeError(e)| (source.clone(), e))?;
        let outcome = policy::compact(&session, self.policy, self.meter);
        let to = self.to.unwrap_or(format);
        let counter = self.meter.kind().name();
        let compaction = outcome.compaction;
        let output = match raw_line {
            Some(raw) if to == format && !compaction.compacted => Output::Raw(raw),
            _ => {
                let object = compaction
                    .compacted
                    .then(|| {
                        serde_json::to_value(CompactionObject::new(&source, &compaction, counter))
                            .ok()
                    })
                    .flatten();
                Output::Value(to.adapter().encode(&outcome.session, object.as_ref()))
            }
        };
        let row = SessionRow::new(&source, &session.id, format.name(), &compaction, counter);
        Ok(Processed::Session(Box::new(Done {
            id: session.id,
            source,
            format,
            compaction,
            output,
            row,
        })))
    }

    /// Processes a batch in parallel (on the current rayon pool), in order.
    pub fn process_batch(&self, records: Vec<RawRecord>) -> Vec<Processed> {
        records
            .into_par_iter()
            .map(|r| self.process(r))
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .collect()
    }
}
