//! Fuzz harnesses: pure functions of arbitrary bytes that panic when an
//! invariant breaks. `fuzz/fuzz_targets/*` call them under libFuzzer, and
//! `tests/fuzz_seeds.rs` replays the committed seeds through them on stable.
//!
//! - [`decode`](crate::fuzzing::decode): the CLI's reading path (container
//!   sniffing, line splitting, dialect detection or a forced dialect) and
//!   every adapter. Nothing read is lost (each record becomes a session or a
//!   rejected record), an uncompacted session is written back as its input
//!   bytes, and whatever decodes encodes back to the same JSON values and
//!   decodes again to the same session.
//! - [`parquet`]: the Parquet reader on arbitrary bytes: errors, never panics.
//! - [`skim`](crate::fuzzing::skim): every line of the input, skimmed
//!   ([`crate::formats::openai::skim_line`]): a skim that answers gives the id, message
//!   count and tokens that decoding and counting the line give, under both
//!   counters, and stops at a limit of exactly that count.
//! - [`pipeline`]: an arbitrary session, compacted in every mode with `force`
//!   at a small window: every promise of [`crate::policy::verify`] holds, the
//!   output reads back, and compacting twice gives the same result.
//!
//! Not an API: hidden from the docs, and free to change.

use crate::formats::{Format, Record, Unit};
use crate::io::is_session_array;
use crate::io::parquet::ParquetReader;
use crate::io::{Input, Payload, RawRecord};
use crate::model::{History, Session, Source};
use crate::pipeline::{Engine, Handover, Item, Job, JobReader, Output, Processed};
use crate::policy::verify::verify;
use crate::policy::{Mode, Policy, compact, summary};
use crate::report::wire::CompactionObject;
use crate::tokens::{CounterKind, DEFAULT_IMAGE_TOKENS, Meter};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::LazyLock;

/// The default counter (exact BPE), built once per process, without its
/// count cache: a static holds nothing computed from an input.
static METER: LazyLock<Meter> =
    LazyLock::new(|| Meter::new(CounterKind::O200k, DEFAULT_IMAGE_TOKENS).without_cache());

/// At most this many Parquet rows are read per input: a tiny file can
/// legitimately declare millions of null rows, and reading them all is not a hang.
pub const PARQUET_MAX_ROWS: usize = 10_000;

/// Writes `data` to a fresh temporary file named `name` and returns it as an input.
fn temp_input(data: &[u8], name: &str) -> (tempfile::TempDir, Input) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("harness: cannot create a temporary directory: {e}"),
    };
    let path = dir.path().join(name);
    let written = std::fs::File::create(&path).and_then(|mut f| f.write_all(data));
    if let Err(e) = written {
        panic!("harness: cannot write {}: {e}", path.display());
    }
    let input = Input {
        path: Some(path),
        display: name.to_string(),
        relative: PathBuf::from(name),
        walked: false,
    };
    (dir, input)
}

/// A record parsed for the adapter: where it came from, its value, its line bytes.
type Parsed = (Source, Value, Option<Vec<u8>>);

fn copy_record(r: &RawRecord) -> RawRecord {
    let payload = match &r.payload {
        Payload::Line(b) => Payload::Line(b.clone()),
        Payload::Value(v) => Payload::Value(v.clone()),
        Payload::Document { value, text } => {
            Payload::Document { value: value.clone(), text: text.clone() }
        }
        Payload::Parsed { line, value } => {
            Payload::Parsed { line: line.clone(), value: value.clone() }
        }
        // The fuzz inputs are short: no record is over the limit.
        Payload::Oversized(o) => {
            Payload::Oversized(crate::io::record_limit::Oversized { spill: None, ..*o })
        }
    };
    RawRecord { source: r.source.clone(), payload }
}

/// The source a processed item names (`None` for a passed-through item).
fn source_of(p: &Processed) -> Option<&Source> {
    match p {
        Processed::Session(d) => Some(&d.source),
        Processed::Rejected { source, .. } => Some(source),
        Processed::Item(_) | Processed::Unreadable { .. } => None,
    }
}

