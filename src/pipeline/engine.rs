//! The engine: one job → its sessions decoded, compacted and encoded (or
//! passed through after a skim), and its bad records rejected.

use super::decode::{KeptOr, RecordSessions, Unparsed, parse, parse_kept, split_sessions};
use super::{Item, Job};
use crate::formats::openai::{FastPath, KeptRecord, Reads};
use crate::formats::{DecodeError, Format, Record, Unit};
use crate::io::output::Layout;
use crate::io::pretty::Pretty;
use crate::io::record_limit::Raw;
use crate::io::{Container, DocumentText, Payload, RawRecord, ReadError};
use crate::model::{Continuation, History, Session, Source, Trigger, continuation_id};
use crate::policy::{self, Compaction, Policy};
use crate::report::RejectKind;
use crate::report::wire::{CompactionObject, SessionRow};
use crate::request::Repairs;
use crate::tokens::Meter;
use serde_json::Value;

/// What to do with each job.
pub struct Engine<'a> {
    pub policy: &'a Policy,
    /// `--model auto`: each session's policy is the one of its log's model
    /// ([`super::Policies`]); `policy` is then the default window's. Which
    /// fast paths may run then is [`FastPath::may_run`]'s rule.
    pub auto: Option<&'a super::Policies>,
    pub meter: &'a Meter,
    /// What the run's compactions remember: owned here, one per run, shared
    /// by the workers.
    pub caches: policy::Caches,
    /// Output dialect; `None` writes each input's own.
    pub to: Option<Format>,
    /// Mask secrets in everything written (`--redact`).
    pub redact: bool,
    /// In what form the workers hand encoded records to the writer.
    pub handover: Handover,
    /// `--shard K/N`: sessions of other shards are decoded (to learn their id)
    /// and dropped before any compaction work.
    pub shard: Option<crate::pipeline::shard::Shard>,
    /// `--keep-source-fields`: a converted session is written by the lossless
    /// dialect writers, not as a clean request ([`crate::request`]).
    pub keep_source_fields: bool,
    /// A training output (`--to parquet` without `--keep-source-fields`):
    /// each clean OpenAI record is made a training row ([`crate::training::shape`]:
    /// loss flags, one leading system message, declared tools).
    pub training: bool,
}

/// In what form a worker hands a session's encoded records to the writer
/// thread, which is one for the whole run: the more a worker writes, the less
/// the writer has to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handover {
    /// As `Value`s, which the writer lays out (a Parquet output, or one
    /// pretty output file).
    Values,
    /// As JSON lines (JSON Lines out: standard output, a `.jsonl` file), so
    /// that the writer only copies bytes.
    Lines,
    /// Each input's in its own output's layout (`-o DIR/`, [`super::layout_for`]):
    /// JSON lines, or laid out pretty for a document ([`Output::Pretty`]), so
    /// that the writer only copies bytes.
    PerInput,
}

/// A processed item, in input order.
#[derive(Debug)]
pub enum Processed {
    /// A file boundary or failure, passed through for the writer.
    Item(Item),
    Session(Box<Done>),
    /// A file could not be read further (an [`Item::Failed`]); its rejection,
    /// when this shard reports it, came just before.
    Unreadable {
        input: usize,
    },
    Rejected {
        input: usize,
        source: Source,
        kind: RejectKind,
        reason: String,
        /// The record's bytes, for `--rejects`.
        raw: Raw,
    },
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
    /// `--model auto`: the window this session got, and how it was chosen.
    pub window: Option<(u64, crate::catalog::window::Chosen)>,
    /// What making it a valid request repaired (converted sessions only).
    pub repairs: Repairs,
}

/// What to write for a session: its input lines unchanged, or encoded records.
#[derive(Debug)]
pub enum Output {
    /// JSON lines: unchanged input lines, or encoded records serialized.
    Raw(Vec<Vec<u8>>),
    Values(Vec<Value>),
    /// Encoded records laid out pretty, for a document output.
    Pretty(Vec<Pretty>),
}

/// What a job's encoded records become on the worker: [`Handover`] applied
/// to its file's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    Values,
    Lines,
    Pretty,
}

/// Lines longer than this many bytes per token of the trigger are decoded
/// without a skim first: see [`Engine::skim`].
const SKIM_BYTES_PER_TOKEN: u64 = 8;

fn raw_of(record: &Record, raw: Option<Vec<u8>>) -> Vec<u8> {
    raw.unwrap_or_else(|| crate::json_text::line(&record.value))
}

/// What a session's rejection writes as its record: bytes at hand, or a whole
/// document's compact text, made only if the session is rejected (most are
/// not, and a document can be megabytes).
enum RejectText {
    Bytes(Vec<u8>),
    Document(DocumentText),
}

