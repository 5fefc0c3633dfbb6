//! Integration tests of the `anthropic` format (see src/formats/anthropic.rs).
//!
//! The helpers here are shared with `format_sharegpt`: both record dialects are
//! checked the same way, on their fixtures (converted from the OpenAI fixtures by
//! `scripts/make_record_fixtures.py`, an independent Python implementation) and on
//! every OpenAI fixture converted by the Rust adapters.

use crate::util::{
    TestDir, compactor, files_under, fixture, json_lines, line_records, o200k_meter, root, run_ok,
};
use compactor::formats::{DETECT_RECORDS, Format, Record};
use compactor::model::{History, Part, Role, Session, Source};
use compactor::policy::{Mode, Policy, compact, sanitize::validate, verify::verify};
use serde_json::Value;
use std::path::PathBuf;

/// Every `*.jsonl` file in `fixtures/<dir>`, sorted.
pub(crate) fn fixture_files(dir: &str) -> Vec<PathBuf> {
    files_under(&fixture(dir), ".jsonl")
}

pub(crate) fn decode(format: Format, record: &Record) -> Session {
    format
        .adapter()
        .decode(vec![record.clone()], History::Full)
        .unwrap_or_else(|e| panic!("{}: {format} decode: {e}", record.source))
}

pub(crate) fn encode(format: Format, session: &Session) -> Value {
    let mut out = format.adapter().encode(session, None);
    assert_eq!(out.len(), 1, "a record dialect writes one record");
    out.remove(0)
}

/// Every line of the OpenAI fixtures (`fixtures/openai`, `fixtures/edge`
/// except the deliberately broken `bad_lines.jsonl`).
pub(crate) fn openai_fixture_records() -> Vec<Record> {
    let mut out = Vec::new();
    for dir in ["openai", "edge"] {
        for f in fixture_files(dir) {
            if f.file_name().is_some_and(|n| n == "bad_lines.jsonl") {
                continue;
            }
            out.extend(line_records(&f));
        }
    }
    assert!(out.len() >= 10, "{}", out.len());
    out
}

/// Messages, tool calls, tool results and images of a session.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub messages: usize,
    pub calls: usize,
    pub results: usize,
    pub images: usize,
}

pub(crate) fn counts(s: &Session) -> Counts {
    Counts {
        messages: s.messages.len(),
        calls: s.messages.iter().map(|m| m.tool_calls.len()).sum(),
        results: s.messages.iter().filter(|m| m.is_tool_result()).count(),
        images: s
            .messages
            .iter()
            .flat_map(|m| m.content.parts.iter())
            .filter(|p| p.is_image())
            .count(),
    }
}

/// Test 1: decode then encode gives every fixture line back, value for value
/// and (keys in the same order) byte for byte.
pub(crate) fn fixtures_roundtrip(format: Format, dir: &str) -> usize {
    let mut lines = 0;
    for f in fixture_files(dir) {
        for r in line_records(&f) {
            let s = decode(format, &r);
            let out = encode(format, &s);
            assert_eq!(out, r.value, "{}: decode -> encode changed the record", r.source);
            assert_eq!(
                serde_json::to_string(&out).unwrap(),
                serde_json::to_string(&r.value).unwrap(),
                "{}: key order changed",
                r.source
            );
            lines += 1;
        }
    }
    lines
}

/// Test 2: openai -> X -> openai gives the same OpenAI record for every OpenAI
/// fixture line, and X's own detection claims the converted record.
pub(crate) fn openai_through(format: Format) -> Counts {
    let mut total = Counts::default();
    for r in openai_fixture_records() {
        let s = decode(Format::OpenAi, &r);
        let x = encode(format, &s);
        assert_eq!(Format::detect(std::slice::from_ref(&x)), Some(format), "{}: {x}", r.source);
        let back_session = decode(format, &Record { source: r.source.clone(), value: x.clone() });
        let back = encode(Format::OpenAi, &back_session);
        assert_eq!(back, r.value, "{}: openai -> {format} -> openai changed it", r.source);
        let text = x.to_string();
        assert!(!text.contains("compactor:slot"), "{}: a slot marker leaked", r.source);
        let c = counts(&back_session);
        assert_eq!(c, counts(&s), "{}", r.source);
        total.messages += c.messages;
        total.calls += c.calls;
        total.results += c.results;
        total.images += c.images;
    }
    total
}

/// The role an OpenAI message has after the Python conversion into `format`.
fn converted_role(format: Format, role: &Role) -> Role {
    match (format, role) {
        (Format::Anthropic, Role::Developer) => Role::User,
        (Format::ShareGpt, Role::Developer) => Role::System,
        (_, r) => r.clone(),
    }
}

fn parsed(args: &str) -> Value {
    serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.to_string()))
}