/// The dialect a selector byte forces (`None`: detect it, as the CLI does by default).
fn selected_format(selector: u8) -> Option<Format> {
    Format::ALL.get(usize::from(selector) % (Format::ALL.len() + 1)).copied()
}

/// A policy that compacts whatever the size (`force`).
fn forced(mode: Mode, window: u64) -> Policy {
    let mut policy = Policy::new(mode, window);
    policy.force = true;
    policy
}

/// The reference agent's estimate, built once per process, without its
/// count cache (as [`METER`]).
static HERMES: LazyLock<Meter> =
    LazyLock::new(|| Meter::new(CounterKind::Hermes, DEFAULT_IMAGE_TOKENS).without_cache());

/// Skimming: each line of `data` is an OpenAI session line. Whatever the skim
/// answers, the decoder must agree with; where it gives up, nothing is checked
/// (the engine then decodes the line, as [`decode`] covers).
pub fn skim(data: &[u8]) {
    use crate::formats::openai::{self, skim_line};
    for line in data.split(|&b| b == b'\n') {
        for meter in [&*METER, &*HERMES] {
            let Some(skimmed) = skim_line(line, meter, u64::MAX) else { continue };
            let value: Value = match serde_json::from_slice(line) {
                Ok(v) => v,
                Err(e) => panic!("skimmed, but a parse fails: {e}"),
            };
            let session = match openai::decode_session(value, Source::default()) {
                Ok(s) => s,
                Err(e) => panic!("skimmed, but the decoder rejects it: {}", e.message),
            };
            let id = skimmed.id.clone().unwrap_or_else(|| Source::default().to_string());
            assert_eq!(id, session.id, "id");
            assert_eq!(skimmed.messages, session.messages.len(), "message count");
            assert_eq!(skimmed.tokens, meter.request(&session), "{:?} tokens", meter.kind());
            assert_eq!(skim_line(line, meter, skimmed.tokens), None, "did not stop at its count");
        }
    }
}

/// The engine as `compactor compact` runs it on JSON Lines, with `policy`.
fn engine(policy: &Policy) -> Engine<'_> {
    Engine {
        policy,
        auto: None,
        meter: &METER,
        caches: crate::policy::Caches::default(),
        to: None,
        redact: false,
        handover: Handover::Lines,
        shard: None,
        keep_source_fields: false,
        training: false,
    }
}

/// As `main` does: a panic the Parquet reader turns into an error is silent.
/// libFuzzer's hook aborts on every panic, caught or not, so without this a
/// corrupt file the reader handles (seed `finding_negative_column_range`)
/// would stop every run; any other panic still reaches libFuzzer's hook.
fn quiet_guarded_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(crate::io::parquet::quiet_guarded_panics);
}

/// Decoding: the first byte picks a dialect (or detection), the rest is an
/// input file read exactly as `compactor compact` reads it.
pub fn decode(data: &[u8]) {
    quiet_guarded_panics();
    let Some((&selector, body)) = data.split_first() else { return };
    let from = selected_format(selector);
    let (_dir, input) = temp_input(body, "fuzz.jsonl");
    let inputs = [input];
    let mut reader = JobReader::new(&inputs, from);
    let policy = forced(Mode::None, 128_000);
    let engine = engine(&policy);
    let mut container = None;
    let mut failed = false;
    let mut lines_read = Vec::new();
    while let Some(item) = reader.next_item() {
        match item {
            Item::Start { container: c, format, .. } => {
                if let Some(f) = from {
                    assert_eq!(format, f, "a forced dialect was not used");
                }
                container = Some(c);
            }
            Item::Failed { .. } => failed = true,
            Item::End { .. } => {}
            Item::Job(job) => {
                lines_read.extend(job.records.iter().filter_map(|r| r.source.line));
                check_job(&engine, job);
            }
        }
    }
    // Plain JSON Lines: every non-blank line was read, once, in order.
    let compressed = body.starts_with(&[0x1f, 0x8b])
        || body.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || body.starts_with(b"PAR1");
    if container == Some(crate::io::Container::Jsonl) && !compressed && !failed {
        let expected: Vec<u64> = body
            .split_inclusive(|&b| b == b'\n')
            .zip(1u64..)
            .filter(|(l, _)| !l.iter().all(u8::is_ascii_whitespace))
            .map(|(_, n)| n)
            .collect();
        assert_eq!(lines_read, expected, "lines read are not the input's non-blank lines");
    }
}

