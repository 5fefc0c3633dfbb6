//! Hostile and broken input (SPEC 10): none of it may panic, hang, or take the
//! good records of the same run down with it. Each bad record is named
//! `file:line: reason`, written unchanged to `--rejects`, and makes the run exit 3.

use crate::util::{TestDir, compactor, json_lines, run_code};
use std::io::Write;
use std::path::Path;
use std::process::Output;

const GOOD: &str = r#"{"id":"good","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#;

/// Runs `compact` on `input` (forced, small window) and returns the output,
/// the written sessions and the rejects file's lines.
fn compact(dir: &TestDir, input: &Path) -> (Output, Vec<serde_json::Value>, Vec<u8>) {
    let out = dir.join("out.jsonl");
    let rejects = dir.join("rejects.jsonl");
    let result = compactor()
        .args(["compact", "--force", "--window", "32000", "-q"])
        .arg(input)
        .arg("-o")
        .arg(&out)
        .arg("--rejects")
        .arg(&rejects)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert!(matches!(result.status.code(), Some(0 | 3)), "exit {:?}: {stderr}", result.status);
    let sessions = std::fs::read_to_string(&out).map(|t| json_lines(&t)).unwrap_or_default();
    let rejected = std::fs::read(&rejects).unwrap_or_default();
    (result, sessions, rejected)
}

/// A file of `GOOD`, then `bad`, then `GOOD`: the bad line is line 2.
fn sandwich(dir: &TestDir, name: &str, bad: &[u8]) -> std::path::PathBuf {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(GOOD.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(bad);
    bytes.push(b'\n');
    bytes.extend_from_slice(GOOD.as_bytes());
    bytes.push(b'\n');
    dir.write(name, bytes)
}

fn assert_line_2_rejected(name: &str, bad: &[u8]) {
    let dir = TestDir::new();
    let input = sandwich(&dir, name, bad);
    let (result, sessions, rejected) = compact(&dir, &input);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{name}: {stderr}");
    assert!(stderr.contains(&format!("{name}:2:")), "{name}: names file and line: {stderr}");
    assert_eq!(sessions.len(), 2, "{name}: both good records are written");
    let mut want = bad.to_vec();
    want.push(b'\n');
    assert_eq!(rejected, want, "{name}: the bad record is kept unchanged");
}

#[test]
fn invalid_utf8_is_one_rejected_record() {
    assert_line_2_rejected(
        "utf8.jsonl",
        b"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}",
    );
}

#[test]
fn a_lone_surrogate_escape_is_one_rejected_record() {
    assert_line_2_rejected(
        "surrogate.jsonl",
        br#"{"messages":[{"role":"user","content":"bad \ud800 escape"}]}"#,
    );
}

#[test]
fn a_raw_nul_byte_is_one_rejected_record() {
    assert_line_2_rejected(
        "nul.jsonl",
        b"{\"messages\":[{\"role\":\"user\",\"content\":\"a\x00b\"}]}",
    );
}

#[test]
fn json_nested_100000_deep_is_rejected_without_overflowing_the_stack() {
    let mut deep = Vec::new();
    deep.extend(std::iter::repeat_n(b'[', 100_000));
    deep.extend(std::iter::repeat_n(b']', 100_000));
    assert_line_2_rejected("deep.jsonl", &deep);
}

#[test]
fn wrong_types_where_text_was_expected_never_panic() {
    for (i, content) in ["null", "42", r#"{"a":1}"#, "true", r#"[1,2]"#].iter().enumerate() {
        let dir = TestDir::new();
        let bad = format!(r#"{{"messages":[{{"role":"user","content":{content}}}]}}"#);
        let input = sandwich(&dir, &format!("types{i}.jsonl"), bad.as_bytes());
        let (_, sessions, _) = compact(&dir, &input);
        assert!(sessions.len() >= 2, "content {content}: the good records survive");
    }
}

#[test]
fn duplicate_keys_keep_one_value() {
    let dir = TestDir::new();
    let dup = r#"{"messages":[{"role":"user","content":"first"}],"messages":[{"role":"user","content":"second"}]}"#;
    let input = dir.write("dup.jsonl", format!("{dup}\n"));
    let (result, sessions, _) = compact(&dir, &input);
    assert_eq!(result.status.code(), Some(0));
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        sessions[0]["messages"][0]["content"], "second",
        "the last value wins, as in JSON.parse"
    );
}

#[test]
fn broken_tool_call_structure_compacts_into_a_valid_request() {
    // Calls without ids, duplicate ids, a result before its call, a result for a call
    // that never happened; plus enough bulk that compaction really runs.
    let mut messages = vec![
        serde_json::json!({"role": "system", "content": "sys"}),
        serde_json::json!({"role": "user", "content": "start"}),
        serde_json::json!({"role": "tool", "tool_call_id": "early", "content": "result before its call"}),
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}},
            {"id": "dup", "type": "function", "function": {"name": "Bash", "arguments": "{}"}},
            {"id": "dup", "type": "function", "function": {"name": "Read", "arguments": "{}"}},
            {"id": "early", "type": "function", "function": {"name": "Read", "arguments": "not json"}}]}),
        serde_json::json!({"role": "tool", "tool_call_id": "dup", "content": "ok"}),
        serde_json::json!({"role": "tool", "tool_call_id": "ghost", "content": "nobody asked"}),
    ];
    for i in 0..24 {
        let words = format!("turn {i} ").repeat(1_500);
        messages.push(serde_json::json!({"role": "user", "content": format!("ask {i}")}));
        messages.push(serde_json::json!({"role": "assistant", "content": words}));
    }
    messages.push(serde_json::json!({"role": "user", "content": "last"}));
    let session = serde_json::json!({ "messages": messages });
    let dir = TestDir::new();
    let input = dir.write("calls.jsonl", format!("{session}\n"));
    let (result, sessions, _) = compact(&dir, &input);
    assert_eq!(result.status.code(), Some(0), "{}", String::from_utf8_lossy(&result.stderr));
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].get("compaction").is_some(), "the session was compacted");
    // Every tool result that is kept answers a call that precedes it.
    let msgs = sessions[0]["messages"].as_array().unwrap();
    let mut seen = std::collections::HashSet::new();
    for m in msgs {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            if let Some(id) = c["id"].as_str() {
                seen.insert(id.to_string());
            }
        }
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            assert!(seen.contains(id), "result {id} without a preceding call");
        }
    }
    assert_eq!(msgs.last().unwrap()["content"], "last");
}

