//! Reading: inputs → [`Item`]s in input order. Each file's dialect is decided
//! from its first records (or forced by `--from`); record dialects give one
//! job per record, file dialects one job per file.
//!
//! A file whose dialect cannot be told and which is no transcript at all
//! ([`sniff`]: binary, not JSON, JSON without messages, one of our reports)
//! is skipped when a directory walk found it, and listed in
//! [`JobReader::skipped`] for the command's one note; named on the command
//! line, it fails saying what it is.

use super::sniff::{NotTranscript, sniff};
use super::{Item, Job};
use crate::formats::{DETECT_RECORDS, Format, Record, Unit};
use crate::io::{
    Input, Payload, RawRecord, ReadError, ReadOptions, RecordReader, is_session_array,
};
use crate::model::{History, Source};
use serde_json::Value;
use std::collections::VecDeque;

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
    history: History,
    next_input: usize,
    current: Option<Current>,
    queue: VecDeque<Item>,
    skipped: Vec<(usize, NotTranscript)>,
}

impl<'a> JobReader<'a> {
    /// `from` forces the dialect; `None` detects it per file.
    pub fn new(inputs: &'a [Input], from: Option<Format>) -> JobReader<'a> {
        JobReader {
            inputs,
            from,
            options: ReadOptions::new(crate::formats::parquet::RESTORE),
            history: History::default(),
            next_input: 0,
            current: None,
            queue: VecDeque::new(),
            skipped: Vec::new(),
        }
    }

    /// The inputs skipped so far because a directory walk found them and they
    /// are no transcript: (input index, what it is), in input order.
    pub fn skipped(&self) -> &[(usize, NotTranscript)] {
        &self.skipped
    }

    /// Sets how inputs are read (e.g. the Parquet messages column).
    pub fn with_options(mut self, options: ReadOptions) -> JobReader<'a> {
        self.options = options;
        self
    }