/// One job through the engine (mode `none`) and through the adapter directly.
fn check_job(engine: &Engine<'_>, job: Job) {
    let format = job.format;
    let adapter = format.adapter();
    let copies: Vec<RawRecord> = job.records.iter().map(copy_record).collect();
    let out = engine.process(Job {
        input: job.input,
        container: job.container,
        format,
        history: History::default(),
        records: job.records,
    });

    // Parse the records as the engine does, to know what it must give back.
    let mut parsed: Vec<Parsed> = Vec::new();
    let mut unparsable = Vec::new();
    for r in copies {
        match r.payload {
            Payload::Value(v) | Payload::Document { value: v, .. } => {
                parsed.push((r.source, v, None));
            }
            Payload::Parsed { line, value } => parsed.push((r.source, value, Some(line))),
            Payload::Line(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => parsed.push((r.source, v, Some(bytes))),
                Err(_) => unparsable.push(r.source),
            },
            Payload::Oversized(_) => unparsable.push(r.source),
        }
    }
    for p in &out {
        assert!(!matches!(p, Processed::Item(_)), "a job gave back a file item");
    }
    let rejected_unparsable = out
        .iter()
        .filter(|p| matches!(p, Processed::Rejected { reason, .. } if reason.starts_with("invalid JSON")))
        .count();
    assert!(
        rejected_unparsable >= unparsable.len(),
        "{} lines are not JSON, {rejected_unparsable} rejected as such",
        unparsable.len()
    );
    for s in &unparsable {
        assert!(
            out.iter().any(|p| matches!(p, Processed::Rejected { source, .. } if source == s)),
            "{s}: not JSON, yet not rejected"
        );
    }

    // The units the adapter sees: a record each, an array of sessions split,
    // or the whole file.
    let mut units: Vec<Vec<Parsed>> = Vec::new();
    match format.unit() {
        Unit::Record => {
            for (source, value, raw) in parsed {
                if !adapter.detect(std::slice::from_ref(&value))
                    && value.as_array().is_some_and(|items| is_session_array(items))
                {
                    let Value::Array(items) = value else { continue };
                    for (i, v) in items.into_iter().enumerate() {
                        let src = Source { index: Some(i as u64), ..source.clone() };
                        units.push(vec![(src, v, None)]);
                    }
                } else {
                    units.push(vec![(source, value, raw)]);
                }
            }
        }
        Unit::File if parsed.is_empty() => {}
        Unit::File => units.push(parsed),
    }
    assert_eq!(
        out.len(),
        unparsable.len() + units.len(),
        "{format}: {} unparsable records and {} units gave {} results",
        unparsable.len(),
        units.len(),
        out.len()
    );

    // Each unit: one result, naming one of its records; a session of lines
    // written back unchanged; and the adapter's round trip.
    let mut results = out.iter().filter(
        |p| !matches!(p, Processed::Rejected { source, .. } if unparsable.contains(source)),
    );
    for unit in units {
        let Some(result) = results.next() else { panic!("{format}: a unit has no result") };
        if let Some(src) = source_of(result) {
            assert!(
                // A file dialect's session may name the file as a whole.
                unit.iter().any(|(s, _, _)| s.path == src.path
                    && (s.line == src.line || (src.line.is_none() && format.unit() == Unit::File))),
                "{format}: a result names {src}, not one of its records"
            );
        }
        let decoded = adapter.decode(
            unit.iter().map(|(s, v, _)| Record { source: s.clone(), value: v.clone() }).collect(),
            History::default(),
        );
        match (result, &decoded) {
            (Processed::Session(done), Ok(_)) => {
                let lines: Option<Vec<&Vec<u8>>> =
                    unit.iter().map(|(_, _, r)| r.as_ref()).collect();
                match (&done.output, lines) {
                    (Output::Raw(got), Some(want)) => {
                        assert!(
                            got.iter().eq(want.iter().copied()),
                            "{format}: an uncompacted session was not written back as its lines"
                        );
                    }
                    (Output::Values(_) | Output::Raw(_) | Output::Pretty(_), None) => {}
                    (Output::Values(_) | Output::Pretty(_), Some(_)) => {
                        panic!("{format}: an uncompacted session of lines was re-encoded")
                    }
                }
            }
            (Processed::Rejected { .. }, Err(_)) => {}
            (Processed::Session(_), Err(e)) => {
                panic!("{format}: the engine decoded what the adapter rejects ({e})")
            }
            (Processed::Rejected { .. }, Ok(_)) => {
                panic!("{format}: the engine rejected what the adapter decodes")
            }
            (Processed::Item(_) | Processed::Unreadable { .. }, _) => {
                panic!("{format}: a job gave back a file item")
            }
        }
        if let Ok(session) = decoded {
            round_trip(format, &unit, &session);
        }
    }
}