impl RejectText {
    fn bytes(self) -> Vec<u8> {
        match self {
            RejectText::Bytes(b) => b,
            RejectText::Document(text) => text.line(),
        }
    }
}

impl Engine<'_> {
    /// Processes one job: its sessions and rejected records of this shard.
    pub fn process(&self, job: Job) -> Vec<Processed> {
        let mut out = self.process_all(job);
        // A record that is no session has no id: its source picks the shard.
        out.retain(|p| match p {
            Processed::Rejected { source, .. } => self.selects(&source.to_string()),
            _ => true,
        });
        out
    }

    /// [`Engine::process`] before the rejected records are sharded.
    fn process_all(&self, job: Job) -> Vec<Processed> {
        let Job { input, container, format, history, records } = job;
        let form = self.form(container, format);
        let invalid = |Unparsed { source, kind, reason, raw }: Unparsed| Processed::Rejected {
            input,
            source,
            kind,
            reason,
            raw,
        };
        let reject = |source: Source, reason: String, raw: Vec<u8>| Processed::Rejected {
            input,
            source,
            kind: RejectKind::Malformed,
            reason,
            raw: raw.into(),
        };
        // One session's outcome: what it wrote, or its rejection with `raw`.
        let settle = |out: &mut Vec<Processed>,
                      done: Result<Option<Processed>, (Source, String)>,
                      raw: RejectText| match done {
            Ok(done) => out.extend(done),
            Err((source, why)) => out.push(reject(source, why, raw.bytes())),
        };
        // Kept text is written back only by a kept session's own writer,
        // which gives the lines JSON Lines output and redaction use.
        let keep = format == Format::OpenAi
            && self.same(format)
            && (form != Form::Values || self.redact)
            && FastPath::Kept.may_run(self.reads());
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
                    let r = match if keep { parse_kept(r) } else { KeptOr::Whole(r) } {
                        KeptOr::Kept(source, kept, line) => {
                            match self.kept_session(input, source, kept, line) {
                                Ok(done) => out.extend(done),
                                Err((s, why, line)) => out.push(reject(s, why, line)),
                            }
                            continue;
                        }
                        KeptOr::Whole(r) => r,
                    };
                    // A whole document's text, for its rejection only.
                    let text = match &r.payload {
                        Payload::Document { text, .. } => Some(text.clone()),
                        _ => None,
                    };
                    let (record, raw) = match parse(r) {
                        Ok(x) => x,
                        Err(unparsed) => {
                            out.push(invalid(unparsed));
                            continue;
                        }
                    };
                    // A line holding an array of sessions is several records.
                    match split_sessions(format.adapter(), record) {
                        RecordSessions::One(record) => {
                            let raws = raw.clone().map(|r| vec![r]);
                            let bytes = match (raw, text) {
                                (None, Some(text)) => RejectText::Document(text),
                                (raw, _) => RejectText::Bytes(raw_of(&record, raw)),
                            };
                            settle(
                                &mut out,
                                self.session(input, format, form, history, vec![record], raws),
                                bytes,
                            );
                        }
                        RecordSessions::Items(items) => {
                            for rec in items {
                                let bytes = RejectText::Bytes(raw_of(&rec, None));
                                settle(
                                    &mut out,
                                    self.session(input, format, form, history, vec![rec], None),
                                    bytes,
                                );
                            }
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
                    match parse(r) {
                        Ok((rec, raw)) => {
                            all_lines &= raw.is_some();
                            raws.push(raw.unwrap_or_default());
                            good.push(rec);
                        }
                        Err(unparsed) => out.push(invalid(unparsed)),
                    }
                }
                if good.is_empty() {
                    return out;
                }
                let bytes: Vec<u8> = raws.join(&b'\n');
                let raws = all_lines.then_some(raws);
                let bytes = RejectText::Bytes(bytes);
                let session = self.session(input, format, form, history, good, raws);
                settle(&mut out, session, bytes);
                out
            }
        }
    }

    /// Decodes, compacts and encodes one session (`None`: another shard's).
    pub(super) fn session(
        &self,
        input: usize,
        format: Format,
        form: Form,
        history: History,
        records: Vec<Record>,
        raw_lines: Option<Vec<Vec<u8>>>,
    ) -> Result<Option<Processed>, (Source, String)> {
        let first = records.first().map(|r| r.source.clone()).unwrap_or_default();
        let mut session = format.adapter().decode(records, history).map_err(
            |DecodeError { source, message }| (source.unwrap_or_else(|| first.clone()), message),
        )?;
        super::subagent::link(&mut session);
        if !self.selects(&session.id) {
            return Ok(None);
        }
        // The model is read from the log as decoded: a clean request drops
        // the envelopes that name it.
        let (chosen_policy, chosen) = self.policy_for(&session);
        let (session, mut repairs) = if self.clean_request() {
            // Images stay where the Messages API takes them (tool-result
            // screenshots too) until compaction has counted and stripped
            // them; `fit_images` makes what survives fit the target at the end.
            let (clean, repairs) =
                crate::request::normalize(&session, false, crate::request::Api::Messages);
            // What the target dialect's clean request needs besides (ShareGPT:
            // no developer turn).
            match self.to {
                Some(to) => (to.adapter().clean_request(clean), repairs),
                None => (clean, repairs),
            }
        } else {
            (session, Repairs::default())
        };
        let source = session.source.clone();
        let prepared = policy::Prepared::new(&session, &self.caches);
        let mut outcome = policy::compact_prepared(&prepared, chosen_policy, self.meter);
        let to = self.to.unwrap_or(format);
        if self.clean_request() && to != Format::Anthropic {
            let api = crate::request::Api::ChatCompletions;
            repairs.merge(&crate::request::fit_images(&mut outcome.session, api));
        }
        let compaction = outcome.compaction;
        let continuation_id = compaction
            .compacted
            .then(|| continuation_id(&session.id, &policy_key(chosen_policy, self.meter, history)));
        if let Some(id) = &continuation_id
            && to != format
        {
            name_continuation(outcome.session.to_mut(), id, &session.id);
        }
        if let Some(parent) = &session.parent
            && to != format
        {
            name_parent(outcome.session.to_mut(), parent);
        }
        let lineage = match &continuation_id {
            Some(id) if self.same(format) => {
                let c = Continuation {
                    compacted: &outcome.session,
                    summary_at: summary_index(&compaction),
                    trigger: trigger_of(&compaction, chosen_policy),
                    pre_tokens: compaction.tokens_before,
                    id,
                };
                format.adapter().lineage(&session, &c)
            }
            _ => None,
        };
        // The outputs that name the continuation: converted ones, and logs
        // that record our compaction in their own form.
        let named = to != format || lineage.is_some();
        let output = match (raw_lines, lineage) {
            (Some(raw), _) if self.same(format) && !compaction.compacted => Output::Raw(raw),
            (raw, Some(appended)) => {
                // The input as read, then our compaction in the agent's own form.
                let mut lines = match raw {
                    Some(raw) => raw,
                    None => format.adapter().encode_lines(&session, None),
                };
                lines.extend(appended.iter().map(crate::json_text::line));
                Output::Raw(lines)
            }
            _ => {
                let mut object = self.compaction_object(&source, &compaction);
                if let (Some(Value::Object(o)), Some(id)) = (&mut object, &continuation_id)
                    && to != format
                {
                    o.insert("id".into(), Value::from(id.as_str()));
                    o.insert("parent_id".into(), Value::from(session.id.as_str()));
                }
                // Lines are what JSON Lines output and redaction need.
                if self.clean_request() && to == Format::Anthropic {
                    let (value, more) =
                        crate::request::messages::encode(&outcome.session, object.as_ref());
                    repairs.merge(&more);
                    if form != Form::Values || self.redact {
                        Output::Raw(vec![crate::json_text::line(&value)])
                    } else {
                        Output::Values(vec![value])
                    }
                } else if self.training && self.clean_request() && to == Format::OpenAi {
                    let mut values = to.adapter().encode(&outcome.session, object.as_ref());
                    for v in &mut values {
                        crate::training::shape(v, &outcome.session);
                    }
                    if form != Form::Values || self.redact {
                        let line = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
                        Output::Raw(values.iter().map(line).collect())
                    } else {
                        Output::Values(values)
                    }
                } else if form == Form::Pretty && !self.redact {
                    Output::Pretty(to.adapter().encode_pretty(&outcome.session, object.as_ref()))
                } else if form != Form::Values || self.redact {
                    Output::Raw(to.adapter().encode_lines(&outcome.session, object.as_ref()))
                } else {
                    Output::Values(to.adapter().encode(&outcome.session, object.as_ref()))
                }
            }
        };
        let id = match &continuation_id {
            Some(id) if to != format => id.clone(),
            _ => session.id.clone(),
        };
        let mut done = self.done(input, format, id, source, compaction, output);
        if let Processed::Session(d) = &mut done {
            d.row.id = session.id.clone();
            d.row.continuation_id = continuation_id.filter(|_| named);
            d.row.parent_session_id = session.parent.as_ref().map(|p| p.session_id.clone());
            d.row.parent_call_id = session.parent.as_ref().and_then(|p| p.call_id.clone());
        }
        Ok(Some(with_window_and_repairs(done, chosen.map(|c| (chosen_policy.window, c)), repairs)))
    }

    /// [`Engine::session`] for a line read keeping the fields nothing reads as
    /// text: OpenAI written as OpenAI (so no clean request), and written back
    /// by the kept session's own writer. `Err` gives the line back, rejected.
    fn kept_session(
        &self,
        input: usize,
        source: Source,
        kept: KeptRecord,
        line: Vec<u8>,
    ) -> Result<Option<Processed>, (Source, String, Vec<u8>)> {
        let kept = match kept.decode(source.clone()) {
            Ok(kept) => kept,
            Err(DecodeError { source: at, message }) => {
                return Err((at.unwrap_or(source), message, line));
            }
        };
        let session = kept.session();
        if !self.selects(&session.id) {
            return Ok(None);
        }
        let (chosen_policy, chosen) = self.policy_for(session);
        let (compacted, compaction) = kept.map(|s| {
            let prepared = policy::Prepared::new(s, &self.caches);
            let outcome = policy::compact_prepared(&prepared, chosen_policy, self.meter);
            (outcome.session, outcome.compaction)
        });
        let output = if compaction.compacted {
            let object = self.compaction_object(&session.source, &compaction);
            Output::Raw(vec![compacted.line(object.as_ref())])
        } else {
            Output::Raw(vec![line])
        };
        let (id, source) = (session.id.clone(), session.source.clone());
        let done = self.done(input, Format::OpenAi, id, source, compaction, output);
        Ok(Some(with_window_and_repairs(
            done,
            chosen.map(|c| (chosen_policy.window, c)),
            Repairs::default(),
        )))
    }

    /// The form a job's sessions are handed over in, from its file's layout.
    fn form(&self, container: Container, format: Format) -> Form {
        match self.handover {
            Handover::Values => Form::Values,
            Handover::Lines => Form::Lines,
            Handover::PerInput => match super::layout_for(container, format, self.to, false) {
                Layout::Document | Layout::Array => Form::Pretty,
                Layout::Jsonl | Layout::Parquet => Form::Lines,
            },
        }
    }

    /// The policy of a session: under `--model auto` its log's model's.
    fn policy_for(&self, session: &Session) -> (&Policy, Option<crate::catalog::window::Chosen>) {
        match self.auto {
            Some(policies) => policies.for_session(session),
            None => (self.policy, None),
        }
    }

    /// The `compaction` object a compacted session's record gets.
    fn compaction_object(&self, source: &Source, compaction: &Compaction) -> Option<Value> {
        let counter = self.meter.kind().name();
        compaction
            .compacted
            .then(|| Value::from(&CompactionObject::new(source, compaction, counter)))
    }

    /// Whether a session is written as a clean request of its target API
    /// (converted, without `--keep-source-fields`). Not `--strict`, which
    /// stops a run at its first rejected record.
    fn clean_request(&self) -> bool {
        self.to.is_some() && !self.keep_source_fields
    }

    /// Whether a session of `format` is written in its own dialect, as read.
    fn same(&self, format: Format) -> bool {
        !self.clean_request() && self.to.is_none_or(|to| to == format)
    }

    /// The token count at which [`Engine::skim`] gives up on a session of `format`:
    /// `None` when sessions of `format` are not skimmed. Only OpenAI lines
    /// written back as OpenAI are (an untouched session is its input line),
    /// and not under `--force`, which compacts every session.
    fn skim_limit(&self, format: Format) -> Option<u64> {
        let same =
            format == Format::OpenAi && self.same(format) && FastPath::Skim.may_run(self.reads());
        if same { self.policy.acts_from() } else { None }
    }

    /// What the run reads of each session: under `--model auto`, its facts too.
    fn reads(&self) -> Reads {
        if self.auto.is_some() { Reads::Facts } else { Reads::Compaction }
    }

    /// A session line that compaction leaves as it is, passed through after a
    /// skim ([`crate::formats::openai::skim_line`]) instead of a decode: `Err` gives the
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
        let Some(skimmed) = crate::formats::openai::skim_line(&line, self.meter, limit) else {
            return Err((source, line));
        };
        let id = skimmed.id.unwrap_or_else(|| source.to_string());
        if !self.selects(&id) {
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
            window: None,
            repairs: Repairs::default(),
        }))
    }

    /// Processes one item: a job becomes its sessions and rejects; a file
    /// that could not be read becomes its rejection (this shard's only: keyed
    /// by its source) and [`Processed::Unreadable`]; a file boundary passes
    /// through.
    pub fn process_item(&self, item: Item) -> Vec<Processed> {
        match item {
            Item::Job(job) => self.process(job),
            Item::Failed { input, error: ReadError { source, message, raw } } => {
                let rejected =
                    self.reject_unkeyed(input, source, RejectKind::Unreadable, message, raw.into());
                rejected.into_iter().chain([Processed::Unreadable { input }]).collect()
            }
            other => vec![Processed::Item(other)],
        }
    }

    /// A record that is no session (so has no id), rejected: `None` when
    /// another shard reports it (its source picks the shard).
    pub fn reject_unkeyed(
        &self,
        input: usize,
        source: Source,
        kind: RejectKind,
        reason: String,
        raw: Raw,
    ) -> Option<Processed> {
        self.selects(&source.to_string()).then_some(Processed::Rejected {
            input,
            source,
            kind,
            reason,
            raw,
        })
    }

    /// Whether this run's shard (`--shard K/N`) takes the session or record
    /// keyed by `key` (a session's id, or a bad record's source): the one
    /// place the shard is applied to what the engine gives back.
    fn selects(&self, key: &str) -> bool {
        super::shard::selects(self.shard, key)
    }
}