/// Test 3: each converted fixture decodes into the messages of the OpenAI slice
/// it was made from: roles, texts, tool call ids / names / arguments, result
/// ids and images.
pub(crate) fn fixtures_match_sources(format: Format, dir: &str) -> Counts {
    let mut total = Counts::default();
    let mut checked = 0;
    for f in fixture_files(dir) {
        for r in line_records(&f) {
            let Some(from) = r.value.pointer("/meta/converted_from").and_then(Value::as_str) else {
                continue;
            };
            let n =
                r.value.pointer("/meta/openai_messages").and_then(Value::as_u64).unwrap() as usize;
            let src = line_records(&root().join(from)).remove(0);
            let mut want = decode(Format::OpenAi, &src);
            want.messages.truncate(n);
            let got = decode(format, &r);
            assert_eq!(counts(&got), counts(&want), "{}", r.source);
            for (i, (g, w)) in got.messages.iter().zip(&want.messages).enumerate() {
                let at = format!("{} message {i}", r.source);
                assert_eq!(g.role, converted_role(format, &w.role), "{at}");
                assert_eq!(g.text_content(), w.text_content(), "{at}");
                assert_eq!(g.tool_call_id, w.tool_call_id, "{at}");
                let images = |m: &compactor::model::Message| -> Vec<_> {
                    m.content
                        .parts
                        .iter()
                        .filter_map(|p| match p {
                            Part::Image { info, .. } => Some(info.clone()),
                            _ => None,
                        })
                        .collect()
                };
                assert_eq!(images(g), images(w), "{at}");
                assert_eq!(g.tool_calls.len(), w.tool_calls.len(), "{at}");
                for (gc, wc) in g.tool_calls.iter().zip(w.tool_calls.iter()) {
                    assert_eq!((&gc.id, &gc.name), (&wc.id, &wc.name), "{at}");
                    assert_eq!(parsed(&gc.arguments), parsed(&wc.arguments), "{at}");
                }
            }
            // As valid a request as the source (the SWE-agent run reuses call ids).
            assert_eq!(validate(&got.messages), validate(&want.messages), "{}", r.source);
            let c = counts(&got);
            total.messages += c.messages;
            total.calls += c.calls;
            total.results += c.results;
            total.images += c.images;
            checked += 1;
        }
    }
    assert_eq!(checked, 7, "one converted session per OpenAI source");
    total
}

/// Test 4: every fixture file of the dialect is detected as it; no OpenAI
/// fixture is claimed by it.
pub(crate) fn detection(format: Format, dir: &str) {
    for f in fixture_files(dir) {
        let first: Vec<Value> =
            line_records(&f).into_iter().take(DETECT_RECORDS).map(|r| r.value).collect();
        assert_eq!(Format::detect(&first), Some(format), "{}", f.display());
    }
    for d in ["openai", "edge"] {
        for f in fixture_files(d) {
            let text = std::fs::read_to_string(&f).unwrap();
            let first: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .take(DETECT_RECORDS)
                .collect();
            assert!(!format.adapter().detect(&first), "{format} claims {}", f.display());
        }
    }
}

/// Test 5: forced lean compaction at a 16K window keeps its promises on every
/// fixture session, and the output reads back (and writes again the same).
pub(crate) fn compaction(format: Format, dir: &str) -> (usize, u64, u64) {
    let meter = o200k_meter();
    let mut policy = Policy::new(Mode::Lean, 16_000);
    policy.force = true;
    let (mut compacted, mut before, mut after) = (0, 0, 0);
    for f in fixture_files(dir) {
        for r in line_records(&f) {
            let s = decode(format, &r);
            let out = compact(&s, &policy, &meter);
            let problems = verify(&s, &out, &meter);
            assert!(problems.is_empty(), "{}: {problems:?}", r.source);
            let written =
                format.adapter().encode(&out.session, Some(&serde_json::json!({"mode": "lean"})));
            let again =
                decode(format, &Record { source: r.source.clone(), value: written[0].clone() });
            assert_eq!(again.messages.len(), out.session.messages.len(), "{}", r.source);
            assert_eq!(counts(&again), counts(&out.session), "{}", r.source);
            assert!(
                validate(&again.messages).is_empty() || !validate(&s.messages).is_empty(),
                "{}",
                r.source
            );
            assert_eq!(
                format.adapter().encode(&again, Some(&serde_json::json!({"mode": "lean"}))),
                written,
                "{}",
                r.source
            );
            if out.compaction.compacted {
                compacted += 1;
                assert_eq!(written[0]["compaction"]["mode"], "lean");
            }
            before += out.compaction.tokens_before;
            after += out.compaction.tokens_after;
        }
    }
    (compacted, before, after)
}

