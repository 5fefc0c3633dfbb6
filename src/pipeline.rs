//! The driver: inputs → jobs → decode, compact, encode in parallel → results in
//! input order.
//!
//! [`JobReader`] walks the inputs, decides each file's dialect from its first
//! records, and yields [`Item`]s: file boundaries and jobs (one record, or all
//! records of a file for file dialects). [`Engine::process_batch`] runs the jobs
//! of a batch on the current rayon pool; `into_par_iter().map().collect()`
//! keeps order, so output bytes never depend on the thread count. Memory is
//! bounded by the batch in flight (and, for file dialects, the largest file).
//!
//! Every record is handled on its own: a bad one becomes a
//! [`Processed::Rejected`] beside the good ones.

use crate::formats::{DETECT_RECORDS, DecodeError, Format, Record, Unit};
use crate::io::{Container, Input, Payload, RawRecord, ReadError, ReadOptions, RecordReader};
use crate::model::{Session, Source};
use crate::policy::{self, Compaction, Policy};
use crate::report::wire::{CompactionObject, SessionRow};
use crate::request::Repairs;
use crate::tokens::Meter;
use rayon::prelude::*;
use serde_json::Value;
use std::collections::VecDeque;

/// Work for one session (or, for record dialects, one record that may hold several).
#[derive(Debug)]
pub struct Job {
    pub input: usize,
    pub format: Format,
    pub records: Vec<RawRecord>,
}

/// What the reader yields, in input order.
#[derive(Debug)]
pub enum Item {
    /// A file starts; its records are in `format`, laid out as `container`.
    Start {
        input: usize,
        container: Container,
        format: Format,
    },
    Job(Job),
    /// A file (or the rest of it) could not be read; nothing more comes from it.
    Failed {
        input: usize,
        error: ReadError,
    },
    /// A file ends.
    End {
        input: usize,
    },
}

struct Current {
    input: usize,
    reader: RecordReader,
    format: Format,
    head: VecDeque<RawRecord>,
}

/// Reads inputs as a stream of [`Item`]s.
pub struct JobReader<'a> {
    inputs: &'a [Input],
    from: Option<Format>,
    options: ReadOptions,
    next_input: usize,
    current: Option<Current>,
    queue: VecDeque<Item>,
}

impl<'a> JobReader<'a> {
    /// `from` forces the dialect; `None` detects it per file.
    pub fn new(inputs: &'a [Input], from: Option<Format>) -> JobReader<'a> {
        JobReader {
            inputs,
            from,
            options: ReadOptions::default(),
            next_input: 0,
            current: None,
            queue: VecDeque::new(),
        }
    }

    /// Sets how inputs are read (e.g. the Parquet messages column).
    pub fn with_options(mut self, options: ReadOptions) -> JobReader<'a> {
        self.options = options;
        self
    }

    /// Opens the next input and decides its dialect; queues its start (or failure).
    fn open_next(&mut self) -> bool {
        let Some(input) = self.inputs.get(self.next_input) else { return false };
        let idx = self.next_input;
        self.next_input += 1;
        let mut reader = match RecordReader::open(input, &self.options) {
            Ok(r) => r,
            Err(error) => {
                self.queue.push_back(Item::Failed { input: idx, error });
                return true;
            }
        };
        let mut head = VecDeque::new();
        let mut values = Vec::new();
        let mut failure = None;
        while head.len() < DETECT_RECORDS {
            match reader.next_record() {
                // Forced dialect: nothing to look at.
                Some(Ok(r)) if self.from.is_some() => head.push_back(r),
                Some(Ok(mut r)) => {
                    if let Some(v) = peek_value(&mut r.payload) {
                        values.push(v);
                    }
                    head.push_back(r);
                }
                Some(Err(e)) => {
                    failure = Some(e);
                    break;
                }
                None => break,
            }
        }
        let container = reader.container();
        let format = match self.from.or_else(|| Format::detect(&values)) {
            Some(f) => f,
            None if head.is_empty() && failure.is_none() => Format::OpenAi,
            None => {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                let error = failure.unwrap_or_else(|| match undetected(&head) {
                    // The first record says what is wrong with it: its line and why.
                    Some((source, message, raw)) => ReadError { source, message, raw },
                    None => ReadError {
                        source: Source { path: input.display.clone(), line: None, index: None },
                        message: format!(
                            "cannot tell the format from its first {} records (known: {}); pass --from",
                            head.len(),
                            names.join(", ")
                        ),
                        raw: Vec::new(),
                    },
                });
                self.queue.push_back(Item::Failed { input: idx, error });
                return true;
            }
        };
        // The values looked at go back into their records, parsed once.
        let mut values = values.into_iter();
        for r in head.iter_mut() {
            match &mut r.payload {
                Payload::Parsed { value, .. } => *value = values.next().unwrap_or_default(),
                Payload::Value(_) => drop(values.next()),
                Payload::Line(_) => {}
            }
        }
        self.queue.push_back(Item::Start { input: idx, container, format });
        if let Some(error) = failure {
            // Whatever was read before the failure still counts.
            self.queue.push_back(Item::Job(Job {
                input: idx,
                format,
                records: head.into_iter().collect(),
            }));
            self.queue.push_back(Item::Failed { input: idx, error });
            self.queue.push_back(Item::End { input: idx });
            return true;
        }
        self.current = Some(Current { input: idx, reader, format, head });
        true
    }