/// A finished session with the window `--model auto` chose for it and what
/// making it a clean request repaired.
fn with_window_and_repairs(
    mut done: Processed,
    window: Option<(u64, crate::catalog::window::Chosen)>,
    repairs: Repairs,
) -> Processed {
    if let (Processed::Session(d), Some(w)) = (&mut done, window) {
        d.window = Some(w);
    }
    if let Processed::Session(d) = &mut done {
        d.row.repairs = repairs.by_name();
        d.repairs = repairs;
    }
    done
}

/// Masks secrets in an output, serializing encoded records to lines first.
fn redact_output(output: Output) -> (Output, crate::redact::Masked) {
    let mut masked = crate::redact::Masked::new();
    let lines: Vec<Vec<u8>> = match output {
        Output::Raw(lines) => lines,
        Output::Values(values) => values.iter().map(crate::json_text::line).collect(),
        // Not made under `--redact`; its text is JSON as well.
        Output::Pretty(records) => records.into_iter().map(Pretty::into_bytes).collect(),
    };
    let out = lines
        .into_iter()
        .map(|l| match String::from_utf8(l) {
            Ok(s) => crate::redact::redact_json(&s, &mut masked).into_owned().into_bytes(),
            Err(e) => e.into_bytes(),
        })
        .collect();
    (Output::Raw(out), masked)
}