/// Test 6: the CLI converts a file of the dialect to `to` and the output reads
/// back (detected as `to`) with one session per input line.
pub(crate) fn cli_converts(file: &str, to: Format, extra: &[&str]) -> Vec<Session> {
    let dir = TestDir::new();
    let out = dir.join("out.jsonl");
    run_ok(
        compactor()
            .args(["compact", "-q", "--keep-source-fields", "--to", to.name(), "-o"])
            .arg(&out)
            .args(extra)
            .arg(fixture(file)),
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let values = json_lines(&text);
    assert_eq!(values.len(), line_records(&fixture(file)).len(), "{file} --to {to}");
    assert_eq!(Format::detect(&values), Some(to), "{file} --to {to}");
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            decode(
                to,
                &Record {
                    source: Source { path: "out".into(), line: Some(i as u64 + 1), index: None },
                    value: v,
                },
            )
        })
        .collect()
}

#[test]
fn fixtures_decode_and_encode_identically() {
    let n = fixtures_roundtrip(Format::Anthropic, "anthropic");
    assert_eq!(n, 9);
}

#[test]
fn openai_fixtures_survive_anthropic_and_back() {
    let c = openai_through(Format::Anthropic);
    println!("openai -> anthropic -> openai: {c:?}");
    assert!(c.calls > 200 && c.images >= 3, "{c:?}");
}

#[test]
fn converted_fixtures_read_as_their_openai_sources() {
    let c = fixtures_match_sources(Format::Anthropic, "anthropic");
    println!("anthropic fixtures vs OpenAI slices: {c:?}");
    assert!(c.calls > 100 && c.results == c.calls && c.images >= 5, "{c:?}");
}

#[test]
fn fixture_files_are_detected_as_anthropic() {
    detection(Format::Anthropic, "anthropic");
}

#[test]
fn forced_lean_compaction_keeps_its_promises() {
    let (compacted, before, after) = compaction(Format::Anthropic, "anthropic");
    println!(
        "anthropic fixtures, lean 16K forced: {compacted} compacted, {before} -> {after} tokens"
    );
    assert!(compacted >= 6, "{compacted}");
    assert!(after * 10 < before * 9, "{before} -> {after}");
}

#[test]
fn edge_cases_decode_as_documented() {
    let recs = line_records(&fixture("anthropic/edge_cases.jsonl"));
    let s = decode(Format::Anthropic, &recs[0]);
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "tool",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(s.messages[0].content.parts.len(), 2, "system blocks kept as parts");
    assert!(
        matches!(&s.messages[2].content.parts[0], Part::Reasoning(raw) if raw["signature"] == "EqQBCkYIBxgCKkBsig0001")
    );
    assert!(
        matches!(&s.messages[4].content.parts[0], Part::Reasoning(raw) if raw["type"] == "redacted_thinking")
    );
    assert_eq!(s.messages[4].tool_calls.len(), 2);
    assert_eq!(s.messages[5].extra["is_error"], true);
    assert!(s.messages[6].content.parts[0].is_image());
    assert_eq!(s.messages[7].text_content(), "Note: do not bump any dependency versions.");
    assert_eq!(s.messages[5].extra["anthropic_layout"], serde_json::json!({"with_user": true}));
    assert!(validate(&s.messages).is_empty());
    // Text between tool_use blocks, and a user text before its results.
    let s = decode(Format::Anthropic, &recs[1]);
    let a = &s.messages[2];
    assert_eq!(a.text_content(), "我先搜索日志。\n同时查看配置文件。");
    assert_eq!(a.tool_calls.len(), 2);
    assert_eq!(
        a.extra["anthropic_layout"]["order"],
        serde_json::json!(["content", "tool_use", "content", "tool_use"])
    );
    assert_eq!(
        s.messages[3].extra["anthropic_layout"]["order"],
        serde_json::json!(["content", "tool_result", "tool_result"])
    );
    assert_eq!(s.messages[5].text_content(), "(结果如下)");
    assert_eq!(s.extra["metadata"]["user_id"], "user-7f3a");
    // To OpenAI, the layout marker is the only added field.
    let o = encode(Format::OpenAi, &s);
    assert_eq!(
        o["messages"][2]["tool_calls"][1]["function"]["arguments"],
        serde_json::json!({"file_path": "config/设置.toml"})
    );
    assert_eq!(o["messages"][3]["role"], "tool");
}