#[test]
fn an_empty_file_is_no_sessions_and_no_error() {
    let dir = TestDir::new();
    let input = dir.write("empty.jsonl", "");
    let (result, sessions, rejected) = compact(&dir, &input);
    assert_eq!(result.status.code(), Some(0));
    assert!(sessions.is_empty());
    assert!(rejected.is_empty());
}

fn truncated_stream(name: &str, compressed: Vec<u8>) {
    let dir = TestDir::new();
    let cut = compressed.len() / 2;
    let input = dir.write(name, &compressed[..cut]);
    let (result, _, _) = compact(&dir, &input);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(name), "the error names the file: {stderr}");
}

#[test]
fn truncated_gzip_and_zstd_streams_are_errors_naming_the_file() {
    let mut plain = String::new();
    for _ in 0..2_000 {
        plain.push_str(GOOD);
        plain.push('\n');
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    truncated_stream("cut.jsonl.gz", gz.finish().unwrap());
    truncated_stream("cut.jsonl.zst", zstd::encode_all(plain.as_bytes(), 3).unwrap());
}

#[test]
fn a_session_of_a_million_tiny_messages_compacts() {
    let mut line = String::with_capacity(40_000_000);
    line.push_str(r#"{"id":"huge","messages":[{"role":"system","content":"sys"}"#);
    for i in 0..1_000_000 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        line.push_str(&format!(r#",{{"role":"{role}","content":"m{i}"}}"#));
    }
    line.push_str("]}\n");
    let dir = TestDir::new();
    let input = dir.write("million.jsonl", line);
    let (result, sessions, _) = compact(&dir, &input);
    assert_eq!(result.status.code(), Some(0), "{}", String::from_utf8_lossy(&result.stderr));
    let msgs = sessions[0]["messages"].as_array().unwrap();
    assert!(sessions[0].get("compaction").is_some(), "the session was compacted");
    assert!(msgs.len() < 5_000, "{} messages after compaction", msgs.len());
    assert_eq!(msgs.last().unwrap()["content"], "m999999");
}

/// One bad record of each kind in one run: the compact summary and the report
/// count them by kind, and the good records all get through.
#[test]
fn rejects_are_counted_by_kind_in_the_summary_and_the_report() {
    let dir = TestDir::new();
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    // Line 2 is not JSON; line 3 is JSON but not a session (messages is a number).
    let bad = format!("{GOOD}\n{{\"messages\": [\n{{\"id\":\"x\",\"messages\":7}}\n{GOOD}\n");
    std::fs::write(inputs.join("a.jsonl"), bad).unwrap();
    // A gzip stream cut in the middle: the rest of the file cannot be read.
    let mut plain = String::new();
    for _ in 0..2_000 {
        plain.push_str(GOOD);
        plain.push('\n');
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(inputs.join("b.jsonl.gz"), &gz[..gz.len() / 2]).unwrap();

    let out = compactor()
        .args(["compact", "--window", "32000", "-o"])
        .arg(dir.join("out/"))
        .arg(&inputs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("3 records rejected (1 invalid_json, 1 malformed, 1 unreadable)"),
        "{stderr}"
    );

    let report = dir.join("report");
    let out = compactor()
        .args(["report", "--window", "32000", "-q", "-o"])
        .arg(&report)
        .arg(&inputs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["rejected"],
        serde_json::json!({"total": 3, "by_kind": {"invalid_json": 1, "malformed": 1, "unreadable": 1}})
    );
    // Good records: two in a.jsonl, and every one before the cut in b.jsonl.
    assert!(summary["sessions"].as_u64().unwrap() > 2, "{summary}");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("3 records rejected (1 invalid_json, 1 malformed, 1 unreadable)"), "{md}");
}

/// A broken first line: the file is still read as JSON Lines (by its name, or
/// on standard input because the line does not end on an opener), so only that
/// line is rejected. Found by the 200 MB cut-line test: the whole file used to
/// be read as one document and rejected, good records and all.
#[test]
fn a_broken_first_line_is_one_rejected_record_not_the_whole_file() {
    let dir = TestDir::new();
    let bad = br#"{"id":"x","messages":[{"role":"user","content":"cut here"#;
    let mut bytes = bad.to_vec();
    bytes.push(b'\n');
    bytes.extend_from_slice(GOOD.as_bytes());
    bytes.push(b'\n');
    let input = dir.write("first.jsonl", &bytes);
    let (result, sessions, rejected) = compact(&dir, &input);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("first.jsonl:1:"), "{stderr}");
    assert_eq!(sessions.len(), 1, "the good record survives");
    assert_eq!(rejected, [bad.as_slice(), b"\n"].concat());

    let out = crate::util::run_with_stdin(
        {
            let mut c = compactor();
            c.args(["compact", "-q", "-"]);
            c
        },
        &bytes,
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json_lines(&String::from_utf8_lossy(&out.stdout)).len(), 1);
}

/// An input that cannot be opened (a dangling link found while walking a
/// directory; as root, permissions cannot make a file unreadable) fails alone:
/// named, counted as unreadable, the other inputs written. A directory given
/// as an input is walked; one with no transcripts is a usage error naming it.
#[cfg(unix)]
#[test]
fn an_unopenable_file_fails_alone_and_a_directory_input_is_walked() {
    let dir = TestDir::new();
    let inputs = dir.join("in");
    std::fs::create_dir_all(inputs.join("sub.jsonl")).unwrap();
    std::fs::write(inputs.join("good.jsonl"), format!("{GOOD}\n")).unwrap();
    std::fs::write(inputs.join("sub.jsonl").join("inner.jsonl"), format!("{GOOD}\n")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere.jsonl"), inputs.join("dangling.jsonl")).unwrap();
    let out =
        compactor().args(["compact", "-o"]).arg(dir.join("out/")).arg(&inputs).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("dangling.jsonl: "), "names the file: {stderr}");
    assert!(stderr.contains("1 record rejected (1 unreadable)"), "{stderr}");
    assert!(dir.join("out/good.jsonl").is_file());
    assert!(dir.join("out/sub.jsonl/inner.jsonl").is_file(), "the directory was walked");
    assert!(!dir.join("out/dangling.jsonl").exists());

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = compactor().args(["compact", "-q"]).arg(&empty).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no .jsonl or .json files in this directory"), "{stderr}");
}

/// Fuzz finding (`parquet` target): a corrupt column chunk makes the parquet
/// crate panic; the reader turns that into an error naming the file, and the
/// user sees no panic message or backtrace.
#[test]
fn fuzz_parquet_negative_column_range_is_an_error_not_a_panic() {
    let seed = crate::util::root().join("fuzz/seeds/parquet/finding_negative_column_range.parquet");
    let out = compactor()
        .env("RUST_BACKTRACE", "1")
        .args(["compact", "-q", "-o", "-"])
        .arg(&seed)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("finding_negative_column_range.parquet"), "{stderr}");
    assert!(stderr.contains("the Parquet decoder failed on this file"), "{stderr}");
    assert!(!stderr.contains("panicked"), "no panic message: {stderr}");
}

/// Issue 27: an unreadable first record is named by its line and its fault,
/// not "cannot tell the format"; a JSON error gives the column of the line.
#[test]
fn an_undetectable_file_names_its_first_bad_record() {
    let dir = TestDir::new();
    let cases = [
        ("not-json.jsonl", "not json\n", ":1: invalid JSON: expected ident (column 2)"),
        (
            "bad-messages.jsonl",
            "{\"messages\": 5}\n",
            ":1: not a session (read as openai): `messages` is not an array",
        ),
        (
            "bad-conversations.jsonl",
            "{\"conversations\": 5}\n",
            ":1: not a session (read as sharegpt):",
        ),
    ];
    for (name, text, want) in cases {
        let p = dir.write(name, text);
        let out = run_code(compactor().arg("compact").arg(&p), 3);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{}{want}", p.display())), "{name}: {stderr}");
        assert!(stderr.contains("0 sessions from 1 input, 0 compacted"), "{stderr}");
        assert!(stderr.contains("1 record rejected"), "{stderr}");
    }
}

/// Issue 27: an input that fails entirely leaves no (empty) output file.
#[test]
fn nothing_readable_writes_no_output_file() {
    let dir = TestDir::new();
    let p = dir.write("bad.jsonl", "not json\n");
    let out = dir.join("out.jsonl");
    let res = run_code(compactor().arg("compact").arg(&p).arg("-o").arg(&out), 3);
    assert!(!out.exists(), "an empty output was left");
    assert!(String::from_utf8_lossy(&res.stderr).contains("was not written"));
    // An empty input is a file of no sessions: written, empty.
    let empty = dir.write("empty.jsonl", "");
    run_code(compactor().arg("compact").arg(&empty).arg("-o").arg(&out), 0);
    assert_eq!(std::fs::read(&out).unwrap(), b"");
}

/// Issue 27: `-o` inside an input directory is refused before anything is written.
#[test]
fn an_output_inside_an_input_directory_is_refused() {
    let dir = TestDir::new();
    dir.write("in/a.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n");
    for out in ["in/out/", "in/sub/out.jsonl"] {
        let res = run_code(
            compactor().arg("compact").arg(dir.join("in")).arg("-o").arg(dir.join(out)),
            2,
        );
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(stderr.contains("is inside the input directory"), "{out}: {stderr}");
        assert!(!dir.join(out).exists(), "{out} was written");
    }
    run_code(compactor().arg("compact").arg(dir.join("in")).arg("-o").arg(dir.join("out/")), 0);
}

/// A line of one session whose user message is `len` bytes of `fill`, the
/// line being a little longer (its JSON around the text).
fn long_line(len: usize, fill: &str) -> String {
    let text: String = fill.repeat(len / fill.len() + 1)[..len].to_string();
    format!(r#"{{"id":"long","messages":[{{"role":"user","content":"{text}"}}]}}"#)
}

/// Issue 36 point 7: a record over `--max-record-bytes`, gzip-compressed and
/// in the middle of its file, is rejected as `oversized` naming its line and
/// length, copied whole (not held) into `--rejects`, masked there under
/// `--redact`, and the records after it are read. Every reading command
/// rejects it (exit 3). On the binary before the limit, the record was read
/// and compacted (exit 0).
#[test]
fn a_record_over_max_record_bytes_is_rejected_whole_and_the_rest_is_read() {
    let dir = TestDir::new();
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";
    let big = long_line(3_000_000, &format!("lorem ipsum {secret} dolor "));
    let input = dir.join("in.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&input).unwrap(),
        flate2::Compression::fast(),
    );
    for line in [GOOD, &big, &GOOD.replace("\"good\"", "\"after\"")] {
        gz.write_all(line.as_bytes()).unwrap();
        gz.write_all(b"\r\n").unwrap();
    }
    gz.finish().unwrap();
    let why =
        format!("in.jsonl.gz:2: record of {} bytes over --max-record-bytes (1048576)", big.len());
    for redact in [false, true] {
        let (out, rejects) = (dir.join("out.jsonl"), dir.join("rejects.jsonl"));
        let mut cmd = compactor();
        cmd.args(["compact", "--max-record-bytes", "1MiB", "-o"])
            .arg(&out)
            .arg("--rejects")
            .arg(&rejects)
            .arg(&input);
        if redact {
            cmd.arg("--redact");
        }
        let result = run_code(&mut cmd, 3);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains(&why), "{stderr}");
        assert!(stderr.contains("1 record rejected (1 oversized)"), "{stderr}");
        let ids: Vec<_> = json_lines(&std::fs::read_to_string(&out).unwrap())
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, ["good", "after"], "the records around it are kept");
        let kept = std::fs::read(&rejects).unwrap();
        let want =
            if redact { big.replace(secret, "[REDACTED:anthropic_key]") } else { big.clone() };
        assert!(kept == format!("{want}\n").as_bytes(), "rejects hold the record, redact={redact}");
        let sources = std::fs::read_to_string(dir.join("rejects.sources.jsonl")).unwrap();
        let sources = json_lines(&sources);
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0]["kind"], "oversized");
        assert_eq!(sources[0]["line"], 1);
    }
    for command in [&["stats"][..], &["anchors"], &["replay", "--window", "32000"]] {
        let result = run_code(
            compactor().args(command).args(["--max-record-bytes", "1048576"]).arg(&input),
            3,
        );
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains(&why), "{command:?}: {stderr}");
    }
    // Under the default limit (256 MiB) the same file is read whole.
    run_code(compactor().args(["compact", "-q", "-o"]).arg(dir.join("all.jsonl")).arg(&input), 0);
}

