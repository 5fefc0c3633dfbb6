//! The pipeline's behaviour: detection parses once, kept fields and skims
//! write what a whole decode writes.

use super::*;
use crate::formats::{DETECT_RECORDS, Record};
use crate::io::Container;
use crate::io::{Input, Payload};
use crate::model::{History, Session, Source};
use crate::policy::{self, Policy};
use crate::tokens::Meter;

fn payloads(text: &str, from: Option<Format>) -> Vec<Payload> {
    payloads_of("a.jsonl", text, from)
}

/// The payloads the reader hands the workers for a file `name` holding `text`.
fn payloads_of(name: &str, text: &str, from: Option<Format>) -> Vec<Payload> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let inputs =
        [Input { path: Some(path), display: name.into(), relative: name.into(), walked: false }];
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
            Payload::Value(_) | Payload::Document { .. } => {
                panic!("record {i}: a line read as a document")
            }
            Payload::Oversized(o) => panic!("record {i}: {}", o.reason()),
        }
    }
    let forced = payloads(&text, Some(Format::OpenAi));
    assert!(forced.iter().all(|p| matches!(p, Payload::Line(_))));
}

/// The elements of a document that detection looked at are moved out and
/// back, not copied: each reaches the workers with its own value, in order,
/// detected or under `--from`.
#[test]
fn document_elements_looked_at_keep_their_values() {
    let session = |i: usize| format!(r#"{{"messages":[{{"role":"user","content":"m{i}"}}]}}"#);
    let n = DETECT_RECORDS + 3;
    let text = format!("[\n{}\n]\n", (0..n).map(session).collect::<Vec<_>>().join(",\n"));
    for from in [None, Some(Format::OpenAi)] {
        let got = payloads_of("a.json", &text, from);
        assert_eq!(got.len(), n, "{from:?}");
        for (i, p) in got.iter().enumerate() {
            let Payload::Value(v) = p else {
                panic!("{from:?}: record {i} is no document element")
            };
            assert_eq!(v["messages"][0]["content"], format!("m{i}"), "{from:?}: record {i}");
        }
    }
}

/// A whole document reaches the workers with the text it was parsed from,
/// and that text's line (what its rejection writes) is its value's compact
/// text, byte for byte: floats at the edge of a round trip, escapes, a key
/// given twice.
#[test]
fn a_document_text_line_is_its_value_line() {
    let text = concat!(
        "{\n  \"messages\": [ {\"role\": \"user\", \"content\": 5} ],\n",
        "  \"x\": 1.0000000000000002, \"y\": 1e300, \"z\": -0.0, \"w\": 0.1,\n",
        "  \"s\": \"\\u00e9\\u0001 \\ud83d\\ude00 \\/\", \"k\": 1, \"k\": 2\n}\n"
    );
    let got = payloads_of("a.json", text, None);
    let [Payload::Document { value, text }] = got.as_slice() else {
        panic!("not one document: {got:?}")
    };
    assert_eq!(text.line(), crate::json_text::line(value));
    let want = r#"{"messages":[{"role":"user","content":5}],"x":1.0000000000000002,"y":1e+300,"z":-0.0,"w":0.1,"s":"é\u0001 😀 /","k":2}"#;
    assert_eq!(String::from_utf8(text.line()).unwrap(), want);
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
    let job = Job {
        input: 0,
        container: Container::Jsonl,
        format: Format::OpenAi,
        history: History::Full,
        records: vec![record],
    };
    let mut out = Vec::new();
    for p in engine.process(job) {
        match p {
            Processed::Session(done) => match done.output {
                Output::Raw(lines) => out.extend(lines),
                Output::Values(values) => {
                    out.extend(values.iter().map(|v| serde_json::to_vec(v).unwrap()));
                }
                Output::Pretty(_) => panic!("a line laid out as a document"),
            },
            other => panic!("{other:?}"),
        }
    }
    out
}

/// What `report` decodes keeping unread fields is, once they are parsed
/// back, what a whole parse decodes.
#[test]
fn sessions_decoded_keeping_unread_fields_are_the_whole_parse_sessions() {
    let mut kept_fields = 0;
    for line in openai_lines() {
        let job = || Job {
            input: 0,
            container: Container::Jsonl,
            format: Format::OpenAi,
            history: History::Full,
            records: vec![RawRecord {
                source: Source::default(),
                payload: Payload::Line(line.clone()),
            }],
        };
        let (kept, kept_errors) = decode_job_with(job(), true);
        let (whole, errors) = decode_job(job());
        assert_eq!(kept_errors, errors);
        // The unread fields, kept as text, parsed back.
        let kept: Vec<Session> = kept
            .into_iter()
            .map(|s| match s {
                super::decode::ReadSession::Whole(s) => s,
                super::decode::ReadSession::Kept(k) => {
                    let (s, n) = k.expanded();
                    kept_fields += n;
                    s
                }
            })
            .collect();
        assert_eq!(kept, whole, "{}", String::from_utf8_lossy(&line));
    }
    assert!(kept_fields > 100, "{kept_fields} fields kept");
}

/// The engine `compact` runs on its inputs in their own dialect, with
/// `policy` and `meter`, handing records over as `handover`.
fn engine_of<'a>(policy: &'a Policy, meter: &'a Meter, handover: Handover) -> Engine<'a> {
    Engine {
        policy,
        auto: None,
        meter,
        caches: crate::policy::Caches::default(),
        to: None,
        redact: false,
        handover,
        shard: None,
        keep_source_fields: false,
        training: false,
    }
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
    let meter = Meter::new(crate::tokens::CounterKind::Hermes, crate::tokens::DEFAULT_IMAGE_TOKENS);
    for mode in [policy::Mode::Lean, policy::Mode::Tiered, policy::Mode::Legacy] {
        let mut policy = Policy::new(mode, 16_000);
        policy.force = true;
        let engine = |lines: bool| {
            engine_of(&policy, &meter, if lines { Handover::Lines } else { Handover::Values })
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
        Output::Values(values) => values.iter().map(|v| serde_json::to_vec(v).unwrap()).collect(),
        Output::Pretty(_) => panic!("a line laid out as a document"),
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
    let exact = Meter::new(crate::tokens::CounterKind::O200k, crate::tokens::DEFAULT_IMAGE_TOKENS);
    let skimmed = lines
        .iter()
        .filter(|l| crate::formats::openai::skim_line(l, &hermes, u64::MAX).is_some())
        .count();
    assert!(skimmed * 10 >= lines.len() * 9, "{skimmed} of {} lines skimmed", lines.len());
    let shard = "1/2".parse::<crate::pipeline::shard::Shard>().unwrap();
    let (mut passed, mut compacted, mut dropped) = (0, 0, 0);
    for meter in [&hermes, &exact] {
        for (window, redact, shard) in
            [(1_000_000, false, None), (4_000, false, None), (4_000, true, Some(shard))]
        {
            let policy = Policy::new(policy::Mode::Lean, window);
            let engine = Engine {
                policy: &policy,
                auto: None,
                meter,
                caches: crate::policy::Caches::default(),
                to: None,
                redact,
                handover: Handover::Lines,
                shard,
                keep_source_fields: false,
                training: false,
            };
            for (i, line) in lines.iter().enumerate() {
                let source = Source { path: "s.jsonl".into(), line: Some(i as u64), index: None };
                let job = Job {
                    input: 0,
                    container: Container::Jsonl,
                    format: Format::OpenAi,
                    history: History::Full,
                    records: vec![RawRecord {
                        source: source.clone(),
                        payload: Payload::Line(line.clone()),
                    }],
                };
                let got: Vec<_> = engine.process(job).into_iter().map(outcome).collect();
                let record = Record { source, value: serde_json::from_slice(line).unwrap() };
                let want: Vec<_> = engine
                    .session(
                        0,
                        Format::OpenAi,
                        super::engine::Form::Lines,
                        History::Full,
                        vec![record],
                        Some(vec![line.clone()]),
                    )
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

/// Under `-o DIR/` a document's records are laid out pretty on the worker
/// ([`Output::Pretty`]): the bytes the writer laid out from the lines it was
/// handed before, for every fixture document (OpenAI, SWE-agent, ToolBench)
/// and its compaction; every other job is handed over as lines, as before.
#[test]
fn a_document_laid_out_by_the_worker_is_its_lines_laid_out() {
    use crate::io::pretty::Pretty;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let inputs = crate::io::expand_inputs(&[root.to_string_lossy().into_owned()]).unwrap();
    let jobs = || {
        let mut reader = JobReader::new(&inputs, None);
        let mut jobs = Vec::new();
        while let Some(item) = reader.next_item() {
            if let Item::Job(job) = item {
                jobs.push(job);
            }
        }
        jobs
    };
    let meter = Meter::new(crate::tokens::CounterKind::Hermes, crate::tokens::DEFAULT_IMAGE_TOKENS);
    let mut policy = Policy::new(policy::Mode::Lean, 16_000);
    policy.force = true;
    let per_input = engine_of(&policy, &meter, Handover::PerInput);
    let lines = engine_of(&policy, &meter, Handover::Lines);
    let (mut documents, mut others) = (0, 0);
    for (a, b) in jobs().into_iter().zip(jobs()) {
        let (got, want) = (per_input.process(a), lines.process(b));
        assert_eq!(got.len(), want.len());
        for (g, w) in got.into_iter().zip(want) {
            let (Processed::Session(g), Processed::Session(w)) = (g, w) else { continue };
            match (g.output, w.output) {
                (Output::Pretty(records), Output::Raw(lines)) => {
                    let laid_out: Vec<Pretty> =
                        lines.iter().map(|l| Pretty::of(l).unwrap()).collect();
                    assert!(records == laid_out, "{}", g.source);
                    documents += 1;
                }
                (Output::Raw(got), Output::Raw(want)) => {
                    assert_eq!(got, want, "{}", g.source);
                    others += 1;
                }
                (got, want) => panic!("{}: {got:?} for {want:?}", g.source),
            }
        }
    }
    assert!(documents >= 5 && others >= 20, "{documents} documents, {others} others");
}