    /// The next item, `None` when every input is done.
    pub fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            let Some(cur) = self.current.as_mut() else {
                if !self.open_next() {
                    return None;
                }
                continue;
            };
            let (input, format) = (cur.input, cur.format);
            match format.unit() {
                Unit::Record => {
                    let next = cur.head.pop_front().map(Ok).or_else(|| cur.reader.next_record());
                    match next {
                        Some(Ok(r)) => {
                            return Some(Item::Job(Job { input, format, records: vec![r] }));
                        }
                        Some(Err(error)) => {
                            self.current = None;
                            self.queue.push_back(Item::Failed { input, error });
                            self.queue.push_back(Item::End { input });
                        }
                        None => {
                            self.current = None;
                            self.queue.push_back(Item::End { input });
                        }
                    }
                }
                Unit::File => {
                    let mut records: Vec<RawRecord> = cur.head.drain(..).collect();
                    let mut failure = None;
                    while let Some(r) = cur.reader.next_record() {
                        match r {
                            Ok(r) => records.push(r),
                            Err(e) => {
                                failure = Some(e);
                                break;
                            }
                        }
                    }
                    self.current = None;
                    if !records.is_empty() {
                        self.queue.push_back(Item::Job(Job { input, format, records }));
                    }
                    if let Some(error) = failure {
                        self.queue.push_back(Item::Failed { input, error });
                    }
                    self.queue.push_back(Item::End { input });
                }
            }
        }
    }
}

/// The value of a payload, for detection (a line that is not JSON gives `None`).
/// A line that parses becomes [`Payload::Parsed`] with a placeholder value; the
/// value is moved back in after detection (no second parse, no copy).
/// Why the first record of an undetected file is no session, when it says:
/// it is not JSON, or it is a record of a line dialect that its decoder
/// refuses (`{"messages": 5}`).
fn undetected(head: &VecDeque<RawRecord>) -> Option<Unparsed> {
    let first = head.front()?;
    let (value, raw) = match &first.payload {
        Payload::Line(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => (v, bytes.clone()),
            Err(e) => {
                return Some((first.source.clone(), crate::io::json_error(&e), bytes.clone()));
            }
        },
        Payload::Parsed { line, .. } => (serde_json::from_slice(line).ok()?, line.clone()),
        Payload::Value(v) => (v.clone(), Vec::new()),
    };
    let record = Record { source: first.source.clone(), value };
    let dialect = match record.value.as_object() {
        Some(o) if o.contains_key("conversations") => Format::ShareGpt,
        Some(o) if o.contains_key("messages") => Format::OpenAi,
        _ => return None,
    };
    let e = dialect.adapter().decode(vec![record]).err()?;
    Some((first.source.clone(), format!("not a session (read as {dialect}): {e}"), raw))
}