    /// Sets which part of an agent log its jobs make into messages.
    pub fn with_history(mut self, history: History) -> JobReader<'a> {
        self.history = history;
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
                // A document that does not parse may be no JSON at all.
                let what = match self.from {
                    None => sniff(input, &VecDeque::new(), Some(&error)),
                    Some(_) => None,
                };
                match what {
                    Some(what) => self.not_a_transcript(idx, what),
                    None => self.queue.push_back(Item::Failed { input: idx, error }),
                }
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
        let detected = match self.from {
            Some(from) => Some(from),
            None => {
                // A line holding an array of sessions is read one session per
                // item (`decode::split_sessions`), as under `--from`.
                let detected = Format::detect(&values).or_else(|| {
                    let items = values.first()?.as_array()?;
                    is_session_array(items).then(|| Format::detect(items)).flatten()
                });
                // The values looked at go back into their records, parsed once
                // and never copied.
                put_back(&mut head, values);
                detected
            }
        };
        let format = match detected {
            Some(f) => f,
            // Nothing to look at (an empty input, or records too long to read):
            // the default dialect, so that those records are rejected one by one.
            None if head.iter().all(is_oversized) && failure.is_none() => Format::OpenAi,
            None => {
                let malformed = failure.is_none().then(|| undetected(&head)).flatten();
                // A first record that is a session with a problem says so
                // (`malformed`); one that is not JSON is kept as the record it
                // is (for --rejects) unless a walk found the file or it is binary.
                let what = match (&malformed, sniff(input, &head, failure.as_ref())) {
                    (_, Some(NotTranscript::Binary)) => Some(NotTranscript::Binary),
                    (None, what) => what,
                    (Some(_), Some(NotTranscript::NotJson)) if input.walked => {
                        Some(NotTranscript::NotJson)
                    }
                    (Some(_), _) => None,
                };
                if let Some(what) = what {
                    self.not_a_transcript(idx, what);
                    return true;
                }
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                let error = failure.unwrap_or_else(|| match malformed {
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
        self.queue.push_back(Item::Start { input: idx, container, format });
        if let Some(error) = failure {
            // Whatever was read before the failure still counts.
            self.queue.push_back(Item::Job(Job {
                input: idx,
                container,
                format,
                history: self.history,
                records: head.into_iter().collect(),
            }));
            self.queue.push_back(Item::Failed { input: idx, error });
            self.queue.push_back(Item::End { input: idx });
            return true;
        }
        self.current = Some(Current { input: idx, reader, format, head });
        true
    }

    /// Input `idx` is no transcript: skipped when a walk found it, else an
    /// error saying what it is.
    fn not_a_transcript(&mut self, idx: usize, what: NotTranscript) {
        let Some(input) = self.inputs.get(idx) else { return };
        if input.walked {
            self.skipped.push((idx, what));
            return;
        }
        let message = format!("not a transcript: {what} (--from FORMAT reads it as one)");
        let source = Source { path: input.display.clone(), line: None, index: None };
        let error = ReadError { source, message, raw: Vec::new() };
        self.queue.push_back(Item::Failed { input: idx, error });
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
            let (input, format, history) = (cur.input, cur.format, self.history);
            let container = cur.reader.container();
            match format.unit() {
                Unit::Record => {
                    let next = cur.head.pop_front().map(Ok).or_else(|| cur.reader.next_record());
                    match next {
                        Some(Ok(r)) => {
                            return Some(Item::Job(Job {
                                input,
                                container,
                                format,
                                history,
                                records: vec![r],
                            }));
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
                        self.queue.push_back(Item::Job(Job {
                            input,
                            container,
                            format,
                            history,
                            records,
                        }));
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

/// Why the first record of an undetected file is no session, when it says:
/// it is not JSON, or it is a record of a line dialect that its decoder
/// refuses (`{"messages": 5}`).
fn undetected(head: &VecDeque<RawRecord>) -> Option<(Source, String, Vec<u8>)> {
    // A record too long to read says nothing of the file's format.
    let first = head.iter().find(|r| !is_oversized(r))?;
    let (value, raw) = match &first.payload {
        Payload::Line(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => (v, bytes.clone()),
            Err(e) => {
                return Some((first.source.clone(), crate::io::json_error(&e), bytes.clone()));
            }
        },
        Payload::Parsed { line, .. } => (serde_json::from_slice(line).ok()?, line.clone()),
        Payload::Value(v) | Payload::Document { value: v, .. } => (v.clone(), Vec::new()),
        Payload::Oversized(_) => return None,
    };
    let record = Record { source: first.source.clone(), value };
    let dialect = match record.value.as_object() {
        Some(o) if o.contains_key("conversations") => Format::ShareGpt,
        Some(o) if o.contains_key("messages") => Format::OpenAi,
        _ => return None,
    };
    let e = dialect.adapter().decode(vec![record], History::default()).err()?;
    Some((first.source.clone(), format!("not a session (read as {dialect}): {e}"), raw))
}

/// Returns true if and only if `r` is a record over `--max-record-bytes`.
fn is_oversized(r: &RawRecord) -> bool {
    matches!(r.payload, Payload::Oversized(_))
}

/// The value of a payload, for detection (a line that is not JSON gives `None`).
/// A line that parses becomes [`Payload::Parsed`] and a document element stays
/// [`Payload::Value`], each with a placeholder value; [`put_back`] moves the
/// value back in after detection (no second parse, no copy).
fn peek_value(p: &mut Payload) -> Option<Value> {
    match p {
        Payload::Value(v)
        | Payload::Document { value: v, .. }
        | Payload::Parsed { value: v, .. } => Some(std::mem::take(v)),
        Payload::Oversized(_) => None,
        Payload::Line(bytes) => {
            let v = serde_json::from_slice(bytes).ok()?;
            *p = Payload::Parsed { line: std::mem::take(bytes), value: Value::Null };
            Some(v)
        }
    }
}

/// Moves the values [`peek_value`] took, in order, back into the records of
/// `head` they came from (the records that held none are skipped, as there).
fn put_back(head: &mut VecDeque<RawRecord>, values: Vec<Value>) {
    let mut values = values.into_iter();
    for r in head.iter_mut() {
        match &mut r.payload {
            Payload::Parsed { value, .. }
            | Payload::Value(value)
            | Payload::Document { value, .. } => {
                *value = values.next().unwrap_or_default();
            }
            Payload::Line(_) | Payload::Oversized(_) => {}
        }
    }
}