/// Values as the JSON text of an array of them.
fn json_texts<'a>(values: impl Iterator<Item = &'a Value>) -> String {
    let texts: Vec<String> = values.map(crate::json_text::text).collect();
    format!("[{}]", texts.join(","))
}

/// Encoding a decoded session gives its records back, and they decode to the same session.
fn round_trip(format: Format, unit: &[Parsed], session: &Session) {
    let adapter = format.adapter();
    let encoded = adapter.encode(session, None);
    let values: Vec<&Value> = unit.iter().map(|(_, v, _)| v).collect();
    assert!(
        encoded.iter().eq(values.iter().copied()),
        "{format}: decode -> encode changed the records:\n  in:  {}\n  out: {}",
        json_texts(values.iter().copied()),
        json_texts(encoded.iter())
    );
    let again: Vec<Record> = unit
        .iter()
        .zip(encoded)
        .map(|((s, _, _), value)| Record { source: s.clone(), value })
        .collect();
    match adapter.decode(again, History::default()) {
        Ok(s) => assert!(s == *session, "{format}: decode(encode(s)) != s"),
        Err(e) => panic!("{format}: what encode wrote does not decode: {e}"),
    }
}

/// The Parquet reader on arbitrary bytes (also through the CLI's reader, which
/// sniffs the magic bytes): errors, never a panic or a hang.
pub fn parquet(data: &[u8]) {
    quiet_guarded_panics();
    let (_dir, input) = temp_input(data, "fuzz.parquet");
    let Some(path) = input.path.as_deref() else { return };
    for column in [None, Some("messages")] {
        let Ok(mut reader) = ParquetReader::open(
            path,
            &input.display,
            column,
            None,
            crate::formats::parquet::RESTORE,
        ) else {
            continue;
        };
        let mut rows = 0;
        while let Some(r) = reader.next_record() {
            if let Ok(r) = r
                && let Payload::Value(v) = r.payload
            {
                // A readable row is a record the OpenAI adapter gets: it must not panic either.
                let _ = Format::OpenAi
                    .adapter()
                    .decode(vec![Record { source: r.source, value: v }], History::default());
            }
            rows += 1;
            if rows >= PARQUET_MAX_ROWS {
                break;
            }
        }
    }
}

/// Words the session interpreter writes with: paths, errors, ids, CJK, a
/// secret-looking key, and the markers compaction itself writes and looks for.
const WORDS: &[&str] = &[
    "src/app/main.rs",
    "ok",
    "fix/login-bug",
    "ValueError: bad",
    "#42",
    "a1b2c3d4e5f6",
    "the",
    "日本語のテキスト",
    "test",
    "https://example.com/x?y=1",
    "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "\n",
    "```rust\nfn main() {}\n```",
    summary::SUMMARY_PREFIX,
    summary::SUMMARY_END_MARKER,
    summary::SYSTEM_NOTE,
    "[CONTEXT SUMMARY]:",
    "<tool_call>",
    "\u{0}",
    "🦀",
];

const TOOLS: &[&str] = &["Bash", "Read", "Grep", "Edit", "Write", "mcp__x__y", "web_search", ""];

/// Reads bytes as instructions for building a session.
struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
    /// Words written so far.
    words: usize,
}