fn peek_value(p: &mut Payload) -> Option<Value> {
    match p {
        Payload::Value(v) | Payload::Parsed { value: v, .. } => Some(v.clone()),
        Payload::Line(bytes) => {
            let v = serde_json::from_slice(bytes).ok()?;
            *p = Payload::Parsed { line: std::mem::take(bytes), value: Value::Null };
            Some(v)
        }
    }
}

/// What to do with each job.
pub struct Engine<'a> {
    pub policy: &'a Policy,
    pub meter: &'a Meter,
    /// Output dialect; `None` writes each input's own.
    pub to: Option<Format>,
    /// Mask secrets in everything written (`--redact`).
    pub redact: bool,
    /// Serialize encoded records to JSON lines on the worker (set when the
    /// output is JSON Lines), so that the single writer thread only copies bytes.
    pub lines: bool,
    /// `--shard K/N`: sessions of other shards are decoded (to learn their id)
    /// and dropped before any compaction work.
    pub shard: Option<crate::shard::Shard>,
    /// `--keep-source-fields`: a converted session is written by the lossless
    /// dialect writers, not as a clean request ([`crate::request`]).
    pub keep_source_fields: bool,
}

/// A processed item, in input order.
#[derive(Debug)]
pub enum Processed {
    /// A file boundary or failure, passed through for the writer.
    Item(Item),
    Session(Box<Done>),
    Rejected {
        input: usize,
        source: Source,
        kind: RejectKind,
        reason: String,
        raw: Vec<u8>,
    },
}

/// What was wrong with a rejected record, for counting rejects by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RejectKind {
    /// Not JSON (bad syntax, invalid UTF-8, nesting too deep).
    InvalidJson,
    /// JSON, but not a session of its format (missing or mistyped fields).
    Malformed,
    /// The input (or the rest of it) could not be read: I/O errors, truncated
    /// compressed streams, unreadable Parquet, an undetectable format.
    Unreadable,
}

impl RejectKind {
    pub const ALL: [RejectKind; 3] =
        [RejectKind::InvalidJson, RejectKind::Malformed, RejectKind::Unreadable];

    /// The name used in summaries and reports.
    pub fn name(self) -> &'static str {
        match self {
            RejectKind::InvalidJson => "invalid_json",
            RejectKind::Malformed => "malformed",
            RejectKind::Unreadable => "unreadable",
        }
    }
}

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

/// A session that went through the pipeline.
#[derive(Debug)]
pub struct Done {
    pub input: usize,
    pub source: Source,
    pub id: String,
    pub format: Format,
    pub compaction: Compaction,
    pub output: Output,
    pub row: SessionRow,
    /// The decoded input session (kept only when asked, e.g. for statistics).
    pub session: Option<Session>,
    /// What making it a valid request repaired (converted sessions only).
    pub repairs: Repairs,
}

/// What to write for a session: its input lines unchanged, or encoded records.
#[derive(Debug)]
pub enum Output {
    Raw(Vec<Vec<u8>>),
    Values(Vec<Value>),
}

/// Lines longer than this many bytes per token of the trigger are decoded
/// without a skim first: see [`Engine::skim`].
const SKIM_BYTES_PER_TOKEN: u64 = 8;

/// A record that could not be parsed: where, why, and its bytes.
type Unparsed = (Source, String, Vec<u8>);

/// Parses a record's payload, keeping the line bytes (moved, not copied: a
/// line can be megabytes). With `keep`, fields nothing reads stay JSON text
/// ([`crate::formats::kept`]); the caller must then write the session with the
/// OpenAI lines encoder.
fn parse(r: RawRecord, keep: bool) -> Result<(Record, Option<Vec<u8>>), Unparsed> {
    let RawRecord { source, payload } = r;
    match payload {
        Payload::Value(value) => Ok((Record { source, value }, None)),
        Payload::Parsed { line, value } => Ok((Record { source, value }, Some(line))),
        Payload::Line(bytes) if keep => match crate::formats::kept::parse_line(&bytes) {
            Some(value) => Ok((Record { source, value }, Some(bytes))),
            None => parse(RawRecord { source, payload: Payload::Line(bytes) }, false),
        },
        Payload::Line(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => Ok((Record { source, value }, Some(bytes))),
            Err(e) => Err((source, crate::io::json_error(&e), bytes)),
        },
    }
}