/// A file read as one JSON document counts whole against the limit, and a
/// first line over it does not stop the lines after it (nor, with nothing
/// else to look at, the format's detection).
#[test]
fn an_oversized_document_or_first_line_is_one_rejected_record() {
    let dir = TestDir::new();
    let long = long_line(200_000, "abc ");
    let doc =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&long).unwrap())
            .unwrap();
    let pretty = dir.write("doc.json", &doc);
    let first = dir.write("first.jsonl", format!("{long}\n{GOOD}\n"));
    let only = dir.write("only.jsonl", format!("{long}\n"));
    for (input, why, sessions) in [
        (&pretty, format!("doc.json: record of {} bytes", doc.len()), 0),
        (&first, format!("first.jsonl:1: record of {} bytes", long.len()), 1),
        (&only, format!("only.jsonl:1: record of {} bytes", long.len()), 0),
    ] {
        let out = dir.join("o.jsonl");
        let rejects = dir.join("r.jsonl");
        let result = run_code(
            compactor()
                .args(["compact", "--max-record-bytes", "100KiB", "-q", "-o"])
                .arg(&out)
                .arg("--rejects")
                .arg(&rejects)
                .arg(input),
            3,
        );
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains(&format!("{why} over --max-record-bytes (102400)")), "{stderr}");
        let got = std::fs::read_to_string(&out).map(|t| json_lines(&t).len()).unwrap_or(0);
        assert_eq!(got, sessions, "{stderr}");
        let kept = std::fs::read(&rejects).unwrap();
        let record = if input == &pretty { doc.as_bytes() } else { long.as_bytes() };
        assert!(kept.strip_suffix(b"\n") == Some(record), "{} kept whole", input.display());
        let _ = std::fs::remove_file(&out);
    }
}