/// What decides a compaction's output (the policy, the counter and which
/// history was read), as text: a continuation id is derived from it
/// ([`continuation_id`]).
fn policy_key(policy: &Policy, meter: &Meter, history: History) -> String {
    format!(
        "{}/{}/{}/{:?}/{}/{}/{}/{}/{history}",
        policy.mode,
        policy.window,
        policy.threshold,
        policy.target_tokens,
        policy.force,
        policy.protect_first_n,
        meter.kind().name(),
        policy.summarizer.is_some(),
    )
}

/// Where our summary sits in a compacted session (its own message, or the
/// one it was merged into); `None` when no summary was written.
fn summary_index(c: &Compaction) -> Option<usize> {
    (c.sections.summary_messages > 0 || c.summary_merged).then_some(c.sections.head_messages)
}

/// `auto` when the request was at or over the trigger, `manual` when a
/// compaction was asked for under it (`--force`, `--target-tokens`).
fn trigger_of(c: &Compaction, policy: &Policy) -> Trigger {
    if c.tokens_before >= policy.threshold { Trigger::Auto } else { Trigger::Manual }
}

/// Names, in a converted subagent's session, the session and call that
/// started it: `parent_session_id`, `parent_call_id` (null when its parent's
/// log does not say).
fn name_parent(session: &mut Session, parent: &crate::model::Parent) {
    let extra = std::sync::Arc::make_mut(&mut session.extra);
    extra.insert("parent_session_id".into(), Value::from(parent.session_id.as_str()));
    extra.insert(
        "parent_call_id".into(),
        parent.call_id.as_deref().map_or(Value::Null, Value::from),
    );
}

/// Names a converted compacted session as the continuation `id` of session
/// `parent`: its record's `id`, and `parent_id`.
fn name_continuation(session: &mut Session, id: &str, parent: &str) {
    let extra = std::sync::Arc::make_mut(&mut session.extra);
    extra.insert("id".into(), Value::from(id));
    extra.insert("parent_id".into(), Value::from(parent));
    session.id = id.to_string();
}