/// Words per generated session, at most: past the 2K-8K windows, under the
/// largest (forced compaction needs no overflow). 40,000 gave 2 exec/s under ASan.
const MAX_WORDS: usize = 12_000;

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// A text whose length class and words come from the input.
    fn text(&mut self) -> String {
        let size = self.byte();
        let n = match size >> 6 {
            0 => usize::from(size & 63) / 4,
            1 => usize::from(size & 63) * 2,
            2 => usize::from(size & 63) * 8,
            _ => usize::from(size & 63) * 40,
        };
        // Bounded, so that a session costs milliseconds, not seconds.
        let n = n.min(MAX_WORDS.saturating_sub(self.words));
        self.words += n;
        let seed = usize::from(self.byte());
        let mut s = String::new();
        let mut k = seed;
        for _ in 0..n {
            s.push_str(WORDS[k % WORDS.len()]);
            s.push(' ');
            k = k.wrapping_mul(31).wrapping_add(7) % 1_000_003;
        }
        s
    }
}

/// Builds an OpenAI session record from bytes: text, parallel and broken tool
/// calls (orphan results, missing results, duplicate or empty ids, invalid
/// arguments), images, reasoning, system messages anywhere.
fn interpret(data: &[u8]) -> Value {
    let mut b = Bytes { data, pos: 0, words: 0 };
    let mut msgs = Vec::new();
    if b.byte() & 1 == 1 {
        msgs.push(json!({"role": "system", "content": b.text()}));
    }
    let mut next_id = 0u32;
    let mut pending: Vec<String> = Vec::new();
    while !b.done() && msgs.len() < 400 {
        let op = b.byte();
        match op % 10 {
            0 | 1 => msgs.push(json!({"role": "user", "content": b.text()})),
            2 => msgs.push(json!({"role": "assistant", "content": b.text()})),
            3 | 4 => {
                let n = 1 + usize::from(b.byte() % 4);
                let mut calls = Vec::new();
                for _ in 0..n {
                    let flags = b.byte();
                    let id = match flags % 8 {
                        0 => String::new(),
                        1 => format!("call_{}", next_id.saturating_sub(1)),
                        _ => {
                            next_id += 1;
                            format!("call_{next_id}")
                        }
                    };
                    let name = TOOLS[usize::from(flags >> 3) % TOOLS.len()];
                    let args = if flags & 0x80 == 0 {
                        json!({"command": b.text(), "file_path": "src/a.rs"}).to_string()
                    } else {
                        b.text()
                    };
                    pending.push(id.clone());
                    calls.push(json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": args}}));
                }
                let mut m = json!({"role": "assistant", "content": null, "tool_calls": calls});
                if op & 0x10 != 0 {
                    m["reasoning_content"] = Value::String(b.text());
                }
                if op & 0x20 != 0 {
                    m["content"] = Value::String(b.text());
                }
                msgs.push(m);
            }
            5 => {
                // One result: for the oldest open call, or for no call at all.
                let id = if pending.is_empty() || op & 0x80 != 0 {
                    format!("orphan_{}", b.byte())
                } else {
                    pending.remove(0)
                };
                msgs.push(json!({"role": "tool", "tool_call_id": id, "content": b.text()}));
            }
            6 => {
                // Results for every open call, in order (or reversed).
                let mut ids = std::mem::take(&mut pending);
                if op & 0x80 != 0 {
                    ids.reverse();
                }
                for id in ids {
                    let content = if op & 0x40 != 0 {
                        json!([{"type": "text", "text": b.text()},
                            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])
                    } else {
                        Value::String(b.text())
                    };
                    msgs.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
                }
            }
            7 => msgs.push(json!({"role": "user", "content": [
                {"type": "text", "text": b.text()},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]})),
            8 => {
                let role = ["system", "developer", "function", "exit"][usize::from(op >> 6)];
                msgs.push(json!({"role": role, "content": b.text()}));
            }
            _ => {
                let mut m = json!({"role": "assistant", "content": b.text()});
                m["reasoning_content"] = Value::String(b.text());
                msgs.push(m);
            }
        }
    }
    json!({"messages": msgs})
}

/// Compaction: an arbitrary session, in every mode, forced, at a small window.
/// The first byte picks the window and whether the rest is a session program
/// (`interpret`) or JSON Lines of OpenAI records.
pub fn pipeline(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else { return };
    let window = [2_000, 4_000, 8_000, 16_000][usize::from(selector & 3)];
    let records: Vec<Value> = if selector & 4 == 0 {
        vec![interpret(body)]
    } else {
        body.split(|&b| b == b'\n').filter_map(|l| serde_json::from_slice(l).ok()).take(8).collect()
    };
    for (i, record) in records.iter().enumerate() {
        let source = Source { path: "fuzz.jsonl".into(), line: Some(i as u64 + 1), index: None };
        let Ok(session) = Format::OpenAi.adapter().decode(
            vec![Record { source: source.clone(), value: record.clone() }],
            History::default(),
        ) else {
            continue;
        };
        for mode in [Mode::Lean, Mode::Legacy, Mode::Tiered] {
            check_compaction(&session, mode, window);
        }
    }
    // The whole engine, twice, on the same lines: byte-identical output.
    if selector & 4 != 0 {
        let policy = forced(Mode::Lean, window);
        let engine = engine(&policy);
        let job = || Job {
            input: 0,
            container: crate::io::Container::Jsonl,
            format: Format::OpenAi,
            history: History::default(),
            records: body
                .split(|&b| b == b'\n')
                .take(8)
                .zip(1u64..)
                .map(|(l, n)| RawRecord {
                    source: Source { path: "fuzz.jsonl".into(), line: Some(n), index: None },
                    payload: Payload::Line(l.to_vec()),
                })
                .collect(),
        };
        let render = |out: Vec<Processed>| -> Vec<Vec<Vec<u8>>> {
            out.into_iter()
                .map(|p| match p {
                    Processed::Session(d) => match d.output {
                        Output::Raw(lines) => lines,
                        Output::Values(v) => v.iter().map(|x| x.to_string().into_bytes()).collect(),
                        Output::Pretty(p) => p.into_iter().map(|r| r.into_bytes()).collect(),
                    },
                    Processed::Rejected { reason, raw, .. } => {
                        vec![reason.into_bytes(), raw.held().to_vec()]
                    }
                    Processed::Item(_) | Processed::Unreadable { .. } => Vec::new(),
                })
                .collect()
        };
        let a = render(engine.process(job()));
        let b = render(engine.process(job()));
        assert!(a == b, "the same lines compacted twice gave different bytes");
    }
}

/// One forced compaction: verify's promises, a readable output, determinism.
fn check_compaction(session: &Session, mode: Mode, window: u64) {
    let policy = forced(mode, window);
    let out = compact(session, &policy, &METER);
    let problems = verify(session, &out, &METER);
    if !problems.is_empty() {
        let (i, o) = (&session.messages, &out.session.messages);
        let k = (0..i.len().min(o.len())).find(|&k| i[k] != o[k]).unwrap_or(0);
        let show = |m: Option<&crate::model::Message>| {
            let s = format!("{m:?}");
            s.chars().take(700).collect::<String>()
        };
        panic!(
            "{mode} at {window}: {problems:?}\n{:?}\nfirst difference at {k}:\n  in:  {}\n  out: {}",
            out.compaction,
            show(i.get(k)),
            show(o.get(k))
        );
    }
    let again = compact(session, &policy, &METER);
    assert!(
        again.session == out.session && again.compaction == out.compaction,
        "{mode} at {window}: compacting twice gave different results"
    );
    // What is written reads back, and writes back the same values.
    let object =
        Value::from(&CompactionObject::new(&session.source, &out.compaction, METER.kind().name()));
    let compaction = out.compaction.compacted.then_some(&object);
    let adapter = Format::OpenAi.adapter();
    for value in adapter.encode(&out.session, compaction) {
        let record = Record { source: session.source.clone(), value: value.clone() };
        match adapter.decode(vec![record], History::default()) {
            Ok(back) => {
                let again = adapter.encode(&back, None);
                assert!(
                    again.first() == Some(&value),
                    "{mode} at {window}: the written output reads back as another record:\n  written: {:.1500}\n  again:   {:.1500}",
                    value.to_string(),
                    json_texts(again.iter())
                );
            }
            Err(e) => panic!("{mode} at {window}: the written output does not read back: {e}"),
        }
    }
}