fn raw_of(record: &Record, raw: Option<Vec<u8>>) -> Vec<u8> {
    raw.unwrap_or_else(|| serde_json::to_vec(&record.value).unwrap_or_default())
}

impl Engine<'_> {
    /// Processes one job.
    pub fn process(&self, job: Job) -> Vec<Processed> {
        let Job { input, format, records } = job;
        let invalid = |source: Source, reason: String, raw: Vec<u8>| Processed::Rejected {
            input,
            source,
            kind: RejectKind::InvalidJson,
            reason,
            raw,
        };
        let reject = |source: Source, reason: String, raw: Vec<u8>| Processed::Rejected {
            input,
            source,
            kind: RejectKind::Malformed,
            reason,
            raw,
        };
        // Kept text is written back only by the OpenAI lines encoder, which
        // JSON Lines output and redaction use.
        let keep = format == Format::OpenAi && self.same(format) && (self.lines || self.redact);
        match format.unit() {
            Unit::Record => {
                let mut out = Vec::new();
                let skim_limit = self.skim_limit(format);
                for r in records {
                    let r = match (skim_limit, r) {
                        (Some(limit), RawRecord { source, payload: Payload::Line(line) }) => {
                            match self.skim(input, format, limit, source, line) {
                                Ok(done) => {
                                    out.extend(done);
                                    continue;
                                }
                                Err((source, line)) => {
                                    RawRecord { source, payload: Payload::Line(line) }
                                }
                            }
                        }
                        (_, r) => r,
                    };
                    let (record, raw) = match parse(r, keep) {
                        Ok(x) => x,
                        Err((s, why, raw)) => {
                            out.push(invalid(s, why, raw));
                            continue;
                        }
                    };
                    // A line holding an array of sessions is several records.
                    if format.adapter().detect(std::slice::from_ref(&record.value))
                        || !is_session_array(&record.value)
                    {
                        let raws = raw.clone().map(|r| vec![r]);
                        let bytes = raw_of(&record, raw);
                        match self.session(input, format, vec![record], raws) {
                            Ok(done) => out.extend(done),
                            Err(e) => out.push(reject(e.0, e.1, bytes)),
                        }
                        continue;
                    }
                    let Record { source, value: Value::Array(items) } = record else { continue };
                    for (i, v) in items.into_iter().enumerate() {
                        let src = Source { index: Some(i as u64), ..source.clone() };
                        let rec = Record { source: src, value: v };
                        let bytes = raw_of(&rec, None);
                        match self.session(input, format, vec![rec], None) {
                            Ok(done) => out.extend(done),
                            Err(e) => out.push(reject(e.0, e.1, bytes)),
                        }
                    }
                }
                out
            }
            Unit::File => {
                let mut out = Vec::new();
                let mut good = Vec::new();
                let mut raws = Vec::new();
                let mut all_lines = true;
                for r in records {
                    match parse(r, false) {
                        Ok((rec, raw)) => {
                            all_lines &= raw.is_some();
                            raws.push(raw.unwrap_or_default());
                            good.push(rec);
                        }
                        Err((s, why, raw)) => out.push(invalid(s, why, raw)),
                    }
                }
                if good.is_empty() {
                    return out;
                }
                let bytes: Vec<u8> = raws.join(&b'\n');
                let raws = all_lines.then_some(raws);
                match self.session(input, format, good, raws) {
                    Ok(done) => out.extend(done),
                    Err(e) => out.push(reject(e.0, e.1, bytes)),
                }
                out
            }
        }
    }

    /// Decodes, compacts and encodes one session (`None`: another shard's).
    fn session(
        &self,
        input: usize,
        format: Format,
        records: Vec<Record>,
        raw_lines: Option<Vec<Vec<u8>>>,
    ) -> Result<Option<Processed>, (Source, String)> {
        let first = records.first().map(|r| r.source.clone()).unwrap_or_default();
        let session =
            format.adapter().decode(records).map_err(|DecodeError { source, message }| {
                (source.unwrap_or_else(|| first.clone()), message)
            })?;
        if self.shard.is_some_and(|s| !s.contains(&session.id)) {
            return Ok(None);
        }
        let (session, mut repairs) = if self.strict() {
            let api = match self.to {
                Some(Format::Anthropic) => crate::request::Api::Messages,
                _ => crate::request::Api::ChatCompletions,
            };
            crate::request::normalize(&session, false, api)
        } else {
            (session, Repairs::default())
        };
        let source = session.source.clone();
        let outcome = policy::compact(&session, self.policy, self.meter);
        let to = self.to.unwrap_or(format);
        let counter = self.meter.kind().name();
        let compaction = outcome.compaction;
        let output = match raw_lines {
            Some(raw) if self.same(format) && !compaction.compacted => Output::Raw(raw),
            _ => {
                let object = compaction
                    .compacted
                    .then(|| {
                        serde_json::to_value(CompactionObject::new(&source, &compaction, counter))
                            .ok()
                    })
                    .flatten();
                // Lines are what JSON Lines output and redaction need.
                if self.strict() && to == Format::Anthropic {
                    let (value, more) =
                        crate::request::messages::encode(&outcome.session, object.as_ref());
                    repairs.merge(&more);
                    if self.lines || self.redact {
                        Output::Raw(vec![serde_json::to_vec(&value).unwrap_or_default()])
                    } else {
                        Output::Values(vec![value])
                    }
                } else if self.lines || self.redact {
                    Output::Raw(to.adapter().encode_lines(&outcome.session, object.as_ref()))
                } else {
                    Output::Values(to.adapter().encode(&outcome.session, object.as_ref()))
                }
            }
        };
        let mut done = self.done(input, format, session.id, source, compaction, output);
        if let Processed::Session(d) = &mut done {
            d.row.repairs = repairs.by_name();
            d.repairs = repairs;
        }
        Ok(Some(done))
    }

    /// Whether a session is written as a clean request of its target API.
    fn strict(&self) -> bool {
        self.to.is_some() && !self.keep_source_fields
    }

    /// Whether a session of `format` is written in its own dialect, as read.
    fn same(&self, format: Format) -> bool {
        !self.strict() && self.to.is_none_or(|to| to == format)
    }

    /// The token count at which [`Engine::skim`] gives up on a session of `format`:
    /// `None` when sessions of `format` are not skimmed. Only OpenAI lines
    /// written back as OpenAI are (an untouched session is its input line),
    /// and not under `--force`, which compacts every session.
    fn skim_limit(&self, format: Format) -> Option<u64> {
        let same = format == Format::OpenAi && self.same(format);
        if same { self.policy.acts_from() } else { None }
    }

    /// A session line that compaction leaves as it is, passed through after a
    /// skim ([`crate::formats::skim`]) instead of a decode: `Err` gives the
    /// line back when it must be decoded (a skim is not sure, or the session
    /// is over the trigger).
    fn skim(
        &self,
        input: usize,
        format: Format,
        limit: u64,
        source: Source,
        line: Vec<u8>,
    ) -> Result<Option<Processed>, (Source, Vec<u8>)> {
        // A line this long is almost always over the trigger: the texts
        // counted make up most of a line, at about 4 bytes per token.
        if line.len() as u64 > limit.saturating_mul(SKIM_BYTES_PER_TOKEN) {
            return Err((source, line));
        }
        let Some(skimmed) = crate::formats::skim::skim_line(&line, self.meter, limit) else {
            return Err((source, line));
        };
        let id = skimmed.id.unwrap_or_else(|| source.to_string());
        if self.shard.is_some_and(|s| !s.contains(&id)) {
            return Ok(None);
        }
        let Some(compaction) = policy::untriggered(self.policy, skimmed.messages, skimmed.tokens)
        else {
            return Err((source, line));
        };
        Ok(Some(self.done(input, format, id, source, compaction, Output::Raw(vec![line]))))
    }

    /// A finished session: its record row, and its output redacted if asked.
    fn done(
        &self,
        input: usize,
        format: Format,
        id: String,
        source: Source,
        compaction: Compaction,
        output: Output,
    ) -> Processed {
        let counter = self.meter.kind().name();
        let mut row = SessionRow::new(&source, &id, format.name(), &compaction, counter);
        let output = if self.redact {
            let (out, masked) = redact_output(output);
            row.secrets_redacted = masked.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            out
        } else {
            output
        };
        Processed::Session(Box::new(Done {
            input,
            id,
            source,
            format,
            compaction,
            output,
            row,
            session: None,
            repairs: Repairs::default(),
        }))
    }

    /// Processes one item: a job becomes its sessions and rejects; a file
    /// boundary passes through.
    pub fn process_item(&self, item: Item) -> Vec<Processed> {
        match item {
            Item::Job(job) => self.process(job),
            other => vec![Processed::Item(other)],
        }
    }

    /// Processes a batch of items in parallel (on the current rayon pool), in order.
    pub fn process_batch(&self, items: Vec<Item>) -> Vec<Processed> {
        items
            .into_par_iter()
            .map(|item| match item {
                Item::Job(job) => self.process(job),
                other => vec![Processed::Item(other)],
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Masks secrets in an output, serializing encoded records to lines first.
fn redact_output(output: Output) -> (Output, crate::redact::Masked) {
    let mut masked = crate::redact::Masked::new();
    let lines: Vec<Vec<u8>> = match output {
        Output::Raw(lines) => lines,
        Output::Values(values) => {
            values.iter().map(|v| serde_json::to_vec(v).unwrap_or_default()).collect()
        }
    };
    let out = lines
        .into_iter()
        .map(|l| match String::from_utf8(l) {
            Ok(s) => crate::redact::redact(&s, &mut masked).into_owned().into_bytes(),
            Err(e) => e.into_bytes(),
        })
        .collect();
    (Output::Raw(out), masked)
}

/// Decodes the sessions of a job without compacting them. Returns the sessions
/// and, for each record that could not be read, its [`Rejection`].
pub fn decode_job(job: Job) -> (Vec<Session>, Vec<Rejection>) {
    decode_job_with(job, false)
}

/// [`decode_job`]; with `keep_unread`, the fields of OpenAI records that no
/// reader looks up stay JSON text (`formats::kept`), which saves
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
fn is_session_array(value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        !items.is_empty()
            && items.iter().all(|v| v.as_object().is_some_and(|o| o.contains_key("messages")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payloads(text: &str, from: Option<Format>) -> Vec<Payload> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, text).unwrap();
        let inputs =
            [Input { path: Some(path), display: "a.jsonl".into(), relative: "a.jsonl".into() }];
        let mut reader = JobReader::new(&inputs, from);
        let mut out = Vec::new();
        while let Some(item) = reader.next_item() {
            if let Item::Job(job) = item {
                out.extend(job.records.into_iter().map(|r| r.payload));
            }
        }
        out
    }

    /// Lines parsed to detect the dialect reach the workers parsed, with their
    /// bytes (for verbatim output) and their own value; later lines, lines that
    /// are not JSON, and every line under `--from` are left to the workers.
    #[test]
    fn lines_parsed_for_detection_are_not_parsed_again() {
        let line = |i: usize| format!(r#"{{"messages":[{{"role":"user","content":"m{i}"}}]}}"#);
        let mut lines: Vec<String> = (0..DETECT_RECORDS + 3).map(line).collect();
        lines[2] = "{not json".into();
        let text = lines.join("\n") + "\n";
        let got = payloads(&text, None);
        assert_eq!(got.len(), lines.len());
        for (i, p) in got.iter().enumerate() {
            match p {
                Payload::Parsed { line, value } => {
                    assert!(i < DETECT_RECORDS && i != 2, "record {i} parsed early");
                    assert_eq!(line, lines[i].as_bytes());
                    assert_eq!(value["messages"][0]["content"], format!("m{i}"));
                }
                Payload::Line(l) => {
                    assert!(i >= DETECT_RECORDS || i == 2, "record {i} not parsed");
                    assert_eq!(l, lines[i].as_bytes());
                }
                Payload::Value(_) => panic!("record {i}: a line read as a document element"),
            }
        }
        let forced = payloads(&text, Some(Format::OpenAi));
        assert!(forced.iter().all(|p| matches!(p, Payload::Line(_))));
    }

    /// OpenAI lines as a conversion writes them: every fixture session, Claude
    /// Code's with their attached records and tool-result keys, plus lines
    /// whose unread fields are spelled in ways serde_json does not write.
    fn openai_lines() -> Vec<Vec<u8>> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut lines = Vec::new();
        for dir in ["claude_code", "openai", "codex", "edge"] {
            let inputs =
                crate::io::expand_inputs(&[root.join(dir).to_string_lossy().into_owned()]).unwrap();
            let mut reader = JobReader::new(&inputs, None);
            while let Some(item) = reader.next_item() {
                let Item::Job(job) = item else { continue };
                for s in decode_job(job).0 {
                    lines.extend(Format::OpenAi.adapter().encode_lines(&s, None));
                }
            }
        }
        let odd = [
            r#"{"meta": {"a": 1.50, "b": [1, 2]}, "x": {"k":1,"k":2}, "messages": ["#,
            r#"{"role":"user","content":"hi","extra":{"s":"\u0041\/"},"more":[-0,1e2]},"#,
            r#"{"role":"assistant","content":"ok","compactor_attached":[{"t":"a"}, {"t" :"b"}, 3]}]}"#,
        ]
        .concat();
        lines.push(odd.into_bytes());
        lines
    }

    fn run(engine: &Engine<'_>, line: &[u8]) -> Vec<Vec<u8>> {
        let record = RawRecord { source: Source::default(), payload: Payload::Line(line.to_vec()) };
        let job = Job { input: 0, format: Format::OpenAi, records: vec![record] };
        let mut out = Vec::new();
        for p in engine.process(job) {
            match p {
                Processed::Session(done) => match done.output {
                    Output::Raw(lines) => out.extend(lines),
                    Output::Values(values) => {
                        out.extend(values.iter().map(|v| serde_json::to_vec(v).unwrap()));
                    }
                },
                other => panic!("{other:?}"),
            }
        }
        out
    }

    /// The unread fields of a session, kept as text, parsed back.
    fn expand_session(s: &mut Session) -> usize {
        use crate::formats::kept::{expand, kept_text};
        let mut kept = 0;
        let mut each = |v: &mut Value| {
            kept += usize::from(kept_text(v).is_some());
            expand(v);
        };
        std::sync::Arc::make_mut(&mut s.extra).values_mut().for_each(&mut each);
        s.trailing.iter_mut().for_each(&mut each);
        for m in &mut s.messages {
            m.extra_mut().values_mut().for_each(&mut each);
            m.attached_mut().iter_mut().for_each(&mut each);
        }
        kept
    }

    /// What `report` decodes keeping unread fields is, once they are parsed
    /// back, what a whole parse decodes.
    #[test]
    fn sessions_decoded_keeping_unread_fields_are_the_whole_parse_sessions() {
        let mut kept_fields = 0;
        for line in openai_lines() {
            let job = || Job {
                input: 0,
                format: Format::OpenAi,
                records: vec![RawRecord {
                    source: Source::default(),
                    payload: Payload::Line(line.clone()),
                }],
            };
            let (mut kept, kept_errors) = decode_job_with(job(), true);
            let (whole, errors) = decode_job(job());
            assert_eq!(kept_errors, errors);
            kept_fields += kept.iter_mut().map(expand_session).sum::<usize>();
            assert_eq!(kept, whole, "{}", String::from_utf8_lossy(&line));
        }
        assert!(kept_fields > 100, "{kept_fields} fields kept");
    }

    /// JSON Lines output keeps unread fields as text; any other output parses
    /// the line whole. Both write the same bytes, for every mode.
    #[test]
    fn kept_fields_write_what_a_whole_parse_writes() {
        let lines = openai_lines();
        assert!(lines.len() > 20, "{} lines", lines.len());
        let joined: Vec<u8> = lines.concat();
        assert!(memchr::memmem::find(&joined, b"compactor_attached").is_some());
        assert!(memchr::memmem::find(&joined, b"toolUseResult").is_some());
        let meter =
            Meter::new(crate::tokens::CounterKind::Hermes, crate::tokens::DEFAULT_IMAGE_TOKENS);
        for mode in [policy::Mode::Lean, policy::Mode::Tiered, policy::Mode::Legacy] {
            let mut policy = Policy::new(mode, 16_000);
            policy.force = true;
            let engine = |lines: bool| Engine {
                policy: &policy,
                meter: &meter,
                to: None,
                redact: false,
                lines,
                shard: None,
                keep_source_fields: false,
            };
            let mut compacted = 0;
            for line in &lines {
                let kept = run(&engine(true), line);
                assert_eq!(
                    kept,
                    run(&engine(false), line),
                    "{mode:?}: {}",
                    String::from_utf8_lossy(line)
                );
                compacted += usize::from(kept.first().is_some_and(|k| k != line));
            }
            assert!(compacted > 5, "{mode:?}: {compacted} sessions compacted");
        }
    }

    /// A session and its row as `process` gives them: row as JSON, output lines.
    fn outcome(p: Processed) -> (String, Vec<Vec<u8>>) {
        let Processed::Session(done) = p else { panic!("{p:?}") };
        let lines = match done.output {
            Output::Raw(lines) => lines,
            Output::Values(values) => {
                values.iter().map(|v| serde_json::to_vec(v).unwrap()).collect()
            }
        };
        assert_eq!(done.row.id, done.id);
        (serde_json::to_string(&done.row).unwrap(), lines)
    }

    /// Sessions passed through after a skim give the row and bytes decoding
    /// gives, under the trigger or over it, sharded, redacted, by both counters.
    #[test]
    fn a_skimmed_session_is_what_a_decoded_one_is() {
        let lines = openai_lines();
        let hermes =
            Meter::new(crate::tokens::CounterKind::Hermes, crate::tokens::DEFAULT_IMAGE_TOKENS);
        let exact =
            Meter::new(crate::tokens::CounterKind::O200k, crate::tokens::DEFAULT_IMAGE_TOKENS);
        let skimmed = lines
            .iter()
            .filter(|l| crate::formats::skim::skim_line(l, &hermes, u64::MAX).is_some())
            .count();
        assert!(skimmed * 10 >= lines.len() * 9, "{skimmed} of {} lines skimmed", lines.len());
        let shard = "1/2".parse::<crate::shard::Shard>().unwrap();
        let (mut passed, mut compacted, mut dropped) = (0, 0, 0);
        for meter in [&hermes, &exact] {
            for (window, redact, shard) in
                [(1_000_000, false, None), (4_000, false, None), (4_000, true, Some(shard))]
            {
                let policy = Policy::new(policy::Mode::Lean, window);
                let engine = Engine {
                    policy: &policy,
                    meter,
                    to: None,
                    redact,
                    lines: true,
                    shard,
                    keep_source_fields: false,
                };
                for (i, line) in lines.iter().enumerate() {
                    let source =
                        Source { path: "s.jsonl".into(), line: Some(i as u64), index: None };
                    let job = Job {
                        input: 0,
                        format: Format::OpenAi,
                        records: vec![RawRecord {
                            source: source.clone(),
                            payload: Payload::Line(line.clone()),
                        }],
                    };
                    let got: Vec<_> = engine.process(job).into_iter().map(outcome).collect();
                    let record = Record { source, value: serde_json::from_slice(line).unwrap() };
                    let want: Vec<_> = engine
                        .session(0, Format::OpenAi, vec![record], Some(vec![line.clone()]))
                        .unwrap()
                        .into_iter()
                        .map(outcome)
                        .collect();
                    assert_eq!(got, want, "{}", String::from_utf8_lossy(line));
                    match got.first() {
                        None => dropped += 1,
                        Some((_, out)) if out == std::slice::from_ref(line) => passed += 1,
                        Some(_) => compacted += 1,
                    }
                }
            }
        }
        assert!(passed > 50 && compacted > 10 && dropped > 10, "{passed} {compacted} {dropped}");
    }
}