#[test]
fn cli_converts_to_openai_and_sharegpt() {
    for to in [Format::OpenAi, Format::ShareGpt] {
        let sessions = cli_converts(
            "anthropic/claude_code_task54.jsonl",
            to,
            &["--force", "--window", "16000"],
        );
        assert_eq!(sessions.len(), 1);
        assert!(
            sessions[0].extra.contains_key("compaction"),
            "compacted output carries its record"
        );
        assert!(validate(&sessions[0].messages).is_empty());
    }
    // Without compaction, the CLI's conversion is the adapters' conversion.
    let all = cli_converts("anthropic/edge_cases.jsonl", Format::OpenAi, &["--mode", "none"]);
    for (got, r) in all.iter().zip(line_records(&fixture("anthropic/edge_cases.jsonl"))) {
        let want = decode(
            Format::OpenAi,
            &Record {
                source: r.source.clone(),
                value: encode(Format::OpenAi, &decode(Format::Anthropic, &r)),
            },
        );
        assert_eq!(got.messages, want.messages);
    }
    let back = cli_converts("anthropic/images.jsonl", Format::ShareGpt, &["--mode", "none"]);
    assert_eq!(counts(&back[0]).images, 5);
}

/// Test 7 (real corpus): every OpenAI-shaped corpus session goes to `format`
/// and back unchanged, and its lean compaction (200K window) keeps its
/// promises and reads back from `format`. Returns sessions, counts, and tokens
/// before / after compaction.
pub(crate) fn corpus_through(format: Format) -> Option<(usize, Counts, u64, u64)> {
    let dir = crate::corpus::corpus()?;
    let meter = o200k_meter();
    let policy = Policy::new(Mode::Lean, 200_000);
    let mut total = Counts::default();
    let (mut sessions, mut before, mut after) = (0, 0, 0);
    for (from, s) in crate::corpus::sessions(&dir.join("agent-trajectory-json")) {
        assert_eq!(from, "openai");
        let want = encode(Format::OpenAi, &s);
        let x = encode(format, &s);
        let back = decode(format, &Record { source: s.source.clone(), value: x.clone() });
        assert_eq!(
            encode(Format::OpenAi, &back),
            want,
            "{}: openai -> {format} -> openai",
            s.source
        );
        assert_eq!(encode(format, &back), x, "{}: {format} -> {format}", s.source);
        let c = counts(&back);
        assert_eq!(c, counts(&s), "{}", s.source);
        let out = compact(&back, &policy, &meter);
        let problems = verify(&back, &out, &meter);
        assert!(problems.is_empty(), "{}: {problems:?}", s.source);
        let written = encode(format, &out.session);
        let again = decode(format, &Record { source: s.source.clone(), value: written });
        assert_eq!(counts(&again), counts(&out.session), "{}", s.source);
        assert_eq!(validate(&again.messages), validate(&out.session.messages), "{}", s.source);
        before += out.compaction.tokens_before;
        after += out.compaction.tokens_after;
        total.messages += c.messages;
        total.calls += c.calls;
        total.results += c.results;
        total.images += c.images;
        sessions += 1;
    }
    Some((sessions, total, before, after))
}

#[test]
#[ignore = "needs ../shared/corpus (real transcripts, outside the repository); .ci/run runs it with --ignored where the corpus is"]
fn corpus_openai_sessions_survive_anthropic_and_back() {
    let Some((sessions, total, before, after)) = corpus_through(Format::Anthropic) else {
        panic!("{}", crate::corpus::ABSENT)
    };
    println!(
        "corpus agent-trajectory-json via anthropic: {sessions} sessions, {total:?}, identical; lean: {before} -> {after} tokens"
    );
    assert_eq!(sessions, 5);
    assert!(after < before / 2, "{before} -> {after}");
}

/// A top-level `system` field that is not the prompt (kept by
/// `--keep-source-fields`) never takes the prompt's key, before or after the
/// messages: the Anthropic record's `system` is the prompt, the field rides as
/// `openai_system`, and converting back gives the input byte for byte.
#[test]
fn a_source_system_field_never_replaces_the_prompt() {
    let dir = TestDir::new();
    let prompt = r#"{"role":"system","content":"You are helpful."},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}"#;
    for line in [
        format!(r#"{{"messages":[{prompt}],"system":{{"note":"x"}}}}"#),
        format!(r#"{{"system":{{"note":"x"}},"messages":[{prompt}]}}"#),
    ] {
        let input = dir.write("in.jsonl", format!("{line}\n"));
        let (there, back) = (dir.join("there.jsonl"), dir.join("back.jsonl"));
        let convert = |from: &PathBuf, to: &str, out: &PathBuf| {
            run_ok(
                compactor()
                    .args(["compact", "-q", "--keep-source-fields", "--to", to, "-o"])
                    .arg(out)
                    .arg(from),
            );
        };
        convert(&input, "anthropic", &there);
        let written = json_lines(&std::fs::read_to_string(&there).unwrap());
        assert_eq!(written[0]["system"], "You are helpful.", "{line}");
        assert_eq!(written[0]["openai_system"], serde_json::json!({"note": "x"}), "{line}");
        convert(&there, "openai", &back);
        assert_eq!(std::fs::read_to_string(&back).unwrap(), format!("{line}\n"));
    }
}
